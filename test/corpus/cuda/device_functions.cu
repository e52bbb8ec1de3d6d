// Non-inlined __device__ functions with scalar, pointer, vector and struct
// parameters and return values (.func with .param), recursion, and
// internal-linkage (static) device functions.
#include <cstdint>

struct Pair { float a; int b; };
struct Vec3 { float x, y, z; };

extern "C" __device__ __noinline__ float dev_poly(float x, float a, float b, float c)
{
    return (a * x + b) * x + c;
}

extern "C" __device__ __noinline__ int dev_clamp_index(int i, int lo, int hi)
{
    return i < lo ? lo : (i > hi ? hi : i);
}

__device__ __noinline__ Pair dev_make_pair(float a, int b)
{
    Pair p; p.a = a * 2.0f; p.b = b + 1;
    return p;
}

__device__ __noinline__ Vec3 dev_cross(Vec3 u, Vec3 v)
{
    return Vec3{u.y * v.z - u.z * v.y, u.z * v.x - u.x * v.z, u.x * v.y - u.y * v.x};
}

__device__ __noinline__ float4 dev_scale4(float4 v, float s)
{
    return make_float4(v.x * s, v.y * s, v.z * s, v.w * s);
}

static __device__ __noinline__ void dev_store_sum(float *dst, const float *a, const float *b, int n)
{
    for (int i = 0; i < n; ++i)
        dst[i] = a[i] + b[i];
}

__device__ __noinline__ double dev_mixed(int8_t c, short s, long long l, double d, bool flag)
{
    return flag ? c + s + (double)l * d : d;
}

// Recursion: cannot be inlined; uses the device call stack (%SP/%SPL).
__device__ __noinline__ unsigned long long dev_fib(int n)
{
    return n < 2 ? (unsigned long long)n : dev_fib(n - 1) + dev_fib(n - 2);
}

__device__ int dev_ackermann_like(int m, int n)
{
    if (m == 0)
        return n + 1;
    if (n == 0)
        return dev_ackermann_like(m - 1, 1);
    return dev_ackermann_like(m - 1, dev_ackermann_like(m, n - 1) & 7);
}

// Recursive descent over an implicit binary tree held in an array.
__device__ __noinline__ float dev_tree_sum(const float *tree, int node, int n)
{
    if (node >= n)
        return 0.0f;
    return tree[node] + dev_tree_sum(tree, 2 * node + 1, n) + dev_tree_sum(tree, 2 * node + 2, n);
}

extern "C" __global__ void call_device_functions(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = dev_clamp_index(i, 0, n - 1);
    float y = dev_poly(in[j], 1.5f, -2.0f, 0.25f);
    Pair p = dev_make_pair(y, j);
    Vec3 c = dev_cross(Vec3{in[j], 1.0f, 2.0f}, Vec3{0.5f, y, -1.0f});
    float4 q = dev_scale4(make_float4(c.x, c.y, c.z, p.a), 0.5f);
    out[j] = q.x + q.y + q.z + q.w + (float)p.b
           + (float)dev_mixed((int8_t)j, (short)i, (long long)n, 0.125, (i & 1) != 0);
}

extern "C" __global__ void call_store_sum(float *dst, const float *a, const float *b, int n)
{
    if (threadIdx.x == 0)
        dev_store_sum(dst + blockIdx.x * n, a + blockIdx.x * n, b + blockIdx.x * n, n);
}

extern "C" __global__ void recursion_kernel(unsigned long long *out, const float *tree, float *tsum, int n)
{
    int i = threadIdx.x;
    out[i] = dev_fib(i & 15) + (unsigned long long)dev_ackermann_like(2, i & 3);
    if (i == 0)
        *tsum = dev_tree_sum(tree, 0, n);
}
