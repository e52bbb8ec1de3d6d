/* util.h — the small string helpers tidal's drivers share (header-only, so each
 * driver's build line stays as it is). Out of memory is an internal error
 * (ptx_ice). */
#ifndef TIDAL_DRIVER_UTIL_H
#define TIDAL_DRIVER_UTIL_H

#include "ptx.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* s ends with suffix */
static inline bool tidal_ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* A malloc'd formatted string (like asprintf, never NULL). */
static inline char *tidal_xasprintf(const char *f, ...) __attribute__((format(printf, 1, 2)));
static inline char *tidal_xasprintf(const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!s) ptx_ice("out of memory");
    va_start(ap, f);
    vsnprintf(s, (size_t)n + 1, f, ap);
    va_end(ap);
    return s;
}

/* A malloc'd "a/b" (never NULL). */
static inline char *tidal_path_join(const char *a, const char *b) { return tidal_xasprintf("%s/%s", a, b); }

#endif
