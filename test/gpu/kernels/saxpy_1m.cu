// Very short blocks: 32 threads, one element each, launched with ~1M blocks.
extern "C" __global__ void saxpy_1m(int n, float a, const float *__restrict__ x,
                                    const float *__restrict__ y, float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
