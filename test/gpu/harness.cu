// tidal GPU correctness harness (CUDA driver API; host code only, no device code).
//
//   tidal_gpu_harness ORIG_DIR TIDAL_DIR [options]
//
// For every kernel spec (specs.inc) it loads ORIG_DIR/<file>.ptx (the kernel as the
// compiler wrote it) and TIDAL_DIR/<file>.ptx (the same PTX after `tidal-opt -p tidal`)
// with cuModuleLoadDataEx, and checks that the rewritten kernel reproduces the original
// byte for byte in every launch case of abi/tidal_abi.h (ABI v4; harness_common.h plans
// the clone launches and checks the slot table):
//
//   ref        the original kernel, original grid, run twice: the reference bytes (the two
//              runs must agree, and every output buffer must have been written somewhere)
//   module     the rewritten module defines __tidal_ctl and the marker, K and K__tidal_reshaped
//   smem       the clone's static shared memory is no more than the original entry's (its
//              protocol words are in the tail of its dynamic shared memory: every clone
//              launch gets TIDAL_CLONE_SMEM bytes and tidal_launch.sh_off, as libtidal's)
//   a          rewritten K, original grid, __tidal_ctl = 0 (the verbatim body)
//   b/MASK     rewritten K, original grid, __tidal_ctl -> a partition with MASK (probe mode)
//   c-probe/MASK    K__tidal_reshaped, flags PROBE, key 0, grid = occupancy x allowed SMs
//   c-epoch/MASK    the clone in epoch mode: slot named by the host (reserved, tag
//              TIDAL_SLOT_RESERVED), epoch = one more than the slot's last launch, dynamic
//              tickets; grid = occupancy x all SMs (libtidal's choice)
//   c-static1/MASK  STATIC, chunk chosen so that occupancy x allowed SMs workers cover the
//              grid (one wave: the launch must not touch the slot at all)
//   c-static/MASK   STATIC with dynamic tickets: base = workers x chunk < total
//   c-static-first/MASK  STATIC, each worker's own chunk `first` (~3/4 of the grid / workers)
//                   larger than the tickets' chunk: base = workers x first < total
//   c-probe-static  PROBE + STATIC with tickets (graph-captured clone in a green context)
//   c-ctl      c-epoch with launch.partition = 0: the partition comes from __tidal_ctl (not in
//              modules without it: all original entries verbatim, a 4-byte marker)
//   c-nohist   c-epoch without HIST / EXEC: exec_count and sm_blocks must stay zero
//   c-wrap/E   three epoch-mode launches on a slot whose last epoch was 65533 (left with
//              stale words): epochs 65534, 65535, then the host zeroes the claim and guard
//              words and the sequence restarts at 1
//   flip-b / flip-c-probe / flip-c-epoch / flip-c-static   as b / c-* with all SMs, while a
//              host thread rewrites the mask words at random intervals, empty masks included
//   join-ctl / join   (specs with join) an owner c-epoch launch of a long kernel on SMs
//              0..15; once all its workers arrived, the mask grows to all SMs; join: a JOIN
//              grid (same launch parameters + JOIN) goes to another stream. Exactly once,
//              exec_count complete when the owner's stream finished (owners wait for the
//              joiners inside), and the added SMs ran logical blocks (join-ctl, no joiner:
//              they ran none)
//   huge specs (>= 2^24 logical blocks): a, b/all and b/empty only; case b must run the
//              original body (no exec_count, sm_blocks, violations or slot change)
//
// MASK is one of all, sm0, half (SMs 0..nsm/2-1), odd, rand (seeded), empty.
// Each run resets the outputs to a poison pattern and exec_count / sm_blocks to zero, and
// then requires: outputs == reference; exec_count[i] == 1 for every logical block; every
// probe slot back to all-zero; the epoch slot in the state the launch must leave (epoch
// fields, next ticket, arrivals) and the other epoch slots byte-identical to before;
// sum(sm_blocks) == logical blocks; for the empty mask, violations > 0 where the launch has
// dynamic work (a covering STATIC launch: violations == 0); for other masks, no logical
// block on an SM outside the mask unless violations rose (STATIC: at most the workers' own
// chunks plus one claimed chunk each).
//
// Under compute-sanitizer (test/gpu/sanitize.sh): --no-fork, --sanitize (the original module's
// entry is renamed NAME__ref, so the tool's reports say which kernel a finding is in; flips
// start before the launch and are counted, not required), --steps (a subset of the steps
// above, by label), --max-blocks (smaller logical grids: the tools are 10-100x slower) and
// --occ (fewer workers, so that a small grid still runs several logical blocks per worker).
//
// The specs run in one child process; the parent prints every check line and ends with
// "N passed, N failed". A hang (launch longer than --launch-timeout), a CUDA error or a crash
// costs one step: a fresh child resumes at the next step of that spec.
// Exit status: 0 if nothing failed, 1 otherwise, 2 on usage errors.

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
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
#include "harness_common.h"

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
    bool flip = true;          // run flip-b / flip-c-*
    int flip_min = 0;          // flips that must land while the kernel is in flight
    bool flip_only = false;    // skip a / b / c (long configs meant for flips only)
    bool expect_refused = false;
    bool join = false;         // run join-ctl / join (a long kernel: the owner must outlive the mask growth)
    bool huge = false;         // >= TIDAL_MAX_LOGICAL blocks: a, b/all, b/empty (case b runs the original body)
    // Dynamic shared memory up to the device's opt-in limit: the original's attribute is set
    // to optin - its static size (what Triton does), and smem (and args[optin_words_arg],
    // smem / 4) become the most a clone takes: optin - static - TIDAL_SH_BYTES (8-aligned).
    bool smem_optin = false;
    int optin_words_arg = -1;
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
static bool g_sanitize = false;               // --sanitize: runs under compute-sanitizer (see main)
static std::vector<std::string> g_steps;      // --steps: the step labels to run (empty: all)
static int g_occ = 0;                         // --occ: plan clones as if at most this many blocks fit an SM
static const char REF_SUFFIX[] = "__ref";     // --sanitize: the original kernel's entry, renamed
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
    printf("%s %-34s %-16s %s\n", ok ? "PASS" : "FAIL", sp.name.c_str(), mode.c_str(), detail.c_str());
    fflush(stdout);
    (ok ? g_pass : g_fail)++;
}

struct Env {
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    int nsm = 0;
    int smem_optin = 0;
    CUstream st = nullptr;    // launches
    CUstream fst = nullptr;   // mask flips and polls of the slot (non-blocking)
    CUstream jst = nullptr;   // joiner grids (join)
    uint8_t *pinned = nullptr;   // source of the flip copies, target of the polls (page-locked, so they are async)
};

struct DevBuf {
    CUdeviceptr d = 0;
    size_t bytes = 0, alloc = 0;
    std::vector<uint8_t> init;   // inputs
    std::vector<uint8_t> ref;    // outputs: reference bytes
};

// The partition: a 128-byte header followed by th::NSLOTS tidal_slot entries (probe slots
// and epoch slots, harness_common.h), 1024-byte aligned (more than the ABI asks).
struct Partition {
    CUdeviceptr raw = 0, part = 0, exec = 0, smb = 0;
    th::Epochs epochs;   // the host's last epoch of each epoch slot
    CUdeviceptr slot(uint32_t index) const { return part + th::slot_offset(index); }
    size_t table_bytes() const { return (size_t)th::NSLOTS * sizeof(tidal_slot); }
};

struct Loaded {
    CUmodule mod = nullptr;
    CUfunction fn = nullptr, clone = nullptr;
    CUdeviceptr ctl = 0;
    size_t ctl_bytes = 0;
    bool has_marker = false;
    bool has_ctl = false;   // the marker's size says the module defines __tidal_ctl (case b)
};

#define CKR(call, what)                                                                   \
    do {                                                                                  \
        CUresult _r = (call);                                                             \
        if (_r != CUDA_SUCCESS) { *err = std::string(what) + ": " + cu_err(_r); return false; } \
    } while (0)

// `.entry NAME` → `.entry TO` in PTX text (the declaration only: nothing else in a module
// names an entry; its parameters keep their names). False if there is no such entry.
static bool rename_entry(std::string *text, const std::string &name, const std::string &to)
{
    auto ident = [](char c) { return isalnum((unsigned char)c) || c == '_' || c == '$'; };
    for (size_t p = text->find(".entry"); p != std::string::npos; p = text->find(".entry", p + 6)) {
        size_t q = p + 6;
        if (q >= text->size() || !isspace((unsigned char)(*text)[q])) continue;
        while (q < text->size() && isspace((unsigned char)(*text)[q])) q++;
        if (text->compare(q, name.size(), name) || (q + name.size() < text->size() && ident((*text)[q + name.size()])))
            continue;
        text->replace(q, name.size(), to);
        return true;
    }
    return false;
}

static bool load_module_text(const std::string &text, const std::string &path, CUmodule *mod, std::string *err);

static bool load_module(const std::string &path, CUmodule *mod, std::string *err)
{
    std::string text;
    if (!read_file(path, &text)) { *err = "cannot read " + path; return false; }
    return load_module_text(text, path, mod, err);
}

static bool load_module_text(const std::string &text, const std::string &path, CUmodule *mod, std::string *err)
{
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

static bool static_smem(CUfunction f, int *bytes, std::string *err)
{
    CKR(cuFuncGetAttribute(bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f), "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
    return true;
}

// Allow f smem dynamic bytes where its default (48 KiB - static) is less, or allow it
// exactly `allow` bytes (the opt-in specs).
static bool set_smem_attr(CUfunction f, unsigned smem, std::string *err, int allow = 0)
{
    int st = 0;
    if (!static_smem(f, &st, err)) return false;
    if (allow || smem + (unsigned)st > 48 * 1024)
        CKR(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, allow ? allow : (int)smem),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    return true;
}

// A clone runs with the launch's dynamic shared memory followed by its protocol words
// (abi/tidal_abi.h, TIDAL_SH_*): TIDAL_CLONE_SMEM bytes, the words at sh_off, as libtidal
// launches it.
static unsigned clone_smem(const Spec &sp) { return TIDAL_CLONE_SMEM(sp.smem); }

// Waits for stream s; a launch that outlives g_launch_timeout is a hang: the child
// reports it and exits (the context cannot be recovered).
static CUresult wait_stream(CUstream s, const Spec &sp, const std::string &mode)
{
    double t0 = now_s();
    for (;;) {
        CUresult r = cuStreamQuery(s);
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

    // Launches on stream s (default: the launch stream) without waiting.
    bool launch_async(CUfunction f, const unsigned grid[3], const tidal_launch *tl, CUstream s, std::string *err)
    {
        std::vector<void *> params;
        for (auto &v : argv_store) params.push_back(&v);
        tidal_launch tlc;
        if (tl) {   // the driver copies it at the launch
            tlc = *tl;
            tlc.sh_off = TIDAL_SH_OFFSET(sp.smem);
            params.push_back(&tlc);
        }
        CKR(cuLaunchKernel(f, grid[0], grid[1], grid[2], sp.block[0], sp.block[1], sp.block[2],
                           tl ? clone_smem(sp) : sp.smem, s, params.data(), nullptr),
            "cuLaunchKernel");
        return true;
    }

    bool launch(CUfunction f, const unsigned grid[3], const tidal_launch *tl, const std::string &mode, double *ms,
                std::string *err, std::function<void()> *during = nullptr)
    {
        double t0 = now_s();
        if (!launch_async(f, grid, tl, e.st, err)) return false;
        if (during) (*during)();
        CUresult r = wait_stream(e.st, sp, mode);
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

    // Allocated and zeroed once, as the ABI asks; each epoch slot's tag is written once
    // (TIDAL_SLOT_RESERVED: a stream's slot, probe-mode launches pass over it).
    bool alloc_partition(std::string *err)
    {
        const size_t bytes = th::partition_bytes();
        CKR(cuMemAlloc(&pt.raw, bytes + 1024), "cuMemAlloc(partition)");
        pt.part = (pt.raw + 1023) & ~(CUdeviceptr)1023;
        CKR(cuMemsetD8(pt.raw, 0, bytes + 1024), "cuMemset(partition + slots)");
        for (uint32_t k = 0; k < th::NEPOCH; k++) CKR(init_epoch_slot(th::epoch_slot_index(k)), "epoch slot tag");
        CKR(cuMemAlloc(&pt.exec, std::max<uint64_t>(4, sp.logical() * 4)), "cuMemAlloc(exec_count)");
        CKR(cuMemAlloc(&pt.smb, TIDAL_MAX_SMS * 8), "cuMemAlloc(sm_blocks)");
        return true;
    }

    CUresult init_epoch_slot(uint32_t index)
    {
        tidal_slot s;
        th::epoch_slot_init(&s);
        return cuMemcpyHtoD(pt.slot(index), &s, sizeof s);
    }

    // The header (mask, violations 0, counters) and exec_count / sm_blocks zeroed.
    bool write_partition(const Mask &m, std::string *err)
    {
        tidal_partition p;
        th::header_init(&p, m.w, pt.exec, pt.smb);
        CKR(cuMemsetD32Async(pt.exec, 0, sp.logical(), e.st), "cuMemset(exec_count)");
        CKR(cuMemsetD32Async(pt.smb, 0, TIDAL_MAX_SMS * 2, e.st), "cuMemset(sm_blocks)");
        CKR(cuStreamSynchronize(e.st), "cuStreamSynchronize");
        CKR(cuMemcpyHtoD(pt.part, &p, sizeof p), "cuMemcpyHtoD(partition)");
        return true;
    }

    bool set_ctl(const Loaded &L, uint64_t v, std::string *err)
    {
        // a module without __tidal_ctl (its original entries all verbatim): nothing to
        // point; its case-b steps run the original body, and it has no c-ctl step
        if (!L.has_ctl) return true;
        CKR(cuMemcpyHtoD(L.ctl, &v, 8), "cuMemcpyHtoD(__tidal_ctl)");
        return true;
    }

    bool read_slots(std::vector<tidal_slot> *v, std::string *err)
    {
        v->resize(th::NSLOTS);
        CKR(cuMemcpyDtoH(v->data(), pt.slot(0), pt.table_bytes()), "cuMemcpyDtoH(slots)");
        return true;
    }

    // The next epoch of epoch slot k; zeroes the slot's claim and guard words first when
    // the sequence would pass TIDAL_EPOCH_MASK (no launch of the slot is running here).
    bool take_epoch(uint32_t k, uint32_t *epoch, bool *was_reset, std::string *err)
    {
        *was_reset = pt.epochs.needs_reset(k);
        if (*was_reset)
            CKR(cuMemsetD8(pt.slot(th::epoch_slot_index(k)) + TIDAL_SLOT_OFF_CLAIM, 0, 16), "cuMemset(claim, guard)");
        *epoch = pt.epochs.take(k);
        return true;
    }

    // After a partition run: exec_count, sm_blocks, violations.
    struct Stats {
        uint64_t zero = 0, multi = 0, first_bad = UINT64_MAX;
        uint32_t first_bad_val = 0;
        uint64_t smb_sum = 0, smb_outside = 0;
        int sms_used = 0;
        uint64_t violations = 0;
        uint64_t smb[TIDAL_MAX_SMS] = {};
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
        CKR(cuMemcpyDtoH(s->smb, pt.smb, sizeof s->smb), "cuMemcpyDtoH(sm_blocks)");
        for (int k = 0; k < TIDAL_MAX_SMS; k++) {
            s->smb_sum += s->smb[k];
            if (s->smb[k]) s->sms_used++;
            if (m && s->smb[k] && !m->has(k)) s->smb_outside += s->smb[k];
        }
        tidal_partition p;
        CKR(cuMemcpyDtoH(&p, pt.part, sizeof p), "cuMemcpyDtoH(partition)");
        s->violations = p.violations;
        return true;
    }

    // The slot table against what the launch must leave (th::check_slots); what is wrong
    // is put back so that later runs do not depend on this one's leftovers.
    bool check_slots(const std::vector<tidal_slot> &before, const th::SlotUse &u, std::string *why, std::string *err)
    {
        std::vector<tidal_slot> after;
        if (!read_slots(&after, err)) return false;
        std::vector<uint32_t> repair;
        *why += th::check_slots(before, after, u, &repair);
        for (uint32_t i : repair) {
            if (th::is_epoch_index(i)) CKR(init_epoch_slot(i), "cuMemcpyHtoD(epoch slot)");
            else CKR(cuMemsetD8(pt.slot(i), 0, sizeof(tidal_slot)), "cuMemset(slot)");
        }
        return true;
    }
};

static std::string join_masks(const Mask &m) { return m.label(); }

// Live mask flips: a host thread rewrites the partition's mask words with
// cuMemcpyHtoDAsync from pinned memory on a separate non-blocking stream, at random
// intervals, while the launch is in flight.
struct Flipper {
    Env &e;
    CUdeviceptr part;
    std::vector<Mask> choices;
    uint64_t seed;
    std::atomic<bool> stop{false};
    // --sanitize: started before the launch (a tool may return from the launch call only when
    // the kernel is done, or prepare it for long); the first flip waits until the kernel is in
    // its stream or the launch call returned
    bool wait_launch = false;
    std::atomic<bool> issued{false};
    int landed = 0, total = 0;
    std::string err, trace;
    std::thread th;

    Flipper(Env &env, CUdeviceptr p, std::vector<Mask> c, uint64_t s)
        : e(env), part(p), choices(std::move(c)), seed(s) {}

    void start() { th = std::thread([this] { body(); }); }
    void finish() { stop = true; if (th.joinable()) th.join(); }

    void body()
    {
        cuCtxSetCurrent(e.ctx);
        uint8_t *pinned = e.pinned;
        uint64_t st = seed;
        int us = 20;   // first flip early: short kernels still see one
        const int max_flips = 40;
        while (wait_launch && !stop && !issued && cuStreamQuery(e.st) != CUDA_ERROR_NOT_READY) usleep(10);
        while (!stop && total <= max_flips) {
            double until = now_s() + us * 1e-6;
            while (!stop && now_s() < until) std::this_thread::yield();
            if (stop) break;
            const Mask &m = choices[splitmix(st) % choices.size()];
            Mask r = m;
            if (m.name == "rand") r = mask_rand(e.nsm, splitmix(st), "rand");
            if (total == max_flips) r = choices[0];   // the last flip gives all SMs back
            memcpy(pinned, r.w, 32);
            CUresult c1 = cuMemcpyHtoDAsync(part + TIDAL_PARTITION_OFF_MASK, pinned, 32, e.fst);
            CUresult c3 = cuStreamSynchronize(e.fst);
            if (c1 || c3) { err = "flip copy failed: " + cu_err(c1 ? c1 : c3); break; }
            total++;
            bool busy = cuStreamQuery(e.st) == CUDA_ERROR_NOT_READY;
            if (busy) landed++;
            if (trace.size() < 200) trace += (trace.empty() ? "" : ",") + r.name;
            if (!busy) break;
            us = 20 + (int)(splitmix(st) % 400);
        }
    }
};

// One step of a spec.
enum StepKind { S_A, S_B, S_CLONE, S_WRAP, S_JOIN };
struct Step {
    StepKind kind;
    std::string label;
    int mask = 0;                        // index into Runner::masks (the start mask of a flip)
    th::CloneMode cm = th::C_EPOCH;
    bool use_ctl = false;                // clone: launch.partition = 0 (__tidal_ctl)
    bool flip = false;
    bool joiner = false;                 // S_JOIN: with the JOIN grid (else the control)
};

// The pass leaves the original entry byte-identical in a module with dynamic shared
// memory (docs/design.md §2) and says so in its report (run.sh keeps `tidal-opt --report`
// next to the rewritten PTX): case b then runs the original body, as for huge grids.
static bool report_says_verbatim(const std::string &report, const std::string &entry)
{
    const std::string key = "rewritten " + entry + " (";
    for (size_t b = 0; b < report.size();) {
        size_t e = report.find('\n', b);
        if (e == std::string::npos) e = report.size();
        std::string line = report.substr(b, e - b);
        b = e + 1;
        size_t q = line.find_first_not_of(" \t");
        if (q != std::string::npos && line.compare(q, key.size(), key) == 0)
            return line.find("original entry verbatim") != std::string::npos;
    }
    return false;
}

// b_original: case b runs the original body (a verbatim original entry): b/all and
// b/empty only, no flip-b.
static std::vector<Step> spec_steps(const Spec &sp, const std::vector<Mask> &masks, bool b_original)
{
    std::vector<Step> v;
    auto add = [&](StepKind k, const std::string &label, int mask = 0, th::CloneMode cm = th::C_EPOCH,
                   bool use_ctl = false, bool flip = false, bool joiner = false) {
        v.push_back(Step{k, label, mask, cm, use_ctl, flip, joiner});
    };
    if (sp.huge) {   // case b must fall back to the original body; no clone launches
        add(S_A, "a");
        for (size_t i = 0; i < masks.size(); i++)
            if (masks[i].name == "all" || masks[i].name == "empty") add(S_B, "b/" + masks[i].name, (int)i);
        return v;
    }
    if (!sp.flip_only) {
        add(S_A, "a");
        for (size_t i = 0; i < masks.size(); i++)
            if (!b_original || masks[i].name == "all" || masks[i].name == "empty")
                add(S_B, "b/" + masks[i].name, (int)i);
        const struct { th::CloneMode cm; const char *name; } cms[] = {
            {th::C_PROBE, "c-probe"}, {th::C_EPOCH, "c-epoch"}, {th::C_STATIC1, "c-static1"}, {th::C_STATIC, "c-static"},
            {th::C_STATIC_FIRST, "c-static-first"}};
        for (auto &c : cms)
            for (size_t i = 0; i < masks.size(); i++) add(S_CLONE, std::string(c.name) + "/" + masks[i].name, (int)i, c.cm);
        add(S_CLONE, "c-probe-static", 0, th::C_PROBE_STATIC);
        if (!b_original) add(S_CLONE, "c-ctl", 0, th::C_EPOCH, true);   // needs __tidal_ctl
        add(S_CLONE, "c-nohist", 0, th::C_NOHIST);
        add(S_WRAP, "c-wrap");
    }
    if (sp.flip) {
        if (!b_original) add(S_B, "flip-b", 0, th::C_EPOCH, false, true);
        add(S_CLONE, "flip-c-probe", 0, th::C_PROBE, false, true);
        add(S_CLONE, "flip-c-epoch", 0, th::C_EPOCH, false, true);
        add(S_CLONE, "flip-c-static", 0, th::C_STATIC, false, true);
        add(S_CLONE, "flip-c-static-first", 0, th::C_STATIC_FIRST, false, true);
    }
    if (sp.join) {
        add(S_JOIN, "join-ctl", 0, th::C_EPOCH, false, false, false);
        add(S_JOIN, "join", 0, th::C_EPOCH, false, false, true);
    }
    return v;
}

// resume: the first rewritten-mode step to run (after a hang or a CUDA error ended an
// earlier child at step resume - 1); the reference and module checks are redone quietly.
static void run_spec(Env &e, const Spec &spec, const std::string &orig_dir, const std::string &tidal_dir, int resume)
{
    Spec sp = spec;   // smem_optin specs: their shared memory is the device's
    g_quiet = resume > 0;
    std::string err;
    Runner R(e, sp);
    const uint64_t logical = sp.logical();
    R.masks = standard_masks(e.nsm, g_seed ^ fnv1a(sp.name) ^ 0x5eed);
    std::string report_text;
    const bool b_original = read_file(tidal_dir + "/" + sp.file + ".report", &report_text) &&
                            report_says_verbatim(report_text, sp.entry);
    std::vector<Step> steps = spec_steps(sp, R.masks, b_original);
    if (!g_steps.empty())
        steps.erase(std::remove_if(steps.begin(), steps.end(),
                                   [](const Step &st) {
                                       return std::find(g_steps.begin(), g_steps.end(), st.label) == g_steps.end();
                                   }),
                    steps.end());

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
    int orig_static = 0, optin_allow = 0;
    // --sanitize: the original kernel runs as NAME__ref, so that a tool's report tells it
    // from the rewritten module's NAME (case a, b) and NAME__tidal_reshaped (the clone)
    const std::string opath = orig_dir + "/" + sp.file + ".ptx";
    const std::string oentry = g_sanitize ? sp.entry + REF_SUFFIX : sp.entry;
    std::string otext0;
    bool ok = (read_file(opath, &otext0) || (err = "cannot read " + opath, false)) &&
              (!g_sanitize || rename_entry(&otext0, sp.entry, oentry) ||
               (err = "no .entry " + sp.entry + " in " + opath, false)) &&
              load_module_text(otext0, opath, &omod, &err) &&
              [&] { CUresult r = cuModuleGetFunction(&ofn, omod, oentry.c_str());
                    if (r) err = "cuModuleGetFunction(" + oentry + "): " + cu_err(r);
                    return r == CUDA_SUCCESS; }() &&
              static_smem(ofn, &orig_static, &err) &&
              [&] {
                  if (!sp.smem_optin) return true;
                  optin_allow = e.smem_optin - orig_static;
                  sp.smem = (unsigned)(optin_allow - TIDAL_SH_BYTES) & ~(unsigned)(TIDAL_SH_ALIGN - 1);
                  if (sp.optin_words_arg >= 0) sp.args[sp.optin_words_arg] = I32((int)(sp.smem / 4));
                  return true;
              }() &&
              set_smem_attr(ofn, sp.smem, &err, optin_allow) && R.alloc(&err) && R.prepare_outputs(&err) &&
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
        CUdeviceptr mk_ptr;
        size_t mk_bytes = 0;
        L.has_marker = cuModuleGetGlobal(&mk_ptr, &mk_bytes, L.mod, TIDAL_MARKER_SYMBOL) == CUDA_SUCCESS;
        // the marker's size says whether the module has __tidal_ctl (abi/tidal_abi.h): only
        // where an original entry carries case b
        L.has_ctl = L.has_marker && mk_bytes >= TIDAL_MARKER_BYTES_CASE_B;
        ctl_ok = !L.has_ctl ||
                 (cuModuleGetGlobal(&L.ctl, &L.ctl_bytes, L.mod, TIDAL_CTL_SYMBOL) == CUDA_SUCCESS && L.ctl_bytes == 8);
        if (fn_ok && !set_smem_attr(L.fn, sp.smem, &merr, optin_allow)) fn_ok = false;
        if (clone_ok && !set_smem_attr(L.clone, clone_smem(sp), &merr)) clone_ok = false;
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

    auto report_not_run = [&](const std::string &why2) {
        for (auto &s : steps) {
            if (s.kind == S_WRAP)
                for (const char *x : {"/65534", "/65535", "/1"}) report(false, sp, s.label + x, why2);
            else report(false, sp, s.label, why2);
        }
    };
    if (!loaded || !fn_ok || !ctl_ok || !L.has_marker || identical) {
        std::string d;
        if (!loaded) d = merr;
        else if (identical) d = "tidal-opt left the module byte-identical (refused)";
        else {
            if (!fn_ok) d += "no entry " + sp.entry + "; ";
            if (!ctl_ok) d += std::string("an 8-byte marker but no 8-byte global ") + TIDAL_CTL_SYMBOL + "; ";
            if (!L.has_marker) d += std::string("no marker global ") + TIDAL_MARKER_SYMBOL + "; ";
            if (!clone_ok) d += "no " + sp.entry + TIDAL_RESHAPED_SUFFIX + "; ";
            if (!merr.empty()) d += merr;
        }
        report(false, sp, "module", d + reason);
        report_not_run("not run: the module is not a usable rewritten module");
        return;
    }
    report(clone_ok, sp, "module",
           clone_ok ? fmt("%s, %s%s, %s, marker: ok", TIDAL_CTL_SYMBOL, sp.entry.c_str(), TIDAL_RESHAPED_SUFFIX,
                          sp.entry.c_str())
                    : "no " + sp.entry + TIDAL_RESHAPED_SUFFIX + " (the clone modes cannot run)" + reason);

    if (clone_ok) {
        // the clone's protocol words are in its dynamic shared memory: its static shared
        // memory is no more than the original entry's, and the original's rounded up to
        // 16 bytes at most (ptxas pads it to the module's extern alignment)
        int fs = 0, cs = 0;
        std::string serr;
        bool k = static_smem(L.fn, &fs, &serr) && static_smem(L.clone, &cs, &serr);
        bool same = k && cs <= fs && cs <= (orig_static + 15) / 16 * 16;
        report(same, sp, "smem",
               k ? fmt("static shared memory: clone %d, original entry %d, original module %d; dynamic %u (clone "
                       "%u)",
                       cs, fs, orig_static, sp.smem, clone_smem(sp))
                 : serr);
    }
    g_quiet = false;
    int occ = 0;
    if (clone_ok) {
        CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, L.clone, (int)sp.threads(), clone_smem(sp));
        if (r != CUDA_SUCCESS || occ < 1) {
            report(false, sp, "occupancy", r ? cu_err(r) : "occupancy of the clone is 0");
            clone_ok = false;
        }
        if (g_occ > 0 && occ > g_occ) occ = g_occ;   // --occ: fewer workers, more logical blocks each
    }
    if (!R.alloc_partition(&err)) {
        report_not_run(err);
        return;
    }

    const Mask &all = R.masks[0];
    const uint32_t main_slot = th::epoch_slot_index(th::E_MAIN);

    // What one launch must have done; checks and reports it. kind: S_A, S_B or S_CLONE
    // (wrap and join launches are clones). m: the mask the launch ran under (nullptr: it
    // changed while it ran). pl: the clone's plan. before: the slot table before it.
    auto check_run = [&](const std::string &label, StepKind kind, const Mask *m, const th::Plan *pl,
                         const std::vector<tidal_slot> &before, const th::SlotUse &use, bool k, std::string err2,
                         std::string w, std::string extra, double run_ms, const Mask *start_mask, Flipper *fl,
                         const std::function<void(const Runner::Stats &, std::string *, std::string *)> &more) {
        if (k) k = R.outputs(false, &w, &err2);
        Runner::Stats s;
        const bool part = kind != S_A;
        if (k && part) k = R.stats(m, &s, &err2);
        if (k && part) {
            const bool clone = kind == S_CLONE;
            // case b of a grid the protocol does not take, or of a verbatim original entry
            const bool orig_body = kind == S_B && (sp.huge || b_original);
            const bool counted = clone ? (pl->tl.flags & TIDAL_LAUNCH_EXEC) != 0 : !orig_body;
            const bool hist = clone ? (pl->tl.flags & TIDAL_LAUNCH_HIST) != 0 : !orig_body;
            if (counted && (s.zero || s.multi))
                w += fmt("exec_count: %" PRIu64 " logical blocks ran 0 times, %" PRIu64
                         " more than once (first: block %" PRIu64 " = %u); ",
                         s.zero, s.multi, s.first_bad, s.first_bad_val);
            if (!counted && s.zero != logical)
                w += fmt("exec_count: %" PRIu64 " logical blocks counted, want none (%s); ", logical - s.zero,
                         orig_body ? (sp.huge ? "the original body runs a grid of >= 2^24 blocks"
                                                   : "the original entry is verbatim (dynamic shared memory)")
                                       : "no TIDAL_LAUNCH_EXEC");
            if (s.smb_sum != (hist ? logical : 0))
                w += fmt("sum(sm_blocks) = %" PRIu64 ", want %" PRIu64 "%s; ", s.smb_sum, hist ? logical : 0,
                         hist ? "" : orig_body ? " (original body)" : " (no TIDAL_LAUNCH_HIST)");
            k = R.check_slots(before, use, &w, &err2);
            if (m && m->count() == 0) {
                if (orig_body || (clone && !pl->dynamic_work())) {
                    if (s.violations)
                        w += fmt("violations = %" PRIu64 ", want 0 (%s); ", s.violations,
                                 orig_body ? "the original body" : "a covering STATIC launch has no guard");
                } else if ((!clone || pl->empty_mask_needs_violation()) && s.violations == 0) {
                    w += "empty mask but violations == 0; ";
                }
            }
            if (orig_body && s.violations) w += fmt("violations = %" PRIu64 " from the original body; ", s.violations);
            const uint64_t allowance = clone ? pl->outside_allowance() : 0;
            if (m && m->count() > 0 && s.violations == 0 && s.smb_outside > allowance)
                w += fmt("%" PRIu64 " logical blocks ran on SMs outside the mask with violations == 0%s; ",
                         s.smb_outside, allowance ? fmt(" (STATIC allows %" PRIu64 ")", allowance).c_str() : "");
            extra += fmt(" viol %" PRIu64 " sms %d", s.violations, s.sms_used);
            if (m && m->count() > 0 && (s.violations || s.smb_outside))
                extra += fmt(" (outside mask: %" PRIu64 ")", s.smb_outside);
            if (k && more) more(s, &w, &extra);
        }
        if (fl) {
            extra += fmt(" flips %d/%d in flight [%s]", fl->landed, fl->total, fl->trace.c_str());
            if (fl->landed < sp.flip_min)
                w += fmt("only %d mask flips landed while the kernel ran (spec wants >= %d); ", fl->landed, sp.flip_min);
        }
        std::string ml = !start_mask ? "" : fl || !m ? " start mask " + join_masks(*start_mask) : " mask " + join_masks(*m);
        while (w.size() >= 2 && w.compare(w.size() - 2, 2, "; ") == 0) w.resize(w.size() - 2);
        if (!k) {
            // A CUDA error here usually poisons the context: report it and let the parent
            // start a fresh process at the next step.
            report(false, sp, label, err2 + ml + extra);
            fflush(stdout);
            if (!g_nofork) _exit(4);
            return false;
        }
        report(w.empty(), sp, label, (w.empty() ? fmt("%.2f ms", run_ms) : w) + ml + extra);
        return true;
    };

    // An epoch-mode plan's slot use (none for probe mode and covering STATIC launches).
    auto slot_use = [&](const th::Plan &pl, uint32_t index, uint64_t joiners) {
        th::SlotUse u;
        if (!pl.touches_epoch_slot()) return u;
        u.slot = (int)index;
        u.epoch = pl.tl.epoch;
        u.total = pl.total();
        u.base = pl.tl.base;
        u.chunk = pl.tl.chunk;
        u.phys = pl.workers;
        u.joiner_phys = joiners;
        return u;
    };
    auto is_epoch_mode = [](th::CloneMode cm) { return cm != th::C_PROBE && cm != th::C_PROBE_STATIC; };

    // ---- a, b, c-*, flips -------------------------------------------------------------
    auto run_plain = [&](const Step &st) {
        std::string err2, w, extra;
        const Mask *m = st.kind == S_A ? nullptr : &R.masks[st.mask];
        if (st.kind == S_CLONE && !clone_ok) { report(false, sp, st.label, "no usable clone"); return; }
        const bool part = st.kind != S_A;
        std::vector<tidal_slot> before;
        bool k = R.prepare_outputs(&err2);
        if (k && part) k = R.write_partition(*m, &err2) && R.read_slots(&before, &err2);
        const bool ctl_on = st.kind == S_B || (st.kind == S_CLONE && st.use_ctl);
        if (k) k = R.set_ctl(L, ctl_on ? (uint64_t)R.pt.part : 0, &err2);
        unsigned wg[3] = {sp.grid[0], sp.grid[1], sp.grid[2]};
        th::Plan pl;
        th::SlotUse use;
        if (k && st.kind == S_CLONE) {
            int allowed = 0;
            for (int s2 = 0; s2 < e.nsm; s2++) allowed += m->has(s2);
            if (st.flip) allowed = e.nsm;
            uint32_t epoch = 0;
            bool reset = false;
            if (is_epoch_mode(st.cm)) k = R.take_epoch(th::E_MAIN, &epoch, &reset, &err2);
            pl = th::plan_clone(st.cm, occ, e.nsm, allowed, sp.grid, st.use_ctl ? 0 : R.pt.part, main_slot, epoch);
            // epoch-mode launches get the histogram pointer in the parameter (as libtidal does);
            // probe-mode ones read the partition's
            if (!pl.probe() && (pl.tl.flags & TIDAL_LAUNCH_HIST)) pl.tl.sm_blocks = R.pt.smb;
            wg[0] = pl.workers; wg[1] = wg[2] = 1;
            use = slot_use(pl, main_slot, 0);
            extra = fmt(" %s (occ %d)%s", pl.describe().c_str(), occ, reset ? " (slot reset before the wrap)" : "");
        }
        Flipper *fl = nullptr;
        std::function<void()> during;
        if (st.flip) {
            std::vector<Mask> ch = standard_masks(e.nsm, g_seed ^ fnv1a(sp.name + st.label));
            fl = new Flipper(e, R.pt.part, ch, g_seed ^ fnv1a(sp.name + st.label + "flip"));
            if (g_sanitize) {
                fl->wait_launch = true;
                fl->start();
                during = [fl] { fl->issued = true; };
            } else {
                during = [fl] { fl->start(); };
            }
        }
        if (k) k = R.launch(st.kind == S_CLONE ? L.clone : L.fn, wg, st.kind == S_CLONE ? &pl.tl : nullptr, st.label,
                            &ms, &err2, st.flip ? &during : nullptr);
        if (fl) {
            fl->finish();
            if (!fl->err.empty()) { k = false; err2 += (err2.empty() ? "" : "; ") + fl->err; }
        }
        check_run(st.label, st.kind, st.flip ? nullptr : m, &pl, before, use, k, err2, w, extra, ms, m, fl, {});
        delete fl;
    };

    // ---- c-wrap: the host's reset of an epoch slot before its epoch would wrap -----------
    auto run_wrap = [&](const Step &st) {
        if (!clone_ok) {
            for (const char *x : {"/65534", "/65535", "/1"}) report(false, sp, st.label + x, "no usable clone");
            return;
        }
        const uint32_t wslot = th::epoch_slot_index(th::E_WRAP);
        std::string err2;
        // The slot's last launch had epoch 65533 and left words the next epoch must turn
        // into its zero (a stale ticket, arrivals, one worker counted as working).
        tidal_slot seed;
        th::epoch_slot_init(&seed);
        const uint64_t old = 65533;
        seed.claim = (old << TIDAL_EPOCH_SHIFT) | 0x00ABCDEull;
        seed.guard = (old << TIDAL_EPOCH_SHIFT) | (77ull << TIDAL_GUARD_ARRIVED_SHIFT) | 5;
        CUresult r = cuMemcpyHtoD(R.pt.slot(wslot), &seed, sizeof seed);
        if (r) {
            report(false, sp, st.label, "seeding the slot: " + cu_err(r));
            if (!g_nofork) _exit(4);
            return;
        }
        R.pt.epochs.last[th::E_WRAP] = (uint32_t)old;
        const th::CloneMode cms[3] = {th::C_EPOCH, th::C_STATIC, th::C_EPOCH};
        for (int i = 0; i < 3; i++) {
            std::string w, extra;
            err2.clear();
            uint32_t epoch = 0;
            bool reset = false;
            std::vector<tidal_slot> before;
            bool k = R.prepare_outputs(&err2) && R.write_partition(all, &err2) && R.set_ctl(L, 0, &err2) &&
                     R.take_epoch(th::E_WRAP, &epoch, &reset, &err2) && R.read_slots(&before, &err2);
            th::Plan pl = th::plan_clone(cms[i], occ, e.nsm, e.nsm, sp.grid, R.pt.part, wslot, epoch);
            if (!pl.probe() && (pl.tl.flags & TIDAL_LAUNCH_HIST)) pl.tl.sm_blocks = R.pt.smb;
            th::SlotUse use = slot_use(pl, wslot, 0);
            unsigned wg[3] = {pl.workers, 1, 1};
            std::string label = st.label + "/" + std::to_string(epoch);
            if (i == 2 && (!reset || epoch != 1)) w += fmt("the host did not reset the slot before the wrap (epoch %u); ", epoch);
            extra = fmt(" %s (occ %d)%s", pl.describe().c_str(), occ,
                        reset ? " (claim and guard zeroed by the host first)" : "");
            if (k) k = R.launch(L.clone, wg, &pl.tl, label, &ms, &err2);
            if (!check_run(label, S_CLONE, &all, &pl, before, use, k, err2, w, extra, ms, &all, nullptr, {})) return;
        }
    };

    // ---- join-ctl / join: flow-in on SMs the owner was not given -------------------------
    auto run_join = [&](const Step &st) {
        if (!clone_ok) { report(false, sp, st.label, "no usable clone"); return; }
        std::string err2, w, extra;
        const int nsmall = std::max(1, std::min(16, e.nsm / 2));
        Mask small;
        small.name = fmt("sm0-%d", nsmall - 1);
        for (int s2 = 0; s2 < nsmall; s2++) small.set(s2);
        uint32_t epoch = 0;
        bool reset = false;
        std::vector<tidal_slot> before;
        bool k = R.prepare_outputs(&err2) && R.write_partition(small, &err2) && R.set_ctl(L, 0, &err2) &&
                 R.take_epoch(th::E_MAIN, &epoch, &reset, &err2) && R.read_slots(&before, &err2);
        th::Plan pl = th::plan_clone(th::C_EPOCH, occ, e.nsm, nsmall, sp.grid, R.pt.part, main_slot, epoch);
        th::Plan plj = pl;
        plj.tl.flags |= TIDAL_LAUNCH_JOIN;
        unsigned wg[3] = {pl.workers, 1, 1};
        th::SlotUse use = slot_use(pl, main_slot, st.joiner ? pl.workers : 0);
        double t0 = now_s(), t_arrived = 0;
        bool owner_early = false, owner_running_at_join = false, joiners_running = false;
        uint64_t incomplete_at_owner_end = 0;
        if (k) k = R.launch_async(L.clone, wg, &pl.tl, e.st, &err2);
        // wait until every owner worker arrived (guard: this epoch, arrivals == workers):
        // those on SMs outside the small mask have left by then
        uint64_t guard = 0;
        while (k) {
            CUresult r = cuMemcpyDtoHAsync(e.pinned + 64, R.pt.slot(main_slot) + TIDAL_SLOT_OFF_GUARD, 8, e.fst);
            if (!r) r = cuStreamSynchronize(e.fst);
            if (r) { k = false; err2 = "polling the guard word: " + cu_err(r); break; }
            memcpy(&guard, e.pinned + 64, 8);
            if ((guard >> TIDAL_EPOCH_SHIFT) == epoch &&
                ((guard >> TIDAL_GUARD_ARRIVED_SHIFT) & TIDAL_GUARD_ACTIVE_MASK) == pl.workers)
                break;
            if (cuStreamQuery(e.st) != CUDA_ERROR_NOT_READY) { owner_early = true; break; }
            if (now_s() - t0 > g_launch_timeout) {
                report(false, sp, st.label, fmt("the owner's workers did not all arrive within %.0f s (guard 0x%016" PRIx64 ")",
                                                g_launch_timeout, guard));
                _exit(3);
            }
            usleep(20);
        }
        t_arrived = now_s();
        if (k) {   // the mask grows to all SMs
            memcpy(e.pinned + 128, all.w, 32);
            CUresult r = cuMemcpyHtoDAsync(R.pt.part + TIDAL_PARTITION_OFF_MASK, e.pinned + 128, 32, e.fst);
            if (!r) r = cuStreamSynchronize(e.fst);
            if (r) { k = false; err2 = "growing the mask: " + cu_err(r); }
        }
        if (k && st.joiner) {
            k = R.launch_async(L.clone, wg, &plj.tl, e.jst, &err2);
            owner_running_at_join = cuStreamQuery(e.st) == CUDA_ERROR_NOT_READY;
        }
        if (k) {
            CUresult r = wait_stream(e.st, sp, st.label);
            if (r) { k = false; err2 = "owner kernel failed: " + cu_err(r); }
        }
        double t_owner = now_s();
        if (k) {   // the owner's stream is done: every logical block must have run by now
            joiners_running = st.joiner && cuStreamQuery(e.jst) == CUDA_ERROR_NOT_READY;
            std::vector<uint32_t> ex(logical);
            CUresult r = cuMemcpyDtoH(ex.data(), R.pt.exec, logical * 4);
            if (r) { k = false; err2 = "reading exec_count: " + cu_err(r); }
            for (uint64_t i = 0; k && i < logical; i++) incomplete_at_owner_end += ex[i] != 1;
        }
        if (k && st.joiner) {
            CUresult r = wait_stream(e.jst, sp, st.label);
            if (r) { k = false; err2 = "joiner kernel failed: " + cu_err(r); }
        }
        if (owner_early) w += "the owner finished before all its workers arrived (kernel too short for the join check); ";
        if (st.joiner && k && !owner_running_at_join)
            w += "the owner had finished when the joiner grid was launched (kernel too short); ";
        if (incomplete_at_owner_end)
            w += fmt("when the owner's stream finished, %" PRIu64 " logical blocks had not run exactly once "
                     "(owners must wait for the joiners inside); ", incomplete_at_owner_end);
        extra = fmt(" %s (occ %d), owner on %s: workers arrived after %.2f ms, owner done after %.2f ms%s", pl.describe().c_str(),
                    occ, small.label().c_str(), (t_arrived - t0) * 1e3, (t_owner - t0) * 1e3,
                    st.joiner ? (joiners_running ? ", joiners still leaving then" : ", joiners done by then") : "");
        // the SMs the mask gained: only joiners can have run logical blocks there (the owner's
        // workers outside the small mask had left before it grew)
        auto added = [&](const Runner::Stats &s, std::string *w2, std::string *x2) {
            uint64_t n = 0;
            for (int s2 = 0; s2 < TIDAL_MAX_SMS; s2++)
                if (all.has(s2) && !small.has(s2)) n += s.smb[s2];
            *x2 += fmt(", added SMs ran %" PRIu64 " logical blocks", n);
            if (st.joiner && n == 0) *w2 += "no logical block ran on the SMs the mask gained (the joiners did not help); ";
            if (!st.joiner && n && s.violations == 0)
                *w2 += fmt("without joiners, %" PRIu64 " logical blocks ran on SMs the owner had left; ", n);
        };
        check_run(st.label, S_CLONE, nullptr, &pl, before, use, k, err2, w, extra, (now_s() - t0) * 1e3, &small, nullptr,
                  added);
    };

    int step = -1;
    for (const Step &st : steps) {
        if (++step < resume) continue;
        printf("STEP %d\n", step);   // the parent resumes after this step if the child dies in it
        fflush(stdout);
        switch (st.kind) {
        case S_A: case S_B: case S_CLONE: run_plain(st); break;
        case S_WRAP: run_wrap(st); break;
        case S_JOIN: run_join(st); break;
        }
    }
    R.set_ctl(L, 0, &err);
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
    if ((r = cuStreamCreate(&e.jst, CU_STREAM_NON_BLOCKING))) return fail_all("cuStreamCreate: " + cu_err(r));
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
            "  --sanitize            for compute-sanitizer (test/gpu/sanitize.sh): the original kernel's\n"
            "                        entry is renamed NAME__ref; flips start before the launch and\n"
            "                        their count is reported, not required\n"
            "  --steps A,B,...       run only the steps with these labels (a, b/half, c-epoch/half,\n"
            "                        flip-c-epoch, ...; ref and module always run)\n"
            "  --max-blocks N        shrink every logical grid to at most N blocks (halving its largest\n"
            "                        dimension); specs that need a >= 2^24 grid are left out\n"
            "  --occ N               plan the clones as if at most N blocks fit an SM: fewer workers,\n"
            "                        each running several logical blocks (small grids still cross\n"
            "                        tidal's barriers between logical blocks)\n"
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
    uint64_t max_blocks = 0;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto need = [&](const char *o) -> std::string {
            if (i + 1 >= argc) { fprintf(stderr, "%s needs a value\n", o); usage(); exit(2); }
            return argv[++i];
        };
        auto items = [](const std::string &v) {   // "A,B,..." (empty items dropped)
            std::vector<std::string> r;
            for (size_t p = 0; p <= v.size();) {
                size_t q = v.find(',', p);
                if (q == std::string::npos) q = v.size();
                if (q > p) r.push_back(v.substr(p, q - p));
                p = q + 1;
            }
            return r;
        };
        if (a == "--only") only = items(need("--only"));   // the last --only wins
        else if (a == "--steps") g_steps = items(need("--steps"));
        else if (a == "--max-blocks") {
            max_blocks = strtoull(need("--max-blocks").c_str(), nullptr, 0);
            if (max_blocks < 1) { fprintf(stderr, "--max-blocks needs a positive count\n"); return 2; }
        } else if (a == "--occ") {
            g_occ = atoi(need("--occ").c_str());
            if (g_occ < 1) { fprintf(stderr, "--occ needs a positive count\n"); return 2; }
        } else if (a == "--sanitize") g_sanitize = true;
        else if (a == "--list") list = true;
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
        if (!take) continue;
        if (max_blocks && s.huge) {   // the point of such a spec is its grid
            printf("# %s: left out (--max-blocks %" PRIu64 "; it needs >= 2^24 logical blocks)\n", s.name.c_str(), max_blocks);
            continue;
        }
        while (max_blocks && s.logical() > max_blocks) {   // halve the largest dimension
            unsigned *d = std::max_element(s.grid, s.grid + 3);
            *d = (*d + 1) / 2;
        }
        if (g_sanitize) s.flip_min = 0;   // a tool may serialise the flip copies behind the kernel
        specs.push_back(s);
    }
    if (list) {
        for (auto &s : specs)
            printf("%-34s %-44s %-22s grid %ux%ux%u block %ux%ux%u smem %-6u%s%s%s%s  %s\n", s.name.c_str(), s.file.c_str(),
                   s.entry.c_str(), s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2], s.smem,
                   s.flip_only ? " [flip only]" : "", s.expect_refused ? " [expect refused]" : "", s.join ? " [join]" : "",
                   s.huge ? " [huge: original body in case b]" : "", s.what.c_str());
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
        printf("FAIL %-34s %-16s %s\n", specs[i].name.c_str(), mode, msg.c_str());
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
