/* bench/probes/probe_check.h -- the probes' one way to stop on a failed CUDA call:
 * CK(driver call), RK(runtime call, where cuda_runtime.h is included). They print
 * "FILE:LINE: CALL: ERROR" on stderr and exit 1: a probe's numbers are worthless past a
 * failed call. C and CUDA C++. */
#ifndef PROBE_CHECK_H
#define PROBE_CHECK_H
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                               \
    do {                                                                    \
        CUresult r_ = (x);                                                  \
        if (r_ != CUDA_SUCCESS) {                                           \
            const char *s_ = "?";                                           \
            cuGetErrorName(r_, &s_);                                        \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_); \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

#ifdef CUDART_VERSION
#define RK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)
#endif
#endif
