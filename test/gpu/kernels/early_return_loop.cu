// Threads leave inside a loop whose body has two barriers: in each iteration more
// threads return (partial warps too) while the rest keep synchronising.
extern "C" __global__ void early_return_loop(const int *__restrict__ in, int *__restrict__ out)
{
    __shared__ int s[256];
    const int t = threadIdx.x;
    const int b = blockIdx.x;
    int v = in[b * 256 + t];
    for (int k = 0; k < 6; k++) {
        const int limit = 256 - 32 * k - 8 * (b % 3);   // >= 80 threads stay
        if (t >= limit) return;
        s[t] = v;
        __syncthreads();
        v = v * 3 + s[(t + 1 + k) % limit];
        __syncthreads();
        out[b * 256 + t] = v;
    }
}
