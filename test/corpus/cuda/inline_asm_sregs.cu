// Inline PTX: predicates (setp/@p/selp, negated predicates), special
// registers (%smid, %warpid, %laneid, %globaltimer, %clock64, %nsmid,
// %lanemask_lt, %dynamic_smem_size), __nanosleep, clock64, brev/bfind/prmt,
// and a spin-wait with nanosleep backoff.
#include <cstdint>

__device__ __forceinline__ unsigned read_smid()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}

__device__ __forceinline__ unsigned long long read_globaltimer()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

extern "C" __global__ void sm_and_timers(unsigned long long *out)
{
    unsigned warpid, laneid, nsmid, ltmask, dsmem;
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(warpid));
    asm("mov.u32 %0, %%laneid;" : "=r"(laneid));
    asm("mov.u32 %0, %%nsmid;" : "=r"(nsmid));
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(ltmask));
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dsmem));
    long long c0 = clock64();
    unsigned long long g0 = read_globaltimer();
    __nanosleep(100);
    unsigned c32 = clock();
    long long c1 = clock64();
    unsigned long long g1 = read_globaltimer();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i * 4 + 0] = ((unsigned long long)read_smid() << 32) | nsmid;
    out[i * 4 + 1] = (unsigned long long)(c1 - c0) + c32;
    out[i * 4 + 2] = g1 - g0;
    out[i * 4 + 3] = ((unsigned long long)warpid << 40) | ((unsigned long long)laneid << 32) | (ltmask ^ dsmem);
}

// Predicated inline asm: clamp with explicit predicate registers.
__device__ __forceinline__ int clamp_pred(int x, int lo, int hi)
{
    int r;
    asm("{\n\t"
        ".reg .pred p_lo, p_hi;\n\t"
        "setp.lt.s32 p_lo, %1, %2;\n\t"
        "setp.gt.s32 p_hi, %1, %3;\n\t"
        "mov.s32 %0, %1;\n\t"
        "@p_lo mov.s32 %0, %2;\n\t"
        "@p_hi mov.s32 %0, %3;\n\t"
        "}"
        : "=r"(r) : "r"(x), "r"(lo), "r"(hi));
    return r;
}

extern "C" __global__ void predicated_asm(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i % n];
    int c = clamp_pred(v, -10, 10);
    unsigned b, lz, perm;
    asm("brev.b32 %0, %1;" : "=r"(b) : "r"(v));
    asm("bfind.u32 %0, %1;" : "=r"(lz) : "r"(v));
    asm("prmt.b32 %0, %1, %2, 0x5410;" : "=r"(perm) : "r"(v), "r"(c));
    int sel;
    asm("{\n\t"
        ".reg .pred p;\n\t"
        "setp.ne.s32 p, %1, 0;\n\t"
        "@!p mov.s32 %0, -1;\n\t"
        "@p  mov.s32 %0, 1;\n\t"
        "}" : "=r"(sel) : "r"(v & 1));
    if (i < n)
        out[i] = c + (int)(b ^ lz ^ perm) + sel;
}

// Spin-wait on a flag with exponential nanosleep backoff (volatile loads,
// ld.acquire via asm, membar/fence).
extern "C" __global__ void spin_wait_flag(volatile int *flag, int *data)
{
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0) {
            data[0] = 123;
            __threadfence_system();
            asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(flag), "r"(1) : "memory");
        }
        return;
    }
    if (threadIdx.x == 0) {
        unsigned ns = 8;
        int f;
        for (;;) {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(f) : "l"(flag) : "memory");
            if (f)
                break;
            __nanosleep(ns);
            if (ns < 1024)
                ns *= 2;
        }
        data[blockIdx.x] = data[0] + 1;
    }
    __syncwarp();
}

// sm_90a-only instruction guarded by the feature macro (present only in the
// sm_90a PTX): register reallocation for warp-specialised kernels.
extern "C" __global__ void __launch_bounds__(384, 1) setmaxnreg_guarded(float *x)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    if (threadIdx.x < 128)
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    else
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
#endif
    x[blockIdx.x * blockDim.x + threadIdx.x] *= 2.0f;
}
