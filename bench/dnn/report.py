#!/usr/bin/env python3
"""Merge the two sides of a DNN benchmark run into tables, a CSV, a JSON and a plot.

    python3 bench/dnn/report.py DIR      # DIR holds unmod.json and/or tidal.json

Writes DIR/results.json (both sides + the derived tables), DIR/results.csv (one row per
measurement), DIR/ls_p99_vs_be.png (LS p99 latency vs BE throughput for every storm
configuration) and DIR/summary.md (the markdown tables, also printed). Needs no GPU and no
torch; matplotlib only for the plot (a missing matplotlib is reported, the rest is written).
Exit status 1 when a side is missing or recorded errors.
"""
import csv
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402
from common import ratio  # noqa: E402


def load(d, side):
    p = os.path.join(d, "%s.json" % side)
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return json.load(f)


def fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.3f" % v if abs(v) < 10 else ("%." + str(nd) + "f") % v
    return str(v)


def md_table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        out.append("| " + " | ".join(fmt(c) if not isinstance(c, str) else c for c in r) + " |")
    return "\n".join(out)


def rows_of(side, section):
    return [r for r in (side or {}).get("rows", []) if r.get("section") == section]


def find(rows, **kw):
    for r in rows:
        if all(r.get(k) == v for k, v in kw.items()):
            return r
    return None


def kernels_per_request(u, t, model):
    for side in (u, t):
        k = (side or {}).get("kernels", {}).get(model)
        if k:
            return k["kernels"]
    return None


def derive(u, t):
    """The tables as lists of dicts."""
    out = {"a": [], "b": [], "c": [], "census": [], "tidal_stats": []}
    ua, ta = rows_of(u, "a"), rows_of(t, "a")
    for tr in ta:
        ur = find(ua, model=tr["model"], mode=tr["mode"])
        k = kernels_per_request(u, t, tr["model"])
        d = {"model": tr["model"], "mode": tr["mode"], "tidal_config": tr["config"],
             "unmod_p50_us": ur and ur.get("p50_us"), "unmod_p99_us": ur and ur.get("p99_us"),
             "tidal_p50_us": tr.get("p50_us"), "tidal_p99_us": tr.get("p99_us"),
             "p50_ratio": ratio(tr.get("p50_us"), ur and ur.get("p50_us")),
             "p99_ratio": ratio(tr.get("p99_us"), ur and ur.get("p99_us")),
             "kernels_per_request": k,
             "added_us_per_kernel": (round((tr["p50_us"] - ur["p50_us"]) / k, 3)
                                     if ur and k and tr.get("p50_us") is not None else None),
             "max_abs_diff_vs_unmod": tr.get("max_abs_diff_vs_unmod")}
        out["a"].append(d)
    if not ta:   # only the unmodified side: list it alone
        for ur in ua:
            out["a"].append({"model": ur["model"], "mode": ur["mode"], "tidal_config": None,
                             "unmod_p50_us": ur.get("p50_us"), "unmod_p99_us": ur.get("p99_us"),
                             "kernels_per_request": kernels_per_request(u, t, ur["model"])})
    ub, tb = rows_of(u, "b"), rows_of(t, "b")
    # rows pair by model, mode and SM set (config "green-SET" / "tidal-SET")
    def sms_of(r):
        return r["config"].split("-", 1)[1]
    keys = sorted({(r["model"], r["mode"], sms_of(r)) for r in ub + tb})
    for model, mode, sms in keys:
        g = find(ub, model=model, mode=mode, config="green-" + sms)
        tt = find(tb, model=model, mode=mode, config="tidal-" + sms)
        full = find(ua, model=model, mode=mode)
        out["b"].append({"model": model, "mode": mode, "sms": sms, "green_config": g and g["config"],
                         "green_p50_us": g and g.get("p50_us"), "green_p99_us": g and g.get("p99_us"),
                         "tidal_config": tt and tt["config"],
                         "tidal_p50_us": tt and tt.get("p50_us"), "tidal_p99_us": tt and tt.get("p99_us"),
                         "p50_ratio": ratio(tt and tt.get("p50_us"), g and g.get("p50_us")),
                         "p99_ratio": ratio(tt and tt.get("p99_us"), g and g.get("p99_us")),
                         "all_sms_unmod_p50_us": full and full.get("p50_us")})
    # the tidal side's interleaved pairs (bench.py pair_rows): rows of one pair share a
    # pair_key, one has role tidal, the other the configuration it ran against
    for sec in ("a", "b"):
        out[sec + "_pair"] = []
        tp = rows_of(t, sec + "-pair")
        for tr in tp:
            if tr.get("role") != "tidal":
                continue
            o = find(tp, model=tr["model"], mode=tr["mode"], pair_key=tr["pair_key"], role="other")
            out[sec + "_pair"].append({
                "model": tr["model"], "mode": tr["mode"], "sms": tr.get("sms"),
                "tidal_config": tr["config"], "other_config": o and o["config"],
                "other_p50_us": o and o.get("p50_us"), "other_p99_us": o and o.get("p99_us"),
                "tidal_p50_us": tr.get("p50_us"), "tidal_p99_us": tr.get("p99_us"),
                "p50_ratio": ratio(tr.get("p50_us"), o and o.get("p50_us")),
                "p99_ratio": ratio(tr.get("p99_us"), o and o.get("p99_us")),
                # the other graph must have run as given: no launch of it went through tidal
                "other_as_given": bool(o) and not (o.get("tidal_launches") or {}).get("launches_original") and
                not (o.get("tidal_launches") or {}).get("launches_rewritten")})
    allstorm = (u or {}).get("storm", []) + (t or {}).get("storm", [])
    storm = [r for r in allstorm if not r.get("pair")]
    # the tidal side's storm against the green split in alternating rounds, one process
    out["c_pair"] = []
    pt = {r["config"]: r for r in allstorm if r.get("pair")}
    tp, gp = pt.get("pair-iv-tidal"), pt.get("pair-iii-green")
    if tp and gp:
        out["c_pair"].append({
            "rounds": tp.get("rounds"), "ls_requests": tp.get("ls_n"),
            "green_ls_p50_us": gp.get("ls_p50_us"), "green_ls_p99_us": gp.get("ls_p99_us"),
            "tidal_ls_p50_us": tp.get("ls_p50_us"), "tidal_ls_p99_us": tp.get("ls_p99_us"),
            "ls_p50_ratio": ratio(tp.get("ls_p50_us"), gp.get("ls_p50_us")),
            "ls_p99_ratio": ratio(tp.get("ls_p99_us"), gp.get("ls_p99_us")),
            "green_be_rps": gp.get("be_rps"), "tidal_be_rps": tp.get("be_rps"),
            "green_be_done": gp.get("be_done"), "tidal_be_done": tp.get("be_done"),
            "be_ratio": ratio(tp.get("be_rps"), gp.get("be_rps")),
            "green_be_alone_rps": gp.get("be_alone_rps"), "tidal_be_alone_rps": tp.get("be_alone_rps"),
            "be_alone_ratio": ratio(tp.get("be_alone_rps"), gp.get("be_alone_rps"))})
    be_alone = {r["config"]: r for r in storm if r["config"].startswith("be-alone")}
    be_ref_of = {"i-plain": "be-alone-plain", "ii-priority": "be-alone-plain", "iii-green": "be-alone-green",
                 "iv-tidal": "be-alone-tidal"}
    for r in storm:
        if r["config"].startswith("be-alone"):
            continue
        ref = be_alone.get(be_ref_of.get(r["config"], ""))
        out["c"].append({"config": r["config"], "side": r["side"], "ls_p50_us": r.get("ls_p50_us"),
                         "ls_p99_us": r.get("ls_p99_us"), "be_rps": r.get("be_rps"),
                         "p50_vs_alone": r.get("p50_vs_alone"), "p99_vs_alone": r.get("p99_vs_alone"),
                         "alone_ref": r.get("alone_ref"),
                         "be_vs_be_alone": ratio(r.get("be_rps"), ref and ref.get("be_rps")),
                         "be_alone_ref": ref and ref["config"]})
    for r in be_alone.values():
        out["c"].append({"config": r["config"], "side": r["side"], "be_rps": r.get("be_rps")})
    for side in (u, t):
        for model, k in (side or {}).get("kernels", {}).items():
            out["census"].append({"side": side["side"], "model": model, "kernels": k["kernels"],
                                  "triton": k["triton"], "closed": k["closed"],
                                  "kinds": ", ".join("%s %d" % kv for kv in k["kinds"].items()),
                                  "reshaped_clones": k.get("reshaped_clones"),
                                  "graph_replay_kernels": k.get("graph_replay", {}).get("kernels"),
                                  "interposed_total": k.get("interposed_total"),
                                  "closed_top": "; ".join("%s x%d" % (n[:70], c) for n, c in k["closed_names"][:4])})
    out["kernels"] = []
    for model in sorted(set((u or {}).get("kernels", {})) & set((t or {}).get("kernels", {}))):
        ug = u["kernels"][model].get("graph_replay", {})
        tg = t["kernels"][model].get("graph_replay", {})
        us, ts = ug.get("signature"), tg.get("signature")
        row = {"model": model, "same_kernels": (us == ts) if us and ts else None,
               "unmod_signature": us, "tidal_signature": ts,
               "fx_cache_tidal": (t.get("compile", {}).get(model) or {}).get("fx_graph_cache")}
        if ug.get("kernel_us") and tg.get("kernel_us"):
            row.update(common.kernel_time_diff(ug["kernel_us"], tg["kernel_us"]))
        out["kernels"].append(row)
    for r in (t or {}).get("rows", []):
        if r.get("tidal_launches"):
            out["tidal_stats"].append(dict(section=r["section"], config=r["config"], model=r["model"],
                                           mode=r["mode"], **r["tidal_launches"],
                                           **({"violations": r["partition"]["violations"],
                                               "blocks_outside_mask": r["partition"]["blocks_outside_mask"]}
                                              if r.get("partition") else {})))
    for r in (t or {}).get("storm", []):
        if r.get("tidal_launches") is not None or r.get("partition"):
            model = "BE" if r["config"].startswith("be-alone") else "LS+BE" if r.get("be_rps") else "LS"
            out["tidal_stats"].append(dict(section="c", config=r["config"], model=model, mode="graph",
                                           **(r.get("tidal_launches") or {}),
                                           **({"violations": r["partition"]["violations"],
                                               "blocks_outside_mask": r["partition"]["blocks_outside_mask"]}
                                              if r.get("partition") else {})))
    return out


def write_csv(path, u, t):
    fields = ["section", "side", "config", "model", "mode", "n", "p50_us", "p90_us", "p99_us", "mean_us", "min_us",
              "max_us", "ls_p50_us", "ls_p99_us", "be_rps", "be_done", "window_s", "p50_vs_alone", "p99_vs_alone",
              "alone_ref", "max_abs_diff_vs_unmod", "launches_rewritten", "launches_original", "launches_unknown",
              "launches_refused", "launches_unmasked", "violations", "blocks_outside_mask"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for side in (u, t):
            for r in (side or {}).get("rows", []) + [dict(s, section="c") for s in (side or {}).get("storm", [])]:
                flat = dict(r)
                flat.update(r.get("tidal_launches") or {})
                if r.get("partition"):
                    flat.update({k: r["partition"][k] for k in ("violations", "blocks_outside_mask")})
                w.writerow(flat)


def plot(path, table_c):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return "no plot: matplotlib not importable (%s)" % e
    fig, ax = plt.subplots(figsize=(7.5, 5))
    colors = {"i-plain": "tab:red", "ii-priority": "tab:orange", "iii-green": "tab:green", "iv-tidal": "tab:blue"}
    labels = {"i-plain": "(i) no isolation", "ii-priority": "(ii) LS high priority",
              "iii-green": "(iii) green ctx split (no tidal)", "iv-tidal": "(iv) tidal partitions"}
    alone_of = {r["config"]: r for r in table_c if r.get("ls_p99_us") is not None and r.get("be_rps") is None}
    any_pt = False
    for r in table_c:
        if r.get("be_rps") is None or r.get("ls_p99_us") is None:
            continue
        c = colors.get(r["config"], "tab:gray")
        ax.scatter([r["be_rps"]], [r["ls_p99_us"] / 1000], color=c, s=60, label=labels.get(r["config"], r["config"]))
        ax.scatter([r["be_rps"]], [r["ls_p50_us"] / 1000], color=c, s=30, marker="x")
        ax.annotate(r["config"], (r["be_rps"], r["ls_p99_us"] / 1000), textcoords="offset points", xytext=(5, 4),
                    fontsize=8)
        a = alone_of.get(r.get("alone_ref"))
        if a:
            ax.axhline(a["ls_p99_us"] / 1000, color=c, lw=0.8, ls=":")
        any_pt = True
    if not any_pt:
        plt.close(fig)
        return "no plot: no storm configuration with both LS p99 and BE throughput"
    ax.set_xlabel("BE throughput (bert-large b16 requests/s, same window)")
    ax.set_ylabel("LS latency (ms): p99 dots, p50 crosses")
    ax.set_title("LS bert-base b1 under a closed-loop BE storm (dotted: LS alone, same streams)")
    ax.set_ylim(bottom=0)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


def markdown(u, t, der):
    md = []
    for side in (u, t):
        if side:
            e = side["env"]
            md.append("%s side: torch %s (CUDA %s), triton %s, transformers %s, GPU %s, %s SMs; %s" % (
                side["side"], e.get("torch"), e.get("torch_cuda"), e.get("triton"), e.get("transformers"),
                e.get("gpu"), e.get("sms"), e.get("nvidia_smi")))
    s = (u or t or {}).get("settings", {})
    md.append("inductor: %s" % s.get("inductor"))
    md.append("")
    md.append("### a. unmodified vs tidal partition \"all\" (latency per request, us)")
    md.append(md_table(["model", "mode", "tidal config", "unmod p50", "unmod p99", "tidal p50", "tidal p99",
                        "p50 ratio", "p99 ratio", "kernels/req", "added us/kernel", "max |diff|"],
                       [[r["model"], r["mode"], r.get("tidal_config") or "-", r.get("unmod_p50_us"),
                         r.get("unmod_p99_us"), r.get("tidal_p50_us"), r.get("tidal_p99_us"), r.get("p50_ratio"),
                         r.get("p99_ratio"), r.get("kernels_per_request"), r.get("added_us_per_kernel"),
                         r.get("max_abs_diff_vs_unmod")] for r in der["a"]]))
    md.append("")
    md.append("### b. LS alone on k SMs: green context without tidal vs tidal partition (us); SMs %s, and the "
              "8-SM cluster groups inside them (%s)" % (s.get("ls_sms"), s.get("ls_cluster_sms") or "none"))
    md.append(md_table(["model", "mode", "SMs", "green p50", "green p99", "tidal p50", "tidal p99", "p50 ratio",
                        "p99 ratio", "all SMs unmod p50"],
                       [[r["model"], r["mode"], r["sms"], r["green_p50_us"], r["green_p99_us"], r["tidal_p50_us"],
                         r["tidal_p99_us"], r["p50_ratio"], r["p99_ratio"], r["all_sms_unmod_p50_us"]]
                        for r in der["b"]]))
    md.append("")
    for sec, title, other in (("a", "a'. section a in one process, interleaved request for request: the graph on "
                                "a plain stream tidal does not govern (launched as given) vs on tidal partition "
                                "\"all\" (us)", "unmod"),
                               ("b", "b'. section b in one process, interleaved request for request: green context "
                                "vs tidal partition of the same SMs, both with the tidal side's kernels (us)", "green")):
        if not der.get(sec + "_pair"):
            continue
        md.append("### " + title)
        md.append(md_table(["model", "mode", "SMs", other + " p50", other + " p99", "tidal p50", "tidal p99",
                            "p50 ratio", "p99 ratio", other + " as given"],
                           [[r["model"], r["mode"], r["sms"], r["other_p50_us"], r["other_p99_us"], r["tidal_p50_us"],
                             r["tidal_p99_us"], r["p50_ratio"], r["p99_ratio"], r["other_as_given"]]
                            for r in der[sec + "_pair"]]))
        md.append("")
    md.append("### c. LS (bert-base b1 graph) under a BE storm (%s)" % (s.get("storm") or {}))
    md.append(md_table(["config", "LS p50 us", "LS p99 us", "BE req/s", "LS p50/alone", "LS p99/alone", "alone ref",
                        "BE/BE alone", "BE alone ref"],
                       [[r["config"], r.get("ls_p50_us"), r.get("ls_p99_us"), r.get("be_rps"), r.get("p50_vs_alone"),
                         r.get("p99_vs_alone"), r.get("alone_ref") or "-", r.get("be_vs_be_alone"),
                         r.get("be_alone_ref") or "-"] for r in der["c"]]))
    md.append("")
    if der.get("c_pair"):
        md.append("### c'. the storm against the green split in one process, alternating rounds (tidal side; "
                  "green contexts of the same SMs launched as given); BE done = requests behind each rate")
        md.append(md_table(["rounds", "LS n", "green LS p50", "green LS p99", "tidal LS p50", "tidal LS p99",
                            "LS p50 ratio", "LS p99 ratio", "green BE/s (done)", "tidal BE/s (done)", "BE ratio",
                            "green BE alone/s", "tidal BE alone/s", "BE alone ratio"],
                           [[r["rounds"], r["ls_requests"], r["green_ls_p50_us"], r["green_ls_p99_us"],
                             r["tidal_ls_p50_us"], r["tidal_ls_p99_us"], r["ls_p50_ratio"], r["ls_p99_ratio"],
                             "%s (%s)" % (r["green_be_rps"], r["green_be_done"]),
                             "%s (%s)" % (r["tidal_be_rps"], r["tidal_be_done"]), r["be_ratio"],
                             r["green_be_alone_rps"], r["tidal_be_alone_rps"], r["be_alone_ratio"]]
                            for r in der["c_pair"]]))
        md.append("")
    md.append("### kernels per request (torch.profiler, one eager request; Triton = rewritable)")
    md.append(md_table(["side", "model", "kernels", "Triton", "closed", "kinds", "as clones", "graph replay",
                        "interposed", "top closed kernels"],
                       [[r["side"], r["model"], r["kernels"], r["triton"], r["closed"], r["kinds"],
                         r.get("reshaped_clones"), r.get("graph_replay_kernels"), r.get("interposed_total"),
                         r["closed_top"]] for r in der["census"]]))
    md.append("")
    if der.get("kernels"):
        md.append("### the same kernels on both sides? (one profiled graph replay per side)")
        md.append(md_table(["model", "same kernels", "unmod kernels", "tidal kernels", "tidal FX cache",
                            "kernel time unmod us", "tidal us", "delta in clones us", "delta in originals us"],
                           [[r["model"], r["same_kernels"], (r["unmod_signature"] or {}).get("kernels"),
                             (r["tidal_signature"] or {}).get("kernels"), r.get("fx_cache_tidal"), r.get("unmod_us"),
                             r.get("tidal_us"), r.get("clone_delta_us"), r.get("original_delta_us")]
                            for r in der["kernels"]]))
        for r in der["kernels"]:
            if r.get("top"):
                md.append("")
                md.append("%s: kernels whose replay time grew most (us, one replay)" % r["model"])
                md.append(md_table(["kernel", "launches", "unmod", "tidal", "delta", "as clones"],
                                   [[n[:90], k, a, b, dd, c] for n, k, a, b, dd, c in r["top"]]))
        md.append("")
    md.append("### tidal launches per configuration (eager: the timed loop; graph: the capture)")
    md.append(md_table(["section", "config", "model", "mode", "rewritten", "original", "unknown", "refused",
                        "unmasked", "violations", "blocks outside"],
                       [[r["section"], r["config"], r["model"], r["mode"], r.get("launches_rewritten"),
                         r.get("launches_original"), r.get("launches_unknown"), r.get("launches_refused"),
                         r.get("launches_unmasked"), r.get("violations"), r.get("blocks_outside_mask")]
                        for r in der["tidal_stats"]]))
    checks = [c for side in (u, t) for c in (side or {}).get("checks", [])]
    if checks:
        md.append("")
        npass = sum(1 for c in checks if c["ok"])
        md.append("checks: %d passed, %d failed" % (npass, len(checks) - npass))
        for c in checks:
            if not c["ok"] or c["check"].startswith("sms-inside"):
                md.append("- %s %s: %s" % ("PASS" if c["ok"] else "FAIL", c["check"], c.get("detail", "")))
    comp = [(side["side"], m, c) for side in (u, t) if side for m, c in side.get("compile", {}).items()
            if isinstance(c, dict) and "total_s" in c]
    if comp:
        md.append("compile: " + "; ".join("%s %s %.0fs (first call %.0fs)" % (sd, m, c["total_s"], c["first_call_s"])
                                          for sd, m, c in comp))
    for side in (u, t):
        if side and side.get("timings"):
            md.append("%s timings (s): %s" % (side["side"], side["timings"]))
    errs = [(side["side"], e) for side in (u, t) if side for e in side.get("errors", [])]
    for sd, e in errs:
        md.append("FAILED %s %s: %s" % (sd, e["section"], e["error"]))
    return "\n".join(md)


def checks_of(u, t):
    return [c for side in (u, t) for c in (side or {}).get("checks", [])]


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    d = argv[1]
    u, t = load(d, "unmod"), load(d, "tidal")
    if not u and not t:
        print("report.py: neither %s/unmod.json nor tidal.json" % d, file=sys.stderr)
        return 1
    der = derive(u, t)
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump({"unmod": u, "tidal": t, "tables": der}, f, indent=1, default=str)
    write_csv(os.path.join(d, "results.csv"), u, t)
    note = plot(os.path.join(d, "ls_p99_vs_be.png"), der["c"])
    md = markdown(u, t, der)
    if note:
        md += "\n" + note
    with open(os.path.join(d, "summary.md"), "w") as f:
        f.write(md + "\n")
    print(md)
    missing = [s for s, v in (("unmod", u), ("tidal", t)) if not v]
    if missing:
        print("report.py: missing side(s): %s" % ", ".join(missing))
    bad = missing or any((side or {}).get("errors") for side in (u, t)) or any(not c["ok"] for c in checks_of(u, t))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
