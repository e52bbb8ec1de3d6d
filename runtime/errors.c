/* errors.c — libtidal's errors and log: the status strings, each thread's last error
 * (tidal_last_error), the debug log (TIDAL_DEBUG) and warnings. The bottom of libtidal:
 * every module reports through it, and it calls nothing of theirs. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_proto.h" /* tidal_control_now_ns: the log's clock, shared with tidald */
#include "runtime_internal.h"

static _Thread_local char last_error[TIDAL_ERROR_MAX];

const char *tidal_strerror(int status)
{
    switch (status) {
    case TIDAL_OK: return "success";
    case TIDAL_ERR_INVALID: return "invalid argument";
    case TIDAL_ERR_PARSE: return "malformed SM set or name";
    case TIDAL_ERR_NOT_INIT: return "libtidal is not initialized";
    case TIDAL_ERR_NO_DRIVER: return "CUDA driver not available";
    case TIDAL_ERR_CUDA: return "CUDA driver call failed";
    case TIDAL_ERR_NO_MEMORY: return "out of memory";
    case TIDAL_ERR_EXISTS: return "partition exists";
    case TIDAL_ERR_NOT_FOUND: return "not found";
    case TIDAL_ERR_NOT_REWRITTEN: return "not rewritten by tidal";
    case TIDAL_ERR_BUSY: return "partition in use";
    case TIDAL_ERR_SMS: return "SM id out of range for this device";
    case TIDAL_ERR_DAEMON: return "tidald failure";
    case TIDAL_ERR_MPS: return "MPS client: no SM id space shared with other processes";
    case TIDAL_ERR_UNSUPPORTED: return "not supported by this device";
    default: return "unknown status";
    }
}

const char *tidal_last_error(void) { return last_error[0] ? last_error : "no error"; }

void tidal__error_save(char out[TIDAL_ERROR_MAX]) { memcpy(out, last_error, sizeof last_error); }

void tidal__error_restore(const char saved[TIDAL_ERROR_MAX]) { memcpy(last_error, saved, sizeof last_error); }

int tidal__fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    tidal__log("error: %s (%s)", last_error, tidal_strerror(status));
    return status;
}

void tidal__log(const char *fmt, ...)
{
    static int level = -1;
    if (level < 0) {
        const char *e = getenv("TIDAL_DEBUG");
        level = e && *e && strcmp(e, "0") != 0;
    }
    if (!level) return;
    /* CLOCK_MONOTONIC in us: comparable with tidald's and other processes' debug logs */
    fprintf(stderr, "tidal: [%.1f us] ", (double)tidal_control_now_ns() / 1e3);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void tidal__warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("tidal: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
