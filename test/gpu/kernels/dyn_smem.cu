// Dynamic shared memory (extern __shared__): 4 ints per thread, reversed in the block.
extern "C" __global__ void dyn_smem(const int *__restrict__ in, int *__restrict__ out)
{
    extern __shared__ int buf[];
    const int nt = blockDim.x * 4;
    const int *src = in + blockIdx.x * nt;
    for (int k = threadIdx.x; k < nt; k += blockDim.x) buf[k] = src[k];
    __syncthreads();
    for (int k = threadIdx.x; k < nt; k += blockDim.x)
        out[blockIdx.x * nt + k] = buf[nt - 1 - k] + buf[(k * 7) % nt];
}
