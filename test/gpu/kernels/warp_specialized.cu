// The second racecheck shape of issue 11: warp specialisation on a counted barrier of the
// whole block. Warps 0..3 produce a shared buffer and announce it with bar.arrive 1, 256;
// warps 4..7 wait for it with bar.sync 1, 256 and consume it. Then the roles turn on
// barrier 2: the consumers publish a reply and arrive, the producers wait and read it.
// Each barrier completes exactly once per block (no arrival is left over at the end). The
// consumers read the buffer once more after their arrival on barrier 2: nothing in the
// kernel orders that read before the next block's first write of the buffer except the
// block's end; in the clone, tidal's barrier between logical blocks. The body is a function
// of its own so that test/gpu/sanitizer/repro_kernels.cu runs exactly it without tidal.
__device__ __forceinline__ void warp_specialized_block(const int *__restrict__ in, int *__restrict__ out, unsigned b)
{
    __shared__ int buf[128];
    __shared__ int reply[128];
    const int t = threadIdx.x;
    if (t < 128) {                                          // producers
        buf[t] = in[b * 128 + t] * 7 + (int)b;
        asm volatile("bar.arrive 1, 256;" ::: "memory");    // full
        asm volatile("bar.sync 2, 256;" ::: "memory");      // wait for the reply
        out[b * 256 + t] = reply[(t + 5) & 127] - buf[t];
    } else {                                                // consumers
        const int c = t - 128;
        asm volatile("bar.sync 1, 256;" ::: "memory");      // wait: full
        const int v = buf[(c * 3) & 127] ^ buf[127 - c];
        reply[c] = v;
        asm volatile("bar.arrive 2, 256;" ::: "memory");    // reply ready
        out[b * 256 + t] = v + buf[(c + 1) & 127];          // the buffer, after the arrival
    }
}

extern "C" __global__ void warp_specialized(const int *__restrict__ in, int *__restrict__ out)
{
    warp_specialized_block(in, out, blockIdx.x);
}
