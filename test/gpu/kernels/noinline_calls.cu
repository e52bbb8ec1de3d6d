// __noinline__ device functions: one with early returns inside (a .func `ret` must
// stay a return to the caller), one recursive, and one that contains __syncthreads.
__device__ __noinline__ int classify(int v)
{
    if (v < 0) return -1;
    if ((v & 7) == 0) return v >> 3;
    for (int k = 0; k < (v & 7); k++) {
        if (v % (k + 3) == 0) return k * 100 + v % 13;
        v = v * 3 + 1;
    }
    return v & 0xFFFF;
}

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__device__ __noinline__ int block_sum(int *s, int v)
{
    s[threadIdx.x] = v;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    const int r = s[0];
    __syncthreads();
    return r;
}

extern "C" __global__ void noinline_calls(const int *__restrict__ in, int *__restrict__ out)
{
    __shared__ int s[128];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int v = in[i];
    const int c = classify(v);
    const int f = fib((v & 7) + 3);
    // Reconverge the warp first: bar.sync inside block_sum is .aligned, and the
    // early returns in classify() may leave the warp diverged (undefined otherwise).
    __syncwarp();
    const int total = block_sum(s, c);
    out[i] = c * 7 + f + total;
}
