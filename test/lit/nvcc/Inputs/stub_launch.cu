// A <<<>>> launch (CUDA 13's stub calls __cudaLaunchKernel); main only prints, so the
// program runs without a GPU.
#include <cstdio>
__global__ void bump(int *p) { p[threadIdx.x] += 1; }
void launch(int *p) { bump<<<1, 32>>>(p); }
int main(int argc, char **argv) {
  if (argc > 99) launch(nullptr);
  std::printf("stub_launch built\n");
  return 0;
}
