; RUN: tidal-opt %s -p tidal --report -o %t.ll | FileCheck %s
; RUN: tidal-opt %s -o %t.orig.ll
; RUN: cmp %t.orig.ll %t.ll
;
; llvm.nvvm.exit in a called function ends the thread from inside a .func.
; The module comes out as it went in (no tidal globals) and the report says why.

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; CHECK: {{.*}}refuse_exit_in_callee.ll: 1 kernels, 0 rewritten, 1 refused
; CHECK-NEXT: refused   k (line {{[0-9]+}}): exit-in-callee: calls a function that may execute 'exit'
define ptx_kernel void @k(ptr addrspace(1) %out, i32 %n) {
  call void @maybe_exit(i32 %n)
  store i32 1, ptr addrspace(1) %out, align 4
  ret void
}

define internal void @maybe_exit(i32 %n) noinline {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = icmp uge i32 %t, %n
  br i1 %c, label %out, label %done
out:
  call void @llvm.nvvm.exit()
  unreachable
done:
  ret void
}
