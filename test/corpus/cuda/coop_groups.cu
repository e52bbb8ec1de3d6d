// Cooperative groups at block/tile level: thread_block, tiled_partition
// (dynamic and static sizes), coalesced_threads, cg::reduce.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void cg_tile_reduce(const int *in, int *out, int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int i = block.group_index().x * block.size() + block.thread_rank();
    int v = i < n ? in[i] : 0;
    int s = cg::reduce(warp, v, cg::plus<int>());
    if (warp.thread_rank() == 0)
        atomicAdd(out, s);
    block.sync();
}

extern "C" __global__ void cg_small_tiles(float *data)
{
    auto block = cg::this_thread_block();
    auto tile4 = cg::tiled_partition<4>(block);
    float v = data[block.thread_rank()];
    for (unsigned off = tile4.size() / 2; off > 0; off /= 2)
        v += tile4.shfl_down(v, off);
    if (tile4.thread_rank() == 0)
        data[block.thread_rank()] = v;
    // dynamic tiled_partition
    cg::thread_group tile16 = cg::tiled_partition(block, 16);
    tile16.sync();
    if (tile16.thread_rank() == 1)
        data[block.thread_rank()] += 1.0f;
}

extern "C" __global__ void cg_coalesced(int *counter, const int *flags)
{
    if (flags[threadIdx.x]) {
        cg::coalesced_group active = cg::coalesced_threads();
        int prev = 0;
        if (active.thread_rank() == 0)
            prev = atomicAdd(counter, (int)active.size());
        prev = active.shfl(prev, 0);
        counter[1 + threadIdx.x] = prev + (int)active.thread_rank();
    }
}
