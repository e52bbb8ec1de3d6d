// Per-thread local memory: dynamically indexed arrays that cannot live in
// registers (.local depot, %SP/%SPL), local structs, and spills of big arrays.

extern "C" __global__ void local_sort(const int *in, int *out, int n)
{
    int buf[16];
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * 16;
    if (base + 16 > n)
        return;
    for (int i = 0; i < 16; ++i)
        buf[i] = in[base + i];
    for (int i = 1; i < 16; ++i) {              // insertion sort, dynamic indexing
        int k = buf[i], j = i - 1;
        while (j >= 0 && buf[j] > k) {
            buf[j + 1] = buf[j];
            --j;
        }
        buf[j + 1] = k;
    }
    for (int i = 0; i < 16; ++i)
        out[base + i] = buf[i];
}

extern "C" __global__ void local_histogram(const unsigned char *in, int *out, int len)
{
    int h[32] = {0};
    const unsigned char *p = in + (blockIdx.x * blockDim.x + threadIdx.x) * len;
    for (int i = 0; i < len; ++i)
        h[p[i] & 31]++;
    for (int i = 0; i < 32; ++i)
        atomicAdd(&out[i], h[i]);
}

struct Particle { float pos[3]; float vel[3]; int id; };

extern "C" __global__ void local_struct_array(const Particle *ps, float *out, int sel)
{
    Particle local[4];
    for (int i = 0; i < 4; ++i)
        local[i] = ps[blockIdx.x * 4 + i];
    Particle &p = local[sel & 3];
    out[blockIdx.x * blockDim.x + threadIdx.x] =
        p.pos[threadIdx.x % 3] + p.vel[(threadIdx.x + 1) % 3] + (float)p.id;
}
