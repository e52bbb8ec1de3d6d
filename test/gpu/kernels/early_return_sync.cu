// Early return + __syncthreads: whole blocks leave before any barrier, and in the
// other blocks a per-block number of trailing threads (not a multiple of the warp
// size) leaves before the barriers the rest of the block still uses.
extern "C" __global__ void early_return_sync(const int *__restrict__ in, int *__restrict__ out, int n)
{
    __shared__ int s[256];
    const int b = blockIdx.x;
    const int t = threadIdx.x;
    const int i = b * blockDim.x + t;
    if (b % 5 == 3) {               // the whole block returns before any barrier
        if (t == 0 && i < n) out[i] = -b;
        return;
    }
    const int limit = blockDim.x - (b % 7) * 16;   // 256, 240, ..., 160 threads stay
    if (t >= limit) return;
    s[t] = (i < n) ? in[i] : 0;
    __syncthreads();
    const int v = s[t] * 3 + s[(t + 1) % limit];
    __syncthreads();
    s[t] = v;
    __syncthreads();
    if (i < n) out[i] = s[limit - 1 - t] ^ b;
}
