/* runtime.c — libtidal's state: init/shutdown, errors, partitions (device control
 * blocks), tidald partitions, module attachment and statistics. Streams and placement
 * are in streams.c, green contexts in green.c, the launch path in launch.c. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_proto.h" /* the partition name rule, shared with tidald */
#include "rt_state.h"

rt_state rt = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const tidal_cu *installed_cu;
static void *(*driver_dlsym)(void *, const char *); /* NULL: dlsym */
static _Thread_local char last_error[512];

void tidal__set_driver(const tidal_cu *cu) { installed_cu = cu; }
void tidal__set_driver_dlsym(void *(*real_dlsym)(void *, const char *)) { driver_dlsym = real_dlsym; }
int tidal__is_mps(void) { return rt.is_mps; }

/* ------------------------------------------------------------------ errors, logging */

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
    default: return "unknown status";
    }
}

const char *tidal_last_error(void) { return last_error[0] ? last_error : "no error"; }

int tidal__fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    tidal__log("error: %s (%s)", last_error, tidal_strerror(status));
    return status;
}

int tidal__cuda_fail(CUresult r, const char *what)
{
    char b[32];
    return tidal__fail(TIDAL_ERR_CUDA, "%s: %s", what, tidal__cu_errname(rt.cu, r, b, sizeof b));
}

static void vprint(const char *fmt, va_list ap)
{
    fputs("tidal: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
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
    vprint(fmt, ap);
    va_end(ap);
}

#define CU_TRY(call, what)                                         \
    do {                                                           \
        CUresult r_ = (call);                                      \
        if (r_ != CUDA_SUCCESS) return tidal__cuda_fail(r_, what); \
    } while (0)

CUstreamCaptureMode rt_capture_relax(void)
{
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (rt.cu && rt.cu->ThreadExchangeStreamCaptureMode) rt.cu->ThreadExchangeStreamCaptureMode(&m);
    return m;
}

void rt_capture_restore(CUstreamCaptureMode m)
{
    if (rt.cu && rt.cu->ThreadExchangeStreamCaptureMode) rt.cu->ThreadExchangeStreamCaptureMode(&m);
}

/* Driver calls need libtidal's context current on the calling thread; put back whatever
 * the thread had. They also run in relaxed capture mode: a synchronize or query of
 * libtidal's own must not invalidate a graph another stream is capturing. */
rt_call rt_ctx_enter(void)
{
    rt_call c = {NULL, CU_STREAM_CAPTURE_MODE_RELAXED};
    if (!rt.initialized) return c;
    rt.cu->CtxGetCurrent(&c.ctx);
    if (c.ctx != rt.ctx) rt.cu->CtxSetCurrent(rt.ctx);
    c.mode = rt_capture_relax();
    return c;
}

void rt_ctx_leave(rt_call c)
{
    if (!rt.initialized) return;
    rt_capture_restore(c.mode);
    if (c.ctx != rt.ctx) rt.cu->CtxSetCurrent(c.ctx);
}

/* ------------------------------------------------------------------ SM sets */

/* Keep the SMs this device has; SM ids beyond it are an error unless the set said "all". */
static int clip_set(const tidal_smset *in, int is_all, tidal_smset *out)
{
    memset(out, 0, sizeof *out);
    for (unsigned b = 0; b < TIDAL_SMSET_WORDS * 64; b++) {
        if (!((in->bits[b >> 6] >> (b & 63)) & 1)) continue;
        if (b >= rt.nsm) {
            if (is_all) break;
            return tidal__fail(TIDAL_ERR_SMS, "SM %u: this device has SMs 0-%u", b, rt.nsm - 1);
        }
        out->bits[b >> 6] |= 1ull << (b & 63);
    }
    return TIDAL_OK;
}

static int parse_set(const char *text, tidal_smset *out)
{
    tidal_smset s;
    int all = 0;
    size_t pos = 0;
    int st = tidal_smset_parse(text, &s, &all, &pos);
    if (st == TIDAL_ERR_PARSE)
        return tidal__fail(st, "SM set \"%s\": unexpected character at offset %zu (want e.g. 0-47,64,100-131)", text,
                           pos);
    if (st) return tidal__fail(st, "SM set: invalid argument");
    return clip_set(&s, all, out);
}

/* ------------------------------------------------------------------ device writes */

/* Write the mask words of p on the control stream and wait for them (a few µs; running
 * kernels see the new mask at their next claim). */
static int push_mask(struct tidal_part *p)
{
    memcpy(rt.pinned, p->mask.bits, sizeof p->mask.bits);
    CU_TRY(rt.cu->MemcpyHtoDAsync(p->dev + TIDAL_PARTITION_OFF_MASK, rt.pinned, sizeof p->mask.bits, rt.ctl_stream),
           "cuMemcpyHtoDAsync(mask)");
    CU_TRY(rt.cu->StreamSynchronize(rt.ctl_stream), "cuStreamSynchronize(control stream)");
    return TIDAL_OK;
}

static int part_alloc(struct tidal_part *p)
{
    const size_t bytes = TIDAL_PARTITION_BYTES(TIDAL_NSLOTS);
    CU_TRY(rt.cu->MemAlloc(&p->dev, bytes), "cuMemAlloc(partition)");
    if (rt.histogram) {
        CUresult r = rt.cu->MemAlloc(&p->sm_blocks, TIDAL_MAX_SMS * sizeof(uint64_t));
        if (r != CUDA_SUCCESS) {
            rt.cu->MemFree(p->dev);
            p->dev = 0;
            return tidal__cuda_fail(r, "cuMemAlloc(sm_blocks)");
        }
        CU_TRY(rt.cu->MemsetD8Async(p->sm_blocks, 0, TIDAL_MAX_SMS * sizeof(uint64_t), rt.ctl_stream),
               "cuMemsetD8Async(sm_blocks)");
    }
    CU_TRY(rt.cu->MemsetD8Async(p->dev, 0, bytes, rt.ctl_stream), "cuMemsetD8Async(partition)");
    tidal_partition h;
    memset(&h, 0, sizeof h);
    memcpy(h.mask, p->mask.bits, sizeof h.mask);
    h.sm_blocks = (uint64_t)p->sm_blocks;
    h.slot_mask = TIDAL_PROBE_SLOTS - 1;
    h.probe_base = TIDAL_STREAM_SLOTS;
    memcpy(rt.pinned, &h, sizeof h);
    CU_TRY(rt.cu->MemcpyHtoDAsync(p->dev, rt.pinned, sizeof h, rt.ctl_stream), "cuMemcpyHtoDAsync(partition)");
    CU_TRY(rt.cu->StreamSynchronize(rt.ctl_stream), "cuStreamSynchronize(control stream)");
    return TIDAL_OK;
}

static void part_free(struct tidal_part *p)
{
    rt_inflight_free(p);
    if (p->dev) rt.cu->MemFree(p->dev);
    if (p->sm_blocks) rt.cu->MemFree(p->sm_blocks);
    free(p);
}

static struct tidal_part *find_part(const char *name)
{
    for (struct tidal_part *p = rt.parts; p; p = p->next)
        if (strcmp(p->name, name) == 0) return p;
    return NULL;
}

/* Create with rt.lock held. */
static int create_locked(const char *name, const tidal_smset *mask, int remote, struct tidal_part **out)
{
    if (find_part(name)) return tidal__fail(TIDAL_ERR_EXISTS, "partition \"%s\" exists", name);
    struct tidal_part *p = calloc(1, sizeof *p);
    if (!p) return tidal__fail(TIDAL_ERR_NO_MEMORY, "partition \"%s\"", name);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->mask = *mask;
    p->remote = remote;
    p->place_mode = rt.place_mode;
    p->short_us = rt.short_us;
    int st = part_alloc(p);
    if (st) {
        part_free(p);
        return st;
    }
    p->next = rt.parts;
    rt.parts = p;
    if (!rt.default_part && rt.default_name[0] && strcmp(rt.default_name, name) == 0) {
        rt.default_part = p;
        tidal__log("default partition \"%s\" is now known", name);
    }
    if (out) *out = p;
    tidal__log("partition \"%s\" created%s", name, remote ? " (tidald)" : "");
    return TIDAL_OK;
}

/* ------------------------------------------------------------------ init / shutdown */

/* TIDAL_PARTITION=NAME (a tidald or later-created partition) or NAME:SMSET (created here). */
static int apply_env_partition(void)
{
    const char *e = getenv("TIDAL_PARTITION");
    if (!e || !*e) return TIDAL_OK;
    char name[64];
    const char *colon = strchr(e, ':');
    size_t n = colon ? (size_t)(colon - e) : strlen(e);
    if (n >= sizeof name) return tidal__fail(TIDAL_ERR_PARSE, "TIDAL_PARTITION=%s: name too long", e);
    memcpy(name, e, n);
    name[n] = '\0';
    if (!tidal_control_name_ok(name))
        return tidal__fail(TIDAL_ERR_PARSE,
                           "TIDAL_PARTITION=%s: want NAME or NAME:SMSET (name: 1-31 of [A-Za-z0-9_.-])", e);
    if (colon) {
        tidal_smset s;
        int st = parse_set(colon + 1, &s);
        if (st) {
            char why[256];
            snprintf(why, sizeof why, "%s", tidal_last_error());
            return tidal__fail(st, "TIDAL_PARTITION=%s: %s", e, why);
        }
        struct tidal_part *p = find_part(name);
        if (p) return tidal__fail(TIDAL_ERR_EXISTS, "TIDAL_PARTITION=%s: partition exists", e);
        st = create_locked(name, &s, 0, &p);
        if (st) return st;
        rt.default_part = p;
        return TIDAL_OK;
    }
    memcpy(rt.default_name, name, strlen(name) + 1); /* valid_name: <= 31 characters */
    rt.default_part = find_part(name);
    return TIDAL_OK;
}

static int init_driver_locked(unsigned flags);

/* The first launch libtidal sees may be inside a stream capture (a program that captures
 * its first kernels into a graph): init's allocations and synchronizations would then
 * invalidate the user's capture (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED). They run in
 * relaxed capture mode: they are libtidal's own, on its own streams, not the graph's. */
static int init_locked(unsigned flags)
{
    if (rt.initialized) return TIDAL_OK;
    char err[256];
    if (installed_cu) {
        rt.cu = installed_cu;
    } else {
        if (tidal__cu_load(NULL, driver_dlsym, &rt.cu_table, NULL, err, sizeof err) != 0)
            return tidal__fail(TIDAL_ERR_NO_DRIVER, "%s", err);
        rt.cu = &rt.cu_table;
    }
    CUstreamCaptureMode mode = rt_capture_relax();
    int st = init_driver_locked(flags);
    rt_capture_restore(mode);
    return st;
}

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

static int init_driver_locked(unsigned flags)
{
    CU_TRY(rt.cu->Init(0), "cuInit");
    CUcontext ctx = NULL;
    CU_TRY(rt.cu->CtxGetCurrent(&ctx), "cuCtxGetCurrent");
    if (!ctx) {
        CUdevice d;
        CU_TRY(rt.cu->DeviceGet(&d, 0), "cuDeviceGet(0)");
        CU_TRY(rt.cu->DevicePrimaryCtxRetain(&ctx, d), "cuDevicePrimaryCtxRetain");
        CU_TRY(rt.cu->CtxSetCurrent(ctx), "cuCtxSetCurrent");
    }
    rt.ctx = ctx;
    CU_TRY(rt.cu->CtxGetDevice(&rt.dev), "cuCtxGetDevice");
    int v = 0;
    CU_TRY(rt.cu->DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, rt.dev),
           "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
    if (v <= 0 || v > TIDAL_MAX_SMS)
        return tidal__fail(TIDAL_ERR_SMS, "device has %d SMs; libtidal handles 1-%d", v, TIDAL_MAX_SMS);
    rt.nsm = (unsigned)v;
    v = 0;
    if (rt.cu->DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, rt.dev) == CUDA_SUCCESS) rt.is_mps = v != 0;
    int st = env_unsigned("TIDAL_MAX_CHUNK", 1, TIDAL_MAX_CHUNK, 32, &rt.max_chunk);
    if (!st) st = env_unsigned("TIDAL_SHORT_US", 0, 10000000, 20, &rt.short_us);
    if (!st) st = env_unsigned("TIDAL_CHUNK_US", 1, 10000000, 20, &rt.chunk_us);
    if (!st) st = env_unsigned("TIDAL_STATIC_SHARE", 0, 100, 75, &rt.static_share);
    unsigned gate = 1;
    if (!st) st = env_unsigned("TIDAL_SAMPLE_GATE", 0, 1, 1, &gate);
    if (st) return st;
    const char *pm = getenv("TIDAL_PLACEMENT");
    rt.place_mode = TIDAL_PLACE_HYBRID;
    if (pm && *pm) {
        if (strcmp(pm, "hybrid") == 0)
            rt.place_mode = TIDAL_PLACE_HYBRID;
        else if (strcmp(pm, "persistent") == 0)
            rt.place_mode = TIDAL_PLACE_PERSISTENT;
        else if (strcmp(pm, "original") == 0)
            rt.place_mode = TIDAL_PLACE_ORIGINAL;
        else
            return tidal__fail(TIDAL_ERR_PARSE, "TIDAL_PLACEMENT=%s: want hybrid, persistent or original", pm);
    }
    const char *h = getenv("TIDAL_HISTOGRAM");
    rt.histogram = !(h && strcmp(h, "0") == 0);
    CU_TRY(rt.cu->StreamCreate(&rt.ctl_stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate(control stream)");
    CU_TRY(rt.cu->StreamCreate(&rt.join_stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate(join stream)");
    const char *fi = getenv("TIDAL_FLOW_IN");
    rt.flow_in = !(fi && strcmp(fi, "0") == 0);
    CU_TRY(rt.cu->MemAllocHost((void **)&rt.pinned, 4096), "cuMemAllocHost(staging)");
    rt.gate = NULL;
    if (gate) rt_gate_init();
    rt.initialized = 1;
    st = apply_env_partition();
    if (st) return st;
    const char *nd = getenv("TIDAL_NO_DAEMON");
    if (!(flags & TIDAL_INIT_NO_DAEMON) && !(nd && *nd && strcmp(nd, "0") != 0)) {
        pthread_mutex_unlock(&rt.lock); /* remote start takes the lock to apply partitions */
        st = tidal__remote_start();
        pthread_mutex_lock(&rt.lock);
        if (st && st != TIDAL_ERR_NOT_FOUND) return st;
    }
    if (rt.default_name[0] && !rt.default_part)
        tidal__warn("TIDAL_PARTITION=%s: no such partition yet; kernels run unmasked until it exists", rt.default_name);
    tidal__log("initialized: %u SMs%s, histogram %s", rt.nsm, rt.is_mps ? ", MPS client" : "",
               rt.histogram ? "on" : "off");
    return TIDAL_OK;
}

static void teardown_locked(void)
{
    struct tidal_part *p = rt.parts;
    while (p) {
        struct tidal_part *n = p->next;
        part_free(p);
        p = n;
    }
    rt_green_free();
    for (unsigned i = 0; i < TIDAL_PENDING; i++) {
        if (rt.pending[i].start) rt.cu->EventDestroy(rt.pending[i].start);
        if (rt.pending[i].end) rt.cu->EventDestroy(rt.pending[i].end);
    }
    if (rt.pinned) rt.cu->MemFreeHost(rt.pinned);
    if (rt.gate) rt.cu->MemFreeHost((void *)rt.gate);
    if (rt.ctl_stream) rt.cu->StreamDestroy(rt.ctl_stream);
    if (rt.join_stream) rt.cu->StreamDestroy(rt.join_stream);
    for (unsigned i = 0; i < rt.fn_cap; i++) {
        free(rt.fns[i].poff);
        free(rt.fns[i].psize);
    }
    free(rt.bindings);
    for (unsigned i = 0; i < rt.nmodules; i++) {
        free(rt.modules[i].fns);
        free(rt.modules[i].fns_by_name);
    }
    free(rt.modules);
    free(rt.fns);
    pthread_mutex_t lock = rt.lock;
    memset(&rt, 0, sizeof rt);
    rt.lock = lock;
}

int tidal_init(unsigned flags)
{
    pthread_mutex_lock(&rt.lock);
    int st = init_locked(flags);
    if (st && rt.initialized) {
        char keep[sizeof last_error];
        memcpy(keep, last_error, sizeof keep);
        pthread_mutex_unlock(&rt.lock);
        tidal__remote_stop();
        pthread_mutex_lock(&rt.lock);
        teardown_locked();
        memcpy(last_error, keep, sizeof keep);
    }
    pthread_mutex_unlock(&rt.lock);
    return st;
}

int tidal__ensure_init(void)
{
    if (rt.initialized) return 0;
    pthread_mutex_lock(&rt.lock);
    int failed = rt.init_failed;
    pthread_mutex_unlock(&rt.lock);
    if (failed) return -1;
    int st = tidal_init(0);
    if (st == TIDAL_OK) return 0;
    pthread_mutex_lock(&rt.lock);
    if (!rt.init_failed) {
        rt.init_failed = 1;
        tidal__warn("error: %s (%s); kernels run unmasked", tidal_last_error(), tidal_strerror(st));
        const char *req = getenv("TIDAL_REQUIRE");
        if (req && *req && strcmp(req, "0") != 0) {
            tidal__warn("TIDAL_REQUIRE is set: aborting");
            abort();
        }
    }
    pthread_mutex_unlock(&rt.lock);
    return -1;
}

int tidal_shutdown(void)
{
    if (!rt.initialized) return tidal__fail(TIDAL_ERR_NOT_INIT, "tidal_shutdown before tidal_init");
    tidal__remote_stop();
    pthread_mutex_lock(&rt.lock);
    if (rt.ctl_stream) rt.cu->StreamSynchronize(rt.ctl_stream);
    teardown_locked();
    pthread_mutex_unlock(&rt.lock);
    return TIDAL_OK;
}

int tidal_device_sms(unsigned *out)
{
    if (!out) return tidal__fail(TIDAL_ERR_INVALID, "tidal_device_sms: NULL");
    if (!rt.initialized) return tidal__fail(TIDAL_ERR_NOT_INIT, "tidal_device_sms before tidal_init");
    *out = rt.nsm;
    return TIDAL_OK;
}

/* ------------------------------------------------------------------ partitions */

int tidal_partition_create(const char *name, const char *smset, tidal_part **out)
{
    if (!tidal_control_name_ok(name))
        return tidal__fail(TIDAL_ERR_PARSE, "partition name \"%s\": want 1-31 of [A-Za-z0-9_.-]",
                           name ? name : "(null)");
    if (!smset) return tidal__fail(TIDAL_ERR_INVALID, "tidal_partition_create: NULL SM set");
    pthread_mutex_lock(&rt.lock);
    NEED_INIT("tidal_partition_create");
    rt_call saved = rt_ctx_enter();
    tidal_smset s;
    int st = parse_set(smset, &s);
    if (!st) st = create_locked(name, &s, 0, out);
    rt_ctx_leave(saved);
    pthread_mutex_unlock(&rt.lock);
    return st;
}

int tidal_partition_find(const char *name, tidal_part **out)
{
    if (!name || !out) return tidal__fail(TIDAL_ERR_INVALID, "tidal_partition_find: NULL");
    pthread_mutex_lock(&rt.lock);
    NEED_INIT("tidal_partition_find");
    struct tidal_part *p = find_part(name);
    pthread_mutex_unlock(&rt.lock);
    if (!p) return tidal__fail(TIDAL_ERR_NOT_FOUND, "no partition \"%s\"", name);
    *out = p;
    return TIDAL_OK;
}

static int set_locked(struct tidal_part *p, const tidal_smset *s, int from_remote)
{
    if (p->remote && !from_remote)
        return tidal__fail(TIDAL_ERR_INVALID, "partition \"%s\" belongs to tidald: change it with tidalctl set",
                           p->name);
    if (memcmp(&p->mask, s, sizeof *s) == 0) return TIDAL_OK;
    tidal_smset added;
    for (int w = 0; w < TIDAL_SMSET_WORDS; w++) added.bits[w] = s->bits[w] & ~p->mask.bits[w];
    unsigned grew = tidal_smset_count(&added);
    p->mask = *s;
    int st = push_mask(p);
    /* SMs given to p: its running launches have no workers there (those placed there at
     * launch left); start joiners so that they flow in */
    if (!st && grew && rt.flow_in) rt_inflight_grow(p, grew);
    return st;
}

/* Both public setters: the new set as text (parsed) or as a bitmap (checked). */
static int set_public(tidal_part *p, const char *text, const tidal_smset *bits, const char *fn)
{
    if (!p || (!text && !bits)) return tidal__fail(TIDAL_ERR_INVALID, "%s: NULL", fn);
    pthread_mutex_lock(&rt.lock);
    if (!rt.initialized) {
        pthread_mutex_unlock(&rt.lock);
        return tidal__fail(TIDAL_ERR_NOT_INIT, "%s before tidal_init", fn);
    }
    rt_call saved = rt_ctx_enter();
    tidal_smset s;
    int st = text ? parse_set(text, &s) : clip_set(bits, 0, &s);
    if (!st) st = set_locked(p, &s, 0);
    rt_ctx_leave(saved);
    pthread_mutex_unlock(&rt.lock);
    return st;
}

int tidal_partition_set(tidal_part *p, const char *smset) { return set_public(p, smset, NULL, "tidal_partition_set"); }

int tidal_partition_set_mask(tidal_part *p, const tidal_smset *set)
{
    return set_public(p, NULL, set, "tidal_partition_set_mask");
}

int tidal_partition_get_mask(tidal_part *p, tidal_smset *out)
{
    if (!p || !out) return tidal__fail(TIDAL_ERR_INVALID, "tidal_partition_get_mask: NULL");
    pthread_mutex_lock(&rt.lock);
    *out = p->mask;
    pthread_mutex_unlock(&rt.lock);
    return TIDAL_OK;
}

const char *tidal_partition_name(const tidal_part *p) { return p ? p->name : NULL; }

int tidal_partition_destroy(tidal_part *p)
{
    if (!p) return tidal__fail(TIDAL_ERR_INVALID, "tidal_partition_destroy: NULL");
    pthread_mutex_lock(&rt.lock);
    NEED_INIT("tidal_partition_destroy");
    int st = TIDAL_OK;
    if (p->remote)
        st = tidal__fail(TIDAL_ERR_INVALID, "partition \"%s\" belongs to tidald: destroy it with tidalctl", p->name);
    else if (p->bound || rt.default_part == p)
        st = tidal__fail(TIDAL_ERR_BUSY, "partition \"%s\" is bound to %u stream(s)/module(s)%s", p->name, p->bound,
                         rt.default_part == p ? " and is the default partition" : "");
    if (!st) {
        struct tidal_part **pp = &rt.parts;
        while (*pp && *pp != p) pp = &(*pp)->next;
        if (*pp) *pp = p->next;
        for (unsigned i = 0; i < rt.nbindings; i++) /* slots of p die with it */
            if (rt.bindings[i].slot_part == p) rt.bindings[i].slot_part = NULL;
        /* kernels still using p: cuMemFree waits for the device to finish them */
        rt_call saved = rt_ctx_enter();
        rt.cu->StreamSynchronize(rt.ctl_stream);
        part_free(p);
        rt_ctx_leave(saved);
    }
    pthread_mutex_unlock(&rt.lock);
    return st;
}

/* ------------------------------------------------------------------ tidald partitions */

/* The watcher thread keeps the context current, and has touched the control stream,
 * before the first change: a thread's first driver calls cost ~100 us on the GPU
 * machine, which every tenant paid on its first tidald change (docs/performance.md).
 * Returns 1 once done (0: the runtime is not initialized yet). */
int tidal__adopt_context(void)
{
    pthread_mutex_lock(&rt.lock);
    int done = rt.initialized && rt.ctx;
    if (done && rt.cu->CtxSetCurrent(rt.ctx) == CUDA_SUCCESS) rt.cu->StreamSynchronize(rt.ctl_stream);
    pthread_mutex_unlock(&rt.lock);
    return done;
}

void tidal__remote_apply(const tidal_remote_part *parts, unsigned n, int spin)
{
    /* A thread that sleeps on the lock (a launch holds it briefly) pays a wake-up, tens of
     * us on the GPU machine; the spinning watcher does not sleep here either. */
    if (spin)
        while (pthread_mutex_trylock(&rt.lock) != 0) sched_yield();
    else
        pthread_mutex_lock(&rt.lock);
    if (!rt.initialized) {
        pthread_mutex_unlock(&rt.lock);
        return;
    }
    rt_call saved = rt_ctx_enter();
    for (unsigned i = 0; i < n; i++) {
        tidal_smset in, s;
        memcpy(in.bits, parts[i].mask, sizeof in.bits);
        clip_set(&in, 1, &s); /* tidald does not know this device's SM count: clip */
        char name[32];
        snprintf(name, sizeof name, "%s", parts[i].name);
        if (!tidal_control_name_ok(name)) continue;
        struct tidal_part *p = find_part(name);
        int st;
        if (!p) {
            st = create_locked(name, &s, 1, &p);
        } else if (!p->remote) {
            tidal__warn("tidald partition \"%s\" has the name of a local one: ignored", name);
            continue;
        } else {
            st = set_locked(p, &s, 1);
        }
        if (st)
            tidal__warn("tidald partition \"%s\": %s", name, tidal_last_error());
        else
            tidal__log("tidald partition \"%s\" mask applied", name);
    }
    rt_ctx_leave(saved);
    pthread_mutex_unlock(&rt.lock);
}

/* One growing array of libtidal's tables: room for at least n elements. */
int rt_grow(void **arr, unsigned *cap, unsigned n, size_t elem)
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

/* ------------------------------------------------------------------ modules */

static int by_name(const void *a, const void *b)
{
    return strcmp(((const rt_mod_fn *)a)->name, ((const rt_mod_fn *)b)->name);
}

static int by_handle(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const rt_mod_fn *)a)->fn, y = (uintptr_t)((const rt_mod_fn *)b)->fn;
    return (x > y) - (x < y);
}

/* The entry named by the first len bytes of name in t (sorted by name), or NULL. */
static rt_mod_fn *named(const rt_mod_fn *t, unsigned n, const char *name, size_t len)
{
    unsigned lo = 0, hi = n;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        int c = strncmp(t[mid].name, name, len);
        if (c == 0) c = t[mid].name[len] != '\0'; /* longer than the key: after it */
        if (c == 0) return (rt_mod_fn *)&t[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Whether m carries the rewrite, found without a failing driver call (compute-sanitizer
 * reports each): its function names (listed once per module) show clones
 * NAME__tidal_reshaped, and only then is the marker asked for. cuModuleGetGlobal of the
 * marker in every module failed in most of them: cuBLAS, cuDNN, PyTorch's own kernels.
 * A rewritten module keeps the list, each original paired with its clone, and has every
 * function loaded now: with lazy loading the first launch of a kernel waits for the
 * kernels already running in the process (../shared/docs/platform.md). */
static void module_scan(rt_module *r)
{
    unsigned n = 0, nclones = 0;
    if (rt.cu->ModuleGetFunctionCount(&n, r->mod) != CUDA_SUCCESS || n == 0) return;
    CUfunction *fs = calloc(n, sizeof *fs);
    rt_mod_fn *t = calloc(n, sizeof *t), *byname = calloc(n, sizeof *t);
    if (!fs || !t || !byname || rt.cu->ModuleEnumerateFunctions(fs, n, r->mod) != CUDA_SUCCESS) goto out;
    const size_t sl = strlen(TIDAL_RESHAPED_SUFFIX);
    for (unsigned i = 0; i < n; i++) {
        t[i].fn = fs[i];
        if (rt.cu->FuncGetName(&t[i].name, fs[i]) != CUDA_SUCCESS || !t[i].name) goto out;
        size_t len = strlen(t[i].name);
        t[i].is_clone = len > sl && strcmp(t[i].name + len - sl, TIDAL_RESHAPED_SUFFIX) == 0;
        nclones += (unsigned)t[i].is_clone;
    }
    if (!nclones) goto out;
    CUdeviceptr d;
    size_t bytes;
    if (rt.cu->ModuleGetGlobal(&d, &bytes, r->mod, TIDAL_MARKER_SYMBOL) != CUDA_SUCCESS) {
        tidal__warn("a module has %u tidal clones but no %s (rewritten for another ABI?): launched unchanged", nclones,
                    TIDAL_MARKER_SYMBOL);
        goto out;
    }
    r->has_ctl = bytes >= TIDAL_MARKER_BYTES_CASE_B; /* case b: the module has __tidal_ctl */
    qsort(t, n, sizeof *t, by_name);
    for (unsigned i = 0; i < n; i++) {
        if (!t[i].is_clone) continue;
        rt_mod_fn *o = named(t, n, t[i].name, strlen(t[i].name) - sl);
        if (o && !o->is_clone) o->clone = t[i].fn;
    }
    memcpy(byname, t, n * sizeof *t);
    qsort(t, n, sizeof *t, by_handle);
    for (unsigned i = 0; i < n; i++) rt.cu->FuncLoad(t[i].fn);
    r->rewritten = 1;
    r->fns = t;
    r->fns_by_name = byname;
    r->nfns = n;
    t = byname = NULL;
out:
    free(fs);
    free(t);
    free(byname);
}

rt_module *rt_module_get(CUmodule m)
{
    for (unsigned i = 0; i < rt.nmodules; i++)
        if (rt.modules[i].mod == m) return &rt.modules[i];
    if (rt_grow((void **)&rt.modules, &rt.cap_modules, rt.nmodules + 1, sizeof *rt.modules) != 0) return NULL;
    rt_module *r = &rt.modules[rt.nmodules++];
    memset(r, 0, sizeof *r);
    r->mod = m;
    module_scan(r);
    return r;
}

const rt_mod_fn *rt_module_fn(const rt_module *m, CUfunction f)
{
    unsigned lo = 0, hi = m->nfns;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (m->fns[mid].fn == f) return &m->fns[mid];
        if ((uintptr_t)m->fns[mid].fn < (uintptr_t)f)
            lo = mid + 1;
        else
            hi = mid;
    }
    const char *name = NULL;
    if (!m->nfns || rt.cu->FuncGetName(&name, f) != CUDA_SUCCESS || !name) return NULL;
    return named(m->fns_by_name, m->nfns, name, strlen(name));
}

int rt_module_set_ctl(rt_module *m, struct tidal_part *p)
{
    if (m->ctl == p) return TIDAL_OK;
    if (!m->has_ctl) {
        /* no device word to write (no case b): the attachment is libtidal's alone, and
         * may move (launches from unbound streams follow it as clones) */
        if (m->ctl) m->ctl->bound--;
        m->ctl = p;
        p->bound++;
        return TIDAL_OK;
    }
    if (m->ctl)
        return tidal__fail(TIDAL_ERR_BUSY, "module's __tidal_ctl already names partition \"%s\" (written once)",
                           m->ctl->name);
    CUdeviceptr ctl;
    size_t bytes = 0;
    CU_TRY(rt.cu->ModuleGetGlobal(&ctl, &bytes, m->mod, TIDAL_CTL_SYMBOL), "cuModuleGetGlobal(__tidal_ctl)");
    if (bytes != 8) return tidal__fail(TIDAL_ERR_NOT_REWRITTEN, "__tidal_ctl has %zu bytes, want 8", bytes);
    uint64_t v = (uint64_t)p->dev;
    memcpy(rt.pinned, &v, 8);
    CU_TRY(rt.cu->MemcpyHtoDAsync(ctl, rt.pinned, 8, rt.ctl_stream), "cuMemcpyHtoDAsync(__tidal_ctl)");
    CU_TRY(rt.cu->StreamSynchronize(rt.ctl_stream), "cuStreamSynchronize(control stream)");
    m->ctl = p;
    p->bound++;
    return TIDAL_OK;
}

int tidal_module_attach(void *module, tidal_part *p)
{
    if (!module) return tidal__fail(TIDAL_ERR_INVALID, "tidal_module_attach: NULL module");
    pthread_mutex_lock(&rt.lock);
    NEED_INIT("tidal_module_attach");
    int st = TIDAL_OK;
    rt_call saved = rt_ctx_enter();
    rt_module *m = rt_module_get((CUmodule)module);
    if (!m)
        st = tidal__fail(TIDAL_ERR_NO_MEMORY, "module table");
    else if (!m->rewritten)
        st = tidal__fail(TIDAL_ERR_NOT_REWRITTEN, "module has no kernel rewritten by tidal (no NAME%s with %s)",
                         TIDAL_RESHAPED_SUFFIX, TIDAL_MARKER_SYMBOL);
    else {
        struct tidal_part *target = p ? p : rt.default_part;
        if (target) st = rt_module_set_ctl(m, target);
    }
    rt_ctx_leave(saved);
    pthread_mutex_unlock(&rt.lock);
    return st;
}

/* ------------------------------------------------------------------ statistics */

static int read_part_stats(struct tidal_part *p, tidal_stats *out)
{
    CU_TRY(rt.cu->MemcpyDtoHAsync(rt.pinned, p->dev + TIDAL_PARTITION_OFF_VIOLATIONS, 8, rt.ctl_stream),
           "cuMemcpyDtoHAsync(violations)");
    if (p->sm_blocks)
        CU_TRY(rt.cu->MemcpyDtoHAsync(rt.pinned + 64, p->sm_blocks, TIDAL_MAX_SMS * 8, rt.ctl_stream),
               "cuMemcpyDtoHAsync(sm_blocks)");
    CU_TRY(rt.cu->StreamSynchronize(rt.ctl_stream), "cuStreamSynchronize(control stream)");
    memcpy(&out->violations, rt.pinned, 8);
    if (p->sm_blocks) memcpy(out->sm_blocks, rt.pinned + 64, TIDAL_MAX_SMS * 8);
    return TIDAL_OK;
}

int tidal_stats_get(tidal_part *p, tidal_stats *out)
{
    if (!out) return tidal__fail(TIDAL_ERR_INVALID, "tidal_stats_get: NULL");
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&rt.lock);
    NEED_INIT("tidal_stats_get");
    out->launches_rewritten = atomic_load(&rt.n_rewritten);
    out->launches_original = atomic_load(&rt.n_original);
    out->launches_unknown = atomic_load(&rt.n_unknown);
    out->launches_refused = atomic_load(&rt.n_refused);
    out->launches_unmasked = atomic_load(&rt.n_unmasked);
    out->joins = atomic_load(&rt.n_joins);
    out->launches_graph_probe = atomic_load(&rt.n_graph_probe);
    out->launches_smem_full = atomic_load(&rt.n_smem_full);
    rt_call saved = rt_ctx_enter();
    int st = p ? read_part_stats(p, out) : TIDAL_OK;
    rt_ctx_leave(saved);
    pthread_mutex_unlock(&rt.lock);
    return st;
}

int tidal_stats_reset(tidal_part *p)
{
    pthread_mutex_lock(&rt.lock);
    NEED_INIT("tidal_stats_reset");
    atomic_store(&rt.n_rewritten, 0);
    atomic_store(&rt.n_original, 0);
    atomic_store(&rt.n_unknown, 0);
    atomic_store(&rt.n_refused, 0);
    atomic_store(&rt.n_unmasked, 0);
    atomic_store(&rt.n_joins, 0);
    atomic_store(&rt.n_graph_probe, 0);
    atomic_store(&rt.n_smem_full, 0);
    int st = TIDAL_OK;
    rt_call saved = rt_ctx_enter();
    if (p) {
        CUresult r = rt.cu->MemsetD8Async(p->dev + TIDAL_PARTITION_OFF_VIOLATIONS, 0, 8, rt.ctl_stream);
        if (r == CUDA_SUCCESS && p->sm_blocks)
            r = rt.cu->MemsetD8Async(p->sm_blocks, 0, TIDAL_MAX_SMS * 8, rt.ctl_stream);
        if (r == CUDA_SUCCESS) r = rt.cu->StreamSynchronize(rt.ctl_stream);
        if (r != CUDA_SUCCESS) st = tidal__cuda_fail(r, "resetting partition counters");
    }
    rt_ctx_leave(saved);
    pthread_mutex_unlock(&rt.lock);
    return st;
}

void tidal__foreach_stats(tidal_stats_fn fn, void *arg)
{
    pthread_mutex_lock(&rt.lock);
    if (rt.initialized) {
        rt_call saved = rt_ctx_enter();
        for (struct tidal_part *p = rt.parts; p; p = p->next) {
            tidal_stats s;
            memset(&s, 0, sizeof s);
            if (read_part_stats(p, &s) == TIDAL_OK) fn(arg, p->name, s.violations, s.sm_blocks);
        }
        rt_ctx_leave(saved);
    }
    pthread_mutex_unlock(&rt.lock);
}
