// Launch bounds and register limits: __launch_bounds__(maxThreads),
// (maxThreads, minBlocksPerSM), (maxThreads, minBlocks, maxBlocksPerCluster),
// __maxnreg__, and the .reqntid-style cases; many live values to stress
// register allocation under a cap.

extern "C" __global__ void __launch_bounds__(128) lb_max_threads(float *x)
{
    x[blockIdx.x * 128 + threadIdx.x] += 1.0f;
}

extern "C" __global__ void __launch_bounds__(256, 4) lb_min_blocks(const float *a, float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        b[i] = a[i] * a[i];
}

extern "C" __global__ void __launch_bounds__(128, 2, 4) lb_max_cluster(float *x)
{
    x[blockIdx.x * 128 + threadIdx.x] *= 3.0f;
}

extern "C" __global__ void __maxnreg__(32) maxnreg_capped(const float *in, float *out, int n)
{
    float r[24];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int k = 0; k < 24; ++k)
        r[k] = in[(i + k * 97) % n];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 24; ++k)
        s += r[k] * r[(k * 7) % 24];
    out[i % n] = s;
}

template <int THREADS>
__global__ void __launch_bounds__(THREADS, 1) lb_templated(int *x)
{
    x[blockIdx.x * THREADS + threadIdx.x] = THREADS;
}
template __global__ void lb_templated<64>(int *);
template __global__ void lb_templated<1024>(int *);
