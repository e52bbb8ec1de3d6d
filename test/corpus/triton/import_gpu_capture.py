#!/usr/bin/env python3
"""Unpack a capture_gpu.py archive into gpu/*.ptx, choosing a size-bounded, diverse subset.

Usage: python3 import_gpu_capture.py triton_ptx.tar.gz OUTDIR [--budget BYTES] [--ptxas PATH]

The capture holds hundreds of autotuning variants (triton_mm, triton_mm_persistent_tma, ...),
too many bytes to commit.  Selection is greedy: each step takes the file that adds the most
not-yet-covered items, weighted as
    10  a distinct instruction (full opcode with modifiers, e.g. wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16)
    10  a distinct directive form (first two tokens, e.g. `.maxnreg 168`, `.extern .func`)
     5  a kernel family (name without numeric suffix)
     2  a (family, num_warps, num_stages, num_ctas, .version) configuration
(ties: the smaller file), until nothing new is added or the byte budget is reached.  Every
chosen file must assemble with `ptxas -arch=sm_90a`; files that do not are skipped and
reported.  Files are named <kernel>.ptx (<kernel>_<sha8>.ptx when the name repeats).
MANIFEST.tsv lists each file with Triton's metadata (num_warps, num_stages, num_ctas, shared).
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile

INSTR_RE = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.:]*)", re.M)
DIRECTIVE_RE = re.compile(r"^\s*(\.[a-z_]+)(?:[ \t]+([^\s,;(\[{]+))?", re.M)
SKIP_DIRECTIVES = {".b8", ".b16", ".b32", ".b64", ".loc", ".file", ".param", ".reg"}


def family(name):
    n = re.sub(r"_[0-9a-f]{8}$", "", name)
    return re.sub(r"_\d+$", "", n)


def items(name, text, meta):
    s = {}
    body = re.sub(r"//[^\n]*", "", text)
    for m in INSTR_RE.finditer(body):
        op = m.group(1)
        if op.startswith("$"):
            continue
        s["i:" + op] = 10
    for m in DIRECTIVE_RE.finditer(body):
        d = m.group(1)
        if d in SKIP_DIRECTIVES:
            continue
        arg = m.group(2) or ""
        if d in (".reqntid", ".maxnreg", ".maxntid", ".pragma", ".extern", ".global", ".shared", ".local",
                 ".reqnctapercluster", ".section"):
            s["d:%s %s" % (d, arg)] = 10
        else:
            s["d:" + d] = 10
    fam = family(name)
    s["f:" + fam] = 5
    ver = re.search(r"^\.version\s+(\S+)", text, re.M)
    cfg = (fam, meta.get("num_warps"), meta.get("num_stages"), meta.get("num_ctas"), ver.group(1) if ver else "?")
    s["c:%r" % (cfg,)] = 2
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tar")
    ap.add_argument("outdir")
    ap.add_argument("--budget", type=int, default=3_400_000)
    ap.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    a = ap.parse_args()

    ptx, meta = {}, {}
    versions = {}
    with tarfile.open(a.tar) as tf:
        for m in tf.getmembers():
            if not m.isfile():
                continue
            data = tf.extractfile(m).read()
            if m.name.startswith("ptx/") and m.name.endswith(".ptx"):
                ptx[m.name[4:-4]] = data.decode()
            elif m.name.startswith("meta/") and m.name.endswith(".json"):
                meta[m.name[5:-5]] = json.loads(data)
            elif m.name == "versions.json":
                versions = json.loads(data)
    # drop exact duplicates (the capture already did; be safe)
    byhash = {}
    for n in sorted(ptx):
        byhash.setdefault(hashlib.sha256(ptx[n].encode()).hexdigest(), n)
    names = sorted(byhash.values())
    cand = {n: items(n, ptx[n], meta.get(n, {})) for n in names}
    covered = set()
    chosen, used, rejected = [], 0, []
    while True:
        best, best_gain, best_size = None, 0, None
        for n in names:
            if n in chosen or n in rejected:
                continue
            size = len(ptx[n].encode())
            if used + size > a.budget:
                continue
            gain = sum(w for k, w in cand[n].items() if k not in covered)
            if gain > best_gain or (gain == best_gain and gain > 0 and size < best_size):
                best, best_gain, best_size = n, gain, size
        if best is None:
            break
        tmp = os.path.join(a.outdir, ".check.ptx")
        os.makedirs(a.outdir, exist_ok=True)
        with open(tmp, "w") as f:
            f.write(ptx[best])
        r = subprocess.run([a.ptxas, "-arch=sm_90a", tmp, "-o", os.devnull], capture_output=True, text=True)
        os.unlink(tmp)
        if r.returncode != 0:
            print("ptxas rejects %s:\n%s" % (best, r.stderr), file=sys.stderr)
            rejected.append(best)
            continue
        chosen.append(best)
        used += best_size
        covered |= set(cand[best])
    # output names: family-based name of the kernel entry; add sha8 when repeated
    entry = {}
    for n in chosen:
        m = re.search(r"^\.visible\s+\.entry\s+(\w+)", ptx[n], re.M)
        entry[n] = m.group(1) if m else family(n)
    counts = {}
    for n in chosen:
        counts[entry[n]] = counts.get(entry[n], 0) + 1
    rows = []
    for n in sorted(chosen):
        h = hashlib.sha256(ptx[n].encode()).hexdigest()[:8]
        fn = entry[n] if counts[entry[n]] == 1 else "%s_%s" % (entry[n], h)
        with open(os.path.join(a.outdir, fn + ".ptx"), "w") as f:
            f.write(ptx[n])
        md = meta.get(n, {})
        ver = re.search(r"^\.version\s+(\S+)", ptx[n], re.M)
        rows.append((fn + ".ptx", str(md.get("num_warps", "")), str(md.get("num_stages", "")),
                     str(md.get("num_ctas", "")), str(md.get("shared", "")), ver.group(1) if ver else "",
                     str(len(ptx[n].encode()))))
    with open(os.path.join(a.outdir, "MANIFEST.tsv"), "w") as f:
        f.write("# captured with %s\n" % json.dumps(versions, sort_keys=True))
        f.write("# %d of %d unique captured kernels chosen (greedy coverage, budget %d bytes)\n"
                % (len(chosen), len(names), a.budget))
        f.write("file\tnum_warps\tnum_stages\tnum_ctas\tshared\tptx_version\tbytes\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    print("chose %d of %d kernels, %d bytes; %d rejected by ptxas; %d items covered"
          % (len(chosen), len(names), used, len(rejected), len(covered)))
    allitems = set()
    for n in names:
        allitems |= set(cand[n])
    missing = sorted(k for k in allitems - covered if not k.startswith("c:"))
    if missing:
        print("not covered (budget):", ", ".join(missing[:40]))


if __name__ == "__main__":
    main()
