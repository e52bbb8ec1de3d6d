// test/gpu/tvm/run_tvm.cu -- GPU check of TVM-generated kernels rewritten by tidal.
//
//   run_tvm ORIG_DIR TIDAL_DIR LAUNCH_TXT [--only NAME,...] [--seed N]
//
// Host code only (driver API). LAUNCH_TXT is test/corpus/tvm/local/launch.txt (written by
// gen_tvm_corpus.py): one kernel per line, "name stem entry gx gy gz bx by bz smem params...",
// params in .entry order as ROLE:DTYPE:ELEMENTS (in|out, f32). For each line it loads
// ORIG_DIR/<stem>.ptx and TIDAL_DIR/<stem>.ptx (cuModuleLoadDataEx, driver JIT), fills the
// inputs with fixed pseudo-random floats in [-1, 1), poisons the outputs (0xA5C3E17B words)
// before every run, and checks, bit for bit against the original kernel's output, the
// launch cases of abi/tidal_abi.h (ABI v5) as test/gpu/harness.cu runs them (the clone
// plans and the slot-table check come from test/gpu/harness_common.h):
//   ref        original entry, original grid, run twice: identical, and no output word left poisoned
//   module     the rewritten module defines __tidal_ctl, __tidal_rewritten_v5, ENTRY and
//              ENTRY__tidal_reshaped
//   a          rewritten ENTRY, original grid, __tidal_ctl = 0
//   b/MASK     rewritten ENTRY, original grid, __tidal_ctl -> a partition with MASK (probe mode)
//   c-probe/MASK    ENTRY__tidal_reshaped, PROBE, key 0, grid = occupancy x allowed SMs
//   c-epoch/MASK    the clone in epoch mode (host-named reserved slot, epoch + 1 per launch)
//   c-static1/MASK  STATIC, workers covering the grid where they can (no slot memory touched)
//   c-static/MASK   STATIC with dynamic tickets after the workers' own chunks
//   c-wrap/E   epoch-mode launches at epochs 65534, 65535, then 1 after the host zeroed the
//              slot's claim and guard words
// MASK in all, sm0, half (SMs 0..n/2-1), odd; clones get launch.partition and __tidal_ctl = 0.
// For b and c also: exec_count[i] == 1 for every logical block, sum(sm_blocks) == logical,
// no block on an SM outside the mask unless violations > 0 (STATIC: at most the workers'
// own chunks plus one claimed chunk each), the probe slots all zero afterwards and the
// epoch slot in the state the launch must leave (the others unchanged).
// Prints one PASS/FAIL line per check and "N passed, N failed"; exit status 1 on any failure.
// (No mask flips while running, no empty mask and no flow-in: test/gpu/harness.cu covers
// those for the CUDA/Triton specs; this is the TVM-specific subset.)
//
// Build (no GPU needed to build; test/gpu/tvm_ptx.sh does it):
//   nvcc -std=c++17 -O2 -Iruntime -Iabi test/gpu/tvm/run_tvm.cu -o build-tvm-gpu/run_tvm -L/usr/local/cuda/lib64/stubs -lcuda
// Without a GPU, test/gpu/fake_libcuda.c exercises the plumbing (it runs no PTX; see
// test/gpu/README.md): clean must pass, FAKE_CUDA_BUG=diff|exec|twice|slot|epoch must fail.
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tidal_abi.h"
#include "../harness_common.h"

static int g_pass = 0, g_fail = 0;
static const uint32_t POISON = 0xA5C3E17Bu;

static void result(bool ok, const std::string &name, const std::string &check, const std::string &why = "")
{
    (ok ? g_pass : g_fail)++;
    printf("%s %s %s%s%s\n", ok ? "PASS" : "FAIL", name.c_str(), check.c_str(), why.empty() ? "" : ": ", why.c_str());
    fflush(stdout);
}

static std::string cuerr(CUresult r)
{
    const char *s = nullptr;
    cuGetErrorString(r, &s);
    return s ? s : "CUDA error " + std::to_string((int)r);
}

#define CK(x)                                                                           \
    do {                                                                                \
        CUresult r_ = (x);                                                              \
        if (r_ != CUDA_SUCCESS) { *err = std::string(#x) + ": " + cuerr(r_); return false; } \
    } while (0)

struct Param {
    bool out;
    size_t n;   // f32 elements
};
struct Launch {
    std::string name, stem, entry;
    unsigned grid[3], block[3], smem;
    std::vector<Param> params;
    uint64_t logical() const { return (uint64_t)grid[0] * grid[1] * grid[2]; }
};

static bool parse(const char *path, std::vector<Launch> *out)
{
    std::ifstream f(path);
    if (!f) { fprintf(stderr, "run_tvm: cannot read %s\n", path); return false; }
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream is(line);
        Launch L;
        is >> L.name >> L.stem >> L.entry >> L.grid[0] >> L.grid[1] >> L.grid[2] >> L.block[0] >> L.block[1] >>
            L.block[2] >> L.smem;
        std::string p;
        while (is >> p) {
            size_t a = p.find(':'), b = p.rfind(':');
            if (a == std::string::npos || a == b || p.substr(a + 1, b - a - 1) != "f32") {
                fprintf(stderr, "run_tvm: %s: unsupported parameter '%s'\n", L.name.c_str(), p.c_str());
                return false;
            }
            L.params.push_back(Param{p.substr(0, a) == "out", (size_t)strtoull(p.c_str() + b + 1, nullptr, 10)});
        }
        if (!is.eof() && is.fail()) { fprintf(stderr, "run_tvm: bad line: %s\n", line.c_str()); return false; }
        out->push_back(L);
    }
    return true;
}

static bool read_file(const std::string &path, std::string *s)
{
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    std::ostringstream o;
    o << f.rdbuf();
    *s = o.str();
    return true;
}

static bool load(const std::string &path, CUmodule *m, std::string *err)
{
    std::string text;
    if (!read_file(path, &text)) { *err = "cannot read " + path; return false; }
    char log[8192] = {0};
    CUjit_option o[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *v[] = {log, (void *)(uintptr_t)sizeof log};
    CUresult r = cuModuleLoadDataEx(m, text.c_str(), 2, o, v);
    if (r != CUDA_SUCCESS) { *err = "loading " + path + ": " + cuerr(r) + " " + log; return false; }
    return true;
}

static uint64_t g_seed = 20261130;
static CUstream g_stream;
static float rnd(uint64_t *s)
{
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    return (float)((*s >> 40) & 0xFFFFFF) / (float)(1 << 23) - 1.0f;   // [-1, 1)
}

struct Bufs {
    std::vector<CUdeviceptr> d;
    std::vector<std::vector<uint32_t>> init;   // host copy (inputs) or poison (outputs)
};

static bool alloc_bufs(const Launch &L, Bufs *B, std::string *err)
{
    uint64_t s = g_seed ^ std::hash<std::string>{}(L.name);
    if (!s) s = 1;
    for (const Param &p : L.params) {
        CUdeviceptr d;
        CK(cuMemAlloc(&d, p.n * 4));
        std::vector<uint32_t> h(p.n, POISON);
        if (!p.out)
            for (size_t i = 0; i < p.n; i++) { float f = rnd(&s); memcpy(&h[i], &f, 4); }
        B->d.push_back(d);
        B->init.push_back(std::move(h));
    }
    return true;
}

static bool reset_bufs(const Launch &L, Bufs &B, std::string *err)
{
    for (size_t i = 0; i < L.params.size(); i++) CK(cuMemcpyHtoD(B.d[i], B.init[i].data(), L.params[i].n * 4));
    return true;
}

static bool outputs(const Launch &L, Bufs &B, std::vector<std::vector<uint32_t>> *o, std::string *err)
{
    o->clear();
    for (size_t i = 0; i < L.params.size(); i++)
        if (L.params[i].out) {
            std::vector<uint32_t> h(L.params[i].n);
            CK(cuMemcpyDtoH(h.data(), B.d[i], h.size() * 4));
            o->push_back(std::move(h));
        }
    return true;
}

static std::string first_diff(const std::vector<std::vector<uint32_t>> &a, const std::vector<std::vector<uint32_t>> &b)
{
    for (size_t k = 0; k < a.size(); k++)
        for (size_t i = 0; i < a[k].size(); i++)
            if (a[k][i] != b[k][i]) {
                size_t n = 0;
                for (size_t j = i; j < a[k].size(); j++) n += a[k][j] != b[k][j];
                char m[160];
                snprintf(m, sizeof m, "output %zu differs at word %zu (0x%08x vs 0x%08x), %zu words differ", k, i,
                         a[k][i], b[k][i], n);
                return m;
            }
    return "";
}

static bool launch(CUfunction f, const unsigned grid[3], const Launch &L, Bufs &B, const tidal_launch *tl,
                   std::string *err)
{
    std::vector<void *> args;
    for (CUdeviceptr &d : B.d) args.push_back(&d);
    // a clone: its protocol words after the launch's dynamic shared memory, as libtidal
    // launches it (abi/tidal_abi.h, TIDAL_SH_*)
    tidal_launch tlc;
    if (tl) {
        tlc = *tl;
        tlc.sh_off = TIDAL_SH_OFFSET(L.smem);
        args.push_back(&tlc);
    }
    CK(cuLaunchKernel(f, grid[0], grid[1], grid[2], L.block[0], L.block[1], L.block[2],
                      tl ? TIDAL_CLONE_SMEM(L.smem) : L.smem, g_stream, args.data(), nullptr));
    CK(cuStreamSynchronize(g_stream));
    return true;
}

// The partition: 128-byte header + th::NSLOTS slots (probe and epoch slots, the epoch
// slots tagged TIDAL_SLOT_RESERVED once), 1024-byte aligned; exec_count and sm_blocks.
struct Part {
    CUdeviceptr raw = 0, p = 0, exec = 0, smb = 0;
    uint64_t logical = 0;
    th::Epochs epochs;
    CUdeviceptr slot(uint32_t index) const { return p + th::slot_offset(index); }
};

static bool part_make(Part *P, uint64_t logical, std::string *err)
{
    size_t bytes = th::partition_bytes();
    CK(cuMemAlloc(&P->raw, bytes + 1024));
    P->p = (P->raw + 1023) & ~(CUdeviceptr)1023;
    CK(cuMemsetD8(P->raw, 0, bytes + 1024));
    for (uint32_t k = 0; k < th::NEPOCH; k++) {
        tidal_slot s;
        th::epoch_slot_init(&s);
        CK(cuMemcpyHtoD(P->slot(th::epoch_slot_index(k)), &s, sizeof s));
    }
    CK(cuMemAlloc(&P->exec, logical * 4));
    CK(cuMemAlloc(&P->smb, TIDAL_MAX_SMS * 8));
    P->logical = logical;
    return true;
}

static bool part_arm(Part &P, const uint64_t mask[4], std::string *err)
{
    tidal_partition h;
    th::header_init(&h, mask, P.exec, P.smb);
    CK(cuMemcpyHtoD(P.p, &h, sizeof h));
    CK(cuMemsetD8(P.exec, 0, P.logical * 4));
    CK(cuMemsetD8(P.smb, 0, TIDAL_MAX_SMS * 8));
    return true;
}

static bool read_slots(Part &P, std::vector<tidal_slot> *v, std::string *err)
{
    v->resize(th::NSLOTS);
    CK(cuMemcpyDtoH(v->data(), P.slot(0), v->size() * sizeof(tidal_slot)));
    return true;
}

// The next epoch of epoch slot k (zeroing its claim and guard words before a wrap).
static bool take_epoch(Part &P, uint32_t k, uint32_t *epoch, std::string *err)
{
    if (P.epochs.needs_reset(k)) CK(cuMemsetD8(P.slot(th::epoch_slot_index(k)) + TIDAL_SLOT_OFF_CLAIM, 0, 16));
    *epoch = P.epochs.take(k);
    return true;
}

// After a b or c run: counters, violations, outside-mask blocks and the slot table.
// pl: the clone's plan (nullptr for b); before: the table before the launch.
static std::string part_check(Part &P, const uint64_t mask[4], const th::Plan *pl, const std::vector<tidal_slot> &before,
                              const th::SlotUse &use, std::string *err)
{
    tidal_partition h;
    if (cuMemcpyDtoH(&h, P.p, sizeof h) != CUDA_SUCCESS) return "reading the partition failed";
    std::vector<uint32_t> ex(P.logical);
    std::vector<uint64_t> smb(TIDAL_MAX_SMS);
    std::vector<tidal_slot> after;
    if (cuMemcpyDtoH(ex.data(), P.exec, P.logical * 4) != CUDA_SUCCESS ||
        cuMemcpyDtoH(smb.data(), P.smb, TIDAL_MAX_SMS * 8) != CUDA_SUCCESS || !read_slots(P, &after, err))
        return "reading the counters failed";
    std::string w;
    for (uint64_t i = 0; i < P.logical && w.empty(); i++)
        if (ex[i] != 1) w = "exec_count[" + std::to_string(i) + "] = " + std::to_string(ex[i]) + "; ";
    uint64_t sum = 0, outside = 0;
    for (int s = 0; s < TIDAL_MAX_SMS; s++) {
        sum += smb[s];
        if (!((mask[s / 64] >> (s % 64)) & 1)) outside += smb[s];
    }
    if (sum != P.logical) w += "sum(sm_blocks) = " + std::to_string(sum) + ", logical " + std::to_string(P.logical) + "; ";
    std::vector<uint32_t> repair;
    w += th::check_slots(before, after, use, &repair);
    for (uint32_t i : repair) {   // keep later runs independent of this one's leftovers
        tidal_slot s;
        if (th::is_epoch_index(i)) th::epoch_slot_init(&s);
        else memset(&s, 0, sizeof s);
        if (cuMemcpyHtoD(P.slot(i), &s, sizeof s) != CUDA_SUCCESS) w += "repairing the slot failed; ";
    }
    const uint64_t allowance = pl ? pl->outside_allowance() : 0;
    if (!h.violations && outside > allowance)
        w += std::to_string(outside) + " logical blocks on SMs outside the mask, no violations" +
             (allowance ? " (STATIC allows " + std::to_string(allowance) + ")" : "") + "; ";
    if (h.violations) fprintf(stderr, "  note: violations = %llu\n", (unsigned long long)h.violations);
    while (w.size() >= 2 && w.compare(w.size() - 2, 2, "; ") == 0) w.resize(w.size() - 2);
    return w;
}

static bool set_ctl(CUmodule m, CUdeviceptr value, std::string *err)
{
    CUdeviceptr g;
    size_t sz;
    CK(cuModuleGetGlobal(&g, &sz, m, TIDAL_CTL_SYMBOL));
    uint64_t v = value;
    CK(cuMemcpyHtoD(g, &v, 8));
    return true;
}

static void run_one(const Launch &L, const std::string &odir, const std::string &tdir, int nsm)
{
    std::string err;
    CUmodule om = nullptr, tm = nullptr;
    CUfunction of = nullptr, tf = nullptr, cf = nullptr;
    Bufs B;
    std::vector<std::vector<uint32_t>> ref, got;
    Part P;

    bool ok = load(odir + "/" + L.stem + ".ptx", &om, &err) && cuModuleGetFunction(&of, om, L.entry.c_str()) == CUDA_SUCCESS &&
              alloc_bufs(L, &B, &err) && reset_bufs(L, B, &err) && launch(of, L.grid, L, B, nullptr, &err) &&
              outputs(L, B, &ref, &err) && reset_bufs(L, B, &err) && launch(of, L.grid, L, B, nullptr, &err) &&
              outputs(L, B, &got, &err);
    if (ok && !(err = first_diff(ref, got)).empty()) ok = false, err = "not deterministic: " + err;
    if (ok)
        for (auto &o : ref)
            for (uint32_t w : o)
                if (w == POISON && ok) ok = false, err = "an output word was never written";
    result(ok, L.name, "ref", err);
    if (!ok) return;

    CUdeviceptr g;
    size_t sz;
    ok = load(tdir + "/" + L.stem + ".ptx", &tm, &err);
    if (ok && cuModuleGetGlobal(&g, &sz, tm, TIDAL_CTL_SYMBOL) != CUDA_SUCCESS) ok = false, err = "no __tidal_ctl (not rewritten?)";
    if (ok && cuModuleGetGlobal(&g, &sz, tm, TIDAL_MARKER_SYMBOL) != CUDA_SUCCESS) ok = false, err = "no marker";
    if (ok && cuModuleGetFunction(&tf, tm, L.entry.c_str()) != CUDA_SUCCESS) ok = false, err = "no " + L.entry;
    if (ok && cuModuleGetFunction(&cf, tm, (L.entry + TIDAL_RESHAPED_SUFFIX).c_str()) != CUDA_SUCCESS)
        ok = false, err = "no " + L.entry + TIDAL_RESHAPED_SUFFIX;
    result(ok, L.name, "module", err);
    if (!ok) return;

    // outputs against the reference; problems: what else went wrong; info: printed either way
    auto compare = [&](const std::string &check, const std::string &problems, const std::string &info) {
        std::string e;
        bool k = outputs(L, B, &got, &e);
        if (k && !(e = first_diff(ref, got)).empty()) k = false;
        if (k && !problems.empty()) k = false, e = problems;
        result(k, L.name, check, k ? info : e + (info.empty() ? "" : " [" + info + "]"));
    };

    // a
    err.clear();
    ok = set_ctl(tm, 0, &err) && reset_bufs(L, B, &err) && launch(tf, L.grid, L, B, nullptr, &err);
    if (!ok) { result(false, L.name, "a", err); return; }
    compare("a", "", "");

    if (!part_make(&P, L.logical(), &err)) { result(false, L.name, "partition", err); return; }
    int occ = 0;
    if (cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, cf, L.block[0] * L.block[1] * L.block[2], TIDAL_CLONE_SMEM(L.smem)) !=
            CUDA_SUCCESS || occ < 1)
        occ = 1;
    const uint32_t wrap_slot = th::epoch_slot_index(th::E_WRAP);

    // One b or clone run with the given mask; clone runs take the next epoch of `ek`.
    auto run_case = [&](const std::string &check, bool clone, th::CloneMode cm, const uint64_t mask[4], int allowed,
                        uint32_t ek) {
        err.clear();
        std::vector<tidal_slot> before;
        th::Plan pl;
        th::SlotUse use;
        bool ok2 = part_arm(P, mask, &err) && reset_bufs(L, B, &err) && read_slots(P, &before, &err);
        if (ok2 && !clone) {
            ok2 = set_ctl(tm, P.p, &err) && launch(tf, L.grid, L, B, nullptr, &err);
        } else if (ok2) {
            uint32_t epoch = 0;
            const uint32_t slot = th::epoch_slot_index(ek);
            bool probe = cm == th::C_PROBE || cm == th::C_PROBE_STATIC;
            if (!probe) ok2 = take_epoch(P, ek, &epoch, &err);
            pl = th::plan_clone(cm, occ, nsm, allowed, L.grid, P.p, slot, epoch);
            if (pl.touches_epoch_slot()) {
                use.slot = (int)slot;
                use.epoch = epoch;
                use.total = pl.total();
                use.base = pl.tl.base;
                use.chunk = pl.tl.chunk;
                use.phys = pl.workers;
            }
            unsigned g3[3] = {pl.workers, 1, 1};
            ok2 = ok2 && set_ctl(tm, 0, &err) && launch(cf, g3, L, B, &pl.tl, &err);
        }
        if (!ok2) { result(false, L.name, check, err); return false; }
        compare(check, part_check(P, mask, clone ? &pl : nullptr, before, use, &err), clone ? pl.describe() : "");
        return true;
    };

    const char *masks[] = {"all", "sm0", "half", "odd"};
    const struct { bool clone; th::CloneMode cm; const char *name; } cases[] = {
        {false, th::C_PROBE, "b"}, {true, th::C_PROBE, "c-probe"}, {true, th::C_EPOCH, "c-epoch"},
        {true, th::C_STATIC1, "c-static1"}, {true, th::C_STATIC, "c-static"}};
    uint64_t all_mask[4] = {0, 0, 0, 0};
    for (int s = 0; s < nsm && s < TIDAL_MAX_SMS; s++) all_mask[s / 64] |= 1ull << (s % 64);
    for (auto &c : cases)
        for (const char *mn : masks) {
            uint64_t mask[4] = {0, 0, 0, 0};
            int allowed = 0;
            for (int s = 0; s < nsm && s < TIDAL_MAX_SMS; s++) {
                bool on = !strcmp(mn, "all") || (!strcmp(mn, "sm0") && s == 0) || (!strcmp(mn, "half") && s < (nsm + 1) / 2) ||
                          (!strcmp(mn, "odd") && (s & 1));
                if (on) mask[s / 64] |= 1ull << (s % 64), allowed++;
            }
            if (!run_case(std::string(c.name) + "/" + mn, c.clone, c.cm, mask, allowed, th::E_MAIN)) return;
        }
    // c-wrap: the slot's last launch was epoch 65533 and left stale words
    tidal_slot seed;
    th::epoch_slot_init(&seed);
    seed.claim = (65533ull << TIDAL_EPOCH_SHIFT) | 0x00ABCDEull;
    seed.guard = (65533ull << TIDAL_EPOCH_SHIFT) | (77ull << TIDAL_GUARD_ARRIVED_SHIFT) | 5;
    if (cuMemcpyHtoD(P.slot(wrap_slot), &seed, sizeof seed) != CUDA_SUCCESS) { result(false, L.name, "c-wrap", "seeding"); return; }
    P.epochs.last[th::E_WRAP] = 65533;
    for (const char *e : {"65534", "65535", "1"})
        if (!run_case(std::string("c-wrap/") + e, true, th::C_EPOCH, all_mask, nsm, th::E_WRAP)) return;
    set_ctl(tm, 0, &err);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: run_tvm ORIG_DIR TIDAL_DIR LAUNCH_TXT [--only NAME,...] [--seed N]\n");
        return 2;
    }
    std::string only;
    for (int i = 4; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc) only = "," + std::string(argv[++i]) + ",";
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) g_seed = strtoull(argv[++i], nullptr, 0);
        else { fprintf(stderr, "run_tvm: unknown option %s\n", argv[i]); return 2; }
    }
    std::vector<Launch> ls;
    if (!parse(argv[3], &ls)) return 2;
    CUresult r = cuInit(0);
    CUdevice dev;
    CUcontext ctx;
    if (r != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
        cuCtxSetCurrent(ctx) != CUDA_SUCCESS || cuStreamCreate(&g_stream, 0) != CUDA_SUCCESS) {
        fprintf(stderr, "run_tvm: no CUDA device (%s)\n", cuerr(r).c_str());
        printf("0 passed, 1 failed\n");
        return 1;
    }
    int nsm = 0, maj = 0, min = 0;
    char dname[256] = {0};
    cuDeviceGetAttribute(&nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    cuDeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cuDeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    cuDeviceGetName(dname, sizeof dname, dev);
    printf("device: %s, sm_%d%d, %d SMs; orig %s, tidal %s\n", dname, maj, min, nsm, argv[1], argv[2]);
    for (const Launch &L : ls) {
        if (!only.empty() && only.find("," + L.name + ",") == std::string::npos) continue;
        run_one(L, argv[1], argv[2], nsm);
    }
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
