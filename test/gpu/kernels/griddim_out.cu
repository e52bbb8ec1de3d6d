// Writes gridDim, blockDim and blockIdx: after the rewrite %nctaid must still be the
// original grid, also in a reshaped launch.
extern "C" __global__ void griddim_out(unsigned *__restrict__ out)
{
    const unsigned lb = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const unsigned lt = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned *o = out + (lb * blockDim.x * blockDim.y * blockDim.z + lt) * 8;
    o[0] = gridDim.x; o[1] = gridDim.y; o[2] = gridDim.z;
    o[3] = blockIdx.x; o[4] = blockIdx.y; o[5] = blockIdx.z;
    o[6] = blockDim.x * 10000 + blockDim.y * 100 + blockDim.z;
    o[7] = gridDim.x * gridDim.y * gridDim.z - lb;
}
