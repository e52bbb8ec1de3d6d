; RUN: tidal-opt %s -p tidal --report -o %t.ll | FileCheck %s
; RUN: tidal-opt %s -o %t.orig.ll
; RUN: cmp %t.orig.ll %t.ll
;
; if (tid >= n) return; __syncthreads(): the PTX pass takes it with the barrier funnel (--emit=ptx); the IR rewrite does not implement the funnel.
; The module comes out as it went in (no tidal globals) and the report says why.

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; CHECK: {{.*}}refuse_ir_barrier_funnel.ll: 1 kernels, 0 rewritten, 1 refused
; CHECK-NEXT: refused   k (line {{[0-9]+}}): ir-barrier-funnel: divergent exits with full barriers need the barrier funnel, which only the PTX pass implements (use --emit=ptx)
@sh = internal addrspace(3) global [256 x i32] undef, align 4

define ptx_kernel void @k(ptr addrspace(1) %out, i32 %n) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = icmp uge i32 %t, %n
  br i1 %c, label %done, label %work
work:
  %t64 = zext i32 %t to i64
  %p = getelementptr inbounds [256 x i32], ptr addrspace(3) @sh, i64 0, i64 %t64
  store i32 %t, ptr addrspace(3) %p, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %v = load i32, ptr addrspace(3) @sh, align 4
  store i32 %v, ptr addrspace(1) %out, align 4
  br label %done
done:
  ret void
}

; RUN: tidal-opt %s --emit=ptx -p tidal --report -o /dev/null | FileCheck %s --check-prefix=PTX
; PTX: rewritten k (line {{[0-9]+}}): barrier-funnel
