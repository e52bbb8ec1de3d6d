// Producer/consumer warp specialisation on named barriers 1..3 (bar.arrive / bar.sync),
// as Hopper CUTLASS and Triton do: warp 0 produces a 32-entry buffer, warps 1 and 2
// consume it.  Barrier 1 = "full" (producer arrives, consumers wait), barrier 2 =
// "empty" (consumers arrive, producer waits), barrier 3 = the two consumer warps only.
#define ITERS 16
extern "C" __global__ void named_barriers(const int *__restrict__ in, int *__restrict__ out)
{
    __shared__ int buf[32];
    __shared__ int xchg[64];
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int *src = in + blockIdx.x * ITERS * 32;
    if (warp == 0) {
        for (int k = 0; k < ITERS; k++) {
            if (k > 0) asm volatile("bar.sync 2, 96;" ::: "memory");      // wait: empty
            buf[lane] = src[k * 32 + lane] * (k + 1);
            asm volatile("bar.arrive 1, 96;" ::: "memory");              // signal: full
        }
        asm volatile("bar.sync 2, 96;" ::: "memory");                    // last empty
        out[blockIdx.x * 96 + lane] = buf[lane];
    } else {
        int acc = warp;
        for (int k = 0; k < ITERS; k++) {
            asm volatile("bar.sync 1, 96;" ::: "memory");                // wait: full
            acc = acc * 3 + buf[(lane + warp * 7 + k) & 31];
            asm volatile("bar.arrive 2, 96;" ::: "memory");              // signal: empty
        }
        const int c = threadIdx.x - 32;                                  // 0..63
        xchg[c] = acc;
        asm volatile("bar.sync 3, 64;" ::: "memory");                    // consumers only
        out[blockIdx.x * 96 + 32 + c] = acc - xchg[c ^ 32];
    }
}
