// Thread block clusters (sm_90): compile-time __cluster_dims__, cluster.sync(),
// distributed shared memory via map_shared_rank, cluster special registers.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void __cluster_dims__(2, 1, 1)
cluster_dsmem_histogram(const int *in, int *bins, int n, int nbins)
{
    extern __shared__ int smem[];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    int per_block = (nbins + cluster.num_blocks() - 1) / cluster.num_blocks();
    for (int i = threadIdx.x; i < per_block; i += blockDim.x)
        smem[i] = 0;
    cluster.sync();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int b = in[i] % nbins;
        int owner = b / per_block;
        int *dst = cluster.map_shared_rank(smem, owner);
        atomicAdd(dst + (b % per_block), 1);
    }
    cluster.sync();
    for (int i = threadIdx.x; i < per_block; i += blockDim.x)
        if (rank * per_block + i < (unsigned)nbins)
            atomicAdd(&bins[rank * per_block + i], smem[i]);
}

extern "C" __global__ void __cluster_dims__(4, 1, 1)
cluster_neighbor_exchange(float *out)
{
    __shared__ float s[128];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned r = cluster.block_rank();
    s[threadIdx.x] = (float)(r * 1000 + threadIdx.x);
    cluster.sync();
    unsigned peer = (r + 1) % cluster.num_blocks();
    float *ps = cluster.map_shared_rank(s, peer);
    float v = ps[threadIdx.x];
    cluster.sync(); // keep peer smem alive until everyone has read it
    out[blockIdx.x * blockDim.x + threadIdx.x] = v + (float)cluster.dim_blocks().x;
}

// No compile-time cluster shape: launched with cudaLaunchKernelEx and a
// cluster attribute. Reads %cluster_ctarank etc. through cg.
extern "C" __global__ void cluster_runtime_shape(unsigned *out)
{
    cg::cluster_group cluster = cg::this_cluster();
    dim3 bi = cluster.block_index();
    out[blockIdx.x] = cluster.block_rank() | (bi.x << 8) | (cluster.num_threads() << 16);
    cluster.barrier_arrive();
    cluster.barrier_wait();
}
