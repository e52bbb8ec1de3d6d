// 2D and 3D launches: blockIdx.y/z, threadIdx.y/z, gridDim.*, blockDim.*.

extern "C" __global__ void transpose_2d(const float *in, float *out, int w, int h)
{
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += blockDim.y)
        if (x < w && y + j < h)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += blockDim.y)
        if (x < h && y + j < w)
            out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

extern "C" __global__ void volume_scale_3d(float *vol, int nx, int ny, int nz, float s)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    for (; z < nz; z += gridDim.z * blockDim.z)
        for (int yy = y; yy < ny; yy += gridDim.y * blockDim.y)
            for (int xx = x; xx < nx; xx += gridDim.x * blockDim.x)
                vol[((size_t)z * ny + yy) * nx + xx] *= s;
}

// Writes the linearised block/thread coordinates: reads every sreg.
extern "C" __global__ void linear_ids(unsigned *out)
{
    unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned per_block = blockDim.x * blockDim.y * blockDim.z;
    out[block * per_block + thread] = (block << 16) | thread;
}
