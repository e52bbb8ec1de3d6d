// Source of reduction_barriers.ptx (test/lit/tidal/rule_reduction_barriers.test):
//   nvcc -arch=sm_90a -ptx reduction_barriers.cu -o reduction_barriers.ptx   (CUDA 13.0)
// Kernels with __syncthreads_count/_or/_and (bar.red.popc/.or/.and) and a divergent
// branch before their exit. The first five reach no barrier after the divergent branch:
// rewritten (convergent-exits). The last four have a barrier some threads still reach
// after others left: refused (divergent-exit; the funnel cannot take bar.red).

// Issue 11's kernel: nvcc unrolls the loop, and no branch comes before the barriers.
extern "C" __global__ void count_tail(const int *in, int *out, int n)
{
    int total = 0;
    for (int i = 0; i < 8; i++) total += __syncthreads_count(in[blockIdx.x * blockDim.x * 8 + i * blockDim.x + threadIdx.x] > 0);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

// The same with n rounds: the loop's branches test the body's %p registers, which
// nvcc's `{ .reg .pred %p1; ... bar.red ... }` scopes shadow with a thread's vote.
extern "C" __global__ void count_tail_n(const int *in, int *out, int n)
{
    int total = 0;
    for (int i = 0; i < n; i++) total += __syncthreads_count(in[(blockIdx.x * n + i) * blockDim.x + threadIdx.x] > 0);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

// __syncthreads_or/_and over n tiles, divergent tail.
extern "C" __global__ void or_and_tail(const unsigned *in, int *out, int n)
{
    int ors = 0, ands = 0;
    for (int t = 0; t < n; t++) {
        const unsigned v = in[(blockIdx.x * n + t) * blockDim.x + threadIdx.x];
        ors += __syncthreads_or(v == 7u);
        ands += __syncthreads_and(v != 0u);
    }
    if (threadIdx.x < 2) out[blockIdx.x * 2 + threadIdx.x] = threadIdx.x ? ands : ors;
}

// The block leaves the loop when __syncthreads_or says so: the same result in every
// thread, so the loop's exit is CTA-uniform.
extern "C" __global__ void or_break(const int *in, int *out, int n)
{
    int t = 0;
    for (; t < n; t++)
        if (__syncthreads_or(in[(blockIdx.x * n + t) * blockDim.x + threadIdx.x] < 0)) break;
    if (threadIdx.x == 0) out[blockIdx.x] = t;
}

// Tile bounds read through const __restrict__ (ld.global.nc): read-only memory gives
// every thread the same value for the same address.
extern "C" __global__ void nc_bounds(const int *__restrict__ in, const int *__restrict__ offsets, int *__restrict__ out)
{
    const int beg = offsets[blockIdx.x], end = offsets[blockIdx.x + 1];
    int total = 0;
    for (int base = beg; base < end; base += blockDim.x) total += __syncthreads_count(base + (int)threadIdx.x < end && in[base + threadIdx.x] > 0);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

// --- refused: a barrier is reachable after the divergent branch

// `if (i >= n) return;` before __syncthreads_count.
extern "C" __global__ void early_return_count(const int *in, int *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = __syncthreads_count(in[i] > 0);
}

// Thread 0 leaves after the first reduction; the others run a second one.
extern "C" __global__ void leader_leaves_first(const int *in, int *out)
{
    const int c = __syncthreads_count(in[blockIdx.x * blockDim.x + threadIdx.x] > 0);
    if (threadIdx.x == 0) {
        out[blockIdx.x] = c;
        return;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = __syncthreads_or(c > (int)threadIdx.x);
}

// A thread-dependent loop exit: threads that finish leave while the others loop back
// to __syncthreads_and.
extern "C" __global__ void tid_loop_back(const int *in, int *out)
{
    int all = 1;
    for (unsigned r = 0; r <= threadIdx.x % 4; r++) all &= __syncthreads_and(in[r * blockDim.x + threadIdx.x] != 0);
    out[blockIdx.x * blockDim.x + threadIdx.x] = all;
}

// Tile bounds from memory without __restrict__ (a coherent ld.global: another thread may
// write it meanwhile), so the loop's exit is not known to be uniform.
extern "C" __global__ void coherent_bounds(const int *in, const int *offsets, int *out)
{
    const int beg = offsets[blockIdx.x], end = offsets[blockIdx.x + 1];
    int total = 0;
    for (int base = beg; base < end; base += blockDim.x) total += __syncthreads_count(base + (int)threadIdx.x < end && in[base + threadIdx.x] > 0);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}
