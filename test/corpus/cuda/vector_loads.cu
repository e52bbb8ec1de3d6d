// Vectorised memory access: float4/int4/double2/float2/uchar4 loads and
// stores (ld.global.v4.f32 etc.), __ldg (ld.global.nc), __ldcs/__stcs cache
// hints, and a shared-memory v2 access.

extern "C" __global__ void copy_float4(const float4 *__restrict__ in, float4 *__restrict__ out, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = in[i];
        v.x *= 2.0f; v.y *= 2.0f; v.z *= 2.0f; v.w *= 2.0f;
        out[i] = v;
    }
}

extern "C" __global__ void mixed_vectors(const int4 *a, const double2 *b, const uchar4 *c,
                                         float2 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int4 va = __ldg(&a[i]);
    double2 vb = __ldg(&b[i]);
    uchar4 vc = c[i];
    float2 r;
    r.x = (float)(va.x + va.y + vc.x + vc.y) + (float)vb.x;
    r.y = (float)(va.z - va.w + vc.z - vc.w) + (float)vb.y;
    out[i] = r;
}

extern "C" __global__ void streaming_hints(const float4 *in, float4 *out, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = __ldcs(&in[i]);
        float4 w = __ldlu(&in[(i + 1) % n4]);
        v.x += w.w;
        __stcs(&out[i], v);
        __stwt(&out[(i + 7) % n4], w);
    }
}

extern "C" __global__ void shared_vector_transpose(const float2 *in, float2 *out)
{
    __shared__ float2 tile[64];
    tile[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = tile[63 - threadIdx.x];
}

// Misaligned-by-design scalar tail after a vector body.
extern "C" __global__ void vector_body_scalar_tail(const float *in, float *out, int n)
{
    int n4 = n / 4;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float4 *in4 = reinterpret_cast<const float4 *>(in);
    float4 *out4 = reinterpret_cast<float4 *>(out);
    if (i < n4) {
        float4 v = in4[i];
        out4[i] = make_float4(v.w, v.z, v.y, v.x);
    }
    int t = n4 * 4 + i;
    if (i < n - n4 * 4)
        out[t] = -in[t];
}
