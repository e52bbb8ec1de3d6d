; RUN: tidal-opt %s -p tidal --report -o %t.ll | FileCheck %s
; RUN: tidal-opt %s -o %t.orig.ll
; RUN: cmp %t.orig.ll %t.ll
;
; Inline asm that reads %ctaid: the PTX pass rewrites it in the lowered PTX, the IR rewrite cannot.
; The module comes out as it went in (no tidal globals) and the report says why.

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; CHECK: {{.*}}refuse_ir_inline_asm.ll: 1 kernels, 0 rewritten, 1 refused
; CHECK-NEXT: refused   k (line {{[0-9]+}}): ir-inline-asm: inline asm mentions 'ctaid' (the IR rewrite does not edit asm text; use --emit=ptx)
define ptx_kernel void @k(ptr addrspace(1) %out) {
  %b = call i32 asm "mov.u32 $0, %ctaid.x;", "=r"()
  store i32 %b, ptr addrspace(1) %out, align 4
  ret void
}
