/* test_runtime_l2.c — libtidal's L2 parts against the fake driver (no GPU): the split of SMs
 * into L2 sides, memory homed on one side (the pattern and flips measured from probe
 * latencies, the translation of abi/tidal_l2.h for every pattern a parity can be), and
 * bimodal tensors (both copies written, the mode word kernels read). The fake device of
 * fake_l2_on homes block b of granule g on parity(b & mask) ^ flip(g) for a mask the test
 * picks; "device memory" is host memory, so the tests read what kernels would. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "l2mem.h"
#include "l2side.h"
#include "runtime_internal.h"
#include "tidal.h"
#include "tidal_abi.h"
#include "tidal_l2.h"

#include "fake_driver.h"

/* Patterns a parity of block-index bits can be: the H200s' 0xab, call 8's (block 1 beside
 * block 0: no bit 0), the lowest bit high up, one bit only, all bits. */
static const unsigned masks[] = {0xab, 0xaa, 0x1fe, 0x100, 0x001, 0x155, 0x1ff, 0x0c0, 0x002};
#define NMASKS (sizeof masks / sizeof masks[0])

/* ------------------------------------------------------------------ L2 sides */

static int in_set(const tidal_smset *set, unsigned s) { return (int)((set->bits[s >> 6] >> (s & 63)) & 1); }

/* Means like the H200's (docs/vram-channels.md §2): ~300-320 cycles on SM 0's side, ~386-409
 * on the other, whole TPCs (SM pairs) on a side. */
static void h200_like(double *mean, unsigned n)
{
    for (unsigned s = 0; s < n; s++) mean[s] = (s / 2) % 3 == 0 ? 300 + s % 23 : 386 + s % 23;
}

static void test_l2_classify(void **state)
{
    (void)state;
    double mean[132];
    tidal_smset side[2];
    h200_like(mean, 132);
    assert_int_equal(tidal__l2_classify(mean, 132, side), TIDAL_OK);
    for (unsigned s = 0; s < 132; s++) {
        assert_int_equal(in_set(&side[0], s), (s / 2) % 3 == 0);
        assert_int_equal(in_set(&side[1], s), (s / 2) % 3 != 0);
    }
    assert_int_equal(tidal_smset_count(&side[0]) + tidal_smset_count(&side[1]), 132);
    /* side 0 is SM 0's side, also when SM 0 is on the slow one */
    for (unsigned s = 0; s < 132; s++) mean[s] = (s / 2) % 3 == 0 ? 400 : 310;
    assert_int_equal(tidal__l2_classify(mean, 132, side), TIDAL_OK);
    assert_true(in_set(&side[0], 0) && in_set(&side[0], 1) && !in_set(&side[0], 2));
    assert_true(in_set(&side[1], 2) && !in_set(&side[1], 0));
    /* one cluster: no two sides */
    for (unsigned s = 0; s < 132; s++) mean[s] = 300 + s % 30;
    assert_int_equal(tidal__l2_classify(mean, 132, side), TIDAL_ERR_UNSUPPORTED);
    assert_non_null(strstr(tidal_last_error(), "no two L2 sides"));
    /* an SM between the sides: no guess */
    h200_like(mean, 132);
    mean[77] = 352;
    assert_int_equal(tidal__l2_classify(mean, 132, side), TIDAL_ERR_UNSUPPORTED);
    assert_non_null(strstr(tidal_last_error(), "SM 77 reads in 352 cycles"));
    /* an SM that ran no probe block */
    h200_like(mean, 132);
    mean[5] = 0;
    assert_int_equal(tidal__l2_classify(mean, 132, side), TIDAL_ERR_CUDA);
    assert_non_null(strstr(tidal_last_error(), "SM 5 ran no probe block"));
    assert_int_equal(tidal__l2_classify(mean, 0, side), TIDAL_ERR_INVALID);
}

static void test_l2_sides_api(void **state)
{
    (void)state;
    tidal_smset a, b;
    assert_int_equal(tidal_l2_sides(NULL, &b), TIDAL_ERR_INVALID);
    /* the fake driver has no cuModuleLoadData: the status and its text, kept for the
     * next call, and no failing driver call made */
    assert_int_equal(tidal_l2_sides(&a, &b), TIDAL_ERR_NO_DRIVER);
    assert_non_null(strstr(tidal_last_error(), "cuModuleLoadData"));
    assert_int_equal(tidal_l2_sides(&a, &b), TIDAL_ERR_NO_DRIVER);
    assert_non_null(strstr(tidal_last_error(), "cuModuleLoadData"));
    assert_int_equal(fake_errors, 0);
    tidal_shutdown();
    assert_int_equal(tidal_l2_sides(&a, &b), TIDAL_ERR_NOT_INIT);
    assert_int_equal(tidal_init(0), TIDAL_OK);
}

/* The probe kernel on the fake device: SM pairs with (s / 2) % 3 == 0 on SM 0's side. */
static void test_l2_sides_probe(void **state)
{
    (void)state;
    fake_l2_on(0xab);
    tidal_smset a, b;
    assert_int_equal(tidal_l2_sides(&a, &b), TIDAL_OK);
    for (unsigned s = 0; s < NSM; s++) {
        assert_int_equal(in_set(&a, s), fake_sm_side(s) == 0);
        assert_int_equal(in_set(&b, s), fake_sm_side(s) == 1);
    }
    assert_int_equal(fake_errors, 0);
}

/* ------------------------------------------------------------------ the translation */

static void test_l2_set_mask(void **state)
{
    (void)state;
    static const struct {
        unsigned mask, low, pmask;
    } want[] = {{0xab, 0, 0x55},  {0xaa, 1, 0x54},  {0x1fe, 1, 0xfe}, {0x100, 8, 0x00}, {0x001, 0, 0x00},
                {0x155, 0, 0xaa}, {0x1ff, 0, 0xff}, {0x0c0, 6, 0x40}, {0x002, 1, 0x00}};
    for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++) {
        tidal_l2_layout L;
        memset(&L, 0xff, sizeof L);
        assert_int_equal(tidal_l2_set_mask(&L, want[i].mask), 0);
        assert_int_equal(L.mask, want[i].mask);
        assert_int_equal(L.low, want[i].low);
        assert_int_equal(L.pmask, want[i].pmask);
    }
    tidal_l2_layout L;
    memset(&L, 0, sizeof L);
    assert_int_equal(tidal_l2_set_mask(&L, 0), -1);     /* every block on one side */
    assert_int_equal(tidal_l2_set_mask(&L, 0x200), -1); /* beyond a granule's 512 blocks */
    assert_int_equal(L.mask, 0);                        /* left as it was */
}

/* For every mask and flip: each side's half of a granule is 256 whole 4 KiB blocks, each
 * homed on that side, the two halves disjoint and together the granule; every byte offset
 * (not only block starts) lands in its block at its place; the block of pair k is k with
 * a bit inserted at the mask's lowest set bit. */
static void test_l2_translation(void **state)
{
    (void)state;
    for (unsigned mi = 0; mi < NMASKS; mi++) {
        tidal_l2_layout L;
        memset(&L, 0, sizeof L);
        assert_int_equal(tidal_l2_set_mask(&L, masks[mi]), 0);
        for (unsigned flip = 0; flip < 2; flip++) {
            unsigned char used[512];
            memset(used, 0, sizeof used);
            for (unsigned side = 0; side < 2; side++)
                for (uint64_t o = 0; o < (1u << 20); o += 4096) {
                    uint64_t p = tidal_l2_offset(&L, o, side, flip);
                    assert_true(p < (1u << 21));
                    assert_int_equal(p & 4095, 0);
                    unsigned b = (unsigned)(p >> 12), k = (unsigned)(o >> 12);
                    assert_int_equal(tidal_l2_block_side(masks[mi], b, flip), side);
                    assert_int_equal(used[b], 0);
                    used[b] = 1;
                    /* the pair: b without its bit `low` is k, spread around that bit */
                    unsigned below = (1u << L.low) - 1;
                    assert_int_equal(((b >> (L.low + 1)) << L.low) | (b & below), k);
                    /* bytes inside a block stay in it, in order */
                    unsigned byte = (unsigned)((o * 2654435761u) >> 7) & 4095u;
                    assert_int_equal(tidal_l2_offset(&L, o + byte, side, flip), p + byte);
                    assert_int_equal(tidal_l2_offset(&L, o + 4095, side, flip), p + 4095);
                }
            for (unsigned b = 0; b < 512; b++) assert_int_equal(used[b], 1);
        }
        /* granule g of a layout: byte o of the half at base + (g << 21) + ..., g's own flip */
        uint32_t flips[1] = {0x2u}; /* granule 1 flipped */
        L.base = 1u << 30;
        L.flips = (uint64_t)(uintptr_t)flips;
        for (unsigned side = 0; side < 2; side++) {
            uint64_t a0 = tidal_l2_addr(&L, side, 0), a1 = tidal_l2_addr(&L, side, 1u << 20);
            uint64_t a2 = tidal_l2_addr(&L, side, (2u << 20) + 12345);
            assert_int_equal(a0, L.base + tidal_l2_offset(&L, 0, side, 0));
            assert_int_equal(a1, L.base + (1u << 21) + tidal_l2_offset(&L, 0, side, 1));
            assert_int_equal(a2, L.base + (2u << 21) + tidal_l2_offset(&L, 12345, side, 0));
            /* the flip moved the half's first block to the other block of pair 0 */
            assert_int_equal((a1 - L.base - (1u << 21)) ^ (a0 - L.base), (uint64_t)4096 << L.low);
        }
    }
    /* the pattern measured on three H200s (docs/vram-channels.md §2): blocks 0-3 of an
     * unflipped granule on sides 0 1 1 0, bit 8 not in it */
    assert_int_equal(tidal_l2_block_side(0xab, 0, 0), 0);
    assert_int_equal(tidal_l2_block_side(0xab, 1, 0), 1);
    assert_int_equal(tidal_l2_block_side(0xab, 2, 0), 1);
    assert_int_equal(tidal_l2_block_side(0xab, 3, 0), 0);
    assert_int_equal(tidal_l2_block_side(0xab, 256, 1), 1);
    assert_int_equal(tidal_l2_parity(0x1ff), 1);
    assert_int_equal(tidal_l2_parity(0x80000001u), 0);
}

/* ------------------------------------------------------------------ the probe's verdict */

/* Latencies of the probed blocks as a side-1 SM sees them, the side from home(g, b): ~310
 * cycles where side 1 homes the block, ~480 where side 0 does. */
static unsigned cur_mask;
static const unsigned *cur_flip;
static unsigned model_home(unsigned g, unsigned b) { return tidal_l2_block_side(cur_mask, b, cur_flip[g]); }
static void probe_lat(uint16_t *lat, size_t granules, unsigned (*home)(unsigned g, unsigned b))
{
    for (size_t g = 0; g < granules; g++)
        for (unsigned i = 0; i < TIDAL_L2MEM_NPROBE; i++)
            lat[g * TIDAL_L2MEM_NPROBE + i] =
                (uint16_t)(home((unsigned)g, tidal__l2mem_probe_blocks[i]) ? 305 + i % 9 : 478 + i % 7);
}

static void test_l2mem_measure(void **state)
{
    (void)state;
    /* the probed blocks: 0, the basis 2^k, then checks of several bits each */
    assert_int_equal(tidal__l2mem_probe_blocks[0], 0);
    for (unsigned k = 0; k < 9; k++) assert_int_equal(tidal__l2mem_probe_blocks[1 + k], 1u << k);
    for (unsigned i = 10; i < TIDAL_L2MEM_NPROBE; i++) {
        unsigned b = tidal__l2mem_probe_blocks[i];
        assert_true(b < 512 && (b & (b - 1)) != 0);
    }
    unsigned flip[40];
    for (unsigned g = 0; g < 40; g++) flip[g] = (g * 7 + g / 3) & 1;
    cur_flip = flip;
    uint16_t lat[40 * TIDAL_L2MEM_NPROBE];
    uint32_t words[2];
    unsigned mask;
    /* every pattern measured as it is, granule 0 flipped or not */
    for (unsigned mi = 0; mi < NMASKS; mi++)
        for (unsigned f0 = 0; f0 < 2; f0++) {
            cur_mask = masks[mi];
            flip[0] = f0;
            probe_lat(lat, 40, model_home);
            words[0] = words[1] = 0xdeadbeef;
            mask = 0;
            assert_int_equal(tidal__l2mem_measure(lat, 40, words, &mask), TIDAL_OK);
            assert_int_equal(mask, masks[mi]);
            for (unsigned g = 0; g < 40; g++) assert_int_equal(tidal_l2_flip(words, g), flip[g]);
            assert_int_equal(words[1] >> 8, 0); /* bits past the last granule are 0 */
        }
    flip[0] = 0;
    cur_mask = 0xab;
    /* slow samples (a TLB miss, a refresh: here 1 in 16, up to 4000 cycles) on far blocks
     * move neither the threshold nor the result: the middle of the extremes would have put
     * every block on side 1 */
    probe_lat(lat, 40, model_home);
    for (unsigned i = 5; i < 40 * TIDAL_L2MEM_NPROBE; i += 16)
        if (lat[i] > 400) lat[i] = (uint16_t)(1500 + 100 * (i % 26));
    mask = 0;
    assert_int_equal(tidal__l2mem_measure(lat, 40, words, &mask), TIDAL_OK);
    assert_int_equal(mask, 0xab);
    for (unsigned g = 0; g < 40; g++) assert_int_equal(tidal_l2_flip(words, g), flip[g]);
    /* a check block on the other side than the pattern says: refused, with where */
    probe_lat(lat, 40, model_home);
    lat[7 * TIDAL_L2MEM_NPROBE + 11] = lat[7 * TIDAL_L2MEM_NPROBE + 11] < 400 ? 480 : 305;
    assert_int_equal(tidal__l2mem_measure(lat, 40, words, &mask), TIDAL_ERR_UNSUPPORTED);
    assert_non_null(strstr(tidal_last_error(), "granule 7, block 12 "));
    /* a basis block of a later granule that disagrees with granule 0's pattern */
    probe_lat(lat, 40, model_home);
    lat[3 * TIDAL_L2MEM_NPROBE + 3] = lat[3 * TIDAL_L2MEM_NPROBE + 3] < 400 ? 480 : 305;
    assert_int_equal(tidal__l2mem_measure(lat, 40, words, &mask), TIDAL_ERR_UNSUPPORTED);
    assert_non_null(strstr(tidal_last_error(), "granule 3, block 4 "));
    /* granule 0 itself not a parity: its basis gives a mask, its checks refuse it */
    probe_lat(lat, 40, model_home);
    lat[TIDAL_L2MEM_NPROBE - 1] = lat[TIDAL_L2MEM_NPROBE - 1] < 400 ? 480 : 305;
    assert_int_equal(tidal__l2mem_measure(lat, 40, words, &mask), TIDAL_ERR_UNSUPPORTED);
    assert_non_null(strstr(tidal_last_error(), "granule 0, block 426 "));
    assert_non_null(strstr(tidal_last_error(), "mask 0xab"));
    /* every block of a granule on one side (the side a granule's bit): no pattern */
    for (unsigned g = 0; g < 40; g++)
        for (unsigned i = 0; i < TIDAL_L2MEM_NPROBE; i++) lat[g * TIDAL_L2MEM_NPROBE + i] = flip[g] ? 305 : 480;
    assert_int_equal(tidal__l2mem_measure(lat, 40, words, &mask), TIDAL_ERR_UNSUPPORTED);
    assert_non_null(strstr(tidal_last_error(), "no parity"));
    /* one kind of latency: no sides */
    for (unsigned i = 0; i < 40 * TIDAL_L2MEM_NPROBE; i++) lat[i] = 300 + i % 20;
    assert_int_equal(tidal__l2mem_measure(lat, 40, words, &mask), TIDAL_ERR_UNSUPPORTED);
    assert_non_null(strstr(tidal_last_error(), "no two sides"));
    assert_int_equal(tidal__l2mem_measure(lat, 0, words, &mask), TIDAL_ERR_UNSUPPORTED);
}

/* ------------------------------------------------------------------ tidal_l2mem */

static void test_l2mem_api(void **state)
{
    (void)state;
    tidal_l2mem *m = NULL;
    assert_int_equal(tidal_l2mem_create(0, &m), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_l2mem_create(1 << 20, NULL), TIDAL_ERR_INVALID);
    /* the fake driver has no VMM API */
    assert_int_equal(tidal_l2mem_create(1 << 20, &m), TIDAL_ERR_NO_DRIVER);
    assert_non_null(strstr(tidal_last_error(), "VMM"));
    assert_null(m);
    assert_int_equal(fake_errors, 0);
    /* too large: refused before anything is measured, also where rounding up would wrap */
    fake_l2_on(0xab);
    assert_int_equal(tidal_l2mem_create(SIZE_MAX, &m), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_l2mem_create(((size_t)64 << 30) + 1, &m), TIDAL_ERR_INVALID);
    assert_null(m);
    tidal_shutdown();
    assert_int_equal(tidal_l2mem_create(1 << 20, &m), TIDAL_ERR_NOT_INIT);
    assert_int_equal(tidal_init(0), TIDAL_OK);
}

/* On the fake device of each pattern: the layout carries the measured mask and flips, and
 * each half, written through tidal_l2_addr, fills exactly the blocks its side homes. */
static void test_l2mem_create(void **state)
{
    (void)state;
    for (unsigned mi = 0; mi < NMASKS; mi++) {
        fake_l2_on(masks[mi]);
        tidal_l2mem *m = NULL;
        assert_int_equal(tidal_l2mem_create((5u << 20) / 2, &m), TIDAL_OK); /* 2.5 MiB: 3 granules */
        tidal_l2_layout L;
        assert_int_equal(tidal_l2mem_layout(m, &L), TIDAL_OK);
        assert_int_equal(L.granules, 3);
        assert_int_equal(L.per_side, 3u << 20);
        assert_int_equal(L.base % (2u << 20), 0);
        assert_int_equal(L.mask, masks[mi]);
        uint32_t words[1];
        assert_int_equal(tidal_l2mem_flips(m, words, 1), TIDAL_OK);
        assert_int_equal(tidal_l2mem_flips(m, words, 0), TIDAL_ERR_INVALID);
        for (unsigned g = 0; g < 3; g++) assert_int_equal(tidal_l2_flip(words, g), fake_l2_flip(g));
        /* the layout's device words (host memory here) hold the same bits */
        assert_int_equal(*(const uint32_t *)(uintptr_t)L.flips, words[0]);
        for (unsigned side = 0; side < 2; side++)
            for (uint64_t o = 0; o < L.per_side; o += 512)
                *(uint8_t *)(uintptr_t)tidal_l2_addr(&L, side, o) = 0xa0 | side;
        const uint8_t *mem = (const uint8_t *)(uintptr_t)L.base;
        for (unsigned g = 0; g < 3; g++)
            for (unsigned b = 0; b < 512; b++)
                for (unsigned x = 0; x < 4096; x += 512)
                    assert_int_equal(mem[((size_t)g << 21) + ((size_t)b << 12) + x], 0xa0 | fake_l2_home(g, b));
        assert_int_equal(tidal_l2mem_destroy(m), TIDAL_OK);
        assert_int_equal(fake_vmm_handles, 0);
        assert_int_equal(fake_vmm_mapped, 0);
    }
    assert_int_equal(fake_errors, 0);
}

/* A device that homes memory by no parity, or by none at all, or in other granules: refused
 * with where, nothing left mapped. */
static unsigned not_parity_home(unsigned g, unsigned b) { return fake_l2_parity_home(g, b) ^ (g == 1 && b == 48); }
static unsigned granule_home(unsigned g, unsigned b)
{
    (void)b;
    return fake_l2_flip(g);
}

static void test_l2mem_refusals(void **state)
{
    (void)state;
    tidal_l2mem *m = NULL;
    fake_l2_on(0xab);
    fake_l2_home = not_parity_home;
    assert_int_equal(tidal_l2mem_create(3u << 20, &m), TIDAL_ERR_UNSUPPORTED);
    assert_non_null(strstr(tidal_last_error(), "granule 1, block 48 "));
    assert_null(m);
    assert_int_equal(fake_vmm_handles, 0);
    assert_int_equal(fake_vmm_mapped, 0);
    fake_l2_home = granule_home;
    assert_int_equal(tidal_l2mem_create(3u << 20, &m), TIDAL_ERR_UNSUPPORTED);
    assert_non_null(strstr(tidal_last_error(), "no parity"));
    fake_l2_home = fake_l2_parity_home;
    fake_granularity = 64u << 10;
    assert_int_equal(tidal_l2mem_create(3u << 20, &m), TIDAL_ERR_UNSUPPORTED);
    assert_non_null(strstr(tidal_last_error(), "VMM granule is 65536 bytes"));
    assert_null(m);
    assert_int_equal(fake_errors, 0);
}

/* ------------------------------------------------------------------ bimodal tensors */

static void test_bimodal_args(void **state)
{
    (void)state;
    tidal_bimodal *t = NULL;
    uint64_t dev;
    tidal_bimodal_desc d;
    char buf[8] = {0};
    assert_int_equal(tidal_bimodal_create(1 << 20, 0, NULL), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_bimodal_create(0, 0, &t), TIDAL_ERR_INVALID);
    assert_non_null(strstr(tidal_last_error(), "0 bytes"));
    assert_int_equal(tidal_bimodal_create(1 << 20, 2, &t), TIDAL_ERR_INVALID);
    assert_non_null(strstr(tidal_last_error(), "side 2"));
    assert_null(t);
    assert_int_equal(tidal_bimodal_write(NULL, 0, buf, 1), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_bimodal_set(NULL, TIDAL_BIMODAL_SIDE), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_bimodal_desc_addr(NULL, &dev), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_bimodal_desc_get(NULL, &d), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_bimodal_destroy(NULL), TIDAL_ERR_INVALID);
    /* no device-to-device copy, then no VMM API: nothing made */
    fake_l2_on(0xab);
    fake.MemcpyDtoDAsync = NULL;
    assert_int_equal(tidal_bimodal_create(1 << 20, 1, &t), TIDAL_ERR_NO_DRIVER);
    assert_non_null(strstr(tidal_last_error(), "cuMemcpyDtoDAsync"));
    fake.MemcpyDtoDAsync = f_dtod;
    fake.MemCreate = NULL;
    assert_int_equal(tidal_bimodal_create(1 << 20, 1, &t), TIDAL_ERR_NO_DRIVER);
    assert_non_null(strstr(tidal_last_error(), "VMM"));
    assert_null(t);
    /* a device with no pattern: tidal_l2mem's refusal, nothing left */
    fake.MemCreate = f_memcreate;
    fake_l2_home = not_parity_home;
    assert_int_equal(tidal_bimodal_create(3u << 20, 1, &t), TIDAL_ERR_UNSUPPORTED);
    assert_non_null(strstr(tidal_last_error(), "granule 1, block 48 "));
    assert_null(t);
    assert_int_equal(fake_vmm_handles, 0);
    assert_int_equal(fake_errors, 0);
    tidal_shutdown();
    assert_int_equal(tidal_bimodal_create(1 << 20, 0, &t), TIDAL_ERR_NOT_INIT);
    assert_int_equal(tidal_init(0), TIDAL_OK);
}

/* Both copies hold what was written, in pieces that cross 4 KiB blocks and granules; the
 * side copy only in blocks its side homes; the mode word is the descriptor's first and
 * follows tidal_bimodal_set. */
static void test_bimodal(void **state)
{
    (void)state;
    for (unsigned mi = 0; mi < 3; mi++)
        for (unsigned side = 0; side < 2; side++) {
            fake_l2_on(masks[mi]);
            const size_t size = (5u << 20) / 2 + 123; /* 3 granules, the last one partly used */
            tidal_bimodal *t = NULL;
            assert_int_equal(tidal_bimodal_create(size, side, &t), TIDAL_OK);
            uint64_t dev = 0;
            assert_int_equal(tidal_bimodal_desc_addr(t, &dev), TIDAL_OK);
            const tidal_bimodal_desc *d = (const tidal_bimodal_desc *)(uintptr_t)dev;
            assert_int_equal(d->mode, TIDAL_BIMODAL_ALL);
            assert_int_equal(tidal_bimodal_mode(d), TIDAL_BIMODAL_ALL);
            assert_int_equal(d->side, side);
            assert_int_equal(d->size, size);
            assert_int_equal(d->reserved, 0);
            assert_int_equal(d->l2.mask, masks[mi]);
            assert_int_equal(d->l2.granules, 3);
            tidal_bimodal_desc h;
            assert_int_equal(tidal_bimodal_desc_get(t, &h), TIDAL_OK);
            assert_memory_equal(&h, d, sizeof h);
            /* both copies start as zeros */
            for (size_t o = 0; o < size; o += 997) {
                assert_int_equal(*(const uint8_t *)(uintptr_t)tidal_bimodal_addr(d, TIDAL_BIMODAL_ALL, o), 0);
                assert_int_equal(*(const uint8_t *)(uintptr_t)tidal_bimodal_addr(d, TIDAL_BIMODAL_SIDE, o), 0);
            }
            uint8_t *src = malloc(size);
            assert_non_null(src);
            for (size_t i = 0; i < size; i++) src[i] = (uint8_t)((i * 2654435761u) >> 13) | 1;
            const size_t cut[] = {0, 5000, (1u << 20) + 77, (2u << 20) - 1, size};
            for (unsigned c = 0; c + 1 < sizeof cut / sizeof cut[0]; c++)
                assert_int_equal(tidal_bimodal_write(t, cut[c], src + cut[c], cut[c + 1] - cut[c]), TIDAL_OK);
            /* every byte near a 4 KiB edge, a few in between */
            for (size_t o = 0; o < size; o += (o % 4096 < 8 || o % 4096 >= 4088) ? 1 : 61) {
                uint64_t a = tidal_bimodal_addr(d, TIDAL_BIMODAL_ALL, o),
                         s = tidal_bimodal_addr(d, TIDAL_BIMODAL_SIDE, o);
                assert_int_equal(*(const uint8_t *)(uintptr_t)a, src[o]);
                assert_int_equal(*(const uint8_t *)(uintptr_t)s, src[o]);
                uint64_t off = s - d->l2.base;
                assert_int_equal(fake_l2_home((unsigned)(off >> 21), (unsigned)(off >> 12) & 511), side);
            }
            /* the mode word */
            assert_int_equal(tidal_bimodal_set(t, TIDAL_BIMODAL_SIDE), TIDAL_OK);
            assert_int_equal(tidal_bimodal_mode(d), TIDAL_BIMODAL_SIDE);
            assert_int_equal(tidal_bimodal_desc_get(t, &h), TIDAL_OK);
            assert_int_equal(h.mode, TIDAL_BIMODAL_SIDE);
            assert_int_equal(tidal_bimodal_set(t, 2), TIDAL_ERR_INVALID);
            assert_non_null(strstr(tidal_last_error(), "mode 2"));
            assert_int_equal(tidal_bimodal_mode(d), TIDAL_BIMODAL_SIDE);
            assert_int_equal(tidal_bimodal_set(t, TIDAL_BIMODAL_ALL), TIDAL_OK);
            assert_int_equal(tidal_bimodal_mode(d), TIDAL_BIMODAL_ALL);
            /* writes outside the tensor: refused, nothing written */
            assert_int_equal(tidal_bimodal_write(t, size - 1, src, 2), TIDAL_ERR_INVALID);
            assert_non_null(strstr(tidal_last_error(), "the tensor has"));
            assert_int_equal(tidal_bimodal_write(t, 1, src, SIZE_MAX), TIDAL_ERR_INVALID);
            assert_int_equal(tidal_bimodal_write(t, size + 1, src, 0), TIDAL_ERR_INVALID);
            assert_int_equal(tidal_bimodal_write(t, 0, NULL, 1), TIDAL_ERR_INVALID);
            assert_int_equal(tidal_bimodal_write(t, size, NULL, 0), TIDAL_OK);
            assert_int_equal(*(const uint8_t *)(uintptr_t)tidal_bimodal_addr(d, TIDAL_BIMODAL_ALL, size - 1),
                             src[size - 1]);
            free(src);
            assert_int_equal(tidal_bimodal_destroy(t), TIDAL_OK);
            assert_int_equal(fake_vmm_handles, 0);
            assert_int_equal(fake_vmm_mapped, 0);
        }
    assert_int_equal(fake_errors, 0);
}

/* ------------------------------------------------------------------ l2addr words */

/* A module the l2addr pass translated: kernel scale's parameter 2 has its 40-byte word,
 * kernel odd's parameter 0 a word of another size; everything else is not there. */
static int l2addr_mod;
static unsigned char l2addr_word[40], l2addr_odd[32];
static CUresult l2addr_global(CUdeviceptr *p, size_t *n, CUmodule m, const char *name)
{
    if (m != (CUmodule)&l2addr_mod) return f_global(p, n, m, name);
    if (strcmp(name, TIDAL_L2ADDR_SYMBOL_PREFIX "2_scale") == 0) {
        *p = (CUdeviceptr)l2addr_word;
        *n = sizeof l2addr_word;
        return CUDA_SUCCESS;
    }
    if (strcmp(name, TIDAL_L2ADDR_SYMBOL_PREFIX "0_odd") == 0) {
        *p = (CUdeviceptr)l2addr_odd;
        *n = sizeof l2addr_odd;
        return CUDA_SUCCESS;
    }
    return fake_fail("cuModuleGetGlobal", CUDA_ERROR_NOT_FOUND);
}

static void test_l2addr_attach(void **state)
{
    (void)state;
    fake_l2_on(0xab);
    tidal_l2mem *m;
    assert_int_equal(tidal_l2mem_create(4 << 20, &m), TIDAL_OK);
    tidal_l2_layout L;
    assert_int_equal(tidal_l2mem_layout(m, &L), TIDAL_OK);
    fake.ModuleGetGlobal = l2addr_global;
    memset(l2addr_word, 0, sizeof l2addr_word);

    /* the slot: the layout (device flips), the side, nothing else; base = byte 0 of the half */
    uint64_t base = 1;
    assert_int_equal(tidal_l2addr_attach(&l2addr_mod, "scale", 2, m, 1, &base), TIDAL_OK);
    tidal_l2addr_slot w;
    memcpy(&w, l2addr_word, sizeof w);
    assert_memory_equal(&w.l2, &L, sizeof L);
    assert_int_equal(w.side, 1);
    assert_int_equal(w.reserved, 0);
    assert_true(base == L.base && base != 0);
    /* what a translated kernel does with it: parameter = base, byte o -> byte o of side 1's half */
    uint32_t flips[4];
    assert_int_equal(tidal_l2mem_flips(m, flips, 4), TIDAL_OK);
    tidal_l2_layout H = w.l2;
    H.flips = (uint64_t)(uintptr_t)flips;
    for (uint64_t o = 0; o < L.per_side; o += 4096 + 8) {
        uint64_t a = tidal_l2_addr(&H, w.side, o) - L.base;
        assert_int_equal(fake_l2_home((unsigned)(a >> 21), (unsigned)(a >> 12) & 511u), 1); /* on side 1 */
    }

    /* cleared: all zero again, the kernel untranslated */
    assert_int_equal(tidal_l2addr_attach(&l2addr_mod, "scale", 2, NULL, 0, &base), TIDAL_OK);
    static const unsigned char zero[40];
    assert_memory_equal(l2addr_word, zero, sizeof zero);
    assert_true(base == 0);

    /* a parameter or kernel the pass did not translate: named in the error */
    assert_int_equal(tidal_l2addr_attach(&l2addr_mod, "scale", 1, m, 0, &base), TIDAL_ERR_NOT_REWRITTEN);
    assert_non_null(strstr(tidal_last_error(), TIDAL_L2ADDR_SYMBOL_PREFIX "1_scale"));
    assert_int_equal(tidal_l2addr_attach(&l2addr_mod, "other", 2, m, 0, &base), TIDAL_ERR_NOT_REWRITTEN);
    assert_true(base == 0);
    assert_int_equal(tidal_l2addr_attach(&l2addr_mod, "odd", 0, m, 0, NULL), TIDAL_ERR_INVALID);
    assert_non_null(strstr(tidal_last_error(), "32 bytes"));
    /* bad arguments: nothing looked up */
    fake_errors = 0;
    assert_int_equal(tidal_l2addr_attach(&l2addr_mod, "scale", 2, m, 2, &base), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_l2addr_attach(NULL, "scale", 2, m, 0, &base), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_l2addr_attach(&l2addr_mod, NULL, 2, m, 0, &base), TIDAL_ERR_INVALID);
    assert_int_equal(tidal_l2addr_attach(&l2addr_mod, "", 2, m, 0, &base), TIDAL_ERR_INVALID);
    assert_int_equal(fake_errors, 0);
    memset(l2addr_word, 0, sizeof l2addr_word);
    assert_int_equal(tidal_l2addr_attach(&l2addr_mod, "scale", 2, m, 0, NULL), TIDAL_OK);
    memcpy(&w, l2addr_word, sizeof w);
    assert_int_equal(w.side, 0);
    fake.ModuleGetGlobal = f_global;
    assert_int_equal(tidal_l2mem_destroy(m), TIDAL_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_l2_classify),
        cmocka_unit_test_setup_teardown(test_l2_sides_api, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_l2_sides_probe, fake_setup, fake_teardown),
        cmocka_unit_test(test_l2_set_mask),
        cmocka_unit_test(test_l2_translation),
        cmocka_unit_test(test_l2mem_measure),
        cmocka_unit_test_setup_teardown(test_l2mem_api, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_l2mem_create, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_l2mem_refusals, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_bimodal_args, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_bimodal, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_l2addr_attach, fake_setup, fake_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
