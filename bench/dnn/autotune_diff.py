#!/usr/bin/env python3
"""Compare the autotuning of two torch.compile runs (issue 11 part 3): does the tidal side
lose an autotune choice the unmodified side keeps?

    bench/dnn/autotune_diff.py UNMOD.err.log TIDAL.err.log

Reads Inductor's "AUTOTUNE op(shapes)" tables (each choice: a kernel with its config, or an
ATen op, and its time; "inf" when it failed) and the "Ignoring this choice" lines, keyed by
op, shapes, strides and dtypes. A choice is the same on both sides when its config text is
(Triton kernel names such as triton_mm_12 differ between runs and are dropped). Lost: a
choice the unmodified side timed and the tidal side did not list, listed as failed (inf), or
ignored. Prints one PASS/FAIL line per op the two sides share, lists every loss, and ends
with "N passed, N failed". Exit 0 only with no loss and at least one op compared; 2 when
the logs have no tables in common (nothing compared: the tidal side reused the unmodified
side's Inductor cache, BENCH_SHARE_INDUCTOR=1, and autotuned nothing itself)."""
import re
import sys

_HEAD = re.compile(r"^AUTOTUNE (\S.*)$")
_CHOICE = re.compile(r"^\s+(\S+)\s+(inf|[0-9.]+) ms\s+([0-9.]+%|-)?\s*(.*)$")
_IGNORED = re.compile(r"Ignoring this choice", re.I)


def _config(name, desc):
    """What identifies a choice across runs: its config text, else (ATen) its name."""
    desc = desc.strip()
    return desc if desc else re.sub(r"_\d+$", "", name)


def parse(text):
    """{key: {config: time_ms or None (failed)}}, and the number of ignored choices."""
    tables, ignored = {}, 0
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if _IGNORED.search(line):
            ignored += 1
        m = _HEAD.match(line)
        if not m:
            i += 1
            continue
        key = [m.group(1)]
        i += 1
        while i < len(lines) and (lines[i].startswith("strides:") or lines[i].startswith("dtypes:")):
            key.append(lines[i].strip())
            i += 1
        choices = {}
        while i < len(lines):
            c = _CHOICE.match(lines[i])
            if not c:
                break
            t = None if c.group(2) == "inf" else float(c.group(2))
            choices[_config(c.group(1), c.group(4))] = t
            i += 1
        tables.setdefault(" | ".join(key), {}).update(choices)
    return tables, ignored


def compare(unmod_text, tidal_text):
    """(lines, passed, failed, compared)"""
    u, u_ign = parse(unmod_text)
    t, t_ign = parse(tidal_text)
    out, passed, failed = [], 0, 0
    common_keys = sorted(set(u) & set(t))
    for key in common_keys:
        lost = []
        for cfg, ut in u[key].items():
            if ut is None:
                continue   # failed on the unmodified side too: nothing to lose
            if cfg not in t[key]:
                lost.append("%s: not listed" % cfg)
            elif t[key][cfg] is None:
                lost.append("%s: failed (inf) under tidal, %.4f ms unmodified" % (cfg, ut))
        if lost:
            failed += 1
            out.append("FAIL autotune %s: %d of %d choices lost" % (key, len(lost), len(u[key])))
            out.extend("  lost %s" % x for x in lost)
        else:
            passed += 1
            out.append("PASS autotune %s: %d choices, none lost" % (key, len(u[key])))
    if t_ign > u_ign:
        failed += 1
        out.append("FAIL autotune: %d 'Ignoring this choice' under tidal, %d unmodified" % (t_ign, u_ign))
    only_u = sorted(set(u) - set(t))
    if only_u:
        out.append("note: %d autotuned ops only on the unmodified side (the tidal side reused a cache?)" % len(only_u))
    return out, passed, failed, len(common_keys)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    texts = []
    for p in argv[1:]:
        try:
            with open(p, errors="replace") as f:
                texts.append(f.read())
        except OSError as e:
            print("autotune_diff.py: %s: %s" % (p, e.strerror), file=sys.stderr)
            return 2
    lines, passed, failed, compared = compare(*texts)
    print("\n".join(lines))
    print("%d passed, %d failed" % (passed, failed))
    if compared == 0:
        print("autotune_diff.py: no AUTOTUNE table in both logs: nothing compared", file=sys.stderr)
        return 2
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
