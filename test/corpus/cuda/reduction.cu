// Reductions: classic shared-memory tree with early-exit of idle threads,
// warp-shuffle final stage, templated on type and block size (mangled
// names), and a last-block-done pattern with __threadfence.

template <typename T, unsigned BLOCK>
__global__ void reduce_sum(const T *__restrict__ in, T *__restrict__ out, unsigned n)
{
    __shared__ T s[BLOCK];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * (BLOCK * 2) + t;
    T v = 0;
    while (i < n) {
        v += in[i];
        if (i + BLOCK < n)
            v += in[i + BLOCK];
        i += gridDim.x * BLOCK * 2;
    }
    s[t] = v;
    __syncthreads();
#pragma unroll
    for (unsigned st = BLOCK / 2; st > 32; st >>= 1) {
        if (t < st)
            s[t] = v = v + s[t + st];
        __syncthreads();
    }
    if (t >= 32)
        return;
    if (BLOCK >= 64)
        v += s[t + 32];
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if (t == 0)
        out[blockIdx.x] = v;
}

template __global__ void reduce_sum<float, 256>(const float *, float *, unsigned);
template __global__ void reduce_sum<double, 128>(const double *, double *, unsigned);
template __global__ void reduce_sum<int, 512>(const int *, int *, unsigned);

__device__ unsigned int g_blocks_done = 0;

extern "C" __global__ void reduce_single_pass(const float *in, float *partial, float *result, unsigned n)
{
    __shared__ float s[256];
    __shared__ bool is_last;
    unsigned t = threadIdx.x;
    float v = 0.0f;
    for (unsigned i = blockIdx.x * 256 + t; i < n; i += gridDim.x * 256)
        v += in[i];
    s[t] = v;
    __syncthreads();
    for (unsigned st = 128; st > 0; st >>= 1) {
        if (t < st)
            s[t] += s[t + st];
        __syncthreads();
    }
    if (t == 0) {
        partial[blockIdx.x] = s[0];
        __threadfence();
        unsigned prev = atomicInc(&g_blocks_done, gridDim.x);
        is_last = (prev == gridDim.x - 1);
    }
    __syncthreads();
    if (is_last) {
        float tot = 0.0f;
        for (unsigned b = t; b < gridDim.x; b += 256)
            tot += partial[b];
        s[t] = tot;
        __syncthreads();
        for (unsigned st = 128; st > 0; st >>= 1) {
            if (t < st)
                s[t] += s[t + st];
            __syncthreads();
        }
        if (t == 0) {
            *result = s[0];
            g_blocks_done = 0;
        }
    }
}
