/* bench/probes/module_cost.c -- is a verbatim original entry slower when it sits in a
 * rewritten module? bench/dnn (docs/performance.md §9) measured every verbatim Triton
 * original 0.2 us longer in graph replay, with SASS identical to the unmodified build.
 * Loads each cubin given on the command line as a module, and times, interleaved over
 * rounds, a CUDA graph of 200 launches of k_pw (256 K floats) and of k_tiny (1 block) from
 * each module: median us per launch. usage: module_cost LABEL=FILE.cubin ... */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe_check.h"

enum { LAUNCHES = 200, ROUNDS = 11, N = 1 << 18, MAXM = 8 };

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static CUgraphExec capture(CUstream s, CUfunction f, unsigned grid, unsigned block, void **args)
{
    CUgraph g;
    CUgraphExec ge;
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    for (int i = 0; i < LAUNCHES; i++) CK(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, args, NULL));
    CK(cuStreamEndCapture(s, &g));
    CK(cuGraphInstantiate(&ge, g, 0));
    CK(cuGraphDestroy(g));
    return ge;
}

static double time_graph(CUstream s, CUgraphExec ge, CUevent a, CUevent b)
{
    float ms;
    CK(cuEventRecord(a, s));
    CK(cuGraphLaunch(ge, s));
    CK(cuEventRecord(b, s));
    CK(cuEventSynchronize(b));
    CK(cuEventElapsedTime(&ms, a, b));
    return ms * 1000.0 / LAUNCHES;
}

int main(int argc, char **argv)
{
    int nm = argc - 1;
    if (nm < 1 || nm > MAXM) {
        fprintf(stderr, "usage: module_cost LABEL=FILE.cubin ... (1 to %d)\n", MAXM);
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CUdeviceptr buf, ctr;
    CK(cuMemAlloc(&buf, N * sizeof(float)));
    CK(cuMemAlloc(&ctr, 64));
    CK(cuMemsetD32(buf, 0, N));
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUevent a, b;
    CK(cuEventCreate(&a, CU_EVENT_DEFAULT));
    CK(cuEventCreate(&b, CU_EVENT_DEFAULT));
    const char *label[MAXM];
    CUgraphExec gpw[MAXM], gtiny[MAXM];
    int n = N;
    void *apw[] = {&buf, &n}, *atiny[] = {&ctr, &n};
    for (int i = 0; i < nm; i++) {
        char *eq = strchr(argv[i + 1], '=');
        if (!eq) {
            fprintf(stderr, "module_cost: %s: want LABEL=FILE\n", argv[i + 1]);
            return 2;
        }
        *eq = 0;
        label[i] = argv[i + 1];
        FILE *fp = fopen(eq + 1, "rb");
        if (!fp) {
            perror(eq + 1);
            return 1;
        }
        fseek(fp, 0, SEEK_END);
        long sz = ftell(fp);
        rewind(fp);
        char *img = malloc((size_t)sz);
        if (!img || fread(img, 1, (size_t)sz, fp) != (size_t)sz) return 1;
        fclose(fp);
        CUmodule m;
        CK(cuModuleLoadData(&m, img));
        free(img);
        CUfunction fpw, ftiny;
        CK(cuModuleGetFunction(&fpw, m, "k_pw"));
        CK(cuModuleGetFunction(&ftiny, m, "k_tiny"));
        gpw[i] = capture(s, fpw, N / 256, 256, apw);
        gtiny[i] = capture(s, ftiny, 1, 128, atiny);
    }
    double tpw[MAXM][ROUNDS], ttiny[MAXM][ROUNDS];
    for (int r = 0; r < ROUNDS + 2; r++)
        for (int i = 0; i < nm; i++) {
            double x = time_graph(s, gpw[i], a, b), y = time_graph(s, gtiny[i], a, b);
            if (r >= 2) tpw[i][r - 2] = x, ttiny[i][r - 2] = y;
        }
    for (int i = 0; i < nm; i++) {
        qsort(tpw[i], ROUNDS, sizeof(double), cmp);
        qsort(ttiny[i], ROUNDS, sizeof(double), cmp);
        printf("RESULT %-14s pointwise %.3f us/launch (min %.3f), tiny %.3f (min %.3f); diff to %s: %+.3f / %+.3f\n",
               label[i], tpw[i][ROUNDS / 2], tpw[i][0], ttiny[i][ROUNDS / 2], ttiny[i][0], label[0],
               tpw[i][ROUNDS / 2] - tpw[0][ROUNDS / 2], ttiny[i][ROUNDS / 2] - ttiny[0][ROUNDS / 2]);
    }
    return 0;
}
