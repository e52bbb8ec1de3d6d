// Kernels with many parameters, including by-value structs (.param .align N
// .b8 name[K]), arrays inside structs, bool/char/short/double scalars,
// pointers to different address spaces, and a large (>256 B) parameter block.
#include <cstdint>

struct Small { int a; float b; };
struct __align__(16) Aligned16 { float v[4]; };
struct Mixed { char c; double d; short s; int64_t l; };
struct Big { float m[16][4]; int dims[3]; };            // 268 bytes

extern "C" __global__ void many_scalar_params(bool flag, char c, unsigned char uc, short s,
                                              unsigned short us, int i, unsigned u, long long ll,
                                              unsigned long long ull, float f, double d,
                                              int *out)
{
    out[threadIdx.x] = (flag ? 1 : 0) + c + uc + s + us + i + (int)u + (int)ll + (int)(ull >> 3)
                     + (int)f + (int)d;
}

extern "C" __global__ void struct_by_value(Small s, Aligned16 a, Mixed m, float *out)
{
    int t = threadIdx.x;
    out[t] = s.a * s.b + a.v[t & 3] + m.c + (float)m.d + m.s + (float)m.l;
}

extern "C" __global__ void big_struct_param(Big b, const float *__restrict__ x, float *__restrict__ y)
{
    int t = threadIdx.x & 15;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; ++k)
        acc += b.m[t][k] * x[k];
    y[blockIdx.x * 16 + t] = acc + b.dims[blockIdx.x % 3];
}

extern "C" __global__ void sixteen_pointers(const float *p0, const float *p1, const float *p2, const float *p3,
                                            const float *p4, const float *p5, const float *p6, const float *p7,
                                            const float *p8, const float *p9, const float *p10, const float *p11,
                                            const float *p12, const float *p13, const float *p14, float *dst,
                                            int n, float w0, float w1)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = w0 * (p0[i] + p1[i] + p2[i] + p3[i] + p4[i] + p5[i] + p6[i] + p7[i])
               + w1 * (p8[i] + p9[i] + p10[i] + p11[i] + p12[i] + p13[i] + p14[i]);
}

// Templated kernel taking a struct of arrays by value (mangled name).
template <int N> struct PtrArray { const float *p[N]; int n; };

template <int N>
__global__ void sum_ptr_array(PtrArray<N> arr, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < arr.n) {
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < N; ++k)
            s += arr.p[k][i];
        out[i] = s;
    }
}
template __global__ void sum_ptr_array<4>(PtrArray<4>, float *);
template __global__ void sum_ptr_array<8>(PtrArray<8>, float *);
