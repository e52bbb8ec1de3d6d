// LayerNorm forward (Welford mean/variance with shuffle merge) and an RMSNorm
// variant; rsqrtf, division, optional affine parameters (null pointer checks).

struct Welford { float mean, m2, n; };

__device__ __forceinline__ Welford welford_merge(Welford a, Welford b)
{
    float n = a.n + b.n;
    if (n == 0.0f)
        return a;
    float d = b.mean - a.mean;
    float wb = b.n / n;
    Welford r;
    r.mean = a.mean + d * wb;
    r.m2 = a.m2 + b.m2 + d * d * a.n * wb;
    r.n = n;
    return r;
}

extern "C" __global__ void layernorm_fwd(const float *__restrict__ x, const float *__restrict__ gamma,
                                         const float *__restrict__ beta, float *__restrict__ y,
                                         float *__restrict__ mean_out, float *__restrict__ rstd_out,
                                         int cols, float eps)
{
    __shared__ Welford sw[32];
    __shared__ float s_mean, s_rstd;
    const float *xr = x + (size_t)blockIdx.x * cols;
    Welford w = {0.0f, 0.0f, 0.0f};
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = xr[c];
        w.n += 1.0f;
        float d = v - w.mean;
        w.mean += d / w.n;
        w.m2 += d * (v - w.mean);
    }
    for (int o = 16; o > 0; o >>= 1) {
        Welford other;
        other.mean = __shfl_down_sync(0xffffffffu, w.mean, o);
        other.m2 = __shfl_down_sync(0xffffffffu, w.m2, o);
        other.n = __shfl_down_sync(0xffffffffu, w.n, o);
        w = welford_merge(w, other);
    }
    if ((threadIdx.x & 31) == 0)
        sw[threadIdx.x >> 5] = w;
    __syncthreads();
    if (threadIdx.x == 0) {
        Welford t = sw[0];
        for (unsigned i = 1; i < blockDim.x / 32; ++i)
            t = welford_merge(t, sw[i]);
        s_mean = t.mean;
        s_rstd = rsqrtf(t.m2 / cols + eps);
        if (mean_out) mean_out[blockIdx.x] = s_mean;
        if (rstd_out) rstd_out[blockIdx.x] = s_rstd;
    }
    __syncthreads();
    float mu = s_mean, rs = s_rstd;
    float *yr = y + (size_t)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = (xr[c] - mu) * rs;
        if (gamma) v *= gamma[c];
        if (beta) v += beta[c];
        yr[c] = v;
    }
}

extern "C" __global__ void rmsnorm_fwd(const float *x, const float *w, float *y, int cols, float eps)
{
    __shared__ float partial[32];
    const float *xr = x + (size_t)blockIdx.x * cols;
    float ss = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        ss = fmaf(xr[c], xr[c], ss);
    for (int o = 16; o > 0; o >>= 1)
        ss += __shfl_xor_sync(0xffffffffu, ss, o);
    if ((threadIdx.x & 31) == 0)
        partial[threadIdx.x >> 5] = ss;
    __syncthreads();
    float tot = 0.0f;
    for (unsigned i = 0; i < blockDim.x / 32; ++i)
        tot += partial[i];
    float r = rsqrtf(tot / (float)cols + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        y[(size_t)blockIdx.x * cols + c] = xr[c] * r * w[c];
}
