// bench/probes/entry_cost.cu -- what makes "case a" (the original entry of a rewritten
// kernel, no runtime attached) cost +0.4 us per launch on a tiny kernel in a CUDA graph
// (docs/performance.md §6)? Each variant adds one thing case a has over the original:
//   plain      one atomic per block (the tiny benchmark's kernel)
//   const      a branch on a module __constant__ word first (case a's __tidal_ctl test)
//   smem24     24 bytes of static shared memory, used only on a path never taken
//   smem1k     the same, 1 KiB aligned to 1 KiB (what kernels with dynamic smem get)
//   const+smem both, as case a has
//   regs       a body made to need many more registers on the untaken path
//   bar        a named barrier (bar.sync 1) on the untaken path ("used 1 barriers")
//   all        const + smem24 + bar + regs: what case a's entry has (tiny's original: 8
//              registers, no barrier, no smem; its rewritten original entry: 25, 1, 24 B)
// Measured as us per launch of a graph of 200 launches replayed (median of 9), and of
// 2000 back-to-back launches, at 1 and 264 blocks of 128 threads.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#include "probe_check.h"


__constant__ unsigned long long ctl_word;

__global__ void k_plain(unsigned *c)
{
    if (threadIdx.x == 0) atomicAdd(c, 1u);
}

__global__ void k_const(unsigned *c)
{
    if (ctl_word != 0) {
        if (threadIdx.x == 0) atomicAdd(c + 1, 1u);
        return;
    }
    if (threadIdx.x == 0) atomicAdd(c, 1u);
}

__global__ void k_smem24(unsigned *c, unsigned never)
{
    __shared__ unsigned s[6];
    if (never == 12345u) {
        s[threadIdx.x % 6] = threadIdx.x;
        __syncthreads();
        c[2] = s[(threadIdx.x + 1) % 6];
        return;
    }
    if (threadIdx.x == 0) atomicAdd(c, 1u);
}

__global__ void k_smem1k(unsigned *c, unsigned never)
{
    __shared__ __align__(1024) unsigned s[256];
    if (never == 12345u) {
        s[threadIdx.x % 256] = threadIdx.x;
        __syncthreads();
        c[2] = s[(threadIdx.x + 1) % 256];
        return;
    }
    if (threadIdx.x == 0) atomicAdd(c, 1u);
}

__global__ void k_const_smem(unsigned *c, unsigned never)
{
    __shared__ unsigned s[6];
    if (ctl_word != 0 || never == 12345u) {
        s[threadIdx.x % 6] = threadIdx.x;
        __syncthreads();
        c[2] = s[(threadIdx.x + 1) % 6];
        return;
    }
    if (threadIdx.x == 0) atomicAdd(c, 1u);
}

__global__ void k_regs(unsigned *c, unsigned never, const float *in)
{
    if (never == 12345u) {   // a path that needs ~100 registers
        float a[48];
#pragma unroll
        for (int i = 0; i < 48; i++) a[i] = in[threadIdx.x * 48 + i];
        float acc = 0;
#pragma unroll
        for (int r = 0; r < 8; r++)
#pragma unroll
            for (int i = 0; i < 48; i++) acc += a[i] * a[(i * 7 + r) % 48];
        c[3] = (unsigned)acc;
        return;
    }
    if (threadIdx.x == 0) atomicAdd(c, 1u);
}

__global__ void k_bar(unsigned *c, unsigned never)
{
    if (never == 12345u) {
        asm volatile("bar.sync 1, 128;");
        c[2] = 1;
        return;
    }
    if (threadIdx.x == 0) atomicAdd(c, 1u);
}

__global__ void k_all(unsigned *c, unsigned never, const float *in)
{
    __shared__ unsigned s[6];
    if (ctl_word != 0 || never == 12345u) {
        float a[48];
#pragma unroll
        for (int i = 0; i < 48; i++) a[i] = in[threadIdx.x * 48 + i];
        float acc = 0;
#pragma unroll
        for (int r = 0; r < 8; r++)
#pragma unroll
            for (int i = 0; i < 48; i++) acc += a[i] * a[(i * 7 + r) % 48];
        s[threadIdx.x % 6] = (unsigned)acc;
        asm volatile("bar.sync 1, 128;");
        c[2] = s[(threadIdx.x + 1) % 6];
        return;
    }
    if (threadIdx.x == 0) atomicAdd(c, 1u);
}

enum { PLAIN, CONST, SMEM24, SMEM1K, CONST_SMEM, REGS, BAR, ALL, NV };
static const char *names[NV] = {"plain", "const", "smem24", "smem1k", "const+smem", "regs", "bar", "all"};

static void launch(int v, unsigned blocks, cudaStream_t s, unsigned *c, const float *in)
{
    switch (v) {
    case PLAIN: k_plain<<<blocks, 128, 0, s>>>(c); break;
    case CONST: k_const<<<blocks, 128, 0, s>>>(c); break;
    case SMEM24: k_smem24<<<blocks, 128, 0, s>>>(c, 0); break;
    case SMEM1K: k_smem1k<<<blocks, 128, 0, s>>>(c, 0); break;
    case CONST_SMEM: k_const_smem<<<blocks, 128, 0, s>>>(c, 0); break;
    case REGS: k_regs<<<blocks, 128, 0, s>>>(c, 0, in); break;
    case BAR: k_bar<<<blocks, 128, 0, s>>>(c, 0); break;
    case ALL: k_all<<<blocks, 128, 0, s>>>(c, 0, in); break;
    }
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main()
{
    unsigned *c;
    float *in;
    RK(cudaMalloc(&c, 64));
    RK(cudaMalloc(&in, 128 * 48 * 4));
    RK(cudaMemset(c, 0, 64));
    RK(cudaMemset(in, 0, 128 * 48 * 4));
    cudaStream_t s;
    RK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    RK(cudaEventCreate(&e0));
    RK(cudaEventCreate(&e1));
    for (int v = 0; v < NV; v++) {
        cudaFuncAttributes a;
        const void *f = v == PLAIN ? (const void *)k_plain : v == CONST ? (const void *)k_const
                      : v == SMEM24 ? (const void *)k_smem24 : v == SMEM1K ? (const void *)k_smem1k
                      : v == CONST_SMEM ? (const void *)k_const_smem : v == REGS ? (const void *)k_regs
                      : v == BAR ? (const void *)k_bar : (const void *)k_all;
        RK(cudaFuncGetAttributes(&a, f));
        printf("# %-11s regs %3d static smem %5zu B\n", names[v], a.numRegs, a.sharedSizeBytes);
    }
    printf("%-7s %-11s %10s %8s %10s %8s\n", "blocks", "variant", "graph us", "diff", "b2b us", "diff");
    const unsigned grids[2] = {1, 264};
    for (unsigned blocks : grids) {
        double base_g = 0, base_b = 0;
        for (int v = 0; v < NV; v++) {
            cudaGraph_t g;
            cudaGraphExec_t ge;
            RK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
            for (int i = 0; i < 200; i++) launch(v, blocks, s, c, in);
            RK(cudaStreamEndCapture(s, &g));
            RK(cudaGraphInstantiate(&ge, g, 0));
            RK(cudaGraphLaunch(ge, s));
            RK(cudaStreamSynchronize(s));
            std::vector<double> tg, tb;
            for (int r = 0; r < 9; r++) {
                float ms;
                RK(cudaEventRecord(e0, s));
                RK(cudaGraphLaunch(ge, s));
                RK(cudaEventRecord(e1, s));
                RK(cudaEventSynchronize(e1));
                RK(cudaEventElapsedTime(&ms, e0, e1));
                tg.push_back(ms * 1000.0 / 200);
                RK(cudaEventRecord(e0, s));
                for (int i = 0; i < 2000; i++) launch(v, blocks, s, c, in);
                RK(cudaEventRecord(e1, s));
                RK(cudaEventSynchronize(e1));
                RK(cudaEventElapsedTime(&ms, e0, e1));
                tb.push_back(ms * 1000.0 / 2000);
            }
            double mg = median(tg), mb = median(tb);
            if (v == PLAIN) base_g = mg, base_b = mb;
            printf("%-7u %-11s %10.3f %+8.3f %10.3f %+8.3f\n", blocks, names[v], mg, mg - base_g, mb, mb - base_b);
            RK(cudaGraphExecDestroy(ge));
            RK(cudaGraphDestroy(g));
        }
    }
    return 0;
}
