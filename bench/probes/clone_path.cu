// bench/probes/clone_path.cu -- where the placed clone's +0.5 us per launch goes.
// clone_cost.cu built the clone's launch *shape* by hand (64-byte parameter, 24 dynamic
// bytes, shared words, barrier) and measured only +0.05..0.11 us, against +0.53 for the real
// clone of bench/gpu's `tiny` (STATIC, workers = blocks: no memory read, no barrier). So the
// rest is the code the clone runs before and after the body. This probe times, as CUDA
// graphs of 200 one-block launches (median over interleaved rounds, us per launch):
//   - PTX modules given on the command line (clone_path.sh makes them: the real clone and
//     variants of it with one part cut), entry `tiny` or `tiny__tidal_reshaped`;
//   - pad-N: the original body after N executed independent integer ops (does executed
//     code length alone cost this much?), pad-skip: the same code present but jumped over.
// Usage: [CLONE_PATH_BLOCKS=N] clone_path NAME=FILE.ptx ...   (N blocks per launch, default 1)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>

#include "probe_check.h"
#include "tidal_abi.h"


template <int N> __device__ __forceinline__ unsigned pad(unsigned a)
{
    unsigned b = a + 1, c = a + 2, d = a + 3;
#pragma unroll
    for (int i = 0; i < N / 4; i++)   // four independent chains of squarings: ptxas cannot fold them
        asm volatile("mul.lo.u32 %0, %0, %0;\n\tmul.lo.u32 %1, %1, %1;\n\tmul.lo.u32 %2, %2, %2;\n\tmul.lo.u32 %3, %3, %3;"
                     : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
    return a ^ b ^ c ^ d;
}
__device__ __forceinline__ void body(unsigned *c, unsigned v)
{
    if (threadIdx.x == 0) atomicAdd(c + (v & 1), 1u);
}
__global__ void k_plain(unsigned *c, unsigned s) { body(c, 0); }
__global__ void k_pad64(unsigned *c, unsigned s) { body(c, pad<64>(s)); }
__global__ void k_pad128(unsigned *c, unsigned s) { body(c, pad<128>(s)); }
__global__ void k_pad256(unsigned *c, unsigned s) { body(c, pad<256>(s)); }
__global__ void k_padskip(unsigned *c, unsigned s) { body(c, s == 12345u ? pad<256>(s) : 0u); }

enum { LAUNCHES = 200, ROUNDS = 15 };

struct Variant {
    std::string name;
    CUfunction f = nullptr;   // PTX variants
    const void *k = nullptr;  // runtime kernels
    unsigned smem = 0;
    bool clone = false;
    cudaGraphExec_t ge{};
};

int main(int argc, char **argv)
{
    RK(cudaFree(0));
    unsigned *cnt;
    const char *nb = getenv("CLONE_PATH_BLOCKS");
    const unsigned blocks = nb && atoi(nb) > 0 ? (unsigned)atoi(nb) : 1;
    RK(cudaMalloc(&cnt, 256)); // bench_kernels' tiny counts into out[blockIdx & 63]
    RK(cudaMemset(cnt, 0, 256));
    cudaStream_t st;
    RK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    std::vector<Variant> vs;
    const void *ks[] = {(const void *)k_plain, (const void *)k_pad64, (const void *)k_pad128, (const void *)k_pad256,
                        (const void *)k_padskip};
    const char *kn[] = {"plain", "pad-64", "pad-128", "pad-256", "pad-skip"};
    for (int i = 0; i < 5; i++) {
        Variant v;
        v.name = kn[i];
        v.k = ks[i];
        vs.push_back(v);
    }
    for (int a = 1; a < argc; a++) {
        const char *eq = strchr(argv[a], '=');
        if (!eq) { fprintf(stderr, "usage: clone_path NAME=FILE.ptx ...\n"); return 2; }
        FILE *fp = fopen(eq + 1, "rb");
        if (!fp) { perror(eq + 1); return 1; }
        std::string src;
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, fp)) > 0) src.append(buf, n);
        fclose(fp);
        CUmodule m;
        CK(cuModuleLoadData(&m, src.c_str()));
        Variant v;
        v.name = std::string(argv[a], eq - argv[a]);
        if (cuModuleGetFunction(&v.f, m, "tiny" TIDAL_RESHAPED_SUFFIX) == CUDA_SUCCESS) {
            v.clone = true;
            v.smem = TIDAL_CLONE_SMEM(0);
        } else
            CK(cuModuleGetFunction(&v.f, m, "tiny"));
        vs.push_back(v);
    }
    tidal_launch tl;
    memset(&tl, 0, sizeof tl);
    tl.partition = (CUdeviceptr)cnt;   // never read on the covering static path, only tested for 0
    tl.grid[0] = blocks;
    tl.grid[1] = tl.grid[2] = 1;
    tl.chunk = 1;
    tl.flags = TIDAL_LAUNCH_STATIC;
    tl.base = blocks;
    tl.sh_off = TIDAL_SH_OFFSET(0);
    unsigned s = 7;
    for (Variant &v : vs) {
        cudaGraph_t g;
        RK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < LAUNCHES; i++) {
            if (v.k) {
                void *args[] = {&cnt, &s};
                RK(cudaLaunchKernel(v.k, blocks, 128, args, 0, st));
            } else {
                void *args[] = {&cnt, &tl};
                CK(cuLaunchKernel(v.f, blocks, 1, 1, 128, 1, 1, v.smem, (CUstream)st, args, nullptr));
            }
        }
        RK(cudaStreamEndCapture(st, &g));
        RK(cudaGraphInstantiate(&v.ge, g, 0));
        RK(cudaGraphDestroy(g));
    }
    cudaEvent_t e0, e1;
    RK(cudaEventCreate(&e0));
    RK(cudaEventCreate(&e1));
    std::vector<std::vector<double>> t(vs.size());
    for (int r = 0; r < ROUNDS + 2; r++)
        for (size_t k = 0; k < vs.size(); k++) {
            float ms;
            RK(cudaEventRecord(e0, st));
            RK(cudaGraphLaunch(vs[k].ge, st));
            RK(cudaEventRecord(e1, st));
            RK(cudaEventSynchronize(e1));
            RK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 2) t[k].push_back(ms * 1000.0 / LAUNCHES);
        }
    unsigned h[64], got = 0;
    RK(cudaMemcpy(h, cnt, sizeof h, cudaMemcpyDeviceToHost));
    for (unsigned x : h) got += x;
    const unsigned expect = (unsigned)vs.size() * LAUNCHES * (ROUNDS + 2) * blocks;
    for (size_t k = 0; k < vs.size(); k++) std::sort(t[k].begin(), t[k].end());
    const double base = t[0][ROUNDS / 2];
    for (size_t k = 0; k < vs.size(); k++)
        printf("RESULT %-16s %.3f us/launch (min %.3f)  diff to plain %+.3f\n", vs[k].name.c_str(), t[k][ROUNDS / 2],
               t[k][0], t[k][ROUNDS / 2] - base);
    printf("%s: %u atomics counted, %u expected (%u blocks per launch)\n", got == expect ? "PASS" : "FAIL", got, expect,
           blocks);
    return got == expect ? 0 : 1;
}
