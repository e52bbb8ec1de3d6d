; Grid-stride SAXPY marked as a kernel through the legacy !nvvm.annotations
; "kernel" metadata (LLVM 22 upgrades it to the ptx_kernel calling
; convention). Reads %tid.x, %ctaid.x, %ntid.x, %nctaid.x; loop with a phi.
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @saxpy_gs(i32 %n, float %a, ptr %x, ptr %y) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %nctaid = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %base = mul i32 %ctaid, %ntid
  %start = add i32 %base, %tid
  %stride = mul i32 %ntid, %nctaid
  %gx = addrspacecast ptr %x to ptr addrspace(1)
  %gy = addrspacecast ptr %y to ptr addrspace(1)
  %c0 = icmp slt i32 %start, %n
  br i1 %c0, label %loop, label %exit

loop:
  %i = phi i32 [ %start, %entry ], [ %i.next, %loop ]
  %idx = sext i32 %i to i64
  %px = getelementptr inbounds float, ptr addrspace(1) %gx, i64 %idx
  %py = getelementptr inbounds float, ptr addrspace(1) %gy, i64 %idx
  %vx = load float, ptr addrspace(1) %px, align 4
  %vy = load float, ptr addrspace(1) %py, align 4
  %r = call float @llvm.fma.f32(float %a, float %vx, float %vy)
  store float %r, ptr addrspace(1) %py, align 4
  %i.next = add nsw i32 %i, %stride
  %c = icmp slt i32 %i.next, %n
  br i1 %c, label %loop, label %exit

exit:
  ret void
}

; A second kernel with a 64-bit induction variable and a vector load.
define void @scale_v4(i64 %n4, float %s, ptr %buf) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b = mul i32 %ctaid, %ntid
  %i32 = add i32 %b, %tid
  %i = zext i32 %i32 to i64
  %in = icmp ult i64 %i, %n4
  br i1 %in, label %body, label %done

body:
  %g = addrspacecast ptr %buf to ptr addrspace(1)
  %p = getelementptr inbounds <4 x float>, ptr addrspace(1) %g, i64 %i
  %v = load <4 x float>, ptr addrspace(1) %p, align 16
  %ins = insertelement <4 x float> poison, float %s, i32 0
  %sv = shufflevector <4 x float> %ins, <4 x float> poison, <4 x i32> zeroinitializer
  %m = fmul <4 x float> %v, %sv
  store <4 x float> %m, ptr addrspace(1) %p, align 16
  br label %done

done:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare float @llvm.fma.f32(float, float, float)

!nvvm.annotations = !{!0, !1}
!0 = !{ptr @saxpy_gs, !"kernel", i32 1}
!1 = !{ptr @scale_v4, !"kernel", i32 1}
