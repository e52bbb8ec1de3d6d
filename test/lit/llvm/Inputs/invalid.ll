target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @k(ptr addrspace(1) %out) {
entry:
  %a = add i32 %b, 1
  %b = add i32 %a, 1
  ret void
}
