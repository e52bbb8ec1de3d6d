// CUB-style block collectives built on __syncthreads_count/_or/_and (bar.red.popc/or/and)
// next to plain __syncthreads: block reduce, block scan, stream compaction, early-out
// scans over tiles and convergence loops. Every kernel ends with a divergent tail
// (`if (threadIdx.x == 0)` or `if (i < n)`) after its last barrier.
#include <cstdint>

template <int BLOCK>
__device__ __forceinline__ int block_reduce_sum(int v, int *smem)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    v = threadIdx.x < BLOCK / 32 ? smem[threadIdx.x] : 0;
    if (warp == 0) {
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    }
    return v;   // valid in thread 0
}

// Per-block count of positive elements over `tiles` tiles of BLOCK elements each.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) count_positive(const int *__restrict__ in, int *__restrict__ out, int tiles)
{
    int total = 0;
    for (int t = 0; t < tiles; t++)
        total += __syncthreads_count(in[(blockIdx.x * tiles + t) * BLOCK + threadIdx.x] > 0);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}
template __global__ void count_positive<128>(const int *, int *, int);
template __global__ void count_positive<256>(const int *, int *, int);

// Block-wide inclusive scan (warp scans + a scan of the warp totals), ragged tail.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) block_scan_inclusive(const int *__restrict__ in, int *__restrict__ out, int n)
{
    __shared__ int warp_tot[BLOCK / 32];
    const int i = blockIdx.x * BLOCK + threadIdx.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int v = i < n ? in[i] : 0;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        int u = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o) v += u;
    }
    if (lane == 31) warp_tot[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int w = lane < BLOCK / 32 ? warp_tot[lane] : 0;
#pragma unroll
        for (int o = 1; o < BLOCK / 32; o <<= 1) {
            int u = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= o) w += u;
        }
        if (lane < BLOCK / 32) warp_tot[lane] = w;
    }
    __syncthreads();
    if (warp > 0) v += warp_tot[warp - 1];
    if (i < n) out[i] = v;
}
template __global__ void block_scan_inclusive<256>(const int *, int *, int);

// Stream compaction, one tile per block: the block's count from bar.red.popc, the
// warp offsets from ballots and a shared scan; survivors stored in order.
__global__ void __launch_bounds__(256) compact_tile(const float *__restrict__ in, float *__restrict__ out,
                                                    int *__restrict__ block_counts, float threshold, int n)
{
    __shared__ int warp_base[8];
    const int i = blockIdx.x * 256 + threadIdx.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const float x = i < n ? in[i] : 0.0f;
    const bool keep = i < n && x > threshold;
    const unsigned ballot = __ballot_sync(0xffffffffu, keep);
    if (lane == 0) warp_base[warp] = __popc(ballot);
    const int kept = __syncthreads_count(keep);
    if (threadIdx.x == 0) {
        int s = 0;
        for (int w = 0; w < 8; w++) { int c = warp_base[w]; warp_base[w] = s; s += c; }
    }
    __syncthreads();
    if (keep) out[blockIdx.x * 256 + warp_base[warp] + __popc(ballot & ((1u << lane) - 1))] = x;
    if (threadIdx.x == 0) block_counts[blockIdx.x] = kept;
}

// Finds the first tile (of `tiles`) holding a NaN or Inf; the whole block leaves as soon
// as __syncthreads_or says one was seen (a CTA-uniform early return inside the loop).
__global__ void __launch_bounds__(256) first_nonfinite_tile(const float *__restrict__ in, int *__restrict__ out, int tiles)
{
    for (int t = 0; t < tiles; t++) {
        const float x = in[(size_t)(blockIdx.x * tiles + t) * 256 + threadIdx.x];
        if (__syncthreads_or(!isfinite(x))) {
            if (threadIdx.x == 0) out[blockIdx.x] = t;
            return;
        }
    }
    if (threadIdx.x == 0) out[blockIdx.x] = -1;
}

// Is every tile of the block's segment sorted? __syncthreads_and per tile; neighbours
// through shared memory.
__global__ void __launch_bounds__(128) segment_sorted(const int *__restrict__ in, int *__restrict__ out, int tiles)
{
    __shared__ int tile[129];
    int sorted = 1;
    for (int t = 0; t < tiles && sorted; t++) {
        const int base = (blockIdx.x * tiles + t) * 128;
        tile[threadIdx.x + 1] = in[base + threadIdx.x];
        if (threadIdx.x == 0) tile[0] = t ? in[base - 1] : INT32_MIN;
        __syncthreads();
        sorted = __syncthreads_and(tile[threadIdx.x] <= tile[threadIdx.x + 1]);
    }
    if (threadIdx.x == 0) out[blockIdx.x] = sorted;
}

// Label propagation on a 1-D chain per block until nothing changes: the loop's exit is
// decided by __syncthreads_or, so every thread runs the same number of rounds.
__global__ void __launch_bounds__(256) propagate_min_labels(const int *__restrict__ in, int *__restrict__ out,
                                                            int *__restrict__ rounds)
{
    __shared__ int lab[256];
    const int t = threadIdx.x;
    const int key = in[blockIdx.x * 256 + t];
    lab[t] = t;
    __syncthreads();
    int r = 0, changed;
    do {
        int best = lab[t];
        if (t > 0 && (in[blockIdx.x * 256 + t - 1] >> 4) == (key >> 4)) best = min(best, lab[t - 1]);
        if (t < 255 && (in[blockIdx.x * 256 + t + 1] >> 4) == (key >> 4)) best = min(best, lab[t + 1]);
        changed = best != lab[t];
        __syncthreads();
        lab[t] = best;
        r++;
    } while (__syncthreads_or(changed));
    out[blockIdx.x * 256 + t] = lab[t];
    if (t == 0) rounds[blockIdx.x] = r;
}

// Two-level sum: block reduce through shuffles and shared memory; thread 0 writes.
__global__ void __launch_bounds__(256) reduce_sum_tiles(const int *__restrict__ in, int *__restrict__ out, int n)
{
    __shared__ int smem[8];
    int acc = 0;
    for (int i = blockIdx.x * 256 + threadIdx.x; i < n; i += gridDim.x * 256) acc += in[i];
    acc = block_reduce_sum<256>(acc, smem);
    if (threadIdx.x == 0) out[blockIdx.x] = acc;
}
