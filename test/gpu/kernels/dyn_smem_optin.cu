// Dynamic shared memory up to the device's opt-in limit per block, as a Triton GEMM with
// many stages uses it: the harness sets CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES of
// the original to optin - static (232448 - 1024 on the H200) and launches with the most a
// reshaped clone can take, optin - static - TIDAL_SH_BYTES (the clone's protocol words
// follow the kernel's bytes in its dynamic shared memory; with its words in static shared
// memory the clone could not launch at all). Every byte of the dynamic region is written
// and read back, the last ones included: the words must not overlap the kernel's bytes.
extern "C" __global__ void dyn_smem_optin(const unsigned *__restrict__ in, unsigned *__restrict__ out, int words)
{
    extern __shared__ unsigned big[];
    __shared__ unsigned partial[256];   // 1 KiB static
    const unsigned *src = in + (size_t)blockIdx.x * 1024;
    for (int k = threadIdx.x; k < words; k += blockDim.x) big[k] = src[k & 1023] * 2654435761u ^ (unsigned)k;
    __syncthreads();
    unsigned acc = 0;
    for (int k = threadIdx.x; k < words; k += blockDim.x) acc += big[words - 1 - k] * (unsigned)(k | 1);
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc + partial[0] + big[words - 1 - threadIdx.x];
}
