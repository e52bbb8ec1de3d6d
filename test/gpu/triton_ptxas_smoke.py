# Triton 3.6 with TRITON_PTXAS_PATH=tidal-ptxas (on the GPU machine): the kernels
# Triton compiles are rewritten by tidal and, launched by Triton's own launcher
# with no runtime attached (launch case a), must give the same results.
# Usage: TRITON_PTXAS_PATH=.../tidal-ptxas python3 triton_ptxas_smoke.py
import os, sys, torch, triton, triton.language as tl

@triton.jit
def add_k(x, y, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B); m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)

@triton.jit
def softmax_k(x, o, stride, n, B: tl.constexpr):
    r = tl.program_id(0); c = tl.arange(0, B); m = c < n
    v = tl.load(x + r * stride + c, mask=m, other=-float('inf')); v = v - tl.max(v, 0); e = tl.exp(v)
    tl.store(o + r * stride + c, e / tl.sum(e, 0), mask=m)

@triton.jit
def mm_k(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0); pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM); rn = pn * BN + tl.arange(0, BN); rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * sam + (k + rk)[None, :] * sak, mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.)
        y = tl.load(b + (k + rk)[:, None] * sbk + rn[None, :] * sbn, mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.)
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))

fails = passes = 0
def check(ok, what):
    global fails, passes
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    passes += ok; fails += not ok

def rewritten(k):
    cubin = k.asm.get("cubin", b"")
    return b"__tidal_rewritten_v5" in cubin and b"__tidal_reshaped" in cubin

print("TRITON_PTXAS_PATH =", os.environ.get("TRITON_PTXAS_PATH"), "triton", triton.__version__, flush=True)
x = torch.randn(1 << 20, device="cuda"); y = torch.randn_like(x); o = torch.empty_like(x)
k = add_k[(triton.cdiv(x.numel(), 1024),)](x, y, o, x.numel(), B=1024)
check(torch.equal(o, x + y), "add: equal to torch")
check(rewritten(k), "add: cubin holds the tidal rewrite")
s = torch.randn(512, 1000, device="cuda"); so = torch.empty_like(s)
k = softmax_k[(512,)](s, so, s.stride(0), 1000, B=1024)
check(torch.allclose(so, torch.softmax(s, 1), atol=1e-6), "softmax: close to torch")
check(rewritten(k), "softmax: cubin holds the tidal rewrite")
A = torch.randn(512, 384, device="cuda", dtype=torch.float16); Bm = torch.randn(384, 256, device="cuda", dtype=torch.float16)
C = torch.empty(512, 256, device="cuda", dtype=torch.float16)
k = mm_k[(4, 4)](A, Bm, C, 512, 256, 384, A.stride(0), A.stride(1), Bm.stride(0), Bm.stride(1), C.stride(0), C.stride(1), BM=128, BN=64, BK=32)
err = (C.float() - A.float() @ Bm.float()).abs().max().item()
check(err < 0.5, "matmul (wgmma): max error %.4f" % err)
check(rewritten(k), "matmul: cubin holds the tidal rewrite")
torch.cuda.synchronize()
print("%d passed, %d failed" % (passes, fails))
sys.exit(1 if fails else 0)
