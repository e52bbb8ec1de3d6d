// 5-point 2D stencil on 16x16 tiles with a one-cell halo in shared memory.
#define T 16
extern "C" __global__ void stencil2d(const float *__restrict__ in, float *__restrict__ out, int w, int h)
{
    __shared__ float s[T + 2][T + 2];
    const int x = blockIdx.x * T + threadIdx.x;
    const int y = blockIdx.y * T + threadIdx.y;
    const int lx = threadIdx.x + 1, ly = threadIdx.y + 1;
    auto at = [&](int xx, int yy) -> float {
        xx = min(max(xx, 0), w - 1);
        yy = min(max(yy, 0), h - 1);
        return in[yy * w + xx];
    };
    s[ly][lx] = at(x, y);
    if (threadIdx.x == 0) s[ly][0] = at(x - 1, y);
    if (threadIdx.x == T - 1) s[ly][T + 1] = at(x + 1, y);
    if (threadIdx.y == 0) s[0][lx] = at(x, y - 1);
    if (threadIdx.y == T - 1) s[T + 1][lx] = at(x, y + 1);
    __syncthreads();
    if (x < w && y < h)
        out[y * w + x] = 0.5f * s[ly][lx] + 0.125f * (s[ly][lx - 1] + s[ly][lx + 1] + s[ly - 1][lx] + s[ly + 1][lx]);
}
