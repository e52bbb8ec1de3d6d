// More than 48 KiB of dynamic shared memory (the launch needs
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES): 100 KiB, static shared too.
extern "C" __global__ void dyn_smem_large(const unsigned *__restrict__ in, unsigned *__restrict__ out, int words)
{
    extern __shared__ unsigned big[];
    __shared__ unsigned partial[512];
    const unsigned *src = in + (size_t)blockIdx.x * words;
    for (int k = threadIdx.x; k < words; k += blockDim.x) big[k] = src[k] ^ (unsigned)k;
    __syncthreads();
    unsigned acc = 0;
    for (int k = threadIdx.x; k < words; k += blockDim.x) acc += big[words - 1 - k] * (unsigned)(k | 1);
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc + partial[0];
}
