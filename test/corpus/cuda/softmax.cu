// Row-wise softmax: one block per row, block-wide max and sum reductions via
// warp shuffles + shared memory, fast-math exponentials (ex2.approx).

__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ float block_allreduce_max(float v, float *scratch)
{
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    v = warp_max(v);
    if (lane == 0)
        scratch[wid] = v;
    __syncthreads();
    v = (threadIdx.x < blockDim.x / 32) ? scratch[lane] : -INFINITY;
    v = warp_max(v);
    __syncthreads();
    return v;
}

__device__ float block_allreduce_sum(float v, float *scratch)
{
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0)
        scratch[wid] = v;
    __syncthreads();
    v = (threadIdx.x < blockDim.x / 32) ? scratch[lane] : 0.0f;
    v = warp_sum(v);
    __syncthreads();
    return v;
}

extern "C" __global__ void softmax_rows(const float *__restrict__ x, float *__restrict__ y, int cols)
{
    __shared__ float scratch[32];
    const float *xr = x + (size_t)blockIdx.x * cols;
    float *yr = y + (size_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        m = fmaxf(m, xr[c]);
    m = block_allreduce_max(m, scratch);
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        s += __expf(xr[c] - m);
    s = block_allreduce_sum(s, scratch);
    float inv = __frcp_rn(s);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = __expf(xr[c] - m) * inv;
}

// One warp per row, accurate expf, with a causal mask (attention-style).
extern "C" __global__ void softmax_causal_warp(const float *x, float *y, int rows, int cols, float scale)
{
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x & 31;
    if (row >= rows)
        return;
    float m = -INFINITY;
    for (int c = lane; c < cols; c += 32)
        if (c <= row)
            m = fmaxf(m, x[row * cols + c] * scale);
    m = warp_max(m);
    float s = 0.0f;
    for (int c = lane; c < cols; c += 32)
        if (c <= row)
            s += expf(x[row * cols + c] * scale - m);
    s = warp_sum(s);
    for (int c = lane; c < cols; c += 32)
        y[row * cols + c] = c <= row ? expf(x[row * cols + c] * scale - m) / s : 0.0f;
}
