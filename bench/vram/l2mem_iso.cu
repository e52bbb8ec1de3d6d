/* bench/vram/l2mem_iso.cu -- the isolation benchmark of issue 13 on libtidal's own parts:
 * memory homed on one L2 side (tidal_l2mem) and SM partitions along the sides
 * (tidal_l2_sides, tidal_partition_stream).
 *
 * LS: one thread on a partition of two side-0 SMs reads 2048 lines once each (DRAM latency,
 * cycles: the L2 is flushed before every run), from its data: the side-0 half of a
 * tidal_l2mem (colored) or a cudaMalloc buffer (uncolored). BE: 1024-thread blocks streaming
 * their data: the side-1 half of another tidal_l2mem (colored) or a cudaMalloc buffer, on a
 * partition of the other side's SMs or of every SM but LS's. Every configuration 3 times;
 * one CSV line each, and a table.
 *
 *   nvcc -O2 -arch=sm_90 -I runtime -I abi l2mem_iso.cu -L LIBDIR -ltidal -lcuda -o l2mem_iso
 *   l2mem_iso OUT.csv          (bench/vram/l2mem_iso.sh builds libtidal and runs it) */
#include <cuda.h>
#include <cuda_runtime.h>

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

static const size_t PER_SIDE = (size_t)256 << 20; /* per half: BE streams 256 MiB, 4x the L2 */
static const unsigned NLS = 2048;

/* Data either in side `side`'s half of a tidal_l2mem (L its layout) or plain at L.base
 * (L.flips 0). */
struct Data {
    tidal_l2_layout L;
    unsigned side;
    __host__ __device__ unsigned long long addr(unsigned long long o) const
    {
        return L.flips ? tidal_l2_addr(&L, side, o) : L.base + o;
    }
};

/* Plain memory at p, as Data. */
static Data plain_data(const void *p)
{
    Data d = {};
    d.L.base = (unsigned long long)p;
    return d;
}

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

/* Each warp streams 4 KiB blocks of its data (16 B a lane, 8 steps), block after block,
 * until *stop; *bytes counts what was read. */
__global__ void be_stream(Data d, unsigned long long bytes_total, volatile unsigned *stop, unsigned *started,
                          unsigned long long *bytes)
{
    if (threadIdx.x == 0) atomicAdd(started, 1u);
    unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    unsigned nwarps = gridDim.x * blockDim.x / 32;
    unsigned long long nblk = bytes_total / 4096, done = 0;
    unsigned acc = 0;
    for (unsigned long long b = warp;; b += nwarps) {
        if (b >= nblk) b %= nblk;
        const char *p = (const char *)d.addr(b * 4096);
        for (unsigned s = 0; s < 8; s++) {
            uint4 v = __ldcg((const uint4 *)(p + s * 512 + lane * 16));
            acc ^= v.x ^ v.y ^ v.z ^ v.w;
        }
        done += 4096;
        if (*stop) break;
    }
    if (acc == 0x12345678u) *stop = 2;
    if (lane == 0) atomicAdd(bytes, done); /* the warp's bytes */
}

__global__ void flush(const uint4 *p, size_t n, unsigned *out)
{
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = __ldcg(p + i);
        acc ^= v.x ^ v.w;
    }
    if (acc == 0x9e3779b9u) *out = acc;
}

static std::string fmt(const tidal_smset &m)
{
    char b[1024];
    tidal_smset_format(&m, b, sizeof b);
    return b;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: l2mem_iso OUT.csv\n");
        return 2;
    }
    RK(cudaFree(0));
    TK(tidal_init(TIDAL_INIT_NO_DAEMON));
    unsigned nsm;
    TK(tidal_device_sms(&nsm));
    tidal_smset s0, s1;
    TK(tidal_l2_sides(&s0, &s1));
    // LS: the two lowest SMs of side 0 (a TPC); BE: side 1, or every SM but LS's
    tidal_smset ls;
    memset(&ls, 0, sizeof ls);
    unsigned got = 0;
    for (unsigned s = 0; s < nsm && got < 2; s++)
        if ((s0.bits[s / 64] >> (s % 64)) & 1) ls.bits[s / 64] |= 1ull << (s % 64), got++;
    tidal_smset rest;
    for (int w = 0; w < 4; w++) rest.bits[w] = ~ls.bits[w];
    for (unsigned s = nsm; s < 256; s++) rest.bits[s / 64] &= ~(1ull << (s % 64));
    printf("sides: %s | %s; LS on %s\n", fmt(s0).c_str(), fmt(s1).c_str(), fmt(ls).c_str());
    tidal_part *pls, *pside1, *prest;
    TK(tidal_partition_create("ls", fmt(ls).c_str(), &pls));
    TK(tidal_partition_create("be-side1", fmt(s1).c_str(), &pside1));
    TK(tidal_partition_create("be-rest", fmt(rest).c_str(), &prest));
    void *v;
    TK(tidal_partition_stream(pls, -1, &v));
    cudaStream_t sls = (cudaStream_t)v;
    TK(tidal_partition_stream(pside1, 0, &v));
    cudaStream_t sside1 = (cudaStream_t)v;
    TK(tidal_partition_stream(prest, 0, &v));
    cudaStream_t srest = (cudaStream_t)v;
    // data: LS's and BE's colored halves (two tidal_l2mem: LS uses side 0 of one, BE side 1
    // of the other), and plain buffers of the same sizes
    tidal_l2mem *mls, *mbe;
    TK(tidal_l2mem_create(PER_SIDE, &mls));
    TK(tidal_l2mem_create(PER_SIDE, &mbe));
    tidal_l2_layout Lls, Lbe;
    TK(tidal_l2mem_layout(mls, &Lls));
    TK(tidal_l2mem_layout(mbe, &Lbe));
    char *pl, *pb;
    RK(cudaMalloc(&pl, PER_SIDE));
    RK(cudaMalloc(&pb, PER_SIDE));
    RK(cudaMemset(pl, 1, PER_SIDE));
    RK(cudaMemset(pb, 2, PER_SIDE));
    Data ls_col = {Lls, 0}, be_col = {Lbe, 1};
    Data ls_plain = plain_data(pl), be_plain = plain_data(pb);
    size_t fl_bytes = (size_t)240 << 20;
    uint4 *fl;
    RK(cudaMalloc(&fl, fl_bytes));
    RK(cudaMemset(fl, 3, fl_bytes));
    unsigned *ctl; // stop, started
    unsigned long long *bytes;
    unsigned short *dlat;
    RK(cudaMalloc(&ctl, 2 * sizeof *ctl));
    RK(cudaMalloc(&bytes, sizeof *bytes));
    RK(cudaMalloc(&dlat, NLS * sizeof *dlat));
    cudaEvent_t e0, e1;
    RK(cudaEventCreate(&e0));
    RK(cudaEventCreate(&e1));
    struct Cfg {
        const char *ls, *be, *sms;
        Data lsd, bed;
        cudaStream_t bes;
        tidal_smset *besms;
    } cfgs[] = {
        {"side0-half", "none", "-", ls_col, be_col, nullptr, nullptr},
        {"plain", "none", "-", ls_plain, be_plain, nullptr, nullptr},
        {"side0-half", "side1-half", "side1", ls_col, be_col, sside1, &s1},
        {"plain", "plain", "side1", ls_plain, be_plain, sside1, &s1},
        {"side0-half", "side1-half", "all-but-ls", ls_col, be_col, srest, &rest},
        {"plain", "plain", "all-but-ls", ls_plain, be_plain, srest, &rest},
    };
    FILE *csv = fopen(argv[1], "w");
    if (!csv) {
        perror(argv[1]);
        return 1;
    }
    fprintf(csv, "ls_data,be_data,be_sms,rep,ls_median,ls_p90,ls_p99,be_gbs\n");
    printf("| LS data | BE data | BE SMs | LS median | LS p90 | LS p99 | BE GB/s |\n|---|---|---|---|---|---|---|\n");
    for (int rep = 0; rep < 3; rep++)
        for (const Cfg &c : cfgs) {
            flush<<<4 * nsm, 512>>>(fl, fl_bytes / 16, ctl);
            RK(cudaDeviceSynchronize());
            RK(cudaMemset(ctl, 0, 2 * sizeof *ctl));
            RK(cudaMemset(bytes, 0, sizeof *bytes));
            unsigned be_blocks = c.bes ? 2 * tidal_smset_count(c.besms) : 0;
            if (c.bes) {
                RK(cudaEventRecord(e0, c.bes));
                be_stream<<<be_blocks, 1024, 0, c.bes>>>(c.bed, PER_SIDE, ctl, ctl + 1, bytes);
                RK(cudaEventRecord(e1, c.bes));
            }
            ls_probe<<<1, 32, 0, sls>>>(c.lsd, (unsigned)rep * NLS, NLS, 0, dlat, ctl + 1, be_blocks, 200000);
            RK(cudaStreamSynchronize(sls));
            unsigned one = 1;
            RK(cudaMemcpy(ctl, &one, sizeof one, cudaMemcpyHostToDevice));
            RK(cudaDeviceSynchronize());
            RK(cudaGetLastError());
            std::vector<unsigned short> lat(NLS);
            RK(cudaMemcpy(lat.data(), dlat, NLS * sizeof *dlat, cudaMemcpyDeviceToHost));
            std::sort(lat.begin(), lat.end());
            double gbs = 0;
            if (c.bes) {
                float ms;
                unsigned long long b;
                RK(cudaEventElapsedTime(&ms, e0, e1));
                RK(cudaMemcpy(&b, bytes, sizeof b, cudaMemcpyDeviceToHost));
                gbs = b / (ms * 1e6);
            }
            fprintf(csv, "%s,%s,%s,%d,%u,%u,%u,%.1f\n", c.ls, c.be, c.sms, rep, lat[NLS / 2], lat[NLS * 9 / 10],
                    lat[NLS * 99 / 100], gbs);
            printf("| %s | %s | %s | %u | %u | %u | %.1f |\n", c.ls, c.be, c.sms, lat[NLS / 2], lat[NLS * 9 / 10],
                   lat[NLS * 99 / 100], gbs);
            fflush(stdout);
        }
    fclose(csv);
    TK(tidal_l2mem_destroy(mls));
    TK(tidal_l2mem_destroy(mbe));
    return 0;
}
