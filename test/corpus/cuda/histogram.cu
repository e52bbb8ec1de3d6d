// Histograms: privatised shared-memory bins with shared atomics, a
// warp-aggregated variant using __match_any_sync, and a global-atomics one.

extern "C" __global__ void histogram256_shared(const unsigned char *data, size_t n, unsigned *bins)
{
    __shared__ unsigned s[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        s[i] = 0;
    __syncthreads();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        atomicAdd(&s[data[i]], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        if (s[i])
            atomicAdd(&bins[i], s[i]);
}

extern "C" __global__ void histogram_warp_aggregated(const int *keys, int n, int nbins, int *bins)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int b = keys[i] % nbins;
    if (b < 0) b += nbins;
    unsigned peers = __match_any_sync(__activemask(), b);
    int leader = __ffs(peers) - 1;
    if ((threadIdx.x & 31) == (unsigned)leader)
        atomicAdd(&bins[b], __popc(peers));
}

extern "C" __global__ void histogram_float_global(const float *v, int n, float lo, float hi, int nbins, unsigned *bins)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float t = (v[i] - lo) / (hi - lo);
        int b = __float2int_rd(t * nbins);
        b = min(max(b, 0), nbins - 1);
        atomicAdd(&bins[b], 1u);
    }
}
