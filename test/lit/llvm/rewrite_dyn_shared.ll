; RUN: tidal-opt %s -p tidal --report -o %t.ll | FileCheck %s --check-prefix=REPORT
; RUN: FileCheck %s < %t.ll
; RUN: llc -march=nvptx64 -mcpu=sm_90a %t.ll -o %t.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; RUN: %if ptxas %{ ptxas -arch=sm_90a %t.ptx -o /dev/null %}
;
; Dynamic shared memory starts after the static variables, and kernels (Triton's
; tiles) rely on its base being 1024-byte aligned: with an extern shared array in
; the module, @__tidal_sh takes a whole aligned kilobyte instead of TIDAL_SH_BYTES,
; as in the PTX pass.

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@dyn = external addrspace(3) global [0 x i32], align 16

; REPORT: {{.*}}rewrite_dyn_shared.ll: 1 kernels, 1 rewritten, 0 refused
; REPORT-NEXT: rewritten rotate (line {{[0-9]+}}): convergent-exits, 0 registers added, barrier between logical blocks

; CHECK: @__tidal_sh = internal addrspace(3) global [1024 x i8] undef, align 1024
; CHECK-LABEL: define ptx_kernel void @rotate(
; the snippets get the variable's address as their `sh` operand
; CHECK: %tdl.b0.enter = call i32 asm sideeffect {{.*}}, i64 ptrtoint (ptr addrspace(3) @__tidal_sh to i64))
; PTX: .shared .align 1024 .b8 __tidal_sh[1024];
define ptx_kernel void @rotate(ptr addrspace(1) %out) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %t64 = zext i32 %t to i64
  %p = getelementptr inbounds [0 x i32], ptr addrspace(3) @dyn, i64 0, i64 %t64
  store i32 %b, ptr addrspace(3) %p, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %v = load i32, ptr addrspace(3) @dyn, align 16
  %o = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %t64
  store i32 %v, ptr addrspace(1) %o, align 4
  ret void
}
