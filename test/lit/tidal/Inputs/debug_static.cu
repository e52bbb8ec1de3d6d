// Two kernels, one with a large static shared array, compiled with -G (a debug module).
extern "C" __global__ void big_tile(int *out)
{
    __shared__ int tile[2048];
    tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}

extern "C" __global__ void no_tile(int *out)
{
    out[blockIdx.x * blockDim.x + threadIdx.x] = blockIdx.x;
}
