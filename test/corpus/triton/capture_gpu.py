#!/usr/bin/env python3
"""Capture real Triton PTX on the GPU machine (H200, PyTorch 2.11, Triton 3.6).

Usage (on the GPU machine, through the device tool):
    cd test/corpus/triton && PYTHONUNBUFFERED=1 python3 capture_gpu.py --out $OUT/triton_ptx.tar.gz

Stages (each guarded; a failing stage is logged and skipped):
  gen     gen_triton_corpus.py run there too (no dump), to compare with the local corpus
  probe   the kernels of shared/probes/triton_corpus.py, launched for real
  blk     the probe's small transformer-ish block + conv/bn, torch.compile max-autotune
  mlp     a bf16 gated MLP + RMSNorm + cross-entropy, forward and backward, max-autotune
  misc    assorted ops (welford var_mean, cumsum, sort/topk, scatter_add, pooling, dropout,
          embedding backward, argmax), max-autotune
  flex    flex_attention (bf16, causal block mask) forward, compiled

Environment set before torch is imported: TRITON_KERNEL_DUMP=1, TRITON_DUMP_DIR, TRITON_ALWAYS_COMPILE=1,
TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON,ATEN, fresh TRITON_CACHE_DIR / TORCHINDUCTOR_CACHE_DIR.
Every `.ptx` under the dump and cache directories is collected (the dump directory is keyed by the
source hash only, so configs that differ only in num_warps/num_stages overwrite each other there;
Triton's cache keeps them all), de-duplicated by content and written to one tar.gz:
  ptx/<kernel>.ptx           (<kernel>_<sha8>.ptx when a name repeats with other content)
  meta/<same>.json           Triton's metadata (num_warps, num_ctas, shared, ...), when found
  gen/<name>.ptx             gen_triton_corpus.py output produced on the GPU machine
  versions.json, capture.log
A watchdog writes the archive and exits before --deadline seconds.
"""
import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = time.time()
LOG = io.StringIO()


def log(*a):
    s = "[%6.1fs] " % (time.time() - T0) + " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.write(s + "\n")


ap = argparse.ArgumentParser()
ap.add_argument("--out", required=True)
ap.add_argument("--deadline", type=float, default=420.0, help="seconds after which the archive is written")
ap.add_argument("--skip", default="", help="comma-separated stages to skip")
ap.add_argument("--dry", action="store_true", help="no torch: only gen + collect (for testing)")
args = ap.parse_args()
SKIP = set(x for x in args.skip.split(",") if x)

WORK = tempfile.mkdtemp(prefix="tidal_capture_")
DUMP = os.path.join(WORK, "dump")
os.environ.update({
    "TRITON_KERNEL_DUMP": "1",
    "TRITON_DUMP_DIR": DUMP,
    "TRITON_ALWAYS_COMPILE": "1",
    "TRITON_CACHE_DIR": os.path.join(WORK, "triton_cache"),
    "TORCHINDUCTOR_CACHE_DIR": os.path.join(WORK, "inductor_cache"),
    "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1",
    "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS": "TRITON,ATEN",
})
VERSIONS = {}
_done = threading.Lock()


# ----------------------------------------------------------------------------------------------
# collection
# ----------------------------------------------------------------------------------------------


def collect_and_write():
    seen = {}  # sha -> [name, data, [paths]]
    gdir = os.path.join(WORK, "gen")
    for root, _, files in sorted(os.walk(WORK)):
        if root == gdir or root.startswith(gdir + os.sep):
            continue
        for f in sorted(files):
            if not f.endswith(".ptx"):
                continue
            p = os.path.join(root, f)
            try:
                data = open(p, "rb").read()
            except OSError:
                continue
            h = hashlib.sha256(data).hexdigest()
            seen.setdefault(h, [f[:-4], data, []])[2].append(p)
    byname = {}
    for h, (n, d, paths) in seen.items():
        byname.setdefault(n, []).append((h, d, paths))
    entries = []
    for n, lst in sorted(byname.items()):
        lst.sort(key=lambda e: e[0])
        for h, d, paths in lst:
            fname = n if len(lst) == 1 else "%s_%s" % (n, h[:8])
            meta = None
            for p in paths:
                j = p[:-4] + ".json"
                if os.path.exists(j):
                    try:
                        meta = open(j, "rb").read()
                        break
                    except OSError:
                        pass
            entries.append((fname, d, meta))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with tarfile.open(tmp, "w:gz") as tf:
        def add(name, data):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mtime = int(time.time())
            tf.addfile(ti, io.BytesIO(data))
        for fname, d, meta in entries:
            add("ptx/%s.ptx" % fname, d)
            if meta is not None:
                add("meta/%s.json" % fname, meta)
        if os.path.isdir(gdir):
            for f in sorted(os.listdir(gdir)):
                if f.endswith(".ptx"):
                    add("gen/" + f, open(os.path.join(gdir, f), "rb").read())
        VERSIONS["n_unique_ptx"] = len(entries)
        add("versions.json", json.dumps(VERSIONS, indent=1, sort_keys=True).encode())
        add("capture.log", LOG.getvalue().encode())
    os.replace(tmp, args.out)
    return len(entries)


def finish(reason):
    if not _done.acquire(blocking=False):
        return
    log("finishing:", reason)
    try:
        n = collect_and_write()
        log("wrote %s: %d unique PTX, %d bytes" % (args.out, n, os.path.getsize(args.out)))
    except Exception:
        log("collect failed:\n" + traceback.format_exc())
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def watchdog():
    finish("deadline %.0fs reached" % args.deadline)


threading.Timer(args.deadline, watchdog).start()


def stage(name, fn):
    if name in SKIP:
        log("skip", name)
        return
    t = time.time()
    log("stage", name, "start")
    try:
        fn()
        log("stage", name, "ok in %.1fs" % (time.time() - t))
    except Exception:
        log("stage", name, "FAILED in %.1fs:\n%s" % (time.time() - t, traceback.format_exc()))
    try:
        n = sum(1 for r, _, fs in os.walk(WORK) for f in fs if f.endswith(".ptx"))
        log("  .ptx files under work dir so far:", n)
    except Exception:
        pass


# ----------------------------------------------------------------------------------------------
# stage: gen (local corpus generator, run on the GPU machine, no dump)
# ----------------------------------------------------------------------------------------------


def st_gen():
    env = dict(os.environ)
    for v in ("TRITON_KERNEL_DUMP", "TRITON_DUMP_DIR", "TRITON_ALWAYS_COMPILE", "TRITON_CACHE_DIR"):
        env.pop(v, None)
    r = subprocess.run([sys.executable, os.path.join(HERE, "gen_triton_corpus.py"), os.path.join(WORK, "gen"),
                        "--jobs", str(min(16, os.cpu_count() or 1))], env=env, capture_output=True, text=True,
                       timeout=150)
    tail = [l for l in r.stdout.splitlines() if not l.startswith("ok ")]
    log("gen rc=%d\n%s\n%s" % (r.returncode, "\n".join(tail[-20:]), r.stderr[-2000:] if r.returncode else ""))


if args.dry:
    stage("gen", st_gen)
    finish("dry run")

# ----------------------------------------------------------------------------------------------
# torch stages
# ----------------------------------------------------------------------------------------------

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

VERSIONS.update(torch=torch.__version__, triton=triton.__version__, cuda=torch.version.cuda,
                gpu=torch.cuda.get_device_name(0), capability=list(torch.cuda.get_device_capability(0)),
                python=sys.version.split()[0])
try:
    from triton import knobs
    px = knobs.nvidia.ptxas.path
    VERSIONS["triton_ptxas"] = px
    VERSIONS["triton_ptxas_version"] = subprocess.run([px, "--version"], capture_output=True,
                                                      text=True).stdout.strip().splitlines()[-1]
except Exception as e:  # noqa: BLE001
    VERSIONS["triton_ptxas"] = "?: %s" % e
log("versions", json.dumps(VERSIONS))

torch.set_float32_matmul_precision("high")
try:
    import torch._inductor.config as icfg
    for k, v in (("force_disable_caches", True), ("compile_threads", min(16, os.cpu_count() or 1))):
        if hasattr(icfg, k):
            setattr(icfg, k, v)
    if hasattr(icfg, "triton") and hasattr(icfg.triton, "enable_persistent_tma_matmul"):
        icfg.triton.enable_persistent_tma_matmul = True
        log("enabled inductor persistent TMA matmul templates")
except Exception as e:  # noqa: BLE001
    log("inductor config:", e)

MODE = "max-autotune-no-cudagraphs"


@triton.jit
def add_k(x, y, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)


@triton.jit
def softmax_k(x, o, stride, n, B: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, B)
    m = c < n
    v = tl.load(x + r * stride + c, mask=m, other=-float('inf'))
    v = v - tl.max(v, 0)
    e = tl.exp(v)
    tl.store(o + r * stride + c, e / tl.sum(e, 0), mask=m)


@triton.jit
def mm_k(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * sam + (k + rk)[None, :] * sak, mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0.)
        y = tl.load(b + (k + rk)[:, None] * sbk + rn[None, :] * sbn, mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                    other=0.)
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def st_probe():
    x = torch.randn(1 << 20, device='cuda')
    y = torch.randn_like(x)
    o = torch.empty_like(x)
    add_k[(triton.cdiv(x.numel(), 1024),)](x, y, o, x.numel(), B=1024)
    assert torch.allclose(o, x + y)
    s = torch.randn(512, 1000, device='cuda')
    so = torch.empty_like(s)
    softmax_k[(512,)](s, so, s.stride(0), 1000, B=1024)
    assert torch.allclose(so, torch.softmax(s, 1), atol=1e-5)
    A = torch.randn(512, 384, device='cuda', dtype=torch.float16)
    Bm = torch.randn(384, 256, device='cuda', dtype=torch.float16)
    C = torch.empty(512, 256, device='cuda', dtype=torch.float16)
    mm_k[(4, 4)](A, Bm, C, 512, 256, 384, A.stride(0), A.stride(1), Bm.stride(0), Bm.stride(1), C.stride(0),
                 C.stride(1), BM=128, BN=64, BK=32)
    torch.cuda.synchronize()
    log("probe mm err", (C.float() - A.float() @ Bm.float()).abs().max().item())


class Blk(torch.nn.Module):
    # the probe's model
    def __init__(s):
        super().__init__()
        s.ln = torch.nn.LayerNorm(256)
        s.fc1 = torch.nn.Linear(256, 1024)
        s.fc2 = torch.nn.Linear(1024, 256)
        s.conv = torch.nn.Conv2d(16, 32, 3, padding=1)
        s.bn = torch.nn.BatchNorm2d(32)

    def forward(s, t, img):
        h = t + s.fc2(torch.nn.functional.gelu(s.fc1(s.ln(t))))
        z = torch.relu(s.bn(s.conv(img))).mean((2, 3))
        return torch.softmax(h @ h.transpose(-1, -2) / 16.0, -1) @ h, z


def st_blk():
    m = Blk().cuda().eval()
    with torch.no_grad():
        f = torch.compile(m, mode=MODE)
        r = f(torch.randn(8, 128, 256, device='cuda'), torch.randn(8, 16, 32, 32, device='cuda'))
    torch.cuda.synchronize()
    log("blk out", tuple(r[0].shape), tuple(r[1].shape))


class RMSNorm(torch.nn.Module):
    def __init__(s, d):
        super().__init__()
        s.w = torch.nn.Parameter(torch.ones(d))

    def forward(s, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * s.w


class GatedMLP(torch.nn.Module):
    def __init__(s, d=512, h=1536, vocab=1024):
        super().__init__()
        s.emb = torch.nn.Embedding(vocab, d)
        s.norm = RMSNorm(d)
        s.gate = torch.nn.Linear(d, h, bias=False)
        s.up = torch.nn.Linear(d, h, bias=False)
        s.down = torch.nn.Linear(h, d, bias=False)
        s.head = torch.nn.Linear(d, vocab, bias=False)

    def forward(s, ids, tgt):
        x = s.emb(ids)
        h = s.norm(x)
        x = x + s.down(torch.nn.functional.silu(s.gate(h)) * s.up(h))
        logits = s.head(x)
        return torch.nn.functional.cross_entropy(logits.float().view(-1, logits.shape[-1]), tgt.view(-1))


def st_mlp():
    m = GatedMLP().cuda().to(torch.bfloat16)
    f = torch.compile(m, mode=MODE)
    ids = torch.randint(0, 1024, (4, 128), device='cuda')
    tgt = torch.randint(0, 1024, (4, 128), device='cuda')
    loss = f(ids, tgt)
    loss.backward()
    torch.cuda.synchronize()
    log("mlp loss", loss.item())


def misc_ops(x, idx, src, img, v):
    a, b = torch.var_mean(x, dim=1)
    c = torch.cumsum(x, dim=1)
    st, si = torch.sort(x, dim=1, descending=True)
    tv, ti = torch.topk(x, 8, dim=1)
    sc = torch.zeros(64, x.shape[1], device=x.device).index_add_(0, idx, src)
    p = torch.nn.functional.max_pool2d(img, 2) + torch.nn.functional.avg_pool2d(img, 2)
    up = torch.nn.functional.interpolate(img, scale_factor=2, mode="bilinear", align_corners=False)
    d = torch.nn.functional.dropout(x, 0.1, training=True)
    am = torch.argmax(x, dim=1)
    lse = torch.logsumexp(x, dim=1)
    n = torch.nn.functional.normalize(v.float(), dim=-1).to(v.dtype)
    g = torch.nn.functional.group_norm(img, 4)
    return a, b, c, st, si, tv, ti, sc, p, up.sum((2, 3)), d, am, lse, n, g


def st_misc():
    f = torch.compile(misc_ops, mode=MODE)
    x = torch.randn(256, 512, device='cuda')
    idx = torch.randint(0, 64, (1024,), device='cuda')
    src = torch.randn(1024, 512, device='cuda')
    img = torch.randn(8, 16, 32, 32, device='cuda')
    v = torch.randn(128, 256, device='cuda', dtype=torch.float16)
    f(x, idx, src, img, v)
    # embedding backward (atomics / sorting) and a conv backward in a training step
    emb = torch.nn.Embedding(4096, 256).cuda()
    conv = torch.nn.Conv2d(16, 16, 3, padding=1).cuda()

    def train(ids, im):
        return emb(ids).float().pow(2).sum() + torch.nn.functional.silu(conv(im)).sum()
    g = torch.compile(train, mode=MODE)
    g(torch.randint(0, 4096, (8, 64), device='cuda'), img).backward()
    torch.cuda.synchronize()


def st_flex():
    from torch.nn.attention.flex_attention import flex_attention, create_block_mask

    def causal(b, h, q, kv):
        return q >= kv

    B, Hh, S, D = 2, 4, 256, 64
    bm = create_block_mask(causal, B, Hh, S, S, device='cuda')
    q, k, v = (torch.randn(B, Hh, S, D, device='cuda', dtype=torch.bfloat16) for _ in range(3))
    fa = torch.compile(flex_attention)

    def score_mod(score, b, h, qi, kv):
        return score + (qi - kv).to(score.dtype) * 0.01
    o1 = fa(q, k, v, block_mask=bm)
    o2 = fa(q, k, v, score_mod=score_mod)
    torch.cuda.synchronize()
    log("flex out", tuple(o1.shape), tuple(o2.shape))


stage("gen", st_gen)
stage("probe", st_probe)
for name, fn, budget in (("blk", st_blk, 300), ("mlp", st_mlp, 300), ("misc", st_misc, 330), ("flex", st_flex, 340)):
    if time.time() - T0 > budget:
        log("skip", name, "(time budget)")
        continue
    stage(name, fn)
finish("all stages done")
