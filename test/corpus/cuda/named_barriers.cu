// Named barriers and barrier reductions: bar.sync with an id and a thread
// count, bar.arrive (producer/consumer), barrier.sync (non-aligned form) and
// __syncthreads_count/_and/_or which compile to bar.red.{popc,and,or}.

extern "C" __global__ void syncthreads_reductions(const int *flags, int *out)
{
    int v = flags[blockIdx.x * blockDim.x + threadIdx.x];
    int cnt = __syncthreads_count(v > 0);
    int all = __syncthreads_and(v != 0);
    int any = __syncthreads_or(v < 0);
    if (threadIdx.x == 0) {
        out[blockIdx.x * 3 + 0] = cnt;
        out[blockIdx.x * 3 + 1] = all;
        out[blockIdx.x * 3 + 2] = any;
    }
}

// Warp-specialised producer/consumer with named barriers 1 and 2 over 64
// threads each: warps 0-1 produce, warps 2-3 consume. Block size 128.
extern "C" __global__ void producer_consumer(const float *in, float *out, int rounds)
{
    __shared__ float stage[64];
    int t = threadIdx.x;
    bool producer = t < 64;
    for (int r = 0; r < rounds; ++r) {
        if (producer) {
            stage[t] = in[r * 64 + t] * 3.0f;
            asm volatile("bar.arrive 1, 128;" ::: "memory");      // signal full
            asm volatile("bar.sync 2, 128;" ::: "memory");        // wait empty
        } else {
            asm volatile("bar.sync 1, 128;" ::: "memory");        // wait full
            out[r * 64 + (t - 64)] = stage[t - 64] + 1.0f;
            asm volatile("bar.arrive 2, 128;" ::: "memory");      // signal empty
        }
    }
}

// Sub-block barrier: only the first 64 threads synchronise on barrier 1.
extern "C" __global__ void partial_block_barrier(float *data)
{
    __shared__ float s[64];
    int t = threadIdx.x;
    if (t < 64) {
        s[t] = data[t];
        asm volatile("bar.sync 1, 64;" ::: "memory");
        data[t] = s[63 - t];
    }
    __syncthreads();
    if (t == 0)
        data[64] = s[0];
}

// barrier.sync (not .aligned) with a register barrier id and thread count,
// plus barrier.red via inline asm with a predicate operand.
extern "C" __global__ void barrier_sync_counts(int *data, int nthreads)
{
    int t = threadIdx.x;
    int bid = 3;
    if (t < nthreads) {
        data[t] += 1;
        asm volatile("barrier.sync %0, %1;" :: "r"(bid), "r"(nthreads) : "memory");
        data[t] += data[(t + 1) % nthreads];
    }
    int p = data[t] & 1;
    int res;
    asm volatile("{\n\t"
                 ".reg .pred %%p_in, %%p_out;\n\t"
                 "setp.ne.s32 %%p_in, %1, 0;\n\t"
                 "barrier.red.or.pred %%p_out, 0, %%p_in;\n\t"
                 "selp.s32 %0, 1, 0, %%p_out;\n\t"
                 "}"
                 : "=r"(res) : "r"(p) : "memory");
    asm volatile("barrier.sync.aligned 0;" ::: "memory");
    data[t] = res;
}
