/* tidal_abi.h — the contract between kernels rewritten by `tidal-opt -p tidal` and
 * whoever drives them (libtidal, tests, benchmarks). Plain C, no CUDA types, usable
 * from host code and from CUDA C++. This directory (abi/) is a leaf: passes/,
 * runtime/ and driver/ include it; it includes nothing of theirs. The device code
 * that implements the protocol is written once, in passes/tidal_protocol.c, from the
 * offsets below.
 *
 * How a rewritten kernel finds its state:
 *  - every rewritten module defines the marker TIDAL_MARKER_SYMBOL, a .global whose
 *    byte size says whether the module also has __tidal_ctl: TIDAL_MARKER_BYTES (4)
 *    no, TIDAL_MARKER_BYTES_CASE_B (8) yes. Only modules rewritten with case b
 *    (tidal-opt --case-b) define   .weak .const .align 8 .u64 __tidal_ctl = 0;
 *    because a module-scope .const makes every kernel of the module 0.24 us slower
 *    per launch on the H200, used or not (bench/probes/module_cost.sh). The runtime
 *    writes a device pointer to a tidal_partition there once, after loading the
 *    module. 0 means "no runtime": the original entry runs its verbatim copy of the
 *    original body (launch case a). Without case b the original entries are
 *    byte-identical and a clone launched with partition 0 traps.
 *  - the original entry keeps its name and parameters. Launched with the original
 *    grid while __tidal_ctl is set (case b: a launch the runtime did not see), it
 *    runs the protocol in probe mode: it finds a slot by its %gridid, and the
 *    launch's last block resets the slot.
 *  - a clone NAME + TIDAL_RESHAPED_SUFFIX takes one more by-value parameter, a
 *    tidal_launch, and is launched by the runtime with a grid of persistent workers
 *    (case c). The runtime names the slot and its epoch, so a launch needs no slot
 *    search and no reset (docs/design.md, "The protocol").
 *  - next to each clone, its parameter count (the original's + 1) as the byte size of
 *        .weak .global .align 1 .b8 NAME__tidal_nparams[N];
 *    which cuModuleGetGlobal returns without a device copy. The driver has no
 *    parameter-count query, and counting by cuFuncGetParamInfo until it fails is a
 *    failing driver call that compute-sanitizer reports in every program. Additive: a
 *    module rewritten before it existed still runs (the runtime counts there).
 *  - a worker block keeps the protocol's words (TIDAL_SH_*, below) in shared memory.
 *    The clone keeps them in the tail of the launch's dynamic shared memory, so that its
 *    static shared memory is the original's: the runtime launches it with
 *    TIDAL_CLONE_SMEM(d) dynamic bytes for a launch of d, and tidal_launch.sh_off says
 *    where they are. The original entry (case b only: its launcher adds no bytes) keeps
 *    them in a static variable.
 */
#ifndef TIDAL_ABI_H
#define TIDAL_ABI_H

#include <stdint.h>

#define TIDAL_ABI_VERSION 5
#define TIDAL_CTL_SYMBOL "__tidal_ctl"
#define TIDAL_RESHAPED_SUFFIX "__tidal_reshaped"
#define TIDAL_NPARAMS_SUFFIX "__tidal_nparams" /* NAME + it: the clone's parameter count, as a size */
#define TIDAL_MAX_SMS 256
#define TIDAL_MARKER_SYMBOL "__tidal_rewritten_v5" /* .global defined in rewritten modules */
#define TIDAL_MARKER_BYTES 4                       /* the marker's size: no __tidal_ctl */
#define TIDAL_MARKER_BYTES_CASE_B 8                /* the marker's size: __tidal_ctl too (case b) */
/* Largest logical grid the protocol runs masked (the claim and guard words' fields);
 * a larger grid runs its original body (case b) or is launched as given (case c). */
#define TIDAL_MAX_LOGICAL 16777216 /* 1 << 24; plain literals: the PTX text is built from them */
#define TIDAL_MAX_CHUNK 64

/* ---------------------------------------------------------------- the slot
 * Per-launch state. In epoch mode (case c eagerly launched) the runtime gives each
 * launch a slot that no running launch holds (one per stream: stream order frees it)
 * and a new epoch; the first worker's red.max of (epoch << 48) turns the words a
 * previous launch left into this launch's zero. In probe mode (case b, and clones
 * captured into graphs, which replay with fixed parameters) the slot is found by its
 * tag and the launch's last block resets it, counting departures in 32 shards.
 *
 *   claim  bits  0-27  next unclaimed ticket (logical block - tidal_launch.base)
 *          bits 28-47  joiner blocks inside the launch (flow-in)
 *          bits 48-63  epoch
 *   guard  bits  0-23  owner workers working (the liveness guard)
 *          bits 24-47  owner workers arrived
 *          bits 48-63  epoch
 */
#define TIDAL_SLOT_SHARDS 32
typedef struct tidal_slot {
    uint64_t tag;         /* probe mode: key of the owning launch, 0 = free;
                             TIDAL_SLOT_RESERVED: a stream's slot (epoch mode) */
    uint64_t claim;       /* see above */
    uint64_t guard;       /* see above */
    uint32_t shards_done; /* probe mode: shards whose blocks have all left */
    uint32_t reserved0[9];
    struct {
        uint32_t departed; /* probe mode: physical blocks of this shard that have left */
        uint32_t pad[3];   /* one shard per 16 bytes */
    } shard[TIDAL_SLOT_SHARDS];
    uint32_t reserved1[112];
} tidal_slot;
/* Tag of a slot the runtime has given to a stream (epoch mode): probe-mode launches
 * pass over it. Written by the runtime when it hands the slot out. */
#define TIDAL_SLOT_RESERVED (UINT64_MAX - 1)

#define TIDAL_CLAIM_NEXT_MASK 0x0fffffffull
#define TIDAL_CLAIM_JOINER_SHIFT 28
#define TIDAL_CLAIM_JOINER_MASK 0xfffffull
#define TIDAL_EPOCH_SHIFT 48
#define TIDAL_EPOCH_MASK 0xffffu /* the runtime resets a slot before its epoch wraps */
#define TIDAL_GUARD_ACTIVE_MASK 0xffffffull
#define TIDAL_GUARD_ARRIVED_SHIFT 24

/* ---------------------------------------------------------------- the partition
 * One partition's device-resident control block: this 128-byte header, then its
 * tidal_slot entries: [0, probe_base) are the runtime's to give to streams (epoch mode),
 * [probe_base, probe_base + slot_mask + 1) are searched by probe-mode launches (slot_mask
 * + 1 a power of two). cuMemAlloc's alignment is enough. Mask bits are %smid values as the kernel sees them: physical
 * SM ids inside one process; under MPS each client's ids are compacted (docs/design.md). */
typedef struct tidal_partition {
    uint64_t mask[TIDAL_MAX_SMS / 64]; /* bit s: SM s may run this partition's blocks */
    uint64_t violations;               /* liveness-guard activations: a worker kept working on a
                                          disallowed SM because no other worker remained */
    uint64_t exec_count;               /* debug: device pointer to uint32_t[logical blocks]; each logical
                                          block's counter is incremented once, after its chunk ran;
                                          0 = off (clones: only with TIDAL_LAUNCH_EXEC) */
    uint64_t sm_blocks;                /* device pointer to uint64_t[TIDAL_MAX_SMS]: logical blocks run per
                                          SM; 0 = off (clones: only with TIDAL_LAUNCH_HIST) */
    uint64_t reserved_ptr;
    uint32_t slot_mask;  /* probe slots - 1 (a power of two - 1) */
    uint32_t probe_base; /* index of the first probe slot */
    uint64_t reserved[7];
} tidal_partition;

/* ---------------------------------------------------------------- the launch
 * By-value parameter appended to the reshaped clone (case c). The clone traps if
 * neither this nor __tidal_ctl names a partition, if the logical grid has
 * TIDAL_MAX_LOGICAL blocks or more, or if the launch's dynamic shared memory has no
 * room for the shared words at sh_off (below).
 *
 * Modes (flags):
 *  - STATIC: worker w (the linear physical block id) first runs the chunk
 *    [w*chunk, (w+1)*chunk) without claiming it; dynamic tickets start at base
 *    (= workers*chunk). For launches placed on SMs the mask allows (a green context of
 *    the partition): no memory operation precedes the first logical block, and a launch
 *    whose workers cover the grid makes none at all.
 *  - otherwise (dynamic): a worker reads the mask before its first claim, base is 0.
 *  - PROBE: find the slot by its tag, tidal_launch.key | %gridid, and reset it at the end
 *    (graph-captured clones: a key per captured launch keeps replays in different
 *    contexts apart, %gridid replays in one); else the slot is tidal_launch.slot, in
 *    epoch mode.
 *  - JOIN (flow-in, epoch mode only: with PROBE the blocks leave at once): the blocks add
 *    workers to the running launch that holds the same slot and epoch: on allowed SMs, while it has work; they never
 * start before it or outlive it (its workers wait for joiners that are inside).
 *  - HIST / EXEC: update sm_blocks (tidal_launch.sm_blocks, else the partition's) /
 *    the partition's exec_count. A static worker counts its own chunk when it starts it.
 */
#define TIDAL_LAUNCH_JOIN 1
#define TIDAL_LAUNCH_STATIC 2
#define TIDAL_LAUNCH_PROBE 4
#define TIDAL_LAUNCH_HIST 8
#define TIDAL_LAUNCH_EXEC 16
typedef struct tidal_launch {
    uint64_t partition; /* device pointer to a tidal_partition; 0: use __tidal_ctl */
    uint32_t grid[3];   /* the original (logical) grid */
    uint32_t chunk;     /* logical blocks per claim, 1..TIDAL_MAX_CHUNK */
    uint32_t slot;      /* index of the launch's slot (not PROBE) */
    uint32_t epoch;     /* 1..TIDAL_EPOCH_MASK, one more than the slot's last launch (not PROBE) */
    uint32_t flags;     /* TIDAL_LAUNCH_* */
    uint32_t base;      /* first logical block of the dynamic tickets (STATIC: workers x own chunk) */
    uint64_t key;       /* PROBE: high bits of the slot tag (| %gridid); 0 for %gridid alone */
    uint64_t sm_blocks; /* HIST: where to count logical blocks per SM (uint64_t[TIDAL_MAX_SMS],
                           the partition's sm_blocks); 0: read it from the partition */
    uint32_t sh_off;    /* the protocol's words: this many bytes into the dynamic shared
                           memory, TIDAL_SH_OFFSET(the launch's own dynamic bytes) */
    uint32_t first;     /* STATIC in epoch mode (flags & (JOIN|STATIC|PROBE) == STATIC, the fast
                           path): logical blocks of each worker's own first chunk, so that
                           base = workers*max(first, chunk); 0 (or less than chunk): chunk.
                           A long kernel's own chunks (most of its blocks, no claim) can be
                           larger than its tickets (the tail, balanced). With PROBE a static
                           owner's own chunk is `chunk` whatever this says. Since ABI v5 */
} tidal_launch;

/* ---------------------------------------------------------------- the shared words
 * A worker block's protocol state in shared memory, TIDAL_SH_BYTES at an address
 * aligned to TIDAL_SH_ALIGN: the claimed chunk double buffered (b0, even and odd
 * rounds), the leader's slot address and state bits, the start of the chunk the block
 * runs (HIST/EXEC).
 *  - clone: at the dynamic shared base + tidal_launch.sh_off. The runtime launches the
 *    clone of a launch with d dynamic bytes with TIDAL_CLONE_SMEM(d) bytes and sh_off =
 *    TIDAL_SH_OFFSET(d): the kernel's own d bytes stay where they were, the words follow
 *    them. The clone does not check that they fit (the check cost 0.03 us per launch:
 *    bench/results/2026-12-02-session8/clone-cost.log); a launcher that gives less makes
 *    the words' accesses leave the block's shared window, which the GPU faults.
 *    (The dynamic base is aligned to at least 16: ptxas pads a kernel's static shared
 *    memory to the largest .extern .shared alignment of the module, 16 at least.)
 *  - original entry (case b): a static variable, __tidal_sh. */
#define TIDAL_SH_OFF_B0_EVEN 0
#define TIDAL_SH_OFF_B0_ODD 4
#define TIDAL_SH_OFF_SLOT 8
#define TIDAL_SH_OFF_STATE 16
#define TIDAL_SH_OFF_CHUNK 20
#define TIDAL_SH_BYTES 24
#define TIDAL_SH_ALIGN 8
#define TIDAL_SH_OFFSET(dyn) (((uint32_t)(dyn) + (TIDAL_SH_ALIGN - 1)) & ~(uint32_t)(TIDAL_SH_ALIGN - 1))
#define TIDAL_CLONE_SMEM(dyn) (TIDAL_SH_OFFSET(dyn) + TIDAL_SH_BYTES)

#define TIDAL_PARTITION_OFF_MASK 0
#define TIDAL_PARTITION_OFF_VIOLATIONS 32
#define TIDAL_PARTITION_OFF_EXEC_COUNT 40
#define TIDAL_PARTITION_OFF_SM_BLOCKS 48
#define TIDAL_PARTITION_OFF_SLOT_MASK 64
#define TIDAL_PARTITION_OFF_PROBE_BASE 68
#define TIDAL_PARTITION_HEADER 128
#define TIDAL_SLOT_BYTES 1024
#define TIDAL_PARTITION_BYTES(nslots) (TIDAL_PARTITION_HEADER + (uint64_t)(nslots)*TIDAL_SLOT_BYTES)

#define TIDAL_SLOT_OFF_TAG 0
#define TIDAL_SLOT_OFF_CLAIM 8
#define TIDAL_SLOT_OFF_GUARD 16
#define TIDAL_SLOT_OFF_SHARDS_DONE 24
#define TIDAL_SLOT_OFF_SHARD 64
#define TIDAL_SLOT_SHARD_STRIDE 16

#define TIDAL_LAUNCH_OFF_PARTITION 0
#define TIDAL_LAUNCH_OFF_GRID 8
#define TIDAL_LAUNCH_OFF_GRID_Z 16
#define TIDAL_LAUNCH_OFF_CHUNK 20
#define TIDAL_LAUNCH_OFF_SLOT 24
#define TIDAL_LAUNCH_OFF_EPOCH 28
#define TIDAL_LAUNCH_OFF_FLAGS 32
#define TIDAL_LAUNCH_OFF_BASE 36
#define TIDAL_LAUNCH_OFF_KEY 40
#define TIDAL_LAUNCH_OFF_SM_BLOCKS 48
#define TIDAL_LAUNCH_OFF_SH_OFF 56
#define TIDAL_LAUNCH_OFF_FIRST 60
#define TIDAL_LAUNCH_BYTES 64

#if defined(__cplusplus)
static_assert(sizeof(tidal_slot) == TIDAL_SLOT_BYTES, "slot layout");
static_assert(sizeof(tidal_partition) == TIDAL_PARTITION_HEADER, "partition layout");
static_assert(sizeof(tidal_launch) == TIDAL_LAUNCH_BYTES, "launch layout");
#else
_Static_assert(sizeof(tidal_slot) == TIDAL_SLOT_BYTES, "slot layout");
_Static_assert(sizeof(tidal_partition) == TIDAL_PARTITION_HEADER, "partition layout");
_Static_assert(sizeof(tidal_launch) == TIDAL_LAUNCH_BYTES, "launch layout");
_Static_assert(__builtin_offsetof(tidal_slot, claim) == TIDAL_SLOT_OFF_CLAIM, "slot layout");
_Static_assert(__builtin_offsetof(tidal_slot, guard) == TIDAL_SLOT_OFF_GUARD, "slot layout");
_Static_assert(__builtin_offsetof(tidal_slot, shards_done) == TIDAL_SLOT_OFF_SHARDS_DONE, "slot layout");
_Static_assert(__builtin_offsetof(tidal_slot, shard) == TIDAL_SLOT_OFF_SHARD, "slot layout");
_Static_assert(__builtin_offsetof(tidal_partition, slot_mask) == TIDAL_PARTITION_OFF_SLOT_MASK, "partition layout");
_Static_assert(__builtin_offsetof(tidal_partition, probe_base) == TIDAL_PARTITION_OFF_PROBE_BASE, "partition layout");
_Static_assert(__builtin_offsetof(tidal_launch, slot) == TIDAL_LAUNCH_OFF_SLOT, "launch layout");
_Static_assert(__builtin_offsetof(tidal_launch, key) == TIDAL_LAUNCH_OFF_KEY, "launch layout");
_Static_assert(__builtin_offsetof(tidal_launch, sm_blocks) == TIDAL_LAUNCH_OFF_SM_BLOCKS, "launch layout");
_Static_assert(__builtin_offsetof(tidal_launch, sh_off) == TIDAL_LAUNCH_OFF_SH_OFF, "launch layout");
_Static_assert(__builtin_offsetof(tidal_launch, first) == TIDAL_LAUNCH_OFF_FIRST, "launch layout");
_Static_assert(TIDAL_SH_OFF_CHUNK + 4 <= TIDAL_SH_BYTES && TIDAL_SH_BYTES % TIDAL_SH_ALIGN == 0 &&
                   TIDAL_SH_OFF_SLOT % 8 == 0 && TIDAL_SH_ALIGN >= 8,
               "shared words layout");
#endif

#endif
