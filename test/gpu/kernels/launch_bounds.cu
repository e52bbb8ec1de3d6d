// __launch_bounds__(128, 8): the PTX carries .maxntid and .minnctapersm.
extern "C" __global__ void __launch_bounds__(128, 8)
launch_bounds(const unsigned *__restrict__ in, unsigned *__restrict__ out)
{
    __shared__ unsigned s[128];
    const unsigned i = blockIdx.x * 128 + threadIdx.x;
    s[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = s[threadIdx.x] ^ s[(threadIdx.x + 37) & 127] ^ blockIdx.x;
}
