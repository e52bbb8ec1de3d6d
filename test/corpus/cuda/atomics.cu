// Atomics on global and shared memory: 32/64-bit integer, float and double,
// CAS loops, min/max, exch, inc, bitwise and system/block-scoped variants.
#include <cstdint>

extern "C" __global__ void atomic_int_ops(int *ctr, unsigned *uctr, int v)
{
    atomicAdd(&ctr[0], v);
    atomicSub(&ctr[1], 1);
    atomicMax(&ctr[2], v + (int)threadIdx.x);
    atomicMin(&ctr[3], v - (int)threadIdx.x);
    atomicAnd(&ctr[4], ~(1 << (threadIdx.x & 31)));
    atomicOr(&ctr[5], 1 << (threadIdx.x & 31));
    atomicXor(&ctr[6], (int)threadIdx.x);
    int old = atomicExch(&ctr[7], (int)threadIdx.x);
    atomicInc(&uctr[0], 1000u);
    atomicDec(&uctr[1], 1000u);
    if (old < 0)
        ctr[8] = old;
}

extern "C" __global__ void atomic_64bit(unsigned long long *u, long long *s, double *d)
{
    atomicAdd(&u[0], 1ull);
    atomicMax(&s[0], (long long)threadIdx.x << 33);
    atomicMin(&u[1], (unsigned long long)clock64());
    unsigned long long prev = atomicCAS(&u[2], 0ull, (unsigned long long)blockIdx.x + 1);
    atomicAdd(&d[0], 0.5);
    if (prev == 0)
        atomicAdd(&d[1], 1.0);
}

extern "C" __global__ void atomic_float_ops(float *f, const float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&f[0], in[i]);
        atomicExch(&f[1], in[i]);
    }
}

// atomicMax on float via a CAS loop (common idiom).
__device__ float atomic_max_float(float *addr, float val)
{
    int *ia = reinterpret_cast<int *>(addr);
    int old = *ia, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= val)
            break;
        old = atomicCAS(ia, assumed, __float_as_int(val));
    } while (assumed != old);
    return __int_as_float(old);
}

extern "C" __global__ void atomic_cas_float_max(float *m, const float *in, int n)
{
    __shared__ float block_max;
    if (threadIdx.x == 0)
        block_max = -3.4e38f;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomic_max_float(&block_max, in[i]);
    __syncthreads();
    if (threadIdx.x == 0)
        atomic_max_float(m, block_max);
}

// Scoped atomics: _block and _system variants, plus shared-memory atomics.
extern "C" __global__ void atomic_scoped(int *g, unsigned long long *g64)
{
    __shared__ int s[4];
    if (threadIdx.x < 4)
        s[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd_block(&s[threadIdx.x & 3], 1);
    atomicAdd_system(&g[0], 1);
    atomicCAS_block(&s[0], 0, 5);
    atomicMax_system(g64, (unsigned long long)threadIdx.x);
    __syncthreads();
    if (threadIdx.x < 4)
        atomicAdd(&g[1 + threadIdx.x], s[threadIdx.x]);
}
