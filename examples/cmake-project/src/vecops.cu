#include "vecops.cuh"

__device__ float axpy(float a, float x, float y) { return a * x + y; }

__device__ int warp_inclusive_sum(int v) {
  const unsigned lane = threadIdx.x % 32;
  for (int d = 1; d < 32; d *= 2) {
    int other = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= (unsigned)d) v += other;
  }
  return v;
}

__global__ void fill_kernel(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

void vecops_fill(float *p, float v, int n) { fill_kernel<<<(n + 255) / 256, 256>>>(p, v, n); }
