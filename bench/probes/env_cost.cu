// bench/probes/env_cost.cu -- does the process environment tidal creates slow down
// kernels that tidal does not touch? bench/dnn measured every *verbatim* original kernel
// 0.2 us longer in graph replay on the tidal side (docs/performance.md §9), although its
// SASS and .nv.info are byte-identical to the unmodified build. Candidates: green contexts
// existing on the device, a green-context stream, libtidal being loaded (LD_PRELOAD).
// One process, phases in order (A/B/A), each: a CUDA graph of 200 launches of a ~2 us
// pointwise kernel (and of a 1-block tiny kernel), replayed 15 times, median us/launch.
//   plain                     nothing else exists
//   green-all-exists          a green context of all SMs exists (unused)
//   green-66x2-exists         66 green contexts of 2 SMs exist (unused)
//   plain-again               all destroyed
//   green-all-stream          the graph captured from a stream of a green context of all SMs
// Run it plain and under LD_PRELOAD=libtidal-preload.so (bench/probes/env_cost.sh).
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "probe_check.h"


__global__ void k_pw(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 1.0001f + 1.0f;
}

__global__ void k_tiny(unsigned *c)
{
    if (threadIdx.x == 0) atomicAdd(c, 1u);
}

static float *buf;
static unsigned *ctr;
static const int N = 1 << 18, LAUNCHES = 200, REPS = 15;

static double measure(cudaStream_t s, bool tiny)
{
    cudaGraph_t g;
    cudaGraphExec_t ge;
    RK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < LAUNCHES; i++) {
        if (tiny) k_tiny<<<1, 128, 0, s>>>(ctr);
        else k_pw<<<N / 256, 256, 0, s>>>(buf, N);
    }
    RK(cudaStreamEndCapture(s, &g));
    RK(cudaGraphInstantiate(&ge, g, 0));
    cudaEvent_t a, b;
    RK(cudaEventCreate(&a));
    RK(cudaEventCreate(&b));
    std::vector<double> v;
    for (int r = 0; r < REPS + 2; r++) {
        RK(cudaEventRecord(a, s));
        RK(cudaGraphLaunch(ge, s));
        RK(cudaEventRecord(b, s));
        RK(cudaEventSynchronize(b));
        float ms;
        RK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 2) v.push_back(ms * 1000.0 / LAUNCHES);
    }
    std::sort(v.begin(), v.end());
    RK(cudaGraphExecDestroy(ge));
    RK(cudaGraphDestroy(g));
    RK(cudaEventDestroy(a));
    RK(cudaEventDestroy(b));
    return v[v.size() / 2];
}

static void report(const char *phase, cudaStream_t s)
{
    double pw = measure(s, false), tiny = measure(s, true);
    printf("RESULT %-20s pointwise %.3f us/launch, tiny %.3f us/launch\n", phase, pw, tiny);
    fflush(stdout);
}

int main()
{
    CUdevice dev;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    RK(cudaSetDevice(0));
    RK(cudaFree(0));
    RK(cudaMalloc(&buf, N * sizeof(float)));
    RK(cudaMalloc(&ctr, 64));
    RK(cudaMemset(buf, 0, N * sizeof(float)));
    cudaStream_t s;
    RK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    report("plain", s);

    CUdevResource all;
    CK(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
    CUdevResourceDesc d;
    CUgreenCtx gall;
    CK(cuDevResourceGenerateDesc(&d, &all, 1));
    CK(cuGreenCtxCreate(&gall, d, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    report("green-all-exists", s);

    unsigned ng = 128;
    std::vector<CUdevResource> groups(128);
    CUdevResource rest;
    CK(cuDevSmResourceSplitByCount(groups.data(), &ng, &all, &rest, CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING, 2));
    std::vector<CUgreenCtx> gs(ng);
    for (unsigned i = 0; i < ng; i++) {
        CK(cuDevResourceGenerateDesc(&d, &groups[i], 1));
        CK(cuGreenCtxCreate(&gs[i], d, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    }
    report("green-66x2-exists", s);
    for (unsigned i = 0; i < ng; i++) CK(cuGreenCtxDestroy(gs[i]));
    report("after-66x2-destroyed", s);

    CUstream gst;
    CK(cuGreenCtxStreamCreate(&gst, gall, CU_STREAM_NON_BLOCKING, 0));
    report("green-all-stream", (cudaStream_t)gst);
    CK(cuStreamDestroy(gst));
    CK(cuGreenCtxDestroy(gall));
    report("plain-again", s);
    return 0;
}
