/* fake_cuda.c -- a stand-in for libcuda.so.1 under the real libtidal.so in the Python unit
 * tests of tidal.serve's engine="c" (no GPU): the entry points libtidal's driver table needs
 * (runtime/cu.c), plus the ones of its serving engine. A graph "runs" during cuGraphLaunch:
 * an exec handle below 0x100000 sleeps that many microseconds; a larger one fails with
 * CUDA_ERROR_INVALID_VALUE. cuGraphInstantiateWithFlags makes a graph its own exec.
 *   cc -shared -fPIC fake_cuda.c -o fake_cuda.so */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
#define OK 0
#define INVALID_VALUE 1
#define NOT_FOUND 500

static char ctx_obj, *current;

CUresult cuInit(unsigned f)
{
    (void)f;
    return OK;
}
CUresult cuGetErrorName(CUresult r, const char **s)
{
    *s = r == INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE" : r == NOT_FOUND ? "CUDA_ERROR_NOT_FOUND" : "CUDA_ERROR_FAKE";
    return OK;
}
CUresult cuCtxGetCurrent(void **c)
{
    *c = current;
    return OK;
}
CUresult cuCtxSetCurrent(void *c)
{
    current = c;
    return OK;
}
CUresult cuCtxGetDevice(int *d)
{
    *d = 0;
    return OK;
}
CUresult cuDeviceGet(int *d, int o)
{
    *d = o;
    return OK;
}
CUresult cuDevicePrimaryCtxRetain(void **c, int d)
{
    (void)d;
    *c = &ctx_obj;
    return OK;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int d)
{
    (void)d;
    *v = attr == 16 ? 132 : 0; /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
    return OK;
}
CUresult cuMemAlloc_v2(uintptr_t *p, size_t n)
{
    *p = (uintptr_t)calloc(1, n);
    return OK;
}
CUresult cuMemFree_v2(uintptr_t p)
{
    free((void *)p);
    return OK;
}
CUresult cuMemAllocHost_v2(void **p, size_t n)
{
    *p = calloc(1, n);
    return OK;
}
CUresult cuMemFreeHost(void *p)
{
    free(p);
    return OK;
}
CUresult cuMemHostGetDevicePointer_v2(uintptr_t *d, void *h, unsigned f)
{
    (void)f;
    *d = (uintptr_t)h;
    return OK;
}
CUresult cuMemsetD8Async(uintptr_t p, unsigned char v, size_t n, void *s)
{
    (void)s;
    memset((void *)p, v, n);
    return OK;
}
CUresult cuMemcpyHtoDAsync_v2(uintptr_t d, const void *h, size_t n, void *s)
{
    (void)s;
    memcpy((void *)d, h, n);
    return OK;
}
CUresult cuMemcpyDtoHAsync_v2(void *h, uintptr_t d, size_t n, void *s)
{
    (void)s;
    memcpy(h, (void *)d, n);
    return OK;
}
static char streams[16];
static int nstreams;
CUresult cuStreamCreate(void **s, unsigned f)
{
    (void)f;
    *s = &streams[nstreams++ % 16];
    return OK;
}
CUresult cuStreamDestroy_v2(void *s)
{
    (void)s;
    return OK;
}
CUresult cuStreamSynchronize(void *s)
{
    (void)s;
    return OK;
}
CUresult cuStreamQuery(void *s)
{
    (void)s;
    return OK;
}
CUresult cuStreamIsCapturing(void *s, int *st)
{
    (void)s;
    *st = 0;
    return OK;
}
CUresult cuStreamWriteValue32_v2(void *s, uintptr_t a, uint32_t v, unsigned f)
{
    (void)s, (void)f;
    __atomic_store_n((uint32_t *)a, v, __ATOMIC_RELEASE);
    return OK;
}
CUresult cuGraphLaunch(void *exec, void *s)
{
    (void)s;
    uintptr_t us = (uintptr_t)exec;
    if (us >= 0x100000) return INVALID_VALUE;
    usleep((useconds_t)us);
    return OK;
}
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long f)
{
    (void)f;
    *exec = graph;
    return OK;
}
CUresult cuGraphExecDestroy(void *exec)
{
    (void)exec;
    return OK;
}
/* modules, functions, events and launches: present (libtidal requires them), never used here */
CUresult cuModuleGetGlobal_v2(uintptr_t *p, size_t *n, void *m, const char *name)
{
    (void)p, (void)n, (void)m, (void)name;
    return NOT_FOUND;
}
CUresult cuModuleGetFunction(void **f, void *m, const char *name)
{
    (void)f, (void)m, (void)name;
    return NOT_FOUND;
}
CUresult cuModuleGetFunctionCount(unsigned *n, void *m)
{
    (void)m;
    *n = 0;
    return OK;
}
CUresult cuModuleEnumerateFunctions(void **f, unsigned n, void *m)
{
    (void)f, (void)n, (void)m;
    return OK;
}
CUresult cuFuncGetModule(void **m, void *f)
{
    (void)m, (void)f;
    return NOT_FOUND;
}
CUresult cuFuncGetName(const char **s, void *f)
{
    (void)f;
    *s = "f";
    return OK;
}
CUresult cuFuncGetParamInfo(void *f, size_t i, size_t *o, size_t *sz)
{
    (void)f, (void)i, (void)o, (void)sz;
    return INVALID_VALUE;
}
CUresult cuFuncGetAttribute(int *v, int a, void *f)
{
    (void)a, (void)f;
    *v = 0;
    return OK;
}
CUresult cuFuncSetAttribute(void *f, int a, int v)
{
    (void)f, (void)a, (void)v;
    return OK;
}
CUresult cuFuncLoad(void *f)
{
    (void)f;
    return OK;
}
CUresult cuKernelGetFunction(void **f, void *k)
{
    (void)f, (void)k;
    return INVALID_VALUE;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int t, size_t sm)
{
    (void)f, (void)t, (void)sm;
    *n = 1;
    return OK;
}
static char events[64];
CUresult cuEventCreate(void **e, unsigned f)
{
    (void)f;
    *e = &events[0];
    return OK;
}
CUresult cuEventRecord(void *e, void *s)
{
    (void)e, (void)s;
    return OK;
}
CUresult cuEventQuery(void *e)
{
    (void)e;
    return OK;
}
CUresult cuEventDestroy_v2(void *e)
{
    (void)e;
    return OK;
}
CUresult cuLaunchKernel(void *f, unsigned a, unsigned b, unsigned c, unsigned d, unsigned e, unsigned g, unsigned sm,
                        void *s, void **p, void **x)
{
    (void)f, (void)a, (void)b, (void)c, (void)d, (void)e, (void)g, (void)sm, (void)s, (void)p, (void)x;
    return OK;
}
CUresult cuLaunchKernelEx(const void *cfg, void *f, void **p, void **x)
{
    (void)cfg, (void)f, (void)p, (void)x;
    return OK;
}
