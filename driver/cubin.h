/* cubin.h — PTX to cubin for tidal's drivers: in process by libnvptxcompiler when
 * the build linked it, else by nvJitLink when it can be loaded, else by the ptxas
 * executable. */
#ifndef TIDAL_CUBIN_H
#define TIDAL_CUBIN_H

#include <stdbool.h>
#include <stddef.h>

/* Compiles `len` bytes of PTX for `arch` (e.g. "sm_90a"). On success returns 0,
 * *cubin (malloc'd) and *cubin_len, and *backend names what compiled it. On
 * failure returns -1 and writes a message to err. TIDAL_CUBIN_BACKEND=nvptxcompiler,
 * =nvjitlink or =ptxas forces one backend (an error when it is not there). */
int tidal_ptx_to_cubin(const char *ptx, size_t len, const char *arch, void **cubin, size_t *cubin_len, char *backend,
                       size_t backend_size, char *err, size_t err_size);

/* Was libnvptxcompiler linked into this program? */
bool tidal_cubin_have_nvptxcompiler(void);

#ifdef TIDAL_HAVE_NVPTXCOMPILER
/* cubin_nvptxcompiler.c: same contract as tidal_ptx_to_cubin. */
int tidal_cubin_by_nvptxcompiler(const char *ptx, size_t len, const char *arch, void **cubin, size_t *cubin_len,
                                 char *backend, size_t backend_size, char *err, size_t err_size);
#endif

#endif
