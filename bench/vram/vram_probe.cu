/* bench/vram/vram_probe.cu -- tidal-vram-probe: what user space can learn of the H200's
 * memory system by timing, with memory from the CUDA VMM API (issue 13).
 *
 * Memory: G granules, each its own cuMemCreate handle (2 MiB), mapped side by side;
 * granule 0's handle is mapped a second time after them (the "remap": same physical
 * memory, another virtual address). Every address below is an offset into that range.
 *
 * Experiments (each writes raw data into OUTDIR; analyze.py turns it into the map,
 * the model's accuracy and the plots):
 *   calib  one SM, lines of granule 0: latency of a first touch after an L2 flush
 *          (DRAM), of a second touch (L2 hit), and of a touch after discard.global.L2
 *          (does discard send the next read to DRAM?)                      calib.bin
 *   side   every SM in turn, lines of granule 0 at a stride: first-touch latency after
 *          a flush, second touch, and a touch of lines that SM 0 warmed: which SMs
 *          share an L2 side, and whether a line's latency depends on the SM  side.bin
 *   home   every granule and the remap: SM 0 warms the lines, a far SM (other L2 side)
 *          times them: the L2 side that homes each line                  home.bin
 *   slice  L2-slice classes by contention: hog warps on every other SM hammer one
 *          line with L2 hits (ld.global.cg); victim SMs time L2 hits on the candidate
 *          lines; a line whose hit latency jumps shares the hog line's slice. Greedy:
 *          each run's hog line is the first unclassified line, until all are classed
 *                                                    slice.bin, slice_runs.csv, lineres.bin
 *   iso-side  isolation by L2 side: LS on SM 0 reads lines its side homes, BE streams lines
 *          the other side homes, on the other side's SMs; against both on all memory
 *                                                                           iso_side.csv
 *   iso    isolation by class: an LS probe (one thread, DRAM latency of lines touched
 *          once) on class set A while BE warps stream class set B (or all memory),
 *          against both on all memory; BE bandwidth in each                 iso.csv
 *
 * Build (GPU machine): nvcc -O2 -arch=sm_90 -o vram_probe vram_probe.cu -lcuda
 * Run:   vram_probe OUTDIR [--granules N] [--grain B] [--victim-sms S,...] [--lineres N]
 *                          [--max-runs N] [--only calib,side,slice,iso]
 * Progress and a summary go to standard output. */
#include <cuda.h>
#include <cuda_runtime.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../probes/probe_check.h"

#define MAX_SMS 256
#define LINE 128u
#define HOG_THREADS 1024
#define HOG_SMEM (150 * 1024) /* one block per SM: 132 blocks land one on each SM */
#define STOP_CYCLES 8000000000ull /* a hog gives up after ~4 s at 1.98 GHz */

/* ---------------------------------------------------------------- device side */

__device__ __forceinline__ unsigned smid(void)
{
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

__device__ __forceinline__ unsigned long long clk(void)
{
    unsigned long long c;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)::"memory");
    return c;
}

__device__ __forceinline__ unsigned long long gtimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}

/* L2 only (no L1): every repeat of a load reaches the L2. */
__device__ __forceinline__ unsigned ld_cg(const char *p)
{
    unsigned v;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void discard_l2(const char *p)
{
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(p) : "memory");
}

/* 0, read through a volatile load: the compiler cannot fold `x & zero()` away. */
__device__ unsigned long long g_zero;
__device__ __forceinline__ unsigned long long zero(void) { return *(volatile unsigned long long *)&g_zero; }

/* The latency of one load. Its address depends on the first clock read, so ptxas cannot
 * issue it earlier (it did: a load hoisted above the clock read next to an untimed load
 * of the same line timed 2-8 cycles); the shared store needs the loaded value, so the
 * second clock read issues after the load completed. z: zero(). */
__device__ __forceinline__ unsigned timed_load(const char *p, volatile unsigned *sink, unsigned long long z)
{
    unsigned long long t0 = clk();
    unsigned v = ld_cg(p + (t0 & z));
    *sink = v;
    unsigned long long t1 = clk();
    unsigned long long d = t1 - t0;
    return d > 65535 ? 65535 : (unsigned)d;
}

__device__ __forceinline__ bool in_mask(const unsigned long long *mask, unsigned s)
{
    return (mask[s >> 6] >> (s & 63)) & 1;
}

/* Reads n bytes (a multiple of 16) with every thread: evicts the L2. */
__global__ void k_flush(const uint4 *buf, size_t n16, unsigned *out)
{
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = __ldcg(buf + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) *out = acc; /* keeps the loads */
}

/* calib / side: launched one block per SM (HOG_SMEM); the block on SM `target` measures.
 * mode 0: first touch, then second touch of each line (lat0, lat1)
 * mode 1: first touch only (lines another SM warmed)                        (lat0)
 * mode 2: touch, discard, touch again (lat1 = after discard), then plain touch (lat0)
 * mode 3: touch only, no timing (warm the lines for mode 1) */
__global__ void k_lines(const char *base, const unsigned long long *offs, unsigned n, unsigned target, int mode,
                        unsigned short *lat0, unsigned short *lat1, unsigned *claimed)
{
    __shared__ volatile unsigned sink[2];
    if (threadIdx.x != 0 || smid() != target) return;
    if (atomicExch(claimed, 1u)) return;
    unsigned long long z = zero();
    for (unsigned i = 0; i < n; i++) {
        const char *p = base + offs[i];
        if (mode == 0) {
            lat0[i] = (unsigned short)timed_load(p, sink, z);
            lat1[i] = (unsigned short)timed_load(p, sink, z);
        } else if (mode == 1) {
            lat0[i] = (unsigned short)timed_load(p, sink, z);
        } else if (mode == 2) {
            sink[0] = ld_cg(p);
            lat0[i] = (unsigned short)timed_load(p, sink, z);
            discard_l2(p);
            lat1[i] = (unsigned short)timed_load(p, sink, z);
        } else {
            sink[0] = ld_cg(p);
        }
    }
}

struct contend_args {
    const char *base;
    unsigned long long victim_mask[4], hog_mask[4];
    /* victims: targets split in contiguous parts, one per victim SM */
    const unsigned long long *targets;
    unsigned ntargets, nvictims;
    unsigned victim_mode; /* 0: L2-hit latency (warm, then min of 2 timed); 1: first touch only */
    unsigned short *lat;
    /* hogs: warp w of hog block b works on hog_offs[(b * 32 + w) % nhog]; hog_bytes per
     * item (128: one line hammered; 1024: a chunk streamed) */
    const unsigned long long *hog_offs;
    unsigned nhog, hog_bytes, hog_blocks, hog_warps;
    unsigned spin_ns; /* victims wait this long after the hogs started */
    unsigned *started, *done, *err;
    unsigned long long *hog_bytes_read, *t_first, *t_last;
};

/* slice / iso: one block per SM (HOG_SMEM): victim SMs time the targets, hog SMs
 * load until every victim is done. */
__global__ void __launch_bounds__(HOG_THREADS, 1) k_contend(contend_args a)
{
    __shared__ volatile unsigned sink[HOG_THREADS / 32];
    unsigned s = smid();
    unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (in_mask(a.victim_mask, s)) {
        if (threadIdx.x != 0) return;
        unsigned long long z = zero();
        /* which victim am I: rank of s in the victim mask */
        unsigned rank = 0;
        for (unsigned k = 0; k < s; k++) rank += in_mask(a.victim_mask, k);
        unsigned long long t0 = clk();
        while (atomicAdd(a.started, 0) < a.hog_blocks)
            if (clk() - t0 > 2000000000ull) {
                atomicOr(a.err, 1u); /* the hogs never all started */
                break;
            }
        unsigned long long g0 = gtimer();
        while (gtimer() - g0 < a.spin_ns) {
        }
        unsigned per = (a.ntargets + a.nvictims - 1) / a.nvictims;
        unsigned lo = rank * per, hi = lo + per < a.ntargets ? lo + per : a.ntargets;
        for (unsigned i = lo; i < hi; i++) {
            const char *p = a.base + a.targets[i];
            unsigned v;
            if (a.victim_mode == 0) {
                sink[0] = ld_cg(p);
                unsigned x = timed_load(p, sink, z), y = timed_load(p, sink, z);
                v = x < y ? x : y;
            } else {
                v = timed_load(p, sink, z);
            }
            a.lat[i] = (unsigned short)v;
        }
        __threadfence();
        atomicAdd(a.done, 1u);
        return;
    }
    if (!in_mask(a.hog_mask, s)) return;
    /* hog: rank among hog blocks = blockIdx order is not SM order; any spread is fine */
    if (threadIdx.x == 0) {
        unsigned long long g = gtimer();
        atomicMin(a.t_first, g);
        atomicAdd(a.started, 1u);
    }
    if (warp >= a.hog_warps) return;
    unsigned item = (blockIdx.x * (HOG_THREADS / 32) + warp) % a.nhog;
    unsigned acc = 0;
    unsigned long long bytes = 0, t0 = clk();
    for (unsigned it = 0;; it++) {
        const char *p = a.base + a.hog_offs[item];
        if (a.hog_bytes <= LINE) {
            unsigned v0 = ld_cg(p + lane * 4), v1 = ld_cg(p + lane * 4), v2 = ld_cg(p + lane * 4),
                     v3 = ld_cg(p + lane * 4);
            acc ^= v0 ^ v1 ^ v2 ^ v3;
            bytes += 4 * LINE;
        } else {
            /* stream the item: 16 B per lane, 512 B per warp per step */
            for (unsigned o = lane * 16; o < a.hog_bytes; o += 512) {
                uint4 v = __ldcg((const uint4 *)(p + o));
                acc ^= v.x ^ v.y ^ v.z ^ v.w;
            }
            bytes += a.hog_bytes;
            item += a.hog_blocks * (HOG_THREADS / 32);
            if (item >= a.nhog) item %= a.nhog;
        }
        if ((it & 15) == 15) {
            if (*(volatile unsigned *)a.done >= a.nvictims) break;
            if (clk() - t0 > STOP_CYCLES) {
                atomicOr(a.err, 2u);
                break;
            }
        }
    }
    sink[warp] = acc;
    if (lane == 0) {
        atomicAdd(a.hog_bytes_read, bytes);
        atomicMax(a.t_last, gtimer());
    }
}

/* ---------------------------------------------------------------- host side */

static struct {
    const char *outdir;
    unsigned granules, grain, victims, lineres, max_runs, side_stride, hog_warps, ls_granules, home_stride, far_sm;
    unsigned victim_sm[32];
    char only[128];
} opt = {NULL, 128, 1024, 4, 6, 400, 256, 32, 24, 256, 2, {0, 8, 10, 12}, "calib,side,home,iso-side,slice,iso"};

static int nsm;
static size_t gran;
static CUdeviceptr va;
static unsigned ngran_total; /* granules + the remap */
static CUdeviceptr flushbuf;
static size_t flush_bytes;
static unsigned *d_scratch;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static FILE *outf(const char *name, const char *mode)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", opt.outdir, name);
    FILE *f = fopen(path, mode);
    if (!f) {
        fprintf(stderr, "vram_probe: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    return f;
}

/* Is `what` one of the comma-separated names in --only? */
static bool wanted(const char *what)
{
    size_t n = strlen(what);
    for (const char *p = opt.only; *p;) {
        const char *e = strchr(p, ',');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == n && !strncmp(p, what, n)) return true;
        if (!e) break;
        p = e + 1;
    }
    return false;
}

static void flush_l2(void)
{
    k_flush<<<nsm * 4, 512>>>((const uint4 *)flushbuf, flush_bytes / 16, d_scratch);
    RK(cudaGetLastError());
    RK(cudaDeviceSynchronize());
}

template <typename T> static T *dalloc(size_t n)
{
    T *p;
    RK(cudaMalloc(&p, n * sizeof(T)));
    return p;
}

/* One k_lines run on SM target; returns false when no block landed there. */
static bool lines_on(unsigned target, int mode, const unsigned long long *d_offs, unsigned n, unsigned short *d0,
                     unsigned short *d1)
{
    RK(cudaMemset(d_scratch + 1, 0, sizeof(unsigned)));
    k_lines<<<nsm, 32, HOG_SMEM>>>((const char *)va, d_offs, n, target, mode, d0, d1, d_scratch + 1);
    RK(cudaGetLastError());
    RK(cudaDeviceSynchronize());
    unsigned claimed;
    RK(cudaMemcpy(&claimed, d_scratch + 1, sizeof claimed, cudaMemcpyDeviceToHost));
    return claimed != 0;
}

static void put_header(FILE *f, const char *magic, unsigned a, unsigned b, unsigned c)
{
    char m[8] = {0};
    memcpy(m, magic, strlen(magic) < 8 ? strlen(magic) : 8);
    fwrite(m, 1, 8, f);
    unsigned h[4] = {a, b, c, 0};
    fwrite(h, sizeof h, 1, f);
}

static void exp_calib(void)
{
    const unsigned n = 4096; /* lines of granule 0 at 512 B */
    unsigned long long *h_offs = (unsigned long long *)malloc(n * sizeof *h_offs);
    for (unsigned i = 0; i < n; i++) h_offs[i] = (unsigned long long)i * 512;
    unsigned long long *d_offs = dalloc<unsigned long long>(n);
    RK(cudaMemcpy(d_offs, h_offs, n * sizeof *h_offs, cudaMemcpyHostToDevice));
    unsigned short *d0 = dalloc<unsigned short>(n), *d1 = dalloc<unsigned short>(n);
    unsigned short *h[4];
    for (int k = 0; k < 4; k++) h[k] = (unsigned short *)malloc(n * 2);
    flush_l2();
    if (!lines_on(0, 0, d_offs, n, d0, d1)) fprintf(stderr, "calib: no block on SM 0\n");
    RK(cudaMemcpy(h[0], d0, n * 2, cudaMemcpyDeviceToHost)); /* cold */
    RK(cudaMemcpy(h[1], d1, n * 2, cudaMemcpyDeviceToHost)); /* hit */
    lines_on(0, 2, d_offs, n, d0, d1);
    RK(cudaMemcpy(h[2], d0, n * 2, cudaMemcpyDeviceToHost)); /* hit again */
    RK(cudaMemcpy(h[3], d1, n * 2, cudaMemcpyDeviceToHost)); /* after discard */
    FILE *f = outf("calib.bin", "wb");
    put_header(f, "calib", n, 4, 512);
    for (int k = 0; k < 4; k++) fwrite(h[k], 2, n, f);
    fclose(f);
    const char *name[4] = {"first touch", "second touch", "touch again", "after discard"};
    for (int k = 0; k < 4; k++) {
        unsigned long long s = 0;
        unsigned lo = 65535, hi = 0;
        for (unsigned i = 0; i < n; i++) {
            s += h[k][i];
            lo = h[k][i] < lo ? h[k][i] : lo;
            hi = h[k][i] > hi ? h[k][i] : hi;
        }
        printf("calib: %-14s mean %6.1f min %5u max %5u cycles (SM 0, %u lines)\n", name[k], (double)s / n, lo, hi,
               n);
    }
    for (int k = 0; k < 4; k++) free(h[k]);
    RK(cudaFree(d0));
    RK(cudaFree(d1));
    RK(cudaFree(d_offs));
    free(h_offs);
}

static unsigned char g_side[MAX_SMS]; /* 0: SM 0's L2 side */
static unsigned g_nside0, g_have_side;
static unsigned char *g_home; /* per granule (and the remap), per home_stride line: 1 = far side */

static void exp_side(void)
{
    const unsigned n = (unsigned)(gran / opt.side_stride);
    unsigned long long *h_offs = (unsigned long long *)malloc(n * sizeof *h_offs);
    for (unsigned i = 0; i < n; i++) h_offs[i] = (unsigned long long)i * opt.side_stride;
    unsigned long long *d_offs = dalloc<unsigned long long>(n);
    RK(cudaMemcpy(d_offs, h_offs, n * sizeof *h_offs, cudaMemcpyHostToDevice));
    unsigned short *d0 = dalloc<unsigned short>(n), *d1 = dalloc<unsigned short>(n);
    unsigned short *cold = (unsigned short *)calloc((size_t)nsm * n, 2), *hit = (unsigned short *)calloc((size_t)nsm * n, 2),
                   *xhit = (unsigned short *)calloc((size_t)nsm * n, 2);
    unsigned missing = 0;
    double t0 = now_s();
    for (int s = 0; s < nsm; s++) {
        flush_l2();
        if (!lines_on(s, 0, d_offs, n, d0, d1)) {
            missing++;
            continue;
        }
        RK(cudaMemcpy(cold + (size_t)s * n, d0, n * 2, cudaMemcpyDeviceToHost));
        RK(cudaMemcpy(hit + (size_t)s * n, d1, n * 2, cudaMemcpyDeviceToHost));
        flush_l2();
        lines_on(0, 3, d_offs, n, d0, d1); /* SM 0 warms */
        lines_on(s, 1, d_offs, n, d0, d1);
        RK(cudaMemcpy(xhit + (size_t)s * n, d0, n * 2, cudaMemcpyDeviceToHost));
    }
    /* SM 0's side: SMs that touch SM 0's lines about as fast as SM 0 (the others pay
     * ~180 cycles more for the half of the lines SM 0's side homes) */
    double xm[MAX_SMS], lo = 1e9, hi = 0;
    for (int s = 0; s < nsm; s++) {
        xm[s] = 0;
        for (unsigned i = 0; i < n; i++) xm[s] += xhit[(size_t)s * n + i];
        xm[s] /= n;
        lo = xm[s] < lo ? xm[s] : lo;
        hi = xm[s] > hi ? xm[s] : hi;
    }
    g_nside0 = 0;
    for (int s = 0; s < nsm; s++) {
        g_side[s] = xm[s] > (lo + hi) / 2 ? 1 : 0; /* call 2: 300-323 vs 386-409 cycles */
        g_nside0 += !g_side[s];
    }
    g_have_side = 1;
    /* sides.txt: "side0 0-1,6-9,..." and "side1 ...", the SM sets tidal partitions take */
    FILE *sf = outf("sides.txt", "w");
    for (int side = 0; side < 2; side++) {
        fprintf(sf, "side%d ", side);
        const char *sep = "";
        for (int s = 0; s < nsm; s++) {
            if (g_side[s] != side || (s > 0 && g_side[s - 1] == side)) continue;
            int e = s;
            while (e + 1 < nsm && g_side[e + 1] == side) e++;
            if (e > s)
                fprintf(sf, "%s%d-%d", sep, s, e);
            else
                fprintf(sf, "%s%d", sep, s);
            sep = ",";
        }
        fputc('\n', sf);
    }
    fclose(sf);
    printf("side: %u SMs on SM 0's side (touch of SM 0's lines: %.0f to %.0f cycles)\n", g_nside0, lo, hi);
    FILE *f = outf("side.bin", "wb");
    put_header(f, "side", (unsigned)nsm, n, opt.side_stride);
    fwrite(cold, 2, (size_t)nsm * n, f);
    fwrite(hit, 2, (size_t)nsm * n, f);
    fwrite(xhit, 2, (size_t)nsm * n, f);
    fclose(f);
    printf("side: %d SMs x %u lines in %.1f s (%u SMs got no block)\n", nsm, n, now_s() - t0, missing);
    for (int s = 0; s < nsm; s += 11) {
        double c = 0, h = 0, x = 0;
        for (unsigned i = 0; i < n; i++) c += cold[(size_t)s * n + i], h += hit[(size_t)s * n + i], x += xhit[(size_t)s * n + i];
        printf("side: SM %3d  first touch %6.1f  second %6.1f  warmed by SM 0 %6.1f cycles (means)\n", s, c / n, h / n,
               x / n);
    }
    free(cold);
    free(hit);
    free(xhit);
    RK(cudaFree(d0));
    RK(cudaFree(d1));
    RK(cudaFree(d_offs));
    free(h_offs);
}

/* home: which L2 side homes each line. SM 0 warms a granule's lines, a far SM then
 * touches them: a line homed on the far SM's side is an L2 hit there (~290 cycles), one
 * homed on SM 0's side comes across (~480). Every granule and the remap. */
static void exp_home(void)
{
    const unsigned n = (unsigned)(gran / opt.home_stride);
    unsigned long long *h_offs = (unsigned long long *)malloc(n * sizeof *h_offs);
    unsigned long long *d_offs = dalloc<unsigned long long>(n);
    unsigned short *d0 = dalloc<unsigned short>(n), *d1 = dalloc<unsigned short>(n);
    unsigned short *lat = (unsigned short *)malloc((size_t)ngran_total * n * 2);
    double t0 = now_s();
    unsigned missing = 0;
    for (unsigned g = 0; g < ngran_total; g++) {
        for (unsigned i = 0; i < n; i++) h_offs[i] = (unsigned long long)g * gran + (unsigned long long)i * opt.home_stride;
        RK(cudaMemcpy(d_offs, h_offs, n * sizeof *h_offs, cudaMemcpyHostToDevice));
        if (!lines_on(0, 3, d_offs, n, d0, d1)) missing++;
        if (!lines_on(opt.far_sm, 1, d_offs, n, d0, d1)) missing++;
        RK(cudaMemcpy(lat + (size_t)g * n, d0, n * 2, cudaMemcpyDeviceToHost));
    }
    FILE *f = outf("home.bin", "wb");
    put_header(f, "home", ngran_total, n, opt.home_stride);
    fwrite(lat, 2, (size_t)ngran_total * n, f);
    fclose(f);
    unsigned fast = 0;
    g_home = (unsigned char *)malloc((size_t)ngran_total * n);
    for (size_t i = 0; i < (size_t)ngran_total * n; i++) {
        g_home[i] = lat[i] < 380; /* 282 vs 464 cycles in call 1 */
        fast += g_home[i];
    }
    printf("home: %u granules x %u lines (%u B apart), warmed by SM 0, touched by SM %u: %.1f%% under 380 cycles, "
           "%.1f s, %u launches without their SM\n",
           ngran_total, n, opt.home_stride, opt.far_sm, 100.0 * fast / ((double)ngran_total * n), now_s() - t0,
           missing);
    free(lat);
    free(h_offs);
    RK(cudaFree(d0));
    RK(cudaFree(d1));
    RK(cudaFree(d_offs));
}

/* The contention rig shared by slice and iso. */
struct rig {
    unsigned *d_ctl; /* started, done, err */
    unsigned long long *d_stats; /* bytes, t_first, t_last */
    unsigned long long *d_targets, *d_hog;
    unsigned short *d_lat;
    size_t cap_targets, cap_hog;
};

static void rig_init(struct rig *r, size_t cap_targets, size_t cap_hog)
{
    r->d_ctl = dalloc<unsigned>(4);
    r->d_stats = dalloc<unsigned long long>(4);
    r->d_targets = dalloc<unsigned long long>(cap_targets);
    r->d_lat = dalloc<unsigned short>(cap_targets);
    r->d_hog = dalloc<unsigned long long>(cap_hog);
    r->cap_targets = cap_targets;
    r->cap_hog = cap_hog;
    RK(cudaFuncSetAttribute(k_contend, cudaFuncAttributeMaxDynamicSharedMemorySize, HOG_SMEM));
}

static void set_bit(unsigned long long *m, unsigned s) { m[s >> 6] |= 1ull << (s & 63); }

struct run_result {
    unsigned err;
    double hog_gbs, hog_s;
};

/* Victims in vmask time targets (mode 0 hit / 1 first touch); hogs in hmask load
 * hog items of hog_bytes. nhog 0: no hog (victims alone). */
static struct run_result rig_run(struct rig *r, const unsigned long long *vmask, unsigned nvictims,
                                 const unsigned long long *targets, unsigned ntargets, unsigned victim_mode,
                                 const unsigned long long *hog, unsigned nhog, unsigned hog_bytes, unsigned spin_ns,
                                 unsigned short *lat_out, const unsigned long long *hmask = NULL)
{
    struct run_result res = {0, 0, 0};
    if (ntargets > r->cap_targets || nhog > r->cap_hog) {
        fprintf(stderr, "rig_run: %u targets / %u hog items over capacity\n", ntargets, nhog);
        exit(1);
    }
    RK(cudaMemcpy(r->d_targets, targets, ntargets * sizeof *targets, cudaMemcpyHostToDevice));
    if (nhog) RK(cudaMemcpy(r->d_hog, hog, nhog * sizeof *hog, cudaMemcpyHostToDevice));
    RK(cudaMemset(r->d_ctl, 0, 4 * sizeof(unsigned)));
    unsigned long long st[4] = {0, ~0ull, 0, 0};
    RK(cudaMemcpy(r->d_stats, st, sizeof st, cudaMemcpyHostToDevice));
    contend_args a;
    memset(&a, 0, sizeof a);
    a.base = (const char *)va;
    unsigned nh = 0;
    for (int s = 0; s < nsm; s++) {
        if ((vmask[s >> 6] >> (s & 63)) & 1) continue;
        if (hmask && !((hmask[s >> 6] >> (s & 63)) & 1)) continue;
        if (nhog) {
            set_bit(a.hog_mask, s);
            nh++;
        }
    }
    memcpy(a.victim_mask, vmask, sizeof a.victim_mask);
    a.targets = r->d_targets;
    a.ntargets = ntargets;
    a.nvictims = nvictims;
    a.victim_mode = victim_mode;
    a.lat = r->d_lat;
    a.hog_offs = r->d_hog;
    a.nhog = nhog ? nhog : 1;
    a.hog_bytes = hog_bytes;
    a.hog_blocks = nh;
    a.hog_warps = opt.hog_warps;
    a.spin_ns = spin_ns;
    a.started = r->d_ctl;
    a.done = r->d_ctl + 1;
    a.err = r->d_ctl + 2;
    a.hog_bytes_read = r->d_stats;
    a.t_first = r->d_stats + 1;
    a.t_last = r->d_stats + 2;
    k_contend<<<nsm, HOG_THREADS, HOG_SMEM>>>(a);
    RK(cudaGetLastError());
    RK(cudaDeviceSynchronize());
    unsigned ctl[4];
    RK(cudaMemcpy(ctl, r->d_ctl, sizeof ctl, cudaMemcpyDeviceToHost));
    RK(cudaMemcpy(st, r->d_stats, sizeof st, cudaMemcpyDeviceToHost));
    RK(cudaMemcpy(lat_out, r->d_lat, ntargets * 2, cudaMemcpyDeviceToHost));
    res.err = ctl[2] | (ctl[1] != nvictims ? 4u : 0u);
    if (nhog && st[2] > st[1]) {
        res.hog_s = (st[2] - st[1]) * 1e-9;
        res.hog_gbs = st[0] / (double)(st[2] - st[1]);
    }
    return res;
}

static int cmp_u16(const void *a, const void *b)
{
    return (int)*(const unsigned short *)a - (int)*(const unsigned short *)b;
}

static unsigned median_u16(const unsigned short *v, unsigned n)
{
    if (!n) return 0;
    unsigned short *c = (unsigned short *)malloc(n * 2);
    memcpy(c, v, n * 2);
    qsort(c, n, 2, cmp_u16);
    unsigned m = c[n / 2];
    free(c);
    return m;
}

/* slice: classes of chunks (opt.grain bytes, tested at their first line) over all
 * granules and the remap. */
static short *g_class; /* per chunk; -1 unclassified */
static unsigned g_nclass;

static void exp_slice(struct rig *r)
{
    const unsigned per_gran = (unsigned)(gran / opt.grain);
    const unsigned nchunk = per_gran * ngran_total;
    g_class = (short *)malloc(nchunk * sizeof *g_class);
    for (unsigned i = 0; i < nchunk; i++) g_class[i] = -1;
    unsigned long long vmask[4] = {0, 0, 0, 0};
    /* victims on one L2 side (SM 0's, measured by side: 0-1, 8-13, ... on the H200), one per TPC */
    for (unsigned v = 0; v < opt.victims; v++) set_bit(vmask, opt.victim_sm[v]);
    unsigned long long *targets = (unsigned long long *)malloc((size_t)(nchunk + 16384 + 512) * sizeof *targets);
    unsigned *tidx = (unsigned *)malloc((size_t)(nchunk + 16384 + 512) * sizeof *tidx);
    unsigned short *lat = (unsigned short *)malloc((size_t)(nchunk + 16384 + 512) * 2);
    const unsigned lines0 = (unsigned)(gran / LINE);
    unsigned short *lineres = (unsigned short *)malloc((size_t)opt.lineres * lines0 * 2);
    unsigned long long *lineres_hog = (unsigned long long *)calloc(opt.lineres ? opt.lineres : 1, 8);
    const unsigned nsample_runs = 64, nsample = 4096;
    unsigned short *sample = (unsigned short *)calloc((size_t)nsample_runs * nsample, 2);
    FILE *csv = outf("slice_runs.csv", "w");
    fprintf(csv, "run,hog_chunk,hog_off,ntargets,median,threshold,nsame,nambig,checks,check_false,err,victim_s\n");
    /* victims alone: the baseline */
    unsigned nt = 0;
    for (unsigned i = 0; i < nchunk && nt < 16384; i += 7) targets[nt++] = (unsigned long long)i * opt.grain;
    rig_run(r, vmask, opt.victims, targets, nt, 0, NULL, 0, LINE, 0, lat);
    unsigned base_med = median_u16(lat, nt);
    printf("slice: victims alone, L2-hit median %u cycles over %u chunks\n", base_med, nt);
    FILE *fb = outf("slice_base.bin", "wb");
    put_header(fb, "sbase", nt, 7, opt.grain);
    fwrite(lat, 2, nt, fb);
    fclose(fb);
    double t_start = now_s();
    unsigned next = 0, classified = 0;
    srand(12345);
    for (unsigned run = 0; run < opt.max_runs && classified < nchunk; run++) {
        while (next < nchunk && g_class[next] >= 0) next++;
        if (next >= nchunk) break;
        unsigned long long hog_off = (unsigned long long)next * opt.grain;
        /* targets: every unclassified chunk; the first lineres runs add every line of
         * granule 0; checks: up to 512 chunks of earlier classes (must not light up) */
        nt = 0;
        for (unsigned i = 0; i < nchunk; i++)
            if (g_class[i] < 0) tidx[nt] = i, targets[nt++] = (unsigned long long)i * opt.grain;
        unsigned nunc = nt;
        unsigned nlr = run < opt.lineres ? lines0 : 0;
        for (unsigned l = 0; l < nlr; l++) tidx[nt] = ~0u, targets[nt++] = (unsigned long long)l * LINE;
        unsigned nchk = 0;
        if (classified)
            for (unsigned k = 0; k < 512; k++) {
                unsigned i = (unsigned)(((unsigned long long)rand() * 2654435761ull) % nchunk);
                if (g_class[i] < 0) continue;
                tidx[nt] = i, targets[nt++] = (unsigned long long)i * opt.grain;
                nchk++;
            }
        double tv = now_s();
        struct run_result rr = rig_run(r, vmask, opt.victims, targets, nt, 0, &hog_off, 1, LINE, 20000, lat);
        double vs = now_s() - tv;
        unsigned med = median_u16(lat, nunc);
        /* same slice: at least twice the run's median (most targets are of other
         * slices); ambiguous: 1.4x to 2x, left unclassified for a later run */
        unsigned thr = med * 2, amb = med * 14 / 10;
        unsigned nsame = 0, nambig = 0, chkfalse = 0;
        for (unsigned k = 0; k < nunc; k++) {
            if (lat[k] >= thr) {
                g_class[tidx[k]] = (short)g_nclass;
                nsame++;
            } else if (lat[k] >= amb) {
                nambig++;
            }
        }
        if (g_class[next] < 0) g_class[next] = (short)g_nclass, nsame++; /* the hog's own chunk */
        for (unsigned k = nunc + nlr; k < nt; k++) chkfalse += lat[k] >= thr;
        if (run < nsample_runs) memcpy(sample + (size_t)run * nsample, lat, (nunc < nsample ? nunc : nsample) * 2);
        if (nlr) {
            memcpy(lineres + (size_t)run * lines0, lat + nunc, (size_t)lines0 * 2);
            lineres_hog[run] = hog_off;
        }
        classified += nsame;
        fprintf(csv, "%u,%u,%llu,%u,%u,%u,%u,%u,%u,%u,%u,%.4f\n", run, next, hog_off, nunc, med, thr, nsame, nambig, nchk,
                chkfalse, rr.err, vs);
        if (run < 8 || run % 25 == 0)
            printf("slice: run %3u hog chunk %6u: %6u targets, median %4u, same %5u, ambiguous %4u, checks %u/%u "
                   "false, err %u, %.3f s\n",
                   run, next, nunc, med, nsame, nambig, chkfalse, nchk, rr.err, vs);
        g_nclass++;
        fflush(stdout);
    }
    fclose(csv);
    printf("slice: %u classes, %u of %u chunks classified in %.1f s\n", g_nclass, classified, nchunk,
           now_s() - t_start);
    FILE *f = outf("slice.bin", "wb");
    put_header(f, "slice", nchunk, per_gran, opt.grain);
    fwrite(g_class, sizeof *g_class, nchunk, f);
    fclose(f);
    f = outf("slice_sample.bin", "wb");
    put_header(f, "ssample", nsample_runs, nsample, 0);
    fwrite(sample, 2, (size_t)nsample_runs * nsample, f);
    fclose(f);
    free(sample);
    unsigned nlr = opt.lineres < g_nclass ? opt.lineres : g_nclass;
    f = outf("lineres.bin", "wb");
    put_header(f, "lineres", nlr, lines0, LINE);
    fwrite(lineres_hog, 8, nlr, f);
    fwrite(lineres, 2, (size_t)nlr * lines0, f);
    fclose(f);
    free(targets);
    free(tidx);
    free(lat);
    free(lineres);
    free(lineres_hog);
}

/* The classified chunks of granules [g0, g1) in class set `set`: 0 class % 3 == 0 (A, a
 * third), 1 the rest (B), 2 all. */
static unsigned long long *chunks_of(int set, unsigned g0, unsigned g1, unsigned *n)
{
    const unsigned per_gran = (unsigned)(gran / opt.grain);
    unsigned long long *v = (unsigned long long *)malloc((size_t)per_gran * (g1 - g0) * 8);
    unsigned k = 0;
    for (unsigned i = g0 * per_gran; i < g1 * per_gran; i++) {
        if (g_class[i] < 0) continue;
        bool a = g_class[i] % 3 == 0;
        if (set == 2 || (set == 0) == a) v[k++] = (unsigned long long)i * opt.grain;
    }
    *n = k;
    return v;
}

static void shuffle(unsigned long long *v, unsigned n)
{
    for (unsigned i = n; i > 1; i--) {
        unsigned j = (unsigned)(((unsigned long long)rand() * 40503ull + rand()) % i);
        unsigned long long t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

static void exp_iso(struct rig *r)
{
    if (!g_class) {
        fprintf(stderr, "iso: needs slice's classes (run slice first)\n");
        return;
    }
    /* LS reads chunks of granules [0, ls_granules), BE of the rest: an LS line is never
     * one that BE just brought into the L2 */
    unsigned na, nlsall, nb, nall;
    unsigned long long *A = chunks_of(0, 0, opt.ls_granules, &na), *LSALL = chunks_of(2, 0, opt.ls_granules, &nlsall),
                       *B = chunks_of(1, opt.ls_granules, opt.granules, &nb),
                       *ALL = chunks_of(2, opt.ls_granules, opt.granules, &nall);
    srand(777);
    shuffle(A, na);
    shuffle(LSALL, nlsall);
    shuffle(B, nb);
    shuffle(ALL, nall);
    printf("iso: LS chunks: set A %u, all %u; BE chunks: set B %u (%.1f MiB), all %u (%.1f MiB)\n", na, nlsall, nb,
           nb * (double)opt.grain / 1048576, nall, nall * (double)opt.grain / 1048576);
    if (!na || !nlsall || !nb || !nall) {
        fprintf(stderr, "iso: an empty set\n");
        return;
    }
    const unsigned nls = 2048;
    unsigned long long vmask[4] = {1, 0, 0, 0}; /* LS on SM 0 */
    unsigned short *lat = (unsigned short *)malloc(nls * 2);
    FILE *csv = outf("iso.csv", "w");
    fprintf(csv, "ls_set,be_set,rep,ls_median,ls_p90,ls_p99,ls_mean,be_gbs,be_s,err\n");
    struct {
        const char *ls, *be;
        unsigned long long *lsv, *bev;
        unsigned nbe;
    } cfg[] = {
        {"A", "none", A, NULL, 0},      {"all", "none", LSALL, NULL, 0}, {"A", "B", A, B, nb},
        {"all", "all", LSALL, ALL, nall}, {"A", "all", A, ALL, nall},    {"all", "B", LSALL, B, nb},
    };
    for (int rep = 0; rep < 3; rep++)
        for (unsigned c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
            /* LS lines: nls chunks of its set, a fresh window each rep, first line */
            unsigned nlsset = cfg[c].lsv == A ? na : nlsall;
            unsigned long long *t = (unsigned long long *)malloc(nls * 8);
            for (unsigned i = 0; i < nls; i++) t[i] = cfg[c].lsv[(rep * nls + i) % nlsset];
            flush_l2();
            struct run_result rr = rig_run(r, vmask, 1, t, nls, 1, cfg[c].bev, cfg[c].nbe, opt.grain, 200000, lat, NULL);
            unsigned short *s = (unsigned short *)malloc(nls * 2);
            memcpy(s, lat, nls * 2);
            qsort(s, nls, 2, cmp_u16);
            double mean = 0;
            for (unsigned i = 0; i < nls; i++) mean += s[i];
            mean /= nls;
            fprintf(csv, "%s,%s,%d,%u,%u,%u,%.1f,%.1f,%.4f,%u\n", cfg[c].ls, cfg[c].be, rep, s[nls / 2], s[nls * 9 / 10],
                    s[nls * 99 / 100], mean, rr.hog_gbs, rr.hog_s, rr.err);
            printf("iso: LS on %-3s BE on %-4s rep %d: LS DRAM latency median %5u p90 %5u p99 %5u cycles; BE %7.1f GB/s "
                   "err %u\n",
                   cfg[c].ls, cfg[c].be, rep, s[nls / 2], s[nls * 9 / 10], s[nls * 99 / 100], rr.hog_gbs, rr.err);
            free(s);
            free(t);
            fflush(stdout);
        }
    fclose(csv);
    free(A);
    free(LSALL);
    free(B);
    free(ALL);
    free(lat);
}

/* iso-side: LS on SM 0 (one thread: DRAM latency of lines touched once) reads lines its
 * own L2 side homes (H0) or any line; BE warps stream chunks the other side homes (H1) or
 * any chunk, on the other side's SMs or on every SM but SM 0. Needs side and home. */
static void exp_iso_side(struct rig *r)
{
    if (!g_have_side || !g_home) {
        fprintf(stderr, "iso-side: needs side and home\n");
        return;
    }
    const unsigned lines = (unsigned)(gran / opt.home_stride), per = opt.grain / opt.home_stride;
    const unsigned per_gran = (unsigned)(gran / opt.grain);
    /* a chunk is on one side when all its home lines are */
    unsigned long long *sets[4];
    unsigned nset[4] = {0, 0, 0, 0}; /* LS H0, LS all, BE H1, BE all */
    for (int k = 0; k < 4; k++) sets[k] = (unsigned long long *)malloc((size_t)per_gran * opt.granules * 8);
    for (unsigned g = 0; g < opt.granules; g++)
        for (unsigned c = 0; c < per_gran; c++) {
            const unsigned char *h = g_home + (size_t)g * lines + (size_t)c * (per ? per : 1);
            unsigned far = 0;
            for (unsigned k = 0; k < (per ? per : 1); k++) far += h[k];
            int side = far == 0 ? 0 : far == (per ? per : 1) ? 1 : -1;
            unsigned long long off = (unsigned long long)g * gran + (unsigned long long)c * opt.grain;
            bool ls = g < opt.ls_granules;
            if (ls && side == 0) sets[0][nset[0]++] = off;
            if (ls) sets[1][nset[1]++] = off;
            if (!ls && side == 1) sets[2][nset[2]++] = off;
            if (!ls) sets[3][nset[3]++] = off;
        }
    srand(4242);
    for (int k = 0; k < 4; k++) shuffle(sets[k], nset[k]);
    printf("iso-side: LS chunks homed on its side %u of %u; BE chunks homed on the other side %u of %u (%.0f MiB)\n",
           nset[0], nset[1], nset[2], nset[3], nset[2] * (double)opt.grain / 1048576);
    unsigned long long vmask[4] = {1, 0, 0, 0}, side1[4] = {0, 0, 0, 0}, allbut0[4] = {0, 0, 0, 0};
    for (int s = 1; s < nsm; s++) {
        set_bit(allbut0, (unsigned)s);
        if (g_side[s]) set_bit(side1, (unsigned)s);
    }
    const unsigned nls = 2048;
    unsigned short *lat = (unsigned short *)malloc(nls * 2);
    FILE *csv = outf("iso_side.csv", "w");
    fprintf(csv, "ls_set,be_set,be_sms,rep,ls_median,ls_p90,ls_p99,ls_mean,be_gbs,be_s,err\n");
    struct {
        const char *ls, *be, *sms;
        int lsk, bek;
        const unsigned long long *hm;
    } cfg[] = {
        {"H0", "none", "-", 0, -1, NULL},        {"all", "none", "-", 1, -1, NULL},
        {"H0", "H1", "side1", 0, 2, side1},      {"all", "all", "side1", 1, 3, side1},
        {"H0", "all", "side1", 0, 3, side1},     {"all", "H1", "side1", 1, 2, side1},
        {"H0", "H1", "all-but-0", 0, 2, allbut0}, {"all", "all", "all-but-0", 1, 3, allbut0},
    };
    for (int rep = 0; rep < 3; rep++)
        for (unsigned c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
            unsigned long long *t = (unsigned long long *)malloc(nls * 8);
            const unsigned long long *src = sets[cfg[c].lsk];
            for (unsigned i = 0; i < nls; i++) t[i] = src[((unsigned)rep * nls + i) % nset[cfg[c].lsk]];
            flush_l2();
            const unsigned long long *be = cfg[c].bek >= 0 ? sets[cfg[c].bek] : NULL;
            unsigned nbe = cfg[c].bek >= 0 ? nset[cfg[c].bek] : 0;
            struct run_result rr = rig_run(r, vmask, 1, t, nls, 1, be, nbe, opt.grain, 200000, lat, cfg[c].hm);
            unsigned short *so = (unsigned short *)malloc(nls * 2);
            memcpy(so, lat, nls * 2);
            qsort(so, nls, 2, cmp_u16);
            double mean = 0;
            for (unsigned i = 0; i < nls; i++) mean += so[i];
            mean /= nls;
            fprintf(csv, "%s,%s,%s,%d,%u,%u,%u,%.1f,%.1f,%.4f,%u\n", cfg[c].ls, cfg[c].be, cfg[c].sms, rep, so[nls / 2],
                    so[nls * 9 / 10], so[nls * 99 / 100], mean, rr.hog_gbs, rr.hog_s, rr.err);
            printf("iso-side: LS %-3s BE %-4s on %-9s rep %d: LS median %5u p90 %5u p99 %5u cycles; BE %7.1f GB/s "
                   "err %u\n",
                   cfg[c].ls, cfg[c].be, cfg[c].sms, rep, so[nls / 2], so[nls * 9 / 10], so[nls * 99 / 100], rr.hog_gbs,
                   rr.err);
            free(so);
            free(t);
            fflush(stdout);
        }
    fclose(csv);
    for (int k = 0; k < 4; k++) free(sets[k]);
    free(lat);
}

static void usage(void)
{
    fputs("usage: vram_probe OUTDIR [--granules N] [--grain BYTES] [--victim-sms S,S,...] [--lineres N]\n"
          "                         [--max-runs N] [--side-stride BYTES] [--hog-warps N] [--ls-granules N]\n"
          "                         [--home-stride BYTES] [--far-sm S] [--only calib,side,home,iso-side,slice,iso]\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') usage();
    opt.outdir = argv[1];
    for (int i = 2; i < argc; i++) {
        if (i + 1 >= argc) usage();
        const char *k = argv[i], *v = argv[++i];
        if (!strcmp(k, "--granules"))
            opt.granules = (unsigned)atoi(v);
        else if (!strcmp(k, "--grain"))
            opt.grain = (unsigned)atoi(v);
        else if (!strcmp(k, "--victim-sms")) {
            opt.victims = 0;
            for (const char *q = v; *q && opt.victims < 32; q = strchr(q, ',') ? strchr(q, ',') + 1 : "")
                opt.victim_sm[opt.victims++] = (unsigned)atoi(q);
        }
        else if (!strcmp(k, "--lineres"))
            opt.lineres = (unsigned)atoi(v);
        else if (!strcmp(k, "--max-runs"))
            opt.max_runs = (unsigned)atoi(v);
        else if (!strcmp(k, "--side-stride"))
            opt.side_stride = (unsigned)atoi(v);
        else if (!strcmp(k, "--home-stride"))
            opt.home_stride = (unsigned)atoi(v);
        else if (!strcmp(k, "--far-sm"))
            opt.far_sm = (unsigned)atoi(v);
        else if (!strcmp(k, "--hog-warps"))
            opt.hog_warps = (unsigned)atoi(v);
        else if (!strcmp(k, "--ls-granules"))
            opt.ls_granules = (unsigned)atoi(v);
        else if (!strcmp(k, "--only"))
            snprintf(opt.only, sizeof opt.only, "%s", v);
        else
            usage();
    }
    if (opt.granules < 2 || opt.ls_granules < 1 || opt.ls_granules >= opt.granules || opt.hog_warps < 1 ||
        opt.hog_warps > HOG_THREADS / 32 || opt.grain < LINE || opt.grain % LINE || opt.victims < 1 || opt.victims > 32) usage();
    RK(cudaFree(0));
    CUdevice dev;
    CK(cuCtxGetDevice(&dev));
    CK(cuDeviceGetAttribute(&nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    int l2 = 0, clk_khz = 0, bus = 0;
    CK(cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev));
    CK(cuDeviceGetAttribute(&clk_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev));
    CK(cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev));
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    printf("device: %d SMs, L2 %d bytes, SM clock %d kHz, bus %d bits, VMM granule %zu bytes\n", nsm, l2, clk_khz,
           bus, gran);
    ngran_total = opt.granules + 1;
    CK(cuMemAddressReserve(&va, gran * ngran_total, gran, 0, 0));
    CUmemGenericAllocationHandle *h = (CUmemGenericAllocationHandle *)malloc(opt.granules * sizeof *h);
    for (unsigned g = 0; g < opt.granules; g++) {
        CK(cuMemCreate(&h[g], gran, &prop, 0));
        CK(cuMemMap(va + g * gran, gran, 0, h[g], 0));
    }
    CK(cuMemMap(va + opt.granules * gran, gran, 0, h[0], 0)); /* the remap */
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CK(cuMemSetAccess(va, gran * ngran_total, &acc, 1));
    CK(cuMemsetD32(va, 0x5a5a5a5a, gran * opt.granules / 4));
    flush_bytes = (size_t)l2 * 4;
    CK(cuMemAlloc(&flushbuf, flush_bytes));
    CK(cuMemsetD32(flushbuf, 1, flush_bytes / 4));
    d_scratch = dalloc<unsigned>(4);
    RK(cudaFuncSetAttribute(k_lines, cudaFuncAttributeMaxDynamicSharedMemorySize, HOG_SMEM));
    RK(cudaDeviceSynchronize());
    printf("memory: %u granules + the remap of granule 0 at +%zu MiB\n", opt.granules, opt.granules * gran >> 20);
    FILE *f = outf("meta.txt", "w");
    fprintf(f, "sms %d\nl2 %d\nclock_khz %d\nbus_bits %d\ngranule %zu\ngranules %u\ngrain %u\nvictims %u\n", nsm, l2,
            clk_khz, bus, gran, opt.granules, opt.grain, opt.victims);
    fclose(f);
    double t0 = now_s();
    if (wanted("calib")) exp_calib();
    if (wanted("side")) exp_side();
    if (wanted("home")) exp_home();
    struct rig r;
    size_t nchunk = (gran / opt.grain) * ngran_total;
    rig_init(&r, nchunk + 16384 + 512, nchunk);
    if (wanted("slice")) exp_slice(&r);
    if (wanted("iso-side")) exp_iso_side(&r);
    if (wanted("iso")) exp_iso(&r);
    printf("done in %.1f s\n", now_s() - t0);
    return 0;
}
