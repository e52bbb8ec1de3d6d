/* runtime_internal.h — what libtidal's entry points share (not installed): the errors and
 * log (errors.c), and the contract of the interposers (preload.c, wrap_cudart.c) and the
 * unit tests with the library: the driver table to use, one launch, lazy init. Each
 * module's own internals are in its header (docs/design.md §5, "Layers"). */
#ifndef TIDAL_RUNTIME_INTERNAL_H
#define TIDAL_RUNTIME_INTERNAL_H

#include <stdarg.h>

#include "cu.h"
#include "tidal.h"

/* ------------------------------------------------------------------ smset.c */

/* 1 when every SM of a is in b. */
int tidal__smset_subset(const tidal_smset *a, const tidal_smset *b);

/* ------------------------------------------------------------------ errors.c */

/* Record an error for tidal_last_error(); returns status. */
int tidal__fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The calling thread's last error, kept and put back around a teardown (tidal_init). */
#define TIDAL_ERROR_MAX 512
void tidal__error_save(char out[TIDAL_ERROR_MAX]);
void tidal__error_restore(const char saved[TIDAL_ERROR_MAX]);

/* Debug log to stderr when TIDAL_DEBUG is set. */
void tidal__log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Always printed (once per distinct message site by the caller). */
void tidal__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ------------------------------------------------------------------ the driver (device.c) */

/* Unit tests: use this table instead of dlopening a driver (call before tidal_init;
 * NULL goes back to dlopen). */
void tidal__set_driver(const tidal_cu *cu);
/* The preload library interposes dlsym: it registers the real one here, at load, for
 * tidal_init's driver table (tidal__cu_load's lookup). */
void tidal__set_driver_dlsym(void *(*real_dlsym)(void *, const char *));

/* ------------------------------------------------------------------ launches (entry.c) */

/* One launch as an interposer received it. */
typedef struct tidal_launch_req {
    CUfunction f;
    unsigned grid[3], block[3], smem;
    CUstream stream;
    void **params, **extra;
    const CUlaunchConfig *ex; /* non-NULL: came through cuLaunchKernelEx (grid etc. copied above) */
    int ptsz;                 /* the _ptsz entry point: stream 0 is the per-thread stream */
    int kernel;               /* f is known to be a CUkernel (cudart's __cudaLaunchKernel) */
} tidal_launch_req;

/* CUkernel handles the preload saw made (its cuLibraryGetKernel and
 * cuLibraryEnumerateKernels hooks): functions.c then knows such a handle's kind without a
 * failing driver call. Any thread, before or after tidal_init; kept for the process. */
void tidal__note_kernels(const CUkernel *k, unsigned n);

/* Launch through libtidal: reshaped clone on the stream's partition, else the original
 * through the real driver. Initializes libtidal on first use (errors are printed once and
 * launches pass through). Returns the CUresult of the launch. */
CUresult tidal__launch(const tidal_launch_req *req);
/* As tidal__launch, but when libtidal would launch the kernel unchanged it launches nothing,
 * sets *handled = 0 and returns CUDA_SUCCESS (the CUDA-runtime wrappers then call the
 * runtime's own launch so its error state stays right). Exported from libtidal.so: the
 * wrappers (libtidal_cudart.a) live in the program. */
__attribute__((visibility("default"))) CUresult tidal__launch_or_decline(const tidal_launch_req *req, int *handled);

/* After a launch the driver refused with r (the interposers' own launches too): says why,
 * once, when it is a cluster launch on a partition's green-context stream (launch.c; the
 * error path only). */
void tidal__launch_explain(const tidal_launch_req *q, CUresult r);

/* Lazy init for interposers: 0 when libtidal is usable (init.c). */
int tidal__ensure_init(void);

#endif
