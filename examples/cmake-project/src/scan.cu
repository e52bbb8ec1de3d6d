// Per-warp inclusive prefix sums with warp_inclusive_sum() from vecops.
#include "common.cuh"
#include "vecops.cuh"

__global__ void warp_scan(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  v = warp_inclusive_sum(v);
  if (i < n) out[i] = v;
}

int main() {
  require_device("scan");
  const int n = 4096;
  int *in, *out;
  CHECK(cudaMallocManaged(&in, n * sizeof(int)));
  CHECK(cudaMallocManaged(&out, n * sizeof(int)));
  for (int i = 0; i < n; i++) in[i] = 1;
  warp_scan<<<n / 128, 128>>>(in, out, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; i++)
    if (out[i] != i % 32 + 1) {
      std::printf("scan: FAILED: out[%d] = %d, expected %d\n", i, out[i], i % 32 + 1);
      return 1;
    }
  std::printf("scan: ok (%d elements)\n", n);
  return 0;
}
