; RUN: tidal-opt %s -p tidal --report -o %t.ll | FileCheck %s --check-prefixes=BOTH,IR
; RUN: tidal-opt %s --emit=ptx -p tidal --report -o %t.ptx | FileCheck %s --check-prefix=BOTH
; RUN: tidal-opt %t.ll --emit=ptx -o %t.ir.ptx
; RUN: FileCheck %s --check-prefix=LOWERED < %t.ir.ptx
; RUN: %if ptxas %{ ptxas -arch=sm_90a %t.ptx -o /dev/null %}
; RUN: %if ptxas %{ ptxas -arch=sm_90a %t.ir.ptx -o /dev/null %}
;
; The kernels of test/lit/tidal/rule_reduction_barriers.test written as IR, through
; both IR paths: the PTX pass on the lowered module (--emit=ptx -p tidal) and the
; transform at IR level (--emit=llvm -p tidal), whose verdict is the PTX pass's on a
; lowered copy (llvm_verdict.c): one rule, the same verdicts. Reduction barriers
; (llvm.nvvm.barrier.cta.red.*) every thread reaches, then a divergent store: rewritten
; in convergent-exits mode. A full reduction's result is the same in every thread
; (or_break's loop exit), and so is a read-only load from a uniform address
; (nc_bounds' bounds: noalias readonly lowers to ld.global.nc). An early return before
; the reduction, or a thread-dependent loop back to it, stays refused.

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; BOTH: 5 kernels, 3 rewritten, 2 refused
; BOTH-NEXT: rewritten count_tail (line {{[0-9]+}}): convergent-exits,
; BOTH-NEXT: rewritten or_break (line {{[0-9]+}}): convergent-exits,
; BOTH-NEXT: rewritten nc_bounds (line {{[0-9]+}}): convergent-exits,
; BOTH-NEXT: refused   early_return (line {{[0-9]+}}): divergent-exit: a thread may leave (line {{[0-9]+}}: 'bra') while others still reach a full barrier (line {{[0-9]+}}: 'bar.red.popc.u32'); the barrier funnel cannot take reduction barriers
; IR-SAME:   (in the PTX lowered from the IR)
; BOTH-NEXT: refused   thread_loop (line {{[0-9]+}}): divergent-exit: a thread may leave (line {{[0-9]+}}: 'bra') while others still reach a full barrier (line {{[0-9]+}}: 'bar.red.and.pred'); the barrier funnel cannot take reduction barriers
; IR-SAME:   (in the PTX lowered from the IR)

; The IR-rewritten clone keeps its reduction and sends the divergent tail's return to
; the next logical block (no funnel).
; LOWERED-LABEL: .entry count_tail__tidal_reshaped(
; LOWERED:       bar.red.popc.u32
; LOWERED-NOT:   barrier.red.or.pred
; LOWERED-LABEL: .entry or_break__tidal_reshaped(


; count_tail: __syncthreads_count over n tiles, then if (tid == 0) out[ctaid] = total
define ptx_kernel void @count_tail(ptr addrspace(1) noalias readonly %in, ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %any = icmp sgt i32 %n, 0
  br i1 %any, label %loop, label %tail
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %tot = phi i32 [ 0, %entry ], [ %tot1, %loop ]
  %row = mul i32 %cta, %n
  %row2 = add i32 %row, %i
  %base = mul i32 %row2, %ntid
  %idx = add i32 %base, %tid
  %idx64 = zext i32 %idx to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %idx64
  %v = load i32, ptr addrspace(1) %p, align 4
  %pos = icmp sgt i32 %v, 0
  %c = call i32 @llvm.nvvm.barrier.cta.red.popc.aligned.all(i32 0, i1 %pos)
  %tot1 = add i32 %tot, %c
  %i1 = add nuw nsw i32 %i, 1
  %more = icmp slt i32 %i1, %n
  br i1 %more, label %loop, label %tail
tail:
  %total = phi i32 [ 0, %entry ], [ %tot1, %loop ]
  %lead = icmp eq i32 %tid, 0
  br i1 %lead, label %store, label %done
store:
  %cta64 = zext i32 %cta to i64
  %q = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %cta64
  store i32 %total, ptr addrspace(1) %q, align 4
  br label %done
done:
  ret void
}

; or_break: the block leaves the loop when __syncthreads_or says so (CTA-uniform)
define ptx_kernel void @or_break(ptr addrspace(1) noalias readonly %in, ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %next ]
  %row = mul i32 %cta, %n
  %row2 = add i32 %row, %i
  %base = shl i32 %row2, 8
  %idx = add i32 %base, %tid
  %idx64 = zext i32 %idx to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %idx64
  %v = load i32, ptr addrspace(1) %p, align 4
  %neg = icmp slt i32 %v, 0
  %seen = call i1 @llvm.nvvm.barrier.cta.red.or.aligned.all(i32 0, i1 %neg)
  br i1 %seen, label %found, label %next
next:
  %i1 = add nuw nsw i32 %i, 1
  %more = icmp slt i32 %i1, %n
  br i1 %more, label %loop, label %found
found:
  %at = phi i32 [ %i, %loop ], [ -1, %next ]
  %lead = icmp eq i32 %tid, 0
  br i1 %lead, label %store, label %done
store:
  %cta64 = zext i32 %cta to i64
  %q = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %cta64
  store i32 %at, ptr addrspace(1) %q, align 4
  br label %done
done:
  ret void
}

; nc_bounds: tile bounds from read-only memory (ld.global.nc in the lowered PTX)
define ptx_kernel void @nc_bounds(ptr addrspace(1) noalias readonly %in, ptr addrspace(1) noalias readonly %offs,
                                  ptr addrspace(1) noalias %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %cta64 = zext i32 %cta to i64
  %pb = getelementptr inbounds i32, ptr addrspace(1) %offs, i64 %cta64
  %beg = load i32, ptr addrspace(1) %pb, align 4
  %pe = getelementptr inbounds i32, ptr addrspace(1) %pb, i64 1
  %end = load i32, ptr addrspace(1) %pe, align 4
  %any = icmp slt i32 %beg, %end
  br i1 %any, label %loop, label %tail
loop:
  %base = phi i32 [ %beg, %entry ], [ %base1, %loop ]
  %tot = phi i32 [ 0, %entry ], [ %tot1, %loop ]
  %i = add i32 %base, %tid
  %i64 = sext i32 %i to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %i64
  %v = load i32, ptr addrspace(1) %p, align 4
  %pos = icmp sgt i32 %v, 0
  %inr = icmp slt i32 %i, %end
  %vote = and i1 %pos, %inr
  %c = call i32 @llvm.nvvm.barrier.cta.red.popc.aligned.all(i32 0, i1 %vote)
  %tot1 = add i32 %tot, %c
  %base1 = add i32 %base, 256
  %more = icmp slt i32 %base1, %end
  br i1 %more, label %loop, label %tail
tail:
  %total = phi i32 [ 0, %entry ], [ %tot1, %loop ]
  %lead = icmp eq i32 %tid, 0
  br i1 %lead, label %store, label %done
store:
  %q = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %cta64
  store i32 %total, ptr addrspace(1) %q, align 4
  br label %done
done:
  ret void
}

; early_return: if (i >= n) return; before __syncthreads_count: must stay refused
define ptx_kernel void @early_return(ptr addrspace(1) noalias readonly %in, ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b = mul i32 %cta, %ntid
  %i = add i32 %b, %tid
  %out_of = icmp sge i32 %i, %n
  br i1 %out_of, label %done, label %work
work:
  %i64 = zext i32 %i to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %i64
  %v = load i32, ptr addrspace(1) %p, align 4
  %pos = icmp sgt i32 %v, 0
  %c = call i32 @llvm.nvvm.barrier.cta.red.popc.aligned.all(i32 0, i1 %pos)
  %q = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %i64
  store i32 %c, ptr addrspace(1) %q, align 4
  br label %done
done:
  ret void
}

; thread_loop: a thread-dependent loop exit back to __syncthreads_and: must stay refused
define ptx_kernel void @thread_loop(ptr addrspace(1) noalias readonly %in, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %ok = phi i1 [ true, %entry ], [ %all, %loop ]
  %i64 = zext i32 %i to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %i64
  %v = load i32, ptr addrspace(1) %p, align 4
  %pos = icmp sgt i32 %v, 0
  %all = call i1 @llvm.nvvm.barrier.cta.red.and.aligned.all(i32 0, i1 %pos)
  %i1 = add nuw nsw i32 %i, 1
  %more = icmp ult i32 %i1, %tid
  br i1 %more, label %loop, label %done
done:
  %tid64 = zext i32 %tid to i64
  %q = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %tid64
  %r = zext i1 %all to i32
  store i32 %r, ptr addrspace(1) %q, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.barrier.cta.red.popc.aligned.all(i32, i1)
declare i1 @llvm.nvvm.barrier.cta.red.or.aligned.all(i32, i1)
declare i1 @llvm.nvvm.barrier.cta.red.and.aligned.all(i32, i1)
