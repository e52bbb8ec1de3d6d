/* entry.c — the way into the launch path: the interposers (preload.c's hooks,
 * wrap_cudart.c's wrappers) and tidal_launch_kernel come here; libtidal is initialized
 * on first use (init.c), then launch.c decides and launches. */
#include "device.h"
#include "launch.h"

CUresult tidal__launch_or_decline(const tidal_launch_req *q, int *handled)
{
    *handled = 0;
    if (!tidal__ready() && tidal__ensure_init() != 0) return CUDA_SUCCESS;
    return tidal__launch_run(q, handled);
}

CUresult tidal__launch(const tidal_launch_req *q)
{
    int handled;
    CUresult r = tidal__launch_or_decline(q, &handled);
    if (handled) return r;
    if (!tidal__cu()) return CUDA_ERROR_NOT_INITIALIZED; /* no driver: the launch cannot happen */
    r = tidal__launch_given(q);
    if (r != CUDA_SUCCESS) tidal__launch_explain(q, r);
    return r;
}

int tidal_launch_kernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void *stream, void **params, void **extra)
{
    if (!tidal__ready()) return CUDA_ERROR_NOT_INITIALIZED;
    tidal_launch_req q = {.f = (CUfunction)f,
                          .grid = {gx, gy, gz},
                          .block = {bx, by, bz},
                          .smem = smem,
                          .stream = (CUstream)stream,
                          .params = params,
                          .extra = extra};
    return (int)tidal__launch(&q);
}
