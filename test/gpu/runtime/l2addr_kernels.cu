// l2addr_kernels.cu -- kernels for rt_app l2addr (test/gpu/runtime/run.sh): compiled to PTX
// with nvcc, their pointer parameter 0 translated by tidal-opt -p l2addr, loaded by rt_app.
extern "C" __global__ void l2a_fill(unsigned *p, unsigned n, unsigned x)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = x ^ i;
}

extern "C" __global__ void l2a_sum(const unsigned *p, unsigned n, unsigned long long *out)
{
    unsigned long long s = 0;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += p[i];
    atomicAdd(out, s);
}
