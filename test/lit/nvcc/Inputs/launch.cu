// An explicit cudaLaunchKernel call (the function tidal-nvcc's --wrap list
// interposes); main only prints, so the program runs without a GPU.
#include <cstdio>
__global__ void bump(int *p) { p[threadIdx.x] += 1; }
int launch(int *p) {
  void *args[] = {&p};
  return (int)cudaLaunchKernel((const void *)bump, dim3(1), dim3(32), args, 0, 0);
}
int main(int argc, char **argv) {
  if (argc > 99) return launch(nullptr);
  std::printf("launch built\n");
  return 0;
}
