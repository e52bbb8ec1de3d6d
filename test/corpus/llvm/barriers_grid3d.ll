; Named/counted barriers and barrier reductions with their LLVM 21+ intrinsic
; names, plus 3D grid special registers (ctaid/ntid/nctaid .y/.z, tid.y/.z),
; %laneid/%warpid, clock64 and globaltimer reads.
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @grid3d_ids(ptr addrspace(1) %out) "nvvm.reqntid"="8,8,4" {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %tz = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()
  %nx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %nz = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %bz = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %gx = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %gy = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()
  %gz = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()
  ; block = bx + gx*(by + gy*bz)
  %t0 = mul i32 %gy, %bz
  %t1 = add i32 %by, %t0
  %t2 = mul i32 %gx, %t1
  %block = add i32 %bx, %t2
  ; thread = tx + nx*(ty + ny*tz)
  %u0 = mul i32 %ny, %tz
  %u1 = add i32 %ty, %u0
  %u2 = mul i32 %nx, %u1
  %thread = add i32 %tx, %u2
  %per0 = mul i32 %nx, %ny
  %per = mul i32 %per0, %nz
  %lin0 = mul i32 %block, %per
  %lin = add i32 %lin0, %thread
  %lin64 = zext i32 %lin to i64
  %total0 = mul i32 %gx, %gy
  %total = mul i32 %total0, %gz
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %lin64
  store i32 %total, ptr addrspace(1) %p, align 4
  ret void
}

define ptx_kernel void @named_barriers(ptr addrspace(1) %data, ptr addrspace(1) %stats) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %tid to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %data, i64 %t64
  %v = load i32, ptr addrspace(1) %p, align 4
  %lo = icmp ult i32 %tid, 64
  br i1 %lo, label %producer, label %consumer

producer:
  %v1 = add i32 %v, 1
  store i32 %v1, ptr addrspace(1) %p, align 4
  call void @llvm.nvvm.barrier.cta.arrive.aligned.count(i32 1, i32 128)
  br label %join

consumer:
  call void @llvm.nvvm.barrier.cta.sync.aligned.count(i32 1, i32 128)
  %v2 = mul i32 %v, 3
  store i32 %v2, ptr addrspace(1) %p, align 4
  br label %join

join:
  call void @llvm.nvvm.barrier.cta.sync.all(i32 0)
  %pos = icmp sgt i32 %v, 0
  %cnt = call i32 @llvm.nvvm.barrier.cta.red.popc.aligned.all(i32 0, i1 %pos)
  %all = call i1 @llvm.nvvm.barrier.cta.red.and.aligned.all(i32 0, i1 %pos)
  %any = call i1 @llvm.nvvm.barrier.cta.red.or.aligned.all(i32 0, i1 %pos)
  %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
  %warp = call i32 @llvm.nvvm.read.ptx.sreg.warpid()
  %c0 = call i64 @llvm.nvvm.read.ptx.sreg.clock64()
  %gt = call i64 @llvm.nvvm.read.ptx.sreg.globaltimer()
  %is0 = icmp eq i32 %tid, 0
  br i1 %is0, label %write, label %exit

write:
  %alli = zext i1 %all to i32
  %anyi = zext i1 %any to i32
  %s1 = getelementptr inbounds i32, ptr addrspace(1) %stats, i64 1
  %s2 = getelementptr inbounds i32, ptr addrspace(1) %stats, i64 2
  %s3 = getelementptr inbounds i32, ptr addrspace(1) %stats, i64 3
  store i32 %cnt, ptr addrspace(1) %stats, align 4
  store i32 %alli, ptr addrspace(1) %s1, align 4
  store i32 %anyi, ptr addrspace(1) %s2, align 4
  %lw = add i32 %lane, %warp
  store i32 %lw, ptr addrspace(1) %s3, align 4
  %dt = add i64 %c0, %gt
  %s4 = getelementptr inbounds i64, ptr addrspace(1) %stats, i64 2
  store i64 %dt, ptr addrspace(1) %s4, align 8
  br label %exit

exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
declare i32 @llvm.nvvm.read.ptx.sreg.warpid()
declare i64 @llvm.nvvm.read.ptx.sreg.clock64()
declare i64 @llvm.nvvm.read.ptx.sreg.globaltimer()
declare void @llvm.nvvm.barrier.cta.arrive.aligned.count(i32, i32)
declare void @llvm.nvvm.barrier.cta.sync.aligned.count(i32, i32)
declare void @llvm.nvvm.barrier.cta.sync.all(i32)
declare i32 @llvm.nvvm.barrier.cta.red.popc.aligned.all(i32, i1)
declare i1 @llvm.nvvm.barrier.cta.red.and.aligned.all(i32, i1)
declare i1 @llvm.nvvm.barrier.cta.red.or.aligned.all(i32, i1)
