#!/usr/bin/env python3
"""bench/vram/analyze.py -- turn tidal-vram-probe's raw files into findings.

    python3 bench/vram/analyze.py OUTDIR

Reads what vram_probe.cu wrote into OUTDIR (calib.bin, side.bin, slice*.bin,
slice_runs.csv, lineres.bin, iso.csv, meta.txt), writes summary.md (the numbers
docs/vram-channels.md quotes), map.json (the class model and its held-out
accuracy) and PNG plots. Each part is skipped, with a line saying so, when its
input is missing. numpy and matplotlib (the GPU machine has both).
"""
import csv
import json
import os
import sys

import numpy as np

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:  # the numbers still come out
    plt = None

LINE = 128


def read_bin(path, dtype=np.uint16):
    """(magic, (a, b, c), payload bytes) of one of the probe's binary files."""
    with open(path, "rb") as f:
        raw = f.read()
    magic = raw[:8].rstrip(b"\0").decode()
    a, b, c, _ = np.frombuffer(raw[8:24], dtype=np.uint32)
    return magic, (int(a), int(b), int(c)), raw[24:]


def meta(out):
    m = {}
    with open(os.path.join(out, "meta.txt")) as f:
        for line in f:
            k, v = line.split()
            m[k] = int(v)
    return m


class Report:
    def __init__(self, out):
        self.out = out
        self.lines = []

    def say(self, s=""):
        print(s)
        self.lines.append(s)

    def save(self):
        with open(os.path.join(self.out, "summary.md"), "w") as f:
            f.write("\n".join(self.lines) + "\n")


def pct(v, q):
    return float(np.percentile(v, q))


def do_calib(out, rep, mhz):
    path = os.path.join(out, "calib.bin")
    if not os.path.exists(path):
        rep.say("calib: no calib.bin")
        return
    _, (n, k, stride), raw = read_bin(path)
    v = np.frombuffer(raw, dtype=np.uint16).reshape(k, n)
    names = ["first touch after a flush (DRAM)", "second touch (L2 hit)", "touch again (L2 hit)",
             "touch after discard.global.L2"]
    rep.say("## calib: SM 0, %d lines of granule 0 at %d B" % (n, stride))
    rep.say("")
    rep.say("| access | median (cycles) | p10 | p90 | median (ns) |")
    rep.say("|---|---|---|---|---|")
    for i in range(k):
        rep.say("| %s | %d | %d | %d | %.0f |" % (names[i], pct(v[i], 50), pct(v[i], 10), pct(v[i], 90),
                                                 pct(v[i], 50) / mhz * 1e3))
    rep.say("")
    disc = pct(v[3], 50) > 1.5 * pct(v[2], 50)
    rep.say("discard.global.L2 sends the next read to DRAM: %s" % ("yes" if disc else "no"))
    rep.say("")
    if plt:
        fig, ax = plt.subplots(figsize=(7, 3.5))
        for i in range(k):
            ax.hist(v[i], bins=np.arange(0, max(2000, pct(v[i], 99.5)), 10), histtype="step", label=names[i])
        ax.set_xlabel("latency (SM cycles)")
        ax.set_ylabel("lines")
        ax.legend(fontsize=7)
        ax.set_xlim(0, pct(v[0], 99.5) * 1.2)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "calib.png"), dpi=110)
        plt.close(fig)


def do_side(out, rep):
    path = os.path.join(out, "side.bin")
    if not os.path.exists(path):
        rep.say("side: no side.bin")
        return None
    _, (nsm, n, stride), raw = read_bin(path)
    v = np.frombuffer(raw, dtype=np.uint16).reshape(3, nsm, n).astype(np.float64)
    cold, hit, xhit = v
    rep.say("## side: every SM, %d lines of granule 0 at %d B" % (n, stride))
    rep.say("")
    # SMs whose touch of lines SM 0 warmed is as fast as their own second touch share
    # SM 0's L2 side; the others pay the trip to the other side (or to DRAM)
    xm = np.median(xhit, axis=1)
    hm = np.median(hit, axis=1)
    cm = np.median(cold, axis=1)
    order = np.sort(xm)
    gaps = np.diff(order)
    cut = order[int(np.argmax(gaps))] if len(order) > 1 else order[0]
    near = xm <= cut
    rep.say("| | SMs | first touch median | second touch median | touch of SM 0's lines median |")
    rep.say("|---|---|---|---|---|")
    for name, sel in (("SM 0's side", near), ("other side", ~near)):
        if sel.any():
            rep.say("| %s | %d | %.0f | %.0f | %.0f |" % (name, sel.sum(), np.median(cm[sel]), np.median(hm[sel]),
                                                         np.median(xm[sel])))
    rep.say("")
    rep.say("SM 0's side: %s" % compress_ranges(np.nonzero(near)[0]))
    rep.say("")
    # per line: a far-side SM touching a line SM 0 warmed hits in its own L2 side when
    # that side homes the line, and comes across when SM 0's side does
    res = {"near_sms": [int(s) for s in np.nonzero(near)[0]]}
    if near.any() and (~near).any():
        far_x = np.median(xhit[~near], axis=0)
        mid = 0.5 * (pct(far_x, 5) + pct(far_x, 95))
        home = (far_x < mid).astype(int)  # 1: the other side homes it
        rep.say("lines SM 0 warmed, touched from the other side: median %.0f cycles where that side homes them, "
                "%.0f where SM 0's side does; %d of %d lines homed on the other side"
                % (np.median(far_x[home == 1]), np.median(far_x[home == 0]), home.sum(), n))
        cold_near = np.median(cold[near], axis=0)
        rep.say("first touch (DRAM) from SM 0's side: median %.0f cycles for lines it homes, %.0f for the others"
                % (np.median(cold_near[home == 0]), np.median(cold_near[home == 1])))
        runs = run_lengths(home)
        rep.say("runs of one home side: median %.0f lines of %d B, max %d" % (np.median(runs), stride, max(runs)))
        rep.say("")
        res["home"] = home
        res["stride"] = stride
    if plt:
        fig, axs = plt.subplots(1, 3, figsize=(13, 4))
        for ax, m, t in zip(axs, (cold, hit, xhit), ("first touch", "second touch", "lines SM 0 warmed")):
            lo, hi = pct(m, 2), pct(m, 98)
            im = ax.imshow(m[:, :512], aspect="auto", vmin=lo, vmax=hi, interpolation="nearest")
            ax.set_title(t, fontsize=9)
            ax.set_xlabel("line (x %d B) of granule 0" % stride)
            ax.set_ylabel("SM")
            fig.colorbar(im, ax=ax, fraction=0.04)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "side.png"), dpi=100)
        plt.close(fig)
    return res


def do_home(out, rep):
    path = os.path.join(out, "home.bin")
    if not os.path.exists(path):
        rep.say("home: no home.bin")
        return None
    _, (ng, n, stride), raw = read_bin(path)
    v = np.frombuffer(raw, dtype=np.uint16).reshape(ng, n).astype(np.float64)
    mid = 0.5 * (pct(v, 5) + pct(v, 95))
    home = (v < mid).astype(np.int64)  # 1: homed on the far SM's side
    real, remap = home[:-1], home[-1]
    rep.say("## home: the L2 side of every %d B line of %d granules (SM 0 warms, a far SM touches)" % (stride, ng - 1))
    rep.say("")
    rep.say("latency from the far SM: median %.0f cycles (its side homes the line) vs %.0f (SM 0's side); "
            "threshold %.0f; lines on the far side %.1f%%" % (np.median(v[home == 1]), np.median(v[home == 0]), mid,
                                                              100 * real.mean()))
    rep.say("remap (granule 0's memory at another address): %d of %d lines on the same side as granule 0"
            % ((remap == real[0]).sum(), n))
    runs = [x for g in range(real.shape[0]) for x in run_lengths(real[g])]
    rep.say("runs of one side: median %.0f lines (%.0f B), p90 %.0f, max %d" % (
        np.median(runs), np.median(runs) * stride, pct(runs, 90), max(runs)))
    # a granule as granule 0's pattern, or its complement?
    same = (real == real[0]).mean(axis=1)
    best = np.maximum(same, 1 - same)
    rep.say("granule g's sides = granule 0's or their complement: agreement median %.3f, min %.3f; "
            "complemented granules %d of %d" % (np.median(best[1:]), best[1:].min(), (same[1:] < 0.5).sum(),
                                                real.shape[0] - 1))
    # the side of an aligned block of 2^k lines: is it uniform (the grain)?
    for k in range(0, 6):
        w = 1 << k
        if n % w:
            break
        blocks = real.reshape(real.shape[0], n // w, w)
        uni = (blocks.min(axis=2) == blocks.max(axis=2)).mean()
        rep.say("- aligned %d B blocks of one side: %.1f%%" % (w * stride, 100 * uni))
    # the model: side = parity(block & mask) ^ flip(granule), block = offset >> log2(grain),
    # grain = the smallest aligned block of one side; mask fitted on granule 0, each
    # granule's flip learned from ONE probed block, accuracy on all its other lines
    model = None
    grain_lines = next((1 << k for k in range(12) if n % (1 << k) == 0 and (1 << (k + 1)) <= n and
                        (real.reshape(real.shape[0], n >> (k + 1), 1 << (k + 1)).min(axis=2) !=
                         real.reshape(real.shape[0], n >> (k + 1), 1 << (k + 1)).max(axis=2)).any()), None)
    if grain_lines:
        blocks = real[:, ::grain_lines]
        nb = blocks.shape[1]
        nbits = max(1, (nb - 1).bit_length())
        par = np.array([[bin(b & m).count("1") & 1 for b in range(nb)] for m in range(1 << nbits)])
        acc0 = (par == blocks[0][None, :]).mean(axis=1)
        m = int(np.argmax(np.maximum(acc0, 1 - acc0)))
        base = par[m] ^ (1 if acc0[m] < 0.5 else 0)
        rng = np.random.default_rng(7)
        hits = tot = 0
        for g in range(real.shape[0]):
            probe = int(rng.integers(nb))
            flip = int(blocks[g][probe] != base[probe])
            pred = np.repeat(base ^ flip, grain_lines)
            keep = np.ones(n, bool)
            keep[probe * grain_lines:(probe + 1) * grain_lines] = False
            hits += int((pred[keep] == real[g][keep]).sum())
            tot += int(keep.sum())
        model = {"grain_bytes": int(grain_lines * stride), "block_mask": m, "granule0_flip": int(acc0[m] < 0.5),
                 "held_out_accuracy": hits / tot}
        rep.say("model: side = parity((offset / %d) & 0x%x) ^ flip(granule); flip learned from one probed block "
                "per granule: held-out accuracy %.4f over %d lines" % (grain_lines * stride, m, hits / tot, tot))
    rep.say("")
    if plt:
        fig, ax = plt.subplots(figsize=(12, 4))
        ax.imshow(real[:32, :1024], aspect="auto", interpolation="nearest", cmap="coolwarm")
        ax.set_xlabel("line (x %d B) in the granule" % stride)
        ax.set_ylabel("granule")
        ax.set_title("L2 side homing each line (red: the far SM's side)", fontsize=9)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "home-map.png"), dpi=100)
        plt.close(fig)
    return {"stride": stride, "far_fraction": float(real.mean()), "agreement_or_complement": float(np.median(best[1:])),
            "model": model, "granule0": [int(x) for x in real[0]]}


def compress_ranges(v):
    v = list(v)
    if not v:
        return "none"
    out, a, b = [], v[0], v[0]
    for x in v[1:]:
        if x == b + 1:
            b = x
        else:
            out.append("%d-%d" % (a, b) if a != b else "%d" % a)
            a = b = x
    out.append("%d-%d" % (a, b) if a != b else "%d" % a)
    return ",".join(out)


def run_lengths(x):
    if len(x) == 0:
        return []
    r, n = [], 1
    for i in range(1, len(x)):
        if x[i] == x[i - 1]:
            n += 1
        else:
            r.append(n)
            n = 1
    r.append(n)
    return r


def do_slice(out, rep, m):
    path = os.path.join(out, "slice.bin")
    if not os.path.exists(path):
        rep.say("slice: no slice.bin")
        return None
    _, (nchunk, per_gran, grain), raw = read_bin(path)
    cls = np.frombuffer(raw, dtype=np.int16).astype(np.int64)
    ngran = nchunk // per_gran  # the granules and the remap (last)
    cls = cls.reshape(ngran, per_gran)
    real = cls[:-1]
    remap = cls[-1]
    rep.say("## slice: classes by L2-hit contention, %d granules + the remap, %d B chunks" % (ngran - 1, grain))
    rep.say("")
    runs = []
    with open(os.path.join(out, "slice_runs.csv")) as f:
        runs = list(csv.DictReader(f))
    ncls = int(cls.max()) + 1 if cls.max() >= 0 else 0
    unclassified = int((real < 0).sum())
    sizes = np.bincount(real[real >= 0].ravel(), minlength=ncls) if ncls else np.array([])
    big = sizes[sizes >= 0.5 * sizes.max()] if ncls else sizes
    rep.say("runs %d; classes %d, of which %d hold at least half as many chunks as the largest (%.1f%% of all "
            "chunks each: 1/%.1f); chunks unclassified %d of %d" % (
                len(runs), ncls, len(big), 100 * np.median(big) / real.size if len(big) else 0,
                real.size / np.median(big) if len(big) else 0, unclassified, real.size))
    if ncls:
        rep.say("class size (chunks, over all granules): median %d, p10 %d, p90 %d, min %d, max %d" % (
            np.median(sizes), pct(sizes, 10), pct(sizes, 90), sizes.min(), sizes.max()))
    falses = sum(int(r["check_false"]) for r in runs)
    checks = sum(int(r["checks"]) for r in runs)
    errs = sum(1 for r in runs if int(r["err"]))
    rep.say("checks (chunks of earlier classes re-timed under each hog): %d of %d lit up; runs with errors %d" % (
        falses, checks, errs))
    same = (remap == real[0]) & (remap >= 0)
    rep.say("remap (granule 0's memory at another address): %d of %d chunks in the same class as granule 0" % (
        same.sum(), per_gran))
    rep.say("")
    res = {"classes": ncls, "grain": grain, "per_gran": per_gran}
    if not ncls:
        return res
    # per granule: how many distinct classes, and does each class stay in one granule?
    per_g = [len(set(real[g][real[g] >= 0].tolist())) for g in range(real.shape[0])]
    rep.say("distinct classes per granule: median %d, min %d, max %d" % (np.median(per_g), min(per_g), max(per_g)))
    # m-permutation: within a granule, do consecutive runs of m chunks cover m classes?
    m_ = int(round(np.median(per_g)))
    if m_ > 1:
        cover = []
        for g in range(real.shape[0]):
            row = real[g]
            for s in range(0, per_gran - m_ + 1, m_):
                w = row[s:s + m_]
                w = w[w >= 0]
                if len(w):
                    cover.append(len(set(w.tolist())) / len(w))
        rep.say("windows of %d consecutive chunks: distinct classes / chunks, mean %.3f (1.0: a permutation)" % (
            m_, np.mean(cover)))
    # cross-granule structure: is granule g's class a function of granule 0's class at
    # the same offset? (then a granule is described by a relabelling of granule 0)
    fn = []
    for g in range(1, real.shape[0]):
        ok = (real[0] >= 0) & (real[g] >= 0)
        a, b = real[0][ok], real[g][ok]
        agree = 0
        for c in np.unique(a):
            vals = b[a == c]
            agree += np.bincount(vals).max()
        fn.append(agree / max(1, len(a)))
    rep.say("granule g's class as a function of granule 0's class at the same offset: agreement median %.3f, "
            "min %.3f (1.0: every granule is a relabelling of granule 0)" % (np.median(fn), min(fn)))
    rep.say("")
    res["relabel_agreement"] = [float(x) for x in fn]
    res["classes_per_granule"] = per_g
    res["class_sizes"] = [int(x) for x in sizes]
    res["table"] = real
    model_accuracy(real, rep, res)
    lineres(out, rep, grain)
    if plt:
        fig, ax = plt.subplots(figsize=(12, 5))
        show = real[: min(32, real.shape[0]), : min(512, per_gran)].astype(float)
        show[show < 0] = np.nan
        ax.imshow(show, aspect="auto", interpolation="nearest", cmap="tab20")
        ax.set_xlabel("chunk (x %d B) in the granule" % grain)
        ax.set_ylabel("granule")
        ax.set_title("class of each chunk (colour = class id mod 20)", fontsize=9)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "slice-map.png"), dpi=100)
        plt.close(fig)
        samp = os.path.join(out, "slice_sample.bin")
        if os.path.exists(samp):
            _, (nr, ns, _), raw = read_bin(samp)
            s = np.frombuffer(raw, dtype=np.uint16).reshape(nr, ns)
            fig, ax = plt.subplots(figsize=(7, 3.5))
            for r in range(min(4, len(runs))):
                x = s[r][s[r] > 0]
                ax.hist(x, bins=np.arange(0, pct(x, 99.9) + 20, 10), histtype="step", label="run %d" % r)
            ax.set_yscale("log")
            ax.set_xlabel("victim L2-hit latency under the hog (cycles)")
            ax.set_ylabel("chunks")
            ax.legend(fontsize=7)
            fig.tight_layout()
            fig.savefig(os.path.join(out, "slice-hist.png"), dpi=110)
            plt.close(fig)
    return res


def model_accuracy(real, rep, res):
    """Model: granule 0's class table, relabelled per granule from k probed chunks; the
    accuracy of predicting a granule's other chunks (held out)."""
    rng = np.random.default_rng(1)
    base = real[0]
    acc = {}
    for k in (8, 32, 128, 512):
        hits = tot = 0
        for g in range(1, real.shape[0]):
            row = real[g]
            ok = np.nonzero((row >= 0) & (base >= 0))[0]
            if len(ok) <= k:
                continue
            train = rng.choice(ok, size=k, replace=False)
            test = np.setdiff1d(ok, train)
            lab = {}
            for i in train:
                lab.setdefault(int(base[i]), []).append(int(row[i]))
            lab = {c: max(set(v), key=v.count) for c, v in lab.items()}
            pred = np.array([lab.get(int(base[i]), -2) for i in test])
            hits += int((pred == row[test]).sum())
            tot += len(test)
        if tot:
            acc[k] = hits / tot
    if acc:
        rep.say("model (granule 0's table relabelled from k probed chunks per granule), held-out accuracy: " +
                ", ".join("k=%d: %.3f" % (k, a) for k, a in acc.items()))
        rep.say("")
    res["model_accuracy"] = {str(k): a for k, a in acc.items()}


def lineres(out, rep, grain):
    path = os.path.join(out, "lineres.bin")
    if not os.path.exists(path):
        return
    _, (nr, nl, line), raw = read_bin(path)
    hogs = np.frombuffer(raw[: nr * 8], dtype=np.uint64)
    v = np.frombuffer(raw[nr * 8:], dtype=np.uint16).reshape(nr, nl)
    per = grain // line
    rep.say("line resolution (granule 0, every %d B line, first %d runs):" % (line, nr))
    for r in range(nr):
        med = np.median(v[r])
        lit = v[r] >= 2 * med
        chunks = lit.reshape(-1, per)
        full = int((chunks.all(axis=1)).sum())
        part = int((chunks.any(axis=1) & ~chunks.all(axis=1)).sum())
        rep.say("- run %d (hog at +%d): %d lines lit; %d chunks wholly lit, %d partly" % (
            r, int(hogs[r]), int(lit.sum()), full, part))
    rep.say("")


STATS = ("ls_median", "ls_p90", "ls_p99", "be_gbs")


def iso_table(out, rep, csvname, keycols, title, notes, png):
    """One isolation experiment's CSV: a row per configuration (keycols), the median of each
    statistic over its runs, and a plot. Returns {configuration: (median, p90, p99, GB/s)}."""
    path = os.path.join(out, csvname)
    if not os.path.exists(path):
        rep.say("%s: no %s" % (title.split(":")[0], csvname))
        return None
    with open(path) as f:
        rows = list(csv.DictReader(f))
    rep.say("## " + title)
    rep.say("")
    for n in notes:
        rep.say(n)
        rep.say("")
    names = {"ls_set": "LS on", "be_set": "BE on", "be_sms": "BE SMs"}
    rep.say("| " + " | ".join(names[c] for c in keycols) + " | LS median (cycles) | LS p90 | LS p99 | BE GB/s | runs |")
    rep.say("|" + "---|" * (len(keycols) + 5))
    agg = {}
    for r in rows:
        agg.setdefault(tuple(r[c] for c in keycols), []).append(r)
    for k, sel in agg.items():
        agg[k] = tuple(float(np.median([float(r[c]) for r in sel])) for c in STATS)
        rep.say("| " + " | ".join(k) + " | %.0f | %.0f | %.0f | %.1f | %d |" % (agg[k] + (len(sel),)))
    rep.say("")
    if plt and agg:
        keys = list(agg)
        fig, ax = plt.subplots(figsize=(8, 3.8))
        ax.bar(range(len(keys)), [agg[k][0] for k in keys], label="LS median")
        ax.scatter(range(len(keys)), [agg[k][2] for k in keys], color="k", marker="_", s=200, label="LS p99")
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels(["LS %s\nBE %s" % (k[0], "@".join(k[1:])) for k in keys], fontsize=6)
        ax.set_ylabel("LS DRAM latency (cycles)")
        ax2 = ax.twinx()
        ax2.plot(range(len(keys)), [agg[k][3] for k in keys], "r.-")
        ax2.set_ylabel("BE GB/s", color="r")
        ax.legend(fontsize=7, loc="upper left")
        fig.tight_layout()
        fig.savefig(os.path.join(out, png), dpi=110)
        plt.close(fig)
    return agg


def increase(rep, agg, colored, uncolored, alone_c, alone_u, what):
    """The LS median's increase under BE with and without coloring."""
    if not all(k in agg for k in (colored, uncolored, alone_c, alone_u)):
        return
    inc_c, inc_u = agg[colored][0] - agg[alone_c][0], agg[uncolored][0] - agg[alone_u][0]
    rep.say("LS median increase under BE %s: colored %+.0f cycles, uncolored %+.0f; BE %.1f vs %.1f GB/s" % (
        what, inc_c, inc_u, agg[colored][3], agg[uncolored][3]))
    rep.say("")


def as_json(agg):
    return {"/".join(k): dict(zip(STATS, v)) for k, v in agg.items()} if agg else None


def do_iso(out, rep):
    agg = iso_table(out, rep, "iso.csv", ("ls_set", "be_set"),
                    "iso: LS DRAM latency (one thread, lines touched once) next to a BE stream, by class",
                    ["A: every third of the slice classes; B: the others."], "iso.png")
    if agg:
        increase(rep, agg, ("A", "B"), ("all", "all"), ("A", "none"), ("all", "none"), "on every other SM")
    return as_json(agg)


def do_iso_side(out, rep):
    agg = iso_table(out, rep, "iso_side.csv", ("ls_set", "be_set", "be_sms"),
                    "iso-side: LS on SM 0 (DRAM latency, lines touched once) next to a BE stream, by L2 side",
                    ["H0: lines SM 0's side homes; H1: lines the other side homes; BE on `side1` runs on the other "
                     "side's SMs only, on `all-but-0` on every SM but LS's."], "iso-side.png")
    if agg:
        increase(rep, agg, ("H0", "H1", "side1"), ("all", "all", "side1"), ("H0", "none", "-"), ("all", "none", "-"),
                 "on the other side's SMs")
        increase(rep, agg, ("H0", "H1", "all-but-0"), ("all", "all", "all-but-0"), ("H0", "none", "-"),
                 ("all", "none", "-"), "on every SM but LS's")
    return as_json(agg)


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print(__doc__)
        sys.exit(2)
    out = sys.argv[1]
    m = meta(out)
    mhz = m["clock_khz"] / 1e3
    rep = Report(out)
    rep.say("# tidal-vram-probe: %d SMs, L2 %d MiB, %d-bit bus, granule %d KiB, SM clock %.0f MHz (attribute)" % (
        m["sms"], m["l2"] >> 20, m["bus_bits"], m["granule"] >> 10, mhz))
    rep.say("")
    do_calib(out, rep, mhz)
    side = do_side(out, rep)
    home = do_home(out, rep)
    sl = do_slice(out, rep, m)
    iso_side = do_iso_side(out, rep)
    iso = do_iso(out, rep)
    model = {"granule_bytes": m["granule"], "grain": m["grain"]}
    if side and "home" in side:
        model["l2_side"] = {"sm0_side": side["near_sms"], "stride": side["stride"],
                            "granule0_home": [int(x) for x in side["home"]]}
    if home:
        model["l2_home"] = home
    if sl:
        model["classes"] = sl.get("classes")
        model["model_accuracy"] = sl.get("model_accuracy")
        model["relabel_agreement_median"] = (float(np.median(sl["relabel_agreement"]))
                                             if sl.get("relabel_agreement") else None)
        if "table" in sl:
            model["granule0_classes"] = [int(x) for x in sl["table"][0]]
    if iso_side:
        model["isolation_by_side"] = iso_side
    if iso:
        model["isolation"] = iso
    with open(os.path.join(out, "map.json"), "w") as f:
        json.dump(model, f, indent=1)
    rep.save()


if __name__ == "__main__":
    main()
