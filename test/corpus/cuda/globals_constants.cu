// Module-scope variables: __constant__ and __device__ globals with
// initializers (scalars, arrays, structs, strings, pointers to globals),
// explicit alignment, uninitialised globals, static (internal) globals,
// and __managed__-free extern-visible symbols.
#include <cstdint>

struct __align__(16) Params {
    float scale;
    float bias;
    int mode;
    int pad;
};

__constant__ float c_coeffs[8] = {1.0f, -0.5f, 0.25f, -0.125f, 0.0625f, 3.0e-8f, 1.0e10f, -0.0f};
__constant__ Params c_params = {2.0f, 0.5f, 3, 0};
__constant__ int c_lut[16];                       // set from the host, no initializer
__constant__ double c_pi = 3.14159265358979323846;
__constant__ char c_name[] = "tidal corpus\n";

__device__ int g_counter = 42;
__device__ __align__(16) float g_vec[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__device__ __align__(64) unsigned char g_bytes[128];
__device__ unsigned long long g_u64 = 0xDEADBEEFCAFEBABEull;
__device__ int *g_ptr_to_counter = &g_counter;
__device__ const char *g_msg = "hello from a global";
static __device__ int s_private_state[4] = {7, 8, 9, 10};
__device__ short g_shorts[3] = {-1, 2, -3};
__device__ int8_t g_i8[5] = {1, -2, 3, -4, 5};

extern "C" __global__ void use_constants(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = x[i], acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; ++k)
        acc = acc * v + c_coeffs[k];
    acc = acc * c_params.scale + c_params.bias;
    if (c_params.mode == 3)
        acc += (float)c_pi * c_lut[i & 15];
    y[i] = acc + (float)c_name[i % 13];
}

extern "C" __global__ void use_globals(int *out)
{
    int t = threadIdx.x;
    atomicAdd(&g_counter, 1);
    float4 v = *reinterpret_cast<const float4 *>(g_vec);
    g_bytes[t & 127] = (unsigned char)t;
    int r = *g_ptr_to_counter + s_private_state[t & 3] + g_shorts[t % 3] + g_i8[t % 5];
    out[t] = r + (int)(v.x + v.w) + (int)(g_u64 >> 60) + g_msg[t & 7];
    if (t == 0)
        s_private_state[0]++;
}
