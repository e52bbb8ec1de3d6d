// rt_app.cu -- a CUDA runtime program for the libtidal GPU tests (test/gpu/runtime/run.sh).
// Built twice: by tidal-nvcc (linked with libtidal: launches go through the
// cudaLaunchKernel wrappers) and by tidal-nvcc --tidal-no-runtime (kernels rewritten,
// no libtidal: run under LD_PRELOAD=libtidal-preload.so). The tidal API is reached by
// dlsym(RTLD_DEFAULT) in both builds, so the program needs no link-time dependency on it.
//
//   rt_app env  N              blocks of one kernel obey the default partition (TIDAL_PARTITION)
//   rt_app api                 two partitions, two streams, concurrent kernels, histograms
//   rt_app flip                the mask moves while a kernel runs (both directions)
//   rt_app graph               a captured graph follows mask changes at every replay
//   rt_app place               hybrid placement: partition streams in green contexts, short
//                              kernels as originals on their SMs, long ones as clones that
//                              follow live masks, graphs captured on them, unplaced sets
//   rt_app tenant NAME [--set SMSET --socket PATH]  (tidald) obey NAME; with --set, send
//                              `set NAME SMSET` to tidald while the kernel runs and check
//                              that the blocks claimed afterwards obey it; prints the
//                              reaction time on the GPU clock
//   rt_app hog [BLOCKS MS]     hold BLOCKS SMs (all shared memory each) for MS ms; print their ids
//   rt_app probe               print the SM ids a small kernel's blocks ran on (run beside a hog)
//   rt_app rate [BLOCKS]       per-launch host and end-to-end cost of a tiny kernel
//                              (bench/gpu/launch_cost.sh); needs no tidal API
//   rt_app policy              tidal_policy.h on real partitions: SGDRC's reservation makes only
//                              the BE blocks on the LS SMs leave a running BE kernel (and how
//                              long LS waits for them), its release gives BE all SMs again;
//                              GSLICE shrinks an LS share from measured latencies to one that
//                              still meets the SLO
//   rt_app l2side              tidal_l2_sides: two disjoint sides covering the device, whole
//                              TPCs, the same twice; a kernel on a side-1 partition reads
//                              lines a side-0 partition loaded slower than side 0 does
//   rt_app l2mem               tidal_l2mem: each half holds what was written through
//                              tidal_l2_addr, and a side-1 SM reads the side-0 half across
//                              the L2 (slow) and the side-1 half on its own side (fast)
//   rt_app l2addr PTX...       tidal_l2addr_attach on modules of l2addr_kernels.cu that
//                              tidal-opt -p l2addr (or -p l2addr,tidal) translated: with the
//                              word filled, a kernel launched with byte 0 of side s's half
//                              writes and reads every element where tidal_l2_addr puts it,
//                              the other half untouched; cleared, it addresses a plain buffer
//                              linearly; a parameter not translated is refused by name
//   rt_app bimodal             tidal_bimodal: both copies hold what was written; a long kernel
//                              whose blocks each read the mode once and sum a 4 KiB chunk
//                              while the host flips the mode six times: every sum exact,
//                              both copies read, and every block that started after a
//                              tidal_bimodal_set returned read the mode it set; bad
//                              arguments refused
//   rt_app cluster             thread-block clusters on a partition stream (a green context of
//                              2-SM groups): clusters of 2 run on its SMs; clusters of 4 and 8
//                              (by attribute or __cluster_dims__) are routed to the
//                              partition's 8-SM groups, inside its SMs, in the stream's order,
//                              eagerly and in a captured graph; 16 is refused with a status
//                              (and, under the preload, a warning)
//   rt_app smem                dynamic shared memory up to the opt-in limit: the most a
//                              clone takes runs as the clone, exactly once, in the mask; the
//                              whole limit runs unmasked and is counted (launches_smem_full)
//   rt_app serve               tidal_server.h: graphs of a ~50 us kernel captured on partition
//                              streams serve 200 Poisson arrivals at 30% load (every one
//                              completed, no faster than the kernel, p50 wait under 50 us,
//                              every block on the partition's SMs: libtidal's cuGraphLaunch
//                              places as the graph was captured), then next to a BE service
//                              in a closed loop on the other SMs; then GSLICE's adaptive
//                              batching (graphs for batches of 1-4): bursts batch what is
//                              queued, a 20000/s Poisson rate fills batches of 4 within the
//                              SLO's queueing half, each batch runs its size's graph
// Every check prints "PASS name" or "FAIL name: why"; exit status 1 if any failed.
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tidal.h"
#include "tidal_abi.h"
#include "tidal_l2.h"
#include "tidal_policy.h"
#include "tidal_server.h"

static int failures = 0;
#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            printf("FAIL cuda: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__);     \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static void result(const char *name, bool ok, const std::string &why = "")
{
    if (ok) printf("PASS %s%s%s\n", name, why.empty() ? "" : ": ", why.c_str());
    else {
        printf("FAIL %s: %s\n", name, why.c_str());
        failures++;
    }
    fflush(stdout);
}

// ---------------------------------------------------------------- the tidal API, by name
struct Api {
    int (*partition_create)(const char *, const char *, tidal_part **);
    int (*partition_find)(const char *, tidal_part **);
    int (*partition_set)(tidal_part *, const char *);
    int (*partition_get_mask)(tidal_part *, tidal_smset *);
    int (*stream_bind)(void *, tidal_part *);
    int (*stats_get)(tidal_part *, tidal_stats *);
    int (*stats_reset)(tidal_part *);
    int (*init)(unsigned);
    const char *(*last_error)(void);
    int (*partition_stream)(tidal_part *, int, void **);
    int (*partition_placed)(tidal_part *);
    int (*partition_set_placement)(tidal_part *, int, unsigned);
    int (*policy_create)(const tidal_policy_config *, tidal_policy **);
    int (*policy_add_service)(tidal_policy *, const tidal_service_config *, int *);
    int (*policy_request_begin)(tidal_policy *, int, unsigned);
    int (*policy_request_end)(tidal_policy *, int, double, unsigned);
    int (*policy_share)(tidal_policy *, int, tidal_smset *, unsigned *);
    int (*policy_destroy)(tidal_policy *);
    int (*policy_batch_profile)(tidal_policy *, int, unsigned, double);
    int (*l2_sides)(tidal_smset *, tidal_smset *);
    int (*l2mem_create)(size_t, tidal_l2mem **);
    int (*l2mem_layout)(const tidal_l2mem *, tidal_l2_layout *);
    int (*l2mem_destroy)(tidal_l2mem *);
    int (*l2addr_attach)(void *, const char *, unsigned, const tidal_l2mem *, unsigned, uint64_t *);
    int (*bimodal_create)(size_t, unsigned, tidal_bimodal **);
    int (*bimodal_write)(tidal_bimodal *, size_t, const void *, size_t);
    int (*bimodal_set)(tidal_bimodal *, unsigned);
    int (*bimodal_desc_addr)(const tidal_bimodal *, uint64_t *);
    int (*bimodal_destroy)(tidal_bimodal *);
    int (*server_create)(tidal_policy *, const tidal_server_config *, tidal_server **);
    int (*server_add_service)(tidal_server *, const tidal_server_service *, int *);
    int (*server_arrivals)(tidal_server *, int, const uint64_t *, size_t);
    int (*server_instantiate)(tidal_server *, void *, void **);
    int (*server_run)(tidal_server *, uint64_t);
    int (*server_records)(tidal_server *, const tidal_server_record **, size_t *);
    int (*server_counts_get)(tidal_server *, int, tidal_server_counts *);
    int (*server_destroy)(tidal_server *);
} api;

static void load_api()
{
#define GET(f) *(void **)&api.f = dlsym(RTLD_DEFAULT, "tidal_" #f)
    GET(partition_create); GET(partition_find); GET(partition_set); GET(partition_get_mask);
    GET(stream_bind); GET(stats_get); GET(stats_reset); GET(init); GET(last_error);
    GET(partition_stream); GET(partition_placed); GET(partition_set_placement);
    GET(policy_create); GET(policy_add_service); GET(policy_request_begin); GET(policy_request_end);
    GET(policy_share); GET(policy_destroy); GET(policy_batch_profile); GET(l2_sides); GET(l2mem_create); GET(l2mem_layout); GET(l2mem_destroy);
    GET(l2addr_attach);
    GET(bimodal_create); GET(bimodal_write); GET(bimodal_set); GET(bimodal_desc_addr); GET(bimodal_destroy);
    GET(server_create); GET(server_add_service); GET(server_arrivals); GET(server_instantiate); GET(server_run);
    GET(server_records); GET(server_counts_get); GET(server_destroy);
#undef GET
    if (!api.partition_create || !api.stream_bind) {
        printf("FAIL setup: the tidal API is not in this process (not linked, not preloaded)\n");
        exit(1);
    }
}

#define TCK(x)                                                                                 \
    do {                                                                                       \
        int s_ = (x);                                                                          \
        if (s_ != 0) {                                                                         \
            printf("FAIL tidal: %s: status %d: %s (line %d)\n", #x, s_, api.last_error(), __LINE__); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

// ---------------------------------------------------------------- the kernel
// One logical block: thread 0 records where and when it ran and in which order, then the
// block spins for spin_ns (so kernels are long enough to move masks under them).
struct Rec {
    unsigned *sm;               // SM of each logical block
    unsigned *count;            // executions of each logical block (must end at 1)
    unsigned *order;            // claim order
    unsigned long long *t;      // %globaltimer at start
    unsigned char *saw;         // *flag when it started
    unsigned *counter;          // next order value
    volatile unsigned *progress;  // host-mapped: claim order of a recent block (every 256th)
    volatile unsigned *flag;      // device memory: copied in by the host when it moves a mask
};

extern "C" __global__ void record_blocks(Rec r, unsigned spin_ns)
{
    unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    if (threadIdx.x == 0) {
        unsigned sm;
        unsigned long long t0, t;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
        unsigned o = atomicAdd(r.counter, 1u);
        r.sm[b] = sm;
        r.order[b] = o;
        r.t[b] = t0;
        r.saw[b] = (unsigned char)*r.flag;
        atomicAdd(&r.count[b], 1u);
        if ((o & 255u) == 0) *r.progress = o;   // host-mapped: keep PCIe traffic low
        do {
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        } while (t - t0 < spin_ns);
    }
    __syncthreads();
}

struct Run {
    unsigned n;
    Rec d;
    volatile unsigned *hprogress;
    unsigned *hflag;      // pinned source of the flag copy
    cudaStream_t fstream; // the flag copy's stream (non-blocking, like libtidal's)
    std::vector<unsigned> sm, count, order;
    std::vector<unsigned long long> t;
    std::vector<unsigned char> saw;

    explicit Run(unsigned nblocks) : n(nblocks)
    {
        CK(cudaMalloc(&d.sm, n * 4)); CK(cudaMalloc(&d.count, n * 4)); CK(cudaMalloc(&d.order, n * 4));
        CK(cudaMalloc(&d.t, n * 8)); CK(cudaMalloc(&d.saw, n)); CK(cudaMalloc(&d.counter, 4));
        CK(cudaHostAlloc((void **)&hprogress, 4, cudaHostAllocMapped)); CK(cudaHostAlloc(&hflag, 4, 0));
        CK(cudaHostGetDevicePointer((void **)&d.progress, (void *)hprogress, 0));
        CK(cudaMalloc((void **)&d.flag, 4));
        CK(cudaStreamCreateWithFlags(&fstream, cudaStreamNonBlocking));
        reset();
    }
    void reset()
    {
        CK(cudaMemset(d.sm, 0xff, n * 4)); CK(cudaMemset(d.count, 0, n * 4)); CK(cudaMemset(d.order, 0xff, n * 4));
        CK(cudaMemset(d.counter, 0, 4)); CK(cudaMemset(d.saw, 0, n)); CK(cudaMemset((void *)d.flag, 0, 4));
        *hprogress = 0;
        CK(cudaDeviceSynchronize());
    }
    void launch(cudaStream_t s, unsigned spin_ns, dim3 grid = dim3(0))
    {
        if (grid.x == 0) grid = dim3(n);
        record_blocks<<<grid, 128, 0, s>>>(d, spin_ns);
        CK(cudaGetLastError());
    }
    // blocks that start after the copy lands see saw = v: the host's moment on the GPU clock
    void raise_flag(unsigned v)
    {
        *hflag = v;
        CK(cudaMemcpyAsync((void *)d.flag, hflag, 4, cudaMemcpyHostToDevice, fstream));
    }
    // GPU time of the first block that saw flag >= v (~0 if none)
    unsigned long long flag_time(unsigned v)
    {
        unsigned long long t0 = ~0ull;
        for (unsigned i = 0; i < n; i++)
            if (saw[i] >= v && t[i] < t0) t0 = t[i];
        return t0;
    }
    unsigned long long last_start_outside(const tidal_smset &m)
    {
        unsigned long long tl = 0;
        for (unsigned i = 0; i < n; i++) {
            unsigned s = sm[i];
            if (!(s < 256 && ((m.bits[s / 64] >> (s % 64)) & 1)) && t[i] > tl) tl = t[i];
        }
        return tl;
    }
    void fetch()
    {
        sm.resize(n); count.resize(n); order.resize(n); t.resize(n); saw.resize(n);
        CK(cudaMemcpy(sm.data(), d.sm, n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(count.data(), d.count, n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(order.data(), d.order, n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(t.data(), d.t, n * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(saw.data(), d.saw, n, cudaMemcpyDeviceToHost));
    }
    // every logical block ran exactly k times (k launches of the grid)
    bool exactly_n(unsigned k, std::string *why)
    {
        for (unsigned i = 0; i < n; i++)
            if (count[i] != k) {
                *why = "logical block " + std::to_string(i) + " of " + std::to_string(n) + " ran " +
                       std::to_string(count[i]) + " times, not " + std::to_string(k);
                return false;
            }
        return true;
    }
    bool exactly_once(std::string *why) { return exactly_n(1, why); }
    // blocks with order >= from all on SMs of mask
    unsigned outside(const tidal_smset &m, unsigned from = 0, unsigned *first_bad_sm = nullptr)
    {
        unsigned bad = 0;
        for (unsigned i = 0; i < n; i++) {
            if (order[i] < from) continue;
            unsigned s = sm[i];
            if (s >= 256 || !((m.bits[s / 64] >> (s % 64)) & 1)) {
                if (!bad && first_bad_sm) *first_bad_sm = s;
                bad++;
            }
        }
        return bad;
    }
    unsigned distinct_sms(unsigned from = 0)
    {
        std::vector<bool> seen(256);
        unsigned c = 0;
        for (unsigned i = 0; i < n; i++)
            if (order[i] >= from && sm[i] < 256 && !seen[sm[i]]) seen[sm[i]] = true, c++;
        return c;
    }
};

// Blocks that may still start on SMs a mask change removed: each worker (at most 16 per SM
// for this 128-thread kernel) runs the chunk it holds and the one it claimed ahead.
static unsigned claim_margin(unsigned logical, unsigned allowed_sms, unsigned nsms)
{
    unsigned occ = 16, chunk = logical / (occ * (allowed_sms ? allowed_sms : 1) * 8);
    const char *mc = getenv("TIDAL_MAX_CHUNK");
    unsigned maxc = mc ? (unsigned)atoi(mc) : 32;
    chunk = chunk < 1 ? 1 : chunk > maxc ? maxc : chunk;
    return occ * nsms * (chunk + 1);
}

static tidal_smset parse(const char *s)
{
    tidal_smset m;
    memset(&m, 0, sizeof m);
    if (tidal_smset_parse(s, &m, nullptr, nullptr) != 0) { printf("FAIL setup: bad SM set %s\n", s); exit(1); }
    return m;
}

static tidal_smset clip(tidal_smset m, int nsm)
{
    for (int b = nsm; b < 256; b++) m.bits[b / 64] &= ~(1ull << (b % 64));
    return m;
}

static bool same(const tidal_smset &a, const tidal_smset &b) { return !memcmp(&a, &b, sizeof a); }

static double now_us()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int nsm()
{
    int v;
    CK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0));
    return v;
}

// ---------------------------------------------------------------- modes
static void mode_env(unsigned n)
{
    const char *e = getenv("TIDAL_PARTITION");
    if (!e) { result("env", false, "TIDAL_PARTITION not set"); return; }
    std::string name(e);
    name = name.substr(0, name.find(':'));
    Run r(n);
    r.launch(0, 2000);
    CK(cudaDeviceSynchronize());
    r.fetch();
    tidal_part *p;
    TCK(api.partition_find(name.c_str(), &p));
    tidal_smset m;
    TCK(api.partition_get_mask(p, &m));
    std::string why;
    bool once = r.exactly_once(&why);
    unsigned bad_sm = 0, bad = r.outside(m, 0, &bad_sm);
    char ms[1100];
    tidal_smset_format(&m, ms, sizeof ms);
    tidal_stats st;
    TCK(api.stats_get(p, &st));
    uint64_t hist = 0;
    for (int i = 0; i < 256; i++) hist += st.sm_blocks[i];
    result("env.exactly-once", once, why);
    result("env.inside-mask", bad == 0,
           std::to_string(bad) + " of " + std::to_string(n) + " blocks outside " + ms +
               (bad ? " (first on SM " + std::to_string(bad_sm) + ")" : "") + ", " +
               std::to_string(r.distinct_sms()) + " SMs used");
    result("env.rewritten-launch", st.launches_rewritten >= 1,
           "launches rewritten " + std::to_string(st.launches_rewritten) + ", unknown " +
               std::to_string(st.launches_unknown));
    result("env.histogram", hist >= n, "histogram total " + std::to_string(hist) + " >= " + std::to_string(n));
}

static void mode_api()
{
    tidal_part *ls, *be;
    TCK(api.partition_create("ls", "0-47", &ls));
    TCK(api.partition_create("be", "48-131", &be));
    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    TCK(api.stream_bind(s1, ls));
    TCK(api.stream_bind(s2, be));
    Run a(20000), b(40000);
    a.launch(s1, 5000);
    b.launch(s2, 5000, dim3(200, 200));
    CK(cudaDeviceSynchronize());
    a.fetch();
    b.fetch();
    std::string why;
    result("api.ls.exactly-once", a.exactly_once(&why), why);
    result("api.be.exactly-once", b.exactly_once(&why), why);
    tidal_smset mls = parse("0-47"), mbe = clip(parse("48-131"), nsm());
    unsigned oa = a.outside(mls), ob = b.outside(mbe);
    result("api.ls.inside", oa == 0, std::to_string(oa) + " outside, " + std::to_string(a.distinct_sms()) + " SMs");
    result("api.be.inside", ob == 0, std::to_string(ob) + " outside, " + std::to_string(b.distinct_sms()) + " SMs");
    // both ran at the same time: their intervals overlap
    unsigned long long a0 = *std::min_element(a.t.begin(), a.t.end()), a1 = *std::max_element(a.t.begin(), a.t.end());
    unsigned long long b0 = *std::min_element(b.t.begin(), b.t.end()), b1 = *std::max_element(b.t.begin(), b.t.end());
    result("api.concurrent", a0 < b1 && b0 < a1, "ls " + std::to_string((a1 - a0) / 1000) + " us, be " +
                                                     std::to_string((b1 - b0) / 1000) + " us");
    tidal_stats st;
    TCK(api.stats_get(ls, &st));
    uint64_t tot = 0, outside = 0;
    for (int i = 0; i < 256; i++) tot += st.sm_blocks[i], outside += i >= 48 ? st.sm_blocks[i] : 0;
    result("api.ls.histogram", tot == 20000 && outside == 0,
           "sum " + std::to_string(tot) + ", outside " + std::to_string(outside) + ", violations " +
               std::to_string(st.violations));
    // an unbound stream runs unmasked (no default partition here)
    Run c(5000);
    cudaStream_t s3;
    CK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking));
    c.launch(s3, 1000);
    CK(cudaDeviceSynchronize());
    c.fetch();
    result("api.unbound.exactly-once", c.exactly_once(&why), why);
    TCK(api.stats_get(nullptr, &st));
    result("api.unbound.unmasked", st.launches_unmasked >= 1, "unmasked launches " + std::to_string(st.launches_unmasked));
}

// ---------------------------------------------------------------- shared memory at the limit
// The kernel's whole dynamic region is written and read back, its last bytes included: a
// clone's protocol words follow them in its dynamic shared memory and must not overlap.
extern "C" __global__ void smem_optin(unsigned *sm, unsigned *count, unsigned *sum, unsigned words)
{
    extern __shared__ unsigned dyn[];
    __shared__ unsigned part[128];   // 512 bytes static
    const unsigned b = blockIdx.x;
    for (unsigned k = threadIdx.x; k < words; k += blockDim.x) dyn[k] = (b * 2654435761u) ^ k;
    __syncthreads();
    unsigned acc = 0;
    for (unsigned k = threadIdx.x; k < words; k += blockDim.x) acc += dyn[words - 1 - k];
    part[threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned t = 0;
        for (unsigned i = 0; i < blockDim.x; i++) t += part[i];
        unsigned s;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
        sm[b] = s;
        sum[b] = t;
        atomicAdd(&count[b], 1u);
    }
}

// As a Triton GEMM with many stages: the kernel is allowed the device's opt-in limit minus
// its static shared memory. A launch of the most a clone can take (the limit minus the
// clone's TIDAL_SH_BYTES words) runs as the clone, in the mask, every block once; a launch
// of the whole limit cannot be a clone: it runs as given, unmasked, and is counted.
static void mode_smem()
{
    tidal_part *p;
    TCK(api.partition_create("sm", "0-65", &p));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    TCK(api.stream_bind(s, p));
    int optin = 0;
    CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, smem_optin));
    const int allow = optin - (int)fa.sharedSizeBytes;
    CK(cudaFuncSetAttribute(smem_optin, cudaFuncAttributeMaxDynamicSharedMemorySize, allow));
    const unsigned n = 1000;
    unsigned *dsm, *dcount, *dsum;
    CK(cudaMalloc(&dsm, n * 4));
    CK(cudaMalloc(&dcount, n * 4));
    CK(cudaMalloc(&dsum, n * 4));
    const tidal_smset mask = parse("0-65");
    struct Case {
        const char *name;
        unsigned bytes;
        bool clone;
    } cases[] = {{"smem.clone", (unsigned)(allow - TIDAL_SH_BYTES) & ~(unsigned)(TIDAL_SH_ALIGN - 1), true},
                 {"smem.full", (unsigned)allow, false}};
    for (const Case &c : cases) {
        const unsigned words = c.bytes / 4;
        CK(cudaMemset(dsm, 0xff, n * 4));
        CK(cudaMemset(dcount, 0, n * 4));
        CK(cudaMemset(dsum, 0, n * 4));
        CK(cudaDeviceSynchronize());
        tidal_stats st0, st1;
        TCK(api.stats_get(nullptr, &st0));
        smem_optin<<<n, 128, c.bytes, s>>>(dsm, dcount, dsum, words);
        cudaError_t le = cudaGetLastError();
        CK(cudaStreamSynchronize(s));
        TCK(api.stats_get(nullptr, &st1));
        std::vector<unsigned> sm(n), count(n), sum(n);
        CK(cudaMemcpy(sm.data(), dsm, n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(count.data(), dcount, n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(sum.data(), dsum, n * 4, cudaMemcpyDeviceToHost));
        unsigned wrong = 0, not_once = 0, outside = 0;
        for (unsigned b = 0; b < n; b++) {
            unsigned want = 0;
            for (unsigned k = 0; k < words; k++) want += (b * 2654435761u) ^ k;
            wrong += sum[b] != want;
            not_once += count[b] != 1;
            outside += !(sm[b] < 256 && ((mask.bits[sm[b] / 64] >> (sm[b] % 64)) & 1));
        }
        const uint64_t rw = st1.launches_rewritten - st0.launches_rewritten,
                       full = st1.launches_smem_full - st0.launches_smem_full,
                       unm = st1.launches_unmasked - st0.launches_unmasked;
        std::string what = std::to_string(c.bytes) + " dynamic + " + std::to_string(fa.sharedSizeBytes) +
                           " static of " + std::to_string(optin) + ": launch " + cudaGetErrorString(le) + ", " +
                           std::to_string(not_once) + " blocks not run once, " + std::to_string(wrong) +
                           " wrong sums, " + std::to_string(outside) + " outside 0-65; rewritten +" +
                           std::to_string(rw) + ", smem_full +" + std::to_string(full) + ", unmasked +" +
                           std::to_string(unm);
        bool ok = le == cudaSuccess && !not_once && !wrong;
        if (c.clone) ok = ok && rw == 1 && full == 0 && outside == 0;
        else ok = ok && rw == 0 && full == 1 && unm == 1;
        result(c.name, ok, what);
    }
    CK(cudaFree(dsm));
    CK(cudaFree(dcount));
    CK(cudaFree(dsum));
}

// Run a long kernel on p, move p's mask to `to` at ~30% progress, check the blocks claimed
// after the move (with a margin for blocks already claimed) obey `to`.
// Run a long kernel on p; at ~30% progress move p's mask from `from` to `to`.
//  - blocks claimed after the move (plus the claims already held) obey `to` where the
//    kernel still has workers there: always for a shrink;
//  - SMs a running kernel is given are used by it too: libtidal starts joiners (flow-in);
//  - every logical block runs exactly once in every case.
static void flip_case(const char *label, tidal_part *p, const char *from, const char *to, cudaStream_t s)
{
    TCK(api.partition_set(p, from));
    const unsigned n = 400000, spin = 5000;
    Run r(n);
    r.launch(s, spin);
    while (*r.hprogress < n * 3 / 10) {}
    r.raise_flag(1);
    double t0 = now_us();
    TCK(api.partition_set(p, to));
    double t1 = now_us();
    r.raise_flag(2);
    CK(cudaStreamSynchronize(s));
    r.fetch();
    std::string why, L(label);
    result((L + ".exactly-once").c_str(), r.exactly_once(&why), why);
    tidal_smset mf = clip(parse(from), nsm()), mt = clip(parse(to), nsm());
    unsigned at2 = ~0u;
    for (unsigned i = 0; i < n; i++)
        if (r.saw[i] >= 2 && r.order[i] < at2) at2 = r.order[i];
    const unsigned margin = claim_margin(n, tidal_smset_count(&mf), nsm());
    unsigned long long tf = r.flag_time(1), td = r.flag_time(2), tl = r.last_start_outside(mt);
    unsigned long long k0 = *std::min_element(r.t.begin(), r.t.end()), k1 = *std::max_element(r.t.begin(), r.t.end());
    bool shrink = true;
    for (int w = 0; w < 4; w++) shrink &= (mt.bits[w] & ~mf.bits[w]) == 0;
    char msg[400];
    snprintf(msg, sizeof msg, "%s -> %s at block %u of %u (kernel %.0f us, %u us/block); set %.1f us on the host, "
             "mask on the GPU %.1f us after the request; last start on a removed SM %.1f us after it; "
             "SMs used before/after %u/%u",
             from, to, at2, n, (k1 - k0) / 1000.0, spin / 1000, t1 - t0, td > tf && td != ~0ull ? (td - tf) / 1000.0 : -1.0,
             tl > tf ? (tl - tf) / 1000.0 : 0.0, r.distinct_sms(0), at2 == ~0u ? 0 : r.distinct_sms(at2 + margin));
    if (shrink) {
        unsigned bad = at2 == ~0u ? n : r.outside(mt, at2 + margin);
        result((L + ".leaves").c_str(), bad == 0, std::to_string(bad) + " blocks outside after +" +
                                                    std::to_string(margin) + "; " + msg);
    } else {
        // SMs given to the running kernel: libtidal starts joiners for it, so after the move
        // it runs on every SM of `to` (flow-in). A worker left on a removed SM by a move to
        // a disjoint set is the liveness guard until joiners arrive (at most one SM).
        std::vector<bool> in_to(256), out(256);
        unsigned used_to = 0, out_sms = 0, out_blocks = 0;
        for (unsigned i = 0; i < n; i++) {
            if (at2 == ~0u || r.order[i] < at2 + margin) continue;
            unsigned q = r.sm[i];
            if (q >= 256) continue;
            bool allowed = (mt.bits[q / 64] >> (q % 64)) & 1;
            if (allowed && !in_to[q]) in_to[q] = true, used_to++;
            if (!allowed) {
                out_blocks++;
                if (!out[q]) out[q] = true, out_sms++;
            }
        }
        result((L + ".flows-in").c_str(), used_to == tidal_smset_count(&mt),
               std::to_string(used_to) + " of " + std::to_string(tidal_smset_count(&mt)) +
                   " SMs of the new set used after the move; " + msg);
        result((L + ".leaves").c_str(), out_sms <= 1,
               std::to_string(out_blocks) + " blocks on " + std::to_string(out_sms) + " removed SM(s) after the move");
        tidal_stats st;
        TCK(api.stats_get(nullptr, &st));
        printf("joins so far: %llu\n", (unsigned long long)st.joins);
        r.reset();
        r.launch(s, 1000, dim3(20000));
        CK(cudaStreamSynchronize(s));
        r.fetch();
        unsigned bad2 = 0;
        for (unsigned i = 0; i < 20000; i++) {
            unsigned q = r.sm[i];
            if (q >= 256 || !((mt.bits[q / 64] >> (q % 64)) & 1)) bad2++;
        }
        std::vector<bool> seen(256);
        unsigned used = 0;
        for (unsigned i = 0; i < 20000; i++) if (r.sm[i] < 256 && !seen[r.sm[i]]) seen[r.sm[i]] = true, used++;
        result((L + ".next-launch").c_str(), bad2 == 0 && used == tidal_smset_count(&mt),
               std::to_string(used) + " SMs used of " + std::to_string(tidal_smset_count(&mt)) + ", " +
                   std::to_string(bad2) + " blocks outside");
    }
}

static void mode_flip()
{
    tidal_part *p;
    TCK(api.partition_create("f", "all", &p));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    TCK(api.stream_bind(s, p));
    flip_case("flip.shrink", p, "all", "0-65", s);
    flip_case("flip.grow", p, "0-65", "all", s);
    flip_case("flip.move", p, "0-31", "100-131", s);
}

// One graph holding three clones (epochs 1..3 of the capture's slot), replayed under
// masks that change between replays, with eager launches on the same stream between
// them (the stream's own slot), then a persistent-placement partition on all SMs
// captured whole and replayed after it shrank (its clones stay dynamic in graphs).
static void graph_replays(const char *tag, tidal_part *p, cudaStream_t s, const char *const *sets, int nsets)
{
    Run r(8000), r2(3000), r3(500), e(2000);
    r.launch(s, 1000);   // warm up (module attach, occupancy) outside the capture
    CK(cudaStreamSynchronize(s));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    r.launch(s, 1000);
    r2.launch(s, 2000);
    r3.launch(s, 500);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    tidal_stats st0, st1;
    TCK(api.stats_get(NULL, &st0));
    for (int i = 0; i < nsets; i++) {
        TCK(api.partition_set(p, sets[i]));
        r.reset();
        r2.reset();
        r3.reset();
        e.reset();
        CK(cudaGraphLaunch(ge, s));
        e.launch(s, 300);   // eager, between replays: the stream's own slot
        CK(cudaGraphLaunch(ge, s));   // a second replay straight after (serialized)
        CK(cudaStreamSynchronize(s));
        r.fetch();
        r2.fetch();
        r3.fetch();
        e.fetch();
        // two replays: every logical block exactly twice
        std::string why;
        bool ok = r.exactly_n(2, &why) && r2.exactly_n(2, &why) && r3.exactly_n(2, &why) && e.exactly_once(&why);
        tidal_smset m = clip(parse(sets[i]), nsm());
        unsigned bad = r.outside(m) + r2.outside(m) + r3.outside(m) + e.outside(m);
        result((std::string(tag) + ".replay" + std::to_string(i)).c_str(), ok && bad == 0,
               std::string(sets[i]) + ": " + (ok ? "" : why + "; ") + std::to_string(bad) + " blocks outside, " +
                   std::to_string(r.distinct_sms()) + " SMs used");
    }
    TCK(api.stats_get(NULL, &st1));
    result((std::string(tag) + ".epoch-mode").c_str(), st1.launches_graph_probe == st0.launches_graph_probe,
           std::to_string(st1.launches_graph_probe - st0.launches_graph_probe) + " captured clones in probe mode");
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
}

static void mode_graph()
{
    tidal_part *p;
    TCK(api.partition_create("g", "0-31", &p));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    TCK(api.stream_bind(s, p));
    const char *sets[] = {"0-31", "64-127", "5,7,9-20", "all"};
    graph_replays("graph", p, s, sets, 4);
    tidal_part *q;
    TCK(api.partition_create("gall", "all", &q));
    TCK(api.partition_set_placement(q, 1 /* TIDAL_PLACE_PERSISTENT */, 0));
    cudaStream_t s2;
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    TCK(api.stream_bind(s2, q));
    const char *sets2[] = {"all", "0-65", "100-131"};
    graph_replays("graph.persistent-all", q, s2, sets2, 3);
}

static int send_request(const char *sock, const std::string &line, std::string *reply)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
    if (connect(fd, (sockaddr *)&a, sizeof a) != 0) { close(fd); return -1; }
    std::string l = line + "\n";
    if (write(fd, l.data(), l.size()) != (ssize_t)l.size()) { close(fd); return -1; }
    char buf[4096];
    reply->clear();
    while (reply->find("\nend\n") == std::string::npos && reply->rfind("end\n", 0) != 0) {
        ssize_t k = read(fd, buf, sizeof buf);
        if (k <= 0) break;
        reply->append(buf, k);
    }
    close(fd);
    return 0;
}

static void mode_tenant(int argc, char **argv)
{
    const char *name = argv[2], *set = nullptr, *sock = getenv("TIDAL_SOCKET");
    unsigned n = 400000, spin = 1000, set_n = 4000000, set_spin = 5000;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--spin")) spin = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--set")) set = argv[i + 1];
        else if (!strcmp(argv[i], "--set-blocks")) set_n = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--set-spin")) set_spin = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--socket")) sock = argv[i + 1];
        else if (!strcmp(argv[i], "--blocks")) n = (unsigned)atoi(argv[i + 1]);
    }
    Run r(n);
    r.launch(0, spin);
    CK(cudaDeviceSynchronize());
    tidal_part *p;
    TCK(api.partition_find(name, &p));
    tidal_smset m0;
    TCK(api.partition_get_mask(p, &m0));
    r.fetch();
    std::string why;
    char ms[1100];
    tidal_smset_format(&m0, ms, sizeof ms);
    result("tenant.exactly-once", r.exactly_once(&why), why);
    unsigned bad = r.outside(m0);
    result("tenant.inside", bad == 0, std::string(name) + " = " + ms + ": " + std::to_string(bad) + " outside, " +
                                          std::to_string(r.distinct_sms()) + " SMs used");
    if (!set) return;
    // a long kernel (4M blocks of 5 us: ~10 ms) moved at 30%
    n = set_n;
    spin = set_spin;
    Run r2(n);
    Run &rr = r2;
    rr.launch(0, spin);
    while (*rr.hprogress < n * 3 / 10) {}
    rr.raise_flag(1);   // lands about when the request leaves: the request's time on the GPU clock
    std::string reply;
    double t0 = now_us();
    int rc = send_request(sock, std::string("set ") + name + " " + set, &reply);
    double t1 = now_us();
    tidal_smset mt = clip(parse(set), nsm()), cur;
    // the tenant's watcher thread applies it: the host copy changes once the device copy is done
    for (;;) {   // poll gently: the watcher thread needs the lock this takes, and a thread
                 // that had to sleep on it pays a wake-up (tens of us on the GPU machine)
        TCK(api.partition_get_mask(p, &cur));
        if (same(cur, mt) || now_us() - t0 > 2e6) break;
        usleep(25);
    }
    double t2 = now_us();
    rr.raise_flag(2);
    CK(cudaDeviceSynchronize());
    rr.fetch();
    result("tenant.set-accepted", rc == 0 && reply.rfind("ok", 0) == 0, reply.substr(0, reply.find('\n')));
    result("tenant.set.applied", same(cur, mt), "mask applied in this process " + std::to_string((int)(t2 - t0)) + " us after the request");
    result("tenant.set.exactly-once", rr.exactly_once(&why), why);
    unsigned at2 = ~0u;
    for (unsigned i = 0; i < n; i++)
        if (rr.saw[i] >= 2 && rr.order[i] < at2) at2 = rr.order[i];
    const unsigned margin = claim_margin(n, tidal_smset_count(&m0), nsm());
    bad = at2 == ~0u ? n : rr.outside(mt, at2 + margin);
    result("tenant.set.obeys", bad == 0, std::to_string(bad) + " blocks outside " + set + " after block " +
                                             std::to_string(at2) + " + " + std::to_string(margin) + " of " + std::to_string(n));
    // on the GPU clock: request sent (flag 1) -> mask in place (flag 2) -> last start on a removed SM
    unsigned long long tf = rr.flag_time(1), td = rr.flag_time(2), tl = rr.last_start_outside(mt);
    printf("reaction_us %.1f control_us %.1f request_us %.1f block_us %.1f (request sent at %.1f us, answer at %.1f, "
           "mask seen here at %.1f: CLOCK_MONOTONIC)\n",
           tl > tf ? (tl - tf) / 1000.0 : 0.0, td > tf && td != ~0ull ? (td - tf) / 1000.0 : -1.0, t1 - t0,
           spin / 1000.0, t0, t1, t2);
}

// ---------------------------------------------------------------- the hog test (MPS)
// hog: one block per SM, each holding all of an SM's shared memory for MS ms, reporting the
// SM ids it holds; probe (started while a hog runs in another process): where do this
// process's blocks land, by its own %smid?
extern "C" __global__ void hog_kernel(unsigned *sm, unsigned long long ns)
{
    extern __shared__ unsigned char big[];
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    if (threadIdx.x == 0) {
        unsigned s;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
        sm[blockIdx.x] = s;
        big[0] = (unsigned char)s;
    }
    do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    while (t - t0 < ns);
}

extern "C" __global__ void probe_kernel(unsigned *sm)
{
    if (threadIdx.x == 0) {
        unsigned s;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
        sm[blockIdx.x] = s;
    }
}

static std::string ids(const std::vector<unsigned> &v)
{
    std::vector<unsigned> u(v);
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
    tidal_smset m;
    memset(&m, 0, sizeof m);
    for (unsigned x : u) if (x < 256) m.bits[x / 64] |= 1ull << (x % 64);
    char b[1100];
    tidal_smset_format(&m, b, sizeof b);
    return std::to_string(u.size()) + " SMs: " + b;
}

static int mode_hog(unsigned nblocks, unsigned ms)
{
    int smem;
    CK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, hog_kernel));
    smem -= (int)fa.sharedSizeBytes;   // the rewrite adds a little static shared memory
    CK(cudaFuncSetAttribute(hog_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    unsigned *d;
    CK(cudaMalloc(&d, nblocks * 4));
    hog_kernel<<<nblocks, 32, smem>>>(d, ms * 1000000ull);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned> h(nblocks);
    CK(cudaMemcpy(h.data(), d, nblocks * 4, cudaMemcpyDeviceToHost));
    int nsmid = nsm();
    printf("hog held %s (of %d SMs this client sees)\n", ids(h).c_str(), nsmid);
    return 0;
}

static int mode_probe()
{
    const unsigned n = 20000;
    unsigned *d;
    CK(cudaMalloc(&d, n * 4));
    probe_kernel<<<n, 64>>>(d);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned> h(n);
    CK(cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost));
    printf("probe ran on %s (of %d SMs this client sees)\n", ids(h).c_str(), nsm());
    return 0;
}

// ---------------------------------------------------------------- rate: per-launch cost
// One tiny kernel launched back to back on one stream (bench/gpu/launch_cost.sh runs it
// without libtidal, and through each launch path). Needs no tidal API.
extern "C" __global__ void rate_kernel(unsigned *out)
{
    if (threadIdx.x == 0) atomicAdd(out + (blockIdx.x & 63), 1u);
}

static int mode_rate(unsigned blocks)
{
    unsigned *d;
    CK(cudaMalloc(&d, 64 * sizeof(unsigned)));
    CK(cudaMemset(d, 0, 64 * sizeof(unsigned)));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned long long launched = 0;
    for (int i = 0; i < 200; i++, launched++) rate_kernel<<<blocks, 128, 0, s>>>(d);   // warm-up
    CK(cudaStreamSynchronize(s));
    // host cost: bursts short enough not to fill the launch queue
    const int burst = 128, rounds = 41;
    std::vector<double> host;
    for (int r = 0; r < rounds; r++) {
        double t0 = now_us();
        for (int i = 0; i < burst; i++, launched++) rate_kernel<<<blocks, 128, 0, s>>>(d);
        host.push_back((now_us() - t0) / burst);
        CK(cudaStreamSynchronize(s));
    }
    std::sort(host.begin(), host.end());
    // end to end: many launches, then one synchronize
    const int n = 5000;
    double t0 = now_us();
    for (int i = 0; i < n; i++, launched++) rate_kernel<<<blocks, 128, 0, s>>>(d);
    CK(cudaStreamSynchronize(s));
    double e2e = (now_us() - t0) / n;
    CK(cudaGetLastError());
    unsigned h[64];
    CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    unsigned long long sum = 0;
    for (unsigned v : h) sum += v;
    printf("RATE blocks %u: host %.2f us per launch (median of %d bursts of %d), end to end %.2f us per launch (%d back to back)\n",
           blocks, host[rounds / 2], rounds, burst, e2e, n);
    result("rate.every-block-ran", sum == launched * blocks,
           std::to_string(sum) + " block runs counted, " + std::to_string(launched * blocks) + " launched");
    return failures ? 1 : 0;
}


// ---------------------------------------------------------------- hybrid placement
// Blocks of a launch on a partition stream stay on the partition's SMs whether they run
// as the original (short kernels, once measured) or as the clone.
static void place_short(const char *label, tidal_part *p, cudaStream_t s, const tidal_smset &m, bool expect_original)
{
    std::string L(label);
    tidal_stats st0, st1;
    TCK(api.stats_get(nullptr, &st0));
    Run r(264);
    unsigned bad = 0, runs = 6;
    for (unsigned k = 0; k < runs; k++) {
        r.reset();
        r.launch(s, 2000);
        CK(cudaStreamSynchronize(s));
        r.fetch();
        std::string why;
        if (!r.exactly_once(&why)) { result((L + ".exactly-once").c_str(), false, why); return; }
        bad += r.outside(m);
    }
    TCK(api.stats_get(nullptr, &st1));
    unsigned long long orig = st1.launches_original - st0.launches_original,
                       clones = st1.launches_rewritten - st0.launches_rewritten;
    result((L + ".inside").c_str(), bad == 0, std::to_string(bad) + " blocks outside over " + std::to_string(runs) +
                                                 " launches; " + std::to_string(r.distinct_sms()) + " SMs used");
    // the first launch of a kernel not measured yet runs as the clone (and is timed); a
    // quick one is then tried as the original (timed). A first sample can carry warm-up
    // (first launch on the stream's green context), so a second timed clone may come first
    result((L + ".hybrid").c_str(), expect_original ? orig >= runs - 2 : orig == 0,
           std::to_string(orig) + " launched as the original, " + std::to_string(clones) + " as clones");
    (void)p;
}

static void mode_place()
{
    if (!api.partition_stream) { result("place.api", false, "tidal_partition_stream not in this process"); return; }
    tidal_part *p;
    TCK(api.partition_create("pl", "0-65", &p));
    int placed = api.partition_placed(p);
    result("place.placed", placed == 1, "tidal_partition_placed(0-65) = " + std::to_string(placed));
    void *sv;
    TCK(api.partition_stream(p, 0, &sv));
    cudaStream_t s = (cudaStream_t)sv;
    tidal_smset m = parse("0-65");
    place_short("place.short", p, s, m, true);
    // a graph captured on the stream keeps the placement
    {
        Run r(264);
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        r.launch(s, 2000);
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&ge, g, 0));
        cudaStream_t other;
        CK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
        CK(cudaGraphLaunch(ge, other));
        CK(cudaStreamSynchronize(other));
        r.fetch();
        std::string why;
        bool once = r.exactly_once(&why);
        unsigned bad = r.outside(m);
        result("place.graph", once && bad == 0, (once ? "" : why + "; ") + std::to_string(bad) +
                                                     " blocks outside 0-65 on a replay from another stream");
    }
    // a long kernel runs as the clone and leaves SMs taken from it, on the same stream
    TCK(api.partition_set_placement(p, 1 /* TIDAL_PLACE_PERSISTENT */, 0));
    {
        const unsigned n = 200000, spin = 5000;
        Run r(n);
        r.launch(s, spin);
        while (*r.hprogress < n * 3 / 10) {}
        r.raise_flag(1);
        TCK(api.partition_set(p, "0-31"));
        r.raise_flag(2);
        CK(cudaStreamSynchronize(s));
        r.fetch();
        std::string why;
        result("place.shrink.exactly-once", r.exactly_once(&why), why);
        unsigned at2 = ~0u;
        for (unsigned i = 0; i < n; i++)
            if (r.saw[i] >= 2 && r.order[i] < at2) at2 = r.order[i];
        unsigned margin = claim_margin(n, 66, nsm());
        tidal_smset mt = parse("0-31");
        unsigned bad = at2 == ~0u ? n : r.outside(mt, at2 + margin), before = r.outside(m);
        result("place.shrink.leaves", bad == 0 && before == 0,
               std::to_string(bad) + " blocks outside 0-31 after the move (+" + std::to_string(margin) + "), " +
                   std::to_string(before) + " outside 0-65 at all");
    }
    // the stream's green context is 0-65: after the set moved to 0-31 its kernels stay inside
    TCK(api.partition_set_placement(p, 0 /* TIDAL_PLACE_HYBRID */, 0));
    place_short("place.after-shrink", p, s, parse("0-31"), false);
    // a new stream of the moved partition is placed on the new set
    void *sv2;
    TCK(api.partition_stream(p, 0, &sv2));
    place_short("place.new-stream", p, (cudaStream_t)sv2, parse("0-31"), true);
    // a set that is not a union of SM groups: the stream is not placed; clones mask it
    tidal_part *q;
    TCK(api.partition_create("odd", "1-64", &q));
    int qp = api.partition_placed(q);
    result("place.unplaced", qp == 0, "tidal_partition_placed(1-64) = " + std::to_string(qp));
    void *sv3;
    TCK(api.partition_stream(q, 0, &sv3));
    place_short("place.unplaced", q, (cudaStream_t)sv3, parse("1-64"), false);
}

// ---------------------------------------------------------------- policies
static std::string fmt_set(const tidal_smset &m)
{
    char b[1024];
    tidal_smset_format(&m, b, sizeof b);
    return b;
}

// Two partitions "<tag>ls" / "<tag>be" (all SMs), a stream bound to each, and a policy of
// `kind` with an LS service (SLO slo_us) and a BE service on them, added in that order or
// BE first.
struct PolicyRig {
    tidal_part *pl, *pb;
    cudaStream_t sl, sb;
    tidal_policy *pol;
    int il, ib;
};

static PolicyRig policy_rig(int kind, const char *tag, double slo_us, bool be_first)
{
    PolicyRig g;
    TCK(api.partition_create((std::string(tag) + "ls").c_str(), "all", &g.pl));
    TCK(api.partition_create((std::string(tag) + "be").c_str(), "all", &g.pb));
    CK(cudaStreamCreateWithFlags(&g.sl, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&g.sb, cudaStreamNonBlocking));
    TCK(api.stream_bind(g.sl, g.pl));
    TCK(api.stream_bind(g.sb, g.pb));
    tidal_policy_config c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    TCK(api.policy_create(&c, &g.pol));
    tidal_service_config ls, be;
    memset(&ls, 0, sizeof ls);
    memset(&be, 0, sizeof be);
    ls.name = "ls", ls.cls = TIDAL_SERVICE_LS, ls.part = g.pl, ls.slo_us = slo_us;
    be.name = "be", be.cls = TIDAL_SERVICE_BE, be.part = g.pb;
    if (be_first) TCK(api.policy_add_service(g.pol, &be, &g.ib));
    TCK(api.policy_add_service(g.pol, &ls, &g.il));
    if (!be_first) TCK(api.policy_add_service(g.pol, &be, &g.ib));
    return g;
}

// One launch of run's kernel on s, timed with CUDA events: microseconds.
static double timed_launch_us(Run &run, cudaStream_t s, unsigned spin_ns)
{
    static cudaEvent_t e0, e1;
    if (!e0) {
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
    }
    CK(cudaEventRecord(e0, s));
    run.launch(s, spin_ns);
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return ms * 1000.0;
}

// SGDRC on a running BE kernel: LS work arrives (BE loses 0..k-1 while it runs), an LS
// kernel runs on them, LS goes idle (BE gets every SM back).
static void policy_sgdrc()
{
    const int N = nsm();
    const unsigned k = (unsigned)N / 2 / 2 * 2; /* the LS demand: half the SMs */
    PolicyRig g = policy_rig(TIDAL_POLICY_SGDRC, "p", 1000, false);
    tidal_part *pb = g.pb;
    cudaStream_t sl = g.sl, sb = g.sb;
    tidal_policy *pol = g.pol;
    const int il = g.il;
    tidal_smset mb;
    TCK(api.partition_get_mask(pb, &mb));
    result("policy.sgdrc.idle-be-all", tidal_smset_count(&mb) == (unsigned)N, "BE " + fmt_set(mb) + " while LS idles");

    /* BE: ~9.5 ms on all SMs; LS holds its reservation for 5 ms (a request of several
       kernels), long enough for BE to claim far more than its claim-ahead margin */
    const unsigned n = 400000, spin = 50000;
    Run r(n), q(20000);
    r.launch(sb, spin);
    while (*r.hprogress < n * 2 / 10) {}
    r.raise_flag(1);
    double t0 = now_us();
    TCK(api.policy_request_begin(pol, il, k));
    double t1 = now_us();
    r.raise_flag(2);
    const double ls_us = timed_launch_us(q, sl, 1000);
    usleep(5000);
    /* flag 3 before the release: the BE workers that join on the LS SMs once it is applied
       start after the flag, outside the window checked below */
    r.raise_flag(3);
    CK(cudaStreamSynchronize(r.fstream));
    TCK(api.policy_request_end(pol, il, ls_us, 1));
    CK(cudaStreamSynchronize(sb));
    r.fetch();
    q.fetch();
    std::string why;
    result("policy.sgdrc.be-exactly-once", r.exactly_once(&why), why);
    tidal_smset lsm = parse(("0-" + std::to_string(k - 1)).c_str()), bem = clip(parse("all"), N);
    for (unsigned b = 0; b < k; b++) bem.bits[b / 64] &= ~(1ull << (b % 64));
    unsigned a2 = ~0u, a3 = ~0u;
    for (unsigned i = 0; i < n; i++) {
        if (r.saw[i] >= 2 && r.order[i] < a2) a2 = r.order[i];
        if (r.saw[i] >= 3 && r.order[i] < a3) a3 = r.order[i];
    }
    const unsigned margin = claim_margin(n, (unsigned)N, (unsigned)N);
    unsigned during_bad = 0, during = 0;
    std::vector<bool> seen(256), after(256);
    unsigned kept = 0, back = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned o = r.order[i], sm = r.sm[i];
        if (sm >= 256) continue;
        if (a2 != ~0u && o >= a2 + margin && o < a3) {
            during++;
            if (!((bem.bits[sm / 64] >> (sm % 64)) & 1)) during_bad++;
            else if (!seen[sm]) seen[sm] = true, kept++;
        }
        if (a3 != ~0u && o >= a3 + margin && !after[sm]) after[sm] = true, back++;
    }
    unsigned long long tf = r.flag_time(1), tl = 0;
    for (unsigned i = 0; i < n; i++)
        if (r.sm[i] < k && r.t[i] > tl && (a3 == ~0u || r.order[i] < a3)) tl = r.t[i];
    unsigned qbad = q.outside(lsm);
    char msg[300];
    snprintf(msg, sizeof msg, "reservation 0-%u applied in %.1f us on the host; BE's last block start on an LS SM "
             "%.1f us after the request (LS waits at most that plus one block, %u us); LS kernel %.1f us",
             k - 1, t1 - t0, tl > tf ? (tl - tf) / 1000.0 : 0.0, spin / 1000, ls_us);
    result("policy.sgdrc.be-leaves-ls-sms", a2 != ~0u && during > 0 && during_bad == 0,
           std::to_string(during_bad) + " of " + std::to_string(during) + " BE blocks on LS SMs while LS worked; " +
               msg);
    result("policy.sgdrc.be-keeps-its-sms", kept == (unsigned)N - k,
           "BE used " + std::to_string(kept) + " of its " + std::to_string(N - k) + " SMs while LS worked (only "
           "the workers on reclaimed SMs left)");
    result("policy.sgdrc.ls-on-reservation", qbad == 0,
           std::to_string(qbad) + " of 20000 LS blocks outside " + fmt_set(lsm));
    TCK(api.partition_get_mask(pb, &mb));
    result("policy.sgdrc.release-be-all", tidal_smset_count(&mb) == (unsigned)N && back == (unsigned)N,
           "BE " + fmt_set(mb) + " after LS ended; its running kernel used " + std::to_string(back) + " SMs after it");
    TCK(api.policy_destroy(pol));
}

// GSLICE from measured latencies: an LS kernel of 2000 blocks of 20 us (latency falls in
// waves as SMs are added), SLO 150 us, starting at an even split (half the SMs, ~2 waves).
static void policy_gslice()
{
    const int N = nsm();
    const double slo = 150;
    PolicyRig g = policy_rig(TIDAL_POLICY_GSLICE, "g", slo, true);
    tidal_part *pb = g.pb;
    cudaStream_t sl = g.sl;
    tidal_policy *pol = g.pol;
    const int il = g.il;
    unsigned first;
    TCK(api.policy_share(pol, il, nullptr, &first));
    Run q(2000);
    const int R = 400;
    std::vector<double> lat(R);
    for (int i = 0; i < R; i++) {
        TCK(api.policy_request_begin(pol, il, 0));
        lat[i] = timed_launch_us(q, sl, 20000);
        TCK(api.policy_request_end(pol, il, lat[i], 1));
    }
    unsigned last;
    tidal_smset ml, mb;
    TCK(api.policy_share(pol, il, &ml, &last));
    TCK(api.partition_get_mask(pb, &mb));
    int ok = 0;
    for (int i = R - 80; i < R; i++) ok += lat[i] <= slo;
    char msg[300];
    snprintf(msg, sizeof msg, "share %u -> %u SMs; latency %.1f us at first, %.1f us at the end; %d of the last 80 "
             "requests within the %.0f us SLO", first, last, lat[0], lat[R - 1], ok, slo);
    result("policy.gslice.shrinks-to-slo", last < first && last >= 2 && ok >= 76, msg);
    bool disjoint = true, covers = true;
    for (int w = 0; w < 4; w++) disjoint &= (ml.bits[w] & mb.bits[w]) == 0;
    covers = tidal_smset_count(&ml) + tidal_smset_count(&mb) == (unsigned)N;
    result("policy.gslice.be-gets-the-rest", disjoint && covers, "LS " + fmt_set(ml) + ", BE " + fmt_set(mb));
    TCK(api.policy_destroy(pol));
}

// ---------------------------------------------------------------- L2 sides
// One thread touches the first line of 4 KiB blocks [first, first + n) (half of them homed
// on each L2 side) of a plain buffer at L.base (L.flips 0) or of side `side`'s half of a
// tidal_l2mem (L its layout); with `time`, *sum gets their summed L2-hit latency in cycles
// (the load's address depends on the first clock read, the shared store on the load, so
// the clock reads bracket it; docs/vram-channels.md). *where: the SM it ran on.
__global__ void l2_touch(tidal_l2_layout L, unsigned side, unsigned first, unsigned n, int time,
                         unsigned long long zero, unsigned long long *sum, unsigned *where)
{
    __shared__ volatile unsigned sink;
    if (threadIdx.x || blockIdx.x) return;
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    *where = sm;
    unsigned long long acc = 0;
    for (unsigned i = first; i < first + n; i++) {
        unsigned long long o = (unsigned long long)i * 4096;
        const char *p = (const char *)(L.flips ? tidal_l2_addr(&L, side, o) : L.base + o);
        unsigned long long t0, t1;
        unsigned v;
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0)::"memory");
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p + (t0 & zero)) : "memory");
        sink = v;
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1)::"memory");
        acc += t1 - t0;
    }
    if (time) *sum = acc;
}

static bool in_set(const tidal_smset &m, unsigned s) { return s < 256 && ((m.bits[s / 64] >> (s % 64)) & 1); }

static void mode_l2side()
{
    if (!api.l2_sides) { result("l2side.api", false, "tidal_l2_sides not in this process"); return; }
    const int N = nsm();
    tidal_smset a, b, a2, b2;
    TCK(api.l2_sides(&a, &b));
    TCK(api.l2_sides(&a2, &b2));
    unsigned na = tidal_smset_count(&a), nb = tidal_smset_count(&b);
    bool disjoint = true, pairs = true;
    for (int w = 0; w < 4; w++) disjoint &= (a.bits[w] & b.bits[w]) == 0;
    for (int s = 0; s + 1 < N; s += 2) pairs &= in_set(a, s) == in_set(a, s + 1);
    result("l2side.split", disjoint && na + nb == (unsigned)N && in_set(a, 0) && na >= (unsigned)N / 4 &&
                               nb >= (unsigned)N / 4,
           "side 0 (" + std::to_string(na) + " SMs) " + fmt_set(a) + "; side 1 (" + std::to_string(nb) + ") " +
               fmt_set(b));
    // the H200's sides are whole TPCs (SMs 2i, 2i+1) on every machine measured
    result("l2side.tpcs", pairs, "every SM pair {2i, 2i+1} on one side");
    result("l2side.kept", !memcmp(&a, &a2, sizeof a) && !memcmp(&b, &b2, sizeof b), "a second call, the same sides");
    // what the sides mean: a side-1 SM reading lines a side-0 SM loaded comes across for
    // the half of them that side 0 homes; a side-0 SM hits its own side's copy
    tidal_part *pa, *pb;
    TCK(api.partition_create("l2a", fmt_set(a).c_str(), &pa));
    TCK(api.partition_create("l2b", fmt_set(b).c_str(), &pb));
    result("l2side.placed", api.partition_placed(pa) == 1 && api.partition_placed(pb) == 1,
           "both sides are unions of green-context groups");
    void *sva, *svb;
    TCK(api.partition_stream(pa, 0, &sva));
    TCK(api.partition_stream(pb, 0, &svb));
    cudaStream_t sa = (cudaStream_t)sva, sb = (cudaStream_t)svb;
    char *raw;
    unsigned long long *sums;
    unsigned *where;
    CK(cudaMalloc(&raw, 513 * 4096));
    CK(cudaMalloc(&sums, 2 * sizeof *sums));
    CK(cudaMalloc(&where, 3 * sizeof *where));
    tidal_l2_layout plain = {};
    plain.base = ((uintptr_t)raw + 4095) & ~(uintptr_t)4095;
    l2_touch<<<1, 32, 0, sa>>>(plain, 0, 0, 512, 0, 0, sums, where);          // side 0 loads every line
    l2_touch<<<1, 32, 0, sa>>>(plain, 0, 0, 256, 1, 0, sums, where + 1);      // side 0 reads half
    CK(cudaStreamSynchronize(sa));
    l2_touch<<<1, 32, 0, sb>>>(plain, 0, 256, 256, 1, 0, sums + 1, where + 2); // side 1 the other half
    CK(cudaStreamSynchronize(sb));
    CK(cudaGetLastError());
    unsigned long long h[2];
    unsigned wh[3];
    CK(cudaMemcpy(h, sums, sizeof h, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(wh, where, sizeof wh, cudaMemcpyDeviceToHost));
    double near = h[0] / 256.0, far = h[1] / 256.0;
    char msg[200];
    snprintf(msg, sizeof msg, "side 1 (SM %u) reads side 0's lines in %.0f cycles on average, side 0 (SM %u) in %.0f",
             wh[2], far, wh[1], near);
    result("l2side.latency", in_set(a, wh[1]) && in_set(b, wh[2]) && far - near > 40, msg);
    CK(cudaFree(raw));
    CK(cudaFree(sums));
    CK(cudaFree(where));
    CK(cudaStreamDestroy(sa));
    CK(cudaStreamDestroy(sb));
}

// ---------------------------------------------------------------- memory homed on one side
__global__ void l2_fill(tidal_l2_layout L, unsigned side, unsigned long long words, unsigned x)
{
    for (unsigned long long w = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; w < words;
         w += (unsigned long long)gridDim.x * blockDim.x)
        *(unsigned *)tidal_l2_addr(&L, side, w * 4) = (unsigned)w ^ x;
}

__global__ void l2_check(tidal_l2_layout L, unsigned side, unsigned long long words, unsigned x,
                         unsigned long long *bad)
{
    unsigned long long n = 0;
    for (unsigned long long w = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; w < words;
         w += (unsigned long long)gridDim.x * blockDim.x)
        n += *(const unsigned *)tidal_l2_addr(&L, side, w * 4) != ((unsigned)w ^ x);
    if (n) atomicAdd(bad, n);
}

static void mode_l2mem()
{
    if (!api.l2mem_create) { result("l2mem.api", false, "tidal_l2mem_create not in this process"); return; }
    tidal_smset a, b;
    TCK(api.l2_sides(&a, &b));
    tidal_l2mem *m;
    int st = api.l2mem_create((size_t)64 << 20, &m);
    if (st == -14 /* TIDAL_ERR_UNSUPPORTED */) {
        // a device that homes memory by no parity of the block index (call 8's H200 was
        // refused under the fixed mask 0xab; whether its pattern is a parity at all is the
        // probe's to say): the refusal must say where the model failed, and nothing is made
        std::string why = api.last_error();
        result("l2mem.refuses-another-pattern", why.find("granule") != std::string::npos &&
                                                    why.find("block") != std::string::npos,
               why);
        printf("SKIP l2mem.halves, l2mem.homed: no tidal_l2mem on this device\n");
        return;
    }
    TCK(st);
    tidal_l2_layout L;
    TCK(api.l2mem_layout(m, &L));
    // 1 MiB of each side per 2 MiB granule; the measured pattern and its derived fields
    // (docs/vram-channels.md §2: 0xab on three H200s, another pattern on call 8's)
    char pat[96];
    snprintf(pat, sizeof pat, ", block-index mask 0x%x (low %u, pmask 0x%x)", L.mask, L.low, L.pmask);
    bool pattern_ok = L.mask && L.mask < 512 && ((L.mask >> L.low) & 1) && !(L.mask & ((1u << L.low) - 1)) &&
                      L.pmask == ((L.mask >> (L.low + 1)) << L.low);
    result("l2mem.layout",
           pattern_ok && L.granules == 64 && L.per_side == ((unsigned long long)64 << 20) && L.base % (2u << 20) == 0,
           std::to_string(L.granules) + " granules of 2 MiB, " + std::to_string(L.per_side >> 20) + " MiB a side" + pat);
    unsigned long long words = L.per_side / 4, *bad;
    CK(cudaMalloc(&bad, sizeof *bad));
    CK(cudaMemset(bad, 0, sizeof *bad));
    l2_fill<<<264, 256>>>(L, 0, words, 0x5a5a5a5au);
    l2_fill<<<264, 256>>>(L, 1, words, 0xa5a5a5a5u);
    l2_check<<<264, 256>>>(L, 0, words, 0x5a5a5a5au, bad);
    l2_check<<<264, 256>>>(L, 1, words, 0xa5a5a5a5u, bad);
    CK(cudaDeviceSynchronize());
    unsigned long long hbad;
    CK(cudaMemcpy(&hbad, bad, sizeof hbad, cudaMemcpyDeviceToHost));
    result("l2mem.halves", hbad == 0,
           std::to_string(hbad) + " of " + std::to_string(2 * words) + " words differ from what was written through "
                                                                         "tidal_l2_addr to the two halves");
    // a side-0 SM loads the first lines of 256 blocks of each half; a side-1 SM times them
    tidal_part *pa, *pb;
    TCK(api.partition_create("l2ma", fmt_set(a).c_str(), &pa));
    TCK(api.partition_create("l2mb", fmt_set(b).c_str(), &pb));
    void *sva, *svb;
    TCK(api.partition_stream(pa, 0, &sva));
    TCK(api.partition_stream(pb, 0, &svb));
    cudaStream_t sa = (cudaStream_t)sva, sb = (cudaStream_t)svb;
    unsigned long long *sums;
    unsigned *where;
    CK(cudaMalloc(&sums, 2 * sizeof *sums));
    CK(cudaMalloc(&where, 3 * sizeof *where));
    l2_touch<<<1, 32, 0, sa>>>(L, 0, 0, 256, 0, 0, sums, where);
    l2_touch<<<1, 32, 0, sa>>>(L, 1, 0, 256, 0, 0, sums, where);
    CK(cudaStreamSynchronize(sa));
    l2_touch<<<1, 32, 0, sb>>>(L, 0, 0, 256, 1, 0, sums, where + 1);
    l2_touch<<<1, 32, 0, sb>>>(L, 1, 0, 256, 1, 0, sums + 1, where + 2);
    CK(cudaStreamSynchronize(sb));
    CK(cudaGetLastError());
    unsigned long long h[2];
    unsigned wh[3];
    CK(cudaMemcpy(h, sums, sizeof h, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(wh, where, sizeof wh, cudaMemcpyDeviceToHost));
    double across = h[0] / 256.0, own = h[1] / 256.0;
    char msg[200];
    snprintf(msg, sizeof msg, "side 1 (SM %u) reads the side-0 half in %.0f cycles on average, the side-1 half in %.0f",
             wh[1], across, own);
    result("l2mem.homed", in_set(b, wh[1]) && in_set(b, wh[2]) && across - own > 100, msg);
    CK(cudaFree(bad));
    CK(cudaFree(sums));
    CK(cudaFree(where));
    CK(cudaStreamDestroy(sa));
    CK(cudaStreamDestroy(sb));
    TCK(api.l2mem_destroy(m));
}

// ---------------------------------------------------------------- bimodal tensors
// Words differing between the two copies of a bimodal tensor.
__global__ void bimodal_compare(const tidal_bimodal_desc *d, unsigned long long words, unsigned long long *bad)
{
    unsigned long long n = 0;
    for (unsigned long long w = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; w < words;
         w += (unsigned long long)gridDim.x * blockDim.x)
        n += *(const unsigned *)tidal_bimodal_addr(d, TIDAL_BIMODAL_ALL, w * 4) !=
             *(const unsigned *)tidal_bimodal_addr(d, TIDAL_BIMODAL_SIDE, w * 4);
    if (n) atomicAdd(bad, n);
}

struct BiRec {
    unsigned *mode;              // the mode each logical block read
    unsigned char *saw_done;     // *done before it read the mode
    unsigned char *saw_begun;    // *begun after it read the mode
    unsigned long long *sum;     // its chunk's sum
    unsigned *count;             // executions of each logical block (must end at 1)
    unsigned *started;           // blocks started so far
    volatile unsigned *progress; // host-mapped: a recent started count (every 256th block)
    const unsigned *done;        // device memory: k once the host's k-th tidal_bimodal_set returned
    const unsigned *begun;       // device memory: k before the host calls the k-th set
};

// Logical block b sums 4 KiB chunk b % chunks of the tensor in the copy the mode names, the
// mode read once (as a BE kernel would, per logical block), then spins spin_ns. Around the
// mode it reads the host's two words, in order (acquire, then a fence): a block that saw
// done = k before and begun = k after read the mode after the k-th set returned and before
// the next began, so it must have read the k-th set's mode.
__device__ unsigned load_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__global__ void bimodal_sum(const tidal_bimodal_desc *d, unsigned chunks, BiRec r, unsigned spin_ns)
{
    __shared__ unsigned mode;
    __shared__ unsigned long long warp_sum[32];
    const unsigned b = blockIdx.x;
    unsigned long long t0 = 0, t;
    if (threadIdx.x == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
        unsigned done = load_acquire(r.done);
        mode = tidal_bimodal_mode(d);
        __threadfence(); // the mode's load before the next
        unsigned begun = load_acquire(r.begun);
        r.mode[b] = mode;
        r.saw_done[b] = (unsigned char)done;
        r.saw_begun[b] = (unsigned char)begun;
        unsigned o = atomicAdd(r.started, 1u);
        if ((o & 255u) == 0) *r.progress = o; // host-mapped: keep PCIe traffic low
    }
    __syncthreads();
    const unsigned m = mode;
    const unsigned long long base = (unsigned long long)(b % chunks) * 4096;
    unsigned long long acc = 0;
    for (unsigned i = threadIdx.x; i < 1024; i += blockDim.x)
        acc += *(const unsigned *)tidal_bimodal_addr(d, m, base + 4 * i);
    for (int k = 16; k; k >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, k);
    if ((threadIdx.x & 31) == 0) warp_sum[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long total = 0;
        for (unsigned w = 0; w < blockDim.x / 32; w++) total += warp_sum[w];
        r.sum[b] = total;
        atomicAdd(&r.count[b], 1u);
        do {
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        } while (t - t0 < spin_ns);
    }
    __syncthreads();
}

static void mode_bimodal()
{
    if (!api.bimodal_create || !api.bimodal_destroy) {
        result("bimodal.api", false, "tidal_bimodal_create not in this process");
        return;
    }
    tidal_bimodal *t = nullptr;
    int bad_side = api.bimodal_create(1 << 20, 2, &t), zero = api.bimodal_create(0, 0, &t);
    result("bimodal.refuses-bad-arguments", bad_side == -1 && zero == -1 && t == nullptr,
           "side 2: status " + std::to_string(bad_side) + ", 0 bytes: status " + std::to_string(zero) +
               " (TIDAL_ERR_INVALID is -1)");
    const size_t size = (size_t)64 << 20, words = size / 4, chunks = size / 4096;
    int st = api.bimodal_create(size, 1, &t);
    if (st == -14 /* TIDAL_ERR_UNSUPPORTED */) {
        // as tidal_l2mem's: a device that homes memory by no parity of the block index
        std::string why = api.last_error();
        result("bimodal.refuses-another-pattern",
               why.find("granule") != std::string::npos && why.find("block") != std::string::npos, why);
        printf("SKIP bimodal.copies-identical, bimodal.sums-exact, bimodal.both-modes, bimodal.after-set: no "
               "tidal_l2mem on this device\n");
        return;
    }
    TCK(st);
    uint64_t dv;
    TCK(api.bimodal_desc_addr(t, &dv));
    const tidal_bimodal_desc *d = (const tidal_bimodal_desc *)(uintptr_t)dv;
    // a pattern, written in three pieces that cross 4 KiB blocks and 2 MiB granules
    std::vector<unsigned> host(words);
    for (size_t w = 0; w < words; w++) host[w] = (unsigned)w * 2654435761u ^ 0x9e3779b9u;
    const size_t cut[] = {0, 12345, ((size_t)33 << 20) + 7, size};
    for (int c = 0; c < 3; c++)
        TCK(api.bimodal_write(t, cut[c], (const char *)host.data() + cut[c], cut[c + 1] - cut[c]));
    int past = api.bimodal_write(t, size - 4, host.data(), 8), bad_mode = api.bimodal_set(t, 7);
    result("bimodal.refuses-bad-writes-and-modes", past == -1 && bad_mode == -1,
           "a write past the end: status " + std::to_string(past) + ", mode 7: status " + std::to_string(bad_mode));
    unsigned long long *dbad, hbad = 0;
    CK(cudaMalloc(&dbad, sizeof *dbad));
    CK(cudaMemset(dbad, 0, sizeof *dbad));
    bimodal_compare<<<264, 256>>>(d, words, dbad);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(&hbad, dbad, sizeof hbad, cudaMemcpyDeviceToHost));
    result("bimodal.copies-identical", hbad == 0,
           std::to_string(hbad) + " of " + std::to_string(words) + " words differ between the linear copy and side 1's");
    // the long kernel: 200k logical blocks; the host flips the mode at 1/8, 2/8, ... 6/8 of
    // them: raises begun to k, calls the k-th set, raises done to k once it returned
    const unsigned N = 200000, flips = 6;
    BiRec r;
    unsigned *hflag;
    cudaStream_t ks, fs;
    CK(cudaMalloc(&r.mode, N * sizeof *r.mode));
    CK(cudaMalloc(&r.saw_done, N));
    CK(cudaMalloc(&r.saw_begun, N));
    CK(cudaMalloc(&r.sum, N * sizeof *r.sum));
    CK(cudaMalloc(&r.count, N * sizeof *r.count));
    CK(cudaMalloc(&r.started, sizeof *r.started));
    CK(cudaMalloc((void **)&r.done, sizeof *r.done));
    CK(cudaMalloc((void **)&r.begun, sizeof *r.begun));
    CK(cudaMemset(r.mode, 0xff, N * sizeof *r.mode));
    CK(cudaMemset(r.count, 0, N * sizeof *r.count));
    CK(cudaMemset(r.started, 0, sizeof *r.started));
    CK(cudaMemset((void *)r.done, 0, sizeof *r.done));
    CK(cudaMemset((void *)r.begun, 0, sizeof *r.begun));
    volatile unsigned *hprogress;
    CK(cudaHostAlloc((void **)&hprogress, sizeof *hprogress, cudaHostAllocMapped));
    *hprogress = 0;
    CK(cudaHostGetDevicePointer((void **)&r.progress, (void *)hprogress, 0));
    CK(cudaHostAlloc(&hflag, 2 * sizeof *hflag, 0));
    CK(cudaStreamCreateWithFlags(&ks, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&fs, cudaStreamNonBlocking));
    CK(cudaDeviceSynchronize());
    unsigned want[flips + 1];
    want[0] = TIDAL_BIMODAL_ALL;
    bimodal_sum<<<N, 128, 0, ks>>>(d, (unsigned)chunks, r, 150000);
    CK(cudaGetLastError());
    double t_start = now_us();
    unsigned done_flips = 0;
    for (unsigned k = 1; k <= flips; k++) {
        while (*hprogress < N / 8 * k && cudaStreamQuery(ks) == cudaErrorNotReady && now_us() - t_start < 20e6)
            sched_yield();
        if (cudaStreamQuery(ks) != cudaErrorNotReady) break; // it ended: no flip can land inside it
        want[k] = k % 2 ? TIDAL_BIMODAL_SIDE : TIDAL_BIMODAL_ALL;
        hflag[0] = hflag[1] = k;
        CK(cudaMemcpyAsync((void *)r.begun, &hflag[0], sizeof *hflag, cudaMemcpyHostToDevice, fs));
        CK(cudaStreamSynchronize(fs));
        TCK(api.bimodal_set(t, want[k]));
        CK(cudaMemcpyAsync((void *)r.done, &hflag[1], sizeof *hflag, cudaMemcpyHostToDevice, fs));
        CK(cudaStreamSynchronize(fs));
        done_flips = k;
    }
    CK(cudaStreamSynchronize(ks));
    double run_ms = (now_us() - t_start) / 1e3;
    std::vector<unsigned> mode(N), count(N);
    std::vector<unsigned char> saw_done(N), saw_begun(N);
    std::vector<unsigned long long> sum(N);
    CK(cudaMemcpy(mode.data(), r.mode, N * sizeof *r.mode, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(saw_done.data(), r.saw_done, N, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(saw_begun.data(), r.saw_begun, N, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(sum.data(), r.sum, N * sizeof *r.sum, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(count.data(), r.count, N * sizeof *r.count, cudaMemcpyDeviceToHost));
    std::vector<unsigned long long> expect(chunks, 0);
    for (size_t w = 0; w < words; w++) expect[w / 1024] += host[w];
    unsigned wrong = 0, first_wrong = 0, n_all = 0, n_side = 0, n_other = 0, late = 0, first_late = 0, during = 0;
    std::vector<unsigned> saw_k(flips + 1, 0);
    for (unsigned b = 0; b < N; b++) {
        if (count[b] != 1 || sum[b] != expect[b % chunks]) {
            if (!wrong) first_wrong = b;
            wrong++;
        }
        n_all += mode[b] == TIDAL_BIMODAL_ALL;
        n_side += mode[b] == TIDAL_BIMODAL_SIDE;
        n_other += mode[b] != TIDAL_BIMODAL_ALL && mode[b] != TIDAL_BIMODAL_SIDE;
        // between set k returning and set k + 1 beginning: the k-th mode, nothing else
        unsigned k = saw_done[b];
        if (k != saw_begun[b] || k > done_flips) {
            during++; // read while a set was under way: either copy is right
            continue;
        }
        saw_k[k]++;
        if (mode[b] != want[k]) {
            if (!late) first_late = b;
            late++;
        }
    }
    result("bimodal.sums-exact", wrong == 0,
           std::to_string(wrong) + " of " + std::to_string(N) + " blocks ran other than once or summed wrong" +
               (wrong ? " (first: block " + std::to_string(first_wrong) + ")" : "") + "; kernel " +
               std::to_string((int)run_ms) + " ms");
    result("bimodal.both-modes", n_all > 0 && n_side > 0 && n_other == 0,
           std::to_string(n_all) + " blocks read the linear copy, " + std::to_string(n_side) + " side 1's, " +
               std::to_string(n_other) + " another mode");
    std::string seen;
    bool every = done_flips == flips;
    for (unsigned k = 0; k <= flips; k++) {
        seen += (k ? ", " : "") + std::to_string(saw_k[k]);
        every &= saw_k[k] > 0;
    }
    result("bimodal.after-set", late == 0 && every,
           std::to_string(done_flips) + " of " + std::to_string(flips) + " flips inside the kernel; blocks between " +
               "one set's return and the next (" + seen + "), " + std::to_string(during) + " while a set ran; " +
               std::to_string(late) + " read another mode than the last set's" +
               (late ? " (first: block " + std::to_string(first_late) + ")" : ""));
    TCK(api.bimodal_destroy(t));
    CK(cudaFree(r.mode));
    CK(cudaFree(r.saw_done));
    CK(cudaFree(r.saw_begun));
    CK(cudaFree(r.sum));
    CK(cudaFree(r.count));
    CK(cudaFree(r.started));
    CK(cudaFree((void *)r.done));
    CK(cudaFree((void *)r.begun));
    CK(cudaFree(dbad));
    CK(cudaFreeHost((void *)hprogress));
    CK(cudaFreeHost(hflag));
    CK(cudaStreamDestroy(ks));
    CK(cudaStreamDestroy(fs));
}

// ---------------------------------------------------------------- l2addr: translated parameters
// The driver API by dlsym from libcuda (under the preload, cuLaunchKernel is libtidal's hook:
// these kernels are not rewritten by the tidal pass, or have no partition, so it launches
// them as given).
struct L2aDriver {
    CUresult (*load)(CUmodule *, const void *);
    CUresult (*unload)(CUmodule);
    CUresult (*get)(CUfunction *, CUmodule, const char *);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                       void **, void **);
};

static std::string slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return "";
    std::string s;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
    fclose(f);
    return s;
}

// One translated module: fill side s's half through l2a_fill, check it from the host with
// tidal_l2_addr (both halves: the other one untouched), sum it through l2a_sum; then clear
// the word and run l2a_fill on a plain buffer.
static void l2addr_module(const L2aDriver &d, const char *path, tidal_l2mem *m, const tidal_l2_layout &L)
{
    std::string tag = std::string("l2addr[") + (strrchr(path, '/') ? strrchr(path, '/') + 1 : path) + "]";
    std::string ptx = slurp(path);
    CUmodule mod;
    if (ptx.empty() || d.load(&mod, ptx.c_str()) != CUDA_SUCCESS) {
        result((tag + ".load").c_str(), false, std::string("cannot load ") + path);
        return;
    }
    CUfunction fill, sum;
    if (d.get(&fill, mod, "l2a_fill") != CUDA_SUCCESS || d.get(&sum, mod, "l2a_sum") != CUDA_SUCCESS) {
        result((tag + ".load").c_str(), false, "no l2a_fill / l2a_sum");
        return;
    }
    const unsigned n = (unsigned)(L.per_side / 4); // the whole half
    const size_t bytes = (size_t)L.granules << 21;
    std::vector<uint32_t> h(bytes / 4), flips((L.granules + 31) / 32);
    CK(cudaMemcpy(flips.data(), (const void *)L.flips, flips.size() * 4, cudaMemcpyDeviceToHost));
    tidal_l2_layout H = L;
    H.flips = (uint64_t)(uintptr_t)flips.data();
    for (unsigned side = 0; side < 2; side++) {
        CK(cudaMemset((void *)L.base, 0, bytes));
        uint64_t base = 0;
        TCK(api.l2addr_attach(mod, "l2a_fill", 0, m, side, &base));
        TCK(api.l2addr_attach(mod, "l2a_sum", 0, m, side, nullptr));
        unsigned x = 0x9e3779b9u * (side + 1);
        void *fa[] = {&base, (void *)&n, &x};
        CUresult r = d.launch(fill, 264, 1, 1, 256, 1, 1, 0, nullptr, fa, nullptr);
        unsigned long long *dsum, hsum = 0, want = 0;
        CK(cudaMalloc(&dsum, sizeof *dsum));
        CK(cudaMemset(dsum, 0, sizeof *dsum));
        void *sa[] = {&base, (void *)&n, &dsum};
        CUresult r2 = d.launch(sum, 264, 1, 1, 256, 1, 1, 0, nullptr, sa, nullptr);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(h.data(), (const void *)L.base, bytes, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&hsum, dsum, sizeof hsum, cudaMemcpyDeviceToHost));
        CK(cudaFree(dsum));
        unsigned long long wrong = 0, other = 0;
        std::vector<char> mine(bytes / 4096, 0);
        for (unsigned i = 0; i < n; i++) {
            uint64_t a = tidal_l2_addr(&H, side, 4ull * i) - L.base;
            mine[a >> 12] = 1;
            wrong += h[a / 4] != (x ^ i);
            want += x ^ i;
        }
        for (size_t w = 0; w < h.size(); w++) other += !mine[w * 4 >> 12] && h[w] != 0;
        result((tag + ".side" + std::to_string(side)).c_str(),
               r == CUDA_SUCCESS && r2 == CUDA_SUCCESS && wrong == 0 && other == 0 && hsum == want,
               std::to_string(n) + " words through parameter 0 = byte 0 of side " + std::to_string(side) + "'s half: " +
                   std::to_string(wrong) + " not where tidal_l2_addr puts them, " + std::to_string(other) +
                   " written in the other half; l2a_sum " + (hsum == want ? "exact" : "WRONG"));
    }
    // cleared: untranslated, a plain buffer addressed linearly
    uint64_t base = 1;
    TCK(api.l2addr_attach(mod, "l2a_fill", 0, nullptr, 0, &base));
    unsigned *plain;
    const unsigned pn = 1u << 20;
    CK(cudaMalloc(&plain, pn * 4));
    CK(cudaMemset(plain, 0, pn * 4));
    unsigned x = 77;
    void *fa[] = {&plain, (void *)&pn, &x};
    CUresult r = d.launch(fill, 264, 1, 1, 256, 1, 1, 0, nullptr, fa, nullptr);
    CK(cudaDeviceSynchronize());
    std::vector<uint32_t> hp(pn);
    CK(cudaMemcpy(hp.data(), plain, pn * 4, cudaMemcpyDeviceToHost));
    CK(cudaFree(plain));
    unsigned long long wrong = 0;
    for (unsigned i = 0; i < pn; i++) wrong += hp[i] != (x ^ i);
    result((tag + ".cleared").c_str(), r == CUDA_SUCCESS && base == 0 && wrong == 0,
           "word cleared, a cudaMalloc buffer: " + std::to_string(wrong) + " of " + std::to_string(pn) +
               " words wrong");
    // a parameter the pass did not translate: refused by name, nothing written
    int st = api.l2addr_attach(mod, "l2a_fill", 1, m, 0, nullptr);
    std::string why = api.last_error();
    result((tag + ".refuses-untranslated").c_str(), st == -9 && why.find("__tidal_l2addr_p1_l2a_fill") != std::string::npos,
           "status " + std::to_string(st) + ": " + why);
    d.unload(mod);
}

static void mode_l2addr(int argc, char **argv)
{
    if (!api.l2addr_attach || !api.l2mem_create) {
        result("l2addr.api", false, "tidal_l2addr_attach not in this process");
        return;
    }
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    L2aDriver d = {};
    if (cuda) {
        *(void **)&d.load = dlsym(cuda, "cuModuleLoadData");
        *(void **)&d.unload = dlsym(cuda, "cuModuleUnload");
        *(void **)&d.get = dlsym(cuda, "cuModuleGetFunction");
        *(void **)&d.launch = dlsym(cuda, "cuLaunchKernel");
    }
    if (!d.load || !d.unload || !d.get || !d.launch) {
        result("l2addr.driver", false, "libcuda.so.1's module API not found");
        return;
    }
    CK(cudaFree(nullptr)); // the runtime's context is current for the driver calls
    tidal_l2mem *m;
    int st = api.l2mem_create((size_t)16 << 20, &m);
    if (st == -14 /* TIDAL_ERR_UNSUPPORTED */) {
        printf("SKIP l2addr: no tidal_l2mem on this device: %s\n", api.last_error());
        return;
    }
    TCK(st);
    tidal_l2_layout L;
    TCK(api.l2mem_layout(m, &L));
    for (int i = 2; i < argc; i++) l2addr_module(d, argv[i], m, L);
    TCK(api.l2mem_destroy(m));
}

// ---------------------------------------------------------------- clusters
__global__ void cluster_where(unsigned *sm)
{
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    if (threadIdx.x == 0) sm[blockIdx.x] = s;
}

// The same with the cluster size in the kernel (.reqnctapercluster): launched with <<<>>>.
__global__ void __cluster_dims__(4, 1, 1) cluster_fixed(unsigned *sm)
{
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    if (threadIdx.x == 0) sm[blockIdx.x] = s;
}

// One step of an ordered sequence: block i waits spin_ns, then v[i] = v[i] * 10 + digit.
// Steps 1, 2 (clusters), 3 on one stream leave 123 in every v[i] only in that order.
__global__ void cluster_step(unsigned *v, unsigned digit, unsigned long long spin_ns, unsigned *sm)
{
    if (threadIdx.x != 0) return;
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < spin_ns);
    v[blockIdx.x] = v[blockIdx.x] * 10 + digit;
    if (sm) {
        unsigned s;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
        sm[blockIdx.x] = s;
    }
}

static cudaLaunchConfig_t cluster_config(cudaStream_t st, unsigned csize, cudaLaunchAttribute *at)
{
    cudaLaunchConfig_t c = {};
    c.gridDim = dim3(64);
    c.blockDim = dim3(128);
    c.stream = st;
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = csize;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    c.attrs = at;
    c.numAttrs = 1;
    return c;
}

static cudaError_t launch_clusters(cudaStream_t st, unsigned csize, unsigned *sm)
{
    cudaLaunchAttribute at[1];
    cudaLaunchConfig_t c = cluster_config(st, csize, at);
    return cudaLaunchKernelEx(&c, cluster_where, sm);
}

// Steps 1 (plain, 100 us), 2 (clusters of 4, block SMs into sm), 3 (plain) on st.
static cudaError_t cluster_sequence(cudaStream_t st, unsigned *v, unsigned *sm)
{
    cluster_step<<<64, 128, 0, st>>>(v, 1, 100000, nullptr);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    cudaLaunchAttribute at[1];
    cudaLaunchConfig_t c = cluster_config(st, 4, at);
    e = cudaLaunchKernelEx(&c, cluster_step, v, 2u, 20000ull, sm);
    if (e != cudaSuccess) return e;
    cluster_step<<<64, 128, 0, st>>>(v, 3, 0, nullptr);
    return cudaGetLastError();
}

// Blocks of sm[0..64) that ran outside SMs lo..hi (or never ran: ~0u).
static unsigned outside_of(const unsigned *dsm, unsigned lo, unsigned hi)
{
    unsigned h[64], n = 0;
    CK(cudaMemcpy(h, dsm, sizeof h, cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < 64; i++) n += h[i] < lo || h[i] > hi;
    return n;
}

static unsigned not_123(const unsigned *dv)
{
    unsigned h[64], n = 0;
    CK(cudaMemcpy(h, dv, sizeof h, cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < 64; i++) n += h[i] != 123;
    return n;
}

static void mode_cluster()
{
    tidal_part *p;
    TCK(api.partition_create("cl", "0-65", &p));
    void *sv;
    TCK(api.partition_stream(p, 0, &sv));
    cudaStream_t s = (cudaStream_t)sv;
    unsigned *sm, *v;
    CK(cudaMalloc(&sm, 64 * sizeof *sm));
    CK(cudaMalloc(&v, 64 * sizeof *v));
    CK(cudaMemset(sm, 0xff, 64 * sizeof *sm));
    cudaError_t e2 = launch_clusters(s, 2, sm);
    cudaError_t s2 = cudaStreamSynchronize(s);
    unsigned outside = outside_of(sm, 0, 65);
    result("cluster.two", e2 == cudaSuccess && s2 == cudaSuccess && outside == 0,
           std::string("clusters of 2 on a 0-65 partition stream: ") + cudaGetErrorName(e2) + ", " +
               std::to_string(outside) + " of 64 blocks outside 0-65");

    tidal_stats st0, st1;
    TCK(api.stats_get(nullptr, &st0));
    for (unsigned csize : {4u, 8u}) {
        CK(cudaMemset(sm, 0xff, 64 * sizeof *sm));
        cudaError_t e = launch_clusters(s, csize, sm);
        cudaError_t se = cudaStreamSynchronize(s);
        outside = outside_of(sm, 0, 65);
        result(csize == 4 ? "cluster.four-routed" : "cluster.eight-routed",
               e == cudaSuccess && se == cudaSuccess && outside == 0,
               std::string("clusters of ") + std::to_string(csize) + ": " + cudaGetErrorName(e) + ", " +
                   cudaGetErrorName(se) + ", " + std::to_string(outside) + " of 64 blocks outside 0-65");
    }
    CK(cudaMemset(sm, 0xff, 64 * sizeof *sm));
    cluster_fixed<<<64, 128, 0, s>>>(sm);
    cudaError_t ef = cudaGetLastError();
    cudaError_t sf = cudaStreamSynchronize(s);
    outside = outside_of(sm, 0, 65);
    result("cluster.dims-routed", ef == cudaSuccess && sf == cudaSuccess && outside == 0,
           std::string("__cluster_dims__(4) with <<<>>>: ") + cudaGetErrorName(ef) + ", " + cudaGetErrorName(sf) +
               ", " + std::to_string(outside) + " of 64 blocks outside 0-65");
    TCK(api.stats_get(nullptr, &st1));
    unsigned long long routed = st1.launches_cluster_routed - st0.launches_cluster_routed;
    result("cluster.counted", routed == 3, "launches_cluster_routed +" + std::to_string(routed) + " (3 launched)");

    // the stream's order holds across the route: 1, then the clusters, then 3
    CK(cudaMemset(v, 0, 64 * sizeof *v));
    CK(cudaMemset(sm, 0xff, 64 * sizeof *sm));
    cudaError_t eo = cluster_sequence(s, v, sm);
    cudaError_t so = cudaStreamSynchronize(s);
    unsigned wrong = not_123(v);
    outside = outside_of(sm, 0, 65);
    result("cluster.order", eo == cudaSuccess && so == cudaSuccess && wrong == 0 && outside == 0,
           std::string(cudaGetErrorName(eo)) + ", " + cudaGetErrorName(so) + ": " + std::to_string(wrong) +
               " of 64 blocks ran out of order, " + std::to_string(outside) + " cluster blocks outside 0-65");

    // captured into a graph: the route joins the capture and leaves it, and every replay keeps the order
    cudaGraph_t g = nullptr;
    cudaGraphExec_t ge = nullptr;
    cudaError_t eb = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaError_t ec = eb == cudaSuccess ? cluster_sequence(s, v, sm) : eb;
    cudaError_t ee = eb == cudaSuccess ? cudaStreamEndCapture(s, &g) : eb;
    cudaError_t ei = ee == cudaSuccess && ec == cudaSuccess ? cudaGraphInstantiate(&ge, g, 0) : ee;
    unsigned bad_replays = 0;
    for (int r = 0; r < 3 && ei == cudaSuccess; r++) {
        CK(cudaMemsetAsync(v, 0, 64 * sizeof *v, s));
        CK(cudaMemsetAsync(sm, 0xff, 64 * sizeof *sm, s));
        CK(cudaGraphLaunch(ge, s));
        CK(cudaStreamSynchronize(s));
        bad_replays += not_123(v) != 0 || outside_of(sm, 0, 65) != 0;
    }
    cudaGetLastError();
    result("cluster.graph", eb == cudaSuccess && ec == cudaSuccess && ee == cudaSuccess && ei == cudaSuccess &&
                                bad_replays == 0,
           std::string("capture ") + cudaGetErrorName(eb) + "/" + cudaGetErrorName(ec) + "/" + cudaGetErrorName(ee) +
               ", instantiate " + cudaGetErrorName(ei) + ", " + std::to_string(bad_replays) +
               " of 3 replays out of order or outside 0-65");
    if (ge) CK(cudaGraphExecDestroy(ge));
    if (g) CK(cudaGraphDestroy(g));

    // larger than any cluster group (and not allowed as non-portable): refused with a status
    cudaError_t e16 = launch_clusters(s, 16, sm);
    cudaGetLastError();
    CK(cudaStreamSynchronize(s));
    result("cluster.sixteen-refused", e16 != cudaSuccess,
           std::string("clusters of 16: ") + cudaGetErrorName(e16) + " (8-SM groups run at most 8)");
    CK(cudaFree(sm));
    CK(cudaFree(v));
    TCK(api.stream_bind(sv, nullptr));
    CK(cudaStreamDestroy(s));
}

// ---------------------------------------------------------------- the serving engine
// One block: thread 0 notes its SM, then spins ns on %globaltimer (a request of ~50 us).
extern "C" __global__ void serve_sleep(unsigned long long ns, unsigned *smids, unsigned *count, unsigned cap)
{
    if (threadIdx.x == 0) {
        unsigned sm;
        unsigned long long t0, t;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
        smids[atomicAdd(count, 1u) % cap] = sm;
        do {
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        } while (t - t0 < ns);
    }
}

// A captured request: the graph of one serve_sleep launch on stream s, and where its blocks ran.
struct ServeGraph {
    static const unsigned cap = 1 << 16;
    unsigned *smids, *count;
    cudaGraph_t g;
    explicit ServeGraph(cudaStream_t s, unsigned long long ns)
    {
        CK(cudaMalloc(&smids, cap * 4));
        CK(cudaMalloc(&count, 4));
        for (int i = 0; i < 3; i++) serve_sleep<<<1, 32, 0, s>>>(ns, smids, count, cap);   // measured first
        CK(cudaStreamSynchronize(s));
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        serve_sleep<<<1, 32, 0, s>>>(ns, smids, count, cap);
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaMemset(count, 0, 4));
        CK(cudaDeviceSynchronize());
    }
    // blocks run since the capture, and how many of them ran outside m
    unsigned ran(const tidal_smset &m, unsigned *outside)
    {
        unsigned n;
        CK(cudaMemcpy(&n, count, 4, cudaMemcpyDeviceToHost));
        std::vector<unsigned> v(std::min(n, cap));
        CK(cudaMemcpy(v.data(), smids, v.size() * 4, cudaMemcpyDeviceToHost));
        *outside = 0;
        for (unsigned sm : v) *outside += !(sm < 256 && ((m.bits[sm / 64] >> (sm % 64)) & 1));
        return n;
    }
};

static double pct(std::vector<double> v, double q)
{
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    size_t k = (size_t)(q / 100.0 * v.size());
    return v[std::min(k, v.size() - 1)];
}

// GSLICE's adaptive batching on the GPU: one LS service with a graph per batch size b = 1..4
// (a kernel of 40 + 10 b us), SLO 400 us, so a batch may run 200 us (batch_frac 0.5) and its
// oldest request may wait up to 200 us for it to fill. Bursts of 4 simultaneous arrivals
// every 2 ms (2000/s: a batch would take 1.5 ms to fill from the rate): only the requests
// already queued make batches larger than 1. Poisson at 20000/s: the rate fills a batch of
// 4 within the 200 us. Each batch must run the graph of its size.
static void serve_batches()
{
    const double slo_us = 400;
    const unsigned maxb = 4;
    tidal_part *p;
    TCK(api.partition_create("srv-batch", "all", &p));
    void *s;
    TCK(api.partition_stream(p, 0, &s));
    tidal_policy_config pc;
    memset(&pc, 0, sizeof pc);
    pc.kind = TIDAL_POLICY_GSLICE;
    tidal_policy *pol;
    TCK(api.policy_create(&pc, &pol));
    tidal_service_config sc;
    memset(&sc, 0, sizeof sc);
    sc.name = "batched", sc.cls = TIDAL_SERVICE_LS, sc.part = p, sc.slo_us = slo_us, sc.max_batch = maxb;
    int pid;
    TCK(api.policy_add_service(pol, &sc, &pid));
    std::vector<ServeGraph *> g;
    for (unsigned b = 1; b <= maxb; b++) {
        g.push_back(new ServeGraph((cudaStream_t)s, 40000ull + 10000ull * b));
        TCK(api.policy_batch_profile(pol, pid, b, 45.0 + 10.0 * b));   // the kernel and a launch
    }
    tidal_server *srv;
    TCK(api.server_create(pol, nullptr, &srv));
    void *ex[maxb];
    for (unsigned b = 0; b < maxb; b++) TCK(api.server_instantiate(srv, g[b]->g, &ex[b]));
    tidal_server_instance in;
    memset(&in, 0, sizeof in);
    in.stream = s, in.graphs = ex;
    tidal_server_service v;
    memset(&v, 0, sizeof v);
    v.name = "batched", v.cls = TIDAL_SERVICE_LS, v.policy_id = pid, v.max_batch = maxb, v.instances = &in,
    v.ninstances = 1;
    int id;
    TCK(api.server_add_service(srv, &v, &id));
    const tidal_smset all = clip(parse("all"), nsm());
    for (int phase = 0; phase < 2; phase++) {
        const char *tag = phase ? "serve.batches.rate" : "serve.batches.queued";
        std::vector<uint64_t> arr;
        if (phase == 0) {
            for (int i = 0; i < 40; i++)
                for (int j = 0; j < 4; j++) arr.push_back(1000000ull + 2000000ull * i);
        } else {
            srand48(21);
            double t = 1000.0;
            for (int i = 0; i < 400; i++) {
                t += -log(1.0 - drand48()) * 1e6 / 20000.0;
                arr.push_back((uint64_t)(t * 1000.0));
            }
        }
        const size_t n = arr.size();
        TCK(api.server_arrivals(srv, id, arr.data(), n));
        unsigned before[maxb], out;
        for (unsigned b = 0; b < maxb; b++) before[b] = g[b]->ran(all, &out);
        int rc = api.server_run(srv, arr.back() + 1000000);
        result((std::string(tag) + ".run").c_str(), rc == 0, rc ? api.last_error() : "");
        if (rc) break;
        const tidal_server_record *r;
        size_t nr;
        TCK(api.server_records(srv, &r, &nr));
        tidal_server_counts c;
        TCK(api.server_counts_get(srv, id, &c));
        unsigned of_size[maxb + 1] = {0}, bad = 0;
        // wait/lat from the arrival; qwait/qlat from when the dispatcher queued the request:
        // a host stall (the process not scheduled for milliseconds) delays the queueing and
        // says nothing of the batch rule, which is judged on the engine's own part
        std::vector<double> wait, lat, qwait, qlat, late;
        std::vector<bool> seen(n);
        for (size_t i = 0; i < nr; i++) {
            if (r[i].service != id) continue;
            if (r[i].batch < 1 || r[i].batch > maxb || r[i].request >= n || seen[r[i].request]) {
                bad++;
                continue;
            }
            seen[r[i].request] = true;
            of_size[r[i].batch]++;
            wait.push_back((r[i].start_ns - r[i].arrival_ns) / 1e3);
            lat.push_back((r[i].end_ns - r[i].arrival_ns) / 1e3);
            qwait.push_back((r[i].start_ns - r[i].queued_ns) / 1e3);
            qlat.push_back((r[i].end_ns - r[i].queued_ns) / 1e3);
            late.push_back((r[i].queued_ns - r[i].arrival_ns) / 1e3);
        }
        char why[512];
        snprintf(why, sizeof why, "%zu of %zu requests recorded once, %u records malformed or repeated; "
                 "%llu completed in %llu batches", wait.size(), n, bad, (unsigned long long)c.requests,
                 (unsigned long long)c.batches);
        result((std::string(tag) + ".completed").c_str(), wait.size() == n && bad == 0 && c.requests == n, why);
        // every batch of b requests ran graphs[b - 1]: the blocks of each graph since the run
        std::string ran;
        bool graphs_ok = true;
        for (unsigned b = 1; b <= maxb; b++) {
            unsigned batches = of_size[b] / b, blocks = g[b - 1]->ran(all, &out) - before[b - 1];
            graphs_ok &= of_size[b] % b == 0 && blocks == batches;
            ran += (b > 1 ? ", " : "") + std::to_string(batches) + " of " + std::to_string(b) + " (graph " +
                   std::to_string(blocks) + ")";
        }
        const double mean = c.batches ? (double)c.requests / c.batches : 0;
        snprintf(why, sizeof why, "batches %s; mean batch %.2f; wait for the batch p50 %.1f p99 %.1f us; "
                 "latency p50 %.1f p99 %.1f us (SLO %.0f); from the queueing: wait p99 %.1f, latency p99 %.1f us; "
                 "queued late p99 %.1f us", ran.c_str(), mean, pct(wait, 50), pct(wait, 99), pct(lat, 50), pct(lat, 99),
                 slo_us, pct(qwait, 99), pct(qlat, 99), pct(late, 99));
        result((std::string(tag) + ".graph-per-size").c_str(), graphs_ok, why);
        // queued: a burst's first request may be taken alone (before the dispatcher queued the
        // rest), the other three then make one batch; rate: most batches fill to 4 in time
        const double want = phase ? 2.5 : 1.9;
        result((std::string(tag) + ".batched").c_str(), mean >= want && of_size[phase ? 4 : 3] + of_size[4] > 0 &&
               pct(qlat, 99) <= slo_us && pct(qwait, 99) <= slo_us / 2 + 100, why);
    }
    TCK(api.server_destroy(srv));
    TCK(api.policy_destroy(pol));
    for (ServeGraph *x : g) delete x;
}

static void mode_serve()
{
    if (!api.server_create) {
        printf("FAIL serve: tidal_server_create is not in this process\n");
        failures++;
        return;
    }
    const int N = nsm();
    const std::string ls_set = "0-" + std::to_string(N / 2 - 1), be_set = std::to_string(N / 2) + "-" + std::to_string(N - 1);
    const unsigned long long kernel_ns = 50000;
    tidal_part *pl, *pb;
    TCK(api.partition_create("srv-ls", ls_set.c_str(), &pl));
    TCK(api.partition_create("srv-be", be_set.c_str(), &pb));
    void *s0, *s1, *sb;
    TCK(api.partition_stream(pl, 0, &s0));
    TCK(api.partition_stream(pl, 0, &s1));
    TCK(api.partition_stream(pb, 0, &sb));
    // two LS instances, each its own capture (one capture's clones share a slot: docs/design.md)
    ServeGraph g0((cudaStream_t)s0, kernel_ns), g1((cudaStream_t)s1, kernel_ns), gb((cudaStream_t)sb, kernel_ns);
    tidal_server *srv;
    TCK(api.server_create(nullptr, nullptr, &srv));
    cudaGraphExec_t e0;
    CK(cudaGraphInstantiate(&e0, g0.g, 0));
    void *e1, *eb;   // instantiated by libtidal (PyTorch without raw_cuda_graph_exec: keep_graph=True)
    TCK(api.server_instantiate(srv, g1.g, &e1));
    TCK(api.server_instantiate(srv, gb.g, &eb));
    // the service time alone: back-to-back replays
    double t0 = now_us();
    const int solo = 50;
    for (int i = 0; i < solo; i++) {
        CK(cudaGraphLaunch(e0, (cudaStream_t)s0));
        CK(cudaStreamSynchronize((cudaStream_t)s0));
    }
    const double service_us = (now_us() - t0) / solo;
    tidal_server_instance li[2] = {{s0, (void *)e0, nullptr}, {s1, e1, nullptr}};
    tidal_server_service ls;
    memset(&ls, 0, sizeof ls);
    ls.name = "ls", ls.cls = TIDAL_SERVICE_LS, ls.instances = li, ls.ninstances = 2;
    int il;
    TCK(api.server_add_service(srv, &ls, &il));
    // 200 Poisson arrivals at 30% of one instance's capacity
    const int n = 200;
    std::vector<uint64_t> arr(n);
    srand48(12);
    double t = 1000.0;   // us
    for (int i = 0; i < n; i++) {
        t += -log(1.0 - drand48()) * service_us / 0.3;
        arr[i] = (uint64_t)(t * 1000.0);
    }
    TCK(api.server_arrivals(srv, il, arr.data(), n));
    const uint64_t duration = arr[n - 1] + 1000000;
    tidal_smset ml = clip(parse(ls_set.c_str()), N), mb = clip(parse(be_set.c_str()), N);
    for (int phase = 0; phase < 2; phase++) {
        const char *tag = phase ? "serve.with-be" : "serve.alone";
        int ib = -1;
        if (phase == 1) {
            tidal_server_instance bi = {sb, eb, nullptr};
            tidal_server_service be;
            memset(&be, 0, sizeof be);
            be.name = "be", be.cls = TIDAL_SERVICE_BE, be.instances = &bi, be.ninstances = 1;
            TCK(api.server_add_service(srv, &be, &ib));
        }
        unsigned out0, out1;
        unsigned before = g0.ran(ml, &out0) + g1.ran(ml, &out1);
        int rc = api.server_run(srv, duration);
        result((std::string(tag) + ".run").c_str(), rc == 0, rc ? api.last_error() : "");
        if (rc) return;
        const tidal_server_record *r;
        size_t nr;
        TCK(api.server_records(srv, &r, &nr));
        tidal_server_counts c;
        TCK(api.server_counts_get(srv, il, &c));
        std::vector<double> wait, late, run;
        double min_run = 1e18;
        size_t nls = 0;
        for (size_t i = 0; i < nr; i++) {
            if (r[i].service != il) continue;
            nls++;
            wait.push_back((r[i].start_ns - r[i].arrival_ns) / 1e3);
            late.push_back((r[i].queued_ns - r[i].arrival_ns) / 1e3);
            run.push_back((r[i].end_ns - r[i].start_ns) / 1e3);
            min_run = std::min(min_run, (r[i].end_ns - r[i].start_ns) / 1e3);
        }
        char why[512];
        snprintf(why, sizeof why, "%zu of %d requests recorded, %llu completed", nls, n, (unsigned long long)c.requests);
        result((std::string(tag) + ".completed").c_str(), nls == (size_t)n && c.requests == (uint64_t)n, why);
        snprintf(why, sizeof why, "shortest request %.1f us, kernel %.1f us (solo replay %.1f us)", min_run,
                 kernel_ns / 1e3, service_us);
        result((std::string(tag) + ".latency").c_str(), min_run >= kernel_ns / 1e3, why);
        snprintf(why, sizeof why, "wait (arrival to launch) p50 %.1f p99 %.1f us; queued late p50 %.1f p99 %.1f us; "
                 "run p50 %.1f p99 %.1f us", pct(wait, 50), pct(wait, 99), pct(late, 50), pct(late, 99),
                 pct(run, 50), pct(run, 99));
        result((std::string(tag) + ".wait-p50").c_str(), pct(wait, 50) < 50, why);
        unsigned after = g0.ran(ml, &out0) + g1.ran(ml, &out1);
        snprintf(why, sizeof why, "%u LS blocks ran, %u outside %s", after - before, out0 + out1, ls_set.c_str());
        result((std::string(tag) + ".placed").c_str(), after - before == (unsigned)n && out0 + out1 == 0, why);
        if (phase == 1) {
            TCK(api.server_counts_get(srv, ib, &c));
            unsigned outb, nb = gb.ran(mb, &outb);
            snprintf(why, sizeof why, "BE %llu batches (%.0f/s), %u blocks, %u outside %s",
                     (unsigned long long)c.batches, c.batches / (duration / 1e9), nb, outb, be_set.c_str());
            result("serve.with-be.be", c.batches > 0 && nb == c.batches && outb == 0, why);
        }
    }
    TCK(api.server_destroy(srv));
    CK(cudaGraphExecDestroy(e0));
    serve_batches();
}

static void mode_policy()
{
    if (!api.policy_create) {
        printf("FAIL policy: tidal_policy_create is not in this process\n");
        failures++;
        return;
    }
    policy_sgdrc();
    policy_gslice();
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: rt_app env N | api | flip | graph | place | smem | tenant NAME [--set SMSET] [--socket P] | hog [BLOCKS MS] | probe | rate [BLOCKS] | policy | l2side | l2mem | l2addr PTX... | bimodal | cluster | serve\n");
        return 2;
    }
    setvbuf(stdout, nullptr, _IOLBF, 0);
    CK(cudaFree(0));
    if (!strcmp(argv[1], "hog")) return mode_hog(argc > 2 ? atoi(argv[2]) : 66, argc > 3 ? atoi(argv[3]) : 3000);
    if (!strcmp(argv[1], "probe")) return mode_probe();
    if (!strcmp(argv[1], "rate")) return mode_rate(argc > 2 ? (unsigned)atoi(argv[2]) : 1);
    load_api();
    // the API needs libtidal initialized; launches initialize it lazily, the API does not
    if (api.init) api.init(0);
    std::string m = argv[1];
    if (m == "env") mode_env(argc > 2 ? (unsigned)atoi(argv[2]) : 50000);
    else if (m == "api") mode_api();
    else if (m == "flip") mode_flip();
    else if (m == "graph") mode_graph();
    else if (m == "place") mode_place();
    else if (m == "smem") mode_smem();
    else if (m == "policy") mode_policy();
    else if (m == "l2side") mode_l2side();
    else if (m == "l2mem") mode_l2mem();
    else if (m == "bimodal") mode_bimodal();
    else if (m == "l2addr") mode_l2addr(argc, argv);
    else if (m == "cluster") mode_cluster();
    else if (m == "serve") mode_serve();
    else if (m == "tenant" && argc > 2) mode_tenant(argc, argv);
    else { fprintf(stderr, "rt_app: unknown mode %s\n", argv[1]); return 2; }
    return failures ? 1 : 0;
}
