// Half and bfloat16 math: scalar and packed (half2/bfloat162) arithmetic,
// conversions, hfma2, hmax, comparisons, and mixed-precision accumulation.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void half2_axpy(int n, __half2 a, const __half2 *x, __half2 *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = __hfma2(a, x[i], y[i]);
}

extern "C" __global__ void half_scalar_ops(const __half *x, __half *y, float *f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __half v = x[i];
    __half r = __hmul(v, __float2half(0.5f));
    r = __hadd(r, hsqrt(__habs(v)));
    if (__hgt(r, __float2half(2.0f)))
        r = __hmax(r, hexp(v));
    y[i] = r;
    f[i] = __half2float(r) + __half2float(__hneg(v));
}

extern "C" __global__ void bf16_ops(const __nv_bfloat16 *x, const __nv_bfloat162 *x2,
                                    __nv_bfloat16 *y, __nv_bfloat162 *y2, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __nv_bfloat16 v = x[i];
    float fv = __bfloat162float(v);
    y[i] = __float2bfloat16_rn(fv * 1.5f + 0.25f);
    __nv_bfloat162 p = x2[i];
    __nv_bfloat162 q = __hfma2(p, p, __float2bfloat162_rn(1.0f));
    y2[i] = __hmax2(q, __hmin2(p, __float2bfloat162_rn(-4.0f)));
}

// fp16 dot product with fp32 accumulation, conversions to/from int.
extern "C" __global__ void half_dot_mixed(const __half2 *a, const __half2 *b, float *out, int n2)
{
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += gridDim.x * blockDim.x) {
        float2 p = __half22float2(__hmul2(a[i], b[i]));
        acc += p.x + p.y;
    }
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(out, acc);
    if (threadIdx.x == 0) {
        __half h = __int2half_rn(blockIdx.x);
        out[1 + blockIdx.x] = (float)__half2int_rz(__hadd(h, __ushort_as_half(0x3c00)));
    }
}

extern "C" __global__ void half_atomics(__half2 *acc2, __nv_bfloat16 *accb, const __half2 *v)
{
    atomicAdd(acc2, v[threadIdx.x]);
    atomicAdd(accb, __float2bfloat16(1.0f));
}
