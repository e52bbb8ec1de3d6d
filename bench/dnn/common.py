"""Shared pieces of the DNN benchmark: timing statistics, environment, sections, output.

No GPU is needed to import this module (unit tests use the statistics and the kernel
classification); everything that touches CUDA imports torch inside the function.
"""
import json
import math
import os
import platform
import re
import subprocess
import sys
import time
import traceback

# ------------------------------------------------------------------ SM sets

def parse_smset(text, nsm):
    """'0-65,70' / 'all' -> sorted list of SM ids (< nsm)."""
    text = text.strip()
    if text == "all":
        return list(range(nsm))
    out = set()
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if "-" in item:
            a, b = item.split("-", 1)
            out.update(range(int(a), int(b) + 1))
        else:
            out.add(int(item))
    bad = [s for s in out if s < 0 or s >= nsm]
    if bad:
        raise ValueError("SM set %s: SMs %s outside 0-%d" % (text, bad[:5], nsm - 1))
    return sorted(out)


def format_smset(sms):
    """[0, 1, 2, 5] -> '0-2,5' (parse_smset's form)."""
    out, run = [], []
    for sm in sorted(set(sms)):
        if run and sm == run[-1] + 1:
            run.append(sm)
            continue
        if run:
            out.append("%d-%d" % (run[0], run[-1]) if len(run) > 1 else str(run[0]))
        run = [sm]
    if run:
        out.append("%d-%d" % (run[0], run[-1]) if len(run) > 1 else str(run[0]))
    return ",".join(out)


# ------------------------------------------------------------------ statistics


def percentile(xs, q):
    """q-th percentile (0..100) of xs, linear interpolation between closest ranks."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    if len(s) == 1:
        return float(s[0])
    k = (len(s) - 1) * q / 100.0
    lo = math.floor(k)
    hi = min(lo + 1, len(s) - 1)
    return float(s[lo] + (s[hi] - s[lo]) * (k - lo))


def summarize_us(samples_ns):
    """{n, p50_us, p99_us, mean_us, min_us, max_us} of nanosecond samples."""
    us = [x / 1000.0 for x in samples_ns]
    if not us:
        return {"n": 0}
    return {"n": len(us), "p50_us": round(percentile(us, 50), 2), "p90_us": round(percentile(us, 90), 2),
            "p99_us": round(percentile(us, 99), 2), "mean_us": round(sum(us) / len(us), 2),
            "min_us": round(min(us), 2), "max_us": round(max(us), 2)}


def ratio(a, b):
    if a is None or b is None or not b or (isinstance(a, float) and math.isnan(a)):
        return None
    return round(a / b, 4)


# ------------------------------------------------------------------ kernel names

# Inductor names its Triton kernels triton_{poi,red,per,tem,...}_...; libtidal's clones of a
# rewritten kernel NAME are NAME__tidal_reshaped (docs/runtime.md).
_CLOSED_KINDS = [   # first match wins
    ("attention", re.compile(r"flash|fmha|mem_eff|attention|sdpa", re.I)),
    ("cudnn", re.compile(r"cudnn|fprop|dgrad|wgrad|implicit_gemm|implicit_convolve|conv|nchwToNhwc|nhwcToNchw"
                         r"|winograd|fft2d", re.I)),
    ("cublas", re.compile(r"cublas|gemm|gemv|nvjet|xmma|cutlass|splitKreduce", re.I)),
    ("aten", re.compile(r"at::|at_cuda_detail|native::|c10::|\(anonymous namespace\)", re.I)),
]


def classify_kernel(name):
    """'triton' (rewritable by tidal-ptxas) or the closed kind: cublas, cudnn, attention,
    aten, other."""
    base = name.strip()
    if base.startswith("triton") or "__tidal_reshaped" in base:
        return "triton"
    for kind, rx in _CLOSED_KINDS:
        if rx.search(base):
            return kind
    return "other"


def is_copy(name):
    return name.startswith(("Memcpy", "Memset", "memcpy", "memset"))


def kernel_census(names):
    """Counts of kernel names (a list, one per launch): total, triton, closed, per kind, and
    the names (with counts) of the closed ones and of the reshaped clones."""
    kinds = {}
    closed = {}
    triton_names = {}
    reshaped = 0
    copies = 0
    total = 0
    for n in names:
        if is_copy(n):
            copies += 1
            continue
        total += 1
        k = classify_kernel(n)
        kinds[k] = kinds.get(k, 0) + 1
        if k == "triton":
            if "__tidal_reshaped" in n:
                reshaped += 1
            short = n.replace("__tidal_reshaped", "")
            triton_names[short] = triton_names.get(short, 0) + 1
        else:
            short = n if len(n) <= 140 else n[:137] + "..."
            closed[short] = closed.get(short, 0) + 1
    return {"kernels": total, "triton": kinds.get("triton", 0), "closed": total - kinds.get("triton", 0),
            "kinds": kinds, "copies": copies, "reshaped_clones": reshaped,
            "closed_names": sorted(closed.items(), key=lambda kv: -kv[1]),
            "triton_distinct": len(triton_names)}


def short_name(name):
    """A kernel's name with tidal's clone suffix taken off (the same kernel on both sides)."""
    return name.replace("__tidal_reshaped", "")


def kernel_signature(names):
    """A digest of the sequence of kernels (clone suffixes off, copies left out): equal on
    the two sides exactly when they launched the same kernels in the same order."""
    import hashlib
    seq = [short_name(n) for n in names if not is_copy(n)]
    return {"kernels": len(seq), "sha1": hashlib.sha1("\n".join(seq).encode()).hexdigest()[:16]}


def kernel_times(events):
    """{short name: [launches, total us, clones]} from profiler kernel events (objects with
    .name and .time_range.elapsed_us()), copies left out."""
    out = {}
    for e in events:
        if is_copy(e.name):
            continue
        k = short_name(e.name)
        r = out.setdefault(k, [0, 0.0, 0])
        r[0] += 1
        r[1] = round(r[1] + e.time_range.elapsed_us(), 2)
        if "__tidal_reshaped" in e.name:
            r[2] += 1
    return out


def kernel_time_diff(unmod, tidal, top=12):
    """Kernels whose time in one graph replay grew most on the tidal side: rows of
    (name, launches, unmod us, tidal us, delta us, clones), largest delta first, and the
    totals. Kernels missing on one side are counted at 0 there."""
    rows = []
    for k in set(unmod) | set(tidal):
        u = unmod.get(k, [0, 0.0, 0])
        t = tidal.get(k, [0, 0.0, 0])
        rows.append((k, max(u[0], t[0]), u[1], t[1], round(t[1] - u[1], 2), t[2]))
    rows.sort(key=lambda r: -r[4])
    tot_u = round(sum(r[2] for r in rows), 1)
    tot_t = round(sum(r[3] for r in rows), 1)
    return {"top": rows[:top], "unmod_us": tot_u, "tidal_us": tot_t,
            "clone_delta_us": round(sum(r[4] for r in rows if r[5]), 1),
            "original_delta_us": round(sum(r[4] for r in rows if not r[5]), 1)}


# ------------------------------------------------------------------ output


class Log:
    """Prints to stdout (flushed) with a relative timestamp."""

    def __init__(self, tag):
        self.tag = tag
        self.t0 = time.time()

    def __call__(self, *a):
        msg = " ".join(str(x) for x in a)
        print("[%s %6.1fs] %s" % (self.tag, time.time() - self.t0, msg), flush=True)


class Results:
    """The JSON a process writes: env, settings, rows per section, errors."""

    def __init__(self, side, path):
        self.path = path
        self.d = {"side": side, "env": {}, "settings": {}, "compile": {}, "kernels": {}, "rows": [],
                  "storm": [], "checks": [], "errors": [], "timings": {}}

    def __getitem__(self, k):
        return self.d[k]

    def __setitem__(self, k, v):
        self.d[k] = v

    def row(self, **kw):
        self.d["rows"].append(kw)
        return kw

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.d, f, indent=1, default=str)
        os.replace(tmp, self.path)


def run_section(res, log, name, fn, *args, **kwargs):
    """Run one section; an exception is printed in full, recorded in res['errors'], and the
    run goes on (the process exits non-zero at the end). Returns fn's value or None."""
    t = time.time()
    log("== section %s" % name)
    try:
        out = fn(*args, **kwargs)
        res["timings"][name] = round(time.time() - t, 1)
        log("== section %s done in %.1fs" % (name, time.time() - t))
        return out
    except Exception as e:  # noqa: BLE001 -- recorded, re-raised as the exit status
        tb = traceback.format_exc()
        print(tb, file=sys.stderr, flush=True)
        print("FAILED section %s: %s: %s" % (name, type(e).__name__, e), flush=True)
        res["errors"].append({"section": name, "error": "%s: %s" % (type(e).__name__, e), "traceback": tb})
        res["timings"][name] = round(time.time() - t, 1)
        res.save()
        return None


def _cmd(args):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return "unavailable (%s)" % e


def environment():
    """Versions, GPU and the variables that change what runs (torch imported here)."""
    import torch
    env = {"python": sys.version.split()[0], "platform": platform.platform(), "torch": torch.__version__,
           "torch_cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version()}
    for mod in ("triton", "transformers", "torchvision", "timm", "numpy", "matplotlib"):
        try:
            env[mod] = __import__(mod).__version__
        except Exception as e:  # noqa: BLE001
            env[mod] = "not importable (%s)" % type(e).__name__
    try:
        import cuda.bindings
        env["cuda_bindings"] = cuda.bindings.__version__
    except Exception as e:  # noqa: BLE001
        env["cuda_bindings"] = "not importable (%s)" % type(e).__name__
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        env["gpu"] = p.name
        env["sms"] = p.multi_processor_count
        env["gpu_mem_gib"] = round(p.total_memory / 2**30, 1)
        env["cc"] = "%d.%d" % (p.major, p.minor)
    env["nvidia_smi"] = _cmd(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,"
                              "clocks.mem,power.limit,persistence_mode", "--format=csv,noheader"])
    env["nvidia_smi_mps"] = _cmd(["sh", "-c", "pgrep -l nvidia-cuda-mps || echo 'no MPS daemon'"])
    env["cpu_count"] = os.cpu_count()
    keys = ["LD_PRELOAD", "TRITON_PTXAS_PATH", "TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR",
            "TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER", "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS",
            "TORCHINDUCTOR_COMPILE_THREADS", "CUDA_MODULE_LOADING", "CUDA_DEVICE_MAX_CONNECTIONS",
            "TIDAL_RUN", "TIDAL_NO_REWRITE", "TIDAL_PARTITION", "TIDAL_NO_DAEMON", "TIDAL_SHORT_US",
            "TIDAL_MAX_CHUNK", "TIDAL_FLOW_IN", "TIDAL_HISTOGRAM", "TIDAL_DEBUG"]
    env["vars"] = {k: os.environ.get(k) for k in keys if os.environ.get(k) is not None}
    return env


def print_env(log, env):
    log("environment:")
    for k, v in env.items():
        if k == "vars":
            for kk, vv in v.items():
                log("  $%s=%s" % (kk, vv))
        else:
            log("  %s: %s" % (k, v))
