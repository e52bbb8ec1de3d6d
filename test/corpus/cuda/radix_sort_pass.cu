// One pass of an LSD radix sort, CUB style: a per-block digit histogram in shared memory
// (upsweep), and a block-local split by bits with __syncthreads_count (the 1-bit split:
// zeros first, then ones), scattered in order. Ragged last tile: `if (i < n)`.
#include <cstdint>

#define RADIX_BITS 4
#define RADIX (1 << RADIX_BITS)

__global__ void __launch_bounds__(256) radix_upsweep(const uint32_t *__restrict__ keys, uint32_t *__restrict__ hist,
                                                     int n, int shift)
{
    __shared__ uint32_t h[RADIX];
    if (threadIdx.x < RADIX) h[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * 256 + threadIdx.x; i < n; i += gridDim.x * 256)
        atomicAdd(&h[(keys[i] >> shift) & (RADIX - 1)], 1u);
    __syncthreads();
    if (threadIdx.x < RADIX) hist[threadIdx.x * gridDim.x + blockIdx.x] = h[threadIdx.x];
}

// Sorts each 256-key tile by RADIX_BITS bits starting at `shift`, one bit per round.
__global__ void __launch_bounds__(256) radix_split_tile(const uint32_t *__restrict__ keys, uint32_t *__restrict__ out,
                                                        uint32_t *__restrict__ ones_per_tile, int n, int shift)
{
    __shared__ uint32_t tile[256];
    const int i = blockIdx.x * 256 + threadIdx.x;
    const int valid = min(256, n - (int)blockIdx.x * 256);
    uint32_t k = i < n ? keys[i] : 0xffffffffu;   // padding sorts last
    uint32_t total_ones = 0;
    for (int b = shift; b < shift + RADIX_BITS; b++) {
        const int bit = (k >> b) & 1;
        const int ones = __syncthreads_count(bit);
        // rank among equal bits: a block-wide exclusive count through shared memory
        tile[threadIdx.x] = bit;
        __syncthreads();
        for (int o = 1; o < 256; o <<= 1) {
            uint32_t u = threadIdx.x >= (unsigned)o ? tile[threadIdx.x - o] : 0;
            __syncthreads();
            tile[threadIdx.x] += u;
            __syncthreads();
        }
        const int ones_before = tile[threadIdx.x] - bit;
        const int zeros = 256 - ones;
        const int dst = bit ? zeros + ones_before : (int)threadIdx.x - ones_before;
        __syncthreads();
        tile[dst] = k;
        __syncthreads();
        k = tile[threadIdx.x];
        total_ones += ones;
    }
    if (threadIdx.x < (unsigned)valid) out[i] = k;
    if (threadIdx.x == 0) ones_per_tile[blockIdx.x] = total_ones;
}

// Scatter with digit offsets from a scanned histogram (one block per tile).
__global__ void __launch_bounds__(256) radix_scatter(const uint32_t *__restrict__ keys, const uint32_t *__restrict__ offs,
                                                     uint32_t *__restrict__ out, int n, int shift)
{
    __shared__ uint32_t base[RADIX];
    __shared__ uint32_t digit_of[256];
    const int i = blockIdx.x * 256 + threadIdx.x;
    const uint32_t k = i < n ? keys[i] : 0;
    const uint32_t d = (k >> shift) & (RADIX - 1);
    if (threadIdx.x < RADIX) base[threadIdx.x] = offs[threadIdx.x * gridDim.x + blockIdx.x];
    digit_of[threadIdx.x] = i < n ? d : RADIX;
    __syncthreads();
    uint32_t rank = 0;
    for (int j = 0; j < (int)threadIdx.x; j++) rank += digit_of[j] == d;
    if (i < n) out[base[d] + rank] = k;
}
