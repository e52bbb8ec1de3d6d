/* l2mem.c — memory homed on one L2 side (abi/tidal_l2.h, docs/runtime.md "Memory homed on
 * one L2 side").
 *
 * No allocation of whole 2 MiB granules is on one side: each granule alternates sides by
 * 4 KiB block, in a pattern that is the same parity of the block index on every granule,
 * up to one bit per granule (flip) that comes from the granule's physical address, which
 * user space does not see (docs/vram-channels.md §2). Which block-index bits the parity
 * takes (the mask) differs between H200s, so it is measured too. A tidal_l2mem maps
 * granules of its own with the VMM API and probes each one: one SM of side 0 loads sixteen
 * blocks of every granule, one SM of side 1 then times them: a block homed on side 1 is an
 * L2 hit on its own side (~310 cycles), one homed on side 0 comes across (~480). A block's
 * time is the fastest of four of its lines, after an untimed load that warms the timer's
 * TLB for the granule, and the two kinds are told apart at the middle of the 10th and 90th
 * percentiles: one slow sample per block against the middle of the extremes made a
 * session-15 H200 refuse in two different places in two processes. Blocks 0
 * and 2^k of granule 0 give the mask bit by bit, block 0 of each granule its flip; every
 * other probed block must agree with the model, or the device does not home memory by a
 * parity of the block index and creation fails. Kernels address the two halves with
 * tidal_l2_addr. Called with the lock held. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "l2mem.h"
#include "l2side.h"
#include "tidal_abi.h"
#include "tidal_l2.h"

#define GRANULE ((size_t)1 << TIDAL_L2_GRANULE_SHIFT)
#define MIN_GAP 40.0 /* cycles between a near and a far L2 hit, or no sides are told apart */
#define SPIN_NS 200000000ull
#define MAX_GRANULES 65536 /* 64 GiB a side */

/* Block 0 and the basis 2^k give the pattern; the six checks each combine bits of it (two
 * neighbours at four places, every other bit twice), where a pattern that is not a parity
 * would show. */
const unsigned tidal__l2mem_probe_blocks[TIDAL_L2MEM_NPROBE] = {0,   1,   2, 4,  8,  16,  32,    64,
                                                                128, 256, 3, 12, 48, 192, 0x155, 0x1aa};
#define NPROBE TIDAL_L2MEM_NPROBE
#define NBASIS 10 /* block 0, then 2^k for k = 0..8 */

struct tidal_l2mem {
    CUdeviceptr base;
    size_t granules;
    CUmemGenericAllocationHandle *handles;
    size_t mapped; /* granules mapped so far (teardown of a failed create) */
    CUdeviceptr flips_dev;
    uint32_t *flips; /* host copy */
    unsigned mask;   /* the device's pattern, as measured on these granules */
};

/* probe_ptx's loader and timer loops load the same blocks: %rd10 = the address of probe
 * %r9's block (its index at ctl+16+4*%r9, 4 KiB a block) in granule %r8 (2 MiB a granule) */
#define PROBE_BLOCK_ADDR                    \
    "\tmul.wide.u32 %rd9, %r9, 4;\n"        \
    "\tadd.u64 %rd9, %rd1, %rd9;\n"         \
    "\tld.global.u32 %r10, [%rd9+16];\n"    \
    "\tmul.wide.u32 %rd10, %r8, 2097152;\n" \
    "\tmul.wide.u32 %rd11, %r10, 4096;\n"   \
    "\tadd.u64 %rd10, %rd10, %rd11;\n"      \
    "\tadd.u64 %rd10, %rd0, %rd10;\n"

/* ctl: +0 loader claim, +4 loaded flag, +8 timer claim, +12 timed flag; +16 the probed block
 * indices (u32 x NPROBE). lat: u16 per (granule, probe). side0: the SM set of side 0. */
static const char probe_ptx[] =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".extern .shared .align 16 .b8 tidal_l2m_smem[];\n"
    ".visible .entry tidal_l2mem_probe(.param .u64 base, .param .u64 ctl, .param .u64 lat, .param .u32 granules,\n"
    "    .param .u32 nprobe, .param .u64 s0, .param .u64 s1, .param .u64 s2, .param .u64 s3, .param .u64 zero,\n"
    "    .param .u64 spin)\n"
    "{\n"
    "\t.reg .pred %p<4>;\n"
    "\t.reg .b32 %r<20>;\n"
    "\t.reg .b64 %rd<32>;\n"
    "\tmov.u32 %r0, %tid.x;\n"
    "\tsetp.ne.u32 %p0, %r0, 0;\n"
    "\t@%p0 bra DONE;\n"
    "\tmov.u32 %r1, %smid;\n"
    "\tld.param.u64 %rd0, [base];\n"
    "\tld.param.u64 %rd1, [ctl];\n"
    "\tld.param.u64 %rd2, [lat];\n"
    "\tld.param.u32 %r2, [granules];\n"
    "\tld.param.u32 %r3, [nprobe];\n"
    "\tld.param.u64 %rd3, [zero];\n"
    "\tld.param.u64 %rd4, [spin];\n"
    /* is this SM on side 0: bit smid of s0..s3 */
    "\tshr.u32 %r4, %r1, 6;\n"
    "\tld.param.u64 %rd5, [s0];\n"
    "\tsetp.eq.u32 %p1, %r4, 1;\n"
    "\tld.param.u64 %rd6, [s1];\n"
    "\tselp.b64 %rd5, %rd6, %rd5, %p1;\n"
    "\tsetp.eq.u32 %p1, %r4, 2;\n"
    "\tld.param.u64 %rd6, [s2];\n"
    "\tselp.b64 %rd5, %rd6, %rd5, %p1;\n"
    "\tsetp.eq.u32 %p1, %r4, 3;\n"
    "\tld.param.u64 %rd6, [s3];\n"
    "\tselp.b64 %rd5, %rd6, %rd5, %p1;\n"
    "\tand.b32 %r5, %r1, 63;\n"
    "\tshr.u64 %rd5, %rd5, %r5;\n"
    "\tand.b64 %rd5, %rd5, 1;\n"
    "\tsetp.eq.u64 %p1, %rd5, 1;\n"
    "\t@%p1 bra LOADER;\n"
    /* side 1: the first block there times */
    "\tatom.global.cas.b32 %r6, [%rd1+8], 0, 1;\n"
    "\tsetp.ne.u32 %p2, %r6, 0;\n"
    "\t@%p2 bra DONE;\n"
    "\tmov.u64 %rd7, %globaltimer;\n"
    "SPIN:\n"
    "\tld.volatile.global.u32 %r7, [%rd1+4];\n"
    "\tsetp.ne.u32 %p2, %r7, 0;\n"
    "\t@%p2 bra TIME;\n"
    "\tmov.u64 %rd8, %globaltimer;\n"
    "\tsub.u64 %rd8, %rd8, %rd7;\n"
    "\tsetp.lt.u64 %p3, %rd8, %rd4;\n"
    "\t@%p3 bra SPIN;\n"
    "\tbra DONE;\n"
    "TIME:\n"
    "\tmov.u32 %r8, 0;\n" /* granule */
    "TG:\n"
    "\tsetp.ge.u32 %p2, %r8, %r2;\n"
    "\t@%p2 bra TIMED;\n"
    /* an untimed load of the granule's last block (never probed) first: the granule's
     * first timed load would otherwise pay this SM's TLB miss */
    "\tmul.wide.u32 %rd19, %r8, 2097152;\n"
    "\tadd.u64 %rd19, %rd0, %rd19;\n"
    "\tld.global.cg.u32 %r16, [%rd19+2093056];\n"
    "\tst.volatile.shared.u32 [tidal_l2m_smem], %r16;\n"
    "\tmov.u32 %r9, 0;\n" /* probe */
    "TP:\n"
    "\tsetp.ge.u32 %p2, %r9, %r3;\n"
    "\t@%p2 bra TGN;\n" PROBE_BLOCK_ADDR
    /* PROBE_LINES lines of the block (one side homes all of it), the fastest kept */
    "\tmov.u64 %rd16, 65535;\n"
    "\tmov.u32 %r15, 0;\n"
    "TL:\n"
    "\tmul.wide.u32 %rd17, %r15, 1024;\n"
    "\tadd.u64 %rd17, %rd10, %rd17;\n"
    "\tmov.u64 %rd12, %clock64;\n"
    "\tand.b64 %rd13, %rd12, %rd3;\n"
    "\tadd.u64 %rd13, %rd17, %rd13;\n"
    "\tld.global.cg.u32 %r11, [%rd13];\n"
    "\tst.volatile.shared.u32 [tidal_l2m_smem], %r11;\n"
    "\tmov.u64 %rd14, %clock64;\n"
    "\tsub.u64 %rd14, %rd14, %rd12;\n"
    "\tmin.u64 %rd16, %rd16, %rd14;\n"
    "\tadd.u32 %r15, %r15, 1;\n"
    "\tsetp.lt.u32 %p3, %r15, 4;\n"
    "\t@%p3 bra TL;\n"
    "\tmov.u64 %rd14, %rd16;\n"
    "\tmad.lo.u32 %r12, %r8, %r3, %r9;\n"
    "\tmul.wide.u32 %rd15, %r12, 2;\n"
    "\tadd.u64 %rd15, %rd2, %rd15;\n"
    "\tcvt.u32.u64 %r13, %rd14;\n"
    "\tst.global.u16 [%rd15], %r13;\n"
    "\tadd.u32 %r9, %r9, 1;\n"
    "\tbra TP;\n"
    "TGN:\n"
    "\tadd.u32 %r8, %r8, 1;\n"
    "\tbra TG;\n"
    "TIMED:\n"
    "\tmembar.gl;\n"
    "\tmov.u32 %r14, 1;\n"
    "\tst.volatile.global.u32 [%rd1+12], %r14;\n"
    "\tbra DONE;\n"
    /* side 0: the first block there loads every probed block */
    "LOADER:\n"
    "\tatom.global.cas.b32 %r6, [%rd1], 0, 1;\n"
    "\tsetp.ne.u32 %p2, %r6, 0;\n"
    "\t@%p2 bra DONE;\n"
    "\tmov.u32 %r8, 0;\n"
    "LG:\n"
    "\tsetp.ge.u32 %p2, %r8, %r2;\n"
    "\t@%p2 bra LOADED;\n"
    "\tmov.u32 %r9, 0;\n"
    "LP:\n"
    "\tsetp.ge.u32 %p2, %r9, %r3;\n"
    "\t@%p2 bra LGN;\n" PROBE_BLOCK_ADDR "\tmov.u32 %r15, 0;\n"
    "LL:\n"
    "\tmul.wide.u32 %rd17, %r15, 1024;\n"
    "\tadd.u64 %rd17, %rd10, %rd17;\n"
    "\tld.global.cg.u32 %r11, [%rd17];\n"
    "\tst.volatile.shared.u32 [tidal_l2m_smem], %r11;\n"
    "\tadd.u32 %r15, %r15, 1;\n"
    "\tsetp.lt.u32 %p3, %r15, 4;\n"
    "\t@%p3 bra LL;\n"
    "\tadd.u32 %r9, %r9, 1;\n"
    "\tbra LP;\n"
    "LGN:\n"
    "\tadd.u32 %r8, %r8, 1;\n"
    "\tbra LG;\n"
    "LOADED:\n"
    "\tmembar.gl;\n"
    "\tmov.u32 %r14, 1;\n"
    "\tst.volatile.global.u32 [%rd1+4], %r14;\n"
    "DONE:\n"
    "\tret;\n"
    "}\n";

/* Unmap and free what create made so far. */
static void release(struct tidal_l2mem *m)
{
    const tidal_cu *cu = tidal__cu();
    if (m->flips_dev) cu->MemFree(m->flips_dev);
    for (size_t g = 0; g < m->mapped; g++) cu->MemUnmap(m->base + g * GRANULE, GRANULE);
    if (m->handles)
        for (size_t g = 0; g < m->granules; g++)
            if (m->handles[g]) cu->MemRelease(m->handles[g]);
    if (m->base) cu->MemAddressFree(m->base, m->granules * GRANULE);
    free(m->handles);
    free(m->flips);
    free(m);
}

static int map_granules(struct tidal_l2mem *m)
{
    const tidal_cu *cu = tidal__cu();
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = tidal__device_id();
    size_t gran = 0;
    CU_TRY(cu->MemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
           "cuMemGetAllocationGranularity");
    if (gran != GRANULE)
        return tidal__fail(TIDAL_ERR_UNSUPPORTED,
                           "memory homed on one L2 side: the VMM granule is %zu bytes, the "
                           "side model is for 2 MiB granules",
                           gran);
    CU_TRY(cu->MemAddressReserve(&m->base, m->granules * GRANULE, GRANULE, 0, 0), "cuMemAddressReserve");
    for (size_t g = 0; g < m->granules; g++) {
        CU_TRY(cu->MemCreate(&m->handles[g], GRANULE, &prop, 0), "cuMemCreate");
        CU_TRY(cu->MemMap(m->base + g * GRANULE, GRANULE, 0, m->handles[g], 0), "cuMemMap");
        m->mapped = g + 1;
    }
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_TRY(cu->MemSetAccess(m->base, m->granules * GRANULE, &acc, 1), "cuMemSetAccess");
    return TIDAL_OK;
}

/* The pattern and the flips from the probe's latencies (lat[g * NPROBE + i], cycles): a
 * block homed on the timer's side (1) is the faster kind. Pure (the unit tests call it). */
static int cmp_u16(const void *a, const void *b) { return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b; }

int tidal__l2mem_measure(const uint16_t *lat, size_t granules, uint32_t *flips, unsigned *mask)
{
    /* The two kinds from the 10th and 90th percentiles, not from the extremes: a few slow
     * samples (a TLB miss, a refresh) would otherwise carry the midpoint past the far kind
     * and put far blocks on the near side. Each kind is about half of the blocks. */
    size_t n = granules * NPROBE;
    uint16_t *sorted = n ? malloc(n * sizeof *sorted) : NULL;
    if (n && !sorted) return tidal__fail(TIDAL_ERR_NO_MEMORY, "L2 memory probe");
    double lo = 0, hi = 0;
    if (n) {
        memcpy(sorted, lat, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, cmp_u16);
        lo = sorted[n / 10];
        hi = sorted[n - 1 - n / 10];
    }
    free(sorted);
    if (!granules || hi - lo < MIN_GAP)
        return tidal__fail(TIDAL_ERR_UNSUPPORTED,
                           "memory homed on one L2 side: the probed blocks read in %.0f-%.0f cycles from side 1 "
                           "(10th-90th percentile): no two sides told apart",
                           lo, hi);
    double mid = (lo + hi) / 2;
    /* the mask from granule 0: bit k = side(2^k) ^ side(0), the flip cancelling out */
    unsigned m = 0, s0 = lat[0] < mid ? 1u : 0u;
    for (unsigned i = 1; i < NBASIS; i++) m |= ((lat[i] < mid ? 1u : 0u) ^ s0) << (i - 1);
    if (m == 0)
        return tidal__fail(TIDAL_ERR_UNSUPPORTED,
                           "memory homed on one L2 side: blocks 0, 1, 2, 4, ..., 256 of granule 0 are all on side "
                           "%u: the side is no parity of the block index (no pattern to home memory by)",
                           s0);
    memset(flips, 0, (granules + 31) / 32 * sizeof *flips);
    for (size_t g = 0; g < granules; g++) {
        const uint16_t *l = lat + g * NPROBE;
        unsigned flip = l[0] < mid ? 1u : 0u; /* block 0's side is the flip */
        for (unsigned i = 0; i < NPROBE; i++) {
            unsigned side = l[i] < mid ? 1u : 0u, b = tidal__l2mem_probe_blocks[i];
            if (side != tidal_l2_block_side(m, b, flip))
                return tidal__fail(TIDAL_ERR_UNSUPPORTED,
                                   "memory homed on one L2 side: granule %zu, block %u is on side %u (%u cycles), the "
                                   "pattern measured on granule 0 (block-index mask 0x%x, docs/vram-channels.md §2) "
                                   "puts it on side %u: this device homes memory in another way",
                                   g, b, side, l[i], m, side ^ 1u);
        }
        flips[g / 32] |= flip << (g % 32);
    }
    *mask = m;
    return TIDAL_OK;
}

static int probe_flips(struct tidal_l2mem *m, const tidal_smset *side0)
{
    const tidal_cu *cu = tidal__cu();
    const unsigned nsm = tidal__nsm();
    int optin = 0;
    CU_TRY(cu->DeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, tidal__device_id()),
           "L2 memory probe: shared memory per block");
    size_t nlat = m->granules * NPROBE;
    uint16_t *lat = malloc(nlat * sizeof *lat);
    if (!lat) return tidal__fail(TIDAL_ERR_NO_MEMORY, "L2 memory probe");
    CUmodule mod = NULL;
    CUfunction f = NULL;
    CUdeviceptr ctl = 0, dlat = 0;
    CUstream st = NULL;
    CUresult r = cu->ModuleLoadData(&mod, probe_ptx);
    if (r == CUDA_SUCCESS) r = cu->ModuleGetFunction(&f, mod, "tidal_l2mem_probe");
    if (r == CUDA_SUCCESS) r = cu->FuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin);
    if (r == CUDA_SUCCESS) r = cu->MemAlloc(&ctl, 16 + 4 * NPROBE);
    if (r == CUDA_SUCCESS) r = cu->MemAlloc(&dlat, nlat * sizeof *lat);
    if (r == CUDA_SUCCESS) r = cu->StreamCreate(&st, CU_STREAM_NON_BLOCKING);
    unsigned char hctl[16 + 4 * NPROBE];
    memset(hctl, 0, sizeof hctl);
    memcpy(hctl + 16, tidal__l2mem_probe_blocks, sizeof tidal__l2mem_probe_blocks);
    if (r == CUDA_SUCCESS) r = cu->MemcpyHtoDAsync(ctl, hctl, sizeof hctl, st);
    if (r == CUDA_SUCCESS) r = cu->MemsetD8Async(dlat, 0, nlat * sizeof *lat, st);
    if (r == CUDA_SUCCESS) {
        unsigned g = (unsigned)m->granules, np = NPROBE;
        uint64_t s[4] = {side0->bits[0], side0->bits[1], side0->bits[2], side0->bits[3]}, zero = 0, spin = SPIN_NS;
        void *args[] = {&m->base, &ctl, &dlat, &g, &np, &s[0], &s[1], &s[2], &s[3], &zero, &spin};
        r = cu->LaunchKernel(f, nsm, 1, 1, 32, 1, 1, (unsigned)optin, st, args, NULL);
    }
    if (r == CUDA_SUCCESS) r = cu->MemcpyDtoHAsync(hctl, ctl, 16, st);
    if (r == CUDA_SUCCESS) r = cu->MemcpyDtoHAsync(lat, dlat, nlat * sizeof *lat, st);
    if (r == CUDA_SUCCESS) r = cu->StreamSynchronize(st);
    int status = r == CUDA_SUCCESS ? TIDAL_OK : tidal__cuda_fail(r, "L2 memory probe");
    uint32_t timed = 0;
    memcpy(&timed, hctl + 12, 4);
    if (!status && !timed)
        status = tidal__fail(TIDAL_ERR_CUDA, "L2 memory probe: no SM of side 1 timed the blocks (the device is busy?)");
    if (!status) status = tidal__l2mem_measure(lat, m->granules, m->flips, &m->mask);
    if (st) cu->StreamDestroy(st);
    if (dlat) cu->MemFree(dlat);
    if (ctl) cu->MemFree(ctl);
    if (mod) cu->ModuleUnload(mod);
    free(lat);
    return status;
}

int tidal__l2mem_create_locked(size_t per_side, struct tidal_l2mem **out)
{
    const tidal_cu *cu = tidal__cu();
    /* compared before rounding up: per_side near SIZE_MAX must not wrap to a few granules */
    if (per_side > (size_t)MAX_GRANULES * (GRANULE / 2))
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_l2mem_create: %zu bytes a side (at most %zu)", per_side,
                           (size_t)MAX_GRANULES * (GRANULE / 2));
    if (!cu->MemCreate || !cu->MemMap || !cu->MemAddressReserve || !cu->MemSetAccess || !cu->MemUnmap ||
        !cu->MemRelease || !cu->MemAddressFree || !cu->MemGetAllocationGranularity || !cu->ModuleLoadData ||
        !cu->ModuleUnload)
        return tidal__fail(TIDAL_ERR_NO_DRIVER, "memory homed on one L2 side: the driver has no VMM API");
    tidal_smset side[2];
    int st = tidal__l2_sides_get(side);
    if (st) return st;
    size_t granules = (per_side + (GRANULE / 2) - 1) / (GRANULE / 2);
    struct tidal_l2mem *m = calloc(1, sizeof *m);
    if (m) {
        m->granules = granules;
        m->handles = calloc(granules, sizeof *m->handles);
        m->flips = calloc((granules + 31) / 32, sizeof *m->flips);
    }
    if (!m || !m->handles || !m->flips) {
        if (m) release(m);
        return tidal__fail(TIDAL_ERR_NO_MEMORY, "tidal_l2mem_create");
    }
    st = map_granules(m);
    if (!st) st = probe_flips(m, &side[0]);
    CUresult r = CUDA_SUCCESS;
    size_t fbytes = (granules + 31) / 32 * sizeof *m->flips;
    if (!st) r = cu->MemAlloc(&m->flips_dev, fbytes);
    if (!st && r == CUDA_SUCCESS) r = cu->MemcpyHtoDAsync(m->flips_dev, m->flips, fbytes, tidal__ctl_stream());
    if (!st && r == CUDA_SUCCESS) r = cu->StreamSynchronize(tidal__ctl_stream());
    if (!st && r != CUDA_SUCCESS) st = tidal__cuda_fail(r, "tidal_l2mem_create: flip bits");
    if (st) {
        release(m);
        return st;
    }
    tidal__log("L2 memory: %zu granules at 0x%llx, %zu MiB a side, block-index mask 0x%x", granules,
               (unsigned long long)m->base, granules, m->mask);
    *out = m;
    return TIDAL_OK;
}

int tidal_l2mem_create(size_t per_side, tidal_l2mem **out)
{
    if (!out || !per_side) return tidal__fail(TIDAL_ERR_INVALID, "tidal_l2mem_create: NULL or 0 bytes");
    tidal__lock();
    NEED_INIT("tidal_l2mem_create");
    tidal__call saved = tidal__ctx_enter();
    int st = tidal__l2mem_create_locked(per_side, out);
    tidal__ctx_leave(saved);
    tidal__unlock();
    return st;
}

int tidal_l2mem_layout(const tidal_l2mem *m, tidal_l2_layout *out)
{
    if (!m || !out) return tidal__fail(TIDAL_ERR_INVALID, "tidal_l2mem_layout: NULL");
    memset(out, 0, sizeof *out);
    out->base = m->base;
    out->flips = m->flips_dev;
    out->per_side = (uint64_t)m->granules * (GRANULE / 2);
    out->granules = (uint32_t)m->granules;
    if (tidal_l2_set_mask(out, m->mask)) /* measure() refused every other mask */
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_l2mem_layout: mask 0x%x", m->mask);
    return TIDAL_OK;
}

int tidal_l2mem_flips(const tidal_l2mem *m, uint32_t *words, size_t nwords)
{
    if (!m || !words || nwords < (m->granules + 31) / 32)
        return tidal__fail(TIDAL_ERR_INVALID, "tidal_l2mem_flips: NULL or fewer than %zu words",
                           m ? (m->granules + 31) / 32 : 0);
    memcpy(words, m->flips, (m->granules + 31) / 32 * sizeof *words);
    return TIDAL_OK;
}

void tidal__l2mem_destroy_locked(tidal_l2mem *m)
{
    tidal__cu()->StreamSynchronize(tidal__ctl_stream());
    release(m);
}

int tidal_l2mem_destroy(tidal_l2mem *m)
{
    if (!m) return tidal__fail(TIDAL_ERR_INVALID, "tidal_l2mem_destroy: NULL");
    tidal__lock();
    NEED_INIT("tidal_l2mem_destroy");
    tidal__call saved = tidal__ctx_enter();
    tidal__l2mem_destroy_locked(m);
    tidal__ctx_leave(saved);
    tidal__unlock();
    return TIDAL_OK;
}
