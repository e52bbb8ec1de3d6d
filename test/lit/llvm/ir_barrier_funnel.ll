; RUN: tidal-opt %s -p tidal --report -o %t.ll | FileCheck %s --check-prefix=REPORT
; RUN: FileCheck %s < %t.ll
; RUN: FileCheck %s --check-prefix=FUNC < %t.ll
; RUN: tidal-opt %t.ll --emit=ptx -o %t.ptx
; RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin
; REQUIRES: ptxas
;
; `if (tid >= n) return;` before __syncthreads(): a thread may leave while others still
; reach a full barrier. The IR rewrite, like the PTX pass (--emit=ptx), routes every full
; barrier and every return through one funnel: a barrier.cta.red.or.all on tidal's
; barrier id (in an internal noinline function, one per id: every lane of a warp reaches
; the same barrier instruction), where finished threads keep joining until no thread waits at a barrier,
; then a switch back to the block after the barrier the thread stopped at.

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; REPORT: {{.*}}ir_barrier_funnel.ll: 2 kernels, 2 rewritten, 0 refused
; REPORT-NEXT: rewritten k (line {{[0-9]+}}): barrier-funnel
; REPORT-NEXT: rewritten k2 (line {{[0-9]+}}): barrier-funnel
@sh = internal addrspace(3) global [256 x i32] undef, align 4

; One barrier site.
; CHECK-LABEL: define ptx_kernel void @k(
; The case-a copy keeps the original barrier and return.
; CHECK:       call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
; CHECK:       ret void
; The rewritten body: the site and the return branch to the funnel.
; CHECK:       [[FUN:tdl.funnel]]:
; CHECK-NEXT:    [[R:%tdl.resume[0-9]*]] = phi i32 [ -1, %tdl.funnel.resume ], [ 0, %work ], [ -1, %done ]
; CHECK-NEXT:    [[W:%[0-9]+]] = icmp ne i32 [[R]], -1
; CHECK-NEXT:    [[ANY:%[0-9]+]] = call i1 @__tidal_funnel_bar[[ID:[0-9]+]](i1 [[W]])
; CHECK-NEXT:    br i1 [[ANY]], label %tdl.funnel.resume, label %tdl.funnel.done
; CHECK:       tdl.funnel.switch:
; CHECK-NEXT:    switch i32 [[R]], label %tdl.funnel.bad [
; CHECK-NEXT:      i32 0, label %tdl.after.barrier
; CHECK-NEXT:    ]
; CHECK:       tdl.funnel.bad:
; CHECK-NEXT:    call void @llvm.trap()
; CHECK-NEXT:    unreachable
; CHECK:       tdl.funnel.done:
; CHECK-NEXT:    br label %tdl.next
define ptx_kernel void @k(ptr addrspace(1) %out, i32 %n) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = icmp uge i32 %t, %n
  br i1 %c, label %done, label %work
work:
  %t64 = zext i32 %t to i64
  %p = getelementptr inbounds [256 x i32], ptr addrspace(3) @sh, i64 0, i64 %t64
  store i32 %t, ptr addrspace(3) %p, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %v = load i32, ptr addrspace(3) @sh, align 4
  store i32 %v, ptr addrspace(1) %out, align 4
  br label %done
done:
  ret void
}

; Two sites in a loop, values live across both barriers (SSA through the funnel: reg2mem
; before, mem2reg after), a PHI whose incoming block is split at a barrier, %ctaid.
; CHECK-LABEL: define ptx_kernel void @k2(
; CHECK:       tdl.funnel:
; The values live across the funnel become PHIs there.
; CHECK-NEXT:    %i.reg2mem{{.*}} = phi i32
; CHECK:         %tdl.resume = phi i32 [ -1, %tdl.funnel.resume ], [ 0, %loop ], [ 1, %tdl.after.barrier ], [ -1, %exit ]
; CHECK:       switch i32 %tdl.resume, label %tdl.funnel.bad [
; CHECK-NEXT:      i32 0, label %tdl.after.barrier
; CHECK-NEXT:      i32 1, label %tdl.after.barrier1
; CHECK-NEXT:    ]
; A clone's static fast path runs the same logical blocks through the funnel: its own
; chunk straight to tdl.logical (no barrier before it), the funnel's end to the latch,
; and after the chunk the exit of the whole block when the launch has no tickets.
; CHECK-LABEL: define ptx_kernel void @k__tidal_reshaped(
; CHECK:       tdl.fast.chunk:
; CHECK-NEXT:    %tdl.b0.fast = mul i32 %tdl.pid, %tdl.first
; CHECK-NEXT:    [[FNONE:%[0-9]+]] = icmp uge i32 %tdl.b0.fast, %tdl.total
; CHECK-NEXT:    br i1 [[FNONE]], label %tdl.exit, label %tdl.start
; CHECK:       tdl.started:
; CHECK-NOT:     call
; CHECK:         br label %tdl.logical
; CHECK:       tdl.claim:
; CHECK-NEXT:    br i1 %tdl.once, label %tdl.exit, label %tdl.claim.go
; CHECK:       tdl.exit:
; CHECK-NEXT:    ret void
; CHECK:       tdl.funnel.done:
; CHECK-NEXT:    br label %tdl.next
; The reshaped clone gets the same funnel.
; CHECK-LABEL: define ptx_kernel void @k2__tidal_reshaped(
; CHECK-NOT:   call void @llvm.nvvm.barrier.cta.sync.aligned.all
; CHECK:       call i1 @__tidal_funnel_bar[[ID]](
; The funnel's barrier, once for both kernels (its own RUN line: the function sits
; between the kernels).
; FUNC:        define internal i1 @__tidal_funnel_bar[[ID:[0-9]+]](i1 %0) #[[ATTR:[0-9]+]] {
; FUNC-NEXT:   entry:
; FUNC-NEXT:     [[B:%[0-9]+]] = call i1 @llvm.nvvm.barrier.cta.red.or.all(i32 [[ID]], i1 %0)
; FUNC-NEXT:     ret i1 [[B]]
; FUNC-NOT:    define {{.*}}@__tidal_funnel_bar
; FUNC:        attributes #[[ATTR]] = { convergent noinline nounwind }
define ptx_kernel void @k2(ptr addrspace(1) %out, i32 %n) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = icmp uge i32 %t, %n
  br i1 %c, label %exit, label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %latch ]
  %acc = phi i32 [ 0, %entry ], [ %acc2, %latch ]
  %t64 = zext i32 %t to i64
  %p = getelementptr inbounds [256 x i32], ptr addrspace(3) @sh, i64 0, i64 %t64
  %ti = add i32 %t, %i
  store i32 %ti, ptr addrspace(3) %p, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %u = add i32 %t, 1
  %u8 = and i32 %u, 255
  %u64 = zext i32 %u8 to i64
  %q = getelementptr inbounds [256 x i32], ptr addrspace(3) @sh, i64 0, i64 %u64
  %x = load i32, ptr addrspace(3) %q, align 4
  %acc1 = add i32 %acc, %x
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %acc2 = add i32 %acc1, %i
  %i1 = add i32 %i, 1
  %more = icmp ult i32 %i1, 4
  br i1 %more, label %latch, label %tail
latch:
  br label %loop
tail:
  %r = phi i32 [ %acc2, %loop ]
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bd = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %g = mul i32 %b, %bd
  %gi = add i32 %g, %t
  %g64 = zext i32 %gi to i64
  %o = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %g64
  store i32 %r, ptr addrspace(1) %o, align 4
  br label %exit
exit:
  ret void
}

; RUN: tidal-opt %s --emit=ptx -p tidal --report -o /dev/null | FileCheck %s --check-prefix=PTX
; PTX: rewritten k (line {{[0-9]+}}): barrier-funnel
; PTX: rewritten k2 (line {{[0-9]+}}): barrier-funnel
