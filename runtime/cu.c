/* cu.c — dlopen the CUDA driver and fill the entry-point table (cu.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"

int tidal__cu_load(const char *path, void *(*sym)(void *, const char *), tidal_cu *cu, void **handle, char *err,
                   size_t errlen)
{
    if (!sym) sym = dlsym;
    if (!path) path = getenv("TIDAL_LIBCUDA");
    if (!path || !*path) path = "libcuda.so.1";
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(err, errlen, "cannot load the CUDA driver: %s", why ? why : path);
        return -1;
    }
    memset(cu, 0, sizeof *cu);
    struct {
        const char *name;
        void **slot;
        int required;
    } t[] = {
#define REQ(field, name) {name, (void **)&cu->field, 1}
#define OPT(field, name)             \
    {                                \
        name, (void **)&cu->field, 0 \
    }
        REQ(Init, "cuInit"),
        REQ(GetErrorName, "cuGetErrorName"),
        REQ(CtxGetCurrent, "cuCtxGetCurrent"),
        REQ(CtxSetCurrent, "cuCtxSetCurrent"),
        REQ(CtxGetDevice, "cuCtxGetDevice"),
        REQ(DeviceGet, "cuDeviceGet"),
        REQ(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
        REQ(DeviceGetAttribute, "cuDeviceGetAttribute"),
        REQ(MemAlloc, "cuMemAlloc_v2"),
        REQ(MemFree, "cuMemFree_v2"),
        REQ(MemAllocHost, "cuMemAllocHost_v2"),
        REQ(MemFreeHost, "cuMemFreeHost"),
        REQ(MemsetD8Async, "cuMemsetD8Async"),
        REQ(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
        REQ(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
        REQ(StreamCreate, "cuStreamCreate"),
        REQ(StreamDestroy, "cuStreamDestroy_v2"),
        REQ(StreamSynchronize, "cuStreamSynchronize"),
        REQ(ModuleGetGlobal, "cuModuleGetGlobal_v2"),
        REQ(ModuleGetFunction, "cuModuleGetFunction"),
        REQ(ModuleGetFunctionCount, "cuModuleGetFunctionCount"),
        REQ(ModuleEnumerateFunctions, "cuModuleEnumerateFunctions"),
        REQ(FuncGetModule, "cuFuncGetModule"),
        REQ(FuncGetName, "cuFuncGetName"),
        REQ(FuncGetParamInfo, "cuFuncGetParamInfo"),
        REQ(FuncGetAttribute, "cuFuncGetAttribute"),
        REQ(FuncSetAttribute, "cuFuncSetAttribute"),
        REQ(FuncLoad, "cuFuncLoad"),
        REQ(KernelGetFunction, "cuKernelGetFunction"),
        REQ(OccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor"),
        REQ(EventCreate, "cuEventCreate"),
        REQ(EventRecord, "cuEventRecord"),
        REQ(EventQuery, "cuEventQuery"),
        REQ(EventDestroy, "cuEventDestroy_v2"),
        REQ(StreamIsCapturing, "cuStreamIsCapturing"),
        REQ(LaunchKernel, "cuLaunchKernel"),
        REQ(LaunchKernelEx, "cuLaunchKernelEx"),
        OPT(LaunchKernel_ptsz, "cuLaunchKernel_ptsz"),
        OPT(LaunchKernelEx_ptsz, "cuLaunchKernelEx_ptsz"),
        OPT(GetProcAddress, "cuGetProcAddress_v2"),
        OPT(DeviceGetDevResource, "cuDeviceGetDevResource"),
        OPT(DevSmResourceSplitByCount, "cuDevSmResourceSplitByCount"),
        OPT(DevResourceGenerateDesc, "cuDevResourceGenerateDesc"),
        OPT(GreenCtxCreate, "cuGreenCtxCreate"),
        OPT(GreenCtxDestroy, "cuGreenCtxDestroy"),
        OPT(GreenCtxStreamCreate, "cuGreenCtxStreamCreate"),
        OPT(StreamCreateWithPriority, "cuStreamCreateWithPriority"),
        OPT(ModuleLoadData, "cuModuleLoadData"),
        OPT(ModuleUnload, "cuModuleUnload"),
        OPT(EventElapsedTime, "cuEventElapsedTime_v2"),
        OPT(MemsetD32Async, "cuMemsetD32Async"),
        OPT(ThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode"),
        OPT(StreamGetCaptureInfo, "cuStreamGetCaptureInfo"),
        OPT(StreamWaitValue32, "cuStreamWaitValue32_v2"),
        OPT(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2"),
        OPT(MemGetAllocationGranularity, "cuMemGetAllocationGranularity"),
        OPT(MemCreate, "cuMemCreate"),
        OPT(MemRelease, "cuMemRelease"),
        OPT(MemAddressReserve, "cuMemAddressReserve"),
        OPT(MemAddressFree, "cuMemAddressFree"),
        OPT(MemMap, "cuMemMap"),
        OPT(MemUnmap, "cuMemUnmap"),
        OPT(MemSetAccess, "cuMemSetAccess"),
        OPT(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
        OPT(LibraryGetKernel, "cuLibraryGetKernel"),
        OPT(LibraryEnumerateKernels, "cuLibraryEnumerateKernels"),
        OPT(GraphLaunch, "cuGraphLaunch"),
        OPT(GraphInstantiateWithFlags, "cuGraphInstantiateWithFlags"),
        OPT(GraphExecDestroy, "cuGraphExecDestroy"),
        OPT(StreamWriteValue32, "cuStreamWriteValue32_v2"),
        OPT(StreamQuery, "cuStreamQuery"),
        OPT(StreamWaitEvent, "cuStreamWaitEvent"),
#undef REQ
#undef OPT
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        *t[i].slot = sym(h, t[i].name);
        if (!*t[i].slot && t[i].required) {
            snprintf(err, errlen, "%s lacks %s (a CUDA 12.4 or newer driver is needed)", path, t[i].name);
            return -1;
        }
    }
    if (handle) *handle = h;
    return 0;
}

const char *tidal__cu_errname(const tidal_cu *cu, CUresult r, char *buf, size_t n)
{
    const char *s = NULL;
    if (cu && cu->GetErrorName && cu->GetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
    snprintf(buf, n, "CUresult %d", (int)r);
    return buf;
}
