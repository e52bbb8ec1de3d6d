// Hand-written repros of tidal's clone WITHOUT tidal, for compute-sanitizer (issue 11).
// Compiled to PTX (nvcc -arch=sm_90a -ptx) and run by repro.cu; test/gpu/sanitize.sh runs
// them under racecheck and synccheck next to the GPU suite and reads the verdicts
// (docs/design.md, "compute-sanitizer and tidal").
//
// *_orig     the kernel as written: one logical block per CTA.
// *_persist  the same body inside the clone's skeleton (passes/tidal_code.c), written out
//            by hand: a persistent worker runs its own chunk of logical blocks first, with a
//            barrier of tidal's id (`barrier.sync ID`: no thread count, not .aligned)
//            between two of them; then its leader takes tickets with an atomic and publishes
//            each chunk's start in a double-buffered shared word, one barrier per chunk.
//            A thread whose body returns early waits at that barrier, as the rewrite makes
//            it (`ret` -> `bra $tdl_next`). ID is what tidal-opt picks for the kernel: the
//            lowest barrier id the body does not use.
//
// rc_counted_*    issue 11 shape (i), the body of kernels/counted_early_exit.cu: threads >= 128
//                 return, the other 128 share values on bar.sync 2, 128 and thread 0 reads
//                 all of them. tidal's id: 0.
// rc_warpspec_*   shape (ii), the body of kernels/warp_specialized.cu: producer warps 0..3
//                 bar.arrive 1, 256, consumer warps 4..7 bar.sync 1, 256; the reply on
//                 barrier 2 the other way. tidal's id: 0.
// rc_control_persist  the skeleton around a body with __syncthreads only (no counted
//                 barrier, no early exit). tidal's id: 1. Race-free: racecheck must be clean.
// rc_race_persist the control without the barrier between logical blocks: thread 0 still
//                 reads the shared tile of one logical block while the others write the next
//                 one's. A real race: racecheck must see it (else a clean run proves nothing).
// rc_unbalanced_* warps 4..7 publish a tile and bar.arrive 3, 256; warps 0..3 wait for it
//                 (bar.sync 3, 256) in two logical blocks of three. The third block ends with
//                 barrier 3 half arrived: harmless when the CTA ends, but in a persistent loop
//                 the hardware barrier carries the arrivals into the next logical block (see
//                 docs/design.md). Run natively only (a skewed barrier can in principle hang).
#define TPB 256

template <int ID>
__device__ __forceinline__ void tidal_barrier()
{
    asm volatile("barrier.sync %0;" ::"n"(ID) : "memory");
}

// The clone's logical-block loop. total logical blocks, chunk per claim, the static chunks
// cover [0, base); tickets count from 0 and give base + ticket.
template <int ID, bool BETWEEN, class Body>
__device__ __forceinline__ void persistent(unsigned total, unsigned chunk, unsigned base, unsigned *ticket, Body body)
{
    __shared__ unsigned b0s[2];   // __tidal_sh's double-buffered chunk start
    const bool leader = threadIdx.x == 0;
    bool odd = false;
    unsigned b0 = blockIdx.x * chunk;   // the static worker's own chunk: no memory operation
    if (b0 >= total) return;
    for (;;) {
        const unsigned b1 = min(b0 + chunk, total);
        for (unsigned lin = b0;;) {
            body(lin);
            if (++lin >= b1) break;
            if (BETWEEN) tidal_barrier<ID>();   // between two logical blocks of a chunk
        }
        if (leader) b0s[odd] = min(atomicAdd(ticket, chunk) + base, total);
        tidal_barrier<ID>();   // the one barrier per chunk: publish b0
        b0 = b0s[odd];
        odd = !odd;
        if (b0 >= total) return;
    }
}

#define PERSIST_PARAMS unsigned total, unsigned chunk, unsigned base, unsigned *ticket

// ---------------------------------------------------------------- (i) and (ii): the suite's bodies
// Exactly the bodies of the suite's kernels (their shared variables included), so that a
// finding in their clones and one here are about the same code.
#include "../kernels/counted_early_exit.cu"
#include "../kernels/warp_specialized.cu"

extern "C" __global__ void __launch_bounds__(TPB) rc_counted_orig(const int *in, int *out)
{
    counted_early_exit_block(in, out, blockIdx.x);
}

extern "C" __global__ void __launch_bounds__(TPB) rc_counted_persist(const int *in, int *out, PERSIST_PARAMS)
{
    persistent<0, true>(total, chunk, base, ticket, [&](unsigned b) { counted_early_exit_block(in, out, b); });
}

extern "C" __global__ void __launch_bounds__(TPB) rc_warpspec_orig(const int *in, int *out)
{
    warp_specialized_block(in, out, blockIdx.x);
}

extern "C" __global__ void __launch_bounds__(TPB) rc_warpspec_persist(const int *in, int *out, PERSIST_PARAMS)
{
    persistent<0, true>(total, chunk, base, ticket, [&](unsigned b) { warp_specialized_block(in, out, b); });
}

// ---------------------------------------------------------------- control and positive control
__device__ __forceinline__ void control_body(const int *in, int *out, int *s, unsigned b)
{
    const int t = threadIdx.x;
    s[t] = in[b * 256 + t] * 5 + (int)b;
    __syncthreads();
    out[b * 257 + 1 + t] = s[255 - t] + t;
    if (t == 0) {
        int acc = 0;
#pragma unroll 1
        for (int j = 0; j < 256; j++) acc = acc * 31 + s[j];
        out[b * 257] = acc;
    }
}

extern "C" __global__ void __launch_bounds__(TPB) rc_control_persist(const int *in, int *out, PERSIST_PARAMS)
{
    __shared__ int s[256];
    persistent<1, true>(total, chunk, base, ticket, [&](unsigned b) { control_body(in, out, s, b); });
}

extern "C" __global__ void __launch_bounds__(TPB) rc_race_persist(const int *in, int *out, PERSIST_PARAMS)
{
    __shared__ int s[256];
    persistent<1, false>(total, chunk, base, ticket, [&](unsigned b) { control_body(in, out, s, b); });
}

// ---------------------------------------------------------------- a barrier left half arrived
__device__ __forceinline__ void unbalanced_body(const int *in, int *out, int *s, unsigned b)
{
    const int t = threadIdx.x;
    if (t >= 128) {
        const long long t0 = clock64();   // ~20 us: the waiters are at their barrier first
        while (clock64() - t0 < 40000) {
        }
        s[t - 128] = in[b * 128 + t - 128] + (int)b;
        asm volatile("bar.arrive 3, 256;" ::: "memory");
    } else if (b % 3 != 0) {
        asm volatile("bar.sync 3, 256;" ::: "memory");
        out[b * 128 + t] = s[127 - t] * 2 + 1;
    } else {
        out[b * 128 + t] = -1;   // does not wait: barrier 3 ends this block half arrived
    }
}

extern "C" __global__ void __launch_bounds__(TPB) rc_unbalanced_orig(const int *in, int *out)
{
    __shared__ int s[128];
    unbalanced_body(in, out, s, blockIdx.x);
}

extern "C" __global__ void __launch_bounds__(TPB) rc_unbalanced_persist(const int *in, int *out, PERSIST_PARAMS)
{
    __shared__ int s[128];
    persistent<0, true>(total, chunk, base, ticket, [&](unsigned b) { unbalanced_body(in, out, s, b); });
}
