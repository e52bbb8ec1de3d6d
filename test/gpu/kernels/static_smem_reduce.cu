// Static shared tile, tree reduction with a barrier in the loop (integer sums).
extern "C" __global__ void static_smem_reduce(const int *__restrict__ in, long long *__restrict__ out, int n)
{
    __shared__ long long s[256];
    const int i = blockIdx.x * 512 + threadIdx.x;
    long long v = 0;
    if (i < n) v += in[i];
    if (i + 256 < n) v += (long long)in[i + 256] * 3;
    s[threadIdx.x] = v;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
