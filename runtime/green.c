/* green.c — placement: green contexts of SM sets (docs/design.md, "Hybrid placement").
 *
 * The device's SMs are split into groups two ways ("grains"), each once, on first use:
 *  - placement: the finest groups the driver allows (cuDevSmResourceSplitByCount with
 *    CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING: 2 SMs on the H200). A partition's SM
 *    set that is exactly a union of them gets a green context of those groups (made once
 *    per set: ~1 ms) whose streams place every kernel on exactly those SMs. Such a context
 *    runs thread-block clusters of at most one group's SMs (2 blocks).
 *  - clusters: co-schedulable groups of TIDAL_CLUSTER_GRAIN SMs (the split without that
 *    flag), which run clusters of up to that many blocks. A partition's cluster context is
 *    made of the cluster groups inside its set (a subset of its SMs, possibly empty):
 *    launches with larger clusters are routed there (routes.c).
 * Which %smid values a group holds is not in the API, so it is measured: a probe kernel
 * records the %smid of its blocks in green contexts made of groups chosen by the bits of
 * (group index + 1); an SM's bits then name its group. The map is checked (each group gets
 * exactly its SM count) or that grain is off for the process, with the reason logged.
 * Called with the lock held. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "green.h"
#include "tidal_abi.h"

#define TIDAL_MAX_GREEN 32 /* green contexts per process (one per SM set used) */

/* One way of splitting the device's SMs into groups. */
typedef struct grain {
    const char *what; /* "placement", "cluster": for messages */
    unsigned min;     /* SMs per group asked of cuDevSmResourceSplitByCount */
    unsigned flags;   /* its flags */
    int state;        /* 0 not tried, 1 ready, -1 unavailable */
    unsigned ngroups;
    CUdevResource groups[TIDAL_MAX_SMS];
    tidal_smset group_sms[TIDAL_MAX_SMS];
} grain;

static struct {
    grain place, cluster;
    tidal__green greens[TIDAL_MAX_GREEN];
    unsigned ngreens;
} G = {.place = {.what = "placement", .min = 2, .flags = CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING},
       .cluster = {.what = "cluster", .min = TIDAL_CLUSTER_GRAIN, .flags = 0}};

/* One block per SM at a time (a large dynamic shared memory request) and a few µs each:
 * every SM of the context runs some. out: 256-bit set of the %smid values seen. */
static const char probe_ptx[] = ".version 7.0\n"
                                ".target sm_70\n"
                                ".address_size 64\n"
                                ".extern .shared .align 16 .b8 tidal_probe_smem[];\n"
                                ".visible .entry tidal_smid_probe(.param .u64 out, .param .u64 ns)\n"
                                "{\n"
                                "\t.reg .pred %p;\n"
                                "\t.reg .b32 %r<5>;\n"
                                "\t.reg .b64 %rd<6>;\n"
                                "\tmov.u32 %r0, %tid.x;\n"
                                "\tsetp.ne.u32 %p, %r0, 0;\n"
                                "\t@%p bra DONE;\n"
                                "\tmov.u32 %r1, %smid;\n"
                                "\tld.param.u64 %rd0, [out];\n"
                                "\tshr.u32 %r2, %r1, 5;\n"
                                "\tmul.wide.u32 %rd1, %r2, 4;\n"
                                "\tadd.u64 %rd1, %rd0, %rd1;\n"
                                "\tand.b32 %r3, %r1, 31;\n"
                                "\tmov.u32 %r4, 1;\n"
                                "\tshl.b32 %r4, %r4, %r3;\n"
                                "\tred.global.or.b32 [%rd1], %r4;\n"
                                "\tst.shared.u32 [tidal_probe_smem], %r1;\n"
                                "\tld.param.u64 %rd2, [ns];\n"
                                "\tmov.u64 %rd3, %globaltimer;\n"
                                "SPIN:\n"
                                "\tmov.u64 %rd4, %globaltimer;\n"
                                "\tsub.u64 %rd5, %rd4, %rd3;\n"
                                "\tsetp.lt.u64 %p, %rd5, %rd2;\n"
                                "\t@%p bra SPIN;\n"
                                "DONE:\n"
                                "\tret;\n"
                                "}\n";

#define PROBE_SMEM (120 * 1024)

static int make_green(const grain *gr, const unsigned *idx, unsigned n, CUgreenCtx *out)
{
    const tidal_cu *cu = tidal__cu();
    CUdevResource *res = calloc(n ? n : 1, sizeof *res);
    if (!res) return tidal__fail(TIDAL_ERR_NO_MEMORY, "green context resources");
    for (unsigned i = 0; i < n; i++) res[i] = gr->groups[idx[i]];
    CUdevResourceDesc d;
    CUresult r = cu->DevResourceGenerateDesc(&d, res, n);
    free(res);
    if (r != CUDA_SUCCESS) return tidal__cuda_fail(r, "cuDevResourceGenerateDesc");
    r = cu->GreenCtxCreate(out, d, tidal__device_id(), CU_GREEN_CTX_DEFAULT_STREAM);
    if (r != CUDA_SUCCESS) return tidal__cuda_fail(r, "cuGreenCtxCreate");
    return TIDAL_OK;
}

/* The %smid values blocks of a kernel see in a green context of groups idx[0..n). */
static int probe_sms(const grain *gr, CUfunction f, CUdeviceptr buf, const unsigned *idx, unsigned n, tidal_smset *seen)
{
    const tidal_cu *cu = tidal__cu();
    CUgreenCtx g;
    int st = make_green(gr, idx, n, &g);
    if (st) return st;
    CUstream s = NULL;
    CUresult r = cu->GreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0);
    if (r == CUDA_SUCCESS) r = cu->MemsetD8Async(buf, 0, 32, s);
    if (r == CUDA_SUCCESS) {
        uint64_t ns = 3000;
        void *args[] = {&buf, &ns};
        r = cu->LaunchKernel(f, 4 * tidal__nsm(), 1, 1, 32, 1, 1, PROBE_SMEM, s, args, NULL);
    }
    if (r == CUDA_SUCCESS) r = cu->MemcpyDtoHAsync(tidal__staging(), buf, 32, s);
    if (r == CUDA_SUCCESS) r = cu->StreamSynchronize(s);
    if (r == CUDA_SUCCESS) memcpy(seen->bits, tidal__staging(), 32);
    if (s) cu->StreamDestroy(s);
    cu->GreenCtxDestroy(g);
    return r == CUDA_SUCCESS ? TIDAL_OK : tidal__cuda_fail(r, "green-context SM probe");
}

static int calibrate(grain *gr)
{
    const tidal_cu *cu = tidal__cu();
    if (!cu->DeviceGetDevResource || !cu->DevSmResourceSplitByCount || !cu->DevResourceGenerateDesc ||
        !cu->GreenCtxCreate || !cu->GreenCtxDestroy || !cu->GreenCtxStreamCreate || !cu->ModuleLoadData)
        return tidal__fail(TIDAL_ERR_NO_DRIVER, "the CUDA driver has no green-context API (12.4+ needed)");
    if (tidal__is_mps()) return tidal__fail(TIDAL_ERR_MPS, "no green-context placement for MPS clients");
    CUdevResource all;
    CUresult r = cu->DeviceGetDevResource(tidal__device_id(), &all, CU_DEV_RESOURCE_TYPE_SM);
    if (r != CUDA_SUCCESS) return tidal__cuda_fail(r, "cuDeviceGetDevResource");
    unsigned n = TIDAL_MAX_SMS;
    CUdevResource rest;
    r = cu->DevSmResourceSplitByCount(gr->groups, &n, &all, &rest, gr->flags, gr->min);
    if (r != CUDA_SUCCESS) return tidal__cuda_fail(r, "cuDevSmResourceSplitByCount");
    if (n == 0 || n >= 255) return tidal__fail(TIDAL_ERR_CUDA, "split into %u SM groups", n);
    gr->ngroups = n;
    CUmodule m;
    r = cu->ModuleLoadData(&m, probe_ptx);
    if (r != CUDA_SUCCESS) return tidal__cuda_fail(r, "cuModuleLoadData(SM probe)");
    CUfunction f;
    CUdeviceptr buf = 0;
    int st = TIDAL_OK;
    r = cu->ModuleGetFunction(&f, m, "tidal_smid_probe");
    if (r == CUDA_SUCCESS) r = cu->FuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, PROBE_SMEM);
    if (r == CUDA_SUCCESS) r = cu->MemAlloc(&buf, 32);
    if (r != CUDA_SUCCESS) st = tidal__cuda_fail(r, "SM probe setup");
    /* code(group i) = i + 1; probe b holds the groups whose code has bit b */
    unsigned code_of_sm[TIDAL_MAX_SMS];
    memset(code_of_sm, 0, sizeof code_of_sm);
    unsigned *idx = calloc(n, sizeof *idx);
    if (!idx && !st) st = tidal__fail(TIDAL_ERR_NO_MEMORY, "SM probe");
    for (unsigned b = 0; !st && (1u << b) <= n; b++) {
        unsigned k = 0;
        for (unsigned i = 0; i < n; i++)
            if (((i + 1) >> b) & 1) idx[k++] = i;
        tidal_smset seen;
        st = probe_sms(gr, f, buf, idx, k, &seen);
        for (unsigned s = 0; !st && s < TIDAL_MAX_SMS; s++)
            if ((seen.bits[s >> 6] >> (s & 63)) & 1) code_of_sm[s] |= 1u << b;
    }
    free(idx);
    if (buf) cu->MemFree(buf);
    cu->ModuleUnload(m);
    if (st) return st;
    memset(gr->group_sms, 0, sizeof gr->group_sms);
    for (unsigned s = 0; s < TIDAL_MAX_SMS; s++) {
        if (!code_of_sm[s]) continue;
        unsigned g = code_of_sm[s] - 1;
        if (s >= tidal__nsm() || g >= n)
            return tidal__fail(TIDAL_ERR_CUDA, "SM probe: SM %u decoded to group %u of %u", s, g, n);
        gr->group_sms[g].bits[s >> 6] |= 1ull << (s & 63);
    }
    for (unsigned g = 0; g < n; g++)
        if (tidal_smset_count(&gr->group_sms[g]) != gr->groups[g].sm.smCount)
            return tidal__fail(TIDAL_ERR_CUDA, "SM probe: group %u showed %u of its %u SMs", g,
                               tidal_smset_count(&gr->group_sms[g]), gr->groups[g].sm.smCount);
    /* the cluster grain's whole map, one group a line (which SMs a partition must hold for
     * a cluster context is read from it); the placement grain's first group */
    for (unsigned g = 0, shown = gr == &G.cluster ? n : 1; g < shown; g++) {
        char text[64];
        tidal_smset_format(&gr->group_sms[g], text, sizeof text);
        tidal__log("%s: %u SM groups of %u; group %u = SMs %s", gr->what, n, gr->groups[g].sm.smCount, g, text);
    }
    return TIDAL_OK;
}

static int grain_ready(grain *gr)
{
    if (gr->state == 0) {
        const char *e = getenv("TIDAL_GREEN");
        int st = (e && strcmp(e, "0") == 0) ? tidal__fail(TIDAL_ERR_INVALID, "TIDAL_GREEN=0") : calibrate(gr);
        gr->state = st ? -1 : 1;
        if (st && gr == &G.place)
            tidal__warn("placement off: %s; partitions are masked by their persistent clones only", tidal_last_error());
        else if (st)
            tidal__warn("no cluster groups: %s; launches with clusters of more than %u blocks fail on partition "
                        "streams",
                        tidal_last_error(), G.place.min);
    }
    return gr->state == 1;
}

static int green_ready(void) { return grain_ready(&G.place); }

/* The groups of gr inside set (idx/n) and their union (*u). */
static void groups_inside(const grain *gr, const tidal_smset *set, unsigned *idx, unsigned *n, tidal_smset *u)
{
    memset(u, 0, sizeof *u);
    *n = 0;
    for (unsigned g = 0; g < gr->ngroups; g++) {
        if (!tidal__smset_subset(&gr->group_sms[g], set)) continue;
        idx[(*n)++] = g;
        for (int w = 0; w < TIDAL_SMSET_WORDS; w++) u->bits[w] |= gr->group_sms[g].bits[w];
    }
}

/* Does set equal the union of the groups inside it? idx/n get those groups. */
static int union_of_groups(const grain *gr, const tidal_smset *set, unsigned *idx, unsigned *n)
{
    tidal_smset u;
    groups_inside(gr, set, idx, n, &u);
    return *n > 0 && memcmp(&u, set, sizeof u) == 0;
}

static const tidal__green *cached(const grain *gr, const tidal_smset *set)
{
    for (unsigned i = 0; i < G.ngreens; i++)
        if (G.greens[i].cluster_max == gr->min && memcmp(&G.greens[i].set, set, sizeof *set) == 0) return &G.greens[i];
    return NULL;
}

/* A new green context of gr's groups idx[0..n), whose union is set; NULL (said) when none. */
static const tidal__green *make_cached(const grain *gr, const tidal_smset *set, const unsigned *idx, unsigned n)
{
    if (G.ngreens == TIDAL_MAX_GREEN) {
        tidal__warn("%s: %d green contexts made already; none for this SM set", gr->what, TIDAL_MAX_GREEN);
        return NULL;
    }
    tidal__green *g = &G.greens[G.ngreens];
    if (make_green(gr, idx, n, &g->g) != TIDAL_OK) {
        tidal__warn("%s: %s", gr->what, tidal_last_error());
        return NULL;
    }
    g->set = *set;
    g->cluster_max = gr->min;
    G.ngreens++;
    char text[128];
    tidal_smset_format(set, text, sizeof text);
    tidal__log("%s: green context for SMs %s", gr->what, text);
    return g;
}

const tidal__green *tidal__green_for(const tidal_smset *set, int create)
{
    if (!green_ready()) return NULL;
    const tidal__green *c = cached(&G.place, set);
    if (c) return c;
    unsigned idx[TIDAL_MAX_SMS], n;
    if (!union_of_groups(&G.place, set, idx, &n) || !create) return NULL;
    return make_cached(&G.place, set, idx, n);
}

const tidal__green *tidal__green_cluster_for(const tidal_smset *set)
{
    if (!green_ready() || !grain_ready(&G.cluster)) return NULL;
    unsigned idx[TIDAL_MAX_SMS], n;
    tidal_smset u;
    groups_inside(&G.cluster, set, idx, &n, &u);
    if (n == 0) return NULL;
    const tidal__green *c = cached(&G.cluster, &u);
    return c ? c : make_cached(&G.cluster, &u, idx, n);
}

int tidal__green_is_union(const tidal_smset *set)
{
    unsigned idx[TIDAL_MAX_SMS], n;
    return green_ready() && union_of_groups(&G.place, set, idx, &n);
}

void tidal__green_teardown(void)
{
    for (unsigned i = 0; i < G.ngreens; i++)
        if (G.greens[i].g) tidal__cu()->GreenCtxDestroy(G.greens[i].g);
    memset(G.greens, 0, sizeof G.greens);
    G.ngreens = 0;
    G.place.state = G.cluster.state = 0; /* measured again after the next tidal_init */
    G.place.ngroups = G.cluster.ngroups = 0;
}
