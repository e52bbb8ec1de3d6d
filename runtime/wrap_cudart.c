/* wrap_cudart.c — libtidal_cudart.a: the launch path of programs built by tidal-nvcc.
 * tidal-nvcc links with -Wl,--wrap=cudaLaunchKernel (and the _ptsz / ExC variants), so
 * every <<<>>> launch lands here; a rewritten kernel runs through libtidal as its reshaped
 * clone, anything else goes to the CUDA runtime's own launch, which keeps its error state. */
#include <cuda_runtime_api.h>
#include <stdlib.h>

#include "runtime_internal.h"

cudaError_t __real_cudaLaunchKernel(const void *, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t __real_cudaLaunchKernel_ptsz(const void *, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t __real_cudaLaunchKernelExC(const cudaLaunchConfig_t *, const void *, void **);
cudaError_t __real_cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *, const void *, void **);
cudaError_t __wrap_cudaLaunchKernel(const void *, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t __wrap_cudaLaunchKernel_ptsz(const void *, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t __wrap_cudaLaunchKernelExC(const cudaLaunchConfig_t *, const void *, void **);
cudaError_t __wrap_cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *, const void *, void **);

__attribute__((constructor)) static void wrap_init(void)
{
    /* see preload.c: a lazily loaded module's first launch waits for running kernels */
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
}

/* Launch f through libtidal: 1 and *err set when it did, 0 when it declined (the caller
 * then uses the runtime's own launch). cfg: the attributes of a cudaLaunchKernelExC;
 * kernel: f is a cudaKernel_t (a CUkernel), which libtidal cannot tell by asking the
 * driver without a failing call. */
static int launch_via_tidal(CUfunction f, int kernel, dim3 g, dim3 b, void **args, size_t smem, cudaStream_t s,
                            int ptsz, const cudaLaunchConfig_t *cfg, cudaError_t *err)
{
    CUlaunchConfig c;
    tidal_launch_req q = {.f = f,
                          .grid = {g.x, g.y, g.z},
                          .block = {b.x, b.y, b.z},
                          .smem = (unsigned)smem,
                          .stream = (CUstream)s,
                          .params = args,
                          .ptsz = ptsz,
                          .kernel = kernel};
    if (cfg) {
        /* cudaLaunchAttribute and CUlaunchAttribute share ids and layout */
        c = (CUlaunchConfig){.gridDimX = g.x,
                             .gridDimY = g.y,
                             .gridDimZ = g.z,
                             .blockDimX = b.x,
                             .blockDimY = b.y,
                             .blockDimZ = b.z,
                             .sharedMemBytes = (unsigned)smem,
                             .hStream = (CUstream)s,
                             .attrs = (CUlaunchAttribute *)cfg->attrs,
                             .numAttrs = cfg->numAttrs};
        q.ex = &c;
    }
    int handled = 0;
    CUresult r = tidal__launch_or_decline(&q, &handled);
    if (!handled) return 0;
    *err = (cudaError_t)r; /* the launch error codes coincide (cudaErrorInvalidValue = 1, ...) */
    return 1;
}

/* A launch by host function pointer (cudaLaunchKernel*). */
static int try_launch(const void *func, dim3 g, dim3 b, void **args, size_t smem, cudaStream_t s, int ptsz,
                      const cudaLaunchConfig_t *cfg, cudaError_t *err)
{
    cudaFunction_t cf;
    /* also initializes the runtime, so its primary context is current for libtidal */
    if (cudaGetFuncBySymbol(&cf, func) != cudaSuccess) {
        cudaGetLastError(); /* not a kernel we can name: the real launch reports it */
        return 0;
    }
    return launch_via_tidal((CUfunction)cf, 0, g, b, args, smem, s, ptsz, cfg, err);
}

cudaError_t __wrap_cudaLaunchKernel(const void *func, dim3 g, dim3 b, void **args, size_t smem, cudaStream_t s)
{
    cudaError_t e;
    if (try_launch(func, g, b, args, smem, s, 0, NULL, &e)) return e;
    return __real_cudaLaunchKernel(func, g, b, args, smem, s);
}

cudaError_t __wrap_cudaLaunchKernel_ptsz(const void *func, dim3 g, dim3 b, void **args, size_t smem, cudaStream_t s)
{
    cudaError_t e;
    if (try_launch(func, g, b, args, smem, s, 1, NULL, &e)) return e;
    return __real_cudaLaunchKernel_ptsz(func, g, b, args, smem, s);
}

cudaError_t __wrap_cudaLaunchKernelExC(const cudaLaunchConfig_t *cfg, const void *func, void **args)
{
    cudaError_t e;
    if (cfg && try_launch(func, cfg->gridDim, cfg->blockDim, args, cfg->dynamicSmemBytes, cfg->stream, 0, cfg, &e))
        return e;
    return __real_cudaLaunchKernelExC(cfg, func, args);
}

cudaError_t __wrap_cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *cfg, const void *func, void **args)
{
    cudaError_t e;
    if (cfg && try_launch(func, cfg->gridDim, cfg->blockDim, args, cfg->dynamicSmemBytes, cfg->stream, 1, cfg, &e))
        return e;
    return __real_cudaLaunchKernelExC_ptsz(cfg, func, args);
}

/* CUDA 13's <<<>>> host stubs launch through these, with a cudaKernel_t (= CUkernel). */
cudaError_t __real___cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t __real___cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t __wrap___cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t __wrap___cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);

static int try_kernel(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t smem, cudaStream_t s, int ptsz,
                      cudaError_t *err)
{
    /* the runtime's primary context must exist and be current before libtidal looks at
     * the kernel: what the real launch would do first anyway */
    int dev;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaSetDevice(dev) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    /* launch.c maps a CUkernel to this context's CUfunction */
    return launch_via_tidal((CUfunction)k, 1, g, b, args, smem, s, ptsz, NULL, err);
}

cudaError_t __wrap___cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t smem, cudaStream_t s)
{
    cudaError_t e;
    if (try_kernel(k, g, b, args, smem, s, 0, &e)) return e;
    return __real___cudaLaunchKernel(k, g, b, args, smem, s);
}

cudaError_t __wrap___cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t smem, cudaStream_t s)
{
    cudaError_t e;
    if (try_kernel(k, g, b, args, smem, s, 1, &e)) return e;
    return __real___cudaLaunchKernel_ptsz(k, g, b, args, smem, s);
}
