// y = a*x + y with axpy() from the vecops library (device link across targets).
#include "common.cuh"
#include "vecops.cuh"

__global__ void saxpy(int n, float a, const float *x, float *y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = axpy(a, x[i], y[i]);
}

int main() {
  require_device("saxpy");
  const int n = 1 << 20;
  float *x, *y;
  CHECK(cudaMallocManaged(&x, n * sizeof(float)));
  CHECK(cudaMallocManaged(&y, n * sizeof(float)));
  vecops_fill(x, 1.0f, n);
  vecops_fill(y, 2.0f, n);
  saxpy<<<132, 256>>>(n, 3.0f, x, y);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; i++)
    if (y[i] != 5.0f) {
      std::printf("saxpy: FAILED: y[%d] = %f, expected 5\n", i, y[i]);
      return 1;
    }
  std::printf("saxpy: ok (%d elements)\n", n);
  return 0;
}
