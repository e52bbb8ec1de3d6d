/* tidal_shm.h — the shared-memory segment through which tidald publishes its partitions.
 *
 * tidald creates (or, after a restart, re-opens) a POSIX shared-memory object
 *   name: $TIDAL_SHM, else "/tidal-<uid of tidald>"   (tidal_control_shm_name())
 *   mode 0660, group = tidald --group (else tidald's primary group)
 * and is its only writer. Tenants (processes using libtidal) map it read-only; they learn
 * the name from tidald's answer to `tenant` (so a tenant of another uid finds a system
 * daemon's segment), see docs/runtime.md ("The control plane").
 *
 * Layout (little-endian x86-64, all offsets fixed; TIDAL_SHM_VERSION changes with any
 * incompatible change):
 *
 *   offset 0     tidal_shm_header  (64 bytes)
 *   offset 64    tidal_shm_part[TIDAL_SHM_MAX_PARTS]  (96 bytes each)
 *
 * Consistency: a seqlock. The writer makes `seq` odd, changes the table, bumps `generation`
 * and makes `seq` even again; a reader copies what it needs between two reads of `seq` and
 * retries when they differ or are odd (tidal_shm_read_begin / tidal_shm_read_retry).
 * Readers never block the writer. A writer that died mid-update leaves `seq` odd: readers
 * give up after a bounded number of tries, and the next tidald repairs it on start.
 *
 * Masks are 256-bit SM sets, libtidal's tidal_smset (bit s of mask.bits[s / 64] = SM s), the
 * one SM-set type of tidald, tidalctl and libtidal: embedded, so the layout is fixed by
 * the asserts below. tidald does not know any device's SM count: "all" is stored as 0-255
 * with TIDAL_SHM_PART_ALL set, and every tenant clips masks to its own device.
 */
#ifndef TIDAL_SHM_H
#define TIDAL_SHM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tidal.h" /* tidal_smset */

#define TIDAL_SHM_MAGIC 0x314d48534c444954ull /* "TIDLSHM1" */
#define TIDAL_SHM_VERSION 1u
#define TIDAL_SHM_MAX_PARTS 64u
#define TIDAL_SHM_NAME_MAX 32u /* name[] size: 1..31 characters + NUL */

/* tidal_shm_part.flags */
#define TIDAL_SHM_PART_USED 1u /* slot holds a partition */
#define TIDAL_SHM_PART_ALL 2u  /* created/set as "all": every SM of each tenant's device */

typedef struct tidal_shm_header {
    uint64_t magic;              /* TIDAL_SHM_MAGIC, written last at creation */
    uint32_t version;            /* TIDAL_SHM_VERSION */
    uint32_t header_size;        /* sizeof(tidal_shm_header) */
    uint32_t part_size;          /* sizeof(tidal_shm_part) */
    uint32_t max_parts;          /* TIDAL_SHM_MAX_PARTS */
    _Atomic uint32_t seq;        /* seqlock: odd while tidald writes */
    _Atomic uint32_t generation; /* bumped on every change (and on every tidald start) */
    _Atomic int32_t daemon_pid;  /* pid of the tidald that last opened it (0: exited) */
    uint32_t nparts;             /* slots in use (informational) */
    uint64_t created_ns;         /* CLOCK_REALTIME when the segment was created */
    uint64_t instance;           /* random id of this segment (a --reset one differs) */
    uint32_t reserved[2];
} tidal_shm_header;

typedef struct tidal_shm_part {
    char name[TIDAL_SHM_NAME_MAX]; /* NUL-terminated; unused slots are all zero */
    tidal_smset mask;              /* 256-bit SM set */
    uint32_t generation;           /* header generation at this partition's last change */
    uint32_t flags;                /* TIDAL_SHM_PART_* */
    uint64_t created_ns;           /* CLOCK_REALTIME at `create` */
    uint32_t reserved[4];
} tidal_shm_part;

typedef struct tidal_shm {
    tidal_shm_header h;
    tidal_shm_part part[TIDAL_SHM_MAX_PARTS];
} tidal_shm;

_Static_assert(sizeof(tidal_shm_header) == 64, "tidal_shm_header is 64 bytes");
_Static_assert(sizeof(tidal_shm_part) == 96, "tidal_shm_part is 96 bytes");
_Static_assert(sizeof(tidal_smset) == 32 && offsetof(tidal_shm_part, mask) == 32, "a 256-bit mask at offset 32");
_Static_assert(offsetof(tidal_shm, part) == 64, "partition table at offset 64");
#define TIDAL_SHM_SIZE sizeof(tidal_shm)

/* ---- seqlock (C11 fences; the writer is single: tidald's one thread) ---------------- */

static inline void tidal_shm_write_begin(tidal_shm *s)
{
    uint32_t q = atomic_load_explicit(&s->h.seq, memory_order_relaxed);
    atomic_store_explicit(&s->h.seq, q | 1u, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); /* seq odd before any data store */
}

/* Ends an update: bumps the generation, makes seq even. Returns the new generation. */
static inline uint32_t tidal_shm_write_end(tidal_shm *s)
{
    uint32_t g = atomic_load_explicit(&s->h.generation, memory_order_relaxed) + 1u;
    atomic_store_explicit(&s->h.generation, g, memory_order_relaxed);
    uint32_t q = atomic_load_explicit(&s->h.seq, memory_order_relaxed);
    atomic_store_explicit(&s->h.seq, (q | 1u) + 1u, memory_order_release);
    return g;
}

/* The generation an update in progress will publish (for per-partition generation). */
static inline uint32_t tidal_shm_next_generation(const tidal_shm *s)
{
    return atomic_load_explicit(&((tidal_shm *)s)->h.generation, memory_order_relaxed) + 1u;
}

static inline uint32_t tidal_shm_read_begin(const tidal_shm *s)
{
    return atomic_load_explicit(&((tidal_shm *)s)->h.seq, memory_order_acquire);
}

/* Nonzero when the copy made since tidal_shm_read_begin returned `seq` must be retried. */
static inline int tidal_shm_read_retry(const tidal_shm *s, uint32_t seq)
{
    atomic_thread_fence(memory_order_acquire); /* data loads before the second seq load */
    return (seq & 1u) || atomic_load_explicit(&((tidal_shm *)s)->h.seq, memory_order_relaxed) != seq;
}

static inline uint32_t tidal_shm_generation(const tidal_shm *s)
{
    return atomic_load_explicit(&((tidal_shm *)s)->h.generation, memory_order_acquire);
}

/* Checks a mapping of `size` bytes: 0 when it is a usable segment of this layout. */
static inline int tidal_shm_check(const tidal_shm *s, size_t size)
{
    if (size < TIDAL_SHM_SIZE) return -1;
    if (s->h.magic != TIDAL_SHM_MAGIC || s->h.version != TIDAL_SHM_VERSION) return -1;
    if (s->h.header_size != sizeof(tidal_shm_header) || s->h.part_size != sizeof(tidal_shm_part) ||
        s->h.max_parts != TIDAL_SHM_MAX_PARTS)
        return -1;
    return 0;
}

#endif
