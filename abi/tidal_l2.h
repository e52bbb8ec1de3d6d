/* tidal_l2.h — memory homed on one L2 side: the layout of a tidal_l2mem (runtime/tidal.h)
 * and the address translation kernels apply to it. Plain C, no CUDA types: host code and
 * CUDA C++ (the functions are host and device there) include it alike. A leaf of abi/.
 *
 * The H200 homes every aligned 4 KiB block of memory on one of its two L2 sides:
 *     side(block b of granule g) = parity(b & TIDAL_L2_BLOCK_MASK) ^ flip(g)
 * with b the block's index in its 2 MiB granule and flip(g) a bit of the granule's
 * physical address (measured per granule: docs/vram-channels.md §2, 100% on every
 * granule of two machines). The mask has bit 0, so of each pair of blocks (2k, 2k+1)
 * exactly one is on each side: a tidal_l2mem of G granules holds G MiB homed on side 0
 * and G MiB on side 1, and byte o of side s's half lives at
 *     granule g = o >> 20, pair k = (o >> 12) & 255,
 *     block 2k + (s ^ parity(k & 0x55) ^ flip(g)), byte o & 4095 of it
 * (0x55 = TIDAL_L2_BLOCK_MASK >> 1). Six integer operations and one bit read per access;
 * a kernel must apply it to every address of such a half: contiguous views of it (a
 * tensor's storage) see the blocks of the other side. */
#ifndef TIDAL_L2_H
#define TIDAL_L2_H

#include <stdint.h>

#define TIDAL_L2_GRANULE_SHIFT 21 /* 2 MiB: the VMM granularity on the H200 */
#define TIDAL_L2_BLOCK_SHIFT 12   /* 4 KiB: the side's grain */
#define TIDAL_L2_BLOCK_MASK 0xabu /* bits of the block index whose parity is the side */

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
    uint32_t reserved;
} tidal_l2_layout;

TIDAL_L2_FN unsigned tidal_l2_parity8(unsigned x)
{
    x &= 0xffu;
    x ^= x >> 4;
    x ^= x >> 2;
    x ^= x >> 1;
    return x & 1u;
}

/* The side that homes block b (0..511) of a granule whose flip bit is flip. */
TIDAL_L2_FN unsigned tidal_l2_block_side(unsigned b, unsigned flip)
{
    return tidal_l2_parity8(b & TIDAL_L2_BLOCK_MASK) ^ (flip & 1u);
}

/* Byte o (< per_side) of side s's half -> its offset from base; flip: the flip bit of
 * granule o >> 20. */
TIDAL_L2_FN uint64_t tidal_l2_offset(uint64_t o, unsigned side, unsigned flip)
{
    uint64_t g = o >> 20;
    unsigned k = (unsigned)(o >> 12) & 255u;
    unsigned j = (side ^ tidal_l2_parity8(k & (TIDAL_L2_BLOCK_MASK >> 1)) ^ flip) & 1u;
    return (g << TIDAL_L2_GRANULE_SHIFT) | ((uint64_t)k << 13) | ((uint64_t)j << 12) | (o & 4095u);
}

/* The flip bit of granule g, from the layout's flip words (a pointer the caller can read:
 * the device's in a kernel, a host copy on the host). */
TIDAL_L2_FN unsigned tidal_l2_flip(const uint32_t *flips, uint64_t g) { return (flips[g >> 5] >> (g & 31u)) & 1u; }

/* The address of byte o of side s's half, in a kernel: the layout's base and flip words. */
TIDAL_L2_FN uint64_t tidal_l2_addr(uint64_t base, const uint32_t *flips, unsigned side, uint64_t o)
{
    return base + tidal_l2_offset(o, side, tidal_l2_flip(flips, o >> 20));
}

#endif
