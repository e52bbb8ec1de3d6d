; RUN: tidal-opt %s -p tidal --report -o %t.ll | FileCheck %s --check-prefix=REPORT
; RUN: FileCheck %s < %t.ll
; RUN: llc -march=nvptx64 -mcpu=sm_90a %t.ll -o %t.ptx
; RUN: %if ptxas %{ ptxas -arch=sm_90a %t.ptx -o /dev/null %}
; RUN: tidal-opt %s -p tidal --emit=bc -o %t.bc
; RUN: llvm-dis %t.bc -o - | FileCheck %s
;
; The tidal transform at IR level (--emit=llvm, the default for IR input):
; the kernel keeps its name and parameters, reads @__tidal_ctl, runs a verbatim
; copy of its body when that is 0 (launch case a), and otherwise claims
; logical blocks: ctaid/nctaid reads become the logical ids, `ret` goes to the
; loop latch. The clone @K__tidal_reshaped takes a byval tidal_launch.

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

; the module globals of runtime/tidal_abi.h
; CHECK-DAG: @__tidal_ctl = weak addrspace(4) externally_initialized global i64 0, align 8
; CHECK-DAG: @__tidal_rewritten_v{{[0-9]+}} = weak addrspace(1) global i32 1, align 4
; CHECK-DAG: %struct.tidal_launch = type { i64, [3 x i32], i32, i64, i32, i32 }
; CHECK-DAG: @__tidal_sh = internal addrspace(3) global [2 x i32] undef, align 4

; CHECK-LABEL: define ptx_kernel void @guarded(ptr addrspace(1) %out, i32 %n) {
; CHECK-NEXT:  tdl.entry:
; CHECK-NEXT:    [[CTL:%.+]] = load i64, ptr addrspace(4) @__tidal_ctl, align 8
; %gridid is 64-bit; LLVM 22's llvm.nvvm.read.ptx.sreg.gridid is i32: inline asm
; CHECK-NEXT:    %tdl.key = call i64 asm "mov.u64 $0, %gridid;", "=l"()
; CHECK-NEXT:    [[NX:%[0-9]+]] = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
; CHECK:         [[DIRECT:%[0-9]+]] = icmp eq i64 [[CTL]], 0
; CHECK-NEXT:    br i1 [[DIRECT]], label %[[COPY:.+]], label %tdl.grid
; the rewritten body: logical ids, ret → the latch
; CHECK:       entry:
; CHECK-NEXT:    %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
; CHECK-NEXT:    %base = shl i32 %tdl.ctaid.x, 7
; CHECK:         store i32 [[NX]], ptr addrspace(1) %p, align 4
; CHECK:       done:
; CHECK-NEXT:    br label %tdl.next
; the verbatim copy (case a): physical ids, a real ret
; CHECK:       [[COPY]]:
; CHECK-NEXT:    {{%.+}} = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
; CHECK-NEXT:    [[NB:%.+]] = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
; CHECK:         store i32 [[NB]]
; CHECK:         ret void
; slot by %gridid, gate on %smid
; CHECK:       tdl.common:
; CHECK:         %tdl.leader = icmp eq i32 {{%.+}}, 0
; CHECK-NEXT:    {{%.+}} = call i32 @llvm.nvvm.read.ptx.sreg.smid()
; CHECK:       tdl.lead:
; CHECK:         cmpxchg ptr addrspace(1) {{%.+}}, i64 0, i64 %tdl.key syncscope("device") acquire acquire
; CHECK:       tdl.sleep:
; CHECK-NEXT:    call void @llvm.nvvm.nanosleep(i32 1000)
; CHECK:       tdl.found:
; CHECK:         load atomic i64, ptr addrspace(1) {{%.+}} syncscope("device") monotonic, align 8
; CHECK:       tdl.claimed:
; CHECK:         call void @llvm.nvvm.barrier.cta.sync.all(i32 0)
; CHECK:       tdl.body:
; CHECK-NEXT:    %tdl.ctaid.x = phi i32
; CHECK:         br label %entry
; CHECK:       tdl.next:
; no barrier between logical blocks: no shared memory, barriers or warp collectives
; CHECK-NOT:     barrier
; CHECK:       tdl.depart.leader:
; CHECK:         atomicrmw add ptr addrspace(1) {{%.+}}, i32 1 syncscope("device") acq_rel
; CHECK:       tdl.reset.done:
; CHECK-NEXT:    fence syncscope("device") acq_rel
; CHECK:         store atomic i64 0, ptr addrspace(1) {{%.+}} syncscope("device") monotonic, align 8
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

; the reshaped clones (case c): one more parameter, grid from it
; CHECK-LABEL: define ptx_kernel void @guarded__tidal_reshaped(ptr addrspace(1) %out, i32 %n, ptr noundef byval(%struct.tidal_launch) align 8 %__tidal_launch) {
; CHECK:         %tdl.part = load i64, ptr %__tidal_launch, align 8
; CHECK:         %tdl.ctl = select i1 {{%.+}}, i64 {{%.+}}, i64 %tdl.part
; CHECK:       tdl.trap:
; CHECK-NEXT:    call void @llvm.trap()
; slot key and joining from the parameter (tidal_launch.key, .flags)
; CHECK:         %tdl.key = select i1 {{%.+}}, i64 %tdl.gridid, i64 %tdl.key.param
; CHECK:         %tdl.join = icmp ne i32 {{%.+}}, 0
; CHECK-LABEL: define ptx_kernel void @reverse__tidal_reshaped(ptr addrspace(1) %buf, ptr noundef byval(%struct.tidal_launch) align 8 %__tidal_launch) {
