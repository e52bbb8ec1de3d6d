// bench/probes/clone_cost.cu -- which part of a clone's launch costs device time?
// bench/gpu tiny measures the c-static clone of a 1-block kernel at +0.55 us per launch
// in a graph (docs/performance.md §9) against an expected +0.43: ABI v4 put the protocol's
// 24 shared bytes in the clone's dynamic tail (a 24 B dynamic allocation, the offset read
// from the 64 B tidal_launch parameter, a trap check on %dynamic_smem_size). Each kernel
// below adds one of those to the same tiny body; each is timed as a CUDA graph of 200
// launches, interleaved over rounds, median us per launch. Build: clone_cost.sh.
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cuda_runtime.h>

#include "probe_check.h"


struct launch64 { unsigned w[16]; };   // the size of tidal_launch (abi/tidal_abi.h)

__device__ __forceinline__ void body(unsigned *c, int n)
{
    if (threadIdx.x == 0 && n > 0) atomicAdd(c, 1u);
}
__device__ __forceinline__ unsigned dyn_size()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
    return r;
}
extern __shared__ unsigned char dsh[];

__global__ void k_plain(unsigned *c, int n) { body(c, n); }
__global__ void k_param(unsigned *c, int n, launch64 l) { body(c, n + (int)(l.w[3] & 0)); }
__global__ void k_param_read(unsigned *c, int n, launch64 l) { body(c, n + (int)l.w[3] + (int)l.w[12]); }
__global__ void k_dyn(unsigned *c, int n) { body(c, n); }
__global__ void k_dyn_check(unsigned *c, int n, unsigned off)
{
    unsigned d = dyn_size();
    if (off > d || d - off < 24) asm volatile("trap;");
    body(c, n);
}
__global__ void k_static_sh(unsigned *c, int n)
{
    __shared__ unsigned s[6];
    if (threadIdx.x == 0) s[2] = (unsigned)n;
    __syncthreads();
    body(c, (int)s[2]);
}
__global__ void k_dyn_st(unsigned *c, int n, unsigned off)
{
    unsigned *s = (unsigned *)(dsh + off);
    if (threadIdx.x == 0) s[2] = (unsigned)n;
    __syncthreads();
    body(c, (int)s[2]);
}
__global__ void k_all(unsigned *c, int n, launch64 l)
{
    unsigned off = l.w[14], d = dyn_size();
    if (off > d || d - off < 24) asm volatile("trap;");
    unsigned *s = (unsigned *)(dsh + off);
    if (threadIdx.x == 0) s[2] = (unsigned)n + l.w[3];
    __syncthreads();
    body(c, (int)s[2]);
}
__global__ void k_all_nocheck(unsigned *c, int n, launch64 l)
{
    unsigned *s = (unsigned *)(dsh + l.w[14]);
    if (threadIdx.x == 0) s[2] = (unsigned)n + l.w[3];
    __syncthreads();
    body(c, (int)s[2]);
}

enum { LAUNCHES = 200, ROUNDS = 15, NK = 9 };

int main()
{
    unsigned *c;
    RK(cudaMalloc(&c, 64));
    cudaStream_t s;
    RK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    launch64 l = {};
    l.w[14] = 0;
    const char *name[NK] = {"plain", "param64", "param64-read", "dyn24", "dyn24+check", "static24-st",
                            "dyn24-st", "all", "all-nocheck"};
    cudaGraphExec_t ge[NK];
    int n = 1;
    for (int k = 0; k < NK; k++) {
        cudaGraph_t g;
        RK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < LAUNCHES; i++) switch (k) {
            case 0: k_plain<<<1, 128, 0, s>>>(c, n); break;
            case 1: k_param<<<1, 128, 0, s>>>(c, n, l); break;
            case 2: k_param_read<<<1, 128, 0, s>>>(c, n, l); break;
            case 3: k_dyn<<<1, 128, 24, s>>>(c, n); break;
            case 4: k_dyn_check<<<1, 128, 24, s>>>(c, n, 0); break;
            case 5: k_static_sh<<<1, 128, 0, s>>>(c, n); break;
            case 6: k_dyn_st<<<1, 128, 24, s>>>(c, n, 0); break;
            case 7: k_all<<<1, 128, 24, s>>>(c, n, l); break;
            case 8: k_all_nocheck<<<1, 128, 24, s>>>(c, n, l); break;
            }
        RK(cudaGetLastError());
        RK(cudaStreamEndCapture(s, &g));
        RK(cudaGraphInstantiate(&ge[k], g, 0));
        RK(cudaGraphDestroy(g));
    }
    cudaEvent_t a, b;
    RK(cudaEventCreate(&a));
    RK(cudaEventCreate(&b));
    double t[NK][ROUNDS];
    for (int r = 0; r < ROUNDS + 2; r++)
        for (int k = 0; k < NK; k++) {
            float ms;
            RK(cudaEventRecord(a, s));
            RK(cudaGraphLaunch(ge[k], s));
            RK(cudaEventRecord(b, s));
            RK(cudaEventSynchronize(b));
            RK(cudaEventElapsedTime(&ms, a, b));
            if (r >= 2) t[k][r - 2] = ms * 1000.0 / LAUNCHES;
        }
    for (int k = 0; k < NK; k++) {
        std::sort(t[k], t[k] + ROUNDS);
        printf("RESULT %-14s %.3f us/launch (min %.3f)  diff to plain %+.3f\n", name[k], t[k][ROUNDS / 2], t[k][0],
               t[k][ROUNDS / 2] - t[0][ROUNDS / 2]);
    }
    return 0;
}
