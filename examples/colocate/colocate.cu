// colocate.cu -- one tenant of the colocate example (examples/colocate/README.md).
//
//   colocate ls SECONDS   latency-sensitive: back-to-back "requests" of 10 small kernels;
//                         prints the request latency (p50/p99) every 500 ms
//   colocate be SECONDS   best-effort: large kernels back to back; prints kernels/s
//
// Built by tidal-nvcc, so every launch goes through libtidal; the partition comes from
// TIDAL_PARTITION (a tidald partition name). Nothing here knows about SM masks: tidalctl
// moves them while this runs.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "colocate: %s: %s\n", #x, cudaGetErrorString(e_));                  \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

// A compute-bound layer: every thread iterates an FMA chain.
extern "C" __global__ void layer(float *out, int iters)
{
    float a = threadIdx.x * 1e-3f, b = blockIdx.x * 1e-4f;
    for (int i = 0; i < iters; i++) a = fmaf(a, 0.9999f, b);
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

static double now_s()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "ls") && strcmp(argv[1], "be"))) {
        fprintf(stderr, "usage: colocate ls|be SECONDS\n");
        return 2;
    }
    bool ls = !strcmp(argv[1], "ls");
    double secs = atof(argv[2]);
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const int blocks = ls ? 264 : 26400, threads = 256, iters = ls ? 2048 : 4096;
    float *out;
    CK(cudaMalloc(&out, (size_t)blocks * threads * sizeof(float)));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    layer<<<blocks, threads, 0, s>>>(out, 16);   // warm up
    CK(cudaStreamSynchronize(s));
    double t0 = now_s(), tick = t0 + 0.5;
    std::vector<double> lat;
    long done = 0;
    while (now_s() - t0 < secs) {
        double r0 = now_s();
        for (int k = 0; k < (ls ? 10 : 1); k++) layer<<<blocks, threads, 0, s>>>(out, iters);
        CK(cudaStreamSynchronize(s));
        double r1 = now_s();
        lat.push_back((r1 - r0) * 1e3);
        done++;
        if (r1 >= tick) {
            std::sort(lat.begin(), lat.end());
            if (ls)
                printf("ls  t=%5.1fs  requests %4zu  p50 %7.3f ms  p99 %7.3f ms\n", r1 - t0, lat.size(),
                       lat[lat.size() / 2], lat[lat.size() * 99 / 100]);
            else
                printf("be  t=%5.1fs  kernels/s %7.1f  (%.2f ms each)\n", r1 - t0, lat.size() / 0.5, lat[lat.size() / 2]);
            lat.clear();
            tick += 0.5;
        }
    }
    CK(cudaFree(out));
    return 0;
}
