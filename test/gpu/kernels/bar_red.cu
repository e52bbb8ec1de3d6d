// __syncthreads_count / _and / _or (bar.red.popc / .and / .or).
extern "C" __global__ void bar_red(const unsigned *__restrict__ in, int *__restrict__ out)
{
    const int t = threadIdx.x;
    const unsigned v = in[blockIdx.x * blockDim.x + t];
    const int c  = __syncthreads_count(v & 1);
    const int a  = __syncthreads_and((v & 0xF) != 0);
    const int o  = __syncthreads_or((v & 0x3FF) == 0x155);
    const int c2 = __syncthreads_count((v >> 7) % 3 == 0);
    int *dst = out + blockIdx.x * (blockDim.x + 4);
    if (t == 0) { dst[0] = c; dst[1] = a; dst[2] = o; dst[3] = c2; }
    dst[4 + t] = (int)(v % 1000) + c * 7 - c2 + (a ? 100000 : 0) + (o ? 200000 : 0);
}
