// Device-side printf: produces vprintf declarations, string constants in
// .global .b8 arrays with initializers, and a .local buffer for the varargs.
#include <cstdio>

extern "C" __global__ void printf_ids(int tag)
{
    if (threadIdx.x == 0)
        printf("block %d of %d (tag=%d)\n", blockIdx.x, gridDim.x, tag);
}

extern "C" __global__ void printf_mixed_types(const float *x, long long big, double d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 2)
        printf("i=%d x=%f big=%lld d=%.3e ptr=%p c=%c s=%s\n",
               i, x[i], big, d, (const void *)x, 'A' + i, "str\t\"quoted\"\\");
}

extern "C" __global__ void assert_like(const int *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && v[i] < 0) {
        printf("negative value %d at %d\n", v[i], i);
        __trap();
    }
}
