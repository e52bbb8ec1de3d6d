; Dense switch that the NVPTX back end lowers to a jump table:
; `.branchtargets` + `brx.idx` (nvcc 13 does not emit these for the
; equivalent CUDA code, so this file is the corpus source for them).
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @dispatch(ptr addrspace(1) %ops, ptr addrspace(1) %a, ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b = mul i32 %ctaid, %ntid
  %i = add i32 %b, %tid
  %inr = icmp slt i32 %i, %n
  br i1 %inr, label %body, label %exit

body:
  %i64 = sext i32 %i to i64
  %opp = getelementptr inbounds i32, ptr addrspace(1) %ops, i64 %i64
  %op = load i32, ptr addrspace(1) %opp, align 4
  %ap = getelementptr inbounds float, ptr addrspace(1) %a, i64 %i64
  %x = load float, ptr addrspace(1) %ap, align 4
  switch i32 %op, label %dflt [
    i32 0, label %c0
    i32 1, label %c1
    i32 2, label %c2
    i32 3, label %c3
    i32 4, label %c4
    i32 5, label %c5
    i32 6, label %c6
    i32 7, label %c7
  ]

c0:
  %r0 = fadd float %x, 1.0
  br label %store
c1:
  %r1 = fmul float %x, 3.0
  br label %store
c2:
  %r2 = call float @llvm.sqrt.f32(float %x)
  br label %store
c3:
  %r3 = fneg float %x
  br label %store
c4:
  %r4 = call float @llvm.fabs.f32(float %x)
  br label %store
c5:
  %r5 = call float @llvm.floor.f32(float %x)
  br label %store
c6:
  %r6 = fmul float %x, %x
  br label %store
c7:
  %r7 = fsub float 1.0, %x
  br label %store
dflt:
  br label %store

store:
  %r = phi float [ %r0, %c0 ], [ %r1, %c1 ], [ %r2, %c2 ], [ %r3, %c3 ], [ %r4, %c4 ], [ %r5, %c5 ], [ %r6, %c6 ], [ %r7, %c7 ], [ 0.0, %dflt ]
  %op2 = getelementptr inbounds float, ptr addrspace(1) %out, i64 %i64
  store float %r, ptr addrspace(1) %op2, align 4
  br label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare float @llvm.sqrt.f32(float)
declare float @llvm.fabs.f32(float)
declare float @llvm.floor.f32(float)
