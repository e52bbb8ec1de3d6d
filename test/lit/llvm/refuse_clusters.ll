; RUN: tidal-opt %s -p tidal --report -o %t.ll | FileCheck %s
; RUN: tidal-opt %s -o %t.orig.ll
; RUN: cmp %t.orig.ll %t.ll
;
; A kernel that reads a cluster register is refused with the PTX pass's reason (clusters), as in --emit=ptx.
; The module comes out as it went in (no tidal globals) and the report says why.

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; CHECK: {{.*}}refuse_clusters.ll: 1 kernels, 0 rewritten, 1 refused
; CHECK-NEXT: refused   k (line {{[0-9]+}}): clusters: uses thread-block clusters ({{.*}}%cluster_ctarank{{.*}}) (in the PTX lowered from the IR)
define ptx_kernel void @k(ptr addrspace(1) %out) {
  %r = call i32 @llvm.nvvm.read.ptx.sreg.cluster.ctarank()
  store i32 %r, ptr addrspace(1) %out, align 4
  ret void
}
