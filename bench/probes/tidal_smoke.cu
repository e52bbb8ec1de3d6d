// Smoke probe for the tidal rewrite (driver API): saxpy-style kernels from the
// corpus, original vs rewritten in launch cases a/b/c with a few masks, plus
// rough timings. Usage: tidal_smoke ORIG.ptx REWRITTEN.ptx
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <algorithm>
#include "../../runtime/tidal_abi.h"
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s; cuGetErrorString(r_, &s); printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, s); exit(1); } } while (0)
static char* slurp(const char* p) { FILE* f = fopen(p, "rb"); if (!f) { perror(p); exit(1); } fseek(f, 0, SEEK_END); long n = ftell(f); rewind(f); char* b = (char*)malloc(n + 1); if (fread(b, 1, n, f) != (size_t)n) exit(1); b[n] = 0; fclose(f); return b; }
static int fails = 0, passes = 0;
static void check(bool ok, const char* what) { printf("%s %s\n", ok ? "ok  " : "FAIL", what); ok ? passes++ : fails++; }
int main(int argc, char** argv) {
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0)); CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  int nsm; CK(cuDeviceGetAttribute(&nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  CUmodule mo, mr; CK(cuModuleLoadData(&mo, slurp(argv[1]))); CK(cuModuleLoadData(&mr, slurp(argv[2])));
  CUfunction fo, fr, fc; CK(cuModuleGetFunction(&fo, mo, "saxpy")); CK(cuModuleGetFunction(&fr, mr, "saxpy")); CK(cuModuleGetFunction(&fc, mr, "saxpy__tidal_reshaped"));
  // saxpy(int n, float a, const float* x, float* y) — check the signature in the PTX
  int n = 1 << 28; unsigned threads = 256, blocks = (n + threads - 1) / threads;
  CUdeviceptr x, y, y0; CK(cuMemAlloc(&x, n * 4ull)); CK(cuMemAlloc(&y, n * 4ull)); CK(cuMemAlloc(&y0, n * 4ull));
  std::vector<float> h(n); for (int i = 0; i < n; i++) h[i] = (float)((i * 2654435761u) % 1000) * 0.5f;
  CK(cuMemcpyHtoD(x, h.data(), n * 4ull));
  for (int i = 0; i < n; i++) h[i] = (float)(i % 977);
  CK(cuMemcpyHtoD(y0, h.data(), n * 4ull));
  float a = 1.5f;
  // reference
  CK(cuMemcpyDtoD(y, y0, n * 4ull));
  void* args[] = {&n, &a, &x, &y};
  CK(cuLaunchKernel(fo, blocks, 1, 1, threads, 1, 1, 0, 0, args, 0)); CK(cuCtxSynchronize());
  std::vector<float> ref(n), got(n); CK(cuMemcpyDtoH(ref.data(), y, n * 4ull));
  // control block
  const unsigned NSLOT = 128;
  CUdeviceptr part, cnt, smb; CK(cuMemAlloc(&part, TIDAL_PARTITION_BYTES(NSLOT))); CK(cuMemsetD8(part, 0, TIDAL_PARTITION_BYTES(NSLOT)));
  CK(cuMemAlloc(&cnt, blocks * 4ull)); CK(cuMemAlloc(&smb, 256 * 8));
  tidal_partition hp; memset(&hp, 0, sizeof hp); hp.slot_mask = NSLOT - 1; hp.exec_count = cnt; hp.sm_blocks = smb;
  CUdeviceptr gctl; size_t gsz; CK(cuModuleGetGlobal(&gctl, &gsz, mr, TIDAL_CTL_SYMBOL));
  auto setmask = [&](int lo, int hi, int step) { memset(hp.mask, 0, sizeof hp.mask); for (int s = lo; s < hi; s += step) hp.mask[s / 64] |= 1ull << (s % 64); CK(cuMemcpyHtoD(part, &hp, sizeof hp)); };
  auto verify = [&](const char* what, bool counts, int lo, int hi, int step) {
    CK(cuCtxSynchronize()); CK(cuMemcpyDtoH(got.data(), y, n * 4ull));
    bool same = memcmp(got.data(), ref.data(), n * 4ull) == 0; char m[256];
    snprintf(m, sizeof m, "%s: output bit-identical", what); check(same, m);
    if (counts) {
      std::vector<unsigned> c(blocks); CK(cuMemcpyDtoH(c.data(), cnt, blocks * 4ull));
      unsigned bad = 0; for (unsigned i = 0; i < blocks; i++) bad += c[i] != 1;
      snprintf(m, sizeof m, "%s: every logical block ran once (%u bad)", what, bad); check(bad == 0, m);
      std::vector<unsigned long long> sb(256); CK(cuMemcpyDtoH(sb.data(), smb, 256 * 8));
      tidal_partition back; CK(cuMemcpyDtoH(&back, part, sizeof back));
      unsigned long long outside = 0, total = 0; for (int s = 0; s < 256; s++) { total += sb[s]; bool in = s >= lo && s < hi && (s - lo) % step == 0; if (!in) outside += sb[s]; }
      snprintf(m, sizeof m, "%s: blocks outside the mask %llu of %llu, violations %llu", what, outside, total, (unsigned long long)back.violations);
      check(outside == 0 || back.violations > 0, m);
      std::vector<tidal_slot> sl(NSLOT); CK(cuMemcpyDtoH(sl.data(), part + TIDAL_PARTITION_HEADER, NSLOT * sizeof(tidal_slot))); unsigned dirty = 0;
      for (auto& s : sl) { dirty += s.tag || s.presence || s.next || s.shards_done; for (int k = 0; k < TIDAL_SLOT_SHARDS; k++) dirty += s.shard[k].departed != 0; }
      snprintf(m, sizeof m, "%s: all slots reset (%u dirty)", what, dirty); check(dirty == 0, m);
    }
  };
  auto reset = [&]() { CK(cuMemcpyDtoD(y, y0, n * 4ull)); CK(cuMemsetD8(cnt, 0, blocks * 4ull)); CK(cuMemsetD8(smb, 0, 256 * 8)); };
  // case a
  unsigned long long zero = 0; CK(cuMemcpyHtoD(gctl, &zero, 8)); reset();
  CK(cuLaunchKernel(fr, blocks, 1, 1, threads, 1, 1, 0, 0, args, 0)); verify("case a", false, 0, 0, 1);
  unsigned long long pp = part; CK(cuMemcpyHtoD(gctl, &pp, 8));
  int occ; CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fc, threads, 0));
  struct M { const char* name; int lo, hi, step; } masks[] = {{"all", 0, nsm, 1}, {"sm0", 0, 1, 1}, {"0..65", 0, 66, 1}, {"odd", 1, nsm, 2}, {"empty", 0, 0, 1}};
  for (auto& mk : masks) {
    setmask(mk.lo, mk.hi, mk.step); char w[128];
    reset(); CK(cuLaunchKernel(fr, blocks, 1, 1, threads, 1, 1, 0, 0, args, 0)); snprintf(w, sizeof w, "case b mask %s", mk.name); verify(w, true, mk.lo, mk.hi, mk.step);
    int allowed = 0; for (int s = mk.lo; s < mk.hi; s += mk.step) allowed++;
    unsigned workers = occ * std::max(allowed, 1); tidal_launch L; L.partition = 0; L.grid[0] = blocks; L.grid[1] = L.grid[2] = 1; L.chunk = std::max(1u, blocks / (workers * 8));
    void* cargs[] = {&n, &a, &x, &y, &L};
    reset(); CK(cuLaunchKernel(fc, workers, 1, 1, threads, 1, 1, 0, 0, cargs, 0)); snprintf(w, sizeof w, "case c mask %s (%u workers, chunk %u)", mk.name, workers, L.chunk); verify(w, true, mk.lo, mk.hi, mk.step);
  }
  // timings, all SMs
  setmask(0, nsm, 1); hp.exec_count = 0; hp.sm_blocks = 0; CK(cuMemcpyHtoD(part, &hp, sizeof hp));
  CUevent e0, e1; CK(cuEventCreate(&e0, 0)); CK(cuEventCreate(&e1, 0));
  unsigned workers = occ * nsm; tidal_launch L{0, {blocks, 1, 1}, std::max(1u, blocks / (workers * 8))}; void* cargs[] = {&n, &a, &x, &y, &L};
  auto timeit = [&](int which) { std::vector<float> v; for (int r = 0; r < 25; r++) { CK(cuEventRecord(e0, 0));
      if (which == 0) CK(cuLaunchKernel(fo, blocks, 1, 1, threads, 1, 1, 0, 0, args, 0));
      else if (which == 1) CK(cuLaunchKernel(fr, blocks, 1, 1, threads, 1, 1, 0, 0, args, 0));
      else CK(cuLaunchKernel(fc, workers, 1, 1, threads, 1, 1, 0, 0, cargs, 0));
      CK(cuEventRecord(e1, 0)); CK(cuEventSynchronize(e1)); float ms; cuEventElapsedTime(&ms, e0, e1); if (r > 2) v.push_back(ms); }
    std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  unsigned long long z = 0; CK(cuMemcpyHtoD(gctl, &z, 8)); float ta = timeit(1); CK(cuMemcpyHtoD(gctl, &pp, 8));
  float t0 = timeit(0), tb = timeit(1), tc = timeit(2);
  printf("saxpy %d blocks: original %.3f ms, case a %.3f (%.3fx), case b %.3f (%.3fx), case c %.3f (%.3fx, occ %d, chunk %u)\n", blocks, t0, ta, ta / t0, tb, tb / t0, tc, tc / t0, occ, L.chunk);
  printf("%d passed, %d failed\n", passes, fails);
  return fails != 0;
}
