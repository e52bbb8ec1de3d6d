// Shared-memory histogram with __syncthreads (whole-program compilation).
#include "common.cuh"

constexpr int BINS = 64;

__global__ void histogram(const unsigned char *data, int n, unsigned *bins) {
  __shared__ unsigned local[BINS];
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local[data[i] % BINS], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

int main() {
  require_device("histogram");
  const int n = 1 << 20;
  unsigned char *data;
  unsigned *bins;
  CHECK(cudaMallocManaged(&data, n));
  CHECK(cudaMallocManaged(&bins, BINS * sizeof(unsigned)));
  for (int i = 0; i < n; i++) data[i] = (unsigned char)(i % BINS);
  CHECK(cudaMemset(bins, 0, BINS * sizeof(unsigned)));
  histogram<<<264, 256>>>(data, n, bins);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  for (int b = 0; b < BINS; b++)
    if (bins[b] != (unsigned)(n / BINS)) {
      std::printf("histogram: FAILED: bin %d = %u, expected %d\n", b, bins[b], n / BINS);
      return 1;
    }
  std::printf("histogram: ok (%d bins)\n", BINS);
  return 0;
}
