"""GPU test: Triton kernels run on a tidal partition through tidal.triton (test/gpu/runtime/run.sh).

    python3 triton_rt.py PARTITION      e.g. "tp:0-65" (local) or "be" (tidald)

Checks: outputs equal torch's (add, softmax, matmul); a kernel that records %smid per
program ran only on the partition's SMs; every module Triton loaded was attached. A GEMM
at Inductor's largest stage count (5) and one that fills the opt-in shared memory (Triton
sets the original's MAX_DYNAMIC to optin - static, which a clone with static protocol
words could never mirror) compute torch's results, and with the preload they run as the
reshaped clone (libtidal's launches_rewritten), never unmasked for their shared memory.
Prints PASS/FAIL lines like rt_app.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
os.environ.setdefault("TRITON_ALWAYS_COMPILE", "1")

import tidal.triton  # noqa: E402

part = sys.argv[1] if len(sys.argv) > 1 else "tp:0-65"
tidal.triton.enable(partition=part)

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

fails = 0


def result(name, ok, why=""):
    global fails
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, (": " + why) if why else ""), flush=True)
    fails += 0 if ok else 1


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


@triton.jit
def smid_kernel(out, spin):
    sm = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)
    i = 0
    acc = sm
    while i < spin:
        acc = acc * 3 + 1
        i += 1
    tl.store(out + tl.program_id(0), sm + (acc & 0) )


@triton.jit
def softmax_kernel(x, out, ncols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < ncols
    v = tl.load(x + row * ncols + offs, mask=m, other=-float("inf"))
    v = v - tl.max(v, 0)
    e = tl.exp(v)
    tl.store(out + row * ncols + offs, e / tl.sum(e, 0), mask=m)


@triton.jit
def matmul_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        av = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        bv = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(av, bv)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


dev = "cuda"
n = 1 << 22
x = torch.randn(n, device=dev)
y = torch.randn(n, device=dev)
o = torch.empty_like(x)
add_kernel[(triton.cdiv(n, 1024),)](x, y, o, n, BLOCK=1024)
torch.cuda.synchronize()
result("triton.add", torch.equal(o, x + y))

xs = torch.randn(4096, 1000, device=dev)
os_ = torch.empty_like(xs)
softmax_kernel[(4096,)](xs, os_, 1000, BLOCK=1024)
torch.cuda.synchronize()
result("triton.softmax", torch.allclose(os_, torch.softmax(xs, 1), atol=1e-6, rtol=1e-5))

a = torch.randn(1024, 512, device=dev, dtype=torch.float16)
b = torch.randn(512, 1024, device=dev, dtype=torch.float16)
c = torch.empty(1024, 1024, device=dev, dtype=torch.float16)
matmul_kernel[(1024 // 64, 1024 // 64)](a, b, c, 1024, 1024, 512, BM=64, BN=64, BK=32)
torch.cuda.synchronize()
ref = (a.float() @ b.float()).half()
result("triton.matmul", torch.allclose(c.float(), ref.float(), atol=1e-1, rtol=1e-2),
       "max err %.4f" % (c.float() - ref.float()).abs().max().item())

# GEMMs with large dynamic shared memory (num_stages: Triton 3.6 keeps num_stages - 2 tiles
# of A and B, 32 KiB each at 128x128x64 fp16): 5 (Inductor's largest), and the most that
# fits the device's opt-in limit per block
import ctypes  # noqa: E402

from tidal import _lib as _tl  # noqa: E402


def tidal_counters():
    st = _tl.Stats()
    tidal.triton._lib_obj.tidal_stats_get(None, ctypes.byref(st))
    return {k: int(getattr(st, k)) for k in _tl.STATS_COUNTERS}


optin = torch.cuda.get_device_properties(0).shared_memory_per_block_optin
casec = _tl.find_preloaded() is not None
a2 = torch.randn(2048, 1024, device=dev, dtype=torch.float16)
b2 = torch.randn(1024, 2048, device=dev, dtype=torch.float16)
ref2 = (a2.float() @ b2.float()).half()
top = next(s for s in range(16, 2, -1) if (s - 2) * 32768 <= optin)
for stages in (5, top):
    c2 = torch.empty(2048, 2048, device=dev, dtype=torch.float16)
    s0 = tidal_counters()
    while True:
        try:
            k = matmul_kernel[(2048 // 128, 2048 // 128)](a2, b2, c2, 2048, 2048, 1024, BM=128, BN=128, BK=64,
                                                         num_warps=8, num_stages=stages)
            break
        except triton.runtime.errors.OutOfResources:   # more than the device takes: one stage less
            stages -= 1
    torch.cuda.synchronize()
    s1 = tidal_counters()
    d = {n: s1[n] - s0[n] for n in ("launches_rewritten", "launches_unmasked", "launches_smem_full")}
    shared = k.metadata.shared
    ok = torch.allclose(c2.float(), ref2.float(), atol=2e-1, rtol=1e-2)
    if casec:
        ok = ok and d["launches_rewritten"] == 1 and d["launches_unmasked"] == 0
    result("triton.matmul_s%d" % stages, ok, "shared %d of %d, %s, max err %.4f" % (
        shared, optin, d, (c2.float() - ref2.float()).abs().max().item()))

nprog = 20000
sm = torch.full((nprog,), -1, device=dev, dtype=torch.int32)
smid_kernel[(nprog,)](sm, 2000)
torch.cuda.synchronize()
used = sorted(set(sm.tolist()))
name, _, smset = part.partition(":")
lib = tidal.triton._lib


class SmSet(ctypes.Structure):
    _fields_ = [("bits", ctypes.c_uint64 * 4)]


m = SmSet()
lib.tidal_partition_get_mask.argtypes = [ctypes.c_void_p, ctypes.POINTER(SmSet)]
lib.tidal_partition_get_mask(tidal.triton._part, ctypes.byref(m))
allowed = {s for s in range(256) if (m.bits[s // 64] >> (s % 64)) & 1}
outside = [s for s in used if s not in allowed]
result("triton.inside", -1 not in used and not outside,
       "%d SMs used, %d outside the partition (%d SMs)%s" % (len(used), len(outside), len(allowed),
                                                            (" e.g. %s" % outside[:5]) if outside else ""))
st = tidal.triton.stats()
result("triton.attached", st["attached"] >= 4 and st["not_rewritten"] == 0, str(st))
sys.exit(1 if fails else 0)
