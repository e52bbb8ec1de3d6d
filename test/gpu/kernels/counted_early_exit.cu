// The first racecheck shape of issue 11: threads >= 128 return at once, the other 128
// write shared memory, meet at a counted barrier (bar.sync 2, 128) and read what the
// others wrote; thread 0 reads all 128 values. Nothing orders the last reads of one block
// before the first writes of the next except the CTA's end, so in the clone (one physical
// block runs many logical blocks) that order is tidal's barrier between logical blocks,
// which the returned threads must take part in. The body is a function of its own so that
// test/gpu/sanitizer/repro_kernels.cu runs exactly it without tidal.
__device__ __forceinline__ void counted_early_exit_block(const int *__restrict__ in, int *__restrict__ out, unsigned b)
{
    __shared__ int s[128];
    const int t = threadIdx.x;
    if (t >= 128) return;                                  // warps 4..7 leave
    s[t] = in[b * 128 + t] * 3 + (int)b;
    asm volatile("bar.sync 2, 128;" ::: "memory");         // the 128 that stayed
    out[b * 129 + 1 + t] = s[127 - t] ^ t;
    if (t == 0) {
        int acc = 0;
#pragma unroll 1
        for (int j = 0; j < 128; j++) acc = acc * 31 + s[j];
        out[b * 129] = acc;
    }
}

extern "C" __global__ void counted_early_exit(const int *__restrict__ in, int *__restrict__ out)
{
    counted_early_exit_block(in, out, blockIdx.x);
}
