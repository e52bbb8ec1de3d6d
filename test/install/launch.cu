// launch.cu — a <<<>>> launch compiled by the installed tidal-nvcc (test/install/run.sh).
// main only prints, so the program runs without a GPU; the launch is what the link wraps.
#include <cstdio>
__global__ void bump(int *p) { p[threadIdx.x] += 1; }
void launch(int *p) { bump<<<1, 32>>>(p); }
int main(int argc, char **) {
  if (argc > 99) launch(nullptr);
  std::printf("launch built\n");
  return 0;
}
