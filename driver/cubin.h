/* cubin.h — PTX to cubin for tidal's drivers: nvJitLink in process when it can
 * be loaded, else the ptxas executable. */
#ifndef TIDAL_CUBIN_H
#define TIDAL_CUBIN_H

#include <stddef.h>

/* Compiles `len` bytes of PTX for `arch` (e.g. "sm_90a"). On success returns 0,
 * *cubin (malloc'd) and *cubin_len, and *backend names what compiled it. On
 * failure returns -1 and writes a message to err. TIDAL_CUBIN_BACKEND=ptxas or
 * =nvjitlink forces one backend. */
int tidal_ptx_to_cubin(const char *ptx, size_t len, const char *arch, void **cubin, size_t *cubin_len,
                       char *backend, size_t backend_size, char *err, size_t err_size);

#endif
