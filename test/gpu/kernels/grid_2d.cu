// 2D grid and 2D blocks over a matrix whose sizes are not multiples of the tile.
extern "C" __global__ void grid_2d(const int *__restrict__ in, int *__restrict__ out, int w, int h)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    out[y * w + x] = in[y * w + x] * 2 + x - 3 * y + (int)(blockIdx.x ^ (blockIdx.y << 8));
}
