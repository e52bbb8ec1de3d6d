// Integer atomics whose final values do not depend on the order: atomicAdd, atomicMax,
// atomicMin, atomicOr/Xor, and an atomicCAS loop (64-bit "max of a hash").
// counters: [0..63] adds, [64..127] max, [128..191] min, [192] or, [193] xor,
//           [194..195] (u64) CAS max, [196] one per block.
__device__ unsigned long long cas_max_u64(unsigned long long *p, unsigned long long v)
{
    unsigned long long old = *p, assumed;
    do {
        assumed = old;
        if (assumed >= v) break;
        old = atomicCAS(p, assumed, v);
    } while (old != assumed);
    return old;
}

extern "C" __global__ void atomics_int(const unsigned *__restrict__ in, int *__restrict__ counters, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const unsigned v = in[i];
        atomicAdd(&counters[v & 63], (int)(v >> 20));
        atomicMax(&counters[64 + ((v >> 6) & 63)], (int)(v >> 1));
        atomicMin(&counters[128 + ((v >> 12) & 63)], (int)(v >> 2));
        atomicOr((unsigned *)&counters[192], 1u << (v % 31));
        atomicXor((unsigned *)&counters[193], v);
        unsigned long long h = (unsigned long long)v * 0x9E3779B97F4A7C15ull;
        cas_max_u64((unsigned long long *)&counters[194], h ^ (h >> 29));
    }
    if (threadIdx.x == 0) atomicAdd(&counters[196], 1);
}
