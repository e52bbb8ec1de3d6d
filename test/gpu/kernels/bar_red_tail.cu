// Reduction barriers (__syncthreads_count/_or/_and: bar.red.popc/.or/.and) that every
// thread reaches, then a divergent tail before the exit. No barrier follows the
// divergent branch, so threads that finish early strand nobody: tidal rewrites these in
// convergent-exits mode (the funnel cannot take bar.red). Until the divergence analysis
// told nvcc's `{ .reg .pred %p1; ... bar.red ... }` scope apart from the body's %p1, and
// took a full bar.red's result as CTA-uniform, the last three were refused.

// The shape of issue 11: eight tiles per block, thread 0 stores the total.
extern "C" __global__ void bar_red_tail(const int *in, int *out, int n)
{
    int total = 0;
    for (int i = 0; i < 8; i++)
        total += __syncthreads_count(in[blockIdx.x * blockDim.x * 8 + i * blockDim.x + threadIdx.x] > 0);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

// A loop of n rounds (a parameter: nvcc unrolls by 4 with a remainder loop) around
// bar.red.popc, then a divergent store.
extern "C" __global__ void bar_red_loop(const int *in, int *out, int n)
{
    int total = 0;
    for (int i = 0; i < n; i++)
        total += __syncthreads_count(in[(blockIdx.x * n + i) * blockDim.x + threadIdx.x] % 3 == 0) * (i + 1);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

// __syncthreads_or/_and per tile; the block leaves the loop together when
// __syncthreads_or sees a marker value; two threads store the results.
extern "C" __global__ void bar_red_or_and(const unsigned *in, int *out, int tiles)
{
    int ors = 0, ands = 0, stop = -1;
    for (int t = 0; t < tiles; t++) {
        const unsigned v = in[(blockIdx.x * tiles + t) * blockDim.x + threadIdx.x];
        ors += __syncthreads_or((v & 0x3FF) == 0x155) << t;
        ands += __syncthreads_and(((v >> 3) & 0xFF) != 0x5A) << t;
        if (__syncthreads_or((v & 0x1FFF) == 0x0BEE)) {
            stop = t;
            break;
        }
    }
    if (threadIdx.x < 3) out[blockIdx.x * 3 + threadIdx.x] = threadIdx.x == 0 ? ors : threadIdx.x == 1 ? ands : stop;
}

// Segment bounds from read-only memory (const __restrict__: ld.global.nc): the same
// value in every thread, so the tile loop's exit is CTA-uniform.
extern "C" __global__ void bar_red_segments(const int *__restrict__ in, const unsigned *__restrict__ seg,
                                            int *__restrict__ out)
{
    const unsigned s = seg[blockIdx.x];
    const int beg = blockIdx.x * 1024 + (int)(s & 255), end = beg + (int)(s >> 22);
    int total = 0;
    for (int base = beg; base < end; base += blockDim.x) {
        const int i = base + threadIdx.x;
        total += __syncthreads_count(i < end && in[i] > 0);
    }
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}
