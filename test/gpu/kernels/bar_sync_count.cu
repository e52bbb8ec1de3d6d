// bar.sync with an explicit thread count: a 128-thread block is two independent
// 2-warp groups; group 0 synchronises on barrier 1, group 1 on barrier 2, each with
// 64 threads (literal operands), then a second phase uses register operands for
// both the barrier id and the count (ids 3 and 4).
__device__ __forceinline__ void group_sync_literal(int g)
{
    if (g == 0) asm volatile("bar.sync 1, 64;" ::: "memory");
    else        asm volatile("bar.sync 2, 64;" ::: "memory");
}

__device__ __forceinline__ void group_sync_reg(int id, int count)
{
    asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(count) : "memory");
}

extern "C" __global__ void bar_sync_count(const int *__restrict__ in, int *__restrict__ out)
{
    __shared__ int s[128];
    const int t = threadIdx.x;
    const int g = t / 64;           // 2-warp group
    const int base = blockIdx.x * 128;
    int v = in[base + t];
    for (int k = 0; k < 4; k++) {
        s[t] = v;
        group_sync_literal(g);
        v = v * 5 + s[g * 64 + ((t + 1 + k) & 63)];   // partner inside the group only
        group_sync_literal(g);
    }
    for (int k = 0; k < 3; k++) {
        s[t] = v ^ k;
        group_sync_reg(3 + g, 64);
        v += s[g * 64 + (63 - (t & 63))];
        group_sync_reg(3 + g, 64);
    }
    out[base + t] = v;
}
