// green_probe.cu — facts about green contexts that tidal's hybrid placement relies on
// (H200, CUDA 13.0). Each section prints one "RESULT" line per fact:
//   groups   2-SM groups from cuDevSmResourceSplitByCount(IGNORE_SM_COSCHEDULING) and
//            the %smid values a kernel sees in each (is the map stable? contiguous?)
//   union    a green context made from several groups (cuDevResourceGenerateDesc with
//            n resources): which %smid its blocks see; cost of desc/ctx/stream creation
//   graph    a kernel captured on a green stream, and one captured on a primary stream
//            forked to a green stream with events: where do the replayed blocks land?
//   module   the same for a CUfunction of a module loaded with cuModuleLoadData
//   route    time per launch of a chain of short kernels: primary stream, green stream,
//            routed per launch (event record/wait both ways), eager and as graphs
//   l2       latency of dependent relaxed loads, atomics and red+atom pairs at gpu scope
// Build: nvcc -O2 -arch=sm_90a -o green_probe green_probe.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>
#include "probe_check.h"


static double now_us()
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

__device__ __forceinline__ unsigned smid()
{
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}
__device__ __forceinline__ unsigned long long gtime()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

extern "C" __global__ void smid_rec(unsigned *out)
{
    if (threadIdx.x == 0) out[blockIdx.x] = smid();
}

// Runs for about ns nanoseconds per block (globaltimer), touching one word.
extern "C" __global__ void spin(unsigned long long ns, unsigned *sink)
{
    unsigned long long t0 = gtime();
    while (gtime() - t0 < ns) {
    }
    if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(sink, 1u);
}

extern "C" __global__ void tiny(unsigned *sink)
{
    if (threadIdx.x == 0) atomicAdd(sink, 1u);
}

// One thread: n dependent operations on one word; returns cycles per op.
extern "C" __global__ void lat(unsigned long long *word, int n, int kind, unsigned long long *out)
{
    unsigned long long v = 0, t0 = clock64();
    for (int i = 0; i < n; i++) {
        unsigned long long *p = word + (v & 1);   // dependent address
        if (kind == 0) asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p));
        else if (kind == 1) asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], 2;" : "=l"(v) : "l"(p));
        else if (kind == 2) {
            asm volatile("red.relaxed.gpu.global.max.u64 [%0], 0;" ::"l"(p));
            asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], 2;" : "=l"(v) : "l"(p));
        } else if (kind == 3) asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], 2;" : "=l"(v) : "l"(p));
        else if (kind == 4) asm volatile("ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(p));
        else {
            unsigned long long c;
            asm volatile("atom.relaxed.gpu.global.cas.b64 %0, [%1], %2, %3;" : "=l"(c) : "l"(p), "l"(v), "l"(v + 2));
            v = c;
        }
    }
    out[0] = (clock64() - t0) / n;
    out[1] = v;
}

// red.max then atom.add by one thread on one address: is the add ordered after the max?
extern "C" __global__ void order_check(unsigned long long *w, unsigned long long e, unsigned *bad, int iters)
{
    for (int i = 0; i < iters; i++) {
        unsigned long long *p = w + blockIdx.x;
        unsigned long long mine = e + ((unsigned long long)i << 32);
        asm volatile("red.relaxed.gpu.global.max.u64 [%0], %1;" ::"l"(p), "l"(mine));
        unsigned long long old;
        asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], 1;" : "=l"(old) : "l"(p));
        if (old != mine) atomicAdd(bad, 1u);
        // leave a stale value that the next round's max must replace
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(mine + 12345));
    }
}

struct Green {
    CUgreenCtx g = nullptr;
    CUstream s = nullptr;
    std::set<unsigned> sms;
};

static CUdevice dev;
static unsigned *d_out;
static unsigned h_out[4096];

static std::set<unsigned> smids_of(cudaStream_t s, int blocks)
{
    RK(cudaMemset(d_out, 0xff, blocks * 4));
    smid_rec<<<blocks, 32, 0, s>>>(d_out);
    RK(cudaGetLastError());
    RK(cudaDeviceSynchronize());
    RK(cudaMemcpy(h_out, d_out, blocks * 4, cudaMemcpyDeviceToHost));
    std::set<unsigned> r(h_out, h_out + blocks);
    return r;
}

static std::string fmt(const std::set<unsigned> &s)
{
    std::string o;
    for (unsigned v : s) o += (o.empty() ? "" : ",") + std::to_string(v);
    return o;
}

static Green make_green(CUdevResource *res, unsigned n, double *t_desc, double *t_ctx, double *t_stream)
{
    Green G;
    CUdevResourceDesc d;
    double t0 = now_us();
    CK(cuDevResourceGenerateDesc(&d, res, n));
    double t1 = now_us();
    CK(cuGreenCtxCreate(&G.g, d, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    double t2 = now_us();
    CK(cuGreenCtxStreamCreate(&G.s, G.g, CU_STREAM_NON_BLOCKING, 0));
    double t3 = now_us();
    if (t_desc) *t_desc = t1 - t0;
    if (t_ctx) *t_ctx = t2 - t1;
    if (t_stream) *t_stream = t3 - t2;
    return G;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv)
{
    const char *cubin = argc > 1 ? argv[1] : nullptr;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    RK(cudaSetDevice(0));
    RK(cudaFree(0));
    CUcontext primary;
    CK(cuCtxGetCurrent(&primary));
    RK(cudaMalloc(&d_out, 4096 * 4));
    unsigned *sink;
    RK(cudaMalloc(&sink, 64));

    // ---------------------------------------------------------------- groups
    CUdevResource all;
    CK(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
    printf("RESULT device sm resource: smCount %u minPartition %u align %u\n", all.sm.smCount,
           all.sm.minSmPartitionSize, all.sm.smCoscheduledAlignment);
    unsigned ng = 128;
    std::vector<CUdevResource> groups(128);
    CUdevResource rest;
    CK(cuDevSmResourceSplitByCount(groups.data(), &ng, &all, &rest, CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING, 2));
    printf("RESULT split by 2 (ignore co-scheduling): %u groups, remaining %u SMs\n", ng, rest.sm.smCount);
    std::vector<Green> G(ng);
    std::vector<double> td, tc, ts;
    std::set<unsigned> seen;
    int overlaps = 0, contiguous_pairs = 0;
    for (unsigned i = 0; i < ng; i++) {
        double a, b, c;
        G[i] = make_green(&groups[i], 1, &a, &b, &c);
        td.push_back(a);
        tc.push_back(b);
        ts.push_back(c);
        G[i].sms = smids_of((cudaStream_t)G[i].s, 256);
        for (unsigned v : G[i].sms) overlaps += !seen.insert(v).second;
        if (G[i].sms.size() == 2 && *G[i].sms.rbegin() == *G[i].sms.begin() + 1 && (*G[i].sms.begin() % 2) == 0)
            contiguous_pairs++;
        if (i < 8 || i + 2 >= ng) printf("group %u: smids {%s}\n", i, fmt(G[i].sms).c_str());
    }
    printf("RESULT groups: %zu distinct smids over %u groups, %d overlaps, %d groups are {2k,2k+1}\n", seen.size(), ng,
           overlaps, contiguous_pairs);
    printf("RESULT single-group creation us: desc %.1f ctx %.1f stream %.1f (median)\n", median(td), median(tc),
           median(ts));
    // stability: map again
    int stable = 1;
    for (unsigned i = 0; i < ng; i++) {
        auto again = smids_of((cudaStream_t)G[i].s, 256);
        if (again != G[i].sms) stable = 0;
    }
    printf("RESULT group->smid map stable on a second probe: %s\n", stable ? "yes" : "NO");
    // a second split: same order?
    {
        unsigned ng2 = 128;
        std::vector<CUdevResource> g2(128);
        CUdevResource r2;
        CK(cuDevSmResourceSplitByCount(g2.data(), &ng2, &all, &r2, CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING, 2));
        int same = 1;
        for (unsigned i = 0; i < std::min(ng, 6u); i++) {
            Green h = make_green(&g2[i], 1, nullptr, nullptr, nullptr);
            if (smids_of((cudaStream_t)h.s, 256) != G[i].sms) same = 0;
            cuStreamDestroy(h.s);
            cuGreenCtxDestroy(h.g);
        }
        printf("RESULT a second split gives the same first 6 groups: %s\n", same ? "yes" : "NO");
    }

    // ---------------------------------------------------------------- union
    // groups whose smids are all < 66 and the others
    std::vector<CUdevResource> lo, hi;
    std::set<unsigned> lo_sms, hi_sms;
    for (unsigned i = 0; i < ng; i++) {
        bool in = *G[i].sms.rbegin() < 66;
        (in ? lo : hi).push_back(groups[i]);
        for (unsigned v : G[i].sms) (in ? lo_sms : hi_sms).insert(v);
    }
    double a, b, c;
    Green L = make_green(lo.data(), lo.size(), &a, &b, &c);
    auto lseen = smids_of((cudaStream_t)L.s, 1024);
    printf("RESULT union of %zu groups (smids<66): sees %zu smids, subset of expected: %s; creation us desc %.1f ctx %.1f "
           "stream %.1f\n",
           lo.size(), lseen.size(), std::includes(lo_sms.begin(), lo_sms.end(), lseen.begin(), lseen.end()) ? "yes" : "NO",
           a, b, c);
    Green H = make_green(hi.data(), hi.size(), &a, &b, &c);
    auto hseen = smids_of((cudaStream_t)H.s, 1024);
    printf("RESULT union of %zu groups (rest): sees %zu smids, subset: %s; ctx create us %.1f\n", hi.size(), hseen.size(),
           std::includes(hi_sms.begin(), hi_sms.end(), hseen.begin(), hseen.end()) ? "yes" : "NO", b);
    // many creations of the same union: cost distribution
    {
        std::vector<double> cc;
        for (int k = 0; k < 5; k++) {
            Green t = make_green(lo.data(), lo.size(), &a, &b, &c);
            cc.push_back(a + b + c);
            cuStreamDestroy(t.s);
            cuGreenCtxDestroy(t.g);
        }
        printf("RESULT union ctx+stream creation us, median of 5: %.1f\n", median(cc));
    }

    // ---------------------------------------------------------------- graph
    cudaStream_t ps;
    RK(cudaStreamCreateWithFlags(&ps, cudaStreamNonBlocking));
    {
        cudaGraph_t g;
        cudaGraphExec_t ge;
        RK(cudaStreamBeginCapture((cudaStream_t)L.s, cudaStreamCaptureModeThreadLocal));
        smid_rec<<<1024, 32, 0, (cudaStream_t)L.s>>>(d_out);
        RK(cudaStreamEndCapture((cudaStream_t)L.s, &g));
        RK(cudaGraphInstantiate(&ge, g, 0));
        for (int where = 0; where < 2; where++) {
            RK(cudaMemset(d_out, 0xff, 4096));
            RK(cudaGraphLaunch(ge, where ? ps : (cudaStream_t)L.s));
            RK(cudaDeviceSynchronize());
            RK(cudaMemcpy(h_out, d_out, 1024 * 4, cudaMemcpyDeviceToHost));
            std::set<unsigned> r(h_out, h_out + 1024);
            printf("RESULT graph captured on green stream (66-SM union), launched on %s stream: %zu smids, within the "
                   "green ctx: %s\n",
                   where ? "a primary" : "the green", r.size(),
                   std::includes(lo_sms.begin(), lo_sms.end(), r.begin(), r.end()) ? "yes" : "NO");
        }
        // node params: does the node carry a context?
        size_t nn = 0;
        RK(cudaGraphGetNodes(g, nullptr, &nn));
        std::vector<cudaGraphNode_t> nodes(nn);
        RK(cudaGraphGetNodes(g, nodes.data(), &nn));
        CUDA_KERNEL_NODE_PARAMS np;
        memset(&np, 0, sizeof np);
        CUresult gr = cuGraphKernelNodeGetParams((CUgraphNode)nodes[0], &np);
        CUcontext gctx;
        CK(cuCtxFromGreenCtx(&gctx, L.g));
        printf("RESULT captured node: cuGraphKernelNodeGetParams %d, ctx %s (green %p primary %p node %p)\n", (int)gr,
               np.ctx == gctx ? "== green ctx" : (np.ctx == primary ? "== primary" : "other/null"), (void *)gctx,
               (void *)primary, (void *)np.ctx);
    }
    {
        // capture on a primary stream, fork to green and back
        cudaGraph_t g;
        cudaGraphExec_t ge;
        cudaEvent_t e1, e2;
        RK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
        RK(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
        RK(cudaStreamBeginCapture(ps, cudaStreamCaptureModeThreadLocal));
        RK(cudaEventRecord(e1, ps));
        RK(cudaStreamWaitEvent((cudaStream_t)L.s, e1, 0));
        smid_rec<<<1024, 32, 0, (cudaStream_t)L.s>>>(d_out);
        RK(cudaEventRecord(e2, (cudaStream_t)L.s));
        RK(cudaStreamWaitEvent(ps, e2, 0));
        RK(cudaStreamEndCapture(ps, &g));
        RK(cudaGraphInstantiate(&ge, g, 0));
        RK(cudaMemset(d_out, 0xff, 4096));
        RK(cudaGraphLaunch(ge, ps));
        RK(cudaDeviceSynchronize());
        RK(cudaMemcpy(h_out, d_out, 1024 * 4, cudaMemcpyDeviceToHost));
        std::set<unsigned> r(h_out, h_out + 1024);
        printf("RESULT graph captured on primary stream forked to green: %zu smids, within green: %s\n", r.size(),
               std::includes(lo_sms.begin(), lo_sms.end(), r.begin(), r.end()) ? "yes" : "NO");
    }

    // ---------------------------------------------------------------- module (CUfunction from cuModuleLoad)
    if (cubin) {
        CUmodule m;
        CK(cuModuleLoad(&m, cubin));
        CUfunction f;
        CK(cuModuleGetFunction(&f, m, "smid_rec"));
        CUdeviceptr o = (CUdeviceptr)d_out;
        void *args[] = {&o};
        RK(cudaMemset(d_out, 0xff, 4096));
        CK(cuLaunchKernel(f, 1024, 1, 1, 32, 1, 1, 0, L.s, args, nullptr));
        RK(cudaDeviceSynchronize());
        RK(cudaMemcpy(h_out, d_out, 1024 * 4, cudaMemcpyDeviceToHost));
        std::set<unsigned> r(h_out, h_out + 1024);
        printf("RESULT cuModuleLoad CUfunction on green stream (eager): %zu smids, within: %s\n", r.size(),
               std::includes(lo_sms.begin(), lo_sms.end(), r.begin(), r.end()) ? "yes" : "NO");
        CUgraph g;
        CUgraphExec ge;
        CK(cuStreamBeginCapture(L.s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        CK(cuLaunchKernel(f, 1024, 1, 1, 32, 1, 1, 0, L.s, args, nullptr));
        CK(cuStreamEndCapture(L.s, &g));
        CK(cuGraphInstantiate(&ge, g, 0));
        RK(cudaMemset(d_out, 0xff, 4096));
        CK(cuGraphLaunch(ge, (CUstream)ps));
        RK(cudaDeviceSynchronize());
        RK(cudaMemcpy(h_out, d_out, 1024 * 4, cudaMemcpyDeviceToHost));
        std::set<unsigned> r2(h_out, h_out + 1024);
        printf("RESULT cuModuleLoad CUfunction captured on green stream, replayed on primary: %zu smids, within: %s\n",
               r2.size(), std::includes(lo_sms.begin(), lo_sms.end(), r2.begin(), r2.end()) ? "yes" : "NO");
    }

    // ---------------------------------------------------------------- route
    {
        cudaEvent_t e1, e2, t0, t1;
        RK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
        RK(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
        RK(cudaEventCreate(&t0));
        RK(cudaEventCreate(&t1));
        cudaStream_t gs = (cudaStream_t)L.s;
        const int N = 150;
        for (int variant = 0; variant < 2; variant++) {
            unsigned long long ns = variant ? 3000 : 0;   // tiny vs ~3 us kernels
            int blocks = variant ? 66 : 1;
            auto chain = [&](int mode) {   // 0 primary, 1 green, 2 routed
                for (int i = 0; i < N; i++) {
                    if (mode == 0) spin<<<blocks, 128, 0, ps>>>(ns, sink);
                    else if (mode == 1) spin<<<blocks, 128, 0, gs>>>(ns, sink);
                    else {
                        cudaEventRecord(e1, ps);
                        cudaStreamWaitEvent(gs, e1, 0);
                        spin<<<blocks, 128, 0, gs>>>(ns, sink);
                        cudaEventRecord(e2, gs);
                        cudaStreamWaitEvent(ps, e2, 0);
                    }
                }
            };
            const char *names[] = {"primary", "green", "routed"};
            for (int mode = 0; mode < 3; mode++) {
                std::vector<double> eager, host, graph;
                for (int rep = 0; rep < 7; rep++) {
                    RK(cudaDeviceSynchronize());
                    double h0 = now_us();
                    RK(cudaEventRecord(t0, ps));
                    if (mode == 1) {
                        RK(cudaEventRecord(e1, ps));
                        RK(cudaStreamWaitEvent(gs, e1, 0));
                    }
                    chain(mode);
                    if (mode == 1) {
                        RK(cudaEventRecord(e2, gs));
                        RK(cudaStreamWaitEvent(ps, e2, 0));
                    }
                    double h1 = now_us();
                    RK(cudaEventRecord(t1, ps));
                    RK(cudaEventSynchronize(t1));
                    float ms;
                    RK(cudaEventElapsedTime(&ms, t0, t1));
                    eager.push_back(ms * 1000 / N);
                    host.push_back((h1 - h0) / N);
                }
                // graph
                cudaGraph_t g;
                cudaGraphExec_t ge;
                cudaStream_t cs = mode == 1 ? gs : ps;
                RK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
                if (mode == 1) {
                    for (int i = 0; i < N; i++) spin<<<blocks, 128, 0, gs>>>(ns, sink);
                } else
                    chain(mode);
                RK(cudaStreamEndCapture(cs, &g));
                RK(cudaGraphInstantiate(&ge, g, 0));
                for (int rep = 0; rep < 9; rep++) {
                    RK(cudaEventRecord(t0, ps));
                    RK(cudaGraphLaunch(ge, ps));
                    RK(cudaEventRecord(t1, ps));
                    RK(cudaEventSynchronize(t1));
                    float ms;
                    RK(cudaEventElapsedTime(&ms, t0, t1));
                    if (rep) graph.push_back(ms * 1000 / N);
                }
                printf("RESULT route %s kernels (%d blocks, %llu ns): %-7s eager %.2f us/launch (host %.2f), graph %.2f "
                       "us/launch\n",
                       variant ? "3us" : "empty", blocks, ns, names[mode], median(eager), median(host), median(graph));
            }
        }
    }

    // ---------------------------------------------------------------- l2 latency
    {
        unsigned long long *w, *o;
        RK(cudaMalloc(&w, 256));
        RK(cudaMalloc(&o, 16));
        RK(cudaMemset(w, 0, 256));
        const char *kn[] = {"ld.relaxed.gpu", "atom.add relaxed", "red.max+atom.add", "atom.add acq_rel", "ld.nc",
                            "atom.cas relaxed"};
        int clk = 0;
        cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
        for (int k = 0; k < 6; k++) {
            lat<<<1, 1>>>(w, 2000, k, o);
            RK(cudaDeviceSynchronize());
            unsigned long long r[2];
            RK(cudaMemcpy(r, o, 16, cudaMemcpyDeviceToHost));
            printf("RESULT l2 %-18s %llu cycles/op (%.0f ns at %d MHz)\n", kn[k], r[0], r[0] * 1e6 / clk, clk / 1000);
        }
        unsigned *bad;
        RK(cudaMalloc(&bad, 4));
        RK(cudaMemset(bad, 0, 4));
        RK(cudaMemset(w, 0, 256));
        order_check<<<32, 1>>>(w, 1ull << 40, bad, 10000);
        RK(cudaDeviceSynchronize());
        unsigned hb;
        RK(cudaMemcpy(&hb, bad, 4, cudaMemcpyDeviceToHost));
        printf("RESULT red.max then atom.add, same thread and address, 320000 trials: %u out of order\n", hb);
    }
    printf("RESULT done\n");
    return 0;
}
