// A wide grid: gridDim.x = 70000 (> 65535), gridDim.y = 2.
extern "C" __global__ void grid_wide(const unsigned *__restrict__ in, unsigned *__restrict__ out)
{
    const unsigned lb = blockIdx.x + gridDim.x * blockIdx.y;
    const unsigned i = lb * blockDim.x + threadIdx.x;
    out[i] = in[i] * 3u + blockIdx.x - (blockIdx.y << 20);
}
