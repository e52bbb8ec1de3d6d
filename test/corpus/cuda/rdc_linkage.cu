// tidal-corpus-flags: -rdc=true
// Separate-compilation (relocatable device code) linkage: with -rdc=true,
// non-static __device__ functions and variables keep external linkage
// (.visible .func / .visible .global), extern-declared variables are emitted
// as definitions elsewhere in the same TU, and static ones stay internal.
// Everything referenced is defined here so plain `ptxas` (no -c) accepts it.

extern __device__ int rdc_shared_counter;            // declared first ...
__device__ int rdc_shared_counter = 5;               // ... defined later
__device__ float rdc_table[4] = {0.5f, 1.5f, 2.5f, 3.5f};
static __device__ int rdc_internal = 9;
// C++17 inline variables and variable templates -> `.weak .global` (only
// legal with -rdc=true; whole-program mode rejects external inline vars).
inline __device__ int rdc_inline_var = 3;
template <int N> __device__ int rdc_var_tmpl = N * 10;

extern "C" __device__ int rdc_exported_add(int a, int b) { return a + b + rdc_internal; }

__device__ float rdc_lookup(int i) { return rdc_table[i & 3]; }

static __device__ __noinline__ int rdc_static_helper(int x) { return x * 3; }

// Templates and inline functions have vague (linkonce_odr) linkage: with
// -rdc=true they come out as `.weak .func` so that nvlink can merge copies.
template <typename T> __device__ __noinline__ T rdc_weak_twice(T x) { return x + x; }
inline __device__ __noinline__ int rdc_weak_inline(int x) { return x ^ 0x5a; }

extern "C" __global__ void rdc_kernel(int *out, float *fout)
{
    int t = threadIdx.x;
    out[t] = rdc_exported_add(t, rdc_shared_counter) + rdc_static_helper(t)
           + rdc_weak_twice(t) + rdc_weak_inline(t) + rdc_inline_var + rdc_var_tmpl<4>;
    fout[t] = rdc_lookup(t) + rdc_weak_twice(0.25f);
    if (t == 0)
        atomicAdd(&rdc_shared_counter, 1);
}

extern "C" __global__ void rdc_second_kernel(int *out)
{
    out[threadIdx.x] = rdc_exported_add(out[threadIdx.x], 1);
}
