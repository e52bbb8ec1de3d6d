// Grid-wide synchronisation with cooperative groups (cg::this_grid().sync()),
// launched with cudaLaunchCooperativeKernel. Two-phase reduction.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void grid_sync_two_phase(const float *in, float *partial, float *out, int n)
{
    cg::grid_group grid = cg::this_grid();
    __shared__ float s[256];
    float acc = 0.0f;
    for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)n; i += grid.size())
        acc += in[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned st = blockDim.x / 2; st > 0; st >>= 1) {
        if (threadIdx.x < st)
            s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = s[0];
    grid.sync();
    if (grid.thread_rank() == 0) {
        float t = 0.0f;
        for (unsigned b = 0; b < gridDim.x; ++b)
            t += partial[b];
        *out = t;
    }
}

extern "C" __global__ void grid_sync_iterate(float *a, float *b, int n, int iters)
{
    cg::grid_group grid = cg::this_grid();
    for (int it = 0; it < iters; ++it) {
        for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)n; i += grid.size()) {
            float l = i > 0 ? a[i - 1] : a[i];
            float r = i + 1 < (unsigned long long)n ? a[i + 1] : a[i];
            b[i] = 0.5f * a[i] + 0.25f * (l + r);
        }
        grid.sync();
        float *t = a; a = b; b = t;
    }
}
