/* bench/vram/l2_bench.cuh -- what the isolation benchmarks on libtidal's L2 parts share
 * (l2mem_iso.cu, bimodal.cu): the LS latency probe, the BE stream, the L2 flush, data in a
 * half of a tidal_l2mem or plain, the LS partition's SMs and partition streams, the check
 * macro. CUDA C++, included once
 * per program. */
#ifndef TIDAL_BENCH_L2_BENCH_CUH
#define TIDAL_BENCH_L2_BENCH_CUH

#include <cuda.h>
#include <cuda_runtime.h>

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../probes/probe_check.h"
#include "tidal.h"
#include "tidal_l2.h"

#define TK(x)                                                                                                   \
    do {                                                                                                        \
        int s_ = (x);                                                                                           \
        if (s_) {                                                                                               \
            fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #x, tidal_strerror(s_), tidal_last_error()); \
            exit(1);                                                                                            \
        }                                                                                                       \
    } while (0)

/* Data either in side `side`'s half of a tidal_l2mem (L its layout) or plain at L.base
 * (L.flips 0). */
struct Data {
    tidal_l2_layout L;
    unsigned side;
    __host__ __device__ unsigned long long addr(unsigned long long o) const
    {
        return L.flips ? tidal_l2_addr(&L, side, o) : L.base + o;
    }
    __device__ void chunk(unsigned long long) {}
};

/* Plain memory at p, as Data. */
static Data plain_data(const void *p)
{
    Data d = {};
    d.L.base = (unsigned long long)p;
    return d;
}

/* LS: one thread waits until be_blocks BE blocks have started (at most 1 s) and wait_ns
 * more (BE's stream reaches its steady state), then reads n lines of its data once each and
 * keeps each one's latency in cycles (DRAM latency after a flush). The load's address
 * depends on the first clock read and the shared store on the load, so the clock reads
 * bracket it (docs/vram-channels.md). be_blocks 0: no wait for BE. */
__global__ void ls_probe(Data d, unsigned first, unsigned n, unsigned long long zero, unsigned short *lat,
                         volatile unsigned *be_started, unsigned be_blocks, unsigned long long wait_ns)
{
    __shared__ volatile unsigned sink;
    if (threadIdx.x || blockIdx.x) return;
    unsigned long long g0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
    while (*be_started < be_blocks) {
        unsigned long long g;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
        if (g - g0 > 1000000000ull) break;
    }
    unsigned long long g1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
    for (;;) { /* BE's stream reaches its steady state */
        unsigned long long g;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
        if (g - g1 > wait_ns) break;
    }
    for (unsigned i = 0; i < n; i++) {
        /* lines 4 KiB + 128 B apart: every line a new block, all lines of a block in turn */
        const char *p = (const char *)d.addr((unsigned long long)(first + i) * (4096 + 128));
        unsigned long long t0, t1;
        unsigned v;
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0)::"memory");
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p + (t0 & zero)) : "memory");
        sink = v;
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1)::"memory");
        unsigned long long dt = t1 - t0;
        lat[i] = (unsigned short)(dt > 65535 ? 65535 : dt);
    }
}

/* BE: each warp streams 4 KiB blocks of src (16 B a lane, 8 steps), block after block,
 * until *stop; *bytes counts what was read. src.addr(o) is byte o's address; src.chunk(i)
 * runs before the warp's i-th block (a bimodal source re-reads its mode there). */
/* The SM each BE block started on (blocks past 1024 not kept): what a stuck LS probe
 * reports (Runner::run), to tell "LS's SMs held by BE" from other causes. */
__device__ unsigned be_block_sm[1024];
/* When BE's first block started and its last warp left (globaltimer, ns): BE's own time,
 * against which the events' is checked (Runner::run). */
__device__ unsigned long long be_span[2];

template <class Src>
__device__ void stream_blocks(Src &src, unsigned long long bytes_total, volatile unsigned *stop, unsigned *started,
                              unsigned long long *bytes)
{
    if (threadIdx.x == 0) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        if (blockIdx.x < 1024) be_block_sm[blockIdx.x] = sm;
        unsigned long long g;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
        atomicMin(&be_span[0], g);
        atomicAdd(started, 1u);
    }
    unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    unsigned nwarps = gridDim.x * blockDim.x / 32;
    unsigned long long nblk = bytes_total / 4096, done = 0;
    unsigned acc = 0;
    for (unsigned long long b = warp, i = 0;; b += nwarps, i++) {
        if (b >= nblk) b %= nblk;
        src.chunk(i);
        const char *p = (const char *)src.addr(b * 4096);
        for (unsigned s = 0; s < 8; s++) {
            uint4 v = __ldcg((const uint4 *)(p + s * 512 + lane * 16));
            acc ^= v.x ^ v.y ^ v.z ^ v.w;
        }
        done += 4096;
        if (*stop) break;
    }
    if (acc == 0x12345678u) *stop = 2;
    if (lane == 0) {
        atomicAdd(bytes, done); /* the warp's bytes */
        unsigned long long g;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
        atomicMax(&be_span[1], g);
    }
}

/* Reads n 16-byte words at p: evicts what the L2 held before (p larger than the L2). */
__global__ void flush(const uint4 *p, size_t n, unsigned *out)
{
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = __ldcg(p + i);
        acc ^= v.x ^ v.w;
    }
    if (acc == 0x9e3779b9u) *out = acc;
}

/* Where the benchmark is (a step name and a counter): a watchdog thread ends the process
 * with the step named when one step takes longer than 10 s, so that a stuck run says where
 * instead of being killed without a word by its caller's timeout. */
static std::atomic<const char *> bench_step{"start"};
static std::atomic<unsigned long> bench_steps{0};
static void step(const char *what)
{
    bench_step = what;
    bench_steps++;
}
static void start_watchdog()
{
    std::thread([] {
        unsigned long last = ~0ul;
        int still = 0;
        for (;;) {
            sleep(1);
            unsigned long n = bench_steps;
            still = n == last ? still + 1 : 0;
            last = n;
            if (still >= 10) {
                fprintf(stderr, "watchdog: no progress for 10 s at step '%s' (step %lu)\n", bench_step.load(), n);
                fflush(stdout);
                _exit(3);
            }
        }
    }).detach();
}

/* One run's numbers: LS's latency percentiles in cycles (0 without LS), BE's GB/s (0 without
 * BE). */
struct RunResult {
    unsigned median, p90, p99;
    double gbs;   /* negative: BE did not run its time (see Runner::run) */
    double be_ms; /* BE's own span: its first block's start to its last warp's end */
};

/* What every run needs: a flush buffer (240 MiB: more than the L2), BE's stop and started
 * words and its byte count, LS's latencies, events around BE. */
struct Runner {
    unsigned nsm, nls;
    uint4 *fl;
    size_t fl_bytes = (size_t)240 << 20;
    unsigned *ctl; /* stop, started */
    unsigned long long *bytes;
    unsigned short *dlat;
    cudaEvent_t e0, e1;

    Runner(unsigned nsm_, unsigned nls_) : nsm(nsm_), nls(nls_)
    {
        RK(cudaMalloc(&fl, fl_bytes));
        RK(cudaMemset(fl, 3, fl_bytes));
        RK(cudaMalloc(&ctl, 2 * sizeof *ctl));
        RK(cudaMalloc(&bytes, sizeof *bytes));
        RK(cudaMalloc(&dlat, nls * sizeof *dlat));
        RK(cudaEventCreate(&e0));
        RK(cudaEventCreate(&e1));
    }

    /* Flush the L2; start BE, be(stream, blocks, stop, started, bytes), with be_blocks blocks
     * on bes (nullptr: no BE); run LS's probe of ls from line `first` on sls (nullptr: no LS)
     * once BE's blocks have started and 200 us more; stop BE when LS is done and at least
     * min_ms after BE was launched. */
    /* LS's probe ends within ~1.2 s (its wait for BE is bounded): past 5 s it is stuck, and
     * what BE holds is printed before the process ends (the watchdog would only name the
     * step). */
    void wait_ls(cudaStream_t sls, unsigned be_blocks)
    {
        timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (;;) {
            cudaError_t q = cudaStreamQuery(sls);
            if (q == cudaSuccess) return;
            if (q != cudaErrorNotReady) RK(q);
            clock_gettime(CLOCK_MONOTONIC, &b);
            if (b.tv_sec - a.tv_sec >= 5) break;
            usleep(200);
        }
        cudaStream_t peek;
        RK(cudaStreamCreateWithFlags(&peek, cudaStreamNonBlocking));
        unsigned started = 0, sm[1024];
        RK(cudaMemcpyAsync(&started, ctl + 1, sizeof started, cudaMemcpyDeviceToHost, peek));
        RK(cudaMemcpyAsync(sm, be_sms_dev(), sizeof sm, cudaMemcpyDeviceToHost, peek));
        RK(cudaStreamSynchronize(peek));
        std::vector<unsigned> on(nsm, 0);
        for (unsigned i = 0; i < be_blocks && i < 1024; i++)
            if (sm[i] < nsm) on[sm[i]]++;
        std::string where;
        for (unsigned s = 0; s < nsm; s++)
            if (on[s]) where += " " + std::to_string(s) + (on[s] > 1 ? "x" + std::to_string(on[s]) : "");
        fprintf(stderr, "LS probe stuck for 5 s: BE started %u of %u blocks, on SMs%s\n", started, be_blocks,
                where.c_str());
        fflush(stdout);
        _exit(4);
    }

    static unsigned *be_sms_dev()
    {
        void *p;
        RK(cudaGetSymbolAddress(&p, be_block_sm));
        return (unsigned *)p;
    }

    template <class BE>
    RunResult run(cudaStream_t bes, unsigned be_blocks, BE be, cudaStream_t sls, const Data &ls, unsigned first,
                  double min_ms)
    {
        step("flush");
        flush<<<4 * nsm, 512>>>(fl, fl_bytes / 16, ctl);
        RK(cudaDeviceSynchronize());
        step("launch BE");
        /* cudaMemset is asynchronous and runs on the legacy stream, which the partition
         * streams (non-blocking) do not wait for: finish it before BE starts, or BE can
         * read the last run's stop word (and leave after one block of 4 KiB a warp: a
         * few microseconds that passed for TB/s) */
        RK(cudaMemset(ctl, 0, 2 * sizeof *ctl));
        RK(cudaMemset(bytes, 0, sizeof *bytes));
        RK(cudaMemset(be_sms_dev(), 0xff, 1024 * sizeof(unsigned)));
        const unsigned long long span0[2] = {~0ull, 0};
        RK(cudaMemcpyToSymbol(be_span, span0, sizeof span0));
        RK(cudaStreamSynchronize(0));
        if (bes) {
            RK(cudaEventRecord(e0, bes));
            be(bes, be_blocks, ctl, ctl + 1, bytes);
            RK(cudaEventRecord(e1, bes));
        }
        timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        step("LS probe");
        if (sls) {
            ls_probe<<<1, 32, 0, sls>>>(ls, first, nls, 0, dlat, ctl + 1, bes ? be_blocks : 0, 200000);
            wait_ls(sls, be_blocks);
        }
        step("BE's minimum time");
        do clock_gettime(CLOCK_MONOTONIC, &t);
        while ((t.tv_sec - t0.tv_sec) * 1e3 + (t.tv_nsec - t0.tv_nsec) / 1e6 < min_ms);
        unsigned one = 1;
        step("stop BE");
        RK(cudaMemcpy(ctl, &one, sizeof one, cudaMemcpyHostToDevice));
        step("wait for BE to stop");
        RK(cudaDeviceSynchronize());
        step("results");
        RK(cudaGetLastError());
        RunResult r = {0, 0, 0, 0, 0};
        if (sls) {
            std::vector<unsigned short> lat(nls);
            RK(cudaMemcpy(lat.data(), dlat, nls * sizeof *dlat, cudaMemcpyDeviceToHost));
            std::sort(lat.begin(), lat.end());
            r.median = lat[nls / 2], r.p90 = lat[nls * 9 / 10], r.p99 = lat[nls * 99 / 100];
        }
        if (bes) {
            float ms;
            unsigned long long b;
            RK(cudaEventElapsedTime(&ms, e0, e1));
            RK(cudaMemcpy(&b, bytes, sizeof b, cudaMemcpyDeviceToHost));
            unsigned long long span[2];
            RK(cudaMemcpyFromSymbol(span, be_span, sizeof span));
            r.gbs = b / (ms * 1e6);
            r.be_ms = (span[1] - span[0]) / 1e6;
            /* BE's own span and the events' must agree, and BE must have run its minimum:
             * else the bandwidth is no bandwidth (said, and the row is marked) */
            if (r.be_ms < 0.5 * ms || r.be_ms < 0.5 * min_ms) {
                fprintf(stderr, "BE ran %.3f ms by its own clock, %.3f ms by the events (minimum %.1f ms): %llu bytes\n",
                        r.be_ms, ms, min_ms, b);
                r.gbs = -r.gbs;
            }
        }
        return r;
    }
};

static std::string fmt(const tidal_smset &m)
{
    char b[1024];
    tidal_smset_format(&m, b, sizeof b);
    return b;
}

/* A benchmark's start: its one argument, the CSV path (else the usage, exit 2); libtidal
 * without tidald; the device's SM count and its L2 sides. */
static const char *bench_start(int argc, char **argv, unsigned *nsm, tidal_smset *s0, tidal_smset *s1)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUT.csv\n", argv[0]);
        exit(2);
    }
    start_watchdog();
    step("init");
    /* Every kernel loaded now: a lazily loaded kernel's first launch waits for the kernels
     * running (CUDA 12's default), and the LS probe's first launch came with BE running and
     * waiting for LS to end (bimodal phase b: a deadlock the watchdog reported as 'LS
     * probe') */
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    RK(cudaFree(0));
    TK(tidal_init(TIDAL_INIT_NO_DAEMON));
    TK(tidal_device_sms(nsm));
    TK(tidal_l2_sides(s0, s1));
    return argv[1];
}

/* LS's SMs: the two lowest SMs of side s0 (a TPC); *rest: every SM of the device but them. */
static tidal_smset ls_sms(const tidal_smset &s0, unsigned nsm, tidal_smset *rest)
{
    tidal_smset ls;
    memset(&ls, 0, sizeof ls);
    unsigned got = 0;
    for (unsigned s = 0; s < nsm && got < 2; s++)
        if ((s0.bits[s / 64] >> (s % 64)) & 1) ls.bits[s / 64] |= 1ull << (s % 64), got++;
    for (int w = 0; w < 4; w++) rest->bits[w] = ~ls.bits[w];
    for (unsigned s = nsm; s < 256; s++) rest->bits[s / 64] &= ~(1ull << (s % 64));
    return ls;
}

/* A new partition named name on set, and a stream of it (a green context of its SMs). */
static cudaStream_t part_stream(const char *name, const tidal_smset &set, int priority)
{
    tidal_part *p;
    TK(tidal_partition_create(name, fmt(set).c_str(), &p));
    void *v;
    TK(tidal_partition_stream(p, priority, &v));
    return (cudaStream_t)v;
}

#endif
