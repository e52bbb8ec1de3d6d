// -rdc=true: the kernel calls a __device__ function defined in rdc_lib.cu.
#include <cstdio>
extern __device__ int scale(int x);
__global__ void apply(int *p) { p[threadIdx.x] = scale(p[threadIdx.x]); }
int main() {
  std::printf("rdc built\n");
  return 0;
}
