// Compute-heavy: a long dependent FMA chain per thread (no memory traffic inside).
extern "C" __global__ void fma_heavy(const float *__restrict__ in, float *__restrict__ out, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = in[i], b = 0.999f - a * 1e-3f, c = 0.5f;
    for (int k = 0; k < iters; k++) {
        c = fmaf(a, c, b);
        a = fmaf(c, 0.9999f, -a * 1e-4f);
        b = fmaf(b, 1.0001f, c * 1e-5f);
    }
    out[i] = a + b + c;
}
