; RUN: tidal-opt %s --stats | FileCheck %s --check-prefix=STATS
; RUN: tidal-opt %s -p tidal --report=json -o %t.ll | FileCheck %s --check-prefix=JSON
; RUN: llc -march=nvptx64 -mcpu=sm_90a %t.ll -o %t.ptx
; RUN: %if ptxas %{ ptxas -arch=sm_90a %t.ptx -o /dev/null %}
; RUN: tidal-opt %s -o - | FileCheck %s --check-prefix=ROUNDTRIP
;
; Kernels are found by the ptx_kernel calling convention and by
; !nvvm.annotations "kernel" entries (LLVM 22 upgrades the latter to the
; calling convention as it reads the module); a plain function is not a kernel.

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; STATS: module {{.*}}kernels_stats.ll: LLVM IR, triple nvptx64-nvidia-cuda, 3 functions, 2 kernels
; STATS-NEXT: func helper: 2 instructions, 1 blocks, 0 barriers, 0 calls; special registers: none
; STATS-NEXT: kernel by_cc: 6 instructions, 1 blocks, 1 barriers, 1 calls; special registers: %tid 1, %ctaid 1
; STATS-NEXT: kernel by_annotation: 3 instructions, 1 blocks, 0 barriers, 0 calls; special registers: %nctaid 1

; JSON: {"file": "{{.*}}kernels_stats.ll", "kernels": [
; JSON-NEXT: {"name": "by_cc", "line": {{[0-9]+}}, "verdict": "rewritten", "exit_mode": "convergent-exits", "registers_added": 0, "barrier_between_blocks": true, "original_verbatim": false},
; JSON-NEXT: {"name": "by_annotation", "line": {{[0-9]+}}, "verdict": "rewritten", "exit_mode": "no-barriers", "registers_added": 0, "barrier_between_blocks": false, "original_verbatim": false}
; JSON-NEXT: ]}
; ROUNDTRIP: define ptx_kernel void @by_annotation(

define i32 @helper(i32 %v) {
  %r = mul i32 %v, 3
  ret i32 %r
}

define ptx_kernel void @by_cc(ptr addrspace(1) %out) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %h = call i32 @helper(i32 %b)
  store i32 %h, ptr addrspace(1) %out, align 4
  ret void
}

define void @by_annotation(ptr addrspace(1) %out) {
  %n = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  store i32 %n, ptr addrspace(1) %out, align 4
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{ptr @by_annotation, !"kernel", i32 1}
