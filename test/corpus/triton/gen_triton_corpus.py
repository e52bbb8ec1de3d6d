#!/usr/bin/env python3
"""Generate a corpus of real Triton PTX for sm_90a without a GPU (and without torch).

Usage:
    python3 gen_triton_corpus.py OUTDIR [--jobs N] [--only SUBSTR] [--check] [--list]

Needs only the `triton` package (pinned: triton==3.6.0).  Each kernel is compiled with
    triton.compile(triton.compiler.ASTSource(fn, signature, constexprs, attrs),
                   target=GPUTarget("cuda", 90, 32), options={...})
and `<name>.ptx` (compiled.asm["ptx"]) is written to OUTDIR.  Triton's last stage (ptxas to a
cubin) is replaced by a no-op through knobs.runtime.add_stages_inspection_hook, so no cubin is made
unless --with-cubin is given.

Triton picks the PTX ISA version from the ptxas it uses: its bundled ptxas (CUDA 12.8) gives
`.version 8.7`; CUDA 13's ptxas gives `.version 9.0`, which is what the GPU machine emits.
By default this script sets TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas when that file
exists (override with --ptxas PATH, or --ptxas bundled).

With --check, every written file is assembled by `ptxas -arch=sm_90a f.ptx -o /dev/null` (the ptxas
named by --ptxas / TRITON_PTXAS_PATH), in the same worker processes.
Exit status is non-zero if any kernel fails to compile (or to assemble with --check).

Kernels were written for this corpus; some follow the public Triton tutorials
(matmul, layer norm, fused attention, persistent matmul).
"""
import argparse
import concurrent.futures as cf
import os
import subprocess
import sys
import time

import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice
from triton.language.extra.cuda import utils as cuda_utils
from triton.language.extra.cuda import gdc

# ----------------------------------------------------------------------------------------------
# Elementwise kernels
# ----------------------------------------------------------------------------------------------


@triton.jit
def vec_add(x, y, o, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)


@triton.jit
def gelu_erf(x, o, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    v = tl.load(x + i, mask=m).to(tl.float32)
    y = 0.5 * v * (1.0 + tl.erf(v * 0.7071067811865476))
    tl.store(o + i, y.to(o.dtype.element_ty), mask=m)


@triton.jit
def gelu_tanh(x, o, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    v = tl.load(x + i, mask=m).to(tl.float32)
    y = 0.5 * v * (1.0 + libdevice.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
    tl.store(o + i, y.to(o.dtype.element_ty), mask=m)


@triton.jit
def silu(x, o, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    v = tl.load(x + i, mask=m).to(tl.float32)
    tl.store(o + i, (v * tl.sigmoid(v)).to(o.dtype.element_ty), mask=m)


@triton.jit
def swiglu(a, b, o, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(a + i, mask=m).to(tl.float32)
    g = tl.load(b + i, mask=m).to(tl.float32)
    tl.store(o + i, (x * tl.sigmoid(x) * g).to(o.dtype.element_ty), mask=m)


@triton.jit
def bias_leaky_relu_2d(x, bias, o, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    v = tl.load(x + rm[:, None] * stride + rn[None, :], mask=m, other=0.0).to(tl.float32)
    v += tl.load(bias + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    v = tl.where(v >= 0, v, 0.01 * v)
    tl.store(o + rm[:, None] * stride + rn[None, :], v.to(tl.float16), mask=m)


@triton.jit
def math_mix(x, o, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    v = tl.load(x + i, mask=m, other=1.0)
    a = tl.exp2(v) + tl.log2(tl.abs(v) + 1.0) + tl.sqrt_rn(tl.abs(v)) + tl.rsqrt(tl.abs(v) + 1.0)
    b = tl.sin(v) * tl.cos(v) + libdevice.pow(tl.abs(v), 1.5) + libdevice.atan2(v, 3.0)
    c = tl.div_rn(a, b + 2.0) + tl.fma(a, b, v)
    c = tl.clamp(c, -100.0, 100.0) + libdevice.rint(v) + tl.floor(v) + tl.ceil(v)
    tl.store(o + i, c, mask=m)


@triton.jit
def fp64_axpy_norm(x, y, o, alpha, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    a = tl.load(x + i, mask=m, other=0.0)
    b = tl.load(y + i, mask=m, other=0.0)
    r = alpha * a + b
    tl.store(o + i, tl.sqrt(r * r + 1.0) / (tl.abs(a) + 1.0), mask=m)


@triton.jit
def int_bitops(x, y, o, n, shift, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    a = tl.load(x + i, mask=m, other=0)
    b = tl.load(y + i, mask=m, other=1)
    r = ((a ^ b) << 3) | (a >> shift) & 0x7F7F7F7F
    r = r + tl.umulhi(a.to(tl.uint32), b.to(tl.uint32)).to(tl.int32) + a // b + a % b
    r = tl.maximum(r, tl.minimum(a, b))
    tl.store(o + i, r, mask=m)


@triton.jit
def uint8_popc_like(x, o, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    v = tl.load(x + i, mask=m, other=0)
    w = (v & 0x0F) + ((v >> 4) & 0x0F)
    tl.store(o + i, w.to(tl.uint8), mask=m)


@triton.jit
def cache_hints_copy(x, o, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    i = tl.max_contiguous(tl.multiple_of(i, BLOCK), BLOCK)
    m = i < n
    a = tl.load(x + i, mask=m, cache_modifier=".cg")
    b = tl.load(x + n + i, mask=m, eviction_policy="evict_last")
    c = tl.load(x + 2 * n + i, mask=m, volatile=True)
    d = tl.load(x + 3 * n + i, mask=m, cache_modifier=".ca")
    tl.store(o + i, a + b + c, mask=m, cache_modifier=".wt")
    tl.store(o + n + i, a * b, mask=m, cache_modifier=".cs")
    tl.store(o + 2 * n + i, d, mask=m, eviction_policy="evict_first")


@triton.jit
def inline_asm_shift(x, o, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    v = tl.load(x + i, mask=m, other=0)
    y = tl.inline_asm_elementwise(
        asm="{ .reg .b32 tmp; .reg .pred p; shl.b32 tmp, $1, 3; setp.gt.s32 p, tmp, 100; "
        "@p mov.b32 tmp, 100; mov.b32 $0, tmp; }",
        constraints="=r,r",
        args=[v],
        dtype=tl.int32,
        is_pure=True,
        pack=1,
    )
    tl.store(o + i, y, mask=m)


@triton.jit
def smid_timer(o, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    t0 = cuda_utils.globaltimer()
    s = cuda_utils.smid()
    nt = cuda_utils.num_threads()
    nw = cuda_utils.num_warps()
    r = tl.arange(0, BLOCK)
    vals = tl.where(r == 0, s.to(tl.int64), tl.where(r == 1, t0, (nt * 1000 + nw).to(tl.int64)))
    tl.store(o + pid * BLOCK + r, vals)


@triton.jit
def device_print_k(x, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + i, mask=i < n, other=0.0)
    tl.device_print("v=", v)


@triton.jit
def device_assert_k(x, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + i, mask=i < n, other=0)
    tl.device_assert(v >= 0, "negative value")


@triton.jit
def pdl_scale(x, o, n, s, BLOCK: tl.constexpr):
    gdc.gdc_wait()
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    v = tl.load(x + i, mask=m)
    gdc.gdc_launch_dependents()
    tl.store(o + i, v * s, mask=m)


# ----------------------------------------------------------------------------------------------
# Row-wise kernels: softmax, norms, reductions, scans
# ----------------------------------------------------------------------------------------------


@triton.jit
def softmax_row(x, o, stride, n, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n
    v = tl.load(x + r * stride + c, mask=m, other=-float('inf')).to(tl.float32)
    v = v - tl.max(v, 0)
    e = tl.exp(v)
    tl.store(o + r * stride + c, (e / tl.sum(e, 0)).to(o.dtype.element_ty), mask=m)


@triton.jit
def softmax_online(x, o, stride, n, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    row = x + r * stride
    m_i = -float('inf')
    l_i = 0.0
    for start in range(0, n, BLOCK):
        c = start + tl.arange(0, BLOCK)
        v = tl.load(row + c, mask=c < n, other=-float('inf')).to(tl.float32)
        m_new = tl.maximum(m_i, tl.max(v, 0))
        l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(v - m_new), 0)
        m_i = m_new
    for start in range(0, n, BLOCK):
        c = start + tl.arange(0, BLOCK)
        v = tl.load(row + c, mask=c < n, other=-float('inf')).to(tl.float32)
        tl.store(o + r * stride + c, (tl.exp(v - m_i) / l_i).to(o.dtype.element_ty), mask=c < n)


@triton.jit
def layernorm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def layernorm_bwd_dx_fused(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                           GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    # Tutorial 05: partial dW/dB accumulated under a spin lock (atomic_cas / atomic_xchg).
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@triton.jit
def rmsnorm(X, W, Y, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < N
    x = tl.load(X + row * stride + c, mask=m, other=0.0).to(tl.float32)
    rms = tl.rsqrt(tl.sum(x * x, 0) / N + eps)
    w = tl.load(W + c, mask=m, other=0.0).to(tl.float32)
    tl.store(Y + row * stride + c, (x * rms * w).to(Y.dtype.element_ty), mask=m)


@triton.jit
def reduce_sum_atomic(x, out, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + i, mask=i < n, other=0.0)
    tl.atomic_add(out, tl.sum(v, 0))


@triton.jit
def reduce_max_atomic(x, out_i, out_f, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + i, mask=i < n, other=-float('inf'))
    mx = tl.max(v, 0)
    tl.atomic_max(out_f, mx)
    tl.atomic_max(out_i, mx.to(tl.int32), sem="release", scope="gpu")
    tl.atomic_min(out_i + 1, tl.min(v, 0).to(tl.int32), sem="relaxed", scope="cta")
    tl.atomic_add(out_i + 2, 1, sem="acq_rel", scope="sys")


@triton.jit
def col_sum_2d(x, out, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    acc = tl.zeros([BN], dtype=tl.float32)
    for m0 in range(0, M, BM):
        rm = m0 + tl.arange(0, BM)
        v = tl.load(x + rm[:, None] * stride + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N), other=0.0)
        acc += tl.sum(v.to(tl.float32), axis=0)
    tl.store(out + rn, acc, mask=rn < N)


@triton.jit
def cumsum_row(x, o, stride, n, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x + r * stride + c, mask=c < n, other=0.0)
    tl.store(o + r * stride + c, tl.cumsum(v, 0), mask=c < n)


@triton.jit
def _lin_rec_combine(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@triton.jit
def linear_recurrence_scan(A, B, H, stride, n, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    a = tl.load(A + r * stride + c, mask=c < n, other=1.0)
    b = tl.load(B + r * stride + c, mask=c < n, other=0.0)
    _, h = tl.associative_scan((a, b), axis=0, combine_fn=_lin_rec_combine)
    tl.store(H + r * stride + c, h, mask=c < n)


@triton.jit
def argmax_row(x, o, stride, n, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x + r * stride + c, mask=c < n, other=-float('inf'))
    tl.store(o + r, tl.argmax(v, 0).to(tl.int64))


@triton.jit
def sort_topk_row(x, o, ot, stride, BLOCK: tl.constexpr, K: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x + r * stride + c)
    s = tl.sort(v, descending=True)
    tl.store(o + r * stride + c, s)
    t = tl.topk(v, K)
    tl.store(ot + r * K + tl.arange(0, K), t)


@triton.jit
def histogram_k(x, hist, n, BLOCK: tl.constexpr, NBINS: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + i, mask=i < n, other=0)
    h = tl.histogram(v % NBINS, NBINS)
    tl.atomic_add(hist + tl.arange(0, NBINS), h)


# ----------------------------------------------------------------------------------------------
# Memory movement / gather / random / quantization
# ----------------------------------------------------------------------------------------------


@triton.jit
def embedding_gather(ids, weight, o, D, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    idx = tl.load(ids + row).to(tl.int64)
    d = tl.arange(0, BLOCK_D)
    v = tl.load(weight + idx * D + d, mask=d < D)
    tl.store(o + row * D + d, v, mask=d < D)


@triton.jit
def gather_axis(src, index, o, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    s = tl.load(src + rm[:, None] * BN + rn[None, :])
    idx = tl.load(index + rm[:, None] * BN + rn[None, :])
    g = tl.gather(s, idx, axis=1)
    tl.store(o + rm[:, None] * BN + rn[None, :], g)


@triton.jit
def transpose_2d(x, o, M, N, sxm, som, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    v = tl.load(x + rm[:, None] * sxm + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N))
    t = tl.trans(v)
    tl.store(o + rn[:, None] * som + rm[None, :], t, mask=(rn[:, None] < N) & (rm[None, :] < M))


@triton.jit
def dropout_philox(x, o, n, p, seed, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    v = tl.load(x + i, mask=m)
    r = tl.rand(seed, i)
    keep = r > p
    tl.store(o + i, tl.where(keep, v / (1 - p), 0.0), mask=m)


@triton.jit
def randn_randint(o, oi, seed, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o + i, tl.randn(seed, i))
    a, b, c, d = tl.randint4x(seed, i)
    tl.store(oi + i, a ^ b ^ c ^ d)


@triton.jit
def quant_int8_row(x, q, scale, stride, n, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x + r * stride + c, mask=c < n, other=0.0).to(tl.float32)
    s = tl.max(tl.abs(v), 0) / 127.0
    qv = libdevice.rint(v / s)
    tl.store(q + r * stride + c, qv.to(tl.int8), mask=c < n)
    tl.store(scale + r, s)


@triton.jit
def dequant_int8(q, scale, o, stride, n, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(q + r * stride + c, mask=c < n, other=0).to(tl.float32)
    tl.store(o + r * stride + c, (v * tl.load(scale + r)).to(tl.bfloat16), mask=c < n)


@triton.jit
def fp8_cast_roundtrip(x, q, o, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    v = tl.load(x + i, mask=m, other=0.0)
    f8 = v.to(tl.float8e4nv)
    f5 = v.to(tl.float8e5)
    tl.store(q + i, f8, mask=m)
    tl.store(o + i, f8.to(tl.float16) + f5.to(tl.float16), mask=m)


# ----------------------------------------------------------------------------------------------
# Convolution
# ----------------------------------------------------------------------------------------------


@triton.jit
def conv2d_direct(x, w, o, C, H, W, K, OH, OW, KH: tl.constexpr, KW: tl.constexpr, BLOCK: tl.constexpr):
    # NCHW, stride 1, no padding; one program per (n, k) and a block of output pixels
    nk = tl.program_id(0)
    n = nk // K
    k = nk % K
    p = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    oh = p // OW
    ow = p % OW
    pm = p < OH * OW
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for c in range(0, C):
        for kh in tl.static_range(KH):
            for kw in tl.static_range(KW):
                xv = tl.load(x + ((n * C + c) * H + oh + kh) * W + ow + kw, mask=pm, other=0.0)
                wv = tl.load(w + ((k * C + c) * KH + kh) * KW + kw)
                acc += xv * wv
    tl.store(o + (n * K + k) * OH * OW + p, acc, mask=pm)


@triton.jit
def conv2d_implicit_gemm(x, w, o, N, C, H, W, K, OH, OW, pad,
                         KH: tl.constexpr, KW: tl.constexpr,
                         BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # NHWC fp16 input, weights [KH*KW*C, K], output [N*OH*OW, K]; GEMM over (pixels x K)
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    npix = N * OH * OW
    b = rm // (OH * OW)
    oh = (rm // OW) % OH
    ow = rm % OW
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    CRS = KH * KW * C
    for k0 in range(0, CRS, BK):
        rk = k0 + tl.arange(0, BK)
        c = rk % C
        kw = (rk // C) % KW
        kh = rk // (C * KW)
        ih = oh[:, None] + kh[None, :] - pad
        iw = ow[:, None] + kw[None, :] - pad
        am = (rm[:, None] < npix) & (rk[None, :] < CRS) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        a = tl.load(x + ((b[:, None] * H + ih) * W + iw) * C + c[None, :], mask=am, other=0.0)
        bv = tl.load(w + rk[:, None] * K + rn[None, :], mask=(rk[:, None] < CRS) & (rn[None, :] < K), other=0.0)
        acc = tl.dot(a, bv, acc)
    tl.store(o + rm[:, None] * K + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < npix) & (rn[None, :] < K))


# ----------------------------------------------------------------------------------------------
# Matmul family
# ----------------------------------------------------------------------------------------------


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def matmul_grouped(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                   GROUP_SIZE_M: tl.constexpr, ACTIVATION: tl.constexpr):
    # Tutorial 03 (grouped ordering, fused activation)
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def matmul_simple(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PRECISION: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * sam + (k + rk)[None, :] * sak, mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.)
        y = tl.load(b + (k + rk)[:, None] * sbk + rn[None, :] * sbn, mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.)
        acc = tl.dot(x, y, acc, input_precision=PRECISION)
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(c.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_int8(a, b, c, M, N, K, sam, sbn, scm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # A [M,K] row-major int8, B given as [N,K] (K-major) int8, C int32
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * sam + (k + rk)[None, :])
        y = tl.load(b + rn[:, None] * sbn + (k + rk)[None, :])
        acc = tl.dot(x, tl.trans(y), acc, out_dtype=tl.int32)
    tl.store(c + rm[:, None] * scm + rn[None, :], acc)


@triton.jit
def matmul_fp8_scaled(a, b, c, sa, sb, M, N, K, sam, sbn, scm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # A [M,K] fp8e4nv, B as [N,K] fp8e4nv, per-tensor scales, bf16 output
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * sam + (k + rk)[None, :])
        y = tl.load(b + rn[:, None] * sbn + (k + rk)[None, :])
        acc = tl.dot(x, tl.trans(y), acc)
    acc = acc * tl.load(sa) * tl.load(sb)
    tl.store(c + rm[:, None] * scm + rn[None, :], acc.to(tl.bfloat16))


@triton.jit
def matmul_splitk_atomic(a, b, c, M, N, K, sam, sbk, scm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                         SPLIT_K: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    pk = tl.program_id(2)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = pk * BK + tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK * SPLIT_K)):
        kk = k * BK * SPLIT_K
        x = tl.load(a + rm[:, None] * sam + (kk + rk)[None, :], mask=(kk + rk)[None, :] < K, other=0.)
        y = tl.load(b + (kk + rk)[:, None] * sbk + rn[None, :], mask=(kk + rk)[:, None] < K, other=0.)
        acc = tl.dot(x, y, acc)
    tl.atomic_add(c + rm[:, None] * scm + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def batched_matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # contiguous [B, M, K] x [B, K, N] -> [B, M, N] fp16
    bz = tl.program_id(2)
    a += bz * M * K
    b += bz * K * N
    c += bz * M * N
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=4):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def matmul_tma_persistent(a_desc, b_desc, c_desc, M, N, K,
                          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, NUM_SMS: tl.constexpr):
    # Host-side TMA descriptors (triton.tools.tensor_descriptor.TensorDescriptor); B given as [N, K]
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    num_tiles = num_pid_m * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([pid_m * BM, ki * BK])
            b = b_desc.load([pid_n * BN, ki * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


@triton.jit
def matmul_device_desc_persistent(a_ptr, b_ptr, c_ptr, M, N, K,
                                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, NUM_SMS: tl.constexpr):
    # Device-side TMA descriptors (tl.make_tensor_descriptor; needs triton.set_allocator at run time)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    num_tiles = num_pid_m * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([pid_m * BM, ki * BK])
            b = b_desc.load([pid_n * BN, ki * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.bfloat16))


@triton.jit
def matmul_tma_ws(a_desc, b_desc, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # TMA loads + tl.range(..., warp_specialize=True).  On sm_90 (Triton 3.6) this compiles with
    # num_warps=4 and a pointer-based epilogue; a descriptor store after the loop fails in the
    # NVGPUWarpSpecialization pass ("tensor descriptor block and tensor types must match").
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for ki in tl.range(0, tl.cdiv(K, BK), warp_specialize=True):
        a = a_desc.load([pid_m * BM, ki * BK])
        b = b_desc.load([pid_n * BN, ki * BK])
        acc = tl.dot(a, b.T, acc)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(c.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_tma_persistent_ws(a_desc, b_desc, c, M, N, K,
                             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, NUM_SMS: tl.constexpr):
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    num_tiles = num_pid_m * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, warp_specialize=True):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([pid_m * BM, ki * BK])
            b = b_desc.load([pid_n * BN, ki * BK])
            acc = tl.dot(a, b.T, acc)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


# ----------------------------------------------------------------------------------------------
# Attention
# ----------------------------------------------------------------------------------------------


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, N_CTX,
             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    # Q, K, V, Out contiguous [Z*H, N_CTX, HEAD_DIM] fp16
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = off_hz.to(tl.int64) * N_CTX * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.44269504
    if CAUSAL:
        hi = (start_m + 1) * BLOCK_M
    else:
        hi = N_CTX
    for start_n in range(0, hi, BLOCK_N):
        k = tl.load(K + base + (start_n + offs_n)[None, :] * HEAD_DIM + offs_d[:, None])
        qk = tl.dot(q, k)
        if CAUSAL:
            mask = offs_m[:, None] >= (start_n + offs_n)[None, :]
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
        else:
            qk = qk * qk_scale
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        qk -= m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * HEAD_DIM + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(Out.dtype.element_ty))


@triton.jit
def attn_fwd_tma(q_desc, k_desc, v_desc, Out, sm_scale, N_CTX,
                 HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, WS: tl.constexpr):
    # descriptors over [Z*H*N_CTX, HEAD_DIM]
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    row0 = off_hz * N_CTX
    q = q_desc.load([row0 + start_m * BLOCK_M, 0])
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in tl.range(0, N_CTX, BLOCK_N, warp_specialize=WS):
        k = k_desc.load([row0 + start_n, 0])
        qk = tl.dot(q, k.T) * qk_scale
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = v_desc.load([row0 + start_n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    offs_m = row0 + start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    tl.store(Out + offs_m[:, None] * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :], acc.to(tl.float16))


# ----------------------------------------------------------------------------------------------
# Specs
# ----------------------------------------------------------------------------------------------

P = "*fp32"
H = "*fp16"
BF = "*bf16"


def S(fn, name, sig, const, div=None, **opts):
    """sig: {arg: type} for non-constexpr args; const: {arg: value}; div: args with tt.divisibility=16
    (default: every pointer argument)."""
    return dict(fn=fn, name=name, sig=sig, const=const, div=div, opts=opts)


def td(dtype, shape):
    return "tensordesc<%s[%s]>" % (dtype, ", ".join(str(s) for s in shape))


MM = dict(M="i32", N="i32", K="i32")
MM_STRIDES = dict(stride_am="i32", stride_ak="i32", stride_bk="i32", stride_bn="i32", stride_cm="i32", stride_cn="i32")
MMS_STRIDES = dict(sam="i32", sak="i32", sbk="i32", sbn="i32", scm="i32", scn="i32")


def grouped(name, dt, BM, BN, BK, w, s, act="", cdt=None):
    sig = dict(a_ptr="*" + dt, b_ptr="*" + dt, c_ptr="*" + (cdt or dt), **MM, **MM_STRIDES)
    return S(matmul_grouped, name, sig, dict(BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, GROUP_SIZE_M=8,
                                             ACTIVATION=act), div=["a_ptr", "b_ptr", "c_ptr", "stride_am",
                                                                   "stride_bk", "stride_cm", "K"],
             num_warps=w, num_stages=s)


def specs():
    ew = lambda d: dict(x=d, o=d, n="i32")  # noqa: E731
    L = []
    # elementwise
    L.append(S(vec_add, "vec_add_f32", dict(x=P, y=P, o=P, n="i32"), dict(BLOCK=1024), div=[]))
    L.append(S(vec_add, "vec_add_f16_div16", dict(x=H, y=H, o=H, n="i32"), dict(BLOCK=2048),
               div=["x", "y", "o", "n"], num_warps=8))
    L.append(S(vec_add, "vec_add_bf16_w2", dict(x=BF, y=BF, o=BF, n="i32"), dict(BLOCK=256), num_warps=2))
    L.append(S(vec_add, "vec_add_i64_w1", dict(x="*i64", y="*i64", o="*i64", n="i64"), dict(BLOCK=128), num_warps=1))
    L.append(S(gelu_erf, "gelu_erf_f16", ew(H), dict(BLOCK=1024)))
    L.append(S(gelu_tanh, "gelu_tanh_bf16", ew(BF), dict(BLOCK=512)))
    L.append(S(silu, "silu_f32", ew(P), dict(BLOCK=1024)))
    L.append(S(swiglu, "swiglu_bf16", dict(a=BF, b=BF, o=BF, n="i32"), dict(BLOCK=1024)))
    L.append(S(bias_leaky_relu_2d, "bias_leaky_relu_2d", dict(x=H, bias=H, o=H, M="i32", N="i32", stride="i32"),
               dict(BM=32, BN=128)))
    L.append(S(math_mix, "math_mix_f32", ew(P), dict(BLOCK=256)))
    L.append(S(fp64_axpy_norm, "fp64_axpy_norm", dict(x="*fp64", y="*fp64", o="*fp64", alpha="fp64", n="i32"),
               dict(BLOCK=256)))
    L.append(S(int_bitops, "int_bitops_i32", dict(x="*i32", y="*i32", o="*i32", n="i32", shift="i32"),
               dict(BLOCK=512)))
    L.append(S(uint8_popc_like, "uint8_nibbles", dict(x="*u8", o="*u8", n="i32"), dict(BLOCK=1024)))
    L.append(S(cache_hints_copy, "cache_hints_copy", dict(x=P, o=P, n="i32"), dict(BLOCK=512), div=["x", "o", "n"]))
    L.append(S(inline_asm_shift, "inline_asm_shift", dict(x="*i32", o="*i32", n="i32"), dict(BLOCK=256)))
    L.append(S(smid_timer, "smid_globaltimer", dict(o="*i64"), dict(BLOCK=32), num_warps=1))
    L.append(S(device_print_k, "device_print", dict(x=P, n="i32"), dict(BLOCK=128)))
    L.append(S(device_assert_k, "device_assert_debug", dict(x="*i32", n="i32"), dict(BLOCK=128), debug=True))
    L.append(S(pdl_scale, "pdl_gdc_scale", dict(x=P, o=P, n="i32", s="fp32"), dict(BLOCK=1024), launch_pdl=True))
    L.append(S(vec_add, "vec_add_maxnreg64", dict(x=P, y=P, o=P, n="i32"), dict(BLOCK=4096), maxnreg=64,
               num_warps=8))
    # row-wise
    rw = lambda d: dict(x=d, o=d, stride="i32", n="i32")  # noqa: E731
    L.append(S(softmax_row, "softmax_row_f32_1024", rw(P), dict(BLOCK=1024)))
    L.append(S(softmax_row, "softmax_row_f16_4096_w16", rw(H), dict(BLOCK=4096), num_warps=16))
    L.append(S(softmax_online, "softmax_online_bf16", rw(BF), dict(BLOCK=512)))
    L.append(S(layernorm_fwd, "layernorm_fwd_f16",
               dict(X=H, Y=H, W=H, B=H, Mean=P, Rstd=P, stride="i32", N="i32", eps="fp32"), dict(BLOCK=1024),
               num_warps=8))
    L.append(S(layernorm_bwd_dx_fused, "layernorm_bwd_dx_fused_lock",
               dict(DX=H, DY=H, DW=H, DB=H, X=H, W=H, Mean=P, Rstd=P, Lock="*i32", stride="i32", N="i32"),
               dict(GROUP_SIZE_M=64, BLOCK_SIZE_N=1024), num_warps=8))
    L.append(S(rmsnorm, "rmsnorm_bf16", dict(X=BF, W=BF, Y=BF, stride="i32", N="i32", eps="fp32"), dict(BLOCK=2048),
               num_warps=8))
    L.append(S(reduce_sum_atomic, "reduce_sum_atomic_f32", dict(x=P, out=P, n="i32"), dict(BLOCK=2048)))
    L.append(S(reduce_max_atomic, "reduce_max_atomic_sem_scope", dict(x=P, out_i="*i32", out_f=P, n="i32"),
               dict(BLOCK=1024)))
    L.append(S(col_sum_2d, "col_sum_2d_f16", dict(x=H, out=P, M="i32", N="i32", stride="i32"), dict(BM=64, BN=64)))
    L.append(S(cumsum_row, "cumsum_row_f32", rw(P), dict(BLOCK=1024)))
    L.append(S(cumsum_row, "cumsum_row_i32", rw("*i32"), dict(BLOCK=256), num_warps=2))
    L.append(S(linear_recurrence_scan, "linear_recurrence_scan", dict(A=P, B=P, H=P, stride="i32", n="i32"),
               dict(BLOCK=512)))
    L.append(S(argmax_row, "argmax_row_f32", dict(x=P, o="*i64", stride="i32", n="i32"), dict(BLOCK=2048)))
    L.append(S(sort_topk_row, "sort_topk_row_f32", dict(x=P, o=P, ot=P, stride="i32"), dict(BLOCK=256, K=16)))
    L.append(S(histogram_k, "histogram_i32", dict(x="*i32", hist="*i32", n="i32"), dict(BLOCK=1024, NBINS=64)))
    # memory / random / quant
    L.append(S(embedding_gather, "embedding_gather_bf16", dict(ids="*i32", weight=BF, o=BF, D="i32"),
               dict(BLOCK_D=1024)))
    L.append(S(gather_axis, "tl_gather_axis1", dict(src=P, index="*i32", o=P), dict(BM=32, BN=64)))
    L.append(S(transpose_2d, "transpose_2d_f16", dict(x=H, o=H, M="i32", N="i32", sxm="i32", som="i32"),
               dict(BM=64, BN=64)))
    L.append(S(dropout_philox, "dropout_philox", dict(x=P, o=P, n="i32", p="fp32", seed="i32"), dict(BLOCK=1024)))
    L.append(S(randn_randint, "randn_randint4x", dict(o=P, oi="*u32", seed="i64"), dict(BLOCK=512)))
    L.append(S(quant_int8_row, "quant_int8_row", dict(x=H, q="*i8", scale=P, stride="i32", n="i32"),
               dict(BLOCK=4096), num_warps=8))
    L.append(S(dequant_int8, "dequant_int8_bf16", dict(q="*i8", scale=P, o=BF, stride="i32", n="i32"),
               dict(BLOCK=1024)))
    L.append(S(fp8_cast_roundtrip, "fp8_cast_e4m3_e5m2", dict(x=H, q="*fp8e4nv", o=H, n="i32"), dict(BLOCK=1024)))
    # conv
    L.append(S(conv2d_direct, "conv2d_direct_3x3", dict(x=P, w=P, o=P, C="i32", H="i32", W="i32", K="i32",
                                                          OH="i32", OW="i32"), dict(KH=3, KW=3, BLOCK=256)))
    L.append(S(conv2d_implicit_gemm, "conv2d_implicit_gemm_f16",
               dict(x=H, w=H, o=H, N="i32", C="i32", H="i32", W="i32", K="i32", OH="i32", OW="i32", pad="i32"),
               dict(KH=3, KW=3, BM=128, BN=64, BK=32), num_warps=4, num_stages=3))
    # matmul: several block sizes / warps / stages
    L.append(grouped("matmul_f16_128x256x64_w8_s3", "fp16", 128, 256, 64, 8, 3))
    L.append(grouped("matmul_f16_128x128x64_w4_s4", "fp16", 128, 128, 64, 4, 4))
    L.append(grouped("matmul_f16_64x128x32_w4_s4_leaky", "fp16", 64, 128, 32, 4, 4, act="leaky_relu"))
    L.append(grouped("matmul_f16_64x64x32_w2_s5", "fp16", 64, 64, 32, 2, 5))
    L.append(grouped("matmul_f16_32x32x32_w4_s2", "fp16", 32, 32, 32, 4, 2))
    L.append(grouped("matmul_f16_16x16x32_w1_s2_mma", "fp16", 16, 16, 32, 1, 2))
    L.append(grouped("matmul_bf16_128x128x64_w8_s3", "bf16", 128, 128, 64, 8, 3))
    L.append(grouped("matmul_bf16_256x128x64_w8_s3_f32out", "bf16", 256, 128, 64, 8, 3, cdt="fp32"))
    L.append(S(matmul_simple, "matmul_tf32_128x128x32_w4_s3", dict(a=P, b=P, c=P, **MM, **MMS_STRIDES),
               dict(BM=128, BN=128, BK=32, PRECISION="tf32"), num_warps=4, num_stages=3))
    L.append(S(matmul_simple, "matmul_f32_ieee_64x64x16", dict(a=P, b=P, c=P, **MM, **MMS_STRIDES),
               dict(BM=64, BN=64, BK=16, PRECISION="ieee"), num_warps=4, num_stages=2))
    L.append(S(matmul_simple, "matmul_f16_cluster2_128x128x64", dict(a=H, b=H, c=H, **MM, **MMS_STRIDES),
               dict(BM=128, BN=128, BK=64, PRECISION="tf32"), num_warps=4, num_stages=3, num_ctas=2))
    L.append(S(matmul_int8, "matmul_int8_128x128x64_w4_s3",
               dict(a="*i8", b="*i8", c="*i32", **MM, sam="i32", sbn="i32", scm="i32"),
               dict(BM=128, BN=128, BK=64), num_warps=4, num_stages=3))
    L.append(S(matmul_fp8_scaled, "matmul_fp8e4m3_128x128x128_w8_s3",
               dict(a="*fp8e4nv", b="*fp8e4nv", c=BF, sa=P, sb=P, **MM, sam="i32", sbn="i32", scm="i32"),
               dict(BM=128, BN=128, BK=128), num_warps=8, num_stages=3))
    L.append(S(matmul_fp8_scaled, "matmul_fp8e5m2_64x64x64_w4_s2",
               dict(a="*fp8e5", b="*fp8e5", c=BF, sa=P, sb=P, **MM, sam="i32", sbn="i32", scm="i32"),
               dict(BM=64, BN=64, BK=64), num_warps=4, num_stages=2))
    L.append(S(matmul_splitk_atomic, "matmul_splitk_atomic_f16", dict(a=H, b=H, c=P, **MM, sam="i32", sbk="i32",
                                                                        scm="i32"),
               dict(BM=64, BN=64, BK=64, SPLIT_K=4), num_warps=4, num_stages=3))
    L.append(S(batched_matmul, "batched_matmul_f16_64x128x64", dict(a=H, b=H, c=H, **MM), dict(BM=64, BN=128, BK=64),
               num_warps=4, num_stages=3))
    L.append(S(matmul_tma_persistent, "matmul_tma_persistent_f16",
               dict(a_desc=td("fp16", [128, 64]), b_desc=td("fp16", [128, 64]), c_desc=td("fp16", [128, 128]), **MM),
               dict(BM=128, BN=128, BK=64, NUM_SMS=132), div=[], num_warps=8, num_stages=3))
    L.append(S(matmul_device_desc_persistent, "matmul_device_desc_persistent_bf16", dict(a_ptr=BF, b_ptr=BF, c_ptr=BF,
                                                                                         **MM),
               dict(BM=128, BN=128, BK=64, NUM_SMS=132), div=["a_ptr", "b_ptr", "c_ptr", "K", "N"],
               num_warps=8, num_stages=3))
    L.append(S(matmul_tma_ws, "matmul_tma_warp_specialized_f16",
               dict(a_desc=td("fp16", [128, 64]), b_desc=td("fp16", [128, 64]), c=H, **MM),
               dict(BM=128, BN=128, BK=64), div=["c", "N"], num_warps=4, num_stages=3))
    L.append(S(matmul_tma_persistent_ws, "matmul_tma_persistent_warp_specialized_f16",
               dict(a_desc=td("fp16", [128, 64]), b_desc=td("fp16", [128, 64]), c=H, **MM),
               dict(BM=128, BN=128, BK=64, NUM_SMS=132), div=["c", "N"], num_warps=4, num_stages=3))
    # attention
    L.append(S(attn_fwd, "flash_attn_fwd_d64", dict(Q=H, K=H, V=H, Out=H, sm_scale="fp32", N_CTX="i32"),
               dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, CAUSAL=False), div=["Q", "K", "V", "Out", "N_CTX"],
               num_warps=8, num_stages=3))
    L.append(S(attn_fwd, "flash_attn_fwd_causal_d128", dict(Q=H, K=H, V=H, Out=H, sm_scale="fp32", N_CTX="i32"),
               dict(HEAD_DIM=128, BLOCK_M=128, BLOCK_N=64, CAUSAL=True), div=["Q", "K", "V", "Out", "N_CTX"],
               num_warps=8, num_stages=2))
    desc64 = td("fp16", [128, 64])
    kv64 = td("fp16", [64, 64])
    L.append(S(attn_fwd_tma, "flash_attn_fwd_tma_d64",
               dict(q_desc=desc64, k_desc=kv64, v_desc=kv64, Out=H, sm_scale="fp32", N_CTX="i32"),
               dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, WS=False), div=["Out", "N_CTX"], num_warps=8, num_stages=3))
    L.append(S(attn_fwd_tma, "flash_attn_fwd_tma_ws_d64",
               dict(q_desc=desc64, k_desc=kv64, v_desc=kv64, Out=H, sm_scale="fp32", N_CTX="i32"),
               dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, WS=True), div=["Out", "N_CTX"], num_warps=4, num_stages=3))
    return L


# ----------------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------------


def _skip_cubin_stage(backend, stages, options, language, capability):
    # Triton's last stage runs ptxas to make a cubin; we only need the PTX.  The optional
    # check below runs ptxas once per kernel instead.
    stages["cubin"] = lambda src, metadata: b""


def compile_one(spec, with_cubin=False):
    from triton.backends.compiler import GPUTarget
    from triton import knobs
    knobs.runtime.add_stages_inspection_hook = None if with_cubin else _skip_cubin_stage
    fn = spec["fn"]
    sig = {}
    for a in fn.arg_names:
        if a in spec["const"]:
            sig[a] = "constexpr"
        else:
            sig[a] = spec["sig"][a]
    div = spec["div"]
    if div is None:
        div = [a for a, t in spec["sig"].items() if t.startswith("*")]
    attrs = {(fn.arg_names.index(a), ): [["tt.divisibility", 16]] for a in div}
    src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=dict(spec["const"]), attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(spec["opts"]))
    return k.asm["ptx"]


def _work(args):
    idx, outdir, ptxas, with_cubin = args
    spec = specs()[idx]
    t = time.time()
    try:
        ptx = compile_one(spec, with_cubin)
    except Exception as e:  # noqa: BLE001
        msg = str(e).strip().splitlines()
        return spec["name"], None, "%s: %s" % (type(e).__name__, msg[-1] if msg else "")
    path = os.path.join(outdir, spec["name"] + ".ptx")
    with open(path, "w") as f:
        f.write(ptx)
    if ptxas:
        r = subprocess.run([ptxas, "-arch=sm_90a", path, "-o", os.devnull], capture_output=True, text=True)
        if r.returncode != 0:
            return spec["name"], None, "ptxas -arch=sm_90a failed:\n" + r.stderr
    return spec["name"], time.time() - t, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--only", default=None, help="compile only kernels whose name contains this")
    ap.add_argument("--check", action="store_true", help="run ptxas -arch=sm_90a on each output")
    ap.add_argument("--with-cubin", action="store_true",
                    help="keep Triton's own cubin stage (a second ptxas run per kernel; default: skipped)")
    ap.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas",
                    help="ptxas Triton should use ('bundled' = the one in the triton wheel)")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.ptxas != "bundled" and os.path.exists(a.ptxas):
        os.environ["TRITON_PTXAS_PATH"] = a.ptxas
    all_specs = specs()
    names = [s["name"] for s in all_specs]
    assert len(set(names)) == len(names), "duplicate kernel names"
    if a.list:
        print("\n".join(names))
        return 0
    ptxas = None
    if a.check:
        from triton import knobs
        ptxas = knobs.nvidia.ptxas.path  # honours TRITON_PTXAS_PATH
    # a private, throw-away Triton cache: runs stay hermetic and leave nothing behind
    import shutil
    import tempfile
    cache_dir = tempfile.mkdtemp(prefix="tidal_triton_cache_")
    os.environ["TRITON_CACHE_DIR"] = cache_dir
    for v in ("TRITON_KERNEL_DUMP", "TRITON_KERNEL_OVERRIDE", "TRITON_ALWAYS_COMPILE"):
        os.environ.pop(v, None)
    os.makedirs(a.outdir, exist_ok=True)
    todo = [i for i, s in enumerate(all_specs) if a.only is None or a.only in s["name"]]
    t0 = time.time()
    failed = []
    import multiprocessing as mp
    ctx = mp.get_context("fork")
    try:
        with cf.ProcessPoolExecutor(max_workers=max(1, a.jobs), mp_context=ctx) as ex:
            for name, dt, err in ex.map(_work, [(i, a.outdir, ptxas, a.with_cubin) for i in todo]):
                if err:
                    failed.append(name)
                    print("FAIL %-45s %s" % (name, err), flush=True)
                else:
                    print("ok   %-45s %6.2fs" % (name, dt), flush=True)
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    print("triton %s: %d kernels, %d failed%s, %.1fs" % (triton.__version__, len(todo), len(failed),
                                                         " (ptxas-checked: %s)" % ptxas if ptxas else "",
                                                         time.time() - t0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
