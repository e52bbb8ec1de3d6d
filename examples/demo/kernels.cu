// tidal demo kernels: a small, self-contained CUDA file whose PTX is
// rewritten by `make demo`. Four typical kernel shapes:
//   saxpy          - element-wise, guarded by a bounds check
//   block_reduce   - shared-memory tree reduction with an early return
//                    before __syncthreads() and a warp-shuffle tail
//   stencil2d      - 5-point 2D stencil with a halo tile in shared memory
//   matmul_tiled   - 16x16 shared-memory tiled matrix multiply

#define TILE 16

extern "C" __global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

// Launch with 256 threads per block. Blocks past the end of the input exit
// early (uniformly, so no thread of a live block skips a barrier).
extern "C" __global__ void block_reduce(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    if (blockIdx.x * blockDim.x >= (unsigned)n)
        return;
    s[t] = i < (unsigned)n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned st = blockDim.x / 2; st > 32; st >>= 1) {
        if (t < st)
            s[t] += s[t + st];
        __syncthreads();
    }
    if (t >= 32)
        return;
    float v = s[t] + s[t + 32];
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if (t == 0)
        out[blockIdx.x] = v;
}

// out = in + c * laplacian(in); launch with (TILE, TILE) blocks.
extern "C" __global__ void stencil2d(const float *__restrict__ in, float *__restrict__ out, int w, int h, float c)
{
    __shared__ float tile[TILE + 2][TILE + 2];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    int cx = min(max(x, 0), w - 1), cy = min(max(y, 0), h - 1);
    tile[threadIdx.y + 1][threadIdx.x + 1] = in[cy * w + cx];
    if (threadIdx.x == 0)
        tile[threadIdx.y + 1][0] = in[cy * w + max(cx - 1, 0)];
    if (threadIdx.x == TILE - 1)
        tile[threadIdx.y + 1][TILE + 1] = in[cy * w + min(cx + 1, w - 1)];
    if (threadIdx.y == 0)
        tile[0][threadIdx.x + 1] = in[max(cy - 1, 0) * w + cx];
    if (threadIdx.y == TILE - 1)
        tile[TILE + 1][threadIdx.x + 1] = in[min(cy + 1, h - 1) * w + cx];
    __syncthreads();
    if (x < w && y < h) {
        float m = tile[threadIdx.y + 1][threadIdx.x + 1];
        float lap = tile[threadIdx.y][threadIdx.x + 1] + tile[threadIdx.y + 2][threadIdx.x + 1]
                  + tile[threadIdx.y + 1][threadIdx.x] + tile[threadIdx.y + 1][threadIdx.x + 2] - 4.0f * m;
        out[y * w + x] = m + c * lap;
    }
}

// C(MxN) = A(MxK) * B(KxN), row-major; launch with (TILE, TILE) blocks and a
// (ceil(N/TILE), ceil(M/TILE)) grid.
extern "C" __global__ void matmul_tiled(const float *__restrict__ A, const float *__restrict__ B,
                                        float *__restrict__ C, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        int ak = k0 + threadIdx.x, bk = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k)
            acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = acc;
}
