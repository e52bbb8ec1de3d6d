/* util.h — the small helpers tidal's drivers share (header-only, so each driver's
 * build line stays as it is): strings, paths (joined, split, made absolute), the private
 * temporary directory, writing a whole file, and the drivers' side of the library's
 * diagnostics contract (ptx.h). Out of memory is an internal error (ptx_ice). */
#ifndef TIDAL_DRIVER_UTIL_H
#define TIDAL_DRIVER_UTIL_H

#include "ptx.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The library's fatal errors as the drivers report them (ptx_set_fatal_handler, first
 * thing in main): an internal error is "tidal: internal error: MSG (this is a bug in
 * tidal, not in the input)" on standard error and exit status 70. (LLVM's fatal errors
 * reach only tidal-opt, which reports them itself.) */
static inline void tidal_driver_fatal(ptx_fatal_kind kind, const char *msg)
{
    (void)kind;
    fprintf(stderr, "tidal: internal error: %s (this is a bug in tidal, not in the input)\n", msg);
    exit(70);
}

/* s ends with suffix */
static inline bool tidal_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* A malloc'd formatted string (like asprintf, never NULL). */
static inline char *tidal_xasprintf(const char *f, ...) __attribute__((format(printf, 1, 2)));
static inline char *tidal_xasprintf(const char *f, ...)
{
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

/* The last component of path: what follows its last '/' (all of path when it has none). */
static inline const char *tidal_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* A malloc'd copy of path up to its last '/' (not included), "." when it has none. */
static inline char *tidal_dir_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? tidal_xasprintf("%.*s", (int)(slash - path), path) : tidal_xasprintf(".");
}

/* Makes a private directory $TMPDIR/NAME-XXXXXX (/tmp when TMPDIR is unset or empty) in
 * buf, as mkdtemp does. false, errno set, when it cannot; buf then holds the name tried,
 * for the message. */
static inline bool tidal_make_temp_dir(char *buf, size_t size, const char *name)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, size, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
    return mkdtemp(buf) != NULL;
}

/* Writes len bytes to path (created or truncated): 0, or -1 with errno set. (Reading a
 * whole file is the library's ptx_read_file.) */
static inline int tidal_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    bool written = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && written ? 0 : -1;
}

/* path made absolute, not canonical (<cwd>/path when relative: nvcc derives its include
 * paths from the directory it is run from, so symlinks stay as given). malloc'd; NULL
 * when the working directory cannot be read. */
static inline char *tidal_abs_path(const char *path)
{
    if (path[0] == '/') return tidal_xasprintf("%s", path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return NULL;
    return tidal_path_join(cwd, path);
}

#endif
