#!/usr/bin/env python3
"""The colocation benchmark (issue 12.4), one process under scripts/tidal-run: an LS model
served from Poisson arrivals at fractions of its solo capacity, a BE model closed-loop, in
each configuration a user could pick, with tidal.serve's loop (python/tidal/serve.py).

  none          two plain streams
  prio          the LS stream at high priority
  green         green contexts (made without tidal, bench/dnn/greenctx.py): LS on --ls-sms,
                BE on --be-sms
  tidal-static  tidal partitions of the same two sets, nothing moves
  tidal-sgdrc   tidal.policy "sgdrc": LS reserves its demand while it has a request, BE runs
                on every other SM, and on all of them while LS idles
  tidal-gslice  tidal.policy "gslice": the LS share tuned from measured latencies under the SLO

Each request is timed on the host from its arrival to its completion (stream synchronized).
SLO = --slo-factor x the LS model's solo p99 (plain stream, all SMs, this process). Writes
OUT/colocate.json (every configuration x load: LS p50/p99/SLO attainment, BE batches/s),
OUT/colocate.md (the table) and OUT/colocate.png (LS p99 vs BE throughput) with matplotlib.
Graph replay throughout (both models captured per stream); batch 1 for LS (one graph).
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dnn"))

CONFIGS = ("none", "prio", "green", "tidal-static", "tidal-sgdrc", "tidal-gslice")


def parse():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ls", default="bert-base")
    ap.add_argument("--be", default="bert-large")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--loads", default="0.3,0.5,0.7", help="LS arrival rates as fractions of its solo capacity")
    ap.add_argument("--seconds", type=float, default=4.0, help="per configuration and load")
    ap.add_argument("--ls-sms", default="0-65")
    ap.add_argument("--be-sms", default="66-131")
    ap.add_argument("--slo-factor", type=float, default=2.0)
    ap.add_argument("--ls-profile", default=None, help="A,B: the LS model's latency = A/n + B us (sm_profile)")
    ap.add_argument("--ls-demand", type=int, default=0,
                    help="the LS request's measured knee in SMs (sm_profile's knee.measured): the policies' demand")
    ap.add_argument("--idle-us", type=int, default=0,
                    help="SGDRC: LS keeps its SMs this long after its last request (0: released at once)")
    ap.add_argument("--seed", type=int, default=1)
    return ap.parse_args()


def log(msg):
    print("[colocate %7.1fs] %s" % (time.time() - T0, msg), flush=True)


T0 = time.time()


def main():
    a = parse()
    os.makedirs(a.out, exist_ok=True)
    import tidal.torch as tt  # before torch.compile: the Triton hook, the static launcher off
    import torch
    import models as M
    import measure
    from common import summarize_us
    from tidal import policy, serve
    configs = a.configs.split(",")
    bad = sorted(set(configs) - set(CONFIGS))
    if bad:
        raise SystemExit("colocate.py: unknown configurations %s (known: %s)" % (bad, ", ".join(CONFIGS)))
    s = M.settings()
    M.configure_inductor(s)
    comp = {}
    for name in (a.ls, a.be):
        m, x = M.build(name, attn=s["attn_implementation"])
        cm, first = M.compile_model(m, x, s)
        comp[name] = (cm, x)
        log("%s compiled (first call %.1fs)" % (name, first))
    nsm = torch.cuda.get_device_properties(0).multi_processor_count

    def graph_on(name, stream):
        cm, x = comp[name]
        g, _ = measure.capture(cm, x, stream)
        return g

    def runner(g, stream):
        def run(_ids):
            with torch.cuda.stream(stream):
                g.replay()
            stream.synchronize()
        return run

    # LS solo: the SLO and the capacity
    st = torch.cuda.Stream()
    g = graph_on(a.ls, st)
    solo = summarize_us(measure.latencies(measure.graph_issue(g), st, 300, 30))
    del g
    slo_us = a.slo_factor * solo["p99_us"]
    capacity = 1e6 / solo["mean_us"]
    log("LS %s solo: p50 %.1f us, p99 %.1f us; SLO %.1f us; capacity %.0f requests/s" % (
        a.ls, solo["p50_us"], solo["p99_us"], slo_us, capacity))
    profile = None
    if a.ls_profile:
        pa, pb = (float(v) for v in a.ls_profile.split(","))
        profile = policy.Scaling(pa, pb)
    from greenctx import GreenSplit, parse_smset
    ls_n = len(parse_smset(a.ls_sms, nsm))
    results = {"settings": vars(a), "solo": solo, "slo_us": slo_us, "capacity_per_s": capacity, "rows": []}
    green = None
    for cfg in configs:
        parts = []
        if cfg in ("none", "prio"):
            sl, sb = torch.cuda.Stream(priority=-1 if cfg == "prio" else 0), torch.cuda.Stream(priority=0)
        elif cfg == "green":
            green = green or GreenSplit()
            sl, sb = green.stream(a.ls_sms), green.stream(a.be_sms)
        elif cfg == "tidal-static":
            pl, pb = tt.Partition("ls-static", a.ls_sms), tt.Partition("be-static", a.be_sms)
            parts = [pl, pb]
            sl, sb = pl.stream(), pb.stream()
        else:
            # moved live: the BE partition (and GSLICE's LS) always as clones, which follow
            # the mask while they run (a placed original would keep its green context's SMs)
            # SGDRC with a fixed demand keeps LS on 0..demand-1: a stream made there places
            # LS's short kernels as originals (a stream of another set would run them as clones)
            ls_set = "0-%d" % (a.ls_demand - 1) if (cfg == "tidal-sgdrc" and a.ls_demand) else a.ls_sms
            pl = tt.Partition("ls-" + cfg[6:], ls_set)
            pb = tt.Partition("be-" + cfg[6:], "all")
            pb.placement = "persistent"
            if cfg == "tidal-gslice":
                pl.placement = "persistent"
            parts = [pl, pb]
            sl, sb = pl.stream(), pb.stream()
        gl, gb = graph_on(a.ls, sl), graph_on(a.be, sb)
        for load in (float(v) for v in a.loads.split(",")):
            pol = None
            if cfg in ("tidal-sgdrc", "tidal-gslice"):   # a fresh policy per run
                kw = {"idle_us": a.idle_us} if cfg == "tidal-sgdrc" else {}
                pol = policy.Policy(cfg[6:], trace_path=os.path.join(a.out, "trace-%s-%.1f.jsonl" % (cfg, load)), **kw)
            srv = serve.Server(pol)
            # SGDRC without a profile: the LS demand is its whole set (max_sms)
            extra = {"max_sms": ls_n} if (cfg == "tidal-sgdrc" and profile is None and not a.ls_demand) else {}
            srv.service("ls", "ls", runner(gl, sl), partition=pl if pol else None, slo_us=slo_us,
                        profile=profile if pol else None, demand_sms=a.ls_demand if pol else 0, **extra)
            srv.service("be", "be", runner(gb, sb), partition=pb if pol else None)
            arr = serve.poisson(load * capacity, a.seconds, seed=a.seed)
            rec = srv.run({"ls": arr}, seconds=a.seconds)
            ls_sum = serve.summarize(rec["ls"], slo_us)
            be_n = len(rec["be"])
            row = dict(config=cfg, load=load, rate_per_s=round(load * capacity, 1), ls=ls_sum,
                       be_batches_per_s=round(be_n / a.seconds, 2),
                       ls_sms_seen=sorted({r.sms for r in rec["ls"]})[:8])
            if pol is not None:
                row["policy_state"] = pol.state()
            results["rows"].append(row)
            log("%-13s load %.1f: LS p50 %8.1f p99 %8.1f us, SLO %.1f%%; BE %.1f batches/s%s" % (
                cfg, load, ls_sum.get("p50_us", -1), ls_sum.get("p99_us", -1),
                100 * ls_sum.get("slo_attainment", 0), row["be_batches_per_s"],
                "; LS SMs %s" % row["ls_sms_seen"] if pol is not None else ""))
            with open(os.path.join(a.out, "colocate.json"), "w") as f:
                json.dump(results, f, indent=1)
            if pol is not None:
                pol.close()
        del gl, gb
        torch.cuda.synchronize()
        for p in parts:
            p.close()
    write_table(results, a.out)
    plot(results, a.out)
    return 0


def write_table(res, out):
    lines = ["| config | load | LS req/s | LS p50 (us) | LS p99 (us) | SLO attainment | BE batches/s |",
             "|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        ls = r["ls"]
        lines.append("| %s | %.1f | %.0f | %.1f | %.1f | %.2f%% | %.2f |" % (
            r["config"], r["load"], r["rate_per_s"], ls.get("p50_us", -1), ls.get("p99_us", -1),
            100 * ls.get("slo_attainment", 0), r["be_batches_per_s"]))
    head = "LS solo p50 %.1f / p99 %.1f us; SLO %.1f us; capacity %.0f req/s\n\n" % (
        res["solo"]["p50_us"], res["solo"]["p99_us"], res["slo_us"], res["capacity_per_s"])
    with open(os.path.join(out, "colocate.md"), "w") as f:
        f.write(head + "\n".join(lines) + "\n")


def plot(res, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        log("no plot: %s" % e)
        return
    fig, ax = plt.subplots(figsize=(7, 5))
    for cfg in sorted({r["config"] for r in res["rows"]}):
        rs = [r for r in res["rows"] if r["config"] == cfg]
        ax.plot([r["be_batches_per_s"] for r in rs], [r["ls"].get("p99_us", 0) for r in rs], "o-", label=cfg)
        for r in rs:
            ax.annotate("%.1f" % r["load"], (r["be_batches_per_s"], r["ls"].get("p99_us", 0)), fontsize=6)
    ax.axhline(res["slo_us"], ls=":", c="k", label="SLO")
    ax.set(xlabel="BE throughput (batches/s)", ylabel="LS p99 (us)", title="LS p99 vs BE throughput (labels: LS load)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "colocate.png"), dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
