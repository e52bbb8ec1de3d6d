// Row-per-block softmax and LayerNorm as inference libraries write them: block-wide
// max/sum reductions through shuffles and shared memory, a __syncthreads_or to skip rows
// that are entirely masked, a ragged column tail and a thread-0 statistics store.
#include <cmath>

struct MaxOp {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
    static constexpr float identity = -INFINITY;
};
struct SumOp {
    __device__ float operator()(float a, float b) const { return a + b; }
    static constexpr float identity = 0.0f;
};

template <class Op>
__device__ __forceinline__ float warp_allreduce(float v, Op op)
{
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Every thread gets the block's result: warp results through shared memory, a second
// warp round, thread 0 publishes.
template <int BLOCK, class Op>
__device__ float block_allreduce(float v, float *smem, Op op)
{
    v = warp_allreduce(v, op);
    if ((threadIdx.x & 31) == 0) smem[threadIdx.x >> 5] = v;
    __syncthreads();
    v = threadIdx.x < BLOCK / 32 ? smem[threadIdx.x] : Op::identity;
    v = warp_allreduce(v, op);
    __syncthreads();
    if (threadIdx.x == 0) smem[0] = v;
    __syncthreads();
    v = smem[0];
    __syncthreads();
    return v;
}

// Masked row softmax: mask[c] == 0 hides a column; a row with no visible column is
// written as zeros (the block learns it from __syncthreads_or, then leaves uniformly).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) masked_softmax_rows(const float *__restrict__ x, const unsigned char *__restrict__ mask,
                                                             float *__restrict__ y, int cols)
{
    __shared__ float smem[BLOCK / 32];
    const float *row = x + (size_t)blockIdx.x * cols;
    float *orow = y + (size_t)blockIdx.x * cols;
    int any = 0;
    for (int c = threadIdx.x; c < cols; c += BLOCK) any |= mask[(size_t)blockIdx.x * cols + c] != 0;
    if (!__syncthreads_or(any)) {
        for (int c = threadIdx.x; c < cols; c += BLOCK) orow[c] = 0.0f;
        return;
    }
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        if (mask[(size_t)blockIdx.x * cols + c]) m = fmaxf(m, row[c]);
    m = block_allreduce<BLOCK>(m, smem, MaxOp());
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        if (mask[(size_t)blockIdx.x * cols + c]) s += __expf(row[c] - m);
    s = block_allreduce<BLOCK>(s, smem, SumOp());
    const float inv = 1.0f / s;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        orow[c] = mask[(size_t)blockIdx.x * cols + c] ? __expf(row[c] - m) * inv : 0.0f;
}
template __global__ void masked_softmax_rows<128>(const float *, const unsigned char *, float *, int);
template __global__ void masked_softmax_rows<256>(const float *, const unsigned char *, float *, int);

// LayerNorm, two-pass (mean, then variance), with per-row statistics for the backward.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) layernorm_rows(const float *__restrict__ x, const float *__restrict__ gamma,
                                                        const float *__restrict__ beta, float *__restrict__ y,
                                                        float *__restrict__ mean_out, float *__restrict__ rstd_out,
                                                        int cols, float eps)
{
    __shared__ float smem[BLOCK / 32];
    const float *row = x + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK) s += row[c];
    const float mean = block_allreduce<BLOCK>(s, smem, SumOp()) / cols;
    float v = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK) { float d = row[c] - mean; v += d * d; }
    const float rstd = rsqrtf(block_allreduce<BLOCK>(v, smem, SumOp()) / cols + eps);
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        y[(size_t)blockIdx.x * cols + c] = (row[c] - mean) * rstd * gamma[c] + beta[c];
    if (threadIdx.x == 0) {
        mean_out[blockIdx.x] = mean;
        rstd_out[blockIdx.x] = rstd;
    }
}
template __global__ void layernorm_rows<256>(const float *, const float *, const float *, float *, float *, float *, int, float);

// How many rows have a non-finite value: __syncthreads_count per row, thread 0 adds.
__global__ void __launch_bounds__(256) count_bad_rows(const float *__restrict__ x, int *__restrict__ bad, int rows, int cols)
{
    int nbad = 0;
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        int mine = 0;
        for (int c = threadIdx.x; c < cols; c += 256) mine |= !isfinite(x[(size_t)r * cols + c]);
        nbad += __syncthreads_count(mine) != 0;
    }
    if (threadIdx.x == 0) atomicAdd(bad, nbad);
}
