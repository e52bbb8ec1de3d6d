// 3D grid and 3D blocks: every thread writes a value built from all six indices.
extern "C" __global__ void grid_3d(unsigned *__restrict__ out)
{
    const unsigned bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;
    const unsigned lb = bx + gridDim.x * (by + gridDim.y * bz);
    const unsigned lt = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned nt = blockDim.x * blockDim.y * blockDim.z;
    out[lb * nt + lt] = (bx << 24) ^ (by << 16) ^ (bz << 8) ^ (threadIdx.z << 6) ^ (threadIdx.y << 3) ^ threadIdx.x
                        ^ (lb * 2654435761u);
}
