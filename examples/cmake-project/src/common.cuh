// Shared helpers: CUDA error checks and the "no device -> skipped" rule.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

// CTest's SKIP_RETURN_CODE (CMakeLists.txt): no CUDA device, nothing to test.
#define EXAMPLE_SKIP_CODE 77

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t err_ = (call);                                                       \
    if (err_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,             \
                   cudaGetErrorString(err_));                                        \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

// Exits with EXAMPLE_SKIP_CODE when there is no usable CUDA device.
inline void require_device(const char *prog) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess || n == 0) {
    std::printf("%s: skipped: no CUDA device (%s)\n", prog,
                err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    std::exit(EXAMPLE_SKIP_CODE);
  }
}
