// green_cluster.cu -- can a green context run thread-block clusters? (H200, CUDA 13.0)
//
// cuBLASLt's sm90 GEMMs failed with CUBLAS_STATUS_EXECUTION_FAILED on streams of green
// contexts built from 2-SM groups (bench/dnn, session 14 call 3, also without tidal). The
// 2-SM grain needs CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING; this probe launches a
// kernel with clusters of 1, 2, 4 and 8 blocks (cuLaunchKernelEx, cluster dimension
// attribute) on streams of green contexts made of
//   g2    33 groups of 2 SMs split with IGNORE_SM_COSCHEDULING (tidal's grain)
//   g8    groups of 8 SMs split without the flag (the co-scheduling grain)
//   all   the primary context
//   mixed 8-SM groups plus the leftover SMs as flagged 2-SM groups, in one context
//   sub   one 8-SM group cut into flagged 2-SM groups
// and prints one RESULT line per (context, cluster size): the launch's CUresult, the
// synchronize's CUresult, and the SMs the blocks ran on.
// Build: nvcc -O2 -arch=sm_90 -o green_cluster green_cluster.cu -lcuda
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>

#include "probe_check.h"

__global__ void who(unsigned *sm, unsigned n)
{
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    unsigned b = blockIdx.x + gridDim.x * blockIdx.y;
    if (threadIdx.x == 0 && b < n) sm[b] = s;
}

static CUgreenCtx make_green(CUdevice dev, CUdevResource *groups, unsigned n)
{
    CUdevResourceDesc d;
    CK(cuDevResourceGenerateDesc(&d, groups, n));
    CUgreenCtx g;
    CK(cuGreenCtxCreate(&g, d, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    return g;
}

static void try_clusters(const char *name, CUstream s, unsigned *dsm, CUfunction f)
{
    const unsigned nblocks = 64;
    for (unsigned c : {1u, 2u, 4u, 8u}) {
        CK(cuMemsetD32((CUdeviceptr)dsm, 0xffffffffu, nblocks));
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = nblocks;
        cfg.gridDimY = cfg.gridDimZ = 1;
        cfg.blockDimX = 128;
        cfg.blockDimY = cfg.blockDimZ = 1;
        cfg.hStream = s;
        CUlaunchAttribute at;
        memset(&at, 0, sizeof at);
        at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        at.value.clusterDim.x = c;
        at.value.clusterDim.y = at.value.clusterDim.z = 1;
        cfg.attrs = &at;
        cfg.numAttrs = 1;
        unsigned n = nblocks;
        void *args[] = {&dsm, &n};
        CUresult lr = cuLaunchKernelEx(&cfg, f, args, NULL);
        CUresult sr = cuStreamSynchronize(s);
        std::vector<unsigned> h(nblocks);
        std::set<unsigned> sms;
        if (lr == CUDA_SUCCESS && sr == CUDA_SUCCESS) {
            CK(cuMemcpyDtoH(h.data(), (CUdeviceptr)dsm, nblocks * 4));
            for (unsigned v : h) sms.insert(v);
        }
        const char *ln = "?", *sn = "?";
        cuGetErrorName(lr, &ln);
        cuGetErrorName(sr, &sn);
        printf("RESULT cluster ctx=%s cluster=%u launch=%s sync=%s distinct_sms=%zu", name, c, ln, sn, sms.size());
        if (!sms.empty()) printf(" min_sm=%u max_sm=%u", *sms.begin(), *sms.rbegin());
        printf("\n");
        if (sr != CUDA_SUCCESS) {
            printf("RESULT cluster ctx=%s: the context is broken after the failure; stopping here\n", name);
            return;
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: green_cluster FILE.cubin (this file compiled with -cubin)\n");
        return 2;
    }
    CK(cuInit(0));
    CUdevice dev;
    CK(cuDeviceGet(&dev, 0));
    CUcontext primary;
    CK(cuDevicePrimaryCtxRetain(&primary, dev));
    CK(cuCtxSetCurrent(primary));
    CUmodule mod;
    CK(cuModuleLoad(&mod, argv[1]));
    CUfunction f;
    CK(cuModuleGetFunction(&f, mod, "_Z3whoPjj"));
    unsigned *dsm;
    CK(cuMemAlloc((CUdeviceptr *)&dsm, 64 * 4));
    CUdevResource all;
    CK(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
    printf("device SMs %u\n", all.sm.smCount);
    try_clusters("primary", NULL, dsm, f);

    std::vector<CUdevResource> g2(all.sm.smCount);
    unsigned n2 = all.sm.smCount;
    CUdevResource rest;
    CK(cuDevSmResourceSplitByCount(g2.data(), &n2, &all, &rest, CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING, 2));
    unsigned half = n2 / 2;
    CUgreenCtx gg2 = make_green(dev, g2.data(), half);
    CUstream s2;
    CK(cuGreenCtxStreamCreate(&s2, gg2, CU_STREAM_NON_BLOCKING, 0));
    printf("g2: %u groups of 2 SMs (IGNORE_SM_COSCHEDULING), context of %u of them\n", n2, half);
    try_clusters("g2", s2, dsm, f);

    std::vector<CUdevResource> g8(all.sm.smCount);
    unsigned n8 = all.sm.smCount;
    CUdevResource rest8;
    CUresult r8 = cuDevSmResourceSplitByCount(g8.data(), &n8, &all, &rest8, 0, 8);
    const char *e8 = "?";
    cuGetErrorName(r8, &e8);
    printf("g8: split without the flag, minCount 8: %s, %u groups, %u SMs left over\n", e8, n8,
           r8 == CUDA_SUCCESS ? rest8.sm.smCount : 0);
    if (r8 == CUDA_SUCCESS && n8 > 1) {
        for (unsigned i = 0; i < n8 && i < 4; i++) printf("g8: group %u: %u SMs\n", i, g8[i].sm.smCount);
        CUgreenCtx gg8 = make_green(dev, g8.data(), n8 / 2);
        CUstream s8;
        CK(cuGreenCtxStreamCreate(&s8, gg8, CU_STREAM_NON_BLOCKING, 0));
        try_clusters("g8", s8, dsm, f);
        /* mixed: 8-SM groups (co-scheduled) plus the SMs the 8-grain split left over, cut
         * into 2-SM groups with the flag: does the context run clusters of 4 and 8 on its
         * 8-SM groups, or does one flagged group take cluster support from all of it? */
        std::vector<CUdevResource> lo(rest8.sm.smCount + 1);
        unsigned nlo = rest8.sm.smCount;
        CUdevResource rest2;
        CUresult rl = cuDevSmResourceSplitByCount(lo.data(), &nlo, &rest8, &rest2,
                                                  CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING, 2);
        const char *el = "?";
        cuGetErrorName(rl, &el);
        printf("mixed: the %u SMs left over split into 2-SM groups: %s, %u groups\n", rest8.sm.smCount, el, nlo);
        if (rl == CUDA_SUCCESS && nlo > 0) {
            std::vector<CUdevResource> mix;
            for (unsigned i = 0; i < n8 / 2; i++) mix.push_back(g8[i]);
            for (unsigned i = 0; i < nlo; i++) mix.push_back(lo[i]);
            CUdevResourceDesc d;
            CUresult rd = cuDevResourceGenerateDesc(&d, mix.data(), (unsigned)mix.size());
            const char *ed = "?";
            cuGetErrorName(rd, &ed);
            printf("mixed: %u 8-SM groups + %u 2-SM groups: desc %s\n", n8 / 2, nlo, ed);
            if (rd == CUDA_SUCCESS) {
                CUgreenCtx gm;
                CUresult rc = cuGreenCtxCreate(&gm, d, dev, CU_GREEN_CTX_DEFAULT_STREAM);
                const char *ec = "?";
                cuGetErrorName(rc, &ec);
                printf("mixed: context %s\n", ec);
                if (rc == CUDA_SUCCESS) {
                    CUstream sm;
                    CK(cuGreenCtxStreamCreate(&sm, gm, CU_STREAM_NON_BLOCKING, 0));
                    try_clusters("mixed", sm, dsm, f);
                }
            }
            /* and 2-SM groups cut out of one 8-SM group: flagged groups of co-schedulable SMs */
            std::vector<CUdevResource> sub(9);
            unsigned nsub = 8;
            CUdevResource rest3;
            CUresult rs = cuDevSmResourceSplitByCount(sub.data(), &nsub, &g8[n8 - 1], &rest3,
                                                      CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING, 2);
            const char *es = "?";
            cuGetErrorName(rs, &es);
            printf("sub: the last 8-SM group split into 2-SM groups: %s, %u groups\n", es, nsub);
            if (rs == CUDA_SUCCESS && nsub > 0) {
                CUgreenCtx gs = make_green(dev, sub.data(), nsub);
                CUstream ss;
                CK(cuGreenCtxStreamCreate(&ss, gs, CU_STREAM_NON_BLOCKING, 0));
                try_clusters("sub", ss, dsm, f);
            }
        }
    }
    return 0;
}
