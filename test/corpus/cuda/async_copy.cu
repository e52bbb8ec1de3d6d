// Asynchronous copies (sm_80+ cp.async and sm_90 mbarrier): __pipeline
// primitives -> cp.async.ca/cg + commit_group/wait_group, and an mbarrier
// arrive/expect_tx/try_wait loop through cuda::barrier-free inline PTX.
#include <cuda_pipeline.h>
#include <cstdint>

extern "C" __global__ void cp_async_double_buffer(const float4 *in, float4 *out, int tiles)
{
    __shared__ float4 buf[2][128];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&buf[0][t], &in[t], sizeof(float4));
    __pipeline_commit();
    for (int k = 0; k < tiles; ++k) {
        int cur = k & 1;
        if (k + 1 < tiles)
            __pipeline_memcpy_async(&buf[cur ^ 1][t], &in[(k + 1) * 128 + t], sizeof(float4));
        __pipeline_commit();
        __pipeline_wait_prior(1);
        __syncthreads();
        float4 v = buf[cur][(t + 1) & 127];
        out[k * 128 + t] = make_float4(v.w, v.z, v.y, v.x);
        __syncthreads();
    }
}

extern "C" __global__ void mbarrier_wait_loop(const int *in, int *out)
{
    __shared__ __align__(8) uint64_t bar;
    __shared__ int data[128];
    unsigned bar_addr = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar_addr), "r"((int)blockDim.x) : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    data[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x] + 1;
    uint64_t state;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(bar_addr) : "memory");
    unsigned done = 0;
    while (!done) {
        asm volatile("{\n\t"
                     ".reg .pred P1;\n\t"
                     "mbarrier.try_wait.shared::cta.b64 P1, [%1], %2;\n\t"
                     "selp.b32 %0, 1, 0, P1;\n\t"
                     "}"
                     : "=r"(done) : "r"(bar_addr), "l"(state) : "memory");
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = data[(threadIdx.x + 1) % blockDim.x];
}
