/* l2side.c — placement: the two halves of the L2 and which SMs cache in which
 * (docs/vram-channels.md §2, docs/runtime.md "L2 sides").
 *
 * On the H200 the L2 is two partitions; an SM reads through the one of its side, and a
 * line homed on the other side comes across (484 vs 307 cycles for an L2 hit). Which SMs
 * are on which side is not in the API and differs between GPUs of one model (three
 * machines, three maps), so it is measured, once per process: one block per SM (each asks
 * for all the shared memory a block may have), the first to arrive loads every SM's lines
 * into the L2, and then every SM times L2 hits on lines of its own (4 KiB apart: half of
 * them homed on each side). An SM on the loader's side hits its side's copy every time;
 * one on the other side pays the trip for half its lines (call 2: 300-323 vs 386-409
 * cycles on average). Lines are per SM because an SM's own read leaves a copy on its side.
 * Called with the lock held. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "l2side.h"
#include "tidal_abi.h"

#define LINES_PER_SM 32
#define LINE_STRIDE 4096u /* the side's grain: aligned 4 KiB blocks are on one side */
#define MIN_GAP 40.0      /* cycles between the sides' mean latencies, or there are not two */
#define SPIN_NS 200000000ull
#define ATTEMPTS 3

/* The control block the probe shares with the host (zeroed before a launch):
 *   +0 arrivals  +4 loaded flag  +8 loader's %smid  +16 claimed[256] (u32)
 *   +1040 sum[256] (u64: the SM's summed latencies + 1; 0 = not measured) */
#define CTL_CLAIMED 16
#define CTL_SUM TIDAL_L2SIDE_CTL_SUM
#define CTL_BYTES (CTL_SUM + 8 * TIDAL_MAX_SMS)

static const char probe_ptx[] =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".extern .shared .align 16 .b8 tidal_l2_smem[];\n"
    ".visible .entry tidal_l2side_probe(.param .u64 buf, .param .u64 ctl, .param .u32 k, .param .u32 nsm,\n"
    "                                   .param .u64 zero, .param .u64 spin)\n"
    "{\n"
    "\t.reg .pred %p<4>;\n"
    "\t.reg .b32 %r<16>;\n"
    "\t.reg .b64 %rd<24>;\n"
    "\tmov.u32 %r0, %tid.x;\n"
    "\tsetp.ne.u32 %p0, %r0, 0;\n"
    "\t@%p0 bra DONE;\n"
    "\tmov.u32 %r1, %smid;\n"
    "\tld.param.u64 %rd0, [buf];\n"
    "\tld.param.u64 %rd1, [ctl];\n"
    "\tld.param.u32 %r2, [k];\n"
    "\tld.param.u32 %r3, [nsm];\n"
    "\tld.param.u64 %rd2, [zero];\n"
    "\tld.param.u64 %rd3, [spin];\n"
    /* one block per SM measures: a later block on an SM that already has one leaves */
    "\tmul.wide.u32 %rd4, %r1, 4;\n"
    "\tadd.u64 %rd5, %rd1, 16;\n"
    "\tadd.u64 %rd5, %rd5, %rd4;\n"
    "\tatom.global.exch.b32 %r4, [%rd5], 1;\n"
    "\tsetp.ne.u32 %p1, %r4, 0;\n"
    "\t@%p1 bra DONE;\n"
    /* the first block to arrive loads every SM's lines */
    "\tatom.global.add.u32 %r5, [%rd1], 1;\n"
    "\tsetp.ne.u32 %p1, %r5, 0;\n"
    "\t@%p1 bra WAIT;\n"
    "\tst.global.u32 [%rd1+8], %r1;\n"
    "\tmul.lo.u32 %r6, %r2, %r3;\n"
    "\tmov.u32 %r7, 0;\n"
    "LOAD:\n"
    "\tsetp.ge.u32 %p2, %r7, %r6;\n"
    "\t@%p2 bra LOADED;\n"
    "\tmul.wide.u32 %rd6, %r7, 4096;\n"
    "\tadd.u64 %rd7, %rd0, %rd6;\n"
    "\tld.global.cg.u32 %r8, [%rd7];\n"
    "\tst.volatile.shared.u32 [tidal_l2_smem], %r8;\n"
    "\tadd.u32 %r7, %r7, 1;\n"
    "\tbra LOAD;\n"
    "LOADED:\n"
    "\tmembar.gl;\n"
    "\tmov.u32 %r9, 1;\n"
    "\tst.volatile.global.u32 [%rd1+4], %r9;\n"
    "\tbra TIME;\n"
    "WAIT:\n"
    "\tmov.u64 %rd8, %globaltimer;\n"
    "SPIN:\n"
    "\tld.volatile.global.u32 %r10, [%rd1+4];\n"
    "\tsetp.ne.u32 %p2, %r10, 0;\n"
    "\t@%p2 bra TIME;\n"
    "\tmov.u64 %rd9, %globaltimer;\n"
    "\tsub.u64 %rd10, %rd9, %rd8;\n"
    "\tsetp.lt.u64 %p3, %rd10, %rd3;\n"
    "\t@%p3 bra SPIN;\n"
    "\tbra DONE;\n"
    /* this SM's lines: (smid * k + i) * 4 KiB. The load's address depends on the first
     * clock read (zero is 0), so it cannot issue before it; the shared store needs the
     * loaded value, so the second clock read comes after the load completed. */
    "TIME:\n"
    "\tmov.u64 %rd11, 1;\n"
    "\tmov.u32 %r11, 0;\n"
    "TLOOP:\n"
    "\tsetp.ge.u32 %p2, %r11, %r2;\n"
    "\t@%p2 bra TDONE;\n"
    "\tmad.lo.u32 %r12, %r1, %r2, %r11;\n"
    "\tmul.wide.u32 %rd12, %r12, 4096;\n"
    "\tadd.u64 %rd13, %rd0, %rd12;\n"
    "\tmov.u64 %rd14, %clock64;\n"
    "\tand.b64 %rd15, %rd14, %rd2;\n"
    "\tadd.u64 %rd16, %rd13, %rd15;\n"
    "\tld.global.cg.u32 %r13, [%rd16];\n"
    "\tst.volatile.shared.u32 [tidal_l2_smem], %r13;\n"
    "\tmov.u64 %rd17, %clock64;\n"
    "\tsub.u64 %rd18, %rd17, %rd14;\n"
    "\tadd.u64 %rd11, %rd11, %rd18;\n"
    "\tadd.u32 %r11, %r11, 1;\n"
    "\tbra TLOOP;\n"
    "TDONE:\n"
    "\tmul.wide.u32 %rd19, %r1, 8;\n"
    "\tadd.u64 %rd20, %rd1, 1040;\n"
    "\tadd.u64 %rd20, %rd20, %rd19;\n"
    "\tst.global.u64 [%rd20], %rd11;\n"
    "DONE:\n"
    "\tret;\n"
    "}\n";

static struct {
    int state; /* 0 not measured, 1 measured, -1 failed (status and why) */
    int status;
    char why[256];
    tidal_smset side[2];
} S;

int tidal__l2_classify(const double *mean, unsigned nsm, tidal_smset side[2])
{
    if (nsm == 0 || nsm > TIDAL_MAX_SMS) return tidal__fail(TIDAL_ERR_INVALID, "L2 sides: %u SMs", nsm);
    double lo = 1e300, hi = -1e300;
    for (unsigned s = 0; s < nsm; s++) {
        if (!(mean[s] > 0))
            return tidal__fail(TIDAL_ERR_CUDA, "L2 sides: SM %u ran no probe block (the device is busy?)", s);
        lo = mean[s] < lo ? mean[s] : lo;
        hi = mean[s] > hi ? mean[s] : hi;
    }
    if (hi - lo < MIN_GAP)
        return tidal__fail(TIDAL_ERR_UNSUPPORTED,
                           "L2 sides: every SM reads the same lines in %.0f-%.0f cycles: this device shows no two "
                           "L2 sides",
                           lo, hi);
    /* two clusters, the middle third empty: else the split is a guess */
    double mid = (lo + hi) / 2, band = (hi - lo) / 6;
    memset(side, 0, 2 * sizeof *side);
    int near0 = mean[0] <= mid;
    for (unsigned s = 0; s < nsm; s++) {
        if (mean[s] > mid - band && mean[s] < mid + band)
            return tidal__fail(TIDAL_ERR_UNSUPPORTED,
                               "L2 sides: SM %u reads in %.0f cycles, between the sides (%.0f and %.0f)", s, mean[s],
                               lo, hi);
        int k = (mean[s] <= mid) == near0 ? 0 : 1;
        side[k].bits[s >> 6] |= 1ull << (s & 63);
    }
    return TIDAL_OK;
}

/* One probe launch on stream st; sums[s] gets SM s's summed latency + 1 (0: none). */
static int probe_once(CUfunction f, CUstream st, CUdeviceptr buf, CUdeviceptr ctl, unsigned smem, uint64_t *sums)
{
    const tidal_cu *cu = tidal__cu();
    const unsigned nsm = tidal__nsm();
    unsigned k = LINES_PER_SM;
    uint64_t zero = 0, spin = SPIN_NS;
    void *args[] = {&buf, &ctl, &k, (void *)&nsm, &zero, &spin};
    unsigned char *stage = tidal__staging(); /* 4 KiB, pinned */
    CU_TRY(cu->MemsetD8Async(ctl, 0, 16, st), "L2 probe: reset");
    CU_TRY(cu->LaunchKernel(f, nsm, 1, 1, 32, 1, 1, smem, st, args, NULL), "L2 probe: launch");
    CU_TRY(cu->MemcpyDtoHAsync(stage, ctl + CTL_SUM, 8 * (size_t)nsm, st), "L2 probe: copy");
    CU_TRY(cu->StreamSynchronize(st), "L2 probe");
    for (unsigned s = 0; s < nsm; s++) {
        uint64_t v;
        memcpy(&v, stage + 8 * (size_t)s, 8);
        if (v && !sums[s]) sums[s] = v;
    }
    return TIDAL_OK;
}

static int measure(tidal_smset side[2])
{
    const tidal_cu *cu = tidal__cu();
    const unsigned nsm = tidal__nsm();
    if (!cu->ModuleLoadData || !cu->ModuleUnload)
        return tidal__fail(TIDAL_ERR_NO_DRIVER, "L2 sides: the driver has no cuModuleLoadData");
    if (tidal__is_mps()) return tidal__fail(TIDAL_ERR_MPS, "L2 sides: an MPS client's %%smid numbering is its own");
    if (nsm == 0 || nsm > TIDAL_MAX_SMS || 8 * (size_t)nsm > 4096)
        return tidal__fail(TIDAL_ERR_SMS, "L2 sides: %u SMs", nsm);
    int optin = 0;
    CU_TRY(cu->DeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, tidal__device_id()),
           "L2 probe: shared memory per block");
    CUmodule m = NULL;
    CU_TRY(cu->ModuleLoadData(&m, probe_ptx), "cuModuleLoadData(L2 probe)");
    CUfunction f = NULL;
    CUdeviceptr buf = 0, ctl = 0;
    CUstream st = NULL;
    uint64_t sums[TIDAL_MAX_SMS];
    memset(sums, 0, sizeof sums);
    size_t bytes = (size_t)nsm * LINES_PER_SM * LINE_STRIDE;
    CUresult r = cu->ModuleGetFunction(&f, m, "tidal_l2side_probe");
    /* all the shared memory a block may have: one block per SM at a time */
    if (r == CUDA_SUCCESS) r = cu->FuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin);
    if (r == CUDA_SUCCESS) r = cu->MemAlloc(&buf, bytes + LINE_STRIDE);
    if (r == CUDA_SUCCESS) r = cu->MemAlloc(&ctl, CTL_BYTES);
    if (r == CUDA_SUCCESS) r = cu->StreamCreate(&st, CU_STREAM_NON_BLOCKING);
    if (r == CUDA_SUCCESS) r = cu->MemsetD8Async(ctl, 0, CTL_BYTES, st);
    int status = r == CUDA_SUCCESS ? TIDAL_OK : tidal__cuda_fail(r, "L2 probe setup");
    CUdeviceptr base = (buf + LINE_STRIDE - 1) & ~(CUdeviceptr)(LINE_STRIDE - 1);
    /* An SM busy with other work when the probe ran gets no block: try again for those
     * (the claims stay, the loader is chosen again) */
    for (int a = 0; !status && a < ATTEMPTS; a++) {
        status = probe_once(f, st, base, ctl, (unsigned)optin, sums);
        unsigned missing = 0;
        for (unsigned s = 0; s < nsm; s++) missing += sums[s] == 0;
        if (!missing) break;
        tidal__log("L2 probe: %u SMs ran no block (attempt %d)", missing, a + 1);
    }
    if (st) cu->StreamDestroy(st);
    if (ctl) cu->MemFree(ctl);
    if (buf) cu->MemFree(buf);
    cu->ModuleUnload(m);
    if (status) return status;
    double mean[TIDAL_MAX_SMS];
    for (unsigned s = 0; s < nsm; s++) mean[s] = sums[s] ? (double)(sums[s] - 1) / LINES_PER_SM : 0;
    status = tidal__l2_classify(mean, nsm, side);
    if (!status) {
        char a[256], b[256];
        tidal_smset_format(&side[0], a, sizeof a);
        tidal_smset_format(&side[1], b, sizeof b);
        tidal__log("L2 sides: %s | %s", a, b);
    }
    return status;
}

int tidal__l2_sides_get(tidal_smset side[2])
{
    if (S.state == 0) {
        S.status = measure(S.side);
        S.state = S.status ? -1 : 1;
        /* a failure is kept (measuring again would fail the same way), its text too */
        if (S.status) snprintf(S.why, sizeof S.why, "%s", tidal_last_error());
    }
    if (S.status) return tidal__fail(S.status, "%s", S.why);
    side[0] = S.side[0];
    side[1] = S.side[1];
    return TIDAL_OK;
}

int tidal_l2_sides(tidal_smset *side0, tidal_smset *side1)
{
    if (!side0 || !side1) return tidal__fail(TIDAL_ERR_INVALID, "tidal_l2_sides: NULL");
    tidal__lock();
    NEED_INIT("tidal_l2_sides");
    tidal__call saved = tidal__ctx_enter();
    tidal_smset side[2];
    int st = tidal__l2_sides_get(side);
    tidal__ctx_leave(saved);
    tidal__unlock();
    if (!st) {
        *side0 = side[0];
        *side1 = side[1];
    }
    return st;
}

void tidal__l2_teardown(void) { memset(&S, 0, sizeof S); }
