// Static and dynamic shared memory: extern __shared__ arrays (two views of the
// same dynamic buffer), static arrays of several types, 2D static arrays.
#include <cstdint>

extern __shared__ float dyn_smem[];

extern "C" __global__ void dynamic_shared_scan(const float *in, float *out, int n)
{
    float *s = dyn_smem;
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned off = 1; off < blockDim.x; off <<= 1) {
        float v = t >= off ? s[t - off] : 0.0f;
        __syncthreads();
        s[t] += v;
        __syncthreads();
    }
    if (i < n)
        out[i] = s[t];
}

// Dynamic shared memory split into two typed regions.
extern "C" __global__ void dynamic_shared_split(const int *keys, const float *vals, float *out, int n)
{
    extern __shared__ __align__(16) unsigned char raw[];
    int *skeys = reinterpret_cast<int *>(raw);
    float *svals = reinterpret_cast<float *>(raw + blockDim.x * sizeof(int));
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    skeys[t] = i < n ? keys[i] : -1;
    svals[t] = i < n ? vals[i] : 0.0f;
    __syncthreads();
    float acc = 0.0f;
    for (unsigned j = 0; j < blockDim.x; ++j)
        if (skeys[j] == skeys[t])
            acc += svals[j];
    if (i < n)
        out[i] = acc;
}

extern "C" __global__ void static_shared_mix(const double *in, double *out)
{
    __shared__ double sd[64];
    __shared__ int si[64];
    __shared__ __align__(16) float4 sv[16];
    __shared__ unsigned short sh[2][64];
    int t = threadIdx.x & 63;
    sd[t] = in[blockIdx.x * 64 + t];
    si[t] = t * 7;
    sh[t & 1][t] = (unsigned short)t;
    if (t < 16)
        sv[t] = make_float4(t, t + 1, t + 2, t + 3);
    __syncthreads();
    float4 q = sv[t & 15];
    out[blockIdx.x * 64 + t] = sd[63 - t] + si[(t + 5) & 63] + sh[(t + 1) & 1][t] + q.x + q.w;
}
