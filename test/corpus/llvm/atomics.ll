; Atomic read-modify-write and cmpxchg on global (addrspace 1), shared
; (addrspace 3) and generic pointers; integer, 64-bit and float; different
; orderings and sync scopes; a CAS retry loop.
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@counts = internal addrspace(3) global [32 x i32] undef, align 4

define ptx_kernel void @atomic_mix(ptr addrspace(1) %g32, ptr addrspace(1) %g64, ptr addrspace(1) %gf, ptr %generic) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %lane = and i32 %tid, 31
  %lane64 = zext i32 %lane to i64
  %sp = getelementptr inbounds [32 x i32], ptr addrspace(3) @counts, i64 0, i64 %lane64
  store i32 0, ptr addrspace(3) %sp, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %s.old = atomicrmw add ptr addrspace(3) %sp, i32 1 syncscope("block") monotonic, align 4
  %a0 = atomicrmw add ptr addrspace(1) %g32, i32 %tid monotonic, align 4
  %g32.1 = getelementptr inbounds i32, ptr addrspace(1) %g32, i64 1
  %a1 = atomicrmw max ptr addrspace(1) %g32.1, i32 %tid monotonic, align 4
  %g32.2 = getelementptr inbounds i32, ptr addrspace(1) %g32, i64 2
  %a2 = atomicrmw umin ptr addrspace(1) %g32.2, i32 %tid monotonic, align 4
  %g32.3 = getelementptr inbounds i32, ptr addrspace(1) %g32, i64 3
  %a3 = atomicrmw xchg ptr addrspace(1) %g32.3, i32 %s.old monotonic, align 4
  %g32.4 = getelementptr inbounds i32, ptr addrspace(1) %g32, i64 4
  %a4 = atomicrmw or ptr addrspace(1) %g32.4, i32 %a3 monotonic, align 4
  %t64 = zext i32 %tid to i64
  %b0 = atomicrmw add ptr addrspace(1) %g64, i64 %t64 syncscope("device") monotonic, align 8
  %f0 = atomicrmw fadd ptr addrspace(1) %gf, float 1.0 monotonic, align 4
  %gf.1 = getelementptr inbounds double, ptr addrspace(1) %gf, i64 1
  %f1 = atomicrmw fadd ptr addrspace(1) %gf.1, double 2.5 monotonic, align 8
  %c = cmpxchg ptr addrspace(1) %g32, i32 0, i32 %tid acq_rel monotonic, align 4
  %gen.old = atomicrmw add ptr %generic, i32 %a4 seq_cst, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %fin = load i32, ptr addrspace(3) %sp, align 4
  %sum = add i32 %fin, %gen.old
  %outp = getelementptr inbounds i32, ptr addrspace(1) %g32, i64 8
  store i32 %sum, ptr addrspace(1) %outp, align 4
  ret void
}

; atomicMax on float implemented with a cmpxchg loop.
define ptx_kernel void @atomic_fmax_cas(ptr addrspace(1) %dst, float %v) {
entry:
  %init = load i32, ptr addrspace(1) %dst, align 4
  br label %loop

loop:
  %old = phi i32 [ %init, %entry ], [ %seen, %retry ]
  %oldf = bitcast i32 %old to float
  %ge = fcmp oge float %oldf, %v
  br i1 %ge, label %done, label %try

try:
  %new = bitcast float %v to i32
  %pair = cmpxchg ptr addrspace(1) %dst, i32 %old, i32 %new monotonic monotonic, align 4
  %seen = extractvalue { i32, i1 } %pair, 0
  %ok = extractvalue { i32, i1 } %pair, 1
  br i1 %ok, label %done, label %retry

retry:
  br label %loop

done:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
