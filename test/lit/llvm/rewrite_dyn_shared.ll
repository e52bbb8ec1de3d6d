; RUN: tidal-opt %s -p tidal --report -o %t.ll | FileCheck %s --check-prefix=REPORT
; RUN: FileCheck %s < %t.ll
; RUN: llc -march=nvptx64 -mcpu=sm_90a %t.ll -o %t.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; RUN: llc -march=nvptx64 -mcpu=sm_90a %s -o %t.orig.ptx
; RUN: %if ptxas %{ ptxas -arch=sm_90a %t.ptx -o /dev/null %}
; RUN: %if ptxas %{ python3 %S/../tidal/Inputs/ptxas_smem.py input=%t.orig.ptx rewritten=%t.ptx | FileCheck %s --check-prefix=SMEM %}
;
; Dynamic shared memory starts after the static variables, which ptxas pads to
; the module's extern alignment. As in the PTX pass, the clone keeps the shared
; words in the tail of its dynamic shared memory, from an extern array of its
; own (@rotate__tidal_dsh, 8-aligned: the dynamic base keeps the module's alignment) at
; tidal_launch.sh_off (+56), after checking that the launch's dynamic shared
; memory has room for them; so its static shared memory is the original's
; (SMEM). The original entry of a module with dynamic shared memory stays
; verbatim (a static @__tidal_sh there would move the dynamic base), and there
; is no @__tidal_sh at all.

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@dyn = external addrspace(3) global [0 x i32], align 16
@stat = internal addrspace(3) global [100 x i32] undef, align 4

; REPORT: {{.*}}rewrite_dyn_shared.ll: 1 kernels, 1 rewritten, 0 refused
; REPORT-NEXT: rewritten rotate (line {{[0-9]+}}): convergent-exits, 0 registers added, barrier between logical blocks, original entry verbatim (dynamic shared memory: no case b)

; CHECK-NOT: @__tidal_sh =
; CHECK: @rotate__tidal_dsh = external addrspace(3) global [0 x i8], align 8
; CHECK-NOT: @__tidal_sh =
; the original entry as it was
; CHECK-LABEL: define ptx_kernel void @rotate(
; CHECK-NEXT:  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
; CHECK-NOT:   tdl
; CHECK:       ret void
; CHECK-NEXT:  }
; the clone: the words at @rotate__tidal_dsh + sh_off are the snippets' `sh` operand
; CHECK-LABEL: define ptx_kernel void @rotate__tidal_reshaped(
; CHECK:       br i1 {{.*}}, label %tdl.trap, label %tdl.values
; CHECK:       [[OFFP:%.+]] = getelementptr i8, ptr %__tidal_launch, i64 56
; CHECK-NEXT:  %tdl.sh.off = load i32, ptr [[OFFP]], align 4
; CHECK-NEXT:  [[OFF:%.+]] = zext i32 %tdl.sh.off to i64
; CHECK-NEXT:  [[W:%.+]] = getelementptr i8, ptr addrspace(3) @rotate__tidal_dsh, i64 [[OFF]]
; CHECK-NEXT:  %tdl.sh = ptrtoint ptr addrspace(3) [[W]] to i64
; CHECK:       %tdl.b0.enter = call i32 asm sideeffect {{.*}}, i64 %tdl.sh)
; the chunk is published there too
; CHECK:       store i32 %tdl.b0.new, ptr addrspace(3) %tdl.sh.b0, align 4
; no check of sh_off against the dynamic shared size (the runtime sizes every clone launch)
; CHECK-NOT:   tdl.smem
; CHECK-NOT:   dynamic_smem_size
; PTX-NOT: __tidal_sh[
; PTX: .extern .shared .align 16 .b8 dyn[];
; PTX: .extern .shared .align 8 .b8 rotate__tidal_dsh[];
; PTX-NOT: __tidal_sh[
; PTX-NOT: %dynamic_smem_size
; PTX: mov.b64 {{%rd[0-9]+}}, rotate__tidal_dsh;
; 400 bytes of static variables, padded to 16: 400
; SMEM:      input rotate [[S:400]]
; SMEM-NEXT: rewritten rotate [[S]]
; SMEM-NEXT: rewritten rotate__tidal_reshaped [[S]]
define ptx_kernel void @rotate(ptr addrspace(1) %out) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %t64 = zext i32 %t to i64
  %p = getelementptr inbounds [0 x i32], ptr addrspace(3) @dyn, i64 0, i64 %t64
  store i32 %b, ptr addrspace(3) %p, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %v0 = load i32, ptr addrspace(3) @dyn, align 16
  %s = getelementptr inbounds [100 x i32], ptr addrspace(3) @stat, i64 0, i64 %t64
  store i32 %v0, ptr addrspace(3) %s, align 4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %v = load i32, ptr addrspace(3) @stat, align 4
  %o = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %t64
  store i32 %v, ptr addrspace(1) %o, align 4
  ret void
}
