// Tensor cores through the warp-level WMMA API (nvcuda::wmma): fp16 inputs
// with fp32 accumulation (wmma.load/wmma.mma/wmma.store with long vector
// operand lists), plus a bf16 variant and an explicit mma.sync via inline PTX.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;

// One warp computes one 16x16 tile of C = A(MxK) * B(KxN); K multiple of 16.
extern "C" __global__ void wmma_gemm_f16(const __half *A, const __half *B, float *C, int M, int N, int K)
{
    int warp_m = blockIdx.y;
    int warp_n = blockIdx.x;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, A + warp_m * 16 * K + k, K);
        wmma::load_matrix_sync(b, B + warp_n * 16 * K + k, K);
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(C + warp_m * 16 * N + warp_n * 16, acc, N, wmma::mem_row_major);
}

extern "C" __global__ void wmma_bf16_tile(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *C)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::load_matrix_sync(a, A, 16);
    wmma::load_matrix_sync(b, B, 16);
    wmma::load_matrix_sync(c, C, 16, wmma::mem_row_major);
    for (int i = 0; i < c.num_elements; ++i)
        c.x[i] *= 0.5f;
    wmma::mma_sync(c, a, b, c);
    wmma::store_matrix_sync(C, c, 16, wmma::mem_col_major);
}

// mma.sync.m16n8k16 with explicit register vectors, fed by ldmatrix.
extern "C" __global__ void mma_sync_ptx(const __half *A, const __half *B, float *D)
{
    __shared__ __align__(16) __half sa[16 * 16];
    __shared__ __align__(16) __half sb[16 * 8];
    int lane = threadIdx.x & 31;
    for (int i = lane; i < 256; i += 32) sa[i] = A[i];
    for (int i = lane; i < 128; i += 32) sb[i] = B[i];
    __syncwarp();
    unsigned a0, a1, a2, a3, b0, b1;
    unsigned pa = (unsigned)__cvta_generic_to_shared(&sa[(lane % 16) * 16 + (lane / 16) * 8]);
    unsigned pb = (unsigned)__cvta_generic_to_shared(&sb[(lane % 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(pa));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(b0), "=r"(b1) : "r"(pb));
    float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    D[lane * 4 + 0] = d0; D[lane * 4 + 1] = d1; D[lane * 4 + 2] = d2; D[lane * 4 + 3] = d3;
}
