// tidal benchmark (H200): rewritten kernels against the unmodified ones in the
// same run. Usage: tidal_bench ORIG.ptx TIDAL.ptx
//   1. overhead, full mask: original vs rewritten in launch cases a, b, c
//   2. LS request (20 kernels x 264 blocks) on 72 SMs: tidal case b/c vs the
//      unmodified kernels on a 72-SM green context
//   3. re-mask reaction time on a running kernel, timestamped with %globaltimer
// Medians of >= 21 runs; ratios are rewritten / original.
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include "../../runtime/tidal_abi.h"

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_; cuGetErrorString(r_, &s_); \
  fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)

static char* slurp(const char* p) {
  FILE* f = fopen(p, "rb"); if (!f) { perror(p); exit(1); }
  fseek(f, 0, SEEK_END); long n = ftell(f); rewind(f);
  char* b = (char*)malloc(n + 1); if (fread(b, 1, n, f) != (size_t)n) exit(1); b[n] = 0; fclose(f); return b;
}
static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

static CUmodule mo, mr;
static CUdeviceptr part, gctl;
static tidal_partition hp;
static int nsm;
static const unsigned NSLOT = 128;

static void set_mask(int lo, int hi) {
  memset(hp.mask, 0, sizeof hp.mask);
  for (int s = lo; s < hi; s++) hp.mask[s / 64] |= 1ull << (s % 64);
  CK(cuMemcpyHtoD(part, &hp, sizeof hp));
}
static void attach(bool on) { unsigned long long v = on ? part : 0; CK(cuMemcpyHtoD(gctl, &v, 8)); }

struct Launch {
  const char* name; unsigned gx, gy, bx, by; std::vector<void*> args;
};

// Times one launch configuration: 0 original, 1 rewritten (a or b by attach), 2 reshaped clone.
static float time_launch(const Launch& L, int which, CUstream st, int reps) {
  CUfunction f;
  char clone[256]; snprintf(clone, sizeof clone, "%s%s", L.name, TIDAL_RESHAPED_SUFFIX);
  CK(cuModuleGetFunction(&f, which == 0 ? mo : mr, which == 2 ? clone : L.name));
  unsigned gx = L.gx, gy = L.gy; std::vector<void*> args = L.args; tidal_launch tl{};
  if (which == 2) {
    int occ; CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, f, L.bx * L.by, 0));
    unsigned total = L.gx * L.gy, workers = std::min<unsigned>(total, (unsigned)(occ * nsm));
    tl.partition = 0; tl.grid[0] = L.gx; tl.grid[1] = L.gy; tl.grid[2] = 1;
    tl.chunk = std::max(1u, std::min(64u, total / (workers * 16)));
    gx = workers; gy = 1; args.push_back(&tl);
  }
  CUevent e0, e1; CK(cuEventCreate(&e0, 0)); CK(cuEventCreate(&e1, 0));
  std::vector<float> v;
  for (int r = 0; r < reps + 3; r++) {
    CK(cuEventRecord(e0, st));
    CK(cuLaunchKernel(f, gx, gy, 1, L.bx, L.by, 1, 0, st, args.data(), 0));
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
  CK(cuMemAlloc(&part, TIDAL_PARTITION_BYTES(NSLOT))); CK(cuMemsetD8(part, 0, TIDAL_PARTITION_BYTES(NSLOT)));
  memset(&hp, 0, sizeof hp); hp.slot_mask = NSLOT - 1;
  size_t gsz; CK(cuModuleGetGlobal(&gctl, &gsz, mr, TIDAL_CTL_SYMBOL));
  CUstream st; CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
  const int REPS = 21;

  // ---------------------------------------------------------------- 0. per launch
  // Back-to-back launches of `tiny` (one atomic per block) on one stream, one event pair
  // around 2000 of them: what a launch costs end to end (GPU launch gap + tidal's
  // per-launch protocol), median of 9 such runs, in us per launch.
  {
    printf("== per launch: 2000 back-to-back launches of tiny (128 threads per block), us per launch, median of 9\n");
    printf("%-8s %9s %9s %7s %9s %7s %9s %7s\n", "blocks", "original", "case a", "ratio", "case b", "ratio", "case c", "ratio");
    CUdeviceptr cnt; CK(cuMemAlloc(&cnt, 64 * 4)); CK(cuMemsetD32(cnt, 0, 64));
    CUfunction fto, ftr, ftc;
    CK(cuModuleGetFunction(&fto, mo, "tiny")); CK(cuModuleGetFunction(&ftr, mr, "tiny"));
    CK(cuModuleGetFunction(&ftc, mr, "tiny" TIDAL_RESHAPED_SUFFIX));
    set_mask(0, nsm);
    auto per_launch = [&](CUfunction f, unsigned grid, void** args) {
      CUevent e0, e1; CK(cuEventCreate(&e0, 0)); CK(cuEventCreate(&e1, 0)); std::vector<float> v;
      for (int r = 0; r < 10; r++) {
        CK(cuEventRecord(e0, st));
        for (int k = 0; k < 2000; k++) CK(cuLaunchKernel(f, grid, 1, 1, 128, 1, 1, 0, st, args, 0));
        CK(cuEventRecord(e1, st)); CK(cuEventSynchronize(e1));
        float ms; CK(cuEventElapsedTime(&ms, e0, e1)); if (r >= 1) v.push_back(ms * 1000.f / 2000.f);
      }
      CK(cuEventDestroy(e0)); CK(cuEventDestroy(e1));
      return median(v);
    };
    for (unsigned blocks : {1u, 264u}) {
      void* args[] = {&cnt};
      tidal_launch tl{}; tl.grid[0] = blocks; tl.grid[1] = 1; tl.grid[2] = 1; tl.chunk = 1;
      void* cargs[] = {&cnt, &tl};
      float t0 = per_launch(fto, blocks, args);
      attach(false); float ta = per_launch(ftr, blocks, args);
      attach(true); float tb = per_launch(ftr, blocks, args);
      float tc = per_launch(ftc, blocks, cargs);   // workers = blocks: one logical block each
      float t0b = per_launch(fto, blocks, args); t0 = std::min(t0, t0b);
      printf("%-8u %9.2f %9.2f %7.3f %9.2f %7.3f %9.2f %7.3f\n", blocks, t0, ta, ta / t0, tb, tb / t0, tc, tc / t0);
    }
    attach(false);
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
  printf("== overhead, full mask (median of %d, ms; ratio to the original)\n", REPS);
  printf("%-10s %9s %9s %7s %9s %7s %9s %7s\n", "kernel", "original", "case a", "ratio", "case b", "ratio", "case c", "ratio");
  set_mask(0, nsm);
  double geo_b = 0, geo_c = 0, geo_a = 0;
  for (auto& L : ls) {
    float t0 = time_launch(L, 0, st, REPS);
    attach(false); float ta = time_launch(L, 1, st, REPS);
    attach(true); float tb = time_launch(L, 1, st, REPS); float tc = time_launch(L, 2, st, REPS);
    float t0b = time_launch(L, 0, st, REPS); t0 = std::min(t0, t0b);
    printf("%-10s %9.3f %9.3f %7.3f %9.3f %7.3f %9.3f %7.3f\n", L.name, t0, ta, ta / t0, tb, tb / t0, tc, tc / t0);
    geo_a += log(ta / t0); geo_b += log(tb / t0); geo_c += log(tc / t0);
  }
  printf("%-10s %9s %9s %7.3f %9s %7.3f %9s %7.3f\n", "geomean", "", "", exp(geo_a / ls.size()), "", exp(geo_b / ls.size()), "", exp(geo_c / ls.size()));

  // ---------------------------------------------------------------- 2. LS request
  printf("\n== LS request: 20 x ls_fma (264 blocks x 256 threads, 2048 iterations), median of 41 (ms)\n");
  int lsit = 2048; void* lsargs[] = {&fo, &lsit};
  CUfunction fo_ls, fr_ls, fc_ls; CK(cuModuleGetFunction(&fo_ls, mo, "ls_fma")); CK(cuModuleGetFunction(&fr_ls, mr, "ls_fma"));
  CK(cuModuleGetFunction(&fc_ls, mr, "ls_fma" TIDAL_RESHAPED_SUFFIX));
  int occ; CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fc_ls, 256, 0));
  auto request = [&](CUfunction f, unsigned grid, void** args, CUstream s) {
    CUevent e0, e1; CK(cuEventCreate(&e0, 0)); CK(cuEventCreate(&e1, 0)); std::vector<float> v;
    for (int r = 0; r < 44; r++) {
      CK(cuEventRecord(e0, s));
      for (int k = 0; k < 20; k++) CK(cuLaunchKernel(f, grid, 1, 1, 256, 1, 1, 0, s, args, 0));
      CK(cuEventRecord(e1, s)); CK(cuEventSynchronize(e1)); float ms; CK(cuEventElapsedTime(&ms, e0, e1)); if (r >= 3) v.push_back(ms);
    }
    return median(v);
  };
  float ls_all = request(fo_ls, 264, lsargs, st);
  const int K = 72;
  set_mask(0, K); attach(true);
  float ls_b = request(fr_ls, 264, lsargs, st);
  tidal_launch tl{0, {264, 1, 1}, 1}; void* cargs[] = {&fo, &lsit, &tl};
  unsigned w_alloc = std::min(264u, (unsigned)(occ * K)), w_all = (unsigned)(occ * nsm);
  float ls_c_alloc = request(fc_ls, w_alloc, cargs, st);
  float ls_c_all = request(fc_ls, w_all, cargs, st);
  // green context of the same size
  CUdevResource res, split[1], rem; unsigned nb = 1; float ls_green = -1, ls_green_b = -1, ls_green_c = -1; unsigned green_sms = 0;
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
    CUdeviceptr pg; CK(cuMemAlloc(&pg, TIDAL_PARTITION_BYTES(NSLOT))); CK(cuMemsetD8(pg, 0, TIDAL_PARTITION_BYTES(NSLOT)));
    tidal_partition hg; memset(&hg, 0, sizeof hg); hg.slot_mask = NSLOT - 1;
    for (int sm = 0; sm < nsm; sm++) hg.mask[sm / 64] |= 1ull << (sm % 64);
    CK(cuMemcpyHtoD(pg, &hg, sizeof hg));
    CUdeviceptr gctl_g; size_t gs_sz; CK(cuModuleGetGlobal(&gctl_g, &gs_sz, mrg, TIDAL_CTL_SYMBOL));
    unsigned long long pgv = pg; CK(cuMemcpyHtoD(gctl_g, &pgv, 8));
    int occg; CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&occg, fcg, 256, 0));
    tidal_launch tlg{0, {264, 1, 1}, 1}; void* gcargs[] = {&go, &lsit, &tlg};
    ls_green_b = request(frg, 264, gargs, gs);
    ls_green_c = request(fcg, std::min(264u, (unsigned)(occg * split[0].sm.smCount)), gcargs, gs);
    CK(cuCtxSetCurrent(pctx));
  }
  printf("unmodified, all %d SMs:                %.3f\n", nsm, ls_all);
  printf("unmodified, green context (%u SMs):    %.3f\n", green_sms, ls_green);
  printf("tidal case b (original grid), SMs 0..%d: %.3f  (%.3fx green)\n", K - 1, ls_b, ls_b / ls_green);
  printf("tidal case c, %u workers, SMs 0..%d:     %.3f  (%.3fx green)\n", w_alloc, K - 1, ls_c_alloc, ls_c_alloc / ls_green);
  printf("tidal case c, %u workers, SMs 0..%d:    %.3f  (%.3fx green)\n", w_all, K - 1, ls_c_all, ls_c_all / ls_green);
  printf("tidal case b inside the green context:  %.3f  (%.3fx green)\n", ls_green_b, ls_green_b / ls_green);
  printf("tidal case c inside the green context:  %.3f  (%.3fx green)\n", ls_green_c, ls_green_c / ls_green);

  // ---------------------------------------------------------------- 3. reaction
  printf("\n== re-mask reaction: all SMs -> SMs 0..65 while a kernel runs (GPU %%globaltimer)\n");
  CUfunction fstamp, fflip; CK(cuModuleGetFunction(&fstamp, mr, "stamp" TIDAL_RESHAPED_SUFFIX)); CK(cuModuleGetFunction(&fflip, mo, "flip_mask"));
  int socc; CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&socc, fstamp, 128, 0));
  unsigned nlog = nsm * socc * 400; int sit = 1000; /* ~400 rounds of short blocks */
  CUdeviceptr tstart, tsm, sink, neww, flipped; CK(cuMemAlloc(&tstart, nlog * 8ull)); CK(cuMemAlloc(&tsm, nlog * 4ull));
  CK(cuMemAlloc(&sink, 64)); CK(cuMemAlloc(&neww, 32)); CK(cuMemAlloc(&flipped, 8));
  unsigned long long nw[4] = {0, 0, 0, 0}; for (int s = 0; s < 66; s++) nw[s / 64] |= 1ull << (s % 64);
  CK(cuMemcpyHtoD(neww, nw, 32));
  CUstream fs; CK(cuStreamCreate(&fs, CU_STREAM_NON_BLOCKING));
  std::vector<float> reactions; unsigned late_total = 0;
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
    tidal_launch rl{0, {nlog, 1, 1}, 1}; void* sa[] = {&tstart, &tsm, &sit, &sink, &rl};
    CK(cuLaunchKernel(fstamp, socc * nsm, 1, 1, 128, 1, 1, 0, st, sa, 0));
    CK(cuCtxSynchronize());
    std::vector<unsigned long long> ts(nlog); std::vector<unsigned> sm(nlog); unsigned long long fl;
    CK(cuMemcpyDtoH(ts.data(), tstart, nlog * 8ull)); CK(cuMemcpyDtoH(sm.data(), tsm, nlog * 4ull)); CK(cuMemcpyDtoH(&fl, flipped, 8));
    unsigned long long last = 0, tmin = ~0ull, tmax = 0; unsigned late = 0;
    for (unsigned i = 0; i < nlog; i++) {
      tmin = std::min(tmin, ts[i]); tmax = std::max(tmax, ts[i]);
      if (sm[i] >= 66 && ts[i] > fl) { late++; last = std::max(last, ts[i]); }
    }
    float us = last ? (last - fl) / 1000.f : 0.f;
    reactions.push_back(us); late_total += late;
    double round_us = (tmax - tmin) / 1e3 / (nlog / (double)(socc * nsm));
    printf("trial %d: kernel %.2f ms (one logical block ~%.1f us at full occupancy), flip at +%.2f ms, last start on a removed SM %.1f us after the flip (%u blocks started there after it)\n",
           trial, (tmax - tmin) / 1e6, round_us, (fl - tmin) / 1e6, us, late);
  }
  printf("reaction time, median of 5: %.1f us\n", median(reactions));
  CK(cuCtxSynchronize());
  return 0;
}
