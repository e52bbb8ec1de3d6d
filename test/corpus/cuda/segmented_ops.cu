// Segmented reductions and a block histogram, the shapes of CUB's DeviceSegmentedReduce
// and DeviceHistogram: one block per segment whose bounds come from an offsets array,
// tiles over the segment with __syncthreads_count, and a privatised shared histogram.
#include <cstdint>

// Count of elements above `thr` per segment [offsets[s], offsets[s+1]).
__global__ void __launch_bounds__(256) segmented_count_above(const float *__restrict__ in, const int *__restrict__ offsets,
                                                             int *__restrict__ out, float thr)
{
    const int beg = offsets[blockIdx.x], end = offsets[blockIdx.x + 1];
    int total = 0;
    for (int base = beg; base < end; base += 256) {
        const int i = base + threadIdx.x;
        total += __syncthreads_count(i < end && in[i] > thr);
    }
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

// Segmented sum with a shared-memory tree per tile.
__global__ void __launch_bounds__(256) segmented_sum(const int *__restrict__ in, const int *__restrict__ offsets,
                                                     long long *__restrict__ out)
{
    __shared__ long long part[256];
    const int beg = offsets[blockIdx.x], end = offsets[blockIdx.x + 1];
    long long acc = 0;
    for (int i = beg + threadIdx.x; i < end; i += 256) acc += in[i];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

// 64-bin histogram of bytes, privatised in shared memory, merged with global atomics;
// a block whose whole range is empty leaves at once (the test is CTA-uniform).
__global__ void __launch_bounds__(256) byte_histogram64(const uint8_t *__restrict__ data, unsigned *__restrict__ hist,
                                                        int n, int per_block)
{
    __shared__ unsigned h[64];
    const int beg = blockIdx.x * per_block;
    if (beg >= n) return;
    const int end = min(n, beg + per_block);
    if (threadIdx.x < 64) h[threadIdx.x] = 0;
    __syncthreads();
    for (int i = beg + threadIdx.x; i < end; i += 256) atomicAdd(&h[data[i] & 63], 1u);
    __syncthreads();
    if (threadIdx.x < 64 && h[threadIdx.x]) atomicAdd(&hist[threadIdx.x], h[threadIdx.x]);
}
