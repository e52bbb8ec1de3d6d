// Smoke probe for the tidal rewrite (driver API, ABI v5; a clone's protocol words take
// TIDAL_CLONE_SMEM(0) bytes of its dynamic shared memory, sh_off 0): saxpy from the corpus, original
// vs rewritten in launch cases a, b, c-probe, c-epoch and c-static with a few masks, plus
// rough timings. Usage: tidal_smoke ORIG.ptx REWRITTEN.ptx
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <algorithm>
#include "../../abi/tidal_abi.h"
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s; cuGetErrorString(r_, &s); printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, s); exit(1); } } while (0)
static char* slurp(const char* p) { FILE* f = fopen(p, "rb"); if (!f) { perror(p); exit(1); } fseek(f, 0, SEEK_END); long n = ftell(f); rewind(f); char* b = (char*)malloc(n + 1); if (fread(b, 1, n, f) != (size_t)n) exit(1); b[n] = 0; fclose(f); return b; }
static int fails = 0, passes = 0;
static void check(bool ok, const char* what) { printf("%s %s\n", ok ? "ok  " : "FAIL", what); ok ? passes++ : fails++; }
// 128 probe slots and one epoch slot (tagged TIDAL_SLOT_RESERVED once); with probe_base the epoch slot comes first
static const unsigned NPROBE = 128, NSLOT = NPROBE + 1;
#ifdef TIDAL_PARTITION_OFF_PROBE_BASE
static const unsigned EPOCH_SLOT = 0, PROBE_FIRST = 1;
#else
static const unsigned EPOCH_SLOT = NPROBE, PROBE_FIRST = 0;
#endif
int main(int argc, char** argv) {
  if (argc < 3) { fprintf(stderr, "usage: tidal_smoke ORIG.ptx REWRITTEN.ptx\n"); return 2; }
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0)); CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  int nsm; CK(cuDeviceGetAttribute(&nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  CUmodule mo, mr; CK(cuModuleLoadData(&mo, slurp(argv[1]))); CK(cuModuleLoadData(&mr, slurp(argv[2])));
  CUfunction fo, fr, fc; CK(cuModuleGetFunction(&fo, mo, "saxpy")); CK(cuModuleGetFunction(&fr, mr, "saxpy")); CK(cuModuleGetFunction(&fc, mr, "saxpy" TIDAL_RESHAPED_SUFFIX));
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
  CUdeviceptr part, cnt, smb; CK(cuMemAlloc(&part, TIDAL_PARTITION_BYTES(NSLOT))); CK(cuMemsetD8(part, 0, TIDAL_PARTITION_BYTES(NSLOT)));
  const CUdeviceptr eslot = part + TIDAL_PARTITION_HEADER + EPOCH_SLOT * (size_t)TIDAL_SLOT_BYTES;
  unsigned long long tag = TIDAL_SLOT_RESERVED; CK(cuMemcpyHtoD(eslot, &tag, 8));
  unsigned epoch = 0;   // the epoch slot's last launch (fewer than 65535 launches here: no reset needed)
  CK(cuMemAlloc(&cnt, blocks * 4ull)); CK(cuMemAlloc(&smb, 256 * 8));
  tidal_partition hp; memset(&hp, 0, sizeof hp); hp.slot_mask = NPROBE - 1; hp.exec_count = cnt; hp.sm_blocks = smb;
#ifdef TIDAL_PARTITION_OFF_PROBE_BASE
  hp.probe_base = PROBE_FIRST;
#endif
  CUdeviceptr gctl; size_t gsz; CK(cuModuleGetGlobal(&gctl, &gsz, mr, TIDAL_CTL_SYMBOL));
  auto setmask = [&](int lo, int hi, int step) { memset(hp.mask, 0, sizeof hp.mask); for (int s = lo; s < hi; s += step) hp.mask[s / 64] |= 1ull << (s % 64); hp.violations = 0; CK(cuMemcpyHtoD(part, &hp, sizeof hp)); };
  // el: the epoch-mode launch that used the epoch slot (nullptr: it must be unchanged); outside_ok: blocks a STATIC launch may run outside the mask
  auto verify = [&](const char* what, bool counts, int lo, int hi, int step, const tidal_launch* el, unsigned long long outside_ok, const tidal_slot* ebefore) {
    CK(cuCtxSynchronize()); CK(cuMemcpyDtoH(got.data(), y, n * 4ull));
    bool same = memcmp(got.data(), ref.data(), n * 4ull) == 0; char m[320];
    snprintf(m, sizeof m, "%s: output bit-identical", what); check(same, m);
    if (counts) {
      std::vector<unsigned> c(blocks); CK(cuMemcpyDtoH(c.data(), cnt, blocks * 4ull));
      unsigned bad = 0; for (unsigned i = 0; i < blocks; i++) bad += c[i] != 1;
      snprintf(m, sizeof m, "%s: every logical block ran once (%u bad)", what, bad); check(bad == 0, m);
      std::vector<unsigned long long> sb(256); CK(cuMemcpyDtoH(sb.data(), smb, 256 * 8));
      tidal_partition back; CK(cuMemcpyDtoH(&back, part, sizeof back));
      unsigned long long outside = 0, total = 0; for (int s = 0; s < 256; s++) { total += sb[s]; bool in = s >= lo && s < hi && (s - lo) % step == 0; if (!in) outside += sb[s]; }
      snprintf(m, sizeof m, "%s: blocks outside the mask %llu of %llu (allowed %llu), violations %llu", what, outside, total, outside_ok, (unsigned long long)back.violations);
      check(total == blocks && (outside <= outside_ok || back.violations > 0), m);
      std::vector<tidal_slot> sl(NSLOT); CK(cuMemcpyDtoH(sl.data(), part + TIDAL_PARTITION_HEADER, NSLOT * sizeof(tidal_slot))); unsigned dirty = 0;
      for (unsigned k = PROBE_FIRST; k < PROBE_FIRST + NPROBE; k++) {
        const tidal_slot& s = sl[k]; dirty += s.tag || s.claim || s.guard || s.shards_done;
        for (int q = 0; q < TIDAL_SLOT_SHARDS; q++) dirty += s.shard[q].departed != 0;
      }
      snprintf(m, sizeof m, "%s: all probe slots reset (%u dirty)", what, dirty); check(dirty == 0, m);
      const tidal_slot& e = sl[EPOCH_SLOT];
      if (el) {
        unsigned long long next = e.claim & TIDAL_CLAIM_NEXT_MASK, joiners = (e.claim >> TIDAL_CLAIM_JOINER_SHIFT) & TIDAL_CLAIM_JOINER_MASK;
        bool ok = e.tag == TIDAL_SLOT_RESERVED && (e.claim >> TIDAL_EPOCH_SHIFT) == el->epoch && (e.guard >> TIDAL_EPOCH_SHIFT) == el->epoch &&
                  joiners == 0 && next >= blocks - el->base;
        snprintf(m, sizeof m, "%s: epoch slot: claim 0x%016llx guard 0x%016llx (epoch %u, next >= %u)", what, (unsigned long long)e.claim,
                 (unsigned long long)e.guard, el->epoch, blocks - el->base);
        check(ok, m);
      } else {
        snprintf(m, sizeof m, "%s: epoch slot untouched", what); check(memcmp(&e, ebefore, sizeof e) == 0, m);
      }
    }
  };
  auto reset = [&]() { CK(cuMemcpyDtoD(y, y0, n * 4ull)); CK(cuMemsetD8(cnt, 0, blocks * 4ull)); CK(cuMemsetD8(smb, 0, 256 * 8)); };
  auto epoch_before = [&]() { tidal_slot s; CK(cuMemcpyDtoH(&s, eslot, sizeof s)); return s; };
  const unsigned REC = TIDAL_LAUNCH_HIST | TIDAL_LAUNCH_EXEC;
  // case a
  unsigned long long zero = 0; CK(cuMemcpyHtoD(gctl, &zero, 8)); reset();
  CK(cuLaunchKernel(fr, blocks, 1, 1, threads, 1, 1, 0, 0, args, 0)); verify("case a", false, 0, 0, 1, nullptr, 0, nullptr);
  unsigned long long pp = part;
  int occ; CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fc, threads, TIDAL_CLONE_SMEM(0)));
  struct M { const char* name; int lo, hi, step; } masks[] = {{"all", 0, nsm, 1}, {"sm0", 0, 1, 1}, {"0..65", 0, 66, 1}, {"odd", 1, nsm, 2}, {"empty", 0, 0, 1}};
  for (auto& mk : masks) {
    setmask(mk.lo, mk.hi, mk.step); char w[160];
    CK(cuMemcpyHtoD(gctl, &pp, 8));
    tidal_slot eb = epoch_before();
    reset(); CK(cuLaunchKernel(fr, blocks, 1, 1, threads, 1, 1, 0, 0, args, 0)); snprintf(w, sizeof w, "case b mask %s", mk.name);
    verify(w, true, mk.lo, mk.hi, mk.step, nullptr, 0, &eb);
    CK(cuMemcpyHtoD(gctl, &zero, 8));   // the clones get the partition in tidal_launch
    int allowed = 0; for (int s = mk.lo; s < mk.hi; s += mk.step) allowed++;
    // c-probe: workers = occ x allowed SMs
    unsigned workers = occ * std::max(allowed, 1); tidal_launch L; memset(&L, 0, sizeof L);
    L.partition = part; L.grid[0] = blocks; L.grid[1] = L.grid[2] = 1; L.chunk = std::min(64u, std::max(1u, blocks / (workers * 8))); L.flags = TIDAL_LAUNCH_PROBE | REC;
    void* cargs[] = {&n, &a, &x, &y, &L};
    setmask(mk.lo, mk.hi, mk.step); eb = epoch_before();
    reset(); CK(cuLaunchKernel(fc, workers, 1, 1, threads, 1, 1, TIDAL_CLONE_SMEM(0), 0, cargs, 0)); snprintf(w, sizeof w, "c-probe mask %s (%u workers, chunk %u)", mk.name, workers, L.chunk);
    verify(w, true, mk.lo, mk.hi, mk.step, nullptr, 0, &eb);
    // c-epoch: workers = occ x all SMs, chunk from the allowed SMs
    unsigned ew = occ * nsm; L.chunk = std::min(64u, std::max(1u, blocks / (occ * std::max(allowed, 1) * 8)));
    L.flags = REC; L.slot = EPOCH_SLOT; L.epoch = ++epoch; L.base = 0;
    setmask(mk.lo, mk.hi, mk.step);
    reset(); CK(cuLaunchKernel(fc, ew, 1, 1, threads, 1, 1, TIDAL_CLONE_SMEM(0), 0, cargs, 0)); snprintf(w, sizeof w, "c-epoch mask %s (%u workers, chunk %u, epoch %u)", mk.name, ew, L.chunk, L.epoch);
    verify(w, true, mk.lo, mk.hi, mk.step, &L, 0, nullptr);
    // c-static: workers = occ x allowed SMs run their own chunks first, tickets after base = workers x chunk
    L.chunk = std::min(64u, std::max(1u, blocks / (workers * 8))); L.flags = TIDAL_LAUNCH_STATIC | REC; L.epoch = ++epoch; L.base = workers * L.chunk;
    setmask(mk.lo, mk.hi, mk.step);
    reset(); CK(cuLaunchKernel(fc, workers, 1, 1, threads, 1, 1, TIDAL_CLONE_SMEM(0), 0, cargs, 0)); snprintf(w, sizeof w, "c-static mask %s (%u workers, chunk %u, base %u, epoch %u)", mk.name, workers, L.chunk, L.base, L.epoch);
    verify(w, true, mk.lo, mk.hi, mk.step, &L, std::min<unsigned long long>(blocks, 2ull * L.base), nullptr);
  }
  // timings, all SMs, no counters
  setmask(0, nsm, 1); hp.exec_count = 0; hp.sm_blocks = 0; CK(cuMemcpyHtoD(part, &hp, sizeof hp));
  CUevent e0, e1; CK(cuEventCreate(&e0, 0)); CK(cuEventCreate(&e1, 0));
  unsigned workers = occ * nsm; tidal_launch L; memset(&L, 0, sizeof L);
  L.partition = part; L.grid[0] = blocks; L.grid[1] = L.grid[2] = 1; L.chunk = std::min(64u, std::max(1u, blocks / (workers * 8)));
  void* cargs[] = {&n, &a, &x, &y, &L};
  auto timeit = [&](int which) { std::vector<float> v; for (int r = 0; r < 25; r++) {
      if (which == 3) { L.flags = 0; L.slot = EPOCH_SLOT; L.epoch = ++epoch; L.base = 0; }
      if (which == 4) { L.flags = TIDAL_LAUNCH_STATIC; L.slot = EPOCH_SLOT; L.epoch = ++epoch; L.base = workers * L.chunk; }
      if (which == 2) { L.flags = TIDAL_LAUNCH_PROBE; L.base = 0; }
      CK(cuEventRecord(e0, 0));
      if (which == 0) CK(cuLaunchKernel(fo, blocks, 1, 1, threads, 1, 1, 0, 0, args, 0));
      else if (which == 1) CK(cuLaunchKernel(fr, blocks, 1, 1, threads, 1, 1, 0, 0, args, 0));
      else CK(cuLaunchKernel(fc, workers, 1, 1, threads, 1, 1, TIDAL_CLONE_SMEM(0), 0, cargs, 0));
      CK(cuEventRecord(e1, 0)); CK(cuEventSynchronize(e1)); float ms; cuEventElapsedTime(&ms, e0, e1); if (r > 2) v.push_back(ms); }
    std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  CK(cuMemcpyHtoD(gctl, &zero, 8)); float ta = timeit(1); CK(cuMemcpyHtoD(gctl, &pp, 8));
  float t0 = timeit(0), tb = timeit(1), tp = timeit(2), te = timeit(3), ts = timeit(4);
  printf("saxpy %d blocks: original %.3f ms, case a %.3f (%.3fx), case b %.3f (%.3fx), c-probe %.3f (%.3fx), c-epoch %.3f (%.3fx), c-static %.3f (%.3fx); occ %d, %u workers, chunk %u\n",
         blocks, t0, ta, ta / t0, tb, tb / t0, tp, tp / t0, te, te / t0, ts, ts / t0, occ, workers, L.chunk);
  printf("%d passed, %d failed\n", passes, fails);
  return fails != 0;
}
