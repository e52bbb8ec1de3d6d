// Two kernels in one module: each gets its own clone; the suite launches both.
extern "C" __global__ void twin_a(const int *__restrict__ in, int *__restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + 1000;
}

extern "C" __global__ void twin_b(const int *__restrict__ in, int *__restrict__ out, int n)
{
    __shared__ int s[64];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    if (i < n) out[i] = s[63 - threadIdx.x] - s[threadIdx.x];
}
