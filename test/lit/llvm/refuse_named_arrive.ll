; RUN: tidal-opt %s -p tidal --report -o %t.ll | FileCheck %s
; RUN: tidal-opt %s -o %t.orig.ll
; RUN: cmp %t.orig.ll %t.ll
; RUN: tidal-opt %s -p tidal --assume-balanced-arrive --report -o %t.assumed.ll | FileCheck %s --check-prefix=ASSUMED
;
; The IR level takes the PTX pass's refusal rules (on its lowering of the module):
; bar.arrive (llvm.nvvm.barrier.cta.arrive.count) is refused as named-arrive unless
; --assume-balanced-arrive (test/lit/tidal/refuse_named_arrive.ptx has why).

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; CHECK: {{.*}}refuse_named_arrive.ll: 1 kernels, 0 rewritten, 1 refused
; CHECK-NEXT: refused   k (line {{[0-9]+}}): named-arrive: arrives at a named barrier without waiting
; ASSUMED: {{.*}}refuse_named_arrive.ll: 1 kernels, 1 rewritten, 0 refused
define ptx_kernel void @k(ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = icmp ult i32 %t, 128
  br i1 %p, label %producer, label %consumer
producer:
  store i32 1, ptr addrspace(1) %out, align 4
  call void @llvm.nvvm.barrier.cta.arrive.count(i32 1, i32 256)
  br label %done
consumer:
  call void @llvm.nvvm.barrier.cta.sync.count(i32 1, i32 256)
  br label %done
done:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier.cta.arrive.count(i32, i32)
declare void @llvm.nvvm.barrier.cta.sync.count(i32, i32)
