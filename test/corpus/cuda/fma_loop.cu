// Compute-bound FMA loops (peak-FLOPs style microbenchmark), unrolled, with
// float, double and mixed integer mad; loop-carried dependencies per lane.

extern "C" __global__ void fma_throughput_f32(float *out, float a, float b, int iters)
{
    float x0 = threadIdx.x, x1 = x0 + 1.0f, x2 = x0 + 2.0f, x3 = x0 + 3.0f;
    float x4 = x0 * 0.5f, x5 = x1 * 0.5f, x6 = x2 * 0.5f, x7 = x3 * 0.5f;
    for (int i = 0; i < iters; ++i) {
#pragma unroll 16
        for (int j = 0; j < 64; ++j) {
            x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
            x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

extern "C" __global__ void fma_throughput_f64(double *out, double a, double b, int iters)
{
    double x0 = threadIdx.x, x1 = x0 + 1.0, x2 = x0 + 2.0, x3 = x0 + 3.0;
    for (int i = 0; i < iters; ++i) {
#pragma unroll 8
        for (int j = 0; j < 32; ++j) {
            x0 = fma(x0, a, b); x1 = fma(x1, a, b); x2 = fma(x2, a, b); x3 = fma(x3, a, b);
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3;
}

extern "C" __global__ void imad_chain(unsigned *out, unsigned seed, int iters)
{
    unsigned h = seed ^ threadIdx.x;
    unsigned long long wide = h;
    for (int i = 0; i < iters; ++i) {
        h = h * 1664525u + 1013904223u;           // mad.lo.s32
        wide = wide * 6364136223846793005ull + h; // mad.lo.s64
        h ^= __umulhi(h, 0x9E3779B9u);            // mul.hi.u32
        h = __funnelshift_l(h, h, 13);            // shf.l.wrap
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = h ^ (unsigned)(wide >> 32) ^ __brev(h) ^ __byte_perm(h, seed, 0x3210);
}

// Rounding-mode intrinsics: add/mul/fma with rz/rm/rp/rn.
extern "C" __global__ void rounding_modes(const float *a, const float *b, float *o)
{
    int i = threadIdx.x;
    o[4 * i + 0] = __fadd_rz(a[i], b[i]);
    o[4 * i + 1] = __fmul_rd(a[i], b[i]);
    o[4 * i + 2] = __fmaf_ru(a[i], b[i], 1.0f);
    o[4 * i + 3] = __fdiv_rn(a[i], b[i]) + __fsqrt_rn(a[i]) + __saturatef(b[i]);
}
