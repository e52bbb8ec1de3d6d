#!/usr/bin/env python3
"""The colocation benchmark (issue 12.4): an LS model served from Poisson arrivals at
fractions of its solo capacity, a BE model closed-loop, in each configuration a user could
pick, with tidal.serve's loop (python/tidal/serve.py). bench/colocate/run.sh runs it as
several processes (the baselines unmodified, MPS clients, tidal under scripts/tidal-run)
and merges what they write; one process runs the configurations it is given:

  alone         LS only (no BE): the ceiling every configuration is held to
  none          two plain streams
  prio          the LS streams at high priority
  green         green contexts (made without tidal, bench/dnn/greenctx.py): LS on --ls-sms,
                BE on --be-sms
  timeslice     BE in a second process (no MPS): the GPU time-slices the two contexts
  mps           BE in a second process, both MPS clients (the caller starts the daemon)
  mps-pct       as mps, the LS process at --mps-pct's first and BE at its second active-thread
                percentage (GSLICE's lever; the LS percentage is set by the caller, before
                this process starts CUDA: run.sh does)
  tidal-static  tidal partitions of --ls-sms and --be-sms, nothing moves
  tidal-sgdrc   tidal.policy "sgdrc": LS reserves its demand while it has work (and idle_us
                after), BE runs on every other SM, and on all of them while LS idles;
                variants as tidal-sgdrc:idle=2000 (the hold in us)
  tidal-gslice  tidal.policy "gslice": the LS share tuned from measured latencies under the SLO

Each request is timed on the host from its arrival to its completion (its instance's stream
synchronized). The LS service has --ls-instances instances (a stream and a graph each), as a
server's model instances: one queue, a request starts on a free instance. SLO = --slo-factor
x the LS model's solo p99 (one plain stream, all SMs, measured in this process, or taken from
--reference: the unmodified process's, so that every process is held to one SLO).
Writes OUT/colocate.json (every configuration x load x run: LS p50/p99/SLO attainment and
its latencies, BE batches/s, the policy's state); `--merge A.json B.json ...` writes
OUT/colocate.md (the table, mean and range over runs), colocate-cdf.png (LS latency CDFs),
colocate.png (BE throughput against LS load) and colocate-sms.png (the policies' SM
shares over time, from their traces). Graph replay throughout; batch 1 for LS.
"""
import argparse
import json
import os
import select
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dnn"))

CONFIGS = ("alone", "none", "prio", "green", "timeslice", "mps", "mps-pct",
           "tidal-static", "tidal-sgdrc", "tidal-gslice")
TWO_PROCESS = ("timeslice", "mps", "mps-pct")


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ls", default="bert-base")
    ap.add_argument("--be", default="bert-large")
    ap.add_argument("--configs", default="alone,none,prio,green")
    ap.add_argument("--loads", default="0.3,0.5,0.7", help="LS arrival rates as fractions of its solo capacity")
    ap.add_argument("--seconds", type=float, default=3.0, help="per configuration, load and run")
    ap.add_argument("--runs", type=int, default=1, help="runs per configuration and load (seeds seed, seed+1, ...)")
    ap.add_argument("--ls-instances", type=int, default=2)
    ap.add_argument("--ls-sms", default="0-65")
    ap.add_argument("--be-sms", default="66-131")
    ap.add_argument("--mps-pct", default="50,50", help="LS,BE active-thread percentages of mps-pct")
    ap.add_argument("--slo-factor", type=float, default=2.0)
    ap.add_argument("--reference", default=None,
                    help="a colocate.json whose solo, SLO and capacity this process uses")
    ap.add_argument("--ls-profile", default=None, help="A,B: the LS model's latency = A/n + B us (sm_profile)")
    ap.add_argument("--ls-demand", type=int, default=0,
                    help="the LS request's measured knee in SMs (sm_profile's knee.measured): the policies' demand")
    ap.add_argument("--ls-first", default=None,
                    help="SM set the policies give LS first (tidal_policy_config.ls_first), e.g. an L2 side "
                         "(tidal.torch.l2_sides()[0]); the SGDRC LS partition is made on the first --ls-demand of them")
    ap.add_argument("--idle-us", type=int, default=0,
                    help="SGDRC: LS keeps its SMs this long after its last request (0: released at once)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--engine", choices=("python", "c"), default="python",
                    help="the serving loop: tidal.serve's Python threads, or libtidal's C engine (tidal_server: the "
                         "same loop on C threads, the instances' graphs replayed with cuGraphLaunch)")
    ap.add_argument("--be-child", action="store_true", help=argparse.SUPPRESS)   # the BE process of TWO_PROCESS
    ap.add_argument("--merge", nargs="+", metavar="JSON", default=None,
                    help="merge these colocate.json files into OUT's table and plots (no GPU); the "
                         "first one's solo and SLO head them, and a configuration in a later file "
                         "replaces an earlier file's rows of it")
    return ap.parse_args(argv)


def log(msg):
    # the BE child's stdout is its protocol with the parent: its log goes to stderr
    print("[colocate %7.1fs] %s" % (time.time() - T0, msg), flush=True, file=sys.stderr if CHILD else sys.stdout)


T0 = time.time()
CHILD = False


def config_options(cfg):
    """'tidal-sgdrc:idle=2000' -> ('tidal-sgdrc', {'idle': 2000})."""
    base, *opts = cfg.split(":")
    kw = {}
    for o in opts:
        k, sep, v = o.partition("=")
        if not sep or k not in ("idle", "demand") or not v.isdigit():
            raise SystemExit("colocate.py: configuration %s: option %r: want idle=US or demand=SMS" % (cfg, o))
        kw[k] = int(v)
    if base not in CONFIGS:
        raise SystemExit("colocate.py: unknown configuration %s (known: %s)" % (base, ", ".join(CONFIGS)))
    if kw and base != "tidal-sgdrc":
        raise SystemExit("colocate.py: configuration %s: options are tidal-sgdrc's" % cfg)
    return base, kw


# ------------------------------------------------------------------ models

class Models:
    def __init__(self, names):
        import torch
        import models as M
        import measure
        self.torch, self.measure = torch, measure
        s = M.settings()
        M.configure_inductor(s)
        self.comp = {}
        for name in names:
            m, x = M.build(name, attn=s["attn_implementation"])
            cm, first = M.compile_model(m, x, s)
            self.comp[name] = (cm, x)
            log("%s compiled (first call %.1fs)" % (name, first))

    def graph_on(self, name, stream):
        cm, x = self.comp[name]
        g, _ = self.measure.capture(cm, x, stream)
        return g

    def runner(self, name, stream):
        g = self.graph_on(name, stream)
        torch = self.torch

        def run(_ids):
            with torch.cuda.stream(stream):
                g.replay()
            stream.synchronize()
        run.graph = g   # kept alive with the runner
        return run


def be_child(a):
    """The BE process: compile, capture, say READY; per 'GO seconds' line run closed-loop
    for that long and say 'DONE batches'; 'QUIT' ends it."""
    import torch
    mdl = Models([a.be])
    st = torch.cuda.Stream()
    run = mdl.runner(a.be, st)
    print("READY", flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if not cmd or cmd[0] == "QUIT":
            break
        if cmd[0] == "GO":
            end, n = time.monotonic() + float(cmd[1]), 0
            while time.monotonic() < end:
                run(None)
                n += 1
            print("DONE %d" % n, flush=True)
    return 0


class BEProcess:
    def __init__(self, a, env_pct=None):
        env = dict(os.environ)
        if env_pct is not None:
            env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(env_pct)
        else:
            env.pop("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", None)
        argv = [sys.executable, os.path.abspath(__file__), "--be-child", "--out", a.out, "--be", a.be]
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                  stderr=open(os.path.join(a.out, "be-child.err.log"), "a"))
        self._expect("READY", 600)

    def _expect(self, word, timeout):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        line = self.p.stdout.readline() if r else ""
        if not line.startswith(word):
            self.p.kill()
            raise RuntimeError("the BE process said %r, not %s (its stderr: be-child.err.log)" % (
                line if r else "nothing in %d s" % timeout, word))
        return line.split()

    def go(self, seconds):
        self.p.stdin.write("GO %f\n" % seconds)
        self.p.stdin.flush()

    def done(self):
        return int(self._expect("DONE", 120)[1])

    def close(self):
        try:
            self.p.stdin.write("QUIT\n")
            self.p.stdin.flush()
        except OSError:
            pass
        self.p.wait(60)


# ------------------------------------------------------------------ one process

def mps_running():
    d = os.environ.get("CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps")
    return os.path.exists(os.path.join(d, "control"))


def main(a):
    os.makedirs(a.out, exist_ok=True)
    configs = [config_options(c) for c in a.configs.split(",")]
    kinds = {b for b, _ in configs}
    tidal_side = any(b.startswith("tidal-") for b in kinds)
    if tidal_side and kinds - {b for b in CONFIGS if b.startswith("tidal-")}:
        raise SystemExit("colocate.py: tidal configurations run in a process of their own (under scripts/tidal-run)")
    want_mps = bool(kinds & {"mps", "mps-pct"})
    if want_mps != mps_running() and kinds & set(TWO_PROCESS):
        raise SystemExit("colocate.py: %s needs %s MPS daemon" % (
            ",".join(sorted(kinds & set(TWO_PROCESS))), "an" if want_mps else "no"))
    if "mps-pct" in kinds and len(kinds) > 1:
        raise SystemExit("colocate.py: mps-pct runs in a process of its own (its LS percentage is the process's)")
    if tidal_side:
        import tidal.torch as tt  # before torch.compile: the Triton hook, the static launcher off
        from tidal import policy
    import torch
    from common import parse_smset, percentile, summarize_us
    from tidal import serve
    from greenctx import GreenSplit
    one_process = kinds - set(TWO_PROCESS) - {"alone"}
    mdl = Models([a.ls] + ([a.be] if one_process else []))
    nsm = torch.cuda.get_device_properties(0).multi_processor_count

    st = torch.cuda.Stream()
    solo_run = mdl.runner(a.ls, st)
    solo = summarize_us(mdl.measure.latencies(solo_run.graph.replay, st, 300, 30))
    del solo_run
    results = {"settings": vars(a), "solo_here": solo, "rows": [], "process": {
        "mps": mps_running(), "mps_pct": os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
        "tidal": tidal_side}}
    if a.reference:
        with open(a.reference) as f:
            ref = json.load(f)
        solo, slo_us, capacity = ref["solo"], ref["slo_us"], ref["capacity_per_s"]
        log("LS solo here: p50 %.1f p99 %.1f us; the reference's: p50 %.1f p99 %.1f" % (
            results["solo_here"]["p50_us"], results["solo_here"]["p99_us"], solo["p50_us"], solo["p99_us"]))
    else:
        slo_us = a.slo_factor * solo["p99_us"]
        capacity = 1e6 / solo["mean_us"]
    results.update(solo=solo, slo_us=slo_us, capacity_per_s=capacity)
    log("LS %s solo: p50 %.1f us, p99 %.1f us; SLO %.1f us; capacity %.0f requests/s" % (
        a.ls, solo["p50_us"], solo["p99_us"], slo_us, capacity))
    profile = None
    if a.ls_profile:
        pa, pb = (float(v) for v in a.ls_profile.split(","))
        profile = policy.Scaling(pa, pb)
    ls_n = len(parse_smset(a.ls_sms, nsm))
    ls_pct, be_pct = (int(v) for v in a.mps_pct.split(","))
    green = None
    for cfg, opt in configs:
        name = a.configs.split(",")[configs.index((cfg, opt))]
        parts, be_proc, pol_kw = [], None, {}
        demand = opt.get("demand", a.ls_demand)
        k = a.ls_instances
        if cfg in ("alone", "none", "prio", "timeslice", "mps", "mps-pct"):
            pr = -1 if cfg == "prio" else 0
            sls = [torch.cuda.Stream(priority=pr) for _ in range(k)]
            sb = torch.cuda.Stream(priority=0) if cfg in ("none", "prio") else None
            if cfg in TWO_PROCESS:
                be_proc = BEProcess(a, be_pct if cfg == "mps-pct" else None)
        elif cfg == "green":
            green = green or GreenSplit()
            sls, sb = [green.stream(a.ls_sms) for _ in range(k)], green.stream(a.be_sms)
        elif cfg == "tidal-static":
            pl, pb = tt.Partition("ls-static", a.ls_sms), tt.Partition("be-static", a.be_sms)
            parts = [pl, pb]
            sls, sb = [pl.stream() for _ in range(k)], pb.stream()
        else:
            # moved live: the BE partition (and GSLICE's LS) always as clones, which follow
            # the mask while they run (a placed original would keep its green context's SMs).
            # SGDRC with a fixed demand keeps LS on the first demand SMs of its order (0 up, or
            # --ls-first first): streams made there place
            # LS's short kernels as originals (a stream of another set would run them as clones)
            order = list(range(nsm))
            if a.ls_first:
                first = parse_smset(a.ls_first, nsm)
                order = first + [s for s in range(nsm) if s not in set(first)]
            ls_set = ",".join(str(s) for s in sorted(order[:demand])) if (cfg == "tidal-sgdrc" and demand) else a.ls_sms
            pl = tt.Partition("ls-" + cfg[6:], ls_set)
            pb = tt.Partition("be-" + cfg[6:], "all")
            pb.placement = "persistent"
            if cfg == "tidal-gslice":
                pl.placement = "persistent"
            parts = [pl, pb]
            sls, sb = [pl.stream() for _ in range(k)], pb.stream()
            if cfg == "tidal-sgdrc":
                pol_kw = {"idle_us": opt.get("idle", a.idle_us)}
            if a.ls_first:
                pol_kw["ls_first"] = a.ls_first
        ls_runs = [mdl.runner(a.ls, s) for s in sls]
        be_run = mdl.runner(a.be, sb) if sb is not None else None
        for load in (float(v) for v in a.loads.split(",")):
            for run_i in range(a.runs):
                seed = a.seed + run_i
                pol = None
                if cfg in ("tidal-sgdrc", "tidal-gslice"):   # a fresh policy per run
                    trace = os.path.join(a.out, "trace-%s-%.1f-%d.jsonl" % (name.replace(":", "_"), load, run_i))
                    pol = policy.Policy(cfg[6:], trace_path=trace, **pol_kw)
                srv = serve.Server(pol, engine=a.engine)
                # SGDRC without a profile: the LS demand is its whole set (max_sms)
                extra = {"max_sms": ls_n} if (cfg == "tidal-sgdrc" and profile is None and not demand) else {}
                srv.service("ls", "ls", ls_runs, partition=pl if pol else None, slo_us=slo_us,
                            profile=profile if pol else None, demand_sms=demand if pol else 0,
                            graphs=[r.graph for r in ls_runs], streams=sls, **extra)
                if be_run is not None:
                    srv.service("be", "be", be_run, partition=pb if pol else None, graphs=[be_run.graph], streams=[sb])
                arr = serve.poisson(load * capacity, a.seconds, seed=seed)
                if be_proc:
                    be_proc.go(a.seconds)
                rec = srv.run({"ls": arr}, seconds=a.seconds)
                srv.close()
                be_n = be_proc.done() if be_proc else len(rec.get("be", []))
                ls_sum = serve.summarize(rec["ls"], slo_us)
                lat = sorted(int((r.end - r.arrival) * 1e6) for r in rec["ls"])
                waits = sorted((r.start - r.arrival) * 1e6 for r in rec["ls"])
                runs_us = sorted((r.end - r.start) * 1e6 for r in rec["ls"])
                row = dict(config=name, load=load, run=run_i, seed=seed, rate_per_s=round(load * capacity, 1),
                           ls=ls_sum, be_batches_per_s=round(be_n / a.seconds, 2), ls_latencies_us=lat,
                           ls_wait_us={q: round(percentile(waits, q), 1) for q in (50, 99)},
                           ls_run_us={q: round(percentile(runs_us, q), 1) for q in (50, 99)},
                           ls_sms_seen=sorted({r.sms for r in rec["ls"]})[:8])
                if pol is not None:
                    row["policy_state"] = pol.state()
                    row["trace"] = os.path.basename(trace)
                results["rows"].append(row)
                log("%-22s load %.1f run %d: LS p50 %8.1f p99 %8.1f us (wait p50 %.0f, run p50 %.0f), SLO %5.1f%%; "
                    "BE %6.1f batches/s%s" % (
                    name, load, run_i, ls_sum.get("p50_us", -1), ls_sum.get("p99_us", -1),
                    row["ls_wait_us"][50], row["ls_run_us"][50],
                    100 * ls_sum.get("slo_attainment", 0), row["be_batches_per_s"],
                    "; LS SMs %s" % row["ls_sms_seen"] if pol is not None else ""))
                with open(os.path.join(a.out, "colocate.json"), "w") as f:
                    json.dump(results, f)
                if pol is not None:
                    pol.close()
        del ls_runs, be_run
        torch.cuda.synchronize()
        if be_proc:
            be_proc.close()
        for p in parts:
            p.close()
    return 0


# ------------------------------------------------------------------ merge: table and plots

def merge(a):
    os.makedirs(a.out, exist_ok=True)
    docs = []
    for path in a.merge:
        with open(path) as f:
            d = json.load(f)
        d["_dir"] = os.path.dirname(os.path.abspath(path))
        docs.append(d)
    ref = docs[0]
    # a configuration measured again in a later file replaces the earlier file's rows of it
    last = {}
    for i, d in enumerate(docs):
        for r in d["rows"]:
            last[r["config"]] = i
    rows = [dict(r, _dir=d["_dir"], _src=os.path.basename(d["_dir"])) for i, d in enumerate(docs)
            for r in d["rows"] if last[r["config"]] == i]
    groups = {}
    for r in rows:
        groups.setdefault((r["config"], r["load"]), []).append(r)
    order = []
    for r in rows:
        if r["config"] not in order:
            order.append(r["config"])

    def mean(xs):
        return sum(xs) / len(xs) if xs else float("nan")

    def cell(xs, fmt):
        if len(xs) == 1:
            return fmt % xs[0]
        return (fmt + " (" + fmt + "-" + fmt + ")") % (mean(xs), min(xs), max(xs))

    lines = ["| config | load | LS req/s | LS p50 (us) | LS p99 (us) | SLO attainment | BE batches/s | runs |",
             "|---|---|---|---|---|---|---|---|"]
    summary = []
    for cfg in order:
        for load in sorted({k[1] for k in groups if k[0] == cfg}):
            g = groups[(cfg, load)]
            att = [100 * r["ls"].get("slo_attainment", 0) for r in g]
            be = [r["be_batches_per_s"] for r in g]
            lines.append("| %s | %.1f | %.0f | %s | %s | %s%% | %s | %d |" % (
                cfg, load, g[0]["rate_per_s"], cell([r["ls"].get("p50_us", -1) for r in g], "%.0f"),
                cell([r["ls"].get("p99_us", -1) for r in g], "%.0f"), cell(att, "%.2f"), cell(be, "%.1f"), len(g)))
            summary.append({"config": cfg, "load": load, "slo_attainment": mean(att) / 100, "be_batches_per_s": mean(be),
                            "runs": len(g)})
    head = ("LS %s solo (unmodified, all SMs): p50 %.1f / p99 %.1f us; SLO %.1f us; capacity %.0f req/s; "
            "BE %s closed-loop; %s s per point; %d LS instances\n\n") % (
        ref["settings"]["ls"], ref["solo"]["p50_us"], ref["solo"]["p99_us"], ref["slo_us"], ref["capacity_per_s"],
        ref["settings"]["be"], ref["settings"]["seconds"], ref["settings"]["ls_instances"])
    best = best_rows(summary)
    with open(os.path.join(a.out, "colocate.md"), "w") as f:
        f.write(head + "\n".join(lines) + "\n\n" + best + "\n")
    with open(os.path.join(a.out, "colocate-summary.json"), "w") as f:
        json.dump({"slo_us": ref["slo_us"], "solo": ref["solo"], "summary": summary}, f, indent=1)
    print(head + "\n".join(lines) + "\n\n" + best)
    plots(rows, order, ref, a.out)
    return 0


def best_rows(summary, target=0.99):
    """Per load: the best tidal configuration next to the best baseline (highest SLO
    attainment; among those at >= target, the highest BE throughput)."""
    def pick(cands):
        ok = [c for c in cands if c["slo_attainment"] >= target]
        if ok:
            return max(ok, key=lambda c: c["be_batches_per_s"])
        return max(cands, key=lambda c: (c["slo_attainment"], c["be_batches_per_s"])) if cands else None
    out = ["| load | best tidal | SLO | BE/s | best baseline (BE running) | SLO | BE/s | BE ratio |",
           "|---|---|---|---|---|---|---|---|"]
    for load in sorted({c["load"] for c in summary}):
        at = [c for c in summary if c["load"] == load]
        t = pick([c for c in at if c["config"].startswith("tidal-")])
        b = pick([c for c in at if not c["config"].startswith("tidal-") and c["config"] != "alone"])
        if not t or not b:
            continue
        out.append("| %.1f | %s | %.2f%% | %.1f | %s | %.2f%% | %.1f | %s |" % (
            load, t["config"], 100 * t["slo_attainment"], t["be_batches_per_s"], b["config"],
            100 * b["slo_attainment"], b["be_batches_per_s"],
            "%.2f" % (t["be_batches_per_s"] / b["be_batches_per_s"]) if b["be_batches_per_s"] else "-"))
    return "\n".join(out)


def plots(rows, order, ref, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        log("no plots: %s" % e)
        return
    from common import parse_smset
    loads = sorted({r["load"] for r in rows})
    # latency CDFs, one panel per load (run 0 of each configuration)
    fig, axs = plt.subplots(1, len(loads), figsize=(5 * len(loads), 4.2), squeeze=False)
    for ax, load in zip(axs[0], loads):
        for cfg in order:
            rs = [r for r in rows if r["config"] == cfg and r["load"] == load]
            if not rs:
                continue
            lat = sorted(x for r in rs for x in r["ls_latencies_us"])
            if lat:
                ax.plot(lat, [(i + 1) / len(lat) for i in range(len(lat))], label=cfg, lw=1)
        ax.axvline(ref["slo_us"], ls=":", c="k")
        ax.set(xscale="log", xlabel="LS latency (us, arrival to completion)", ylabel="fraction",
               title="LS load %.1f" % load, ylim=(0, 1.01))
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "colocate-cdf.png"), dpi=110)
    plt.close(fig)
    # BE throughput and SLO attainment against LS load
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for cfg in order:
        pts = []
        for load in loads:
            rs = [r for r in rows if r["config"] == cfg and r["load"] == load]
            if rs:
                pts.append((load, sum(r["be_batches_per_s"] for r in rs) / len(rs),
                            100 * sum(r["ls"].get("slo_attainment", 0) for r in rs) / len(rs)))
        if pts:
            ax1.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=cfg)
            ax2.plot([p[0] for p in pts], [p[2] for p in pts], "o-", label=cfg)
    ax1.set(xlabel="LS load (fraction of solo capacity)", ylabel="BE batches/s", title="BE throughput")
    ax2.set(xlabel="LS load (fraction of solo capacity)", ylabel="% of LS requests within SLO", title="LS SLO attainment")
    ax2.axhline(99, ls=":", c="k")
    ax1.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "colocate.png"), dpi=110)
    plt.close(fig)
    # SM shares over time, from the policies' traces (run 0 at each load)
    traced = [r for r in rows if r.get("trace") and r["run"] == 0]
    if not traced:
        return
    fig, axs = plt.subplots(len(traced), 1, figsize=(10, 1.8 * len(traced)), squeeze=False)
    for ax, r in zip(axs[:, 0], traced):
        path = os.path.join(r["_dir"], r["trace"])
        if not os.path.exists(path):
            continue
        series, t0 = {}, None
        with open(path) as f:
            for line in f:
                e = json.loads(line)
                if "masks" not in e:
                    continue
                t0 = e["t_us"] if t0 is None else t0
                for svc, m in e["masks"].items():
                    series.setdefault(svc, []).append(((e["t_us"] - t0) / 1e3, len(parse_smset(m, 1 << 16)) if m else 0))
        for svc, pts in series.items():
            ax.step([p[0] for p in pts], [p[1] for p in pts], where="post", label=svc, lw=0.8)
        ax.set(ylabel="SMs", ylim=(0, 134), title="%s, load %.1f" % (r["config"], r["load"]))
        ax.title.set_fontsize(8)
        ax.legend(fontsize=6, loc="right")
    axs[-1, 0].set_xlabel("ms since the first decision")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "colocate-sms.png"), dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    args = parse()
    if args.be_child:
        CHILD = True
        sys.exit(be_child(args))
    if args.merge:
        sys.exit(merge(args))
    sys.exit(main(args))
