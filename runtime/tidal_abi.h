/* tidal_abi.h — the contract between kernels rewritten by `tidal-opt -p tidal`
 * and whoever drives them (libtidal, tests, benchmarks). Plain C, no CUDA types,
 * usable from host code and from CUDA C++.
 *
 * How a rewritten kernel finds its state:
 *  - every rewritten module defines   .weak .const .align 8 .u64 __tidal_ctl = 0;
 *    (written once after load, before launches; changing it while kernels of
 *    the module run is undefined)
 *    (constant bank: every block reads it first, so it must be a cache hit). The
 *    runtime writes a device pointer to a tidal_partition there once, after
 *    loading the module (cuModuleGetGlobal + one copy). 0 means "no runtime":
 *    the kernel runs exactly like the original (launch case a).
 *  - the entry keeps its name and parameters (launch cases a and b: launched with
 *    the original grid). A clone named NAME + TIDAL_RESHAPED_SUFFIX takes one more
 *    by-value parameter, a tidal_launch, and is launched by the runtime with a
 *    reshaped grid of persistent workers (case c).
 *  - per-launch claim state lives in the partition's slot table, keyed by the
 *    runtime's launch key (tidal_launch.key; the launch's %gridid when that is 0 and in
 *    cases a/b), and is reset on the device by the launch's last block, so
 *    no host copy or memset happens per launch.
 */
#ifndef TIDAL_ABI_H
#define TIDAL_ABI_H

#include <stdint.h>

#define TIDAL_ABI_VERSION 2
#define TIDAL_CTL_SYMBOL "__tidal_ctl"
#define TIDAL_RESHAPED_SUFFIX "__tidal_reshaped"
#define TIDAL_MAX_SMS 256
#define TIDAL_MARKER_SYMBOL "__tidal_rewritten_v2" /* .global defined in rewritten modules */

/* Per-launch claim state. Zero when free; the launch's last block zeroes it.
 * Departures are counted in 32 shards (by physical block id mod 32) so a huge
 * grid does not funnel every block through one atomic. */
#define TIDAL_SLOT_SHARDS 32
typedef struct tidal_slot {
    uint64_t tag;         /* key of the launch that owns the slot, 0 = free,
                             TIDAL_SLOT_CLOSING while its last block resets it */
    uint64_t presence;    /* high 32 bits: physical blocks arrived (while work remained);
                             low 32 bits: blocks currently working */
    uint32_t next;        /* next unclaimed linear logical block */
    uint32_t shards_done; /* shards whose blocks have all left */
    uint32_t joiners;     /* blocks of joining launches (tidal_launch.flags & TIDAL_LAUNCH_JOIN)
                             inside the slot now; never reset: every increment has its decrement */
    uint32_t reserved0[9];
    struct {
        uint32_t departed; /* physical blocks of this shard that have left */
        uint32_t pad[3];   /* one shard per 16 bytes */
    } shard[TIDAL_SLOT_SHARDS];
    uint32_t reserved1[112];
} tidal_slot;

/* One partition's device-resident control block: this 128-byte header, then
 * slot_mask + 1 tidal_slot entries. 128-byte alignment is enough (cuMemAlloc
 * gives 256). Use at least 128 slots: a slot is held by a running launch, the
 * GPU runs at most 128 kernels at once, and a block that finds every slot busy
 * waits (nanosleep) for one.
 * Mask bits are %smid values as the kernel sees them: physical SM ids inside
 * one process; under MPS each client's ids are compacted (docs/design.md). */
typedef struct tidal_partition {
    uint64_t mask[TIDAL_MAX_SMS / 64]; /* bit s: SM s may run this partition's blocks */
    uint64_t violations;      /* liveness-guard activations: a block worked on a disallowed SM
                                 because no allowed worker remained for its launch */
    uint64_t exec_count;      /* debug: device pointer to uint32_t[logical blocks]; each logical
                                 block's counter is incremented once, when its chunk is
                                 claimed; 0 = off */
    uint64_t sm_blocks;       /* device pointer to uint64_t[TIDAL_MAX_SMS]: logical blocks run per
                                 SM; 0 = off */
    uint64_t reserved_ptr;
    uint32_t slot_mask;       /* number of slots following the header - 1 (power of two - 1) */
    uint32_t generation;      /* bumped by the runtime on every mask change (host side only;
                                 kernels do not read it) */
    uint64_t reserved[7];
} tidal_partition;

/* By-value parameter appended to the reshaped clone (case c). The clone traps if
 * neither this nor __tidal_ctl names a partition, or if the logical grid has
 * more than 2^31-1 blocks (case b then runs such a grid unmasked, like case a).
 *
 * Joining (flow-in): a launch with TIDAL_LAUNCH_JOIN and the key of a running launch
 * adds workers to it. Its blocks look for the slot tagged `key` and, if it still has
 * work, claim logical blocks from it on allowed SMs; they never take a free slot, never
 * count as the owner's physical blocks, and the owner's last block waits for them to
 * leave before it resets the slot. A join that finds no slot (the launch finished) does
 * nothing. The runtime starts joiners when it gives a partition SMs on which its running
 * kernels have no workers left. */
#define TIDAL_LAUNCH_JOIN 1u
typedef struct tidal_launch {
    uint64_t partition;       /* device pointer to a tidal_partition; 0: use __tidal_ctl */
    uint32_t grid[3];         /* the original (logical) grid */
    uint32_t chunk;           /* logical blocks per claim, >= 1 */
    uint64_t key;             /* slot tag: nonzero and unique among running launches (the
                                 runtime's); 0: the launch's %gridid */
    uint32_t flags;           /* TIDAL_LAUNCH_JOIN */
    uint32_t reserved;
} tidal_launch;
#define TIDAL_SLOT_CLOSING UINT64_MAX /* tag while the owner's last block resets the slot */

#define TIDAL_PARTITION_OFF_MASK 0
#define TIDAL_PARTITION_OFF_VIOLATIONS 32
#define TIDAL_PARTITION_OFF_EXEC_COUNT 40
#define TIDAL_PARTITION_OFF_SM_BLOCKS 48
#define TIDAL_PARTITION_OFF_SLOT_MASK 64
#define TIDAL_PARTITION_HEADER 128
#define TIDAL_PARTITION_BYTES(nslots) (TIDAL_PARTITION_HEADER + (uint64_t)(nslots) * sizeof(tidal_slot))

#define TIDAL_SLOT_OFF_TAG 0
#define TIDAL_SLOT_OFF_PRESENCE 8
#define TIDAL_SLOT_OFF_NEXT 16
#define TIDAL_SLOT_OFF_SHARDS_DONE 20
#define TIDAL_SLOT_OFF_JOINERS 24
#define TIDAL_SLOT_OFF_SHARD 64

#ifndef __cplusplus
_Static_assert(sizeof(tidal_slot) == 1024, "slot layout");
_Static_assert(sizeof(tidal_partition) == 128, "partition layout");
_Static_assert(sizeof(tidal_launch) == 40, "launch layout");
#endif

#endif
