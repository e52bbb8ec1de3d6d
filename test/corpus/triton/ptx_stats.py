#!/usr/bin/env python3
"""Feature counts over a directory of PTX files (used for README.md).

Usage: python3 ptx_stats.py DIR [DIR...] [--per-file]

For each feature, prints how many files contain it. A "named barrier" is a bar/barrier
instruction whose id operand is not the literal 0, or that has a thread-count operand.
"""
import os
import re
import sys

BAR_RE = re.compile(r"^\s*(?:@!?%\w+\s+)?(bar|barrier)(\.cta)?\.(sync|arrive|red)(\.aligned)?(\.\w+)*\s+([^;]*);", re.M)

FEATURES = [
    # (tag, regex)
    ("wgmma.mma_async", r"\bwgmma\.mma_async"),
    ("wgmma.fence/commit/wait", r"\bwgmma\.(fence|commit_group|wait_group)"),
    ("mma.sync (not wgmma)", r"\bmma\.sync\.aligned"),
    ("ldmatrix", r"\bldmatrix\."),
    ("stmatrix", r"\bstmatrix\."),
    ("mbarrier.*", r"\bmbarrier\."),
    ("cp.async.bulk.tensor", r"\bcp\.async\.bulk\.tensor"),
    ("cp.async.bulk (non-tensor copy)", r"\bcp\.async\.bulk\.(?!tensor|commit_group|wait_group)"),
    ("cp.async.bulk.commit/wait_group", r"\bcp\.async\.bulk\.(commit_group|wait_group)"),
    ("cp.async (Ampere, non-bulk)", r"\bcp\.async\.(ca|cg|commit_group|wait_group|wait_all)"),
    ("fence.proxy.async", r"\bfence\.proxy\.async"),
    ("tensormap.* / fence.proxy.tensormap", r"\btensormap\.|fence\.proxy\.tensormap"),
    ("setmaxnreg", r"\bsetmaxnreg\."),
    ("elect.sync", r"\belect\.sync"),
    ("griddepcontrol", r"\bgriddepcontrol\."),
    ("cluster (mapa/barrier.cluster/%cluster_*)", r"\bmapa\.|\bbarrier\.cluster|%cluster_|%clusterid"),
    ("%smid / %nsmid", r"%n?smid\b"),
    ("%globaltimer / %clock", r"%globaltimer|%clock"),
    ("atom.*", r"\batom\."),
    ("red.*", r"\bred\."),
    ("shfl.sync", r"\bshfl\.sync"),
    ("createpolicy (L2 cache hints)", r"\bcreatepolicy\."),
    ("cvt to/from fp8 (e4m3/e5m2)", r"\bcvt\.[\w.]*(e4m3|e5m2)"),
    ("call (vprintf/__assertfail)", r"^\s*(?:@!?%\w+\s+)?call(\.uni)?\s"),
    (".extern .func", r"^\s*\.extern\s+\.func"),
    (".extern .shared (dynamic smem)", r"^\s*\.extern\s+\.shared"),
    (".global variable", r"^\s*\.global\s+\.align"),
    (".local", r"^\s*\.local\b"),
    (".pragma", r"^\s*\.pragma\b"),
    (".reqntid", r"^\s*\.reqntid\b"),
    (".maxntid", r"^\s*\.maxntid\b"),
    (".maxnreg", r"^\s*\.maxnreg\b"),
    (".reqnctapercluster/.explicitcluster", r"^\s*\.(reqnctapercluster|explicitcluster)\b"),
    (".param .align 64 .b8 x[128] (TMA desc by value)", r"\.param\s+\.align\s+64\s+\.b8\s+\w+\[128\]"),
    ("inline asm blocks", r"// begin inline asm"),
    ("inline asm { } scopes", r"// begin inline asm\s*\n\s*\{"),
    (".section .debug_*", r"^\s*\.section\s+\.debug_"),
    (".loc", r"^\s*\.loc\b"),
]
FEATURES = [(t, re.compile(r, re.M)) for t, r in FEATURES]


def bar_kinds(text):
    """Return (any_bar, named_id, with_count) for bar/barrier instructions."""
    anyb = named = counted = False
    for m in BAR_RE.finditer(text):
        if m.group(1) == "barrier" and m.group(0).find("barrier.cluster") >= 0:
            continue
        anyb = True
        ops = [o.strip() for o in m.group(6).split(",")]
        if ops and ops[0] not in ("0", ""):
            named = True
        if len(ops) >= 2 and m.group(3) in ("sync", "arrive"):
            counted = True
    return anyb, named, counted


def file_features(text):
    f = {t for t, r in FEATURES if r.search(text)}
    a, n, c = bar_kinds(text)
    if a:
        f.add("bar/barrier (CTA)")
    if n:
        f.add("bar with non-zero (named) id")
    if c:
        f.add("bar with thread count")
    m = re.search(r"^\.version\s+(\S+)", text, re.M)
    if m:
        f.add(".version " + m.group(1))
    return f


def main(argv):
    per_file = "--per-file" in argv
    dirs = [a for a in argv if not a.startswith("--")]
    for d in dirs:
        files = sorted(x for x in os.listdir(d) if x.endswith(".ptx"))
        counts = {}
        total = 0
        for fn in files:
            p = os.path.join(d, fn)
            text = open(p, encoding="utf-8", errors="replace").read()
            total += os.path.getsize(p)
            ff = file_features(text)
            if per_file:
                print("%s\t%s" % (fn, ",".join(sorted(ff))))
            for t in ff:
                counts[t] = counts.get(t, 0) + 1
        print("## %s: %d files, %d bytes" % (d, len(files), total))
        order = [t for t, _ in FEATURES] + ["bar/barrier (CTA)", "bar with non-zero (named) id", "bar with thread count"]
        order += sorted(t for t in counts if t.startswith(".version"))
        print("| feature | files |\n|---|---|")
        for t in order:
            if t in counts or not t.startswith(".version"):
                print("| %s | %d |" % (t, counts.get(t, 0)))
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
