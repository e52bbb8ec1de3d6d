; Block reduction in shared memory (addrspace(3)) using the ptx_kernel
; calling convention, llvm.nvvm.barrier.cta.sync.aligned.all (the LLVM 21+
; name of barrier0 / __syncthreads), an early return of idle blocks, a
; halving loop, and a final store by thread 0.
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@sdata = internal addrspace(3) global [256 x float] undef, align 4

define ptx_kernel void @reduce256(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %n) "nvvm.maxntid"="256" {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %blockstart = shl i32 %ctaid, 8
  %idle = icmp sge i32 %blockstart, %n
  br i1 %idle, label %ret, label %load

load:
  %gi = add i32 %blockstart, %tid
  %inb = icmp slt i32 %gi, %n
  %gi64 = sext i32 %gi to i64
  %p = getelementptr inbounds float, ptr addrspace(1) %in, i64 %gi64
  br i1 %inb, label %doload, label %store0

doload:
  %v0 = load float, ptr addrspace(1) %p, align 4
  br label %store0

store0:
  %v = phi float [ %v0, %doload ], [ 0.0, %load ]
  %tid64 = zext i32 %tid to i64
  %sp = getelementptr inbounds [256 x float], ptr addrspace(3) @sdata, i64 0, i64 %tid64
  store float %v, ptr addrspace(3) %sp, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  br label %loop

loop:
  %s = phi i32 [ 128, %store0 ], [ %s.next, %latch ]
  %active = icmp ult i32 %tid, %s
  br i1 %active, label %add, label %latch

add:
  %o = add i32 %tid, %s
  %o64 = zext i32 %o to i64
  %op = getelementptr inbounds [256 x float], ptr addrspace(3) @sdata, i64 0, i64 %o64
  %a = load float, ptr addrspace(3) %sp, align 4
  %b = load float, ptr addrspace(3) %op, align 4
  %sum = fadd float %a, %b
  store float %sum, ptr addrspace(3) %sp, align 4
  br label %latch

latch:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %s.next = lshr i32 %s, 1
  %more = icmp ne i32 %s.next, 0
  br i1 %more, label %loop, label %final

final:
  %is0 = icmp eq i32 %tid, 0
  br i1 %is0, label %write, label %ret

write:
  %r = load float, ptr addrspace(3) @sdata, align 4
  %c64 = zext i32 %ctaid to i64
  %outp = getelementptr inbounds float, ptr addrspace(1) %out, i64 %c64
  store float %r, ptr addrspace(1) %outp, align 4
  br label %ret

ret:
  ret void
}

; Dynamic shared memory: an external zero-sized addrspace(3) array.
@dynsmem = external addrspace(3) global [0 x i32], align 16

define ptx_kernel void @dyn_shared_rotate(ptr addrspace(1) %data) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %t64 = zext i32 %tid to i64
  %gp = getelementptr inbounds i32, ptr addrspace(1) %data, i64 %t64
  %v = load i32, ptr addrspace(1) %gp, align 4
  %sp = getelementptr inbounds [0 x i32], ptr addrspace(3) @dynsmem, i64 0, i64 %t64
  store i32 %v, ptr addrspace(3) %sp, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %n1 = add i32 %tid, 1
  %j = urem i32 %n1, %ntid
  %j64 = zext i32 %j to i64
  %sq = getelementptr inbounds [0 x i32], ptr addrspace(3) @dynsmem, i64 0, i64 %j64
  %w = load i32, ptr addrspace(3) %sq, align 4
  store i32 %w, ptr addrspace(1) %gp, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
