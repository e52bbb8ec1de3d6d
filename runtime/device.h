/* device.h — libtidal's device (device.c): the driver table in use, the context and the
 * device, libtidal's own streams and pinned staging, and the one lock. Every module above
 * the driver table reads this state, through the inline accessors below (the launch path
 * too: they compile to the loads it made before); only device.c writes it. */
#ifndef TIDAL_DEVICE_H
#define TIDAL_DEVICE_H

#include <pthread.h>
#include <stdlib.h>

#include "runtime_internal.h"

typedef struct tidal__device {
    /* libtidal's one lock: it guards every module's tables (partitions, streams, modules,
     * functions, samples, green contexts); a launch holds it while it decides */
    pthread_mutex_t lock;
    int initialized;
    const tidal_cu *cu; /* the driver: a unit test's table, else the dlopen'ed one */
    tidal_cu table;
    CUcontext ctx;
    CUdevice dev;
    unsigned nsm;
    int is_mps;
    CUstream ctl_stream;   /* non-blocking: mask writes never wait for running kernels */
    CUstream join_stream;  /* flow-in's joiners run here, beside the stream their owner waits on */
    unsigned char *pinned; /* staging for ctl_stream copies (page-locked: truly async) */
} tidal__device;

extern tidal__device tidal__dev;

static inline const tidal_cu *tidal__cu(void) { return tidal__dev.cu; }
static inline int tidal__ready(void) { return tidal__dev.initialized; }
static inline unsigned tidal__nsm(void) { return tidal__dev.nsm; }
static inline CUdevice tidal__device_id(void) { return tidal__dev.dev; }
static inline int tidal__is_mps(void) { return tidal__dev.is_mps; }
static inline CUstream tidal__ctl_stream(void) { return tidal__dev.ctl_stream; }
static inline CUstream tidal__join_stream(void) { return tidal__dev.join_stream; }
static inline unsigned char *tidal__staging(void) { return tidal__dev.pinned; }
static inline void tidal__lock(void) { pthread_mutex_lock(&tidal__dev.lock); }
static inline int tidal__trylock(void) { return pthread_mutex_trylock(&tidal__dev.lock); }
static inline void tidal__unlock(void) { pthread_mutex_unlock(&tidal__dev.lock); }

/* With the lock held: fail the calling API function unless libtidal is initialized. */
#define NEED_INIT(fn)                                                        \
    do {                                                                     \
        if (!tidal__ready()) {                                               \
            tidal__unlock();                                                 \
            return tidal__fail(TIDAL_ERR_NOT_INIT, fn " before tidal_init"); \
        }                                                                    \
    } while (0)

/* A failed driver call as a tidal status (TIDAL_ERR_CUDA, the call and the driver's name
 * for the error in tidal_last_error). */
int tidal__cuda_fail(CUresult r, const char *what);
#define CU_TRY(call, what)                                         \
    do {                                                           \
        CUresult r_ = (call);                                      \
        if (r_ != CUDA_SUCCESS) return tidal__cuda_fail(r_, what); \
    } while (0)

/* init.c's steps, in this order, with the lock held: the table (the installed one, else
 * dlopen), then the driver's context and device, then libtidal's streams and staging;
 * the device is ready for the API once init has done the rest. close and reset undo them
 * at teardown (reset keeps the lock and the installed table). */
int tidal__device_load(void);
int tidal__device_attach(void);
int tidal__device_open(void);
void tidal__device_mark_ready(void);
void tidal__device_close(void);
void tidal__device_reset(void);

/* The calling thread (tidald's watcher) makes the device's context current for good, and
 * touches the control stream; 1 once done (0: not initialized yet). Takes the lock. */
int tidal__device_adopt(void);

/* API calls: libtidal's context current (the thread's own put back after) and the
 * thread's capture mode relaxed for the call. */
typedef struct tidal__call {
    CUcontext ctx;
    CUstreamCaptureMode mode;
} tidal__call;
tidal__call tidal__ctx_enter(void);
void tidal__ctx_leave(tidal__call c);
/* Driver calls libtidal makes for itself (queries, synchronizes) while a stream of the
 * process may be capturing a graph in global mode: relaxed, so they do not invalidate it. */
CUstreamCaptureMode tidal__capture_relax(void);
void tidal__capture_restore(CUstreamCaptureMode m);

/* Publish n bytes (at most 4096) at dst and wait until they are in device memory: through
 * the pinned staging, on the control stream. How libtidal writes the words running kernels
 * read (a partition's mask, a module's __tidal_ctl, a bimodal tensor's mode): the control
 * stream is non-blocking, so the copy never waits for those kernels, and when this returns
 * a kernel's next relaxed load of the words (they are read from L2, never L1) sees them.
 * what names the copy in the error text. Lock held, libtidal's context current. */
int tidal__ctl_write(CUdeviceptr dst, const void *src, size_t n, const char *what);

/* One growing array of libtidal's tables: room for at least n elements (0, or -1 out of
 * memory). */
static inline int tidal__grow(void **arr, unsigned *cap, unsigned n, size_t elem)
{
    if (n <= *cap) return 0;
    unsigned c = *cap ? *cap : 16;
    while (c < n) c *= 2;
    void *a = realloc(*arr, (size_t)c * elem);
    if (!a) return -1;
    *arr = a;
    *cap = c;
    return 0;
}

#endif
