; Module-scope data and sm_90 cluster features:
;  - addrspace(4) constants and addrspace(1) globals with initializers
;    (arrays, a string, a pointer initializer, an externally visible and an
;    internal global);
;  - a kernel with "nvvm.cluster_dim" (-> .reqnctapercluster/.explicitcluster),
;    %cluster_ctarank / %cluster_nctarank, mapa (distributed shared memory)
;    and barrier.cluster.arrive/wait;
;  - the legacy llvm.nvvm.barrier0 spelling, which LLVM 22 auto-upgrades.
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@coeffs = internal addrspace(4) constant [4 x float] [float 1.0, float -0.5, float 2.5e-1, float 0x3FB99999A0000000], align 16
@lut = addrspace(4) externally_initialized global [8 x i16] [i16 0, i16 1, i16 4, i16 9, i16 16, i16 25, i16 36, i16 -1], align 2
@message = internal addrspace(1) constant [12 x i8] c"tidal\09ptx\0A\00\00", align 1
@counter = addrspace(1) global i32 7, align 4
@counter_ptr = addrspace(1) global ptr addrspacecast (ptr addrspace(1) @counter to ptr), align 8
@bytes = internal addrspace(1) global [64 x i8] zeroinitializer, align 16

@cl_smem = internal addrspace(3) global [128 x i32] undef, align 4

define ptx_kernel void @use_globals(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %k = and i32 %tid, 3
  %k64 = zext i32 %k to i64
  %cp = getelementptr inbounds [4 x float], ptr addrspace(4) @coeffs, i64 0, i64 %k64
  %c = load float, ptr addrspace(4) %cp, align 4
  %j = and i32 %tid, 7
  %j64 = zext i32 %j to i64
  %lp = getelementptr inbounds [8 x i16], ptr addrspace(4) @lut, i64 0, i64 %j64
  %l = load i16, ptr addrspace(4) %lp, align 2
  %l32 = sext i16 %l to i32
  %mp = getelementptr inbounds [12 x i8], ptr addrspace(1) @message, i64 0, i64 %j64
  %m = load i8, ptr addrspace(1) %mp, align 1
  %m32 = zext i8 %m to i32
  %gp = load ptr, ptr addrspace(1) @counter_ptr, align 8
  %old = atomicrmw add ptr %gp, i32 1 monotonic, align 4
  %bp = getelementptr inbounds [64 x i8], ptr addrspace(1) @bytes, i64 0, i64 %j64
  store i8 %m, ptr addrspace(1) %bp, align 1
  call void @llvm.nvvm.barrier0()
  %s0 = add i32 %l32, %m32
  %s1 = add i32 %s0, %old
  %sf = sitofp i32 %s1 to float
  %r = fmul float %sf, %c
  %t64 = zext i32 %tid to i64
  %op = getelementptr inbounds float, ptr addrspace(1) %out, i64 %t64
  store float %r, ptr addrspace(1) %op, align 4
  ret void
}

define ptx_kernel void @cluster_exchange(ptr addrspace(1) %out) "nvvm.cluster_dim"="2,1,1" "nvvm.maxntid"="128,1,1" {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %rank = call i32 @llvm.nvvm.read.ptx.sreg.cluster.ctarank()
  %nranks = call i32 @llvm.nvvm.read.ptx.sreg.cluster.nctarank()
  %t64 = zext i32 %tid to i64
  %sp = getelementptr inbounds [128 x i32], ptr addrspace(3) @cl_smem, i64 0, i64 %t64
  %v = mul i32 %rank, 1000
  %v2 = add i32 %v, %tid
  store i32 %v2, ptr addrspace(3) %sp, align 4
  call void @llvm.nvvm.barrier.cluster.arrive()
  call void @llvm.nvvm.barrier.cluster.wait()
  %r1 = add i32 %rank, 1
  %peer = urem i32 %r1, %nranks
  %remote = call ptr addrspace(7) @llvm.nvvm.mapa.shared.cluster(ptr addrspace(3) %sp, i32 %peer)
  %rv = load i32, ptr addrspace(7) %remote, align 4
  call void @llvm.nvvm.barrier.cluster.arrive()
  call void @llvm.nvvm.barrier.cluster.wait()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b = mul i32 %ctaid, %ntid
  %g = add i32 %b, %tid
  %g64 = zext i32 %g to i64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %g64
  store i32 %rv, ptr addrspace(1) %op, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.cluster.ctarank()
declare i32 @llvm.nvvm.read.ptx.sreg.cluster.nctarank()
declare void @llvm.nvvm.barrier0()
declare void @llvm.nvvm.barrier.cluster.arrive()
declare void @llvm.nvvm.barrier.cluster.wait()
declare ptr addrspace(7) @llvm.nvvm.mapa.shared.cluster(ptr addrspace(3), i32)
