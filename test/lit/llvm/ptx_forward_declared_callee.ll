; RUN: tidal-opt %s --emit=ptx -p tidal --report -o /dev/null | FileCheck %s
;
; LLVM declares a .func before the kernel that calls it and defines it after.
; The PTX pass used to match the call to the body-less declaration, see no
; %ctaid read in the callee and rewrite the kernel, whose callee then read the
; physical %ctaid; it now looks up the definition (passes/tidal_facts.c,
; fn_named; test/lit/tidal/refuse_callee_declared_first.ptx).

target triple = "nvptx64-nvidia-cuda"

; CHECK: refused   k (line {{[0-9]+}}): callee-reads-ctaid
define ptx_kernel void @k(ptr addrspace(1) %out) {
  %r = call i32 @block()
  store i32 %r, ptr addrspace(1) %out, align 4
  ret void
}

define internal i32 @block() noinline {
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  ret i32 %b
}
