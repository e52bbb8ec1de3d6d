; RUN: tidal-opt %s -p tidal --report -o %t.ll | FileCheck %s --check-prefix=REPORT
; RUN: FileCheck %s < %t.ll
; RUN: llc -march=nvptx64 -mcpu=sm_90a %t.ll -o %t.ptx
; RUN: %if ptxas %{ ptxas -arch=sm_90a %t.ptx -o /dev/null %}
;
; One kernel refused, one rewritten: the refused one keeps its body as it was.

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; REPORT: {{.*}}refused_next_to_rewritten.ll: 2 kernels, 1 rewritten, 1 refused
; REPORT-NEXT: refused   clustered (line {{[0-9]+}}): clusters:
; REPORT-NEXT: rewritten plain (line {{[0-9]+}}): no-barriers

; CHECK-LABEL: define ptx_kernel void @clustered(ptr addrspace(1) %out) {
; CHECK-NEXT:    %r = call i32 @llvm.nvvm.read.ptx.sreg.cluster.ctarank()
; CHECK-NEXT:    store i32 %r, ptr addrspace(1) %out, align 4
; CHECK-NEXT:    ret void
; CHECK-NEXT:  }
define ptx_kernel void @clustered(ptr addrspace(1) %out) {
  %r = call i32 @llvm.nvvm.read.ptx.sreg.cluster.ctarank()
  store i32 %r, ptr addrspace(1) %out, align 4
  ret void
}

; CHECK-LABEL: define ptx_kernel void @plain(ptr addrspace(1) %out) {
; CHECK-NEXT:  tdl.entry:
; CHECK-LABEL: define ptx_kernel void @plain__tidal_reshaped(
; CHECK-NOT:   clustered__tidal_reshaped
define ptx_kernel void @plain(ptr addrspace(1) %out) {
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  store i32 %b, ptr addrspace(1) %out, align 4
  ret void
}
