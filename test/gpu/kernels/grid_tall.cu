// A tall grid: gridDim = (2, 65535, 2), the largest y CUDA allows, z > 1.
extern "C" __global__ void grid_tall(unsigned *__restrict__ out)
{
    const unsigned lb = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const unsigned v = (blockIdx.y * 0x9E3779B1u) ^ (blockIdx.x << 30) ^ (blockIdx.z << 31) ^ threadIdx.x;
    out[lb * blockDim.x + threadIdx.x] = v;
}
