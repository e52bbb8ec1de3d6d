/* init.c — libtidal's life: tidal_init (the environment's settings, then each module's
 * setup, in order), the interposers' lazy init, tidal_shutdown (each module's teardown).
 * The top of libtidal: it calls every module, none calls it (docs/design.md §5, "Layers"). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "flowin.h"
#include "functions.h"
#include "green.h"
#include "l2side.h"
#include "launch.h"
#include "partitions.h"
#include "remote.h"
#include "streams.h"
#include "tidal_abi.h"

static int init_failed; /* interposers: tidal__ensure_init printed why, launches pass through */

/* *out = the decimal value of environment variable name in [lo, hi], or dflt when it is
 * unset or empty; TIDAL_ERR_PARSE (and *out unchanged) for anything else. */
static int env_unsigned(const char *name, long lo, long hi, unsigned dflt, unsigned *out)
{
    const char *e = getenv(name);
    if (!e || !*e) {
        *out = dflt;
        return TIDAL_OK;
    }
    char *end;
    long v = strtol(e, &end, 10);
    if (*end || v < lo || v > hi) return tidal__fail(TIDAL_ERR_PARSE, "%s=%s: want %ld-%ld", name, e, lo, hi);
    *out = (unsigned)v;
    return TIDAL_OK;
}

/* 1 unless environment variable name is "0" */
static int env_on(const char *name)
{
    const char *e = getenv(name);
    return !(e && strcmp(e, "0") == 0);
}

static int init_driver_locked(unsigned flags)
{
    int st = tidal__device_attach();
    if (st) return st;
    tidal__launch_config lc;
    memset(&lc, 0, sizeof lc);
    unsigned short_us = 0, gate = 1;
    st = env_unsigned("TIDAL_MAX_CHUNK", 1, TIDAL_MAX_CHUNK, 32, &lc.max_chunk);
    if (!st) st = env_unsigned("TIDAL_SHORT_US", 0, 10000000, 20, &short_us);
    if (!st) st = env_unsigned("TIDAL_CHUNK_US", 1, 10000000, 20, &lc.chunk_us);
    if (!st) st = env_unsigned("TIDAL_STATIC_SHARE", 0, 100, 75, &lc.static_share);
    if (!st) st = env_unsigned("TIDAL_SAMPLE_GATE", 0, 1, 1, &gate);
    if (st) return st;
    const char *pm = getenv("TIDAL_PLACEMENT");
    int place_mode = TIDAL_PLACE_HYBRID;
    if (pm && *pm) {
        if (strcmp(pm, "hybrid") == 0)
            place_mode = TIDAL_PLACE_HYBRID;
        else if (strcmp(pm, "persistent") == 0)
            place_mode = TIDAL_PLACE_PERSISTENT;
        else if (strcmp(pm, "original") == 0)
            place_mode = TIDAL_PLACE_ORIGINAL;
        else
            return tidal__fail(TIDAL_ERR_PARSE, "TIDAL_PLACEMENT=%s: want hybrid, persistent or original", pm);
    }
    const int histogram = env_on("TIDAL_HISTOGRAM");
    lc.flow_in = env_on("TIDAL_FLOW_IN");
    lc.gate = (int)gate;
    st = tidal__device_open();
    if (st) return st;
    tidal__launch_init(&lc);
    tidal__parts_init(place_mode, short_us, histogram);
    tidal__parts_on_destroy(tidal__streams_forget);
    tidal__device_mark_ready();
    st = tidal__parts_from_env();
    if (st) return st;
    const char *nd = getenv("TIDAL_NO_DAEMON");
    if (!(flags & TIDAL_INIT_NO_DAEMON) && !(nd && *nd && strcmp(nd, "0") != 0)) {
        tidal__unlock(); /* remote start takes the lock to apply partitions */
        st = tidal__remote_start();
        tidal__lock();
        if (st && st != TIDAL_ERR_NOT_FOUND) return st;
    }
    const char *missing = tidal__part_default_missing();
    if (missing)
        tidal__warn("TIDAL_PARTITION=%s: no such partition yet; kernels run unmasked until it exists", missing);
    tidal__log("initialized: %u SMs%s, histogram %s", tidal__nsm(), tidal__is_mps() ? ", MPS client" : "",
               histogram ? "on" : "off");
    return TIDAL_OK;
}

/* The first launch libtidal sees may be inside a stream capture (a program that captures
 * its first kernels into a graph): init's allocations and synchronizations would then
 * invalidate the user's capture (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED). They run in
 * relaxed capture mode: they are libtidal's own, on its own streams, not the graph's. */
static int init_locked(unsigned flags)
{
    if (tidal__ready()) return TIDAL_OK;
    int st = tidal__device_load();
    if (st) return st;
    CUstreamCaptureMode mode = tidal__capture_relax();
    st = init_driver_locked(flags);
    tidal__capture_restore(mode);
    return st;
}

static void teardown_locked(void)
{
    tidal__parts_teardown();
    tidal__streams_teardown(); /* its cluster routes live in green contexts */
    tidal__green_teardown();
    tidal__l2_teardown();
    tidal__launch_teardown();
    tidal__device_close();
    tidal__fns_teardown();
    tidal__modules_teardown();
    tidal__flow_joins_reset();
    tidal__device_reset();
    init_failed = 0;
}

int tidal_init(unsigned flags)
{
    tidal__lock();
    int st = init_locked(flags);
    if (st && tidal__ready()) {
        char keep[TIDAL_ERROR_MAX];
        tidal__error_save(keep);
        tidal__unlock();
        tidal__remote_stop();
        tidal__lock();
        teardown_locked();
        tidal__error_restore(keep);
    }
    tidal__unlock();
    return st;
}

int tidal__ensure_init(void)
{
    if (tidal__ready()) return 0;
    tidal__lock();
    int failed = init_failed;
    tidal__unlock();
    if (failed) return -1;
    int st = tidal_init(0);
    if (st == TIDAL_OK) return 0;
    tidal__lock();
    if (!init_failed) {
        init_failed = 1;
        tidal__warn("error: %s (%s); kernels run unmasked", tidal_last_error(), tidal_strerror(st));
        const char *req = getenv("TIDAL_REQUIRE");
        if (req && *req && strcmp(req, "0") != 0) {
            tidal__warn("TIDAL_REQUIRE is set: aborting");
            abort();
        }
    }
    tidal__unlock();
    return -1;
}

int tidal_shutdown(void)
{
    if (!tidal__ready()) return tidal__fail(TIDAL_ERR_NOT_INIT, "tidal_shutdown before tidal_init");
    tidal__remote_stop();
    tidal__lock();
    if (tidal__ctl_stream()) tidal__cu()->StreamSynchronize(tidal__ctl_stream());
    teardown_locked();
    tidal__unlock();
    return TIDAL_OK;
}
