// Grid-stride loop: the grid is much smaller than the data; blockIdx and gridDim
// only appear in the loop's start and stride.
extern "C" __global__ void grid_stride(const unsigned *__restrict__ in, unsigned *__restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = in[i] * 7u + (unsigned)i;
}
