#!/usr/bin/env python3
"""Compare the autotuning of two torch.compile runs (issue 11 part 3): does the tidal side
lose an autotune choice the unmodified side keeps?

    bench/dnn/autotune_diff.py UNMOD.err.log TIDAL.err.log

Reads Inductor's "AUTOTUNE op(shapes)" tables (each choice: a kernel with its config, or an
ATen op, and its time; "inf" when it failed), the "Autotune Choices Stats" line before each
(num_choices: how many choices the op had; the table shows only the best ten), and the
"Ignoring this choice" lines before it (a choice that failed to compile or run), keyed by
op, shapes, strides and dtypes. A choice is the same on both sides when its config text is
(Triton kernel names such as triton_mm_12 differ between runs and are dropped). Lost, per
op both sides autotuned: fewer choices under tidal (num_choices), more ignored choices, a
choice the unmodified side timed listed as failed (inf) under tidal, or one it listed that
the tidal side's table does not although that table is complete (it lists num_choices
choices, or there is no stats line to say). A choice that only moved out of the best ten
is not lost. Prints one PASS/FAIL line per op the two sides share, lists every loss, and
ends with "N passed, N failed". Exit 0 only with no loss and at least one op compared; 2
when the logs have no tables in common (nothing compared: the tidal side reused the
unmodified side's Inductor cache, BENCH_SHARE_INDUCTOR=1, and autotuned nothing itself)."""
import json
import re
import sys

_HEAD = re.compile(r"^AUTOTUNE (\S.*)$")
_CHOICE = re.compile(r"^\s+(\S+)\s+(inf|[0-9.]+) ms\s+([0-9.]+%|-)?\s*(.*)$")
_IGNORED = re.compile(r"Ignoring this choice", re.I)
_STATS = re.compile(r"^Autotune Choices Stats:\s*$")


def _config(name, desc):
    """What identifies a choice across runs: its config text, else (ATen) its name."""
    desc = desc.strip()
    return desc if desc else re.sub(r"_\d+$", "", name)


class Op:
    """One autotuned op: its listed choices {config: time_ms or None (failed)}, how many
    choices it had (None: no stats line), how many were ignored before its table."""
    def __init__(self):
        self.choices, self.num_choices, self.ignored = {}, None, 0

    def complete(self):
        return self.num_choices is None or len(self.choices) >= self.num_choices


def parse(text):
    """({key: Op}, number of ignored choices in all, those after the last table)"""
    tables, ignored_all = {}, 0
    pending_ignored, pending_stats = 0, None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if _IGNORED.search(line):
            ignored_all += 1
            pending_ignored += 1
        if _STATS.match(line) and i + 1 < len(lines):
            try:
                pending_stats = json.loads(lines[i + 1]).get("num_choices")
            except ValueError:
                pending_stats = None
            i += 2
            continue
        m = _HEAD.match(line)
        if not m:
            i += 1
            continue
        key = [m.group(1)]
        i += 1
        while i < len(lines) and (lines[i].startswith("strides:") or lines[i].startswith("dtypes:")):
            key.append(lines[i].strip())
            i += 1
        op = tables.setdefault(" | ".join(key), Op())
        while i < len(lines):
            c = _CHOICE.match(lines[i])
            if not c:
                break
            op.choices[_config(c.group(1), c.group(4))] = None if c.group(2) == "inf" else float(c.group(2))
            i += 1
        if pending_stats is not None:
            op.num_choices = max(op.num_choices or 0, pending_stats)
        op.ignored += pending_ignored
        pending_ignored, pending_stats = 0, None
    return tables, ignored_all, pending_ignored


def compare(unmod_text, tidal_text):
    """(lines, passed, failed, compared)"""
    u, u_ign, u_tail = parse(unmod_text)
    t, t_ign, t_tail = parse(tidal_text)
    out, passed, failed = [], 0, 0
    common_keys = sorted(set(u) & set(t))
    for key in common_keys:
        uo, to = u[key], t[key]
        lost = []
        if uo.num_choices is not None and to.num_choices is not None and to.num_choices < uo.num_choices:
            lost.append("%d of %d choices missing under tidal (Autotune Choices Stats)" %
                        (uo.num_choices - to.num_choices, uo.num_choices))
        if to.ignored > uo.ignored:
            lost.append("%d choice(s) ignored under tidal, %d unmodified" % (to.ignored, uo.ignored))
        moved = 0
        for cfg, ut in uo.choices.items():
            if ut is None:
                continue   # failed on the unmodified side too: nothing to lose
            if cfg not in to.choices:
                if to.complete():
                    lost.append("%s: not listed" % cfg)
                else:
                    moved += 1
            elif to.choices[cfg] is None:
                lost.append("%s: failed (inf) under tidal, %.4f ms unmodified" % (cfg, ut))
        n = uo.num_choices if uo.num_choices is not None else len(uo.choices)
        if lost:
            failed += 1
            out.append("FAIL autotune %s: %d loss(es) of %d choices" % (key, len(lost), n))
            out.extend("  lost %s" % x for x in lost)
        else:
            passed += 1
            out.append("PASS autotune %s: %d choices, none lost%s" %
                       (key, n, " (%d of the unmodified side's best %d outside tidal's)" % (moved, len(uo.choices))
                        if moved else ""))
    if t_tail > u_tail:
        failed += 1
        out.append("FAIL autotune: %d choice(s) ignored under tidal after the last table, %d unmodified" % (t_tail, u_tail))
    only_u = sorted(set(u) - set(t))
    if only_u:
        out.append("note: %d autotuned ops only on the unmodified side (the tidal side reused a cache?)" % len(only_u))
    out.append("ignored choices in all: %d unmodified, %d tidal" % (u_ign, t_ign))
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
