// Kernels for the tidal benchmark (bench/gpu/tidal_bench.cu). Compiled to PTX,
// then loaded twice: as is (the baseline) and rewritten by tidal-opt -p tidal.
#include <stdint.h>

// memory-bound, tiny blocks: one element per thread
extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// memory-bound, 4 elements per thread, float4
extern "C" __global__ void copy4(int n4, const float4* __restrict__ x, float4* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n4) return;
  float4 v = x[i];
  v.x += 1.f; v.y += 1.f; v.z += 1.f; v.w += 1.f;
  y[i] = v;
}

// compute-bound
extern "C" __global__ void fma_loop(float* out, int iters) {
  float v = blockIdx.x * 1e-3f + threadIdx.x, w = 1.0001f;
  for (int k = 0; k < iters; ++k) { v = fmaf(v, w, 1e-7f); w = fmaf(w, 0.9999f, 1e-7f); }
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// shared memory + barriers, divergent early return (barrier funnel)
extern "C" __global__ void block_sum(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float s[256];
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i >= n) return;
  s[threadIdx.x] = in[i];
  __syncthreads();
  for (int st = 128; st > 0; st >>= 1) {
    if (threadIdx.x < st && i + st < n) s[threadIdx.x] += s[threadIdx.x + st];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

// tiled SGEMM, 2 barriers per k step (convergent exits)
#define T 32
extern "C" __global__ void sgemm(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
  __shared__ float As[T][T + 1], Bs[T][T + 1];
  int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += T) {
    As[threadIdx.y][threadIdx.x] = (r < M && k0 + threadIdx.x < K) ? A[r * K + k0 + threadIdx.x] : 0.f;
    Bs[threadIdx.y][threadIdx.x] = (c < N && k0 + threadIdx.y < K) ? B[(k0 + threadIdx.y) * N + c] : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
    __syncthreads();
  }
  if (r < M && c < N) C[r * N + c] = acc;
}

// LS-style small kernel: 264 blocks of FMA work
extern "C" __global__ void ls_fma(float* out, int iters) {
  float v = blockIdx.x * 1e-3f + threadIdx.x, w = 1.0001f;
  for (int k = 0; k < iters; ++k) { v = fmaf(v, w, 1e-7f); w = fmaf(w, 0.9999f, 1e-7f); }
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// Per-launch cost: next to nothing per block, so back-to-back launches measure the
// launch and tidal's per-launch protocol (slot, claim, departure).
extern "C" __global__ void tiny(unsigned* out) {
  if (threadIdx.x == 0) atomicAdd(out + (blockIdx.x & 63), 1u);
}

// Reaction probe: each logical block records its SM and start time, then works.
extern "C" __global__ void stamp(unsigned long long* start, unsigned* sm, int iters, float* sink) {
  unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  if (threadIdx.x == 0) { start[blockIdx.x] = t; sm[blockIdx.x] = s; }
  float v = threadIdx.x, w = 1.0001f;
  for (int k = 0; k < iters; ++k) { v = fmaf(v, w, 1e-7f); w = fmaf(w, 0.9999f, 1e-7f); }
  if (v == 12345.f) sink[0] = v;
}

// Not rewritten use: flips a partition mask from the GPU and records when.
extern "C" __global__ void flip_mask(unsigned long long* mask_words, const unsigned long long* new_words, unsigned long long when, unsigned long long* flipped_at) {
  unsigned long long t;
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t < when);
  for (int w = 0; w < 4; ++w) asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(mask_words + w), "l"(new_words[w]) : "memory");
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  *flipped_at = t;
}
