; RUN: tidal-opt %s -p tidal --report -o %t.ll | FileCheck %s --check-prefix=REPORT
; RUN: FileCheck %s < %t.ll
; RUN: opt -passes=verify %t.ll -disable-output
; RUN: llc -march=nvptx64 -mcpu=sm_90a %t.ll -o %t.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; RUN: grep -c 'tdl_xp<4>' %t.ptx | FileCheck %s --check-prefix=COUNT
; RUN: %if ptxas %{ ptxas -arch=sm_90a %t.ptx -o /dev/null %}
; RUN: tidal-opt %s -p tidal --emit=bc -o %t.bc
; RUN: llvm-dis %t.bc -o - | FileCheck %s
; The protocol is the snippets' alone: outside their asm text, no atomics, fences or sleeps.
; RUN: sed -e 's/asm sideeffect "[^"]*"/asm sideeffect "..."/' %t.ll | not grep -E 'atomic|cmpxchg|fence|nanosleep'
;
; The tidal transform at IR level (--emit=llvm, the default for IR input) is the PTX
; pass's skeleton (passes/tidal_code.c) around the protocol's snippets
; (passes/tidal_protocol.c) as inline asm: the kernel keeps its name and parameters,
; runs a verbatim copy of its body when @__tidal_ctl is 0 or the grid is too large
; (launch case a); else the launch values, then either the static fast path (a STATIC
; launch in epoch mode: every thread takes its own chunk, the leader STARTs it, no
; barrier) or the leader's ENTER and b0 published through the shared words at one barrier,
; the logical blocks of the chunk (ctaid/nctaid reads become the logical ids, `ret`
; goes to the loop latch), the launch values again and the leader's CLAIM (after a
; fast chunk with no tickets, the block exits instead), and at the end the leader's
; LEAVE. The clone @K__tidal_reshaped takes a byval tidal_launch (64 bytes). The
; shared words are @__tidal_sh in K (case b: its launcher adds no dynamic bytes) and,
; in the clone, @K__tidal_dsh (its own extern array: the dynamic base) +
; tidal_launch.sh_off: the tail of the dynamic shared memory the runtime adds for them.

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@tile = internal addrspace(3) global [128 x i32] undef, align 4

; REPORT: {{.*}}rewrite_ir.ll: 2 kernels, 2 rewritten, 0 refused
; REPORT-NEXT: rewritten guarded (line [[#@LINE+1]]): no-barriers, 0 registers added
define ptx_kernel void @guarded(ptr addrspace(1) %out, i32 %n) {
entry:
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %nb = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %base = shl i32 %bx, 7
  %i = add i32 %base, %tx
  %in = icmp slt i32 %i, %n
  br i1 %in, label %store, label %done

store:
  %i64 = sext i32 %i to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %i64
  store i32 %nb, ptr addrspace(1) %p, align 4
  br label %done

done:
  ret void
}

; REPORT-NEXT: rewritten reverse (line [[#@LINE+1]]): convergent-exits, 0 registers added, barrier between logical blocks
define ptx_kernel void @reverse(ptr addrspace(1) %buf) {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %row = shl i32 %by, 7
  %g = add i32 %row, %tx
  %g64 = zext i32 %g to i64
  %src = getelementptr inbounds i32, ptr addrspace(1) %buf, i64 %g64
  %v = load i32, ptr addrspace(1) %src, align 4
  %t64 = zext i32 %tx to i64
  %s = getelementptr inbounds [128 x i32], ptr addrspace(3) @tile, i64 0, i64 %t64
  store i32 %v, ptr addrspace(3) %s, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %r = sub i32 127, %tx
  %r64 = zext i32 %r to i64
  %s2 = getelementptr inbounds [128 x i32], ptr addrspace(3) @tile, i64 0, i64 %r64
  %w = load i32, ptr addrspace(3) %s2, align 4
  store i32 %w, ptr addrspace(1) %src, align 4
  ret void
}

; the module globals of abi/tidal_abi.h, __tidal_sh (TIDAL_SH_BYTES, align 8) and the
; clones' extern arrays K__tidal_dsh
; CHECK-DAG: @__tidal_ctl = weak addrspace(4) externally_initialized global i64 0, align 8
; CHECK-DAG: @__tidal_rewritten_v5 = weak addrspace(1) global [2 x i32] [i32 1, i32 1], align 4
; per clone, its parameter count as the size of K__tidal_nparams (the runtime reads it)
; CHECK-DAG: @guarded__tidal_nparams = weak addrspace(1) global [3 x i8] zeroinitializer, align 1
; CHECK-DAG: @reverse__tidal_nparams = weak addrspace(1) global [2 x i8] zeroinitializer, align 1
; CHECK-DAG: %struct.tidal_launch = type { i64, [3 x i32], i32, i32, i32, i32, i32, i64, i64, i32, i32 }
; CHECK-DAG: @__tidal_sh = internal addrspace(3) global [24 x i8] undef, align 8
; CHECK-DAG: @guarded__tidal_dsh = external addrspace(3) global [0 x i8], align 8
; CHECK-DAG: @reverse__tidal_dsh = external addrspace(3) global [0 x i8], align 8

; CHECK-LABEL: define ptx_kernel void @guarded(ptr addrspace(1) %out, i32 %n) {
; CHECK-NEXT:  tdl.entry:
; CHECK-NEXT:    %tdl.ctl0 = load i64, ptr addrspace(4) @__tidal_ctl, align 8
; CHECK-NEXT:    [[DIRECT:%[0-9]+]] = icmp eq i64 %tdl.ctl0, 0
; CHECK-NEXT:    br i1 [[DIRECT]], label %[[COPY:.+]], label %tdl.grid
; the rewritten body: logical ids, ret → the latch
; CHECK:       entry:
; CHECK-NEXT:    %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
; CHECK-NEXT:    %base = shl i32 %tdl.ctaid.x, 7
; CHECK:         store i32 %tdl.nctaid.x, ptr addrspace(1) %p, align 4
; CHECK:       done:
; CHECK-NEXT:    br label %tdl.next
; the verbatim copy (case a): physical ids, a real ret
; CHECK:       [[COPY]]:
; CHECK-NEXT:    {{%.+}} = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
; CHECK-NEXT:    [[NB:%.+]] = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
; CHECK:         store i32 [[NB]]
; CHECK:         ret void
; a grid of TIDAL_MAX_LOGICAL blocks or more runs the copy too
; CHECK:       tdl.grid:
; CHECK:         [[BIG:%[0-9]+]] = icmp uge i64 {{%[0-9]+}}, 16777216
; CHECK-NEXT:    br i1 [[BIG]], label %[[COPY]], label %tdl.values
; launch values of the original grid (probe mode: flags 28, key %gridid, base/epoch/slotix/hist 0)
; CHECK:       tdl.values:
; CHECK-NEXT:    %tdl.ctl = load i64, ptr addrspace(4) @__tidal_ctl, align 8
; CHECK:         %tdl.total = mul i32
; CHECK-NEXT:    [[C0:%[0-9]+]] = lshr i32 %tdl.total, 11
; CHECK:         %tdl.chunk = select i1 {{%[0-9]+}}, i32 {{%[0-9]+}}, i32 1
; %gridid is 64-bit; LLVM 22's llvm.nvvm.read.ptx.sreg.gridid is i32: inline asm
; CHECK-NEXT:    %tdl.key = call i64 asm "mov.u64 $0, %gridid;", "=l"()
; CHECK-NEXT:    [[KZ:%[0-9]+]] = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
; CHECK:         %tdl.pid = add i32
; CHECK:         %tdl.leader = icmp eq i32 {{%.+}}, 0
; the fast path's test, (flags & 7) == STATIC, folds to false: flags 28 has no STATIC
; (and with it %tdl.once: a static worker without tickets)
; CHECK-NEXT:    {{%[0-9]+}} = icmp uge i32 0, %tdl.total
; CHECK-NEXT:    %tdl.once = and i1 false, {{%[0-9]+}}
; CHECK-NEXT:    br i1 false, label %tdl.fast.chunk, label %tdl.enter
; CHECK:       tdl.enter:
; CHECK-NEXT:    br i1 %tdl.leader, label %tdl.enter.leader, label %tdl.claimed
; ENTER, by the leader: its operands in the snippet's order (b0 out, early-clobber;
; ctl, key, flags, total, chunk, base, phys, pid, epoch, slotix, sh)
; CHECK:       tdl.enter.leader:
; CHECK-NEXT:    %tdl.b0.enter = call i32 asm sideeffect "{\0A{{.*}}tdl_probe{{.*}}}", "=&r,l,l,r,r,r,r,r,r,r,r,l,~{memory}"(i64 %tdl.ctl, i64 %tdl.key, i32 28, i32 %tdl.total, i32 %tdl.chunk, i32 0, i32 %tdl.total, i32 %tdl.pid, i32 0, i32 0, i64 ptrtoint (ptr addrspace(3) @__tidal_sh to i64)) #[[SNIPPET:[0-9]+]]
; CHECK-NEXT:    br label %tdl.publish
; after a chunk: the block is done when %tdl.once (never here), else the values
; again, then CLAIM by the leader (ctl, flags, total, chunk, base, phys, epoch, hist, sh)
; CHECK:       tdl.claim:
; CHECK-NEXT:    br i1 %tdl.once, label %tdl.exit, label %tdl.claim.go
; CHECK:       tdl.claim.go:
; CHECK-NEXT:    %tdl.claim.ctl = load i64, ptr addrspace(4) @__tidal_ctl, align 8
; CHECK:         br i1 %tdl.leader, label %tdl.claim.leader, label %tdl.claimed
; CHECK:       tdl.claim.leader:
; CHECK-NEXT:    %tdl.b0.claim = call i32 asm sideeffect "{\0A{{.*}}}", "=&r,l,r,r,r,r,r,r,l,l,~{memory}"(i64 %tdl.claim.ctl, i32 28, i32 %tdl.claim.total, i32 %tdl.claim.chunk, i32 0, i32 %tdl.claim.total, i32 0, i64 0, i64 ptrtoint (ptr addrspace(3) @__tidal_sh to i64)) #[[SNIPPET]]
; CHECK-NEXT:    br label %tdl.publish
; the leader publishes b0 in this round's word of __tidal_sh (offset 0 or 4)
; CHECK:       tdl.publish:
; CHECK:         %tdl.b0.new = phi i32 [ %tdl.b0.enter, %tdl.enter.leader ], [ %tdl.b0.claim, %tdl.claim.leader ]
; CHECK-NEXT:    [[OFF:%[0-9]+]] = select i1 [[ODD:%tdl.odd.a.[0-9]+]], i64 4, i64 0
; CHECK-NEXT:    [[W:%.+]] = getelementptr i8, ptr addrspace(3) @__tidal_sh, i64 [[OFF]]
; CHECK-NEXT:    store i32 %tdl.b0.new, ptr addrspace(3) [[W]], align 4
; CHECK-NEXT:    br label %tdl.claimed
; the one barrier per chunk; everyone reads b0, flips the parity
; CHECK:       tdl.claimed:
; CHECK:         [[TOTAL:%tdl.total.a.[0-9]+]] = phi i32 [ %tdl.total.a.0, %tdl.publish ], [ %tdl.claim.total, %tdl.claim.go ], [ %tdl.total, %tdl.enter ]
; CHECK:         [[ODD1:%tdl.odd.a.[0-9]+]] = phi i1 [ [[ODD]], %tdl.publish ], [ [[ODD2:%tdl.odd.a.[0-9]+]], %tdl.claim.go ], [ false, %tdl.enter ]
; CHECK-NEXT:    call void @llvm.nvvm.barrier.cta.sync.all(i32 0)
; CHECK-NEXT:    [[ROFF:%[0-9]+]] = select i1 [[ODD1]], i64 4, i64 0
; CHECK-NEXT:    [[R:%.+]] = getelementptr i8, ptr addrspace(3) @__tidal_sh, i64 [[ROFF]]
; CHECK-NEXT:    %tdl.b0 = load i32, ptr addrspace(3) [[R]], align 4
; CHECK-NEXT:    [[FLIP:%[0-9]+]] = xor i1 [[ODD1]], true
; CHECK-NEXT:    [[NONE:%[0-9]+]] = icmp uge i32 %tdl.b0, [[TOTAL]]
; CHECK-NEXT:    br i1 [[NONE]], label %tdl.depart, label %tdl.chunk.start
; the logical-block loop: entered from the fast path (its own chunk, parity still
; even) or after the barrier (parity flipped)
; CHECK:       tdl.logical:
; CHECK-NEXT:    %tdl.lin.a.0 = phi i32 [ %tdl.b0.fast, %tdl.started ], [ {{%[0-9]+}}, %tdl.next.block ], [ %tdl.b0, %tdl.chunk.start ]
; CHECK-NEXT:    %tdl.b1.a.0 = phi i32
; CHECK-NEXT:    [[ODD2]] = phi i1 [ false, %tdl.started ], [ [[ODD2]], %tdl.next.block ], [ [[FLIP]], %tdl.chunk.start ]
; CHECK:       tdl.body:
; CHECK-NEXT:    %tdl.ctaid.x = phi i32
; CHECK:         br label %entry
; CHECK:       tdl.next:
; no barrier between logical blocks: no shared memory, barriers or warp collectives
; CHECK-NOT:     barrier
; CHECK:       tdl.depart:
; CHECK-NEXT:    br i1 %tdl.leader, label %tdl.depart.leader, label %tdl.exit
; LEAVE, by the leader, with the values of the last derivation (flags, phys, pid, sh)
; CHECK:       tdl.depart.leader:
; CHECK-NEXT:    call void asm sideeffect "{\0A{{.*}}}", "r,r,r,l,~{memory}"(i32 28, i32 %tdl.phys.a.{{[0-9]+}}, i32 %tdl.pid.a.{{[0-9]+}}, i64 ptrtoint (ptr addrspace(3) @__tidal_sh to i64)) #[[SNIPPET]]
; CHECK-NEXT:    ret void
; the non-leaders at the end, and the fast path's whole block (no chunk, no tickets)
; CHECK:       tdl.exit: ; preds = %tdl.depart, %tdl.claim, %tdl.fast.chunk
; CHECK-NEXT:    ret void

; CHECK-LABEL: define ptx_kernel void @reverse(ptr addrspace(1) %buf) {
; the user's barrier (id 0) stays; tidal takes the lowest free id, 1
; CHECK:         call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
; CHECK:       tdl.claimed:
; CHECK:         call void @llvm.nvvm.barrier.cta.sync.all(i32 1)
; CHECK:       tdl.body:
; CHECK:         %tdl.ctaid.y = phi i32 [ 0, %tdl.logical ], [ {{%.+}}, %tdl.logical.nd ]
; CHECK:       tdl.next.block:
; CHECK-NEXT:    call void @llvm.nvvm.barrier.cta.sync.all(i32 1)

; the reshaped clones (case c): one more parameter, launch values from it
; CHECK-LABEL: define ptx_kernel void @guarded__tidal_reshaped(ptr addrspace(1) %out, i32 %n, ptr noundef byval(%struct.tidal_launch) align 8 %__tidal_launch) {
; CHECK-NEXT:  tdl.entry:
; CHECK-NEXT:    %tdl.part0 = load i64, ptr %__tidal_launch, align 8
; CHECK:         %tdl.ctl0 = select i1 {{%.+}}, i64 {{%.+}}, i64 %tdl.part0
; CHECK:       tdl.trap:
; CHECK-NEXT:    call void @llvm.trap()
; CHECK:       tdl.grid:
; CHECK:         icmp uge i64 {{%[0-9]+}}, 16777216
; CHECK-NEXT:    br i1 {{%[0-9]+}}, label %tdl.trap, label %tdl.values
; tidal_launch: chunk at 20, slot 24, epoch 28, flags 32, base 36, key 40 (| %gridid),
; sm_blocks 48 (the hist operand), sh_off 56 (the shared words: the sh operand)
; CHECK:       tdl.values:
; CHECK:         getelementptr i8, ptr %__tidal_launch, i64 20
; CHECK-NEXT:    %tdl.chunk.param = load i32
; CHECK-NEXT:    getelementptr i8, ptr %__tidal_launch, i64 24
; CHECK-NEXT:    %tdl.slotix = load i32
; CHECK-NEXT:    getelementptr i8, ptr %__tidal_launch, i64 28
; CHECK-NEXT:    %tdl.epoch = load i32
; CHECK-NEXT:    getelementptr i8, ptr %__tidal_launch, i64 32
; CHECK-NEXT:    %tdl.flags = load i32
; CHECK-NEXT:    getelementptr i8, ptr %__tidal_launch, i64 36
; CHECK-NEXT:    %tdl.base = load i32
; CHECK-NEXT:    getelementptr i8, ptr %__tidal_launch, i64 40
; CHECK-NEXT:    %tdl.key.param = load i64
; CHECK-NEXT:    %tdl.gridid = call i64 asm "mov.u64 $0, %gridid;", "=l"()
; CHECK-NEXT:    %tdl.key = or i64 %tdl.key.param, %tdl.gridid
; CHECK-NEXT:    getelementptr i8, ptr %__tidal_launch, i64 48
; CHECK-NEXT:    %tdl.hist = load i64
; chunk clamped to 1..TIDAL_MAX_CHUNK; phys: the launch's own grid
; CHECK:         %tdl.chunk = select i1 {{%.+}}, i32 {{%.+}}, i32 64
; CHECK:         %tdl.phys = mul i32
; CHECK:         getelementptr i8, ptr %__tidal_launch, i64 56
; CHECK-NEXT:    %tdl.sh.off = load i32
; CHECK-NEXT:    [[SHOFF:%[0-9]+]] = zext i32 %tdl.sh.off to i64
; CHECK-NEXT:    [[SHP:%[0-9]+]] = getelementptr i8, ptr addrspace(3) @guarded__tidal_dsh, i64 [[SHOFF]]
; CHECK-NEXT:    %tdl.sh = ptrtoint ptr addrspace(3) [[SHP]] to i64
; the static fast path: flags & (JOIN|STATIC|PROBE) == STATIC
; CHECK:         %tdl.leader = icmp eq i32 {{%.+}}, 0
; CHECK-NEXT:    [[FM:%[0-9]+]] = and i32 %tdl.flags, 7
; CHECK-NEXT:    %tdl.fast = icmp eq i32 [[FM]], 2
; a static worker of a launch without tickets (base >= total) runs its chunk and ends
; CHECK-NEXT:    [[NOT:%[0-9]+]] = icmp uge i32 %tdl.base, %tdl.total
; CHECK-NEXT:    %tdl.once = and i1 %tdl.fast, [[NOT]]
; CHECK-NEXT:    br i1 %tdl.fast, label %tdl.fast.chunk, label %tdl.enter
; every thread computes its own chunk; none: the whole block exits
; CHECK:       tdl.fast.chunk:
; CHECK-NEXT:    %tdl.b0.fast = mul i32 %tdl.pid, %tdl.first
; CHECK-NEXT:    [[FNONE:%[0-9]+]] = icmp uge i32 %tdl.b0.fast, %tdl.total
; CHECK-NEXT:    br i1 [[FNONE]], label %tdl.exit, label %tdl.start
; the leader STARTs the chunk unless there is nothing to count and no claim follows
; CHECK:       tdl.start:
; CHECK-NEXT:    [[CNT:%[0-9]+]] = and i32 %tdl.flags, 24
; CHECK-NEXT:    [[NOC:%[0-9]+]] = icmp eq i32 [[CNT]], 0
; CHECK-NEXT:    [[SIL:%[0-9]+]] = and i1 %tdl.once, [[NOC]]
; CHECK-NEXT:    [[LOUD:%[0-9]+]] = xor i1 [[SIL]], true
; CHECK-NEXT:    [[GO:%[0-9]+]] = and i1 %tdl.leader, [[LOUD]]
; CHECK-NEXT:    br i1 [[GO]], label %tdl.start.leader, label %tdl.started
; START, by the leader: no outputs, b0 an input (b0, ctl, flags, total, chunk, base,
; slotix, hist, sh)
; CHECK:       tdl.start.leader:
; CHECK-NEXT:    call void asm sideeffect "{\0A{{.*}}}", "r,l,r,r,r,r,r,l,l,~{memory}"(i32 %tdl.b0.fast, i64 %tdl.ctl, i32 %tdl.flags, i32 %tdl.total, i32 %tdl.first, i32 %tdl.base, i32 %tdl.slotix, i64 %tdl.hist, i64 %tdl.sh) #[[SNIPPET]]
; CHECK-NEXT:    br label %tdl.started
; straight to the logical blocks: no ENTER, no publish, no barrier
; CHECK:       tdl.started:
; CHECK-NOT:     call
; CHECK:         br label %tdl.logical
; CHECK:       tdl.enter.leader:
; CHECK-NEXT:    %tdl.b0.enter = call i32 asm sideeffect "{{.*}}"(i64 %tdl.ctl, i64 %tdl.key, i32 %tdl.flags, i32 %tdl.total, i32 %tdl.chunk, i32 %tdl.base, i32 %tdl.phys, i32 %tdl.pid, i32 %tdl.epoch, i32 %tdl.slotix, i64 %tdl.sh) #[[SNIPPET]]
; after a chunk: a fast worker in a launch without tickets (base >= total) exits with
; its whole block before anything else, no CLAIM or LEAVE; else the leader claims
; CHECK:       tdl.claim:
; CHECK-NEXT:    br i1 %tdl.once, label %tdl.exit, label %tdl.claim.go
; CHECK:       tdl.claim.go:
; CHECK:         %tdl.claim.hist = load i64
; CHECK:       tdl.claim.leader:
; CHECK-NEXT:    %tdl.b0.claim = call i32 asm sideeffect "{{.*}}"(i64 %tdl.claim.ctl, i32 %tdl.claim.flags, i32 %tdl.claim.total, i32 %tdl.claim.chunk, i32 %tdl.claim.base, i32 %tdl.claim.phys, i32 %tdl.claim.epoch, i64 %tdl.claim.hist, i64 %tdl.claim.sh) #[[SNIPPET]]
; CHECK:       tdl.claimed:
; CHECK:       tdl.logical:
; the clone re-reads the logical grid at each logical block
; CHECK:         getelementptr i8, ptr %__tidal_launch, i64 8
; CHECK-NEXT:    %tdl.nctaid.x = load i32
; CHECK:       tdl.depart.leader:
; CHECK-NEXT:    call void asm sideeffect "{{.*}}"(i32 %tdl.flags.a.{{[0-9]+}}, i32 %tdl.phys.a.{{[0-9]+}}, i32 %tdl.pid.a.{{[0-9]+}}, i64 %tdl.sh.a.{{[0-9]+}}) #[[SNIPPET]]
; no check of the shared words against the dynamic shared size (the runtime sizes the launch)
; CHECK-NOT:   tdl.smem:
; CHECK-LABEL: define ptx_kernel void @reverse__tidal_reshaped(ptr addrspace(1) %buf, ptr noundef byval(%struct.tidal_launch) align 8 %__tidal_launch) {

; The snippets stay where the skeleton puts them: once, between two barriers.
; CHECK: attributes #[[SNIPPET]] = { convergent noduplicate nounwind }

; Lowered: the snippets' own registers and labels, each in its { } scope, and the
; 64-byte tidal_launch parameter; the parameter counts as the PTX pass writes them.
; PTX:       .shared .align 8 .b8 __tidal_sh[24];
; PTX-DAG:   .weak .global .align 1 .b8 guarded__tidal_nparams[3];
; PTX-DAG:   .weak .global .align 1 .b8 reverse__tidal_nparams[2];
; PTX-LABEL: .visible .entry guarded(
; PTX:       mov.u64 %rd{{[0-9]+}}, %gridid;
; PTX:       // begin inline asm
; PTX-NEXT:  {
; PTX-NEXT:  .reg .pred {{.*}}%tdl_xp<4>;
; PTX:       tdl_probe:
; PTX:       }
; PTX-NEXT:  // end inline asm
; PTX-LABEL: .visible .entry guarded__tidal_reshaped(
; PTX:       .param .align 8 .b8 guarded__tidal_reshaped_param_2[64]
; Three snippets (enter, claim, leave) in each original entry, whose dead fast path
; llc drops, four (and start) in each clone, none duplicated by the backend:
; COUNT: 14
