// Warp shuffles and votes: __shfl_down_sync reduction, __shfl_xor_sync butterfly,
// __shfl_sync broadcast, __ballot_sync, __any_sync, __all_sync.
extern "C" __global__ void warp_vote_shfl(const int *__restrict__ in, int *__restrict__ out)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    const int v = in[i];
    int sum = v;
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
    int mx = v;
    for (int o = 16; o > 0; o >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    const int total = __shfl_sync(0xffffffffu, sum, 0);
    const unsigned ballot = __ballot_sync(0xffffffffu, (v & 3) == 1);
    const int any = __any_sync(0xffffffffu, v % 97 == 0);
    const int all = __all_sync(0xffffffffu, v != 12345);
    const int up = __shfl_up_sync(0xffffffffu, v, 3);
    out[i] = total * 3 + mx - (int)__popc(ballot) * 11 + (any << 20) + (all << 21) + (lane >= 3 ? up : lane)
             + (int)(ballot >> lane);
}
