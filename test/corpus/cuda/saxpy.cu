// SAXPY/DAXPY variants: plain, grid-stride, templated functor (mangled),
// and an integer axpy with 64-bit indices.

extern "C" __global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

extern "C" __global__ void saxpy_grid_stride(long long n, float a, const float *__restrict__ x, float *__restrict__ y)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        y[i] = fmaf(a, x[i], y[i]);
}

extern "C" __global__ void daxpy(int n, double a, const double *x, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += a * x[i];
}

namespace tidal {
template <typename T> struct Axpy {
    T a;
    __device__ T operator()(T x, T y) const { return a * x + y; }
};

template <typename T, typename Op>
__global__ void transform2(int n, Op op, const T *x, T *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = op(x[i], y[i]);
}

template __global__ void transform2<float, Axpy<float>>(int, Axpy<float>, const float *, float *);
template __global__ void transform2<int, Axpy<int>>(int, Axpy<int>, const int *, int *);
} // namespace tidal
