// Per-thread local arrays with data-dependent indexing (local memory): an insertion
// sort of 24 values and a small table walk.
extern "C" __global__ void local_arrays(const unsigned *__restrict__ in, unsigned *__restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned v[24];
    unsigned x = in[i] | 1u;
    for (int k = 0; k < 24; k++) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        v[k] = x % 1000u;
    }
    for (int k = 1; k < 24; k++) {
        const unsigned key = v[k];
        int j = k - 1;
        while (j >= 0 && v[j] > key) { v[j + 1] = v[j]; j--; }
        v[j + 1] = key;
    }
    unsigned p = in[i] % 24u, acc = 0;
    for (int k = 0; k < 16; k++) { acc = acc * 31u + v[p]; p = v[p] % 24u; }
    out[3 * i] = v[0];
    out[3 * i + 1] = v[12];
    out[3 * i + 2] = acc;
}
