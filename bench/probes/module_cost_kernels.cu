// Kernels for bench/probes/module_cost.sh (compiled to PTX; extern "C": plain names).
extern "C" __global__ void k_pw(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 1.0001f + 1.0f;
}

extern "C" __global__ void k_tiny(unsigned *c, int n)
{
    if (threadIdx.x == 0 && n > 0) atomicAdd(c, 1u);
}
