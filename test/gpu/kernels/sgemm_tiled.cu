// CUTLASS-style tiled SGEMM: C = alpha*A*B + beta*C0, 64x64 block tile, BK = 8,
// 256 threads each computing a 4x4 micro-tile, shared-memory tiles for A and B,
// two barriers per k step.  Every output element is accumulated by one thread in a
// fixed k order, so results are bit-identical run to run.
#define BM 64
#define BN 64
#define BK 8
extern "C" __global__ void sgemm_tiled(int M, int N, int K, float alpha, const float *__restrict__ A,
                                       const float *__restrict__ B, float beta, const float *__restrict__ C0,
                                       float *__restrict__ C)
{
    __shared__ float As[BK][BM + 4];
    __shared__ float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tx = tid % 16, ty = tid / 16;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        // A tile: 64 x 8 = 512 values, 2 per thread; B tile: 8 x 64, 2 per thread.
        for (int e = tid; e < BM * BK; e += 256) {
            const int r = e / BK, c = e % BK;
            const int gr = row0 + r, gc = k0 + c;
            As[c][r] = (gr < M && gc < K) ? A[(size_t)gr * K + gc] : 0.0f;
        }
        for (int e = tid; e < BK * BN; e += 256) {
            const int r = e / BN, c = e % BN;
            const int gr = k0 + r, gc = col0 + c;
            Bs[r][c] = (gr < K && gc < N) ? B[(size_t)gr * N + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            float a[4], b[4];
#pragma unroll
            for (int q = 0; q < 4; q++) { a[q] = As[kk][ty * 4 + q]; b[q] = Bs[kk][tx * 4 + q]; }
#pragma unroll
            for (int p = 0; p < 4; p++)
#pragma unroll
                for (int q = 0; q < 4; q++) acc[p][q] = fmaf(a[p], b[q], acc[p][q]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int p = 0; p < 4; p++)
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const int r = row0 + ty * 4 + p, c = col0 + tx * 4 + q;
            if (r < M && c < N) C[(size_t)r * N + c] = alpha * acc[p][q] + beta * C0[(size_t)r * N + c];
        }
}
