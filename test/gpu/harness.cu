// tidal GPU correctness harness (CUDA driver API; host code only, no device code).
//
//   tidal_gpu_harness ORIG_DIR TIDAL_DIR [options]
//
// For every kernel spec (specs.inc) it loads ORIG_DIR/<file>.ptx (the kernel as the
// compiler wrote it) and TIDAL_DIR/<file>.ptx (the same PTX after `tidal-opt -p tidal`)
// with cuModuleLoadDataEx, and checks that the rewritten kernel reproduces the original
// byte for byte in every launch mode of runtime/tidal_abi.h:
//
//   ref     the original kernel, original grid, run twice: the reference bytes (the two
//           runs must agree, and every output buffer must have been written somewhere)
//   module  the rewritten module defines __tidal_ctl and the marker, K and K__tidal_reshaped
//   a       rewritten K, original grid, __tidal_ctl = 0
//   b/MASK  rewritten K, original grid, __tidal_ctl -> a partition with MASK
//   c/MASK  K__tidal_reshaped, grid = occupancy x allowed SMs (>= 1), launch.partition set
//           explicitly (__tidal_ctl = 0 meanwhile, so the clone must not need it)
//   c-ctl   K__tidal_reshaped with launch.partition = 0: the partition comes from __tidal_ctl
//   flip-b / flip-c   as b / c with all SMs, while a host thread rewrites the mask words
//           (and bumps generation) at random intervals, empty masks included
//
// MASK is one of all, sm0, half (SMs 0..nsm/2-1), odd, rand (seeded), empty.
// Each run resets the outputs to a poison pattern and exec_count / sm_blocks to zero, and
// then requires: outputs == reference; exec_count[i] == 1 for every logical block; the
// slot table back to all-zero; sum(sm_blocks) == logical blocks; for the empty mask,
// violations > 0; for other masks (b, c), no logical block on an SM outside the mask
// unless violations rose.
//
// The specs run in one child process; the parent prints every check line and ends with
// "N passed, N failed". A hang (launch longer than --launch-timeout), a CUDA error or a crash
// costs one step: a fresh child resumes at the next step of that spec.
// Exit status: 0 if nothing failed, 1 otherwise, 2 on usage errors.

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tidal_abi.h"

static_assert(sizeof(tidal_partition) == TIDAL_PARTITION_HEADER, "partition layout");
static_assert(sizeof(tidal_launch) == 40, "launch layout");
static_assert(offsetof(tidal_partition, violations) == TIDAL_PARTITION_OFF_VIOLATIONS, "abi");
static_assert(offsetof(tidal_partition, exec_count) == TIDAL_PARTITION_OFF_EXEC_COUNT, "abi");
static_assert(offsetof(tidal_partition, sm_blocks) == TIDAL_PARTITION_OFF_SM_BLOCKS, "abi");
static_assert(offsetof(tidal_partition, slot_mask) == TIDAL_PARTITION_OFF_SLOT_MASK, "abi");
static_assert(offsetof(tidal_slot, next) == TIDAL_SLOT_OFF_NEXT, "abi");

// ------------------------------------------------------------------------------------
// Specs
// ------------------------------------------------------------------------------------

enum FillKind { FILL_U32, FILL_I32, FILL_F32, FILL_F16, FILL_I8, FILL_U8 };
struct Fill {
    FillKind kind = FILL_U32;
    double lo = 0, hi = 0;   // FILL_I32 / FILL_I8 / FILL_U8: [lo, hi]; FILL_F32: [lo, hi)
};
enum BufKind { BUF_IN, BUF_OUT, BUF_INOUT };
struct BufSpec {
    size_t bytes;
    BufKind kind;
    Fill fill;
};
enum ArgKind { ARG_BUF, ARG_U32, ARG_F32, ARG_U64 };
struct Arg {
    ArgKind kind;
    int buf;         // ARG_BUF
    uint64_t bits;   // the value (ARG_U32/ARG_F32: low 32 bits)
};

struct Spec {
    std::string name;    // unique; what the check lines print
    std::string file;    // PTX file stem, relative to ORIG_DIR / TIDAL_DIR
    std::string entry;   // .entry name
    unsigned grid[3] = {1, 1, 1};
    unsigned block[3] = {1, 1, 1};
    unsigned smem = 0;   // dynamic shared memory bytes
    std::vector<BufSpec> bufs;
    std::vector<Arg> args;
    bool flip = true;          // run flip-b / flip-c
    int flip_min = 0;          // flips that must land while the kernel is in flight
    bool flip_only = false;    // skip a / b / c (long configs meant for flips only)
    bool expect_refused = false;
    std::string what;

    int in(size_t bytes, Fill f) { bufs.push_back({bytes, BUF_IN, f}); return (int)bufs.size() - 1; }
    int out(size_t bytes) { bufs.push_back({bytes, BUF_OUT, Fill{}}); return (int)bufs.size() - 1; }
    int inout(size_t bytes, Fill f) { bufs.push_back({bytes, BUF_INOUT, f}); return (int)bufs.size() - 1; }
    uint64_t logical() const { return (uint64_t)grid[0] * grid[1] * grid[2]; }
    unsigned threads() const { return block[0] * block[1] * block[2]; }
};

static Arg P(int buf) { return Arg{ARG_BUF, buf, 0}; }
static Arg NULLPTR() { return Arg{ARG_U64, -1, 0}; }
static Arg I32(int32_t v) { return Arg{ARG_U32, -1, (uint32_t)v}; }
[[maybe_unused]] static Arg U32(uint32_t v) { return Arg{ARG_U32, -1, v}; }
static Arg F32(float v) { uint32_t b; memcpy(&b, &v, 4); return Arg{ARG_U32, -1, b}; }
static Fill U32F() { return Fill{FILL_U32, 0, 0}; }
static Fill I32F(int lo, int hi) { return Fill{FILL_I32, (double)lo, (double)hi}; }
static Fill F32F(double lo, double hi) { return Fill{FILL_F32, lo, hi}; }
static Fill F16F() { return Fill{FILL_F16, 0, 0}; }
static Fill I8F(int lo, int hi) { return Fill{FILL_I8, (double)lo, (double)hi}; }
static Fill U8F() { return Fill{FILL_U8, 0, 255}; }
static unsigned cdiv(unsigned long long a, unsigned long long b) { return (unsigned)((a + b - 1) / b); }

static Spec mk(const std::string &name, const std::string &file, const std::string &entry,
               std::initializer_list<unsigned> grid, std::initializer_list<unsigned> block, unsigned smem = 0)
{
    Spec s;
    s.name = name;
    s.file = file;
    s.entry = entry;
    int k = 0;
    for (unsigned g : grid) s.grid[k++] = g;
    k = 0;
    for (unsigned b : block) s.block[k++] = b;
    s.smem = smem;
    return s;
}

#include "specs.inc"

// ------------------------------------------------------------------------------------
// Small helpers
// ------------------------------------------------------------------------------------

static const uint32_t POISON = 0xA5C3E17Bu;   // not a plausible output of any spec
static double g_launch_timeout = 10.0;        // seconds one launch may take
static bool g_nofork = false;                 // --no-fork: keep going after CUDA errors
static uint64_t g_seed = 20261130;

static double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static uint64_t splitmix(uint64_t &s)
{
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t fnv1a(const std::string &s)
{
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
}

static std::string fmt(const char *f, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

static std::string cu_err(CUresult r)
{
    const char *name = nullptr, *str = nullptr;
    cuGetErrorName(r, &name);
    cuGetErrorString(r, &str);
    return fmt("%s (%d: %s)", name ? name : "?", (int)r, str ? str : "?");
}

static bool read_file(const std::string &path, std::string *out)
{
    FILE *f = fopen(path.c_str(), "rb");
    if (!f) return false;
    std::string s;
    char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
    fclose(f);
    *out = s;
    return true;
}

static void fill_host(std::vector<uint8_t> &h, const Fill &f, uint64_t seed)
{
    uint64_t s = seed;
    size_t n = h.size();
    switch (f.kind) {
    case FILL_U32:
        for (size_t i = 0; i + 4 <= n; i += 4) { uint32_t v = (uint32_t)splitmix(s); memcpy(&h[i], &v, 4); }
        break;
    case FILL_I32: {
        uint64_t span = (uint64_t)((int64_t)f.hi - (int64_t)f.lo + 1);
        for (size_t i = 0; i + 4 <= n; i += 4) {
            int32_t v = (int32_t)((int64_t)f.lo + (int64_t)(splitmix(s) % span));
            memcpy(&h[i], &v, 4);
        }
        break;
    }
    case FILL_F32:
        for (size_t i = 0; i + 4 <= n; i += 4) {
            double u = (double)(splitmix(s) >> 40) / (double)(1ull << 24);   // 24 bits: exact in float
            float v = (float)(f.lo + (f.hi - f.lo) * u);
            memcpy(&h[i], &v, 4);
        }
        break;
    case FILL_F16:   // finite halves with magnitude in [2^-4, 1), random sign
        for (size_t i = 0; i + 2 <= n; i += 2) {
            uint64_t r = splitmix(s);
            uint16_t v = (uint16_t)(((r & 1) << 15) | ((11 + (r >> 1) % 4) << 10) | ((r >> 8) & 0x3FF));
            memcpy(&h[i], &v, 2);
        }
        break;
    case FILL_I8:
    case FILL_U8: {
        int64_t span = (int64_t)f.hi - (int64_t)f.lo + 1;
        for (size_t i = 0; i < n; i++) h[i] = (uint8_t)(int8_t)((int64_t)f.lo + (int64_t)(splitmix(s) % span));
        break;
    }
    }
    if (f.kind == FILL_U32 || f.kind == FILL_I32 || f.kind == FILL_F32)   // a ragged tail: bytes
        for (size_t i = n & ~(size_t)3; i < n; i++) h[i] = (uint8_t)splitmix(s);
}

// ------------------------------------------------------------------------------------
// SM masks
// ------------------------------------------------------------------------------------

struct Mask {
    std::string name;
    uint64_t w[4] = {0, 0, 0, 0};
    void set(int s) { w[s / 64] |= 1ull << (s % 64); }
    bool has(int s) const { return s >= 0 && s < 256 && ((w[s / 64] >> (s % 64)) & 1); }
    int count() const { int c = 0; for (uint64_t x : w) c += __builtin_popcountll(x); return c; }
    std::string hex() const { return fmt("%016" PRIx64 "%016" PRIx64 "%016" PRIx64 "%016" PRIx64, w[3], w[2], w[1], w[0]); }
    std::string label() const { return fmt("%s(%d)", name.c_str(), count()); }
};

static Mask mask_all(int nsm) { Mask m; m.name = "all"; for (int s = 0; s < nsm; s++) m.set(s); return m; }
static Mask mask_rand(int nsm, uint64_t seed, const char *name)
{
    Mask m;
    m.name = name;
    uint64_t st = seed;
    while (m.count() == 0)
        for (int s = 0; s < nsm; s++) if (splitmix(st) & 1) m.set(s);
    return m;
}

static std::vector<Mask> standard_masks(int nsm, uint64_t seed)
{
    std::vector<Mask> v;
    v.push_back(mask_all(nsm));
    Mask m0; m0.name = "sm0"; m0.set(0); v.push_back(m0);
    Mask h; h.name = "half"; for (int s = 0; s < (nsm + 1) / 2; s++) h.set(s); v.push_back(h);
    Mask o; o.name = "odd"; for (int s = 1; s < nsm; s += 2) o.set(s); v.push_back(o);
    v.push_back(mask_rand(nsm, seed, "rand"));
    Mask e; e.name = "empty"; v.push_back(e);
    return v;
}

// ------------------------------------------------------------------------------------
// Child: runs one spec
// ------------------------------------------------------------------------------------

static int g_pass = 0, g_fail = 0;   // per child (and in --no-fork mode, per process)
static bool g_quiet = false;          // resuming after an abort: ref/module already reported

static void report(bool ok, const Spec &sp, const std::string &mode, const std::string &detail)
{
    if (g_quiet && ok) return;
    printf("%s %-34s %-14s %s\n", ok ? "PASS" : "FAIL", sp.name.c_str(), mode.c_str(), detail.c_str());
    fflush(stdout);
    (ok ? g_pass : g_fail)++;
}

struct Env {
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    int nsm = 0;
    int smem_optin = 0;
    CUstream st = nullptr;    // launches
    CUstream fst = nullptr;   // mask flips (non-blocking)
    uint8_t *pinned = nullptr;   // source of the flip copies (page-locked, so they are async)
};

struct DevBuf {
    CUdeviceptr d = 0;
    size_t bytes = 0, alloc = 0;
    std::vector<uint8_t> init;   // inputs
    std::vector<uint8_t> ref;    // outputs: reference bytes
};

// The partition: a 128-byte header followed by nslots tidal_slot entries, 1024-byte
// aligned (cuMemAlloc promises less, so the allocation is padded and aligned by hand).
struct Partition {
    CUdeviceptr raw = 0, part = 0, exec = 0, smb = 0;
    uint32_t nslots = 16;
    uint32_t generation = 0;
    CUdeviceptr slots() const { return part + TIDAL_PARTITION_HEADER; }
    size_t slot_bytes() const { return (size_t)nslots * sizeof(tidal_slot); }
};

struct Loaded {
    CUmodule mod = nullptr;
    CUfunction fn = nullptr, clone = nullptr;
    CUdeviceptr ctl = 0;
    size_t ctl_bytes = 0;
    bool has_marker = false;
};

#define CKR(call, what)                                                                   \
    do {                                                                                  \
        CUresult _r = (call);                                                             \
        if (_r != CUDA_SUCCESS) { *err = std::string(what) + ": " + cu_err(_r); return false; } \
    } while (0)

static bool load_module(const std::string &path, CUmodule *mod, std::string *err)
{
    std::string text;
    if (!read_file(path, &text)) { *err = "cannot read " + path; return false; }
    static char log[16384];
    log[0] = 0;
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(uintptr_t)sizeof log};
    CUresult r = cuModuleLoadDataEx(mod, text.c_str(), 2, opts, vals);
    if (r != CUDA_SUCCESS) {
        std::string l = log;
        for (char &c : l) if (c == '\n') c = ' ';
        if (l.size() > 600) l = l.substr(0, 600) + "...";
        *err = "cuModuleLoadDataEx(" + path + "): " + cu_err(r) + (l.empty() ? "" : " JIT log: " + l);
        return false;
    }
    return true;
}

static bool set_smem_attr(CUfunction f, unsigned smem, std::string *err)
{
    if (smem > 48 * 1024)
        CKR(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    return true;
}

// Waits for the launch stream; a launch that outlives g_launch_timeout is a hang: the
// child reports it and exits (the context cannot be recovered).
static CUresult wait_stream(Env &e, const Spec &sp, const std::string &mode)
{
    double t0 = now_s();
    for (;;) {
        CUresult r = cuStreamQuery(e.st);
        if (r != CUDA_ERROR_NOT_READY) return r;
        if (now_s() - t0 > g_launch_timeout) {
            report(false, sp, mode, fmt("launch did not finish within %.0f s (hang?)", g_launch_timeout));
            fflush(stdout);
            _exit(3);
        }
        usleep(50);
    }
}

struct Runner {
    Env &e;
    const Spec &sp;
    std::vector<DevBuf> bufs;
    std::vector<uint64_t> argv_store;
    Partition pt;
    std::vector<Mask> masks;

    Runner(Env &env, const Spec &s) : e(env), sp(s) {}
    ~Runner()
    {
        for (auto &b : bufs) if (b.d) cuMemFree(b.d);
        if (pt.raw) cuMemFree(pt.raw);
        if (pt.exec) cuMemFree(pt.exec);
        if (pt.smb) cuMemFree(pt.smb);
    }

    bool alloc(std::string *err)
    {
        uint64_t base = g_seed ^ fnv1a(sp.name);
        for (size_t i = 0; i < sp.bufs.size(); i++) {
            DevBuf b;
            b.bytes = sp.bufs[i].bytes;
            b.alloc = (b.bytes + 255) & ~(size_t)255;
            CUresult r = cuMemAlloc(&b.d, b.alloc);
            if (r != CUDA_SUCCESS) { *err = fmt("cuMemAlloc(%zu): ", b.alloc) + cu_err(r); return false; }
            bufs.push_back(std::move(b));
            DevBuf &d = bufs.back();
            if (sp.bufs[i].kind != BUF_OUT) {
                d.init.resize(d.bytes);
                fill_host(d.init, sp.bufs[i].fill, base + 7919 * (i + 1));
                CKR(cuMemcpyHtoD(d.d, d.init.data(), d.bytes), "cuMemcpyHtoD(input)");
            }
        }
        argv_store.resize(sp.args.size());
        for (size_t i = 0; i < sp.args.size(); i++) {
            const Arg &a = sp.args[i];
            argv_store[i] = a.kind == ARG_BUF ? (uint64_t)bufs[a.buf].d : a.bits;
        }
        return true;
    }

    bool prepare_outputs(std::string *err)
    {
        for (size_t i = 0; i < bufs.size(); i++) {
            if (sp.bufs[i].kind == BUF_IN) continue;
            CKR(cuMemsetD32Async(bufs[i].d, POISON, bufs[i].alloc / 4, e.st), "cuMemsetD32(poison)");
            if (sp.bufs[i].kind == BUF_INOUT)
                CKR(cuMemcpyHtoDAsync(bufs[i].d, bufs[i].init.data(), bufs[i].bytes, e.st), "cuMemcpyHtoD(inout)");
        }
        CKR(cuStreamSynchronize(e.st), "cuStreamSynchronize(prepare)");
        return true;
    }

    bool launch(CUfunction f, const unsigned grid[3], const tidal_launch *tl, const std::string &mode, double *ms,
                std::string *err, std::function<void()> *during = nullptr)
    {
        std::vector<void *> params;
        for (auto &v : argv_store) params.push_back(&v);
        tidal_launch tlc;
        if (tl) { tlc = *tl; params.push_back(&tlc); }
        double t0 = now_s();
        CKR(cuLaunchKernel(f, grid[0], grid[1], grid[2], sp.block[0], sp.block[1], sp.block[2], sp.smem, e.st,
                           params.data(), nullptr),
            "cuLaunchKernel");
        if (during) (*during)();
        CUresult r = wait_stream(e, sp, mode);
        *ms = (now_s() - t0) * 1e3;
        if (r != CUDA_SUCCESS) { *err = "kernel failed: " + cu_err(r); return false; }
        return true;
    }

    // Output bytes equal to the reference? (ref == true: record them instead)
    bool outputs(bool record, std::string *why, std::string *err)
    {
        std::vector<uint8_t> h;
        for (size_t i = 0; i < bufs.size(); i++) {
            if (sp.bufs[i].kind == BUF_IN) continue;
            h.resize(bufs[i].bytes);
            CKR(cuMemcpyDtoH(h.data(), bufs[i].d, bufs[i].bytes), "cuMemcpyDtoH(output)");
            if (record) { bufs[i].ref = h; continue; }
            if (memcmp(h.data(), bufs[i].ref.data(), h.size()) == 0) continue;
            size_t first = SIZE_MAX, diff = 0;
            for (size_t k = 0; k < h.size(); k += 4) {
                size_t m = std::min<size_t>(4, h.size() - k);
                if (memcmp(&h[k], &bufs[i].ref[k], m)) { diff++; if (first == SIZE_MAX) first = k; }
            }
            uint32_t got = 0, want = 0;
            memcpy(&got, &h[first], std::min<size_t>(4, h.size() - first));
            memcpy(&want, &bufs[i].ref[first], std::min<size_t>(4, h.size() - first));
            *why += fmt("buffer %zu differs: %zu of %zu words, first at byte %zu (got 0x%08x%s, want 0x%08x); ", i,
                        diff, (h.size() + 3) / 4, first, got, got == POISON ? " = poison, never written" : "", want);
        }
        return true;
    }

    bool alloc_partition(std::string *err)
    {
        const size_t bytes = TIDAL_PARTITION_BYTES(pt.nslots);
        CKR(cuMemAlloc(&pt.raw, bytes + 1024), "cuMemAlloc(partition)");
        pt.part = (pt.raw + 1023) & ~(CUdeviceptr)1023;
        CKR(cuMemsetD8(pt.raw, 0, bytes + 1024), "cuMemset(partition + slots)");   // once, as the ABI asks
        CKR(cuMemAlloc(&pt.exec, std::max<uint64_t>(4, sp.logical() * 4)), "cuMemAlloc(exec_count)");
        CKR(cuMemAlloc(&pt.smb, TIDAL_MAX_SMS * 8), "cuMemAlloc(sm_blocks)");
        return true;
    }

    bool write_partition(const Mask &m, std::string *err)
    {
        tidal_partition p;
        memset(&p, 0, sizeof p);
        memcpy(p.mask, m.w, sizeof p.mask);
        p.violations = 0;
        p.exec_count = pt.exec;
        p.sm_blocks = pt.smb;
        p.slot_mask = pt.nslots - 1;
        p.generation = ++pt.generation;
        CKR(cuMemsetD32Async(pt.exec, 0, sp.logical(), e.st), "cuMemset(exec_count)");
        CKR(cuMemsetD32Async(pt.smb, 0, TIDAL_MAX_SMS * 2, e.st), "cuMemset(sm_blocks)");
        CKR(cuStreamSynchronize(e.st), "cuStreamSynchronize");
        CKR(cuMemcpyHtoD(pt.part, &p, sizeof p), "cuMemcpyHtoD(partition)");
        return true;
    }

    bool set_ctl(const Loaded &L, uint64_t v, std::string *err)
    {
        CKR(cuMemcpyHtoD(L.ctl, &v, 8), "cuMemcpyHtoD(__tidal_ctl)");
        return true;
    }

    // After a partition run: exec_count, sm_blocks, violations, slots.
    struct Stats {
        uint64_t zero = 0, multi = 0, first_bad = UINT64_MAX;
        uint32_t first_bad_val = 0;
        uint64_t smb_sum = 0, smb_outside = 0;
        int sms_used = 0;
        uint64_t violations = 0;
        bool slots_clean = true;
        std::string slot_dump;
    };

    bool stats(const Mask *m, Stats *s, std::string *err)
    {
        uint64_t n = sp.logical();
        std::vector<uint32_t> ex(n);
        CKR(cuMemcpyDtoH(ex.data(), pt.exec, n * 4), "cuMemcpyDtoH(exec_count)");
        for (uint64_t i = 0; i < n; i++) {
            if (ex[i] == 1) continue;
            if (ex[i] == 0) s->zero++; else s->multi++;
            if (s->first_bad == UINT64_MAX) { s->first_bad = i; s->first_bad_val = ex[i]; }
        }
        uint64_t smb[TIDAL_MAX_SMS];
        CKR(cuMemcpyDtoH(smb, pt.smb, sizeof smb), "cuMemcpyDtoH(sm_blocks)");
        for (int k = 0; k < TIDAL_MAX_SMS; k++) {
            s->smb_sum += smb[k];
            if (smb[k]) s->sms_used++;
            if (m && smb[k] && !m->has(k)) s->smb_outside += smb[k];
        }
        tidal_partition p;
        CKR(cuMemcpyDtoH(&p, pt.part, sizeof p), "cuMemcpyDtoH(partition)");
        s->violations = p.violations;
        std::vector<tidal_slot> sl(pt.nslots);
        CKR(cuMemcpyDtoH(sl.data(), pt.slots(), pt.slot_bytes()), "cuMemcpyDtoH(slots)");
        for (uint32_t k = 0; k < pt.nslots; k++) {
            const tidal_slot &t = sl[k];
            const uint8_t *b = (const uint8_t *)&t;
            size_t nz = 0;
            for (size_t q = 0; q < sizeof t; q++) nz += b[q] != 0;
            if (nz) {
                if (s->slots_clean) {
                    size_t first = 0;
                    while (!b[first]) first++;
                    s->slot_dump = fmt("slot %u has %zu non-zero bytes, first at offset %zu {tag %" PRIu64
                                       ", presence 0x%" PRIx64 ", next %u, shards_done %u}",
                                       k, nz, first, t.tag, t.presence, t.next, t.shards_done);
                }
                s->slots_clean = false;
            }
        }
        if (!s->slots_clean)   // keep later runs independent of this one's leftovers
            CKR(cuMemsetD8(pt.slots(), 0, pt.slot_bytes()), "cuMemset(slots)");
        return true;
    }
};

static std::string join_masks(const Mask &m) { return m.label(); }

// Live mask flips: a host thread rewrites the partition's mask words (and bumps the
// generation) with cuMemcpyHtoDAsync from pinned memory on a separate non-blocking stream,
// at random intervals, while the launch is in flight.
struct Flipper {
    Env &e;
    CUdeviceptr part;
    uint32_t *generation;
    std::vector<Mask> choices;
    uint64_t seed;
    std::atomic<bool> stop{false};
    int landed = 0, total = 0;
    std::string err, trace;
    std::thread th;

    Flipper(Env &env, CUdeviceptr p, uint32_t *gen, std::vector<Mask> c, uint64_t s)
        : e(env), part(p), generation(gen), choices(std::move(c)), seed(s) {}

    void start() { th = std::thread([this] { body(); }); }
    void finish() { stop = true; if (th.joinable()) th.join(); }

    void body()
    {
        cuCtxSetCurrent(e.ctx);
        uint8_t *pinned = e.pinned;
        uint64_t st = seed;
        int us = 20;   // first flip early: short kernels still see one
        const int max_flips = 40;
        while (!stop && total <= max_flips) {
            double until = now_s() + us * 1e-6;
            while (!stop && now_s() < until) std::this_thread::yield();
            if (stop) break;
            const Mask &m = choices[splitmix(st) % choices.size()];
            Mask r = m;
            if (m.name == "rand") r = mask_rand(e.nsm, splitmix(st), "rand");
            if (total == max_flips) r = choices[0];   // the last flip gives all SMs back
            memcpy(pinned, r.w, 32);
            uint32_t g = ++*generation;
            memcpy(pinned + 32, &g, 4);
            CUresult c1 = cuMemcpyHtoDAsync(part + TIDAL_PARTITION_OFF_MASK, pinned, 32, e.fst);
            CUresult c2 = cuMemcpyHtoDAsync(part + offsetof(tidal_partition, generation), pinned + 32, 4, e.fst);
            CUresult c3 = cuStreamSynchronize(e.fst);
            if (c1 || c2 || c3) { err = "flip copy failed: " + cu_err(c1 ? c1 : c2 ? c2 : c3); break; }
            total++;
            bool busy = cuStreamQuery(e.st) == CUDA_ERROR_NOT_READY;
            if (busy) landed++;
            if (trace.size() < 200) trace += (trace.empty() ? "" : ",") + r.name;
            if (!busy) break;
            us = 20 + (int)(splitmix(st) % 400);
        }
    }
};

// resume: the first rewritten-mode step to run (after a hang or a CUDA error ended an
// earlier child at step resume - 1); the reference and module checks are redone quietly.
static void run_spec(Env &e, const Spec &sp, const std::string &orig_dir, const std::string &tidal_dir, int resume)
{
    g_quiet = resume > 0;
    std::string err;
    Runner R(e, sp);
    const uint64_t logical = sp.logical();
    R.masks = standard_masks(e.nsm, g_seed ^ fnv1a(sp.name) ^ 0x5eed);

    // ---- reference ------------------------------------------------------------------
    CUmodule omod = nullptr;
    Loaded L;   // the rewritten module
    struct ModGuard {
        CUmodule *a, *b;
        ~ModGuard() { if (*a) cuModuleUnload(*a); if (*b) cuModuleUnload(*b); }
    } mg{&omod, &L.mod};
    CUfunction ofn = nullptr;
    double ms = 0, ms2 = 0;
    std::string why;
    bool ok = load_module(orig_dir + "/" + sp.file + ".ptx", &omod, &err) &&
              [&] { CUresult r = cuModuleGetFunction(&ofn, omod, sp.entry.c_str());
                    if (r) err = "cuModuleGetFunction(" + sp.entry + "): " + cu_err(r);
                    return r == CUDA_SUCCESS; }() &&
              set_smem_attr(ofn, sp.smem, &err) && R.alloc(&err) && R.prepare_outputs(&err) &&
              R.launch(ofn, sp.grid, nullptr, "ref", &ms, &err) && R.outputs(true, &why, &err) &&
              R.prepare_outputs(&err) && R.launch(ofn, sp.grid, nullptr, "ref", &ms2, &err) &&
              R.outputs(false, &why, &err);
    if (!ok) {
        report(false, sp, "ref", "original kernel: " + err);
        return;
    }
    if (!why.empty()) {
        report(false, sp, "ref", "original kernel is not deterministic: " + why);
        return;
    }
    std::string unwritten;
    for (size_t i = 0; i < R.bufs.size(); i++) {
        if (sp.bufs[i].kind == BUF_IN) continue;
        bool any = false;
        const auto &r = R.bufs[i].ref;
        for (size_t k = 0; k + 4 <= r.size() && !any; k += 4) { uint32_t v; memcpy(&v, &r[k], 4); any = v != POISON; }
        if (!any && r.size() >= 4) unwritten += fmt(" %zu", i);
    }
    if (!unwritten.empty()) {
        report(false, sp, "ref", "original kernel left output buffer(s)" + unwritten + " all poison");
        return;
    }
    report(true, sp, "ref",
           fmt("grid %ux%ux%u block %ux%ux%u smem %u: %" PRIu64 " logical blocks, %.2f ms", sp.grid[0], sp.grid[1],
               sp.grid[2], sp.block[0], sp.block[1], sp.block[2], sp.smem, logical, ms2));

    // ---- the rewritten module -------------------------------------------------------
    std::vector<std::string> modes;
    if (!sp.flip_only) {
        modes.push_back("a");
        for (auto &m : R.masks) modes.push_back("b/" + m.name);
        for (auto &m : R.masks) modes.push_back("c/" + m.name);
        modes.push_back("c-ctl");
    }
    if (sp.flip) { modes.push_back("flip-b"); modes.push_back("flip-c"); }

    // TIDAL_DIR/<file>.cubin when there is one (run.sh --cubin), else <file>.ptx
    std::string tpath = tidal_dir + "/" + sp.file + ".cubin", otext, ttext;
    bool have_t = read_file(tpath, &ttext);
    if (!have_t) have_t = read_file(tpath = tidal_dir + "/" + sp.file + ".ptx", &ttext);
    read_file(orig_dir + "/" + sp.file + ".ptx", &otext);
    std::string merr;
    bool loaded = have_t && load_module(tpath, &L.mod, &merr);
    if (!have_t) merr = "no rewritten PTX at " + tpath;
    bool fn_ok = false, clone_ok = false, ctl_ok = false;
    if (loaded) {
        fn_ok = cuModuleGetFunction(&L.fn, L.mod, sp.entry.c_str()) == CUDA_SUCCESS;
        clone_ok = cuModuleGetFunction(&L.clone, L.mod, (sp.entry + TIDAL_RESHAPED_SUFFIX).c_str()) == CUDA_SUCCESS;
        ctl_ok = cuModuleGetGlobal(&L.ctl, &L.ctl_bytes, L.mod, TIDAL_CTL_SYMBOL) == CUDA_SUCCESS && L.ctl_bytes == 8;
        CUdeviceptr mk_ptr;
        size_t mk_bytes;
        L.has_marker = cuModuleGetGlobal(&mk_ptr, &mk_bytes, L.mod, TIDAL_MARKER_SYMBOL) == CUDA_SUCCESS;
        if (fn_ok && !set_smem_attr(L.fn, sp.smem, &merr)) fn_ok = false;
        if (clone_ok && !set_smem_attr(L.clone, sp.smem, &merr)) clone_ok = false;
    }
    bool identical = have_t && ttext == otext;
    // run.sh keeps `tidal-opt --report` output next to the rewritten PTX: quote its line
    // about this kernel when the kernel was not rewritten.
    std::string reason, rep_text;
    if (read_file(tidal_dir + "/" + sp.file + ".report", &rep_text)) {
        size_t b = 0;
        while (b < rep_text.size() && reason.empty()) {
            size_t e2 = rep_text.find('\n', b);
            if (e2 == std::string::npos) e2 = rep_text.size();
            std::string line = rep_text.substr(b, e2 - b);
            b = e2 + 1;
            size_t q = line.find_first_not_of(" \t");
            if (q == std::string::npos || line.compare(q, 7, "refused") != 0) continue;
            size_t n = line.find_first_not_of(" \t", q + 7);
            if (n != std::string::npos && line.compare(n, sp.entry.size(), sp.entry) == 0 &&
                (n + sp.entry.size() == line.size() || strchr(" (:", line[n + sp.entry.size()])))
                reason = " [tidal-opt: " + line.substr(q) + "]";
        }
    }
    bool refused = have_t && (identical || (loaded && !ctl_ok && !clone_ok));

    if (sp.expect_refused) {
        if (refused && loaded && fn_ok) {
            report(true, sp, "module", identical ? "refused as expected (byte-identical)" : "refused as expected");
            std::string w;
            bool k = R.prepare_outputs(&err) && R.launch(L.fn, sp.grid, nullptr, "a", &ms, &err) && R.outputs(false, &w, &err);
            report(k && w.empty(), sp, "a", k ? (w.empty() ? fmt("%.2f ms", ms) : w) : err);
        } else {
            report(false, sp, "module", loaded ? "expected tidal-opt to refuse this kernel, but it was rewritten"
                                               : "rewritten module: " + merr);
        }
        return;
    }

    if (!loaded || !fn_ok || !ctl_ok || !L.has_marker || identical) {
        std::string d;
        if (!loaded) d = merr;
        else if (identical) d = "tidal-opt left the module byte-identical (refused)";
        else {
            if (!fn_ok) d += "no entry " + sp.entry + "; ";
            if (!ctl_ok) d += std::string("no 8-byte global ") + TIDAL_CTL_SYMBOL + "; ";
            if (!L.has_marker) d += std::string("no marker global ") + TIDAL_MARKER_SYMBOL + "; ";
            if (!clone_ok) d += "no " + sp.entry + TIDAL_RESHAPED_SUFFIX + "; ";
            if (!merr.empty()) d += merr;
        }
        report(false, sp, "module", d + reason);
        for (auto &m : modes) report(false, sp, m, "not run: the module is not a usable rewritten module");
        return;
    }
    report(clone_ok, sp, "module",
           clone_ok ? fmt("%s, %s%s, %s, marker: ok", TIDAL_CTL_SYMBOL, sp.entry.c_str(), TIDAL_RESHAPED_SUFFIX,
                          sp.entry.c_str())
                    : "no " + sp.entry + TIDAL_RESHAPED_SUFFIX + " (case c and flip-c cannot run)" + reason);

    g_quiet = false;
    int occ = 0;
    if (clone_ok) {
        CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, L.clone, (int)sp.threads(), sp.smem);
        if (r != CUDA_SUCCESS || occ < 1) {
            report(false, sp, "occupancy", r ? cu_err(r) : "occupancy of the clone is 0");
            clone_ok = false;
        }
    }
    if (!R.alloc_partition(&err)) {
        for (auto &m : modes) report(false, sp, m, err);
        return;
    }

    // One run: mode "a", "b", "c", "c-ctl", "flip-b", "flip-c".
    int step = -1;
    auto run = [&](const std::string &mode, const Mask *m, bool clone, bool use_ctl, bool flip) {
        std::string label = mode + (m && mode.size() == 1 ? "/" + m->name : "");
        if (++step < resume) return;
        printf("STEP %d\n", step);   // the parent resumes after this step if the child dies in it
        fflush(stdout);
        std::string err2, w, extra;
        if (clone && !clone_ok) { report(false, sp, label, "no usable clone"); return; }
        const bool part = mode != "a";
        bool k = R.prepare_outputs(&err2);
        if (k && part) k = R.write_partition(*m, &err2);
        if (k) k = R.set_ctl(L, use_ctl ? (uint64_t)R.pt.part : 0, &err2);
        unsigned wg[3] = {sp.grid[0], sp.grid[1], sp.grid[2]};
        tidal_launch tl;
        memset(&tl, 0, sizeof tl);
        if (clone) {
            int allowed = 0;
            for (int s = 0; s < e.nsm; s++) allowed += m->has(s);
            if (flip) allowed = e.nsm;
            uint64_t workers = std::max<uint64_t>(1, (uint64_t)occ * allowed);
            uint32_t chunk = (uint32_t)std::max<uint64_t>(1, logical / (workers * 8));
            wg[0] = (unsigned)workers; wg[1] = wg[2] = 1;
            tl.partition = use_ctl ? 0 : R.pt.part;
            tl.grid[0] = sp.grid[0]; tl.grid[1] = sp.grid[1]; tl.grid[2] = sp.grid[2];
            tl.chunk = chunk;
            extra = fmt(" workers %" PRIu64 " (occ %d) chunk %u", workers, occ, chunk);
        }
        Flipper *fl = nullptr;
        std::function<void()> during;
        if (flip) {
            std::vector<Mask> ch = standard_masks(e.nsm, g_seed ^ fnv1a(sp.name + mode));
            fl = new Flipper(e, R.pt.part, &R.pt.generation, ch, g_seed ^ fnv1a(sp.name + mode + "flip"));
            during = [fl] { fl->start(); };
        }
        if (k) k = R.launch(clone ? L.clone : L.fn, wg, clone ? &tl : nullptr, label, &ms, &err2, flip ? &during : nullptr);
        if (fl) {
            fl->finish();
            if (!fl->err.empty()) { k = false; err2 += (err2.empty() ? "" : "; ") + fl->err; }
        }
        if (k) k = R.outputs(false, &w, &err2);
        Runner::Stats s;
        if (k && part) k = R.stats(flip ? nullptr : m, &s, &err2);
        if (k && part) {
            if (s.zero || s.multi)
                w += fmt("exec_count: %" PRIu64 " logical blocks ran 0 times, %" PRIu64
                         " more than once (first: block %" PRIu64 " = %u); ",
                         s.zero, s.multi, s.first_bad, s.first_bad_val);
            if (s.smb_sum != logical)
                w += fmt("sum(sm_blocks) = %" PRIu64 ", want %" PRIu64 "; ", s.smb_sum, logical);
            if (!s.slots_clean) w += "slot table not reset after the launch: " + s.slot_dump + "; ";
            if (!flip && m->count() == 0 && s.violations == 0)
                w += "empty mask but violations == 0; ";
            if (!flip && m->count() > 0 && s.violations == 0 && s.smb_outside)
                w += fmt("%" PRIu64 " logical blocks ran on SMs outside the mask with violations == 0; ", s.smb_outside);
            extra += fmt(" viol %" PRIu64 " sms %d", s.violations, s.sms_used);
            if (!flip && m->count() > 0 && s.violations) extra += fmt(" (outside mask: %" PRIu64 ")", s.smb_outside);
        }
        if (fl) {
            extra += fmt(" flips %d/%d in flight [%s]", fl->landed, fl->total, fl->trace.c_str());
            if (fl->landed < sp.flip_min)
                w += fmt("only %d mask flips landed while the kernel ran (spec wants >= %d); ", fl->landed, sp.flip_min);
            delete fl;
        }
        std::string ml = !m ? "" : flip ? " start mask " + join_masks(*m) : " mask " + join_masks(*m);
        while (w.size() >= 2 && w.compare(w.size() - 2, 2, "; ") == 0) w.resize(w.size() - 2);
        if (!k) {
            // A CUDA error here usually poisons the context: report it and let the parent
            // start a fresh process at the next step.
            report(false, sp, label, err2 + ml + extra);
            fflush(stdout);
            if (!g_nofork) _exit(4);
            return;
        }
        else report(w.empty(), sp, label, (w.empty() ? fmt("%.2f ms", ms) : w) + ml + extra);
    };

    if (!sp.flip_only) {
        run("a", nullptr, false, false, false);
        for (auto &m : R.masks) run("b", &m, false, true, false);
        for (auto &m : R.masks) run("c", &m, true, false, false);
        run("c-ctl", &R.masks[0], true, true, false);
    }
    if (sp.flip) {
        run("flip-b", &R.masks[0], false, true, true);
        run("flip-c", &R.masks[0], true, false, true);
    }
}

// The child: runs specs[first], specs[first + 1], ... in one CUDA context, the first of
// them from step `resume`. Protocol lines for the parent: "SPEC i" before spec i,
// "STEP n" before each rewritten-mode run, "DONE i" after spec i, "ALLDONE" at the end.
static int child_main(const std::vector<Spec> &specs, size_t first, int resume, const std::string &orig_dir,
                      const std::string &tidal_dir)
{
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);   // lazy loading serialises against running kernels
    Env e;
    printf("SPEC %zu\n", first);
    auto fail_all = [&](const std::string &why) {
        report(false, specs[first], "setup", why);
        return 5;
    };
    CUresult r;
    if ((r = cuInit(0))) return fail_all("cuInit: " + cu_err(r));
    if ((r = cuDeviceGet(&e.dev, 0))) return fail_all("cuDeviceGet: " + cu_err(r));
    if ((r = cuDevicePrimaryCtxRetain(&e.ctx, e.dev))) return fail_all("cuDevicePrimaryCtxRetain: " + cu_err(r));
    if ((r = cuCtxSetCurrent(e.ctx))) return fail_all("cuCtxSetCurrent: " + cu_err(r));
    cuDeviceGetAttribute(&e.nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, e.dev);
    cuDeviceGetAttribute(&e.smem_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, e.dev);
    if (e.nsm > TIDAL_MAX_SMS) e.nsm = TIDAL_MAX_SMS;
    if ((r = cuStreamCreate(&e.st, CU_STREAM_NON_BLOCKING))) return fail_all("cuStreamCreate: " + cu_err(r));
    if ((r = cuStreamCreate(&e.fst, CU_STREAM_NON_BLOCKING))) return fail_all("cuStreamCreate: " + cu_err(r));
    if ((r = cuMemHostAlloc((void **)&e.pinned, 4096, 0))) return fail_all("cuMemHostAlloc: " + cu_err(r));
    if (first == 0 && resume == 0) {
        char name[256] = "?";
        cuDeviceGetName(name, sizeof name, e.dev);
        int drv = 0;
        cuDriverGetVersion(&drv);
        printf("# device: %s, %d SMs, driver API %d.%d\n", name, e.nsm, drv / 1000, drv % 1000 / 10);
    }
    for (size_t i = first; i < specs.size(); i++) {
        if (i != first) printf("SPEC %zu\n", i);
        fflush(stdout);
        run_spec(e, specs[i], orig_dir, tidal_dir, i == first ? resume : 0);
        printf("DONE %zu\n", i);
        fflush(stdout);
    }
    printf("ALLDONE\n");
    fflush(stdout);
    return 0;
}

// ------------------------------------------------------------------------------------
// Parent
// ------------------------------------------------------------------------------------

static void usage()
{
    fprintf(stderr,
            "usage: tidal_gpu_harness ORIG_DIR TIDAL_DIR [options]\n"
            "  ORIG_DIR/<file>.ptx   the PTX as compiled (reference)\n"
            "  TIDAL_DIR/<file>.ptx  the same PTX after tidal-opt -p tidal\n"
            "options:\n"
            "  --only A,B,...        run only specs whose name contains one of the substrings\n"
            "                        (=NAME: exactly that spec)\n"
            "  --list                list the specs and exit\n"
            "  --no-fork             run specs in this process (for cuda-gdb / compute-sanitizer)\n"
            "  --launch-timeout S    seconds one launch may take before it counts as a hang (10)\n"
            "  --spec-timeout S      seconds one spec may take (120)\n"
            "  --budget S            seconds for the whole suite; specs not started by then fail (170)\n"
            "  --seed N              seed for inputs and random masks (20261130)\n");
}

int main(int argc, char **argv)
{
    std::vector<std::string> pos, only;
    bool list = false, nofork = false;
    double spec_timeout = 120, budget = 170;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto need = [&](const char *o) -> std::string {
            if (i + 1 >= argc) { fprintf(stderr, "%s needs a value\n", o); usage(); exit(2); }
            return argv[++i];
        };
        if (a == "--only") {
            std::string v = need("--only");
            only.clear();   // the last --only wins
            size_t p = 0;
            while (p <= v.size()) {
                size_t q = v.find(',', p);
                if (q == std::string::npos) q = v.size();
                if (q > p) only.push_back(v.substr(p, q - p));
                p = q + 1;
            }
        } else if (a == "--list") list = true;
        else if (a == "--no-fork") nofork = g_nofork = true;
        else if (a == "--launch-timeout") g_launch_timeout = atof(need("--launch-timeout").c_str());
        else if (a == "--spec-timeout") spec_timeout = atof(need("--spec-timeout").c_str());
        else if (a == "--budget") budget = atof(need("--budget").c_str());
        else if (a == "--seed") g_seed = strtoull(need("--seed").c_str(), nullptr, 0);
        else if (a == "-h" || a == "--help") { usage(); return 0; }
        else if (!a.empty() && a[0] == '-') { fprintf(stderr, "unknown option %s\n", a.c_str()); usage(); return 2; }
        else pos.push_back(a);
    }
    std::vector<Spec> all = all_specs(), specs;
    for (auto &s : all) {
        bool take = only.empty();
        for (auto &o : only)   // "=NAME": exactly NAME; else a substring
            take |= o[0] == '=' ? s.name == o.substr(1) : s.name.find(o) != std::string::npos;
        if (take) specs.push_back(s);
    }
    if (list) {
        for (auto &s : specs)
            printf("%-34s %-44s %-22s grid %ux%ux%u block %ux%ux%u smem %-6u%s%s  %s\n", s.name.c_str(), s.file.c_str(),
                   s.entry.c_str(), s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2], s.smem,
                   s.flip_only ? " [flip only]" : "", s.expect_refused ? " [expect refused]" : "", s.what.c_str());
        printf("%zu specs\n", specs.size());
        return 0;
    }
    if (pos.size() != 2) { usage(); return 2; }
    const std::string orig_dir = pos[0], tidal_dir = pos[1];
    if (specs.empty()) { fprintf(stderr, "no spec matches --only\n"); return 2; }

    setvbuf(stdout, nullptr, _IOLBF, 0);
    int passed = 0, failed = 0;
    const double t_start = now_s();
    std::vector<int> sp_ok(specs.size(), 0), sp_bad(specs.size(), 0);
    auto spec_line = [&](size_t i, const char *mode, const std::string &msg) {
        printf("FAIL %-34s %-14s %s\n", specs[i].name.c_str(), mode, msg.c_str());
        failed++;
        sp_bad[i]++;
    };
    auto spec_end = [&](size_t i, double t) {
        printf("---- %s: %d ok, %d bad, %.1f s\n", specs[i].name.c_str(), sp_ok[i], sp_bad[i], t);
    };

    if (nofork) {
        for (size_t i = 0; i < specs.size(); i++) {
            g_pass = g_fail = 0;
            double t0 = now_s();
            std::vector<Spec> one{specs[i]};
            child_main(one, 0, 0, orig_dir, tidal_dir);
            passed += g_pass;
            failed += g_fail;
            sp_ok[i] = g_pass;
            sp_bad[i] = g_fail;
            spec_end(i, now_s() - t0);
        }
    } else {
        // All specs run in one child process, in order. If the child dies inside a spec
        // (a hang, a CUDA error that poisons its context, a crash, the per-spec timeout), a
        // fresh child resumes at the next step of that spec (at most 4 times per spec) or
        // at the next spec.
        size_t next = 0;
        int resume = 0, restarts = 0;
        bool budget_spent = false;
        while (next < specs.size() && !budget_spent) {
            int fds[2];
            if (pipe(fds)) { perror("pipe"); return 1; }
            fflush(stdout);
            pid_t pid = fork();
            if (pid < 0) { perror("fork"); return 1; }
            if (pid == 0) {
                close(fds[0]);
                dup2(fds[1], 1);
                dup2(fds[1], 2);
                close(fds[1]);
                setvbuf(stdout, nullptr, _IOLBF, 0);
                _exit(child_main(specs, next, resume, orig_dir, tidal_dir));
            }
            close(fds[1]);
            std::string pending;
            bool all_done = false, timed_out = false;
            size_t cur = next;
            double spec_t0 = now_s();
            int last_step = -1, fails_since_step = 0;
            for (;;) {
                double now = now_s();
                if (now - spec_t0 > spec_timeout) { timed_out = true; break; }
                if (now - t_start > budget) { budget_spent = true; break; }
                struct pollfd pfd = {fds[0], POLLIN, 0};
                int pr = poll(&pfd, 1, 200);
                if (pr < 0 && errno == EINTR) continue;
                if (pr <= 0) continue;
                char buf[8192];
                ssize_t n = read(fds[0], buf, sizeof buf);
                if (n <= 0) break;
                pending.append(buf, (size_t)n);
                size_t nl;
                while ((nl = pending.find('\n')) != std::string::npos) {
                    std::string line = pending.substr(0, nl);
                    pending.erase(0, nl + 1);
                    if (line.compare(0, 5, "SPEC ") == 0) {
                        size_t i = (size_t)atol(line.c_str() + 5);
                        if (i != cur) { cur = i; restarts = 0; }
                        spec_t0 = now_s();
                        last_step = -1;
                        fails_since_step = 0;
                    } else if (line.compare(0, 5, "STEP ") == 0) {
                        last_step = atoi(line.c_str() + 5);
                        fails_since_step = 0;
                    } else if (line.compare(0, 5, "DONE ") == 0) {
                        spec_end(cur, now_s() - spec_t0);
                        next = cur + 1;
                        resume = 0;
                    } else if (line == "ALLDONE") {
                        all_done = true;
                    } else {
                        if (line.compare(0, 5, "PASS ") == 0) { passed++; sp_ok[cur]++; }
                        else if (line.compare(0, 5, "FAIL ") == 0) { failed++; sp_bad[cur]++; fails_since_step++; }
                        printf("%s\n", line.c_str());
                    }
                }
            }
            if (!pending.empty()) printf("%s\n", pending.c_str());
            if (timed_out || budget_spent) kill(pid, SIGKILL);
            int status = 0;
            waitpid(pid, &status, 0);
            close(fds[0]);
            if (all_done && WIFEXITED(status) && WEXITSTATUS(status) == 0) break;
            if (budget_spent) {
                spec_line(cur, "budget", fmt("killed in step %d: the suite's time budget (%.0f s) is spent", last_step, budget));
                spec_end(cur, now_s() - spec_t0);
                next = cur + 1;
                break;
            }
            // Exit status 3 (hang) and 4 (CUDA error) come after the child reported the
            // failing step; anything else is reported here.
            bool reported = !timed_out && WIFEXITED(status) &&
                            (WEXITSTATUS(status) == 3 || WEXITSTATUS(status) == 4) && fails_since_step > 0;
            if (!reported) {
                std::string why = timed_out ? fmt("spec took longer than %.0f s; killed", spec_timeout)
                                  : WIFSIGNALED(status) ? fmt("child died with signal %d", WTERMSIG(status))
                                                        : fmt("child exited with status %d", WEXITSTATUS(status));
                spec_line(cur, "spec", fmt("aborted in step %d: %s", last_step, why.c_str()));
            }
            if (!timed_out && last_step >= 0 && ++restarts <= 4) {
                next = cur;
                resume = last_step + 1;
                printf("# %s: restarting in a fresh process at step %d\n", specs[cur].name.c_str(), resume);
            } else {
                if (!timed_out && last_step >= 0) spec_line(cur, "spec", "gave up after 4 restarts; later steps not run");
                spec_end(cur, now_s() - spec_t0);
                next = cur + 1;
                resume = 0;
                restarts = 0;
            }
        }
        for (size_t i = next; i < specs.size(); i++)
            spec_line(i, "budget", fmt("not run: the suite's time budget (%.0f s) is spent", budget));
    }
    printf("# suite wall time %.1f s\n", now_s() - t_start);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
