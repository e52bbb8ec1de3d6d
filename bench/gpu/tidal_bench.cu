// tidal benchmark (H200): rewritten kernels against the unmodified ones in the
// same run, ABI v4 (abi/tidal_abi.h). Usage: tidal_bench ORIG.ptx TIDAL.ptx [tiny]
//   0. per launch (tiny: 1 and 264 blocks of 128 threads, one atomic each): original,
//      case a, case b, c-probe, c-epoch, c-static, (i) 2000 back-to-back launches on one
//      stream and (ii) a CUDA graph of 200 launches replayed; us per launch, ratios and
//      differences against the original. `tiny` stops after this section.
//   1. overhead, full mask: original vs rewritten in launch cases a, b, c-probe, c-epoch
//   2. LS request (20 kernels x 264 blocks) on 72 SMs: tidal case b / c-probe / c-epoch vs
//      the unmodified kernels on a 72-SM green context; inside that green context: case b,
//      c-static (the workers cover the grid: no protocol memory operation), c-epoch
//   3. re-mask reaction time on a running kernel (c-epoch and c-probe), timestamped with
//      %globaltimer
// Medians of >= 9 runs; ratios are rewritten / original.
//
// Clone modes: c-probe = TIDAL_LAUNCH_PROBE, key 0 (slot found by %gridid, reset at the
// end); c-epoch = epoch mode, dynamic (a slot of its own for the stream, tagged
// TIDAL_SLOT_RESERVED, epoch + 1 per launch, the slot's claim and guard words zeroed
// before the epoch would wrap); c-static = TIDAL_LAUNCH_STATIC with base = workers x chunk.
// No HIST / EXEC: the counters stay off, as in production.
#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include "tidal_abi.h"

// Dynamic shared memory of a launch of f: these kernels use none of their own; a clone
// carries its protocol words there (abi/tidal_abi.h, TIDAL_SH_*: sh_off 0, as plan() leaves it).
static unsigned dyn_smem(CUfunction f) {
  const char* n = nullptr;
  if (cuFuncGetName(&n, f) != CUDA_SUCCESS || !n) return 0;
  size_t l = strlen(n), k = strlen(TIDAL_RESHAPED_SUFFIX);
  return l > k && !strcmp(n + l - k, TIDAL_RESHAPED_SUFFIX) ? TIDAL_CLONE_SMEM(0) : 0;
}

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_; cuGetErrorString(r_, &s_); \
  fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)

static char* slurp(const char* p) {
  FILE* f = fopen(p, "rb"); if (!f) { perror(p); exit(1); }
  fseek(f, 0, SEEK_END); long n = ftell(f); rewind(f);
  char* b = (char*)malloc(n + 1); if (fread(b, 1, n, f) != (size_t)n) exit(1); b[n] = 0; fclose(f); return b;
}
static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

// ------------------------------------------------------------------ partitions
// NPROBE probe slots and NEPOCH epoch slots (one per stream that launches clones in
// epoch mode). With probe_base in the header the epoch slots come first.
static const unsigned NPROBE = 128, NEPOCH = 4, NSLOT = NPROBE + NEPOCH;
#ifdef TIDAL_PARTITION_OFF_PROBE_BASE
static const unsigned EPOCH_FIRST = 0, PROBE_FIRST = NEPOCH;
#else
static const unsigned EPOCH_FIRST = NPROBE, PROBE_FIRST = 0;
#endif
enum { E_MAIN = 0, E_GRAPH = 1, E_GREEN = 2 };

static void header_init(tidal_partition* p, int lo, int hi) {
  memset(p, 0, sizeof *p);
  for (int s = lo; s < hi; s++) p->mask[s / 64] |= 1ull << (s % 64);
  p->slot_mask = NPROBE - 1;
#ifdef TIDAL_PARTITION_OFF_PROBE_BASE
  p->probe_base = PROBE_FIRST;
#endif
}
// Zeroed once; the epoch slots' tags written once.
static CUdeviceptr partition_alloc(int lo, int hi) {
  CUdeviceptr p; CK(cuMemAlloc(&p, TIDAL_PARTITION_BYTES(NSLOT))); CK(cuMemsetD8(p, 0, TIDAL_PARTITION_BYTES(NSLOT)));
  tidal_partition h; header_init(&h, lo, hi); CK(cuMemcpyHtoD(p, &h, sizeof h));
  unsigned long long tag = TIDAL_SLOT_RESERVED;
  for (unsigned k = 0; k < NEPOCH; k++) CK(cuMemcpyHtoD(p + TIDAL_PARTITION_HEADER + (EPOCH_FIRST + k) * (size_t)TIDAL_SLOT_BYTES, &tag, 8));
  return p;
}

// The host's epochs of one epoch slot: next() is one more than the last launch; before
// the sequence would pass 65535, make_room() zeroes the slot's claim and guard words
// (synchronously, outside any timed region) and restarts it at 1.
struct EpochSlot {
  CUdeviceptr part = 0; unsigned index = 0; unsigned last = 0;
  CUdeviceptr words() const { return part + TIDAL_PARTITION_HEADER + (size_t)index * TIDAL_SLOT_BYTES + TIDAL_SLOT_OFF_CLAIM; }
  void make_room(unsigned n) {   // the next n launches must not wrap (no launch of the slot running)
    if (last + n <= TIDAL_EPOCH_MASK) return;
    CK(cuCtxSynchronize()); CK(cuMemsetD8(words(), 0, 16)); last = 0;
  }
  unsigned next() { if (last >= TIDAL_EPOCH_MASK) { fprintf(stderr, "epoch wrap without make_room\n"); exit(1); } return ++last; }
};

static CUmodule mo, mr;
static CUdeviceptr part, gctl;
static int nsm;

static void set_mask(int lo, int hi) { tidal_partition h; header_init(&h, lo, hi); CK(cuMemcpyHtoD(part, &h, sizeof h)); }
static void attach(bool on) { unsigned long long v = on ? part : 0; CK(cuMemcpyHtoD(gctl, &v, 8)); }
static unsigned chunk_clamp(unsigned long long c) { return (unsigned)std::min<unsigned long long>(TIDAL_MAX_CHUNK, std::max<unsigned long long>(1, c)); }

enum Mode { ORIG, REWRITTEN, C_PROBE, C_EPOCH, C_STATIC };
// A clone launch: workers, chunk and base by mode (as libtidal plans them).
static tidal_launch plan(Mode m, CUdeviceptr p, unsigned gx, unsigned gy, unsigned chunk, unsigned workers, const EpochSlot* es) {
  tidal_launch tl; memset(&tl, 0, sizeof tl);
  tl.partition = p; tl.grid[0] = gx; tl.grid[1] = gy; tl.grid[2] = 1; tl.chunk = chunk;
  if (m == C_PROBE) tl.flags = TIDAL_LAUNCH_PROBE;
  if (m == C_STATIC) { tl.flags = TIDAL_LAUNCH_STATIC; tl.base = workers * chunk; }
  if (m != C_PROBE && es) tl.slot = es->index;
  return tl;
}

struct Launch {
  const char* name; unsigned gx, gy, bx, by; std::vector<void*> args;
};

static EpochSlot g_main;   // the launch stream's epoch slot

// Times one launch configuration (reps single launches between events).
static float time_launch(const Launch& L, Mode which, CUstream st, int reps) {
  CUfunction f;
  char clone[256]; snprintf(clone, sizeof clone, "%s%s", L.name, TIDAL_RESHAPED_SUFFIX);
  bool c = which >= C_PROBE;
  CK(cuModuleGetFunction(&f, which == ORIG ? mo : mr, c ? clone : L.name));
  unsigned gx = L.gx, gy = L.gy; std::vector<void*> args = L.args; tidal_launch tl{};
  if (c) {
    int occ; CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, f, L.bx * L.by, dyn_smem(f)));
    unsigned total = L.gx * L.gy, workers = std::min<unsigned>(total, (unsigned)(occ * nsm));
    tl = plan(which, part, L.gx, L.gy, chunk_clamp(total / (workers * 16)), workers, &g_main);
    gx = workers; gy = 1; args.push_back(&tl);
    g_main.make_room(reps + 3);
  }
  CUevent e0, e1; CK(cuEventCreate(&e0, 0)); CK(cuEventCreate(&e1, 0));
  std::vector<float> v;
  const unsigned sm = dyn_smem(f);
  for (int r = 0; r < reps + 3; r++) {
    if (which == C_EPOCH) tl.epoch = g_main.next();
    CK(cuEventRecord(e0, st));
    CK(cuLaunchKernel(f, gx, gy, 1, L.bx, L.by, 1, sm, st, args.data(), 0));
    CK(cuEventRecord(e1, st)); CK(cuEventSynchronize(e1));
    float ms; CK(cuEventElapsedTime(&ms, e0, e1)); if (r >= 3) v.push_back(ms);
  }
  CK(cuEventDestroy(e0)); CK(cuEventDestroy(e1));
  return median(v);
}

int main(int argc, char** argv) {
  if (argc < 3) { fprintf(stderr, "usage: tidal_bench ORIG.ptx TIDAL.ptx [tiny]\n"); return 2; }
  bool tiny_only = argc > 3 && !strcmp(argv[3], "tiny");
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0));
  CUcontext pctx; CK(cuDevicePrimaryCtxRetain(&pctx, dev)); CK(cuCtxSetCurrent(pctx));
  CK(cuDeviceGetAttribute(&nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  char* orig_src = slurp(argv[1]); char* tidal_src = slurp(argv[2]);
  CK(cuModuleLoadData(&mo, orig_src)); CK(cuModuleLoadData(&mr, tidal_src));
  part = partition_alloc(0, nsm);
  g_main.part = part; g_main.index = EPOCH_FIRST + E_MAIN;
  EpochSlot g_graph; g_graph.part = part; g_graph.index = EPOCH_FIRST + E_GRAPH;
  size_t gsz; CK(cuModuleGetGlobal(&gctl, &gsz, mr, TIDAL_CTL_SYMBOL));
  CUstream st; CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
  const int REPS = 21;

  // ---------------------------------------------------------------- 0. per launch
  // tiny (one atomic per block): what a launch costs (GPU launch gap + tidal's per-launch
  // protocol), (i) end to end over 2000 back-to-back launches, (ii) replaying a graph of
  // 200 launches (no host in the loop: device-bound, so the difference to the original is
  // the device time the protocol adds). Each median of 9 (a 10th, first, run warms up).
  {
    const int N_EAGER = 2000, N_GRAPH = 200, RUNS = 10;
    printf("== per launch: tiny (128 threads per block, one atomic each), us per launch, median of 9\n");
    printf("   (i) %d back-to-back launches on one stream, end to end; (ii) a CUDA graph of %d launches replayed\n", N_EAGER, N_GRAPH);
    printf("   c-probe: PROBE, key 0; c-epoch: epoch mode, dynamic (in the graph: a memset node zeroes the slot's\n"
           "   claim and guard words, then epochs 1..%d); c-static: STATIC, workers = blocks, base = blocks (no slot memory)\n", N_GRAPH);
    printf("%-7s %-9s %9s %7s %8s %9s %7s %8s\n", "blocks", "variant", "(i) us", "ratio", "diff", "(ii) us", "ratio", "diff");
    CUdeviceptr cnt; CK(cuMemAlloc(&cnt, 64 * 4)); CK(cuMemsetD32(cnt, 0, 64));
    CUfunction fto, ftr, ftc;
    CK(cuModuleGetFunction(&fto, mo, "tiny")); CK(cuModuleGetFunction(&ftr, mr, "tiny"));
    CK(cuModuleGetFunction(&ftc, mr, "tiny" TIDAL_RESHAPED_SUFFIX));
    CUfunction ftn = nullptr;   // the clone of the default rewrite (TIDAL_BENCH_DEFAULT_PTX)
    if (const char* dp = getenv("TIDAL_BENCH_DEFAULT_PTX")) {
      CUmodule mn; char* src = slurp(dp);
      CK(cuModuleLoadData(&mn, src));
      CK(cuModuleGetFunction(&ftn, mn, "tiny" TIDAL_RESHAPED_SUFFIX));
    }
    set_mask(0, nsm);
    CUevent e0, e1; CK(cuEventCreate(&e0, 0)); CK(cuEventCreate(&e1, 0));
    for (unsigned blocks : {1u, 264u}) {
      struct V { const char* name; Mode m; bool ctl; float eager, graph; bool nb; };
      // c-epoch* / c-static*: the clone from the module rewritten the default way (no case b:
      // no __tidal_ctl, whose module-scope .const costs every kernel of the module)
      V vs[] = {{"original", ORIG, false, 0, 0, false}, {"case a", REWRITTEN, false, 0, 0, false},
                {"case b", REWRITTEN, true, 0, 0, false}, {"c-probe", C_PROBE, false, 0, 0, false},
                {"c-epoch", C_EPOCH, false, 0, 0, false}, {"c-static", C_STATIC, false, 0, 0, false},
                {"c-epoch*", C_EPOCH, false, 0, 0, true}, {"c-static*", C_STATIC, false, 0, 0, true},
                {"original", ORIG, false, 0, 0, false}};   // the original again last: the baseline is the better of the two
      for (V& v : vs) {
        if (v.nb && !ftn) continue;
        CUfunction f = v.nb ? ftn : v.m == ORIG ? fto : v.m == REWRITTEN ? ftr : ftc;
        attach(v.ctl);
        // workers = blocks: one logical block each (c-static: covering, base = blocks)
        tidal_launch tl = plan(v.m, part, blocks, 1, 1, blocks, &g_main);
        void* args[] = {&cnt, &tl};
        const unsigned sm = dyn_smem(f);
        // (i) eager
        std::vector<float> t;
        for (int r = 0; r < RUNS; r++) {
          const bool epochs = v.m == C_EPOCH || v.m == C_STATIC;   // c-static covers the grid: its epoch is never used
          if (epochs) g_main.make_room(N_EAGER);
          CK(cuEventRecord(e0, st));
          for (int k = 0; k < N_EAGER; k++) {
            if (epochs) tl.epoch = g_main.next();
            CK(cuLaunchKernel(f, blocks, 1, 1, 128, 1, 1, sm, st, args, 0));
          }
          CK(cuEventRecord(e1, st)); CK(cuEventSynchronize(e1));
          float ms; CK(cuEventElapsedTime(&ms, e0, e1)); if (r >= 1) t.push_back(ms * 1000.f / N_EAGER);
        }
        v.eager = median(t);
        // (ii) graph
        tidal_launch gl = plan(v.m, part, blocks, 1, 1, blocks, &g_graph);
        std::vector<tidal_launch> tls(N_GRAPH, gl);
        CUgraph g; CUgraphExec ge;
        CK(cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        if (v.m == C_EPOCH) CK(cuMemsetD8Async(g_graph.words(), 0, 16, st));
        for (int k = 0; k < N_GRAPH; k++) {
          // c-epoch: epochs 1..200 after the memset node; c-static (covering: no slot memory) and
          // the probe modes never read it
          tls[k].epoch = v.m == C_EPOCH ? (unsigned)(k + 1) : v.m == C_STATIC ? 1u : 0u;
          void* ga[] = {&cnt, &tls[k]};
          CK(cuLaunchKernel(f, blocks, 1, 1, 128, 1, 1, sm, st, ga, 0));
        }
        CK(cuStreamEndCapture(st, &g));
        CK(cuGraphInstantiate(&ge, g, 0));
        t.clear();
        for (int r = 0; r < RUNS; r++) {
          CK(cuEventRecord(e0, st)); CK(cuGraphLaunch(ge, st)); CK(cuEventRecord(e1, st)); CK(cuEventSynchronize(e1));
          float ms; CK(cuEventElapsedTime(&ms, e0, e1)); if (r >= 1) t.push_back(ms * 1000.f / N_GRAPH);
        }
        v.graph = median(t);
        CK(cuGraphExecDestroy(ge)); CK(cuGraphDestroy(g));
      }
      const int nv = sizeof vs / sizeof vs[0];
      float b_e = std::min(vs[0].eager, vs[nv - 1].eager), b_g = std::min(vs[0].graph, vs[nv - 1].graph);
      for (int i = 0; i < nv; i++) {
        const V& v = vs[i];
        if (v.nb && !ftn) continue;
        printf("%-7u %-9s %9.2f %7.3f %+8.2f %9.2f %7.3f %+8.2f\n", blocks, i == nv - 1 ? "original'" : v.name, v.eager, v.eager / b_e,
               v.eager - b_e, v.graph, v.graph / b_g, v.graph - b_g);
      }
    }
    printf("(original' = the original measured again after the others; ratios and diffs are against the better of the two;\n"
           " * = the clone of the default rewrite: no case b, no __tidal_ctl in the module)\n");
    attach(false);
    CK(cuEventDestroy(e0)); CK(cuEventDestroy(e1));
    CK(cuMemFree(cnt));
    if (tiny_only) return 0;
    printf("\n");
  }

  // ---------------------------------------------------------------- 1. overhead
  int n = 1 << 28; float a = 1.5f; CUdeviceptr x, y; CK(cuMemAlloc(&x, n * 4ull)); CK(cuMemAlloc(&y, n * 4ull));
  CK(cuMemsetD32(x, 0x3f800000, n)); CK(cuMemsetD32(y, 0x40000000, n));
  int n4 = n / 4; int iters = 4096, fblocks = nsm * 64; CUdeviceptr fo; CK(cuMemAlloc(&fo, 1 << 20));
  int nsum = 1 << 26;
  int M = 2048; CUdeviceptr A, B, C; CK(cuMemAlloc(&A, M * M * 4ull)); CK(cuMemAlloc(&B, M * M * 4ull)); CK(cuMemAlloc(&C, M * M * 4ull));
  CK(cuMemsetD32(A, 0x3f800000, M * M)); CK(cuMemsetD32(B, 0x3f000000, M * M));
  std::vector<Launch> ls = {
    {"saxpy", (unsigned)(n / 256), 1, 256, 1, {&n, &a, &x, &y}},
    {"copy4", (unsigned)(n4 / 256), 1, 256, 1, {&n4, &x, &y}},
    {"fma_loop", (unsigned)fblocks, 1, 256, 1, {&fo, &iters}},
    {"block_sum", (unsigned)(nsum / 256), 1, 256, 1, {&x, &y, &nsum}},
    {"sgemm", (unsigned)(M / 32), (unsigned)(M / 32), 32, 32, {&M, &M, &M, &A, &B, &C}},
  };
  printf("== overhead, full mask (median of %d, ms; ratio to the original; clones: workers = occupancy x SMs)\n", REPS);
  printf("%-10s %9s %9s %7s %9s %7s %9s %7s %9s %7s\n", "kernel", "original", "case a", "ratio", "case b", "ratio", "c-probe",
         "ratio", "c-epoch", "ratio");
  set_mask(0, nsm);
  double geo_a = 0, geo_b = 0, geo_p = 0, geo_e = 0;
  for (auto& L : ls) {
    float t0 = time_launch(L, ORIG, st, REPS);
    attach(false); float ta = time_launch(L, REWRITTEN, st, REPS);
    attach(true); float tb = time_launch(L, REWRITTEN, st, REPS);
    attach(false); float tp = time_launch(L, C_PROBE, st, REPS); float te = time_launch(L, C_EPOCH, st, REPS);
    float t0b = time_launch(L, ORIG, st, REPS); t0 = std::min(t0, t0b);
    printf("%-10s %9.3f %9.3f %7.3f %9.3f %7.3f %9.3f %7.3f %9.3f %7.3f\n", L.name, t0, ta, ta / t0, tb, tb / t0, tp, tp / t0, te,
           te / t0);
    geo_a += log(ta / t0); geo_b += log(tb / t0); geo_p += log(tp / t0); geo_e += log(te / t0);
  }
  double nl = (double)ls.size();
  printf("%-10s %9s %9s %7.3f %9s %7.3f %9s %7.3f %9s %7.3f\n", "geomean", "", "", exp(geo_a / nl), "", exp(geo_b / nl), "",
         exp(geo_p / nl), "", exp(geo_e / nl));

  // ---------------------------------------------------------------- 2. LS request
  printf("\n== LS request: 20 x ls_fma (264 blocks x 256 threads, 2048 iterations), median of 41 (ms)\n");
  int lsit = 2048; void* lsargs[] = {&fo, &lsit};
  CUfunction fo_ls, fr_ls, fc_ls; CK(cuModuleGetFunction(&fo_ls, mo, "ls_fma")); CK(cuModuleGetFunction(&fr_ls, mr, "ls_fma"));
  CK(cuModuleGetFunction(&fc_ls, mr, "ls_fma" TIDAL_RESHAPED_SUFFIX));
  int occ; CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fc_ls, 256, dyn_smem(fc_ls)));
  // es / tl: an epoch-mode launch takes the slot's next epoch per launch
  auto request = [&](CUfunction f, unsigned grid, void** args, CUstream s, EpochSlot* es = nullptr, tidal_launch* tl = nullptr) {
    CUevent e0, e1; CK(cuEventCreate(&e0, 0)); CK(cuEventCreate(&e1, 0)); std::vector<float> v;
    if (es) es->make_room(44 * 20);
    const unsigned sm = dyn_smem(f);
    for (int r = 0; r < 44; r++) {
      CK(cuEventRecord(e0, s));
      for (int k = 0; k < 20; k++) {
        if (es) tl->epoch = es->next();
        CK(cuLaunchKernel(f, grid, 1, 1, 256, 1, 1, sm, s, args, 0));
      }
      CK(cuEventRecord(e1, s)); CK(cuEventSynchronize(e1)); float ms; CK(cuEventElapsedTime(&ms, e0, e1)); if (r >= 3) v.push_back(ms);
    }
    CK(cuEventDestroy(e0)); CK(cuEventDestroy(e1));
    return median(v);
  };
  float ls_all = request(fo_ls, 264, lsargs, st);
  const int K = 72;
  set_mask(0, K); attach(true);
  float ls_b = request(fr_ls, 264, lsargs, st);
  attach(false);
  // occupancy x the 72 SMs (capped at the grid, as libtidal does), and occupancy x all SMs
  // uncapped (as before ABI v3: the workers beyond 264 find no work and leave)
  unsigned w_alloc = std::min(264u, (unsigned)(occ * K)), w_all = (unsigned)(occ * nsm);
  tidal_launch tlp = plan(C_PROBE, part, 264, 1, 1, 0, nullptr), tle = plan(C_EPOCH, part, 264, 1, 1, 0, &g_main);
  void* pargs[] = {&fo, &lsit, &tlp}; void* eargs[] = {&fo, &lsit, &tle};
  float ls_p_alloc = request(fc_ls, w_alloc, pargs, st), ls_p_all = request(fc_ls, w_all, pargs, st);
  float ls_e_alloc = request(fc_ls, w_alloc, eargs, st, &g_main, &tle), ls_e_all = request(fc_ls, w_all, eargs, st, &g_main, &tle);
  // green context of the same size
  CUdevResource res, split[1], rem; unsigned nb = 1; float ls_green = -1, ls_green_b = -1, ls_green_s = -1, ls_green_e = -1;
  unsigned green_sms = 0, w_green = 0, w_green_s = 0;
  if (cuDeviceGetDevResource(dev, &res, CU_DEV_RESOURCE_TYPE_SM) == CUDA_SUCCESS &&
      cuDevSmResourceSplitByCount(split, &nb, &res, &rem, 0, K) == CUDA_SUCCESS) {
    CUdevResourceDesc desc; CK(cuDevResourceGenerateDesc(&desc, split, 1));
    CUgreenCtx g; CK(cuGreenCtxCreate(&g, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    CUcontext gc; CK(cuCtxFromGreenCtx(&gc, g)); CK(cuCtxSetCurrent(gc));
    CUmodule mg; CK(cuModuleLoadData(&mg, orig_src)); CUfunction fg; CK(cuModuleGetFunction(&fg, mg, "ls_fma"));
    CUdeviceptr go; CK(cuMemAlloc(&go, 1 << 20)); void* gargs[] = {&go, &lsit};
    CUstream gs; CK(cuGreenCtxStreamCreate(&gs, g, CU_STREAM_NON_BLOCKING, 0));
    green_sms = split[0].sm.smCount;
    ls_green = request(fg, 264, gargs, gs);
    // tidal inside the green context: hardware placement by the green context,
    // the live mask on top (here all SMs, so this measures tidal's own cost)
    CUmodule mrg; CK(cuModuleLoadData(&mrg, tidal_src));
    CUfunction frg, fcg; CK(cuModuleGetFunction(&frg, mrg, "ls_fma")); CK(cuModuleGetFunction(&fcg, mrg, "ls_fma" TIDAL_RESHAPED_SUFFIX));
    CUdeviceptr pg = partition_alloc(0, nsm);
    EpochSlot g_green; g_green.part = pg; g_green.index = EPOCH_FIRST + E_GREEN;
    CUdeviceptr gctl_g; size_t gs_sz; CK(cuModuleGetGlobal(&gctl_g, &gs_sz, mrg, TIDAL_CTL_SYMBOL));
    unsigned long long pgv = pg; CK(cuMemcpyHtoD(gctl_g, &pgv, 8));
    int occg; CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&occg, fcg, 256, dyn_smem(fcg)));
    ls_green_b = request(frg, 264, gargs, gs);
    // c-static: workers = min(occupancy x green SMs, 264), chunk 1: covering when they reach 264
    w_green_s = std::min(264u, (unsigned)(occg * green_sms));
    tidal_launch tls = plan(C_STATIC, pg, 264, 1, 1, w_green_s, &g_green);
    void* sargs[] = {&go, &lsit, &tls};
    ls_green_s = request(fcg, w_green_s, sargs, gs, &g_green, &tls);
    w_green = w_green_s;
    tidal_launch tlg = plan(C_EPOCH, pg, 264, 1, 1, 0, &g_green); void* gcargs[] = {&go, &lsit, &tlg};
    ls_green_e = request(fcg, w_green, gcargs, gs, &g_green, &tlg);
    CK(cuCtxSetCurrent(pctx));
  }
  printf("unmodified, all %d SMs:                    %.3f\n", nsm, ls_all);
  printf("unmodified, green context (%u SMs):        %.3f\n", green_sms, ls_green);
  printf("tidal case b (original grid), SMs 0..%d:   %.3f  (%.3fx green)\n", K - 1, ls_b, ls_b / ls_green);
  printf("tidal c-probe, %u workers, SMs 0..%d:      %.3f  (%.3fx green)\n", w_alloc, K - 1, ls_p_alloc, ls_p_alloc / ls_green);
  printf("tidal c-probe, %u workers, SMs 0..%d:      %.3f  (%.3fx green)\n", w_all, K - 1, ls_p_all, ls_p_all / ls_green);
  printf("tidal c-epoch, %u workers, SMs 0..%d:      %.3f  (%.3fx green)\n", w_alloc, K - 1, ls_e_alloc, ls_e_alloc / ls_green);
  printf("tidal c-epoch, %u workers, SMs 0..%d:      %.3f  (%.3fx green)\n", w_all, K - 1, ls_e_all, ls_e_all / ls_green);
  printf("tidal case b inside the green context:      %.3f  (%.3fx green)\n", ls_green_b, ls_green_b / ls_green);
  printf("tidal c-static inside the green context:    %.3f  (%.3fx green; %u workers, base %u of 264%s)\n", ls_green_s,
         ls_green_s / ls_green, w_green_s, w_green_s, w_green_s >= 264 ? ": covering, no slot memory" : "");
  printf("tidal c-epoch inside the green context:     %.3f  (%.3fx green; %u workers)\n", ls_green_e, ls_green_e / ls_green, w_green);

  // ---------------------------------------------------------------- 3. reaction
  printf("\n== re-mask reaction: all SMs -> SMs 0..65 while a kernel runs (GPU %%globaltimer)\n");
  CUfunction fstamp, fflip; CK(cuModuleGetFunction(&fstamp, mr, "stamp" TIDAL_RESHAPED_SUFFIX)); CK(cuModuleGetFunction(&fflip, mo, "flip_mask"));
  int socc; CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&socc, fstamp, 128, dyn_smem(fstamp)));
  unsigned nlog = nsm * socc * 400; int sit = 1000; /* ~400 rounds of short blocks */
  CUdeviceptr tstart, tsm, sink, neww, flipped; CK(cuMemAlloc(&tstart, nlog * 8ull)); CK(cuMemAlloc(&tsm, nlog * 4ull));
  CK(cuMemAlloc(&sink, 64)); CK(cuMemAlloc(&neww, 32)); CK(cuMemAlloc(&flipped, 8));
  unsigned long long nw[4] = {0, 0, 0, 0}; for (int s = 0; s < 66; s++) nw[s / 64] |= 1ull << (s % 64);
  CK(cuMemcpyHtoD(neww, nw, 32));
  CUstream fs; CK(cuStreamCreate(&fs, CU_STREAM_NON_BLOCKING));
  for (Mode rm : {C_EPOCH, C_PROBE}) {
    std::vector<float> reactions;
    g_main.make_room(8);
    for (int trial = 0; trial < 5; trial++) {
      set_mask(0, nsm);
      CK(cuMemsetD8(tstart, 0, nlog * 8ull));
      // when = now + 2 ms on the GPU clock: read it with a first flip to a dummy target
      CUdeviceptr dummy; CK(cuMemAlloc(&dummy, 64)); unsigned long long zero = 0;
      void* f0[] = {&dummy, &neww, &zero, &flipped}; CK(cuLaunchKernel(fflip, 1, 1, 1, 1, 1, 1, 0, fs, f0, 0)); CK(cuStreamSynchronize(fs));
      unsigned long long now; CK(cuMemcpyDtoH(&now, flipped, 8)); CK(cuMemFree(dummy));
      unsigned long long when = now + 2000000ull; CUdeviceptr maskp = part;
      void* fa[] = {&maskp, &neww, &when, &flipped};
      CK(cuLaunchKernel(fflip, 1, 1, 1, 1, 1, 1, 0, fs, fa, 0));
      tidal_launch rl = plan(rm, part, nlog, 1, 1, 0, &g_main);
      if (rm == C_EPOCH) rl.epoch = g_main.next();
      void* sa[] = {&tstart, &tsm, &sit, &sink, &rl};
      CK(cuLaunchKernel(fstamp, socc * nsm, 1, 1, 128, 1, 1, dyn_smem(fstamp), st, sa, 0));
      CK(cuCtxSynchronize());
      std::vector<unsigned long long> ts(nlog); std::vector<unsigned> sm(nlog); unsigned long long fl;
      CK(cuMemcpyDtoH(ts.data(), tstart, nlog * 8ull)); CK(cuMemcpyDtoH(sm.data(), tsm, nlog * 4ull)); CK(cuMemcpyDtoH(&fl, flipped, 8));
      unsigned long long last = 0, tmin = ~0ull, tmax = 0; unsigned late = 0;
      for (unsigned i = 0; i < nlog; i++) {
        tmin = std::min(tmin, ts[i]); tmax = std::max(tmax, ts[i]);
        if (sm[i] >= 66 && ts[i] > fl) { late++; last = std::max(last, ts[i]); }
      }
      float us = last ? (last - fl) / 1000.f : 0.f;
      reactions.push_back(us);
      double round_us = (tmax - tmin) / 1e3 / (nlog / (double)(socc * nsm));
      printf("%s trial %d: kernel %.2f ms (one logical block ~%.1f us at full occupancy), flip at +%.2f ms, last start on a removed SM %.1f us after the flip (%u blocks started there after it)\n",
             rm == C_EPOCH ? "c-epoch" : "c-probe", trial, (tmax - tmin) / 1e6, round_us, (fl - tmin) / 1e6, us, late);
    }
    printf("%s reaction time, median of 5: %.1f us\n", rm == C_EPOCH ? "c-epoch" : "c-probe", median(reactions));
  }
  CK(cuCtxSynchronize());
  return 0;
}
