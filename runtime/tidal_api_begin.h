/* tidal_api_begin.h — opens the declarations of a public libtidal header: C linkage for
 * C++ callers and default visibility (libtidal.so and libtidal-preload.so export exactly
 * what the public headers declare, plus the interposed CUDA entry points; everything else
 * is built hidden). Included, with tidal_api_end.h, by the public headers only (tidal.h,
 * tidal_policy.h, tidal_server.h); no include guard: each opens and closes its own block. */
#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif
