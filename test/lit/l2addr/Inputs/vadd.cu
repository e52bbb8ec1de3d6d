// The l2addr pass's example (test/lit/l2addr/vadd.ptx is nvcc's PTX of it:
//   nvcc -arch=sm_90 -ptx -O3 vadd.cu -o ../vadd.ptx, then the RUN/CHECK lines on top).
// c may be one L2 side's half of a tidal_l2mem: tidal-opt -p l2addr --l2addr vadd:2.
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// A copy by 16-byte vectors, with a grid-stride loop: the pointer advances in a loop.
extern "C" __global__ void copy4(const float4 *src, float4 *dst, long n)
{
    for (long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) dst[i] = src[i];
}

// The pointer escapes: stored to memory, so the pass refuses the kernel.
extern "C" __global__ void leak(float *p, float **out)
{
    out[threadIdx.x] = p + threadIdx.x;
}
