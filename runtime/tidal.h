/* tidal.h — libtidal, the runtime that gives kernels rewritten by `tidal-opt -p tidal`
 * their SM masks.
 *
 * Partitions are named SM sets ("ls" = 0-47, "be" = 48-131). A stream bound to a
 * partition runs every rewritten kernel launched on it on that partition's SMs only;
 * tidal_partition_set moves the set while kernels run (they leave SMs taken from them
 * and flow into SMs given to them). Kernels that were not rewritten run untouched and
 * are counted.
 *
 * Conventions (Lua style): opaque handles, every function returns an int status
 * (TIDAL_OK = 0, negative on failure) and tidal_strerror() names it; the last error's
 * detail text is in tidal_last_error(). CUDA types are passed as void * (CUstream,
 * CUmodule, CUfunction), so this header does not need cuda.h.
 *
 * Threads: every function may be called from any thread. One CUDA context per process:
 * the one current at tidal_init (else device 0's primary context).
 */
#ifndef TIDAL_H
#define TIDAL_H

#include <stddef.h>
#include <stdint.h>

#include "tidal_api_begin.h"

#define TIDAL_VERSION_MAJOR 0
#define TIDAL_VERSION_MINOR 1

enum {
    TIDAL_OK = 0,
    TIDAL_ERR_INVALID = -1,   /* bad argument (NULL, out of range) */
    TIDAL_ERR_PARSE = -2,     /* an SM set or name does not parse */
    TIDAL_ERR_NOT_INIT = -3,  /* tidal_init has not run (or tidal_shutdown has) */
    TIDAL_ERR_NO_DRIVER = -4, /* libcuda.so.1 missing or lacks a needed entry point */
    TIDAL_ERR_CUDA = -5,      /* a CUDA driver call failed (tidal_last_error names it) */
    TIDAL_ERR_NO_MEMORY = -6,
    TIDAL_ERR_EXISTS = -7,        /* a partition with that name exists */
    TIDAL_ERR_NOT_FOUND = -8,     /* no such partition / module / tidald */
    TIDAL_ERR_NOT_REWRITTEN = -9, /* module or kernel carries no tidal rewrite */
    TIDAL_ERR_BUSY = -10,         /* partition still bound to a stream or module */
    TIDAL_ERR_SMS = -11,          /* SM id >= the device's SM count (or >= 256) */
    TIDAL_ERR_DAEMON = -12,       /* tidald protocol / connection failure */
    TIDAL_ERR_MPS = -13,          /* cross-process partitions need one SM id space;
                                     this process is an MPS client (docs/runtime.md) */
    TIDAL_ERR_UNSUPPORTED = -14,  /* the device does not show what was asked (tidal_l2_sides:
                                     no two L2 sides) */
};

#define TIDAL_SMSET_WORDS 4 /* 256 SMs */
typedef struct tidal_smset {
    uint64_t bits[TIDAL_SMSET_WORDS]; /* bit s: SM s */
} tidal_smset;

/* "0-47,64,100-131", "all" (every SM of the device: resolved when applied), "none" or "".
 * Whitespace around items is allowed. On TIDAL_ERR_PARSE, *errpos (if not NULL) gets the
 * 0-based offset of the offending character. "all" sets *is_all (if not NULL). */
int tidal_smset_parse(const char *text, tidal_smset *out, int *is_all, size_t *errpos);
/* Canonical text ("0-47,64"; "none" when empty) into buf; returns the length it needs
 * (like snprintf). */
size_t tidal_smset_format(const tidal_smset *set, char *buf, size_t bufsize);
unsigned tidal_smset_count(const tidal_smset *set);

typedef struct tidal_part tidal_part;

/* flags for tidal_init */
#define TIDAL_INIT_NO_DAEMON                                   \
    1u /* do not connect to tidald even if TIDAL_SOCKET or the \
          default socket exists */

int tidal_init(unsigned flags);
int tidal_shutdown(void);
const char *tidal_strerror(int status);
/* Detail of the last failure on this thread ("cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY"). */
const char *tidal_last_error(void);
/* SM count of the device (%nsmid as kernels of this process see it). */
int tidal_device_sms(unsigned *out);
/* The two halves of the L2 (docs/vram-channels.md §2): *side0 gets the SMs that read
 * through the half SM 0 reads through, *side1 the others. A partition of one side's SMs
 * keeps its L2 traffic apart from a partition of the other's: on the H200, BERT-base (LS)
 * on one side next to BERT-large (BE) on the other slowed down half as much as with the
 * same SM counts split by SM number (docs/performance.md §16). Measured on the first call
 * (a probe kernel, one block per SM, a few ms) and kept for the process: the split
 * differs between GPUs of one model, so it is never a table. TIDAL_ERR_UNSUPPORTED when
 * the device shows no two sides, TIDAL_ERR_MPS in an MPS client. */
int tidal_l2_sides(tidal_smset *side0, tidal_smset *side1);

/* Memory homed on one L2 side (docs/runtime.md "Memory homed on one L2 side"): 2 MiB
 * granules of device memory, each measured at creation, holding per_side bytes (rounded up
 * to 1 MiB) homed on side 0 and as many on side 1, interleaved by 4 KiB. Kernels address
 * byte o of side s's half with tidal_l2_addr (abi/tidal_l2.h) from the layout; nothing
 * else can use the halves as plain arrays. LS data on its partition's side, BE data on the
 * other, keep each other's DRAM and L2 traffic out (docs/vram-channels.md §4). The
 * device's pattern (which block-index bits choose the side) is measured at creation and is
 * in the layout (its mask). TIDAL_ERR_UNSUPPORTED when the device homes memory by no
 * parity of the block index (the text names the granule and block where the model
 * failed), TIDAL_ERR_NO_DRIVER without the VMM API. */
typedef struct tidal_l2mem tidal_l2mem;
struct tidal_l2_layout; /* abi/tidal_l2.h */
int tidal_l2mem_create(size_t per_side, tidal_l2mem **out);
int tidal_l2mem_layout(const tidal_l2mem *m, struct tidal_l2_layout *out);
/* Host copy of the flip bits (what the layout's device words hold): bit g % 32 of word g / 32. */
int tidal_l2mem_flips(const tidal_l2mem *m, uint32_t *words, size_t nwords);
int tidal_l2mem_destroy(tidal_l2mem *m);

/* Kernels that tidal-opt's l2addr pass translated (`-p l2addr --l2addr KERNEL:PARAM`,
 * docs/design.md §2) address their parameter `param` through a word of their module
 * (CUmodule), all zero as loaded: untranslated. This fills KERNEL's word for `param` so
 * that launches made after it returns take byte o of that parameter as byte o of side
 * `side`'s half of m; launch them with the parameter = *base (byte 0 of the half; the
 * layout's base). m = NULL clears the word (the kernel addresses as before; *base = 0).
 * The word is the module's, not a launch's: rewrite it between launches that use
 * different halves, or load the module twice. TIDAL_ERR_NOT_REWRITTEN when the module has
 * no such word (that parameter was not translated: the pass's report says why),
 * TIDAL_ERR_INVALID for NULL arguments, side > 1 or a word of another size. */
int tidal_l2addr_attach(void *module, const char *kernel, unsigned param, const tidal_l2mem *m, unsigned side,
                        uint64_t *base);

/* Bimodal tensors (docs/runtime.md "Bimodal tensors"; SGDRC's two copies of a memory-bound
 * BE tensor): size bytes as an ordinary linear allocation (all memory, both L2 sides) and
 * again in side `side`'s half of a tidal_l2mem of their own (BE's colors), both zero at
 * first. Kernels take the device address of the descriptor (tidal_bimodal_desc_addr), read
 * its mode once per logical block with tidal_bimodal_mode and address byte o with
 * tidal_bimodal_addr (abi/tidal_l2.h). tidal_bimodal_write writes both copies (the range
 * must not be read while it runs); tidal_bimodal_set switches the copy kernels read,
 * TIDAL_BIMODAL_ALL or TIDAL_BIMODAL_SIDE, while they run: when it returns the mode is in
 * device memory, and every logical block that reads it from then on sees it. Errors as
 * tidal_l2mem_create's, TIDAL_ERR_INVALID for size 0, side > 1, a mode that is neither, a
 * write past the end; TIDAL_ERR_NO_DRIVER without the VMM API or cuMemcpyDtoDAsync. The
 * other half of the tidal_l2mem (size bytes homed on the other side) is left unused. */
typedef struct tidal_bimodal tidal_bimodal;
struct tidal_bimodal_desc; /* abi/tidal_l2.h */
int tidal_bimodal_create(size_t size, unsigned side, tidal_bimodal **out);
int tidal_bimodal_write(tidal_bimodal *t, size_t offset, const void *src, size_t n);
int tidal_bimodal_set(tidal_bimodal *t, unsigned mode);
/* The device address of the descriptor kernels take. */
int tidal_bimodal_desc_addr(const tidal_bimodal *t, uint64_t *dev);
/* A host copy of the descriptor: the mode as last set, both copies' addresses, the side
 * copy's layout (its flips are device words). */
int tidal_bimodal_desc_get(const tidal_bimodal *t, struct tidal_bimodal_desc *out);
int tidal_bimodal_destroy(tidal_bimodal *t);

/* Partitions. Names: 1..31 characters of [A-Za-z0-9_.-]. The SM set is a string as
 * tidal_smset_parse takes it. A partition created here is local to the process; one that
 * tidald owns (tidalctl create) appears here by name once tidal_init has connected, and
 * follows tidald's changes (tidal_partition_set on it returns TIDAL_ERR_INVALID: change it
 * with tidalctl). */
int tidal_partition_create(const char *name, const char *smset, tidal_part **out);
int tidal_partition_find(const char *name, tidal_part **out);
/* Live: kernels running on p see the new set at their next claim. */
int tidal_partition_set(tidal_part *p, const char *smset);
int tidal_partition_set_mask(tidal_part *p, const tidal_smset *set);
int tidal_partition_get_mask(tidal_part *p, tidal_smset *out);
const char *tidal_partition_name(const tidal_part *p);
int tidal_partition_destroy(tidal_part *p);

/* Every rewritten kernel launched on stream (a CUstream; NULL = the legacy default
 * stream) runs on p's SMs. p = NULL unbinds. Streams without a binding use the default
 * partition (TIDAL_PARTITION, or tidal_set_default_partition), else run unmasked. */
int tidal_stream_bind(void *stream, tidal_part *p);
int tidal_set_default_partition(tidal_part *p);

/* A new non-blocking stream (CUstream) of partition p, with the given priority (CUDA's:
 * lower is higher). It lives in a green context of p's SMs when p's set is a union of SM
 * groups (tidal_partition_placed says so), else in the process's context with the
 * persistent clones doing all the masking. A stream stays in the green context it was
 * made in: after p's set changes, its rewritten kernels still follow the live mask (as
 * clones), and tidal_partition_stream gives streams of the new set. The stream belongs to
 * the caller (cuStreamDestroy) and is bound to p (tidal_stream_bind(s, NULL) unbinds). */
int tidal_partition_stream(tidal_part *p, int priority, void **stream);
/* 1 when p's current set is exactly a union of green-context SM groups (its streams
 * place every kernel), 0 otherwise; negative status on error. */
int tidal_partition_placed(tidal_part *p);

/* How rewritten kernels launched on p's streams run. */
enum {
    TIDAL_PLACE_HYBRID = 0,     /* default: original if its measured duration is below the
                                   threshold, persistent clone otherwise (and until measured) */
    TIDAL_PLACE_PERSISTENT = 1, /* always the clone: every kernel leaves SMs within one chunk */
    TIDAL_PLACE_ORIGINAL = 2,   /* always the original on the stream's SMs (no live masking) */
};
/* short_us: the threshold in microseconds (0: keep the current one; default
 * TIDAL_SHORT_US, else 20). */
int tidal_partition_set_placement(tidal_part *p, int mode, unsigned short_us);

/* Attach a loaded module (CUmodule): load all of its functions now (a lazily loaded module
 * makes its first launch wait for kernels already running) and point its __tidal_ctl at
 * partition p (or the default partition when p is NULL): launches that bypass libtidal
 * (Triton's own launcher) then run case b on that partition. TIDAL_ERR_NOT_REWRITTEN for a
 * module without the rewrite (nothing is changed). A module's __tidal_ctl is written once. */
int tidal_module_attach(void *module, tidal_part *p);

/* The launch path every interposer uses (cuLaunchKernel's signature, f a CUfunction,
 * stream a CUstream). A rewritten kernel runs as its reshaped clone (persistent workers
 * over all SMs, its stream's partition); anything else is passed through untouched.
 * f may also be a CUkernel cast to CUfunction, as for cuLaunchKernel; one that
 * libtidal-preload did not see made costs one failing driver call, once, to tell.
 * Returns the CUresult of the real launch (0 = CUDA_SUCCESS). */
int tidal_launch_kernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void *stream, void **params, void **extra);

typedef struct tidal_stats {
    uint64_t launches_rewritten;      /* launched as reshaped clones (case c) */
    uint64_t launches_original;       /* rewritten kernels launched as the original on a placed
                                         stream (short kernels, TIDAL_PLACE_HYBRID/ORIGINAL) */
    uint64_t launches_unknown;        /* kernels without the rewrite, run untouched */
    uint64_t launches_refused;        /* kernels of a rewritten module that the pass refused */
    uint64_t launches_unmasked;       /* rewritten kernels launched with no partition */
    uint64_t joins;                   /* joining launches started for running kernels when their
                                         partition was given SMs (flow-in, TIDAL_FLOW_IN) */
    uint64_t launches_graph_probe;    /* clones captured into graphs in probe mode, the slow one
                                         (no capture slot was left, or the driver gives no capture
                                         id); the others run in epoch mode on a capture slot */
    uint64_t launches_smem_full;      /* of launches_unmasked: rewritten kernels whose dynamic shared
                                         memory left no room for the clone's protocol words (within
                                         TIDAL_SH_BYTES of the device's per-block limit) */
    uint64_t launches_cluster_routed; /* launches with clusters larger than a partition stream's
                                         green context runs, sent to the stream's route: the
                                         partition's co-schedulable cluster groups */
    uint64_t violations;              /* p: liveness-guard activations (see tidal_abi.h) */
    uint64_t sm_blocks[256];          /* p: logical blocks run per SM */
} tidal_stats;

/* Process counters, plus p's device counters when p is not NULL (copies from the device;
 * they include kernels still running). */
int tidal_stats_get(tidal_part *p, tidal_stats *out);
int tidal_stats_reset(tidal_part *p);

#include "tidal_api_end.h"
#endif
