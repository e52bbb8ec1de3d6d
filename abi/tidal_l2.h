/* tidal_l2.h — memory homed on one L2 side: the layout of a tidal_l2mem (runtime/tidal.h),
 * the address translation kernels apply to it, and the descriptor of a bimodal tensor
 * (tidal_bimodal_*) with its device accessors. Plain C, no CUDA types: host code and CUDA
 * C++ (the functions are host and device there) include it alike. A leaf of abi/.
 *
 * The H200 homes every aligned 4 KiB block of memory on one of its two L2 sides:
 *     side(block b of granule g) = parity(b & mask) ^ flip(g)
 * with b the block's index (0..511) in its 2 MiB granule, mask a set of block-index bits
 * and flip(g) a bit of the granule's physical address. Both are measured, never assumed
 * (docs/vram-channels.md §2): flip per granule, and the mask per device, because H200s
 * differ (0xab on three machines, another on a fourth). tidal_l2mem_create measures both
 * and puts the mask in the layout.
 *
 * With low = the mask's lowest set bit, the blocks b and b ^ (1 << low) always lie on
 * different sides, so of every such pair exactly one is on each side: a tidal_l2mem of G
 * granules holds G MiB homed on side 0 and G MiB on side 1. Byte o of side s's half lives
 * in granule g = o >> 20, pair k = (o >> 12) & 255 (k with a 0 bit inserted at position
 * low is the pair's first block), at the block of the pair on side s, byte o & 4095 of it.
 * Which block that is: the pair's parity under the mask is parity(k & pmask), pmask = the
 * mask's bits above low moved down one (the layout keeps it), so the block's bit low is
 * j = s ^ flip(g) ^ parity(k & pmask). About 15 integer operations and one bit read per
 * access (tidal_l2_offset); a kernel must apply it to every address of such a half:
 * contiguous views of it (a tensor's storage) see the blocks of the other side.
 *
 * Changed in 0.1 (issue 13): the layout's former `reserved` word holds mask, low and pmask
 * (the struct keeps its size and the offsets of its other fields); TIDAL_L2_BLOCK_MASK
 * (0xab) is gone, and tidal_l2_block_side, tidal_l2_offset and tidal_l2_addr take the mask
 * or the layout: code written for the fixed pattern must pass the layout it got from
 * tidal_l2mem_layout. */
#ifndef TIDAL_L2_H
#define TIDAL_L2_H

#include <stdint.h>

#define TIDAL_L2_GRANULE_SHIFT 21 /* 2 MiB: the VMM granularity on the H200 */
#define TIDAL_L2_BLOCK_SHIFT 12   /* 4 KiB: the side's grain */
#define TIDAL_L2_BLOCK_BITS 9     /* blocks per granule: 1 << 9 */

#ifdef __CUDACC__
#define TIDAL_L2_FN static inline __host__ __device__
#else
#define TIDAL_L2_FN static inline
#endif

/* What a kernel needs to address a tidal_l2mem (tidal_l2mem_layout). */
typedef struct tidal_l2_layout {
    uint64_t base;     /* device address of granule 0 (2 MiB aligned) */
    uint64_t flips;    /* device address of the flip bits: uint32_t words, granule g at bit g % 32 of word g / 32 */
    uint64_t per_side; /* bytes homed on each side: granules << 20 */
    uint32_t granules;
    uint16_t mask; /* the device's pattern: block b is on side parity(b & mask) ^ flip (bits 0-8, not 0) */
    uint8_t low;   /* the mask's lowest set bit: blocks pair as (b, b ^ 1 << low) */
    uint8_t pmask; /* the mask's bits above low, moved down one: a pair k's parity is parity(k & pmask) */
} tidal_l2_layout;

#if defined(__cplusplus)
static_assert(sizeof(tidal_l2_layout) == 32, "tidal_l2_layout is 32 bytes");
#else
_Static_assert(sizeof(tidal_l2_layout) == 32, "tidal_l2_layout is 32 bytes");
#endif

TIDAL_L2_FN unsigned tidal_l2_parity(unsigned x)
{
#if defined(__CUDA_ARCH__)
    return (unsigned)__popc(x) & 1u;
#elif defined(__GNUC__)
    return (unsigned)__builtin_parity(x);
#else
    x ^= x >> 16;
    x ^= x >> 8;
    x ^= x >> 4;
    x ^= x >> 2;
    x ^= x >> 1;
    return x & 1u;
#endif
}

/* The layout's pattern fields from a measured mask: 0, or -1 for a mask that is no pattern
 * (0: every block on one side; bits beyond the 512 blocks of a granule). */
TIDAL_L2_FN int tidal_l2_set_mask(tidal_l2_layout *L, unsigned mask)
{
    if (mask == 0 || mask >> TIDAL_L2_BLOCK_BITS) return -1;
    unsigned low = 0;
    while (!((mask >> low) & 1u)) low++;
    L->mask = (uint16_t)mask;
    L->low = (uint8_t)low;
    L->pmask = (uint8_t)((mask >> (low + 1)) << low);
    return 0;
}

/* The side that homes block b (0..511) of a granule whose flip bit is flip, under mask. */
TIDAL_L2_FN unsigned tidal_l2_block_side(unsigned mask, unsigned b, unsigned flip)
{
    return tidal_l2_parity(b & mask) ^ (flip & 1u);
}

/* Byte o (< L->per_side) of side s's half -> its offset from L->base; flip: the flip bit
 * of granule o >> 20. */
TIDAL_L2_FN uint64_t tidal_l2_offset(const tidal_l2_layout *L, uint64_t o, unsigned side, unsigned flip)
{
    uint64_t g = o >> 20;
    unsigned k = (unsigned)(o >> 12) & 255u;
    unsigned below = (1u << L->low) - 1u; /* pair-index bits that stay in place */
    unsigned j = (side ^ flip ^ tidal_l2_parity(k & L->pmask)) & 1u;
    unsigned b = ((k & ~below) << 1) | (j << L->low) | (k & below);
    return (g << TIDAL_L2_GRANULE_SHIFT) | ((uint64_t)b << TIDAL_L2_BLOCK_SHIFT) | (o & 4095u);
}

/* The flip bit of granule g, from flip words (a pointer the caller can read: the device's
 * in a kernel, a host copy on the host). */
TIDAL_L2_FN unsigned tidal_l2_flip(const uint32_t *flips, uint64_t g) { return (flips[g >> 5] >> (g & 31u)) & 1u; }

/* The address of byte o of side s's half: L->base plus the translation, L->flips read for
 * the granule's flip. In a kernel pass the layout tidal_l2mem_layout gave (its flips are
 * device words); on the host, a copy whose flips points at a host copy of them
 * (tidal_l2mem_flips). */
TIDAL_L2_FN uint64_t tidal_l2_addr(const tidal_l2_layout *L, unsigned side, uint64_t o)
{
    const uint32_t *flips = (const uint32_t *)(uintptr_t)L->flips;
    return L->base + tidal_l2_offset(L, o, side, tidal_l2_flip(flips, o >> 20));
}

/* ---------------------------------------------------------------- translated parameters
 * What tidal-opt's l2addr pass (`-p l2addr --l2addr KERNEL:PARAM`, docs/design.md "The
 * l2addr pass") reads for one translated pointer parameter: a module-scope word
 * `.visible .global .align 8 .b8 __tidal_l2addr_pN_KERNEL[40]` (N: the parameter's
 * index) that the runtime fills before it launches KERNEL with byte 0 of side `side`'s
 * half as parameter N. The pass takes its field offsets from this struct; all zero (the
 * module as loaded): the kernel addresses as it did before the pass. */
#define TIDAL_L2ADDR_SYMBOL_PREFIX "__tidal_l2addr_p"
/* The word's whole name, as a format of (unsigned N, const char *KERNEL): the pass writes
 * it, libtidal looks it up (tidal_l2addr_attach). */
#define TIDAL_L2ADDR_SYMBOL_FMT TIDAL_L2ADDR_SYMBOL_PREFIX "%u_%s"

typedef struct tidal_l2addr_slot {
    tidal_l2_layout l2; /* the tidal_l2mem's layout (flips: device words); l2.base 0: untranslated */
    uint32_t side;      /* the L2 side (0 or 1) whose half the parameter points into */
    uint32_t reserved;  /* 0 */
} tidal_l2addr_slot;

#if defined(__cplusplus)
static_assert(sizeof(tidal_l2addr_slot) == 40, "tidal_l2addr_slot is 40 bytes");
#else
_Static_assert(sizeof(tidal_l2addr_slot) == 40, "tidal_l2addr_slot is 40 bytes");
#endif

/* ---------------------------------------------------------------- bimodal tensors
 * Two identical copies of one tensor (tidal_bimodal_create, runtime/tidal.h): an ordinary
 * linear allocation ("all memory": every 4 KiB block, both L2 sides) and side `side`'s half
 * of a tidal_l2mem. Kernels take the descriptor's device address and read the mode word to
 * choose the copy; tidal_bimodal_set writes it while they run (docs/runtime.md "Bimodal
 * tensors": when a kernel sees a change, and what must hold for it to be safe). */
#define TIDAL_BIMODAL_ALL 0u  /* read the linear copy */
#define TIDAL_BIMODAL_SIDE 1u /* read the copy homed on the descriptor's side */

typedef struct tidal_bimodal_desc {
    uint32_t mode;      /* TIDAL_BIMODAL_ALL or _SIDE: written by tidal_bimodal_set, read by kernels */
    uint32_t side;      /* the L2 side (0 or 1) that homes the side copy */
    uint64_t all;       /* device address of the linear copy */
    uint64_t size;      /* bytes of the tensor (each copy) */
    uint64_t reserved;  /* 0 */
    tidal_l2_layout l2; /* the side copy: byte o is byte o of side `side`'s half */
} tidal_bimodal_desc;

#if defined(__cplusplus)
static_assert(sizeof(tidal_bimodal_desc) == 64, "tidal_bimodal_desc is 64 bytes");
#else
_Static_assert(sizeof(tidal_bimodal_desc) == 64, "tidal_bimodal_desc is 64 bytes");
_Static_assert(__builtin_offsetof(tidal_bimodal_desc, mode) == 0, "the mode word is first");
#endif

/* The mode as it is now: a relaxed load at GPU scope (as a rewritten kernel reads its
 * partition's live mask), never cached in L1, so a kernel sees tidal_bimodal_set's write
 * at its next call. Read it once per logical block (or chunk) and address the whole block
 * with that value: a block that re-read it per access could mix the copies. */
TIDAL_L2_FN unsigned tidal_bimodal_mode(const tidal_bimodal_desc *d)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    unsigned v;
    asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(v) : "l"(&d->mode) : "memory");
    return v;
#else
    return *(const volatile uint32_t *)&d->mode;
#endif
}

/* The address of byte o (< d->size) of the tensor in the copy mode names. */
TIDAL_L2_FN uint64_t tidal_bimodal_addr(const tidal_bimodal_desc *d, unsigned mode, uint64_t o)
{
    return mode == TIDAL_BIMODAL_SIDE ? tidal_l2_addr(&d->l2, d->side, o) : d->all + o;
}

#endif
