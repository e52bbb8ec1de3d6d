// Warp-level primitives: shuffles (idx/up/down/xor), votes (ballot/any/all),
// __activemask, __match_any_sync, __reduce_*_sync (redux.sync), __syncwarp.

extern "C" __global__ void warp_reduce_shfl(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(out, v);
}

extern "C" __global__ void warp_scan_shfl_up(int *data)
{
    int lane = threadIdx.x & 31;
    int v = data[blockIdx.x * blockDim.x + threadIdx.x];
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        int y = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off)
            v += y;
    }
    data[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

extern "C" __global__ void warp_butterfly_broadcast(double *d, int src_lane)
{
    double v = d[threadIdx.x];
    for (int m = 1; m < 32; m <<= 1)
        v = fmax(v, __shfl_xor_sync(0xffffffffu, v, m));
    double b = __shfl_sync(0xffffffffu, d[threadIdx.x] * 2.0, src_lane);
    // shuffle within 8-lane segments
    float w = __shfl_sync(0xffffffffu, (float)v, 0, 8);
    d[threadIdx.x] = v + b + w;
}

extern "C" __global__ void warp_votes(const int *in, unsigned *out)
{
    int x = in[blockIdx.x * blockDim.x + threadIdx.x];
    unsigned mask = __activemask();
    unsigned b = __ballot_sync(0xffffffffu, x > 0);
    int any = __any_sync(0xffffffffu, x < 0);
    int all = __all_sync(0xffffffffu, x != 0);
    unsigned same = __match_any_sync(0xffffffffu, x);
    int pred;
    unsigned allsame = __match_all_sync(0xffffffffu, x, &pred);
    if ((threadIdx.x & 31) == 0) {
        unsigned w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
        out[w * 4 + 0] = b ^ mask;
        out[w * 4 + 1] = any | (all << 1) | (pred << 2);
        out[w * 4 + 2] = same;
        out[w * 4 + 3] = __popc(allsame) + __ffs(b) + __clz(b);
    }
}

extern "C" __global__ void warp_redux(const unsigned *in, unsigned *out)
{
    unsigned v = in[blockIdx.x * blockDim.x + threadIdx.x];
    unsigned s = __reduce_add_sync(0xffffffffu, v);
    unsigned mn = __reduce_min_sync(0xffffffffu, v);
    int mx = __reduce_max_sync(0xffffffffu, (int)v);
    unsigned o = __reduce_or_sync(0xffffffffu, v);
    unsigned a = __reduce_and_sync(0xffffffffu, v);
    unsigned x = __reduce_xor_sync(0xffffffffu, v);
    __syncwarp();
    if ((threadIdx.x & 31) == 0)
        out[(blockIdx.x * blockDim.x + threadIdx.x) >> 5] = s + mn + (unsigned)mx + o + a + x;
}

// Divergent shuffle with a partial mask.
extern "C" __global__ void warp_partial_mask(int *d)
{
    int lane = threadIdx.x & 31;
    if (lane < 16) {
        int v = d[threadIdx.x];
        v += __shfl_xor_sync(0x0000ffffu, v, 1);
        __syncwarp(0x0000ffffu);
        d[threadIdx.x] = v;
    }
}
