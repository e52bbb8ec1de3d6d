; Non-inlined device functions (.func) with scalar, pointer and aggregate
; parameters and return values, an internal helper, a recursive function,
; and an indirect call through a function pointer (-> .callprototype).
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%pair = type { float, i32 }

define noundef float @dev_poly(float %x, float %a, float %b) #0 {
  %ax = fmul float %a, %x
  %axb = fadd float %ax, %b
  %r = fmul float %axb, %x
  ret float %r
}

define internal %pair @dev_make_pair(float %f, i32 %i) #0 {
  %p0 = insertvalue %pair poison, float %f, 0
  %i1 = add i32 %i, 1
  %p1 = insertvalue %pair %p0, i32 %i1, 1
  ret %pair %p1
}

define i64 @dev_fact(i32 %n) #0 {
entry:
  %small = icmp slt i32 %n, 2
  br i1 %small, label %base, label %rec

base:
  ret i64 1

rec:
  %n1 = sub i32 %n, 1
  %sub = call i64 @dev_fact(i32 %n1)
  %n64 = sext i32 %n to i64
  %r = mul i64 %sub, %n64
  ret i64 %r
}

define internal void @dev_store(ptr addrspace(1) %p, i64 %i, float %v) #0 {
  %q = getelementptr inbounds float, ptr addrspace(1) %p, i64 %i
  store float %v, ptr addrspace(1) %q, align 4
  ret void
}

define internal float @twice(float %x) #0 {
  %r = fmul float %x, 2.0
  ret float %r
}

define internal float @negate(float %x) #0 {
  %r = fneg float %x
  ret float %r
}

define ptx_kernel void @call_kernel(ptr addrspace(1) %in, ptr addrspace(1) %out, ptr addrspace(1) %facts, i32 %sel) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %ip = getelementptr inbounds float, ptr addrspace(1) %in, i64 %t64
  %x = load float, ptr addrspace(1) %ip, align 4
  %y = call float @dev_poly(float %x, float 1.5, float -0.25)
  %pr = call %pair @dev_make_pair(float %y, i32 %tid)
  %pf = extractvalue %pair %pr, 0
  %pi = extractvalue %pair %pr, 1
  %pif = sitofp i32 %pi to float
  %s = fadd float %pf, %pif
  %odd = icmp ne i32 %sel, 0
  %fn = select i1 %odd, ptr @twice, ptr @negate
  %z = call float %fn(float %s)
  call void @dev_store(ptr addrspace(1) %out, i64 %t64, float %z)
  %k = and i32 %tid, 15
  %f = call i64 @dev_fact(i32 %k)
  %fp = getelementptr inbounds i64, ptr addrspace(1) %facts, i64 %t64
  store i64 %f, ptr addrspace(1) %fp, align 8
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

attributes #0 = { noinline }
