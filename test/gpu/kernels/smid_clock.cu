// Reads %smid, %nsmid, clock64 and %globaltimer in ways that cannot change the output:
// a short clock64 spin, and branches on values that are never taken.
extern "C" __global__ void smid_clock(const int *__restrict__ in, int *__restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned smid, nsmid;
    unsigned long long gt;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(nsmid));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt));
    const long long t0 = clock64();
    while (clock64() - t0 < 200) { }
    if (i >= n) return;
    int v = in[i] * 5 + 1;
    if (smid >= 100000u || nsmid == 0u) v = 0x7fffffff;   // never: ids are < 256
    if (gt == 1ull) v ^= 1;                               // never: the timer is not 1
    out[i] = v;
}
