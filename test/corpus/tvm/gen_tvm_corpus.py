#!/usr/bin/env python3
"""Generate TVM CUDA kernels (source, PTX, fatbin, launch metadata) for sm_90, without a GPU.

Usage:
    python gen_tvm_corpus.py OUTDIR [--tidal-nvcc PATH] [--only SUBSTR] [--list]

Installs nothing. Run it with a Python that has apache-tvm (pinned: apache-tvm==0.27.0.post1,
the newest wheel on PyPI that installs on CPython 3.11 here; no torch, no GPU needed):

    python3 -m venv build-tvm/venv && build-tvm/venv/bin/pip install apache-tvm==0.27.0.post1
    build-tvm/venv/bin/python test/corpus/tvm/gen_tvm_corpus.py test/corpus/tvm/local

Operators (TE/TOPI compute, then TVM's untuned default GPU schedules
`tvm.s_tir.dlight.ApplyDefaultSchedule(gpu.Matmul, GEMV, Reduction, GeneralReduction, Fallback)`
for the target `{"kind": "cuda", "arch": "sm_90"}` -- TVM 0.27 only takes JSON/dict targets, the
old string "cuda -arch=sm_90" is rejected), built with `tvm.compile(mod, target)`:

    dense        topi.nn.dense            A[256,512] . B[384,512]^T -> [256,384]      (dlight Matmul)
    conv2d_nchw  topi.nn.conv2d_nchw      x[1,64,28,28] * w[64,64,3,3], pad 1, stride 1 (dlight)
    softmax      topi.nn.softmax          x[128,1000], axis -1                     (GeneralReduction)

How TVM's nvcc becomes tidal-nvcc. In TVM 0.27 `tvm.compile` runs no CUDA compiler: the CUDA
runtime module keeps the generated source (fmt "cuda") and compiles it when it is loaded on a
GPU (CUDAModuleNode::JitCompileFromSource), through the registered global function
`tvm_callback_cuda_compile` (python: tvm/support/nvcc.py). With TVM_CUDA_COMPILE_MODE=nvcc (the
default, nvrtc, is a library and runs no executable) that callback calls
`compile_cuda(code, target_format="fatbin", compiler="nvcc")`, which runs the bare command `nvcc`
(subprocess, looked up in PATH) as
    nvcc --fatbin -O3 -gencode arch=compute_90,code=sm_90 -U__CUDA_NO_HALF_OPERATORS__ ...
         --expt-relaxed-constexpr --expt-extended-lambda --use_fast_math
         --ptxas-options=-v,--register-usage-level=10,--warn-on-local-memory-usage
         -o <tmp>/tvm_kernels.fatbin <tmp>/tvm_kernels.cu
So the hook is PATH: this script makes a temporary directory SHIM with an executable
`SHIM/nvcc` (a short sh script: append its argv to a log, then `exec tidal-nvcc "$@"`; a plain
symlink nvcc -> tidal-nvcc works the same), puts SHIM first in PATH and sets
TVM_CUDA_COMPILE_MODE=nvcc. tidal-nvcc finds the real nvcc through $TIDAL_NVCC / $CUDA_HOME, never
PATH, so there is no recursion. No TVM code is patched. Without a GPU the load never happens, so
the script calls the registered callback by name (tvm.get_global_func(
"tvm_callback_cuda_compile")(src)) inside `with target:` -- the call TVM's loader makes (on the
GPU the arch would come from the device, sm_90 on an H200) -- and checks that the shim ran and
that the returned fatbin is rewritten (tidal-objdump).

Per operator OP, OUTDIR gets:
    OP.cu          the CUDA source TVM generated (lib.mod.imports[0].inspect_source())
    OP.ptx         TVM's PTX with plain nvcc: tvm.support.nvcc.compile_cuda(src, "ptx",
                   compiler="nvcc") with /usr/local/cuda/bin first in PATH (input for tidal-opt)
    OP.tidal.ptx   the same TVM call with SHIM first in PATH: tidal-nvcc -ptx output (rewritten)
    OP.fatbin      what TVM's tvm_callback_cuda_compile returned through tidal-nvcc (sm_90 cubin)
    launch.txt     one line per kernel for test/gpu/tvm/run_tvm.cu (stem, entry, grid, block,
                   dynamic smem, params as ROLE:DTYPE:ELEMENTS), written when --only is not given
    OP.json        kernels (name, grid, block, dynamic smem, params in .entry order with
                   dtype/shape/role), the TE tensors, and the nvcc command lines TVM ran
The grid/block come from the device PrimFuncs TVM handed to its CUDA codegen (captured by
wrapping tvm.tirx.build.codegen_build): the extents of `T.launch_thread("blockIdx.x", N)` etc.;
a kernel with dynamic shared memory or a non-constant extent is an error (none here).

Environment: CUDA_HOME (/usr/local/cuda).
"""
import argparse
import importlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

import tvm
from tvm import te, topi
from tvm.s_tir import dlight as dl
from tvm.support import nvcc as tvm_nvcc

TVM_VERSION_PINNED = "0.27.0.post1"
TARGET = {"kind": "cuda", "arch": "sm_90"}

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


# ----------------------------------------------------------------------------------------------
# Operators: name -> () -> (inputs, outputs)   (TE tensors; the PrimFunc takes inputs + outputs)
# ----------------------------------------------------------------------------------------------
def op_dense():
    a = te.placeholder((256, 512), "float32", name="A")
    b = te.placeholder((384, 512), "float32", name="B")
    return [a, b], [topi.nn.dense(a, b)]


def op_conv2d_nchw():
    x = te.placeholder((1, 64, 28, 28), "float32", name="x")
    w = te.placeholder((64, 64, 3, 3), "float32", name="w")
    return [x, w], [topi.nn.conv2d_nchw(x, w, stride=1, padding=1, dilation=1)]


def op_softmax():
    x = te.placeholder((128, 1000), "float32", name="x")
    return [x], [topi.nn.softmax(x, axis=-1)]


OPS = {"dense": op_dense, "conv2d_nchw": op_conv2d_nchw, "softmax": op_softmax}


# ----------------------------------------------------------------------------------------------
def make_shim(tidal_nvcc, d):
    """d/nvcc: log argv, exec tidal-nvcc. Returns (dir, log path)."""
    log = os.path.join(d, "nvcc-calls.log")
    p = os.path.join(d, "nvcc")
    with open(p, "w") as f:
        f.write('#!/bin/sh\nprintf "%%s\\n" "$*" >> "%s"\nexec "%s" "$@"\n' % (log, tidal_nvcc))
    os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return d, log


def with_path(first):
    env = dict(os.environ)
    env["PATH"] = first + os.pathsep + env.get("PATH", "")
    return env


class EnvPatch:
    """Temporarily replace os.environ entries (TVM's subprocess inherits os.environ)."""

    def __init__(self, **kv):
        self.kv, self.old = kv, {}

    def __enter__(self):
        for k, v in self.kv.items():
            self.old[k] = os.environ.get(k)
            os.environ[k] = v

    def __exit__(self, *a):
        for k, v in self.old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


LAUNCH_RE = re.compile(r'T\.launch_thread\("((?:blockIdx|threadIdx)\.[xyz])", (\d+)\)')
DYN_LAUNCH_RE = re.compile(r'T\.launch_thread\("((?:blockIdx|threadIdx)\.[xyz])", [^\d]')


def kernel_meta(dev_mod, tensors):
    """Launch dims and params of every device PrimFunc (in CUDA source order is not needed:
    the harness looks entries up by name)."""
    by_name = {t.op.name: t for t in tensors}
    kernels = []
    for gv, func in sorted(dev_mod.functions.items(), key=lambda kv: kv[0].name_hint):
        name = gv.name_hint
        params_lp = [str(x) for x in func.attrs.get("tirx.kernel_launch_params", [])]
        if any("dyn_shared" in p for p in params_lp):
            raise SystemExit(f"{name}: uses dynamic shared memory (not supported by this script)")
        text = func.script()
        if DYN_LAUNCH_RE.search(text):
            raise SystemExit(f"{name}: non-constant launch extent")
        dims = {}
        for tag, n in LAUNCH_RE.findall(text):
            if tag in dims and dims[tag] != int(n):
                raise SystemExit(f"{name}: {tag} launched with {dims[tag]} and {n}")
            dims[tag] = int(n)
        grid = [dims.get(f"blockIdx.{c}", 1) for c in "xyz"]
        block = [dims.get(f"threadIdx.{c}", 1) for c in "xyz"]
        params = []
        for p in func.params:
            pn = p.name
            base = pn[:-4] if pn.endswith("_ptr") else pn
            t = by_name.get(base)
            if t is None:
                raise SystemExit(f"{name}: parameter {pn} is not a TE tensor (workspace?)")
            params.append({
                "name": pn,
                "tensor": base,
                "kind": "ptr",
                "dtype": str(t.dtype),
                "shape": [int(s) for s in t.shape],
                "role": "out" if t in OUT_SET else "in",
            })
        kernels.append({"name": name, "grid": grid, "block": block, "dyn_smem": 0,
                        "launch_params": params_lp, "params": params})
    return kernels


OUT_SET = set()


def normalise_cmd(line, tmp_prefixes):
    for p in tmp_prefixes:
        line = line.replace(p, "<tmp>")
    return re.sub(r"/tmp/tmp[^/ ]*", "<tmp>", line)


def build_one(opname, outdir, shim_dir, shim_log, cuda_bin, tidal_objdump):
    global OUT_SET
    ins, outs = OPS[opname]()
    OUT_SET = set(outs)
    func = te.create_prim_func(ins + outs).with_attr("global_symbol", opname)
    mod = tvm.IRModule({opname: func})
    target = tvm.target.Target(TARGET)
    with target:
        mod = dl.ApplyDefaultSchedule(dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.Reduction(),
                                      dl.gpu.GeneralReduction(), dl.gpu.Fallback())(mod)

    # Capture the device module TVM hands to its CUDA codegen.
    tb = importlib.import_module("tvm.tirx.build")
    captured = {}
    orig = tb.codegen_build

    def capture(m, t):
        if t.kind.name == "cuda":
            captured["dev"] = m
        return orig(m, t)

    tb.codegen_build = capture
    try:
        lib = tvm.compile(mod, target=target)   # no compiler runs here (see the docstring)
    finally:
        tb.codegen_build = orig

    cuda_mods = [m for m in lib.mod.imports if m.kind == "cuda"]
    assert len(cuda_mods) == 1, [m.kind for m in lib.mod.imports]
    src = cuda_mods[0].inspect_source()
    with open(os.path.join(outdir, f"{opname}.cu"), "w") as f:
        f.write(src)

    # TVM's own compile hook, called by name as CUDAModuleNode::JitCompileFromSource does at
    # load time: tvm_callback_cuda_compile -> compile_cuda(fatbin, nvcc) -> `nvcc` = shim.
    open(shim_log, "w").close()
    fcompile = tvm.get_global_func("tvm_callback_cuda_compile")
    with target, EnvPatch(TVM_CUDA_COMPILE_MODE="nvcc",
                          PATH=shim_dir + os.pathsep + os.environ["PATH"]):
        fat = bytes(fcompile(src))
    with open(shim_log) as f:
        tvm_calls = [l.rstrip("\n") for l in f if l.strip()]
    if not tvm_calls:
        raise SystemExit(f"{opname}: TVM's compile hook did not run nvcc (shim not reached)")
    fatbin = os.path.join(outdir, f"{opname}.fatbin")
    with open(fatbin, "wb") as f:
        f.write(fat)

    # PTX through TVM's compile_cuda, once with the real nvcc, once with tidal-nvcc.
    open(shim_log, "w").close()
    with target:
        with EnvPatch(PATH=cuda_bin + os.pathsep + os.environ["PATH"]):
            ptx = tvm_nvcc.compile_cuda(src, target_format="ptx", compiler="nvcc")
        with EnvPatch(PATH=shim_dir + os.pathsep + os.environ["PATH"]):
            tptx = tvm_nvcc.compile_cuda(src, target_format="ptx", compiler="nvcc")
    with open(shim_log) as f:
        ptx_calls = [l.rstrip("\n") for l in f if l.strip()]
    with open(os.path.join(outdir, f"{opname}.ptx"), "wb") as f:
        f.write(bytes(ptx))
    with open(os.path.join(outdir, f"{opname}.tidal.ptx"), "wb") as f:
        f.write(bytes(tptx))
    if b"__tidal_rewritten_v5" not in bytes(tptx):
        raise SystemExit(f"{opname}: tidal-nvcc PTX has no rewrite marker")
    if b"__tidal_rewritten_v5" in bytes(ptx):
        raise SystemExit(f"{opname}: plain-nvcc PTX is already rewritten (PATH?)")

    od = subprocess.run([tidal_objdump, fatbin], capture_output=True, text=True)
    if od.returncode != 0 or "not rewritten" in od.stdout or "rewritten)" not in od.stdout:
        raise SystemExit(f"{opname}: tidal-objdump on TVM's fatbin:\n{od.stdout}{od.stderr}")

    kernels = kernel_meta(captured["dev"], ins + outs)
    for k in kernels:
        if f".entry {k['name']}(" not in bytes(ptx).decode():
            raise SystemExit(f"{opname}: kernel {k['name']} not in the PTX")
        m = re.search(r'__global__ void.*?\b%s\(([^)]*)\)' % re.escape(k["name"]), src)
        names = [a.split()[-1] for a in m.group(1).split(",")] if m else None
        if names != [p["name"] for p in k["params"]]:
            raise SystemExit(f"{opname}: {k['name']} parameters {names} in the source")
    meta = {
        "op": opname,
        "tvm_version": tvm.__version__,
        "target": TARGET,
        "schedule": "s_tir.dlight.ApplyDefaultSchedule(gpu.Matmul, GEMV, Reduction, GeneralReduction, Fallback)",
        "tensors": [{"name": t.op.name, "dtype": str(t.dtype), "shape": [int(s) for s in t.shape],
                     "role": "out" if t in OUT_SET else "in"} for t in ins + outs],
        "kernels": kernels,
        "tvm_compile_nvcc_cmd": [normalise_cmd(c, []) for c in tvm_calls],
        "ptx_nvcc_cmd": [normalise_cmd(c, []) for c in ptx_calls],
        "fatbin_objdump": [l for l in od.stdout.splitlines() if l.strip()][1:],
    }
    with open(os.path.join(outdir, f"{opname}.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    ks = ", ".join(f"{k['name']} grid={k['grid']} block={k['block']}" for k in kernels)
    print(f"ok {opname}: {ks}")
    return [launch_line(opname, k) for k in kernels]


DTYPE_TAG = {"float32": "f32"}


def launch_line(opname, k):
    """One line of launch.txt (test/gpu/tvm/run_tvm.cu reads it)."""
    ps = []
    for p in k["params"]:
        n = 1
        for d in p["shape"]:
            n *= d
        ps.append(f"{p['role']}:{DTYPE_TAG[p['dtype']]}:{n}")
    dims = " ".join(str(x) for x in k["grid"] + k["block"])
    return f"{opname} {opname} {k['name']} {dims} {k['dyn_smem']} {' '.join(ps)}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--tidal-nvcc", default=os.path.join(ROOT, "build-tvm", "bin", "tidal-nvcc"))
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        print("\n".join(OPS))
        return 0
    if tvm.__version__ != TVM_VERSION_PINNED:
        print(f"warning: apache-tvm {tvm.__version__}, pinned {TVM_VERSION_PINNED}", file=sys.stderr)
    tidal_nvcc = os.path.abspath(a.tidal_nvcc)
    if not os.access(tidal_nvcc, os.X_OK):
        raise SystemExit(f"no tidal-nvcc at {tidal_nvcc} (--tidal-nvcc PATH)")
    tidal_objdump = os.path.join(os.path.dirname(tidal_nvcc), "tidal-objdump")
    cuda_bin = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin")
    os.makedirs(a.outdir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tvm-nvcc-shim-") as d:
        shim_dir, shim_log = make_shim(tidal_nvcc, d)
        lines = []
        for op in OPS:
            if a.only and a.only not in op:
                continue
            lines += build_one(op, a.outdir, shim_dir, shim_log, cuda_bin, tidal_objdump)
    if not a.only:
        with open(os.path.join(a.outdir, "launch.txt"), "w") as f:
            f.write("# gen_tvm_corpus.py: one kernel launch per line, for test/gpu/tvm/run_tvm.cu\n"
                    "# name ptx-file-stem entry grid.x grid.y grid.z block.x block.y block.z dyn-smem"
                    " params (in .entry order: ROLE:DTYPE:ELEMENTS, ROLE in|out)\n")
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
