#!/usr/bin/env python3
"""gemm_clone.py -- what a persistent clone costs on BERT-large's long kernels.

Two Triton kernels shaped like the ones BERT-large b16 s128 spends its clone time in
(session 9, docs/performance.md §11): Inductor's addmm template at 2048x1024x1024 fp16 with
the config it picked (BLOCK 64x32x128, 5 stages, 4 warps: 1024 tiles) and a GELU over
2048x4096 fp16. Each is launched --n times back to back (the GPU never idles, so the
launch gap is not in the time) and timed with CUDA events: us per launch.

    bench/probes/gemm_clone.sh          # on the GPU machine: every placement and chunk

Run under scripts/tidal-run (TIDAL_PARTITION, TIDAL_PLACEMENT, TIDAL_SHORT_US,
TIDAL_MAX_CHUNK, TIDAL_CHUNK_US say what libtidal does) or without it (the unmodified
baseline). Prints one JSON line per kernel.

    gemm_clone.py --compile-only DIR    # no GPU: the PTX of both kernels (sm_90a) in DIR
"""
import argparse
import json
import os
import sys

import triton
import triton.language as tl


@triton.jit
def addmm_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = (M + BLOCK_M - 1) // BLOCK_M
    grid_n = (N + BLOCK_N - 1) // BLOCK_N
    width = GROUP_M * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (pid % group_size)
    pid_n = (pid % width) // group_size
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + ram[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] + rbn[None, :] * K)   # B is W^T: (K, N) with strides (1, K)
        acc += tl.dot(a, b, allow_tf32=False)
    bias = tl.load(bias_ptr + rn, mask=rn < N)
    acc = acc + bias[None, :].to(tl.float32)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=mask)


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, XBLOCK: tl.constexpr):
    off = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    m = off < n
    x = tl.load(x_ptr + off, mask=m).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(y_ptr + off, y.to(tl.float16), mask=m)


ADDMM = dict(BLOCK_M=64, BLOCK_N=32, BLOCK_K=128, GROUP_M=8, num_stages=5, num_warps=4)
GELU = dict(XBLOCK=1024, num_warps=4)
M, N, K = 2048, 1024, 1024
GELU_N = 2048 * 4096


def compile_only(out):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    os.makedirs(out, exist_ok=True)
    target = GPUTarget("cuda", 90, 32)
    jobs = [
        ("addmm", addmm_kernel, {"a_ptr": "*fp16", "b_ptr": "*fp16", "bias_ptr": "*fp16", "c_ptr": "*fp16",
                                 "M": "i32", "N": "i32", "K": "i32"},
         {k: v for k, v in ADDMM.items() if k.isupper()}, ADDMM),
        ("gelu", gelu_kernel, {"x_ptr": "*fp16", "y_ptr": "*fp16", "n": "i32"}, {"XBLOCK": 1024}, GELU),
    ]
    for name, fn, sig, constexprs, cfg in jobs:
        sig = dict(sig)
        for c in constexprs:
            sig[c] = "constexpr"
        # the divisibility Triton's JIT infers for these shapes (every pointer and size a
        # multiple of 16): without it the GEMM is not pipelined (24 KiB of shared memory
        # instead of the 120 KiB the GPU run uses)
        attrs = {(i,): [["tt.divisibility", 16]] for i in range(len(sig) - len(constexprs))}
        src = ASTSource(fn, sig, constexprs, attrs=attrs)
        opts = {k: v for k, v in cfg.items() if k.startswith("num_")}
        k = triton.compile(src, target=target, options=opts)
        with open(os.path.join(out, name + ".ptx"), "w") as f:
            f.write(k.asm["ptx"])
        print(name, "shared", k.metadata.shared, "->", os.path.join(out, name + ".ptx"))


def bench(n, warmup, m, only, graph):
    import torch
    if os.environ.get("TIDAL_RUN"):
        import tidal.torch  # noqa: F401  (as bench/dnn: the hooks before the first compile)
    dev = "cuda"
    torch.manual_seed(0)
    a = torch.randn(m, K, device=dev, dtype=torch.float16)
    w = torch.randn(N, K, device=dev, dtype=torch.float16)
    bias = torch.randn(N, device=dev, dtype=torch.float16)
    c = torch.empty(m, N, device=dev, dtype=torch.float16)
    x = torch.randn(GELU_N, device=dev, dtype=torch.float16)
    y = torch.empty_like(x)
    tiles = (m // ADDMM["BLOCK_M"]) * (N // ADDMM["BLOCK_N"])

    def run_addmm():
        addmm_kernel[(tiles,)](a, w, bias, c, m, N, K, **ADDMM)

    def run_gelu():
        gelu_kernel[(triton.cdiv(GELU_N, 1024),)](x, y, GELU_N, **GELU)

    checks = {
        "addmm": lambda: (c.float() - (a.float() @ w.float().t() + bias.float())).abs().max().item(),
        "gelu": lambda: (y.float() - torch.nn.functional.gelu(x.float())).abs().max().item(),
    }
    for name, fn in (("addmm", run_addmm), ("gelu", run_gelu)):
        if only and name != only:
            continue
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        best = None
        g = None
        if graph:   # n launches in one CUDA graph: the host's launch rate is out of the time
            g = torch.cuda.CUDAGraph()
            side = torch.cuda.Stream()
            with torch.cuda.stream(side):
                with torch.cuda.graph(g, stream=side):
                    for _ in range(n):
                        fn()
            torch.cuda.synchronize()
            g.replay()
            torch.cuda.synchronize()
        for _rep in range(5):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            if g is not None:
                g.replay()
            else:
                for _ in range(n):
                    fn()
            e.record()
            e.synchronize()
            us = s.elapsed_time(e) * 1000.0 / n
            best = us if best is None else min(best, us)
        err = checks[name]()
        print(json.dumps({"kernel": name, "us": round(best, 3), "n": n, "max_err": err, "m": m, "graph": graph,
                          "placement": os.environ.get("TIDAL_PLACEMENT", "unmod" if not os.environ.get("TIDAL_RUN") else ""),
                          "max_chunk": os.environ.get("TIDAL_MAX_CHUNK", ""),
                          "chunk_us": os.environ.get("TIDAL_CHUNK_US", ""),
                          "short_us": os.environ.get("TIDAL_SHORT_US", ""),
                          "label": os.environ.get("PROBE_LABEL", "")}), flush=True)
    try:
        import tidal.torch as tt
        print(json.dumps({"stats": tt.stats()}, default=str), flush=True)
    except Exception as ex:  # the unmodified side has no tidal
        print(json.dumps({"stats": None, "why": str(ex)}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compile-only", metavar="DIR")
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--m", type=int, default=M, help="the GEMM's rows (a multiple of 64; %d: 1024 tiles)" % M)
    ap.add_argument("--only", choices=("addmm", "gelu"), help="run one of the two kernels")
    ap.add_argument("--graph", action="store_true", help="time --n launches replayed from one CUDA graph")
    args = ap.parse_args()
    if args.compile_only:
        compile_only(args.compile_only)
        return 0
    bench(args.n, args.warmup, args.m, args.only, args.graph)
    return 0


if __name__ == "__main__":
    sys.exit(main())
