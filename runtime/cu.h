/* cu.h — the CUDA driver entry points libtidal uses, as one table of function pointers.
 * libtidal never links libcuda: tidal__cu_load() dlopens it (TIDAL_LIBCUDA or
 * libcuda.so.1) and takes each entry point from that library itself, so an LD_PRELOAD
 * interposer calling through this table reaches the real driver, never itself. Unit
 * tests install a fake table with tidal__set_driver() (runtime_internal.h). */
#ifndef TIDAL_CU_H
#define TIDAL_CU_H

#include <cuda.h>

typedef struct tidal_cu {
    CUresult (*Init)(unsigned);
    CUresult (*GetErrorName)(CUresult, const char **);
    CUresult (*CtxGetCurrent)(CUcontext *);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxGetDevice)(CUdevice *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemAllocHost)(void **, size_t);
    CUresult (*MemFreeHost)(void *);
    CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*ModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule, const char *);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*ModuleGetFunctionCount)(unsigned *, CUmodule);
    CUresult (*ModuleEnumerateFunctions)(CUfunction *, unsigned, CUmodule);
    CUresult (*FuncGetModule)(CUmodule *, CUfunction);
    CUresult (*FuncGetName)(const char **, CUfunction);
    CUresult (*FuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *);
    CUresult (*FuncGetAttribute)(int *, CUfunction_attribute, CUfunction);
    CUresult (*FuncSetAttribute)(CUfunction, CUfunction_attribute, int);
    CUresult (*FuncLoad)(CUfunction);
    CUresult (*KernelGetFunction)(CUfunction *, CUkernel);
    CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventQuery)(CUevent);
    CUresult (*EventDestroy)(CUevent);
    CUresult (*StreamIsCapturing)(CUstream, CUstreamCaptureStatus *);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
    /* optional: NULL when the driver lacks them */
    CUresult (*LaunchKernel_ptsz)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  CUstream, void **, void **);
    CUresult (*LaunchKernelEx_ptsz)(const CUlaunchConfig *, CUfunction, void **, void **);
    CUresult (*GetProcAddress)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
    /* optional: placement (green contexts, CUDA 12.4+), duration samples, probes */
    CUresult (*DeviceGetDevResource)(CUdevice, CUdevResource *, CUdevResourceType);
    CUresult (*DevSmResourceSplitByCount)(CUdevResource *, unsigned *, const CUdevResource *, CUdevResource *, unsigned,
                                          unsigned);
    CUresult (*DevResourceGenerateDesc)(CUdevResourceDesc *, CUdevResource *, unsigned);
    CUresult (*GreenCtxCreate)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned);
    CUresult (*GreenCtxDestroy)(CUgreenCtx);
    CUresult (*GreenCtxStreamCreate)(CUstream *, CUgreenCtx, unsigned, int);
    CUresult (*StreamCreateWithPriority)(CUstream *, unsigned, int);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*MemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
    CUresult (*ThreadExchangeStreamCaptureMode)(CUstreamCaptureMode *);
    CUresult (*StreamGetCaptureInfo)(CUstream, CUstreamCaptureStatus *, cuuint64_t *); /* the id only */
    /* optional: duration samples without the host's launch gap (launch.c, the gate) */
    CUresult (*StreamWaitValue32)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
    CUresult (*MemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned);
    /* optional: the VMM API, for memory homed on one L2 side (l2mem.c) */
    CUresult (*MemGetAllocationGranularity)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
    CUresult (*MemCreate)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
    CUresult (*MemRelease)(CUmemGenericAllocationHandle);
    CUresult (*MemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    CUresult (*MemAddressFree)(CUdeviceptr, size_t);
    CUresult (*MemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
    CUresult (*MemUnmap)(CUdeviceptr, size_t);
    CUresult (*MemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
    /* optional: the side copy of a bimodal tensor is written from its linear copy (bimodal.c) */
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    /* optional: for the preload's hooks (CUkernel handles, launch.c) */
    CUresult (*LibraryGetKernel)(CUkernel *, CUlibrary, const char *);
    CUresult (*LibraryEnumerateKernels)(CUkernel *, unsigned, CUlibrary);
    /* optional: the serving engine (serve.c): graph replays and a pinned completion word */
    CUresult (*GraphLaunch)(CUgraphExec, CUstream);
    CUresult (*GraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*GraphExecDestroy)(CUgraphExec);
    CUresult (*StreamWriteValue32)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
    CUresult (*StreamQuery)(CUstream);
    /* optional: launches routed to a partition's cluster stream (launch.c) */
    CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned);
} tidal_cu;

/* Fill *cu from the driver library at path (NULL: $TIDAL_LIBCUDA, else libcuda.so.1),
 * each entry point looked up with sym (NULL: dlsym; the preload library, which
 * interposes dlsym, passes the real one so that the table holds the driver's functions,
 * not its own hooks). 0 on success; otherwise -1 with a message in err ("libcuda.so.1:
 * cannot open shared object file", "libcuda.so.1 lacks cuFuncGetParamInfo (driver too
 * old?)"). The library stays loaded. *handle gets the dlopen handle. */
int tidal__cu_load(const char *path, void *(*sym)(void *, const char *), tidal_cu *cu, void **handle, char *err,
                   size_t errlen);

/* "CUDA_ERROR_OUT_OF_MEMORY" (or "CUresult 123" if the driver cannot name it). */
const char *tidal__cu_errname(const tidal_cu *cu, CUresult r, char *buf, size_t n);

#endif
