// Early exits around __syncthreads(): the classic pattern that a PTX rewriter
// must handle (threads that return before a barrier; barriers after divergent
// control flow that reconverges).
#include <cstdint>

// Threads beyond n return before the block barrier. (Legal only because the
// whole tail warp leaves together in practice; realistic code does this.)
extern "C" __global__ void early_return_then_sync(const float *in, float *out, int n)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    tile[threadIdx.x] = in[i] * 2.0f;
    __syncthreads();
    unsigned j = (threadIdx.x + 1) % blockDim.x;
    out[i] = tile[threadIdx.x] + tile[j];
}

// Uniform early return (block-level), then several barriers in a loop.
extern "C" __global__ void block_uniform_exit(float *data, int nblocks_active, int iters)
{
    __shared__ float buf[128];
    if (blockIdx.x >= (unsigned)nblocks_active)
        return;
    float v = data[blockIdx.x * blockDim.x + threadIdx.x];
    for (int it = 0; it < iters; ++it) {
        buf[threadIdx.x] = v;
        __syncthreads();
        v = 0.5f * (v + buf[(threadIdx.x + 1) & 127]);
        __syncthreads();
    }
    data[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// Returns from inside a loop, multiple exit blocks.
extern "C" __global__ void multi_exit(const int *keys, int *found, int n, int key)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = gridDim.x * blockDim.x;
    for (int i = tid; i < n; i += stride) {
        if (keys[i] == key) {
            atomicMin(found, i);
            return;
        }
        if (keys[i] < 0)
            return;
    }
    __syncthreads();
    if (threadIdx.x == 0 && *found == 0x7fffffff)
        found[1] = blockIdx.x;
}
