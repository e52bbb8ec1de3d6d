// CUTLASS-style two-level tiled SGEMM: block tile (BM x BN x BK) staged in
// shared memory, warp/thread tile (TM x TN) accumulated in registers.
// Templated kernels -> C++-mangled names with explicit instantiations.

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
sgemm_tiled(int M, int N, int K, float alpha, const float *__restrict__ A,
            const float *__restrict__ B, float beta, float *__restrict__ C)
{
    __shared__ float As[BK][BM];
    __shared__ float Bs[BK][BN];
    constexpr int THREADS = (BM / TM) * (BN / TN);
    const int tx = threadIdx.x % (BN / TN);
    const int ty = threadIdx.x / (BN / TN);
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;
    float acc[TM][TN] = {};
    float ra[TM], rb[TN];

    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += THREADS) {
            int r = i / BK, c = i % BK;
            int gr = row0 + r, gc = k0 + c;
            As[c][r] = (gr < M && gc < K) ? A[gr * K + gc] : 0.0f;
        }
        for (int i = threadIdx.x; i < BK * BN; i += THREADS) {
            int r = i / BN, c = i % BN;
            int gr = k0 + r, gc = col0 + c;
            Bs[r][c] = (gr < K && gc < N) ? B[gr * N + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int m = 0; m < TM; ++m)
                ra[m] = As[k][ty * TM + m];
#pragma unroll
            for (int n = 0; n < TN; ++n)
                rb[n] = Bs[k][tx * TN + n];
#pragma unroll
            for (int m = 0; m < TM; ++m)
#pragma unroll
                for (int n = 0; n < TN; ++n)
                    acc[m][n] = fmaf(ra[m], rb[n], acc[m][n]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n) {
            int r = row0 + ty * TM + m, c = col0 + tx * TN + n;
            if (r < M && c < N)
                C[r * N + c] = alpha * acc[m][n] + beta * C[r * N + c];
        }
}

template __global__ void sgemm_tiled<64, 64, 8, 4, 4>(int, int, int, float, const float *, const float *, float, float *);
template __global__ void sgemm_tiled<32, 32, 8, 2, 2>(int, int, int, float, const float *, const float *, float, float *);

// Naive reference, unmangled.
extern "C" __global__ void sgemm_naive(int M, int N, int K, const float *A, const float *B, float *C)
{
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < M && c < N) {
        float s = 0.0f;
        for (int k = 0; k < K; ++k)
            s += A[r * K + k] * B[k * N + c];
        C[r * N + c] = s;
    }
}
