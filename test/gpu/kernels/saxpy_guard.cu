// saxpy with the classic guard `if (i >= n) return;` and no barrier at all.
extern "C" __global__ void saxpy_guard(int n, float a, const float *__restrict__ x,
                                       const float *__restrict__ y, float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = a * x[i] + y[i];
}
