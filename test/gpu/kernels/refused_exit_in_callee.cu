// Not a rewrite target: a __noinline__ function ends the thread with `exit`. tidal-opt
// must refuse the kernel (reason exit-in-callee) and leave the module byte-identical;
// the suite's spec is marked expect_refused and only checks the untouched kernel runs.
__device__ __noinline__ void finish_if(int *out, int i, int v)
{
    if (v & 1) {
        out[i] = v * 3;
        asm volatile("exit;");
    }
}

extern "C" __global__ void refused_exit_in_callee(const int *__restrict__ in, int *__restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int v = in[i];
    finish_if(out, i, v);
    out[i] = v - 7;
}
