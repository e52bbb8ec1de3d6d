// Histogram: integer atomics in shared memory, then one global atomicAdd per bin.
#define NBINS 256
extern "C" __global__ void histogram(const unsigned char *__restrict__ data, unsigned *__restrict__ hist, int n,
                                     int per_block)
{
    __shared__ unsigned h[NBINS];
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x) h[b] = 0;
    __syncthreads();
    const int lo = blockIdx.x * per_block;
    const int hi = min(n, lo + per_block);
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) atomicAdd(&h[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
        if (h[b]) atomicAdd(&hist[b], h[b]);
}
