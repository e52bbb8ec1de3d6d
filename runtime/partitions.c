/* partitions.c — libtidal's partitions: the table of named SM sets, each with its device
 * control block (abi/tidal_abi.h), its mask written there on the control stream, its
 * stream slots and per-SM counters; the default partition; the partition API of tidal.h.
 * A mask that grows starts joiners for the partition's running launches (flowin.c).
 * tidald's partitions come through remote.c, with the same calls. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_proto.h" /* the partition name rule, shared with tidald */
#include "device.h"
#include "partitions.h"

/* The device's copy of a mask (tidal_partition.mask, read by kernels) is a tidal_smset's
 * words, copied as they are. */
_Static_assert(sizeof(((tidal_partition *)0)->mask) == sizeof(tidal_smset), "the device mask is a tidal_smset");

struct tidal_part *tidal__default_part;

static struct {
    struct tidal_part *list;
    char default_name[32]; /* TIDAL_PARTITION naming a tidald partition not seen yet */
    int histogram;         /* TIDAL_HISTOGRAM: per-SM block counters */
    int place_mode;        /* TIDAL_PLACEMENT (hybrid, persistent, original) */
    unsigned short_us;     /* TIDAL_SHORT_US (default 20) */
    void (*forget)(struct tidal_part *p);
} P;

void tidal__parts_init(int place_mode, unsigned short_us, int histogram)
{
    P.place_mode = place_mode;
    P.short_us = short_us;
    P.histogram = histogram;
}

void tidal__parts_on_destroy(void (*forget)(struct tidal_part *p)) { P.forget = forget; }

/* ------------------------------------------------------------------ SM sets */

int tidal__smset_clip(const tidal_smset *in, int is_all, tidal_smset *out)
{
    memset(out, 0, sizeof *out);
    for (unsigned b = 0; b < TIDAL_SMSET_WORDS * 64; b++) {
        if (!((in->bits[b >> 6] >> (b & 63)) & 1)) continue;
        if (b >= tidal__nsm()) {
            if (is_all) break;
            return tidal__fail(TIDAL_ERR_SMS, "SM %u: this device has SMs 0-%u", b, tidal__nsm() - 1);
        }
        out->bits[b >> 6] |= 1ull << (b & 63);
    }
    return TIDAL_OK;
}

int tidal__smset_read(const char *text, tidal_smset *out)
{
    tidal_smset s;
    int all = 0;
    size_t pos = 0;
    int st = tidal_smset_parse(text, &s, &all, &pos);
    if (st == TIDAL_ERR_PARSE)
        return tidal__fail(st, "SM set \"%s\": unexpected character at offset %zu (want e.g. 0-47,64,100-131)", text,
                           pos);
    if (st) return tidal__fail(st, "SM set: invalid argument");
    return tidal__smset_clip(&s, all, out);
}

/* ------------------------------------------------------------------ device writes */

/* Write the mask words of p on the control stream and wait for them (a few µs; running
 * kernels see the new mask at their next claim). */
static int push_mask(struct tidal_part *p)
{
    return tidal__ctl_write(p->dev + TIDAL_PARTITION_OFF_MASK, p->mask.bits, sizeof p->mask.bits,
                            "cuMemcpyHtoDAsync(mask)");
}

static int part_alloc(struct tidal_part *p)
{
    const tidal_cu *cu = tidal__cu();
    const size_t bytes = TIDAL_PARTITION_BYTES(TIDAL_NSLOTS);
    CU_TRY(cu->MemAlloc(&p->dev, bytes), "cuMemAlloc(partition)");
    if (P.histogram) {
        CUresult r = cu->MemAlloc(&p->sm_blocks, TIDAL_MAX_SMS * sizeof(uint64_t));
        if (r != CUDA_SUCCESS) {
            cu->MemFree(p->dev);
            p->dev = 0;
            return tidal__cuda_fail(r, "cuMemAlloc(sm_blocks)");
        }
        CU_TRY(cu->MemsetD8Async(p->sm_blocks, 0, TIDAL_MAX_SMS * sizeof(uint64_t), tidal__ctl_stream()),
               "cuMemsetD8Async(sm_blocks)");
    }
    CU_TRY(cu->MemsetD8Async(p->dev, 0, bytes, tidal__ctl_stream()), "cuMemsetD8Async(partition)");
    tidal_partition h;
    memset(&h, 0, sizeof h);
    memcpy(h.mask, p->mask.bits, sizeof h.mask);
    h.sm_blocks = (uint64_t)p->sm_blocks;
    h.slot_mask = TIDAL_PROBE_SLOTS - 1;
    h.probe_base = TIDAL_STREAM_SLOTS;
    return tidal__ctl_write(p->dev, &h, sizeof h, "cuMemcpyHtoDAsync(partition)");
}

static void part_free(struct tidal_part *p)
{
    tidal__flow_free(&p->flow);
    if (p->dev) tidal__cu()->MemFree(p->dev);
    if (p->sm_blocks) tidal__cu()->MemFree(p->sm_blocks);
    free(p);
}

/* Take one of p's stream slots for good (its tag becomes TIDAL_SLOT_RESERVED so
 * probe-mode launches pass over it). */
int tidal__part_reserve_slot(struct tidal_part *p)
{
    if (p->stream_slots == TIDAL_STREAM_SLOTS) return -1;
    const tidal_cu *cu = tidal__cu();
    unsigned slot = p->stream_slots;
    uint64_t tag = TIDAL_SLOT_RESERVED;
    memcpy(tidal__staging(), &tag, sizeof tag);
    CUdeviceptr at = p->dev + TIDAL_PARTITION_HEADER + (CUdeviceptr)slot * TIDAL_SLOT_BYTES + TIDAL_SLOT_OFF_TAG;
    CUstreamCaptureMode mode = tidal__capture_relax();
    int ok = cu->MemcpyHtoDAsync(at, tidal__staging(), sizeof tag, tidal__ctl_stream()) == CUDA_SUCCESS &&
             cu->StreamSynchronize(tidal__ctl_stream()) == CUDA_SUCCESS;
    tidal__capture_restore(mode);
    if (!ok) return -1;
    p->stream_slots++;
    return (int)slot;
}

/* ------------------------------------------------------------------ the table */

struct tidal_part *tidal__part_find(const char *name)
{
    for (struct tidal_part *p = P.list; p; p = p->next)
        if (strcmp(p->name, name) == 0) return p;
    return NULL;
}

int tidal__part_create(const char *name, const tidal_smset *mask, int remote, struct tidal_part **out)
{
    if (tidal__part_find(name)) return tidal__fail(TIDAL_ERR_EXISTS, "partition \"%s\" exists", name);
    struct tidal_part *p = calloc(1, sizeof *p);
    if (!p) return tidal__fail(TIDAL_ERR_NO_MEMORY, "partition \"%s\"", name);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->mask = *mask;
    p->remote = remote;
    p->place_mode = P.place_mode;
    p->short_us = P.short_us;
    int st = part_alloc(p);
    if (st) {
        part_free(p);
        return st;
    }
    p->next = P.list;
    P.list = p;
    if (!tidal__default_part && P.default_name[0] && strcmp(P.default_name, name) == 0) {
        tidal__default_part = p;
        tidal__log("default partition \"%s\" is now known", name);
    }
    if (out) *out = p;
    tidal__log("partition \"%s\" created%s", name, remote ? " (tidald)" : "");
    return TIDAL_OK;
}

int tidal__part_set(struct tidal_part *p, const tidal_smset *s, int from_remote)
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
     * launch left); start joiners so that they flow in (none are recorded with
     * TIDAL_FLOW_IN=0) */
    if (!st && grew) tidal__flow_join(&p->flow, grew);
    return st;
}

int tidal__parts_from_env(void)
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
        int st = tidal__smset_read(colon + 1, &s);
        if (st) {
            char why[256];
            snprintf(why, sizeof why, "%s", tidal_last_error());
            return tidal__fail(st, "TIDAL_PARTITION=%s: %s", e, why);
        }
        struct tidal_part *p = tidal__part_find(name);
        if (p) return tidal__fail(TIDAL_ERR_EXISTS, "TIDAL_PARTITION=%s: partition exists", e);
        st = tidal__part_create(name, &s, 0, &p);
        if (st) return st;
        tidal__default_part = p;
        return TIDAL_OK;
    }
    memcpy(P.default_name, name, strlen(name) + 1); /* valid_name: <= 31 characters */
    tidal__default_part = tidal__part_find(name);
    return TIDAL_OK;
}

const char *tidal__part_default_missing(void)
{
    return P.default_name[0] && !tidal__default_part ? P.default_name : NULL;
}

void tidal__parts_teardown(void)
{
    struct tidal_part *p = P.list;
    while (p) {
        struct tidal_part *n = p->next;
        part_free(p);
        p = n;
    }
    memset(&P, 0, sizeof P);
    tidal__default_part = NULL;
}

/* ------------------------------------------------------------------ counters */

int tidal__part_read_stats(struct tidal_part *p, tidal_stats *out)
{
    const tidal_cu *cu = tidal__cu();
    unsigned char *pinned = tidal__staging();
    CU_TRY(cu->MemcpyDtoHAsync(pinned, p->dev + TIDAL_PARTITION_OFF_VIOLATIONS, 8, tidal__ctl_stream()),
           "cuMemcpyDtoHAsync(violations)");
    if (p->sm_blocks)
        CU_TRY(cu->MemcpyDtoHAsync(pinned + 64, p->sm_blocks, TIDAL_MAX_SMS * 8, tidal__ctl_stream()),
               "cuMemcpyDtoHAsync(sm_blocks)");
    CU_TRY(cu->StreamSynchronize(tidal__ctl_stream()), "cuStreamSynchronize(control stream)");
    memcpy(&out->violations, pinned, 8);
    if (p->sm_blocks) memcpy(out->sm_blocks, pinned + 64, TIDAL_MAX_SMS * 8);
    return TIDAL_OK;
}

int tidal__part_reset_stats(struct tidal_part *p)
{
    const tidal_cu *cu = tidal__cu();
    CUresult r = cu->MemsetD8Async(p->dev + TIDAL_PARTITION_OFF_VIOLATIONS, 0, 8, tidal__ctl_stream());
    if (r == CUDA_SUCCESS && p->sm_blocks)
        r = cu->MemsetD8Async(p->sm_blocks, 0, TIDAL_MAX_SMS * 8, tidal__ctl_stream());
    if (r == CUDA_SUCCESS) r = cu->StreamSynchronize(tidal__ctl_stream());
    return r == CUDA_SUCCESS ? TIDAL_OK : tidal__cuda_fail(r, "resetting partition counters");
}

void tidal__parts_foreach_stats(tidal_stats_fn fn, void *arg)
{
    tidal__lock();
    if (tidal__ready()) {
        tidal__call saved = tidal__ctx_enter();
        for (struct tidal_part *p = P.list; p; p = p->next) {
            tidal_stats s;
            memset(&s, 0, sizeof s);
            if (tidal__part_read_stats(p, &s) == TIDAL_OK) fn(arg, p->name, s.violations, s.sm_blocks);
        }
        tidal__ctx_leave(saved);
    }
    tidal__unlock();
}

/* ------------------------------------------------------------------ API */

int tidal_partition_create(const char *name, const char *smset, tidal_part **out)
{
    if (!tidal_control_name_ok(name))
        return tidal__fail(TIDAL_ERR_PARSE, "partition name \"%s\": want 1-31 of [A-Za-z0-9_.-]",
                           name ? name : "(null)");
    if (!smset) return tidal__fail(TIDAL_ERR_INVALID, "tidal_partition_create: NULL SM set");
    tidal__lock();
    NEED_INIT("tidal_partition_create");
    tidal__call saved = tidal__ctx_enter();
    tidal_smset s;
    int st = tidal__smset_read(smset, &s);
    if (!st) st = tidal__part_create(name, &s, 0, out);
    tidal__ctx_leave(saved);
    tidal__unlock();
    return st;
}

int tidal_partition_find(const char *name, tidal_part **out)
{
    if (!name || !out) return tidal__fail(TIDAL_ERR_INVALID, "tidal_partition_find: NULL");
    tidal__lock();
    NEED_INIT("tidal_partition_find");
    struct tidal_part *p = tidal__part_find(name);
    tidal__unlock();
    if (!p) return tidal__fail(TIDAL_ERR_NOT_FOUND, "no partition \"%s\"", name);
    *out = p;
    return TIDAL_OK;
}

/* Both public setters: the new set as text (parsed) or as a bitmap (checked). */
static int set_public(tidal_part *p, const char *text, const tidal_smset *bits, const char *fn)
{
    if (!p || (!text && !bits)) return tidal__fail(TIDAL_ERR_INVALID, "%s: NULL", fn);
    tidal__lock();
    if (!tidal__ready()) {
        tidal__unlock();
        return tidal__fail(TIDAL_ERR_NOT_INIT, "%s before tidal_init", fn);
    }
    tidal__call saved = tidal__ctx_enter();
    tidal_smset s;
    int st = text ? tidal__smset_read(text, &s) : tidal__smset_clip(bits, 0, &s);
    if (!st) st = tidal__part_set(p, &s, 0);
    tidal__ctx_leave(saved);
    tidal__unlock();
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
    tidal__lock();
    *out = p->mask;
    tidal__unlock();
    return TIDAL_OK;
}

const char *tidal_partition_name(const tidal_part *p) { return p ? p->name : NULL; }

int tidal_partition_destroy(tidal_part *p)
{
    if (!p) return tidal__fail(TIDAL_ERR_INVALID, "tidal_partition_destroy: NULL");
    tidal__lock();
    NEED_INIT("tidal_partition_destroy");
    int st = TIDAL_OK;
    if (p->remote)
        st = tidal__fail(TIDAL_ERR_INVALID, "partition \"%s\" belongs to tidald: destroy it with tidalctl", p->name);
    else if (p->bound || tidal__default_part == p)
        st = tidal__fail(TIDAL_ERR_BUSY, "partition \"%s\" is bound to %u stream(s)/module(s)%s", p->name, p->bound,
                         tidal__default_part == p ? " and is the default partition" : "");
    if (!st) {
        struct tidal_part **pp = &P.list;
        while (*pp && *pp != p) pp = &(*pp)->next;
        if (*pp) *pp = p->next;
        if (P.forget) P.forget(p); /* slots of p die with it */
        /* kernels still using p: cuMemFree waits for the device to finish them */
        tidal__call saved = tidal__ctx_enter();
        tidal__cu()->StreamSynchronize(tidal__ctl_stream());
        part_free(p);
        tidal__ctx_leave(saved);
    }
    tidal__unlock();
    return st;
}

int tidal_partition_set_placement(tidal_part *p, int mode, unsigned short_us)
{
    if (!p) return tidal__fail(TIDAL_ERR_INVALID, "tidal_partition_set_placement: NULL");
    if (mode < TIDAL_PLACE_HYBRID || mode > TIDAL_PLACE_ORIGINAL)
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_partition_set_placement: mode %d (want TIDAL_PLACE_*)", mode);
    tidal__lock();
    p->place_mode = mode;
    if (short_us) p->short_us = short_us;
    tidal__unlock();
    return TIDAL_OK;
}

int tidal_set_default_partition(tidal_part *p)
{
    tidal__lock();
    NEED_INIT("tidal_set_default_partition");
    tidal__default_part = p;
    P.default_name[0] = '\0';
    tidal__unlock();
    return TIDAL_OK;
}
