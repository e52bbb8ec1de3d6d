/* A stand-in for libtidal_cudart.a / libtidal.a: the --wrap targets, each
 * forwarding to the real cudart entry point. */
typedef int cudaError_t;
#define WRAP(name)                                \
    cudaError_t __real_##name(const void *, ...); \
    cudaError_t __wrap_##name(const void *f) { return __real_##name(f); }
WRAP(cudaLaunchKernel)
WRAP(cudaLaunchKernel_ptsz)
WRAP(cudaLaunchKernelExC)
WRAP(cudaLaunchKernelExC_ptsz)
WRAP(__cudaLaunchKernel)
WRAP(__cudaLaunchKernel_ptsz)
int tidal_fake_runtime_linked = 1;
