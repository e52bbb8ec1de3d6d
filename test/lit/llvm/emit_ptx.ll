; RUN: tidal-opt %s --emit=ptx | FileCheck %s --check-prefix=PLAIN
; RUN: tidal-opt %s --emit=ptx --arch=sm_90 | FileCheck %s --check-prefix=SM90
; RUN: tidal-opt %s --emit=ptx --arch sm_90a -p tidal --report -o %t.ptx | FileCheck %s --check-prefix=REPORT
; RUN: FileCheck %s < %t.ptx
; RUN: %if ptxas %{ ptxas -arch=sm_90a %t.ptx -o /dev/null %}
; RUN: llvm-as %s -o %t.bc
; RUN: tidal-opt %t.bc --emit=ptx -p tidal -o %t2.ptx
; RUN: cmp %t.ptx %t2.ptx
; RUN: tidal-opt %s --emit=ptx -p tidal --report=json -o /dev/null | FileCheck %s --check-prefix=JSON
; JSON: {"file": "{{.*}}emit_ptx.ll", "note": "lowered to PTX by NVPTX; line numbers are of that PTX, which tidal-opt --emit=ptx without -p prints", "kernels": [
; The line given is the .entry's line in the PTX that --emit=ptx prints.
; RUN: tidal-opt %s --emit=ptx --arch sm_90a > %t.lowered.ptx
; RUN: tidal-opt %s --emit=ptx --arch sm_90a -p tidal --report -o /dev/null | sed -n 's/.*rewritten saxpy (line \([0-9]*\)).*/\1/p' > %t.line
; RUN: sed 's/$/p/' %t.line > %t.sed
; RUN: sed -n -f %t.sed %t.lowered.ptx | grep -q '.entry saxpy('
;
; --emit=ptx lowers IR (text or bitcode) with the NVPTX target and then works
; on that PTX exactly as on a .ptx input: -p tidal is the PTX transform. LLVM
; 22 writes PTX 9.0 for sm_90a with +ptx90 (tidal's default when the module
; names no PTX version) and keeps the kernel names.

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; PLAIN:      .version 9.0
; PLAIN-NEXT: .target sm_90a
; PLAIN-NEXT: .address_size 64
; PLAIN:      .visible .entry saxpy(
; PLAIN-NOT:  __tidal
; SM90:       .target sm_90{{$}}

; The report names the IR file, and says its line numbers are of the lowered PTX.
; REPORT: {{.*}}emit_ptx.ll (lowered to PTX by NVPTX; line numbers are of that PTX, which tidal-opt --emit=ptx without -p prints): 1 kernels, 1 rewritten, 0 refused
; REPORT-NEXT: rewritten saxpy (line {{[0-9]+}}): no-barriers, {{[0-9]+}} registers added

; No __tidal_ctl without case b: a module-scope .const slows every kernel of the module.
; CHECK-NOT:   __tidal_ctl
; CHECK:       .weak .global .align 4 .u32 __tidal_rewritten_v{{[0-9]+}} = 1;
; CHECK-LABEL: .visible .entry saxpy(
; CHECK-NOT:   %tdl_
; CHECK-LABEL: .visible .entry saxpy__tidal_reshaped(
; CHECK:       .param .align 8 .b8 __tidal_launch[{{[0-9]+}}]
; CHECK:       ld.param.u64 {{.*}}%tdl_ctl, [__tidal_launch];
define ptx_kernel void @saxpy(i32 %n, float %a, ptr addrspace(1) %x, ptr addrspace(1) %y) {
entry:
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bd = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = mul i32 %bx, %bd
  %i = add i32 %b, %tx
  %in = icmp slt i32 %i, %n
  br i1 %in, label %body, label %done

body:
  %i64 = sext i32 %i to i64
  %px = getelementptr inbounds float, ptr addrspace(1) %x, i64 %i64
  %py = getelementptr inbounds float, ptr addrspace(1) %y, i64 %i64
  %vx = load float, ptr addrspace(1) %px, align 4
  %vy = load float, ptr addrspace(1) %py, align 4
  %m = fmul float %a, %vx
  %s = fadd float %m, %vy
  store float %s, ptr addrspace(1) %py, align 4
  br label %done

done:
  ret void
}
