; A cluster barrier, which NVPTX cannot select below sm_90: a fatal error inside LLVM.
target triple = "nvptx64-nvidia-cuda"

declare void @llvm.nvvm.barrier.cluster.arrive()

define ptx_kernel void @k() {
  call void @llvm.nvvm.barrier.cluster.arrive()
  ret void
}
