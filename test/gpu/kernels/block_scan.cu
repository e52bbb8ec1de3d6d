// Inclusive scan of 1024 ints per block (512 threads, 2 items each): warp-shuffle
// scans, then a scan of the warp totals through shared memory.
extern "C" __global__ void block_scan(const int *__restrict__ in, int *__restrict__ out)
{
    __shared__ int warp_tot[16];
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const int *src = in + blockIdx.x * 1024;
    const int a = src[2 * t], b = src[2 * t + 1];
    int v = a + b;
    for (int o = 1; o < 32; o <<= 1) {
        const int u = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o) v += u;
    }
    if (lane == 31) warp_tot[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int w = lane < 16 ? warp_tot[lane] : 0;
        for (int o = 1; o < 16; o <<= 1) {
            const int u = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= o) w += u;
        }
        if (lane < 16) warp_tot[lane] = w;
    }
    __syncthreads();
    const int excl = (warp > 0 ? warp_tot[warp - 1] : 0) + v - (a + b);
    out[blockIdx.x * 1024 + 2 * t] = excl + a;
    out[blockIdx.x * 1024 + 2 * t + 1] = excl + a + b;
}
