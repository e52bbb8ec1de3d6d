/* partitions.h — libtidal's partitions (partitions.c): named SM sets, each with a device
 * control block (abi/tidal_abi.h: tidal_partition, its slots, its per-SM counters) whose
 * mask running kernels read. The control plane's bottom: the API, tidald's partitions
 * (remote.c), streams, modules and the launch path all reach a partition through here.
 * Only partitions.c writes a partition's fields; the others read them, and count their
 * references with tidal__part_hold / tidal__part_release. */
#ifndef TIDAL_PARTITIONS_H
#define TIDAL_PARTITIONS_H

#include "flowin.h"
#include "runtime_internal.h"
#include "tidal_abi.h"

/* Slots per partition: the first TIDAL_STREAM_SLOTS are given to streams (epoch mode,
 * one per stream that launches clones into the partition: stream order frees it), the
 * other TIDAL_PROBE_SLOTS are searched by probe-mode launches (case b, graph-captured
 * clones; the GPU runs at most 128 kernels at once). */
#define TIDAL_STREAM_SLOTS 128
#define TIDAL_PROBE_SLOTS 128
#define TIDAL_NSLOTS (TIDAL_STREAM_SLOTS + TIDAL_PROBE_SLOTS)

struct tidal_part {
    char name[32];
    tidal_smset mask;      /* as applied: clipped to the device's SMs */
    CUdeviceptr dev;       /* tidal_partition header + TIDAL_NSLOTS slots */
    CUdeviceptr sm_blocks; /* uint64_t[TIDAL_MAX_SMS], 0 when TIDAL_HISTOGRAM=0 */
    int remote;            /* owned by tidald: changed only through it */
    unsigned bound;        /* streams bound + modules whose __tidal_ctl points here */
    tidal__flow flow;      /* its clone launches that may still run (flowin.c) */
    unsigned stream_slots; /* stream slots handed out (never taken back: a stream's end is
                              not seen) */
    int place_mode;        /* TIDAL_PLACE_* */
    unsigned short_us;     /* hybrid: originals below this measured duration */
    struct tidal_part *next;
};

/* The default partition (NULL: none): where launches from streams bound to none go.
 * partitions.c writes it; the launch path reads it under the lock. */
extern struct tidal_part *tidal__default_part;
static inline struct tidal_part *tidal__part_default(void) { return tidal__default_part; }

/* A stream binding or a module's attachment: a partition so referenced is busy
 * (tidal_partition_destroy refuses it). */
static inline void tidal__part_hold(struct tidal_part *p) { p->bound++; }
static inline void tidal__part_release(struct tidal_part *p) { p->bound--; }

/* The device address of the claim words of p's slot (zeroed to restart its epochs). */
static inline CUdeviceptr tidal__part_slot_claim(const struct tidal_part *p, unsigned slot)
{
    return p->dev + TIDAL_PARTITION_HEADER + (CUdeviceptr)slot * TIDAL_SLOT_BYTES + TIDAL_SLOT_OFF_CLAIM;
}

/* The rest is called with the lock held. */

/* At init: what every partition starts with (TIDAL_PLACEMENT, TIDAL_SHORT_US), and
 * whether partitions count blocks per SM (TIDAL_HISTOGRAM). */
void tidal__parts_init(int place_mode, unsigned short_us, int histogram);
/* TIDAL_PARTITION=NAME (a tidald or later-created partition) or NAME:SMSET (created here):
 * the default partition. missing: the name it gave when no such partition exists yet. */
int tidal__parts_from_env(void);
const char *tidal__part_default_missing(void);
/* A stream slot's holder (streams.c) forgets a destroyed partition through this hook,
 * registered at init: partitions.c calls no module above it. */
void tidal__parts_on_destroy(void (*forget)(struct tidal_part *p));
void tidal__parts_teardown(void);

/* An SM set of this device: SM ids beyond it are an error unless the set said "all"
 * (clip: tidald's sets are 256 SMs wide); parse: SM-set text, errors said for the user. */
int tidal__smset_clip(const tidal_smset *in, int is_all, tidal_smset *out);
int tidal__smset_read(const char *text, tidal_smset *out);

struct tidal_part *tidal__part_find(const char *name);
int tidal__part_create(const char *name, const tidal_smset *mask, int remote, struct tidal_part **out);
/* A new mask for p, written to the device (TIDAL_ERR_INVALID for tidald's partitions
 * unless from_remote); its running launches flow into the SMs it gained. */
int tidal__part_set(struct tidal_part *p, const tidal_smset *s, int from_remote);
/* One of p's stream slots for good: its number, or -1 when none is left. */
int tidal__part_reserve_slot(struct tidal_part *p);

/* A partition's device counters: read into out->violations and out->sm_blocks, reset. */
int tidal__part_read_stats(struct tidal_part *p, tidal_stats *out);
int tidal__part_reset_stats(struct tidal_part *p);
/* For a tidald stats request: fn for every partition of this process (takes the lock). */
typedef void (*tidal_stats_fn)(void *arg, const char *name, uint64_t violations, const uint64_t sm_blocks[256]);
void tidal__parts_foreach_stats(tidal_stats_fn fn, void *arg);

#endif
