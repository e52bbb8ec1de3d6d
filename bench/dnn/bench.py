#!/usr/bin/env python3
"""One process of the DNN benchmark (bench/dnn/run.sh runs two: --side unmod, then
--side tidal under scripts/tidal-run). Writes OUT/<side>.json; report.py merges them.

  --side unmod   no tidal at all (the script refuses to run if libtidal is preloaded or
                 TRITON_PTXAS_PATH is tidal-ptxas):
                 a. every model on a plain stream, eager and CUDA-graph replay
                 b. LS models on a green context of the LS SMs made with cuda.bindings
                 c. LS (bert-base graph) alone / under a BE storm (bert-large graph) on
                    (i) two plain streams, (ii) LS high priority, (iii) green contexts
                    LS SMs / BE SMs; BE alone on all SMs and on the BE SMs
  --side tidal   under tidal-run (every Triton kernel rewritten, every launch interposed):
                 a. every model on a tidal partition "all", per placement mode
                 b. LS models on a tidal partition of the LS SMs
                 c. (iv) LS / BE on tidal partitions of the LS / BE SMs, LS alone and
                    BE alone on them
                 a', b', c': the same comparisons inside this process (--no-graph-pairs
                    skips them): graphs interleaved request for request against a plain
                    stream / a green context no partition governs; the storm against the
                    green split in alternating rounds
                 profile (only when asked, --sections profile): latency vs SM count per
                    model and kernel, fitted a/n + b, the knee (sm_profile.py)
Both: kernel census per model (torch.profiler kernel names: Triton vs closed), compile
times, output checks (the tidal side compares its outputs with the unmodified side's).
A failing section is printed with its traceback and recorded; the others still run; the
exit status is 1 if any failed.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common  # noqa: E402
from common import Log, Results, run_section, summarize_us  # noqa: E402


def parse():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side", choices=["unmod", "tidal"], required=True)
    ap.add_argument("--out", required=True, help="directory for <side>.json")
    ap.add_argument("--work", required=True, help="directory for reference outputs (shared by the two sides)")
    ap.add_argument("--models", default="bert-base,bert-large,resnet50")
    ap.add_argument("--sections", default="census,a,b,c")
    ap.add_argument("--n", type=int, default=1000, help="timed requests per latency measurement")
    ap.add_argument("--n-large", type=int, default=100, help="timed requests for bert-large in section a")
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--storm-n", type=int, default=500, help="LS requests per storm configuration")
    ap.add_argument("--be-depth", type=int, default=2, help="BE requests kept queued")
    ap.add_argument("--be-alone-s", type=float, default=1.0, help="seconds of BE-alone throughput")
    ap.add_argument("--placements", default="hybrid,persistent,original", help="tidal section a")
    ap.add_argument("--no-graph-pairs", dest="graph_pairs", action="store_false",
                    help="tidal side: skip the in-process pairs: sections a and b interleaved (a-pair, b-pair), "
                    "section c's storm against the green split in alternating rounds (pair-iv-tidal, pair-iii-green)")
    ap.add_argument("--pair-rounds", type=int, default=4,
                    help="section c's in-process pairs: alternating rounds (each of --storm-n / rounds LS requests)")
    ap.add_argument("--ls-sms", default=None, help="default: the first half of the SMs (0-65 on 132)")
    ap.add_argument("--be-sms", default=None, help="default: the second half (66-131 on 132)")
    ap.add_argument("--quick", action="store_true", help="plumbing check: BE in section c is bert-base too")
    ap.add_argument("--compile-only", action="store_true", help="build, compile, census; no timing")
    ap.add_argument("--profile-sms", default=None, help="section profile: SM counts (default 2,4,8,...,all)")
    ap.add_argument("--profile-order", default="index",
                    help="section profile: which k SMs: index (0..k-1) or clusters (whole 8-SM cluster groups first)")
    ap.add_argument("--profile-n", type=int, default=100, help="section profile: timed requests per SM count")
    ap.add_argument("--profile-slack", type=float, default=0.05, help="section profile: the knee's tolerance")
    ap.add_argument("--profile-models", default=None, help="section profile: models (default: all loaded)")
    return ap.parse_args()


def check_side(side):
    """The unmodified side must not have tidal in it; the tidal side must have all of it."""
    pre = os.environ.get("LD_PRELOAD", "")
    px = os.environ.get("TRITON_PTXAS_PATH", "")
    if side == "unmod":
        bad = []
        if "tidal" in pre:
            bad.append("LD_PRELOAD=%s" % pre)
        if "tidal" in px:
            bad.append("TRITON_PTXAS_PATH=%s" % px)
        if bad:
            raise SystemExit("bench.py --side unmod: tidal is in the environment (%s): run it without tidal-run"
                             % ", ".join(bad))
        return None
    import tidal.torch as tt   # before torch.compile: static launcher off, Triton hook installed
    info = tt.info()
    if info["problems"]:
        raise SystemExit("bench.py --side tidal: tidal cannot run:\n  - " + "\n  - ".join(info["problems"]))
    tt.init()
    return tt


# ------------------------------------------------------------------ helpers


class Tidal:
    """Snapshots of tidal's counters around a measurement (None on the unmodified side)."""

    COUNTERS = ("launches_rewritten", "launches_original", "launches_unknown", "launches_refused",
                "launches_unmasked", "joins", "launches_graph_probe", "launches_smem_full",
                "launches_cluster_routed")

    def __init__(self, tt):
        self.tt = tt

    def snap(self):
        return self.tt.stats() if self.tt else None

    def delta(self, a):
        if not self.tt:
            return None
        b = self.tt.stats()
        return {k: b[k] - a[k] for k in self.COUNTERS}

    def part_check(self, part):
        if not self.tt:
            return None
        s = self.tt.stats(part)
        return {"violations": s["violations"], "blocks_total": s["blocks_total"],
                "blocks_outside_mask": s["blocks_outside_mask"]}


def halves(nsm):
    h = (nsm // 2) & ~1
    return "0-%d" % (h - 1), "%d-%d" % (h, nsm - 1)


def outdiff(y, ref):
    """(max |y - ref|, that / max |ref|), or a string when the shapes differ."""
    if ref is None:
        return None, None
    if tuple(y.shape) != tuple(ref.shape):
        return "shape %s vs %s" % (tuple(y.shape), tuple(ref.shape)), None
    d = float((y.float().cpu() - ref.float()).abs().max())
    m = float(ref.float().abs().max())
    return round(d, 5), (round(d / m, 5) if m else None)


REL_DIFF_LIMIT = 0.05   # outputs vs the unmodified side's: fp16, maybe other kernel choices


# ------------------------------------------------------------------ the run


class Bench:
    def __init__(self, args, tt, res, log):
        import torch
        import models as M
        import measure
        self.torch, self.M, self.measure = torch, M, measure
        self.args, self.tt, self.res, self.log = args, tt, res, log
        self.tid = Tidal(tt)
        self.side = args.side
        self.models = {}          # name -> (compiled, input)
        self.nsm = torch.cuda.get_device_properties(0).multi_processor_count
        ls, be = halves(self.nsm)
        self.ls_sms = args.ls_sms or ls
        self.be_sms = args.be_sms or be
        res["settings"]["ls_sms"] = self.ls_sms
        res["settings"]["be_sms"] = self.be_sms

    # -- models
    def compile_all(self):
        M, torch = self.M, self.torch
        s = M.settings()
        self.res["settings"]["inductor"] = s
        self.log("inductor settings: %s" % s)
        M.configure_inductor(s)
        for name in self.args.models.split(","):
            t = time.time()
            m, x = M.build(name, attn=s["attn_implementation"])
            built = time.time() - t
            self.log("%s: %s; built in %.1fs; compiling" % (name, M.SPECS[name][1], built))
            fx0 = M.fx_cache_counters()
            cm, first = M.compile_model(m, x, s, self.log)
            fx1 = M.fx_cache_counters()
            fx = {k: fx1[k] - fx0.get(k, 0) for k in fx1 if isinstance(fx1[k], int)} if "error" not in fx1 else fx1
            self.models[name] = (cm, x)
            self.res["compile"][name] = {"build_s": round(built, 1), "first_call_s": round(first, 1),
                                         "total_s": round(time.time() - t, 1), "fx_graph_cache": fx}
            self.log("%s: FX-graph cache %s" % (name, fx))
            torch.cuda.synchronize()
        if self.tt:
            st = self.tt.stats()
            self.res["compile"]["tidal_stats_after_compile"] = st
            self.log("tidal after compile: %s" % st)
            if st["triton_modules_not_rewritten"]:
                self.log("WARNING: %d Triton modules without the rewrite" % st["triton_modules_not_rewritten"])
        return True

    # -- streams
    def tidal_part(self, name, smset, placement="hybrid"):
        p = self.tt.Partition(name, smset)
        if placement != "hybrid":
            p.placement = placement
        return p

    def check(self, what, ok, detail=""):
        """Record a pass/fail check (a failed one makes the exit status 1)."""
        self.res["checks"].append({"check": what, "ok": bool(ok), "detail": detail})
        self.log("%s %s%s" % ("PASS" if ok else "FAIL", what, ": " + detail if detail else ""))

    def part_check(self, part, what):
        """tidal's device counters of part: no liveness-guard activations, no logical blocks
        on SMs outside its mask."""
        pc = self.tid.part_check(part)
        if pc is not None:
            self.check("partition %s: %s" % (part.name, what),
                       pc["violations"] == 0 and pc["blocks_outside_mask"] == 0,
                       "violations %d, blocks outside the mask %d of %d" % (
                           pc["violations"], pc["blocks_outside_mask"], pc["blocks_total"]))
        return pc

    def probe(self, stream, allowed, what):
        """Check that a Triton kernel on stream runs on `allowed` SMs only (a set)."""
        seen = self.measure.smids_of(stream)
        out = sorted(seen - allowed)
        ok = not out
        self.check("sms-inside %s" % what, ok, "a %%smid kernel saw %d SMs, %d outside the %d allowed%s" % (
            len(seen), len(out), len(allowed), (": %s" % out[:16]) if out else ""))
        if not ok:
            raise RuntimeError("%s: blocks ran on SMs %s outside the set" % (what, out[:16]))

    # -- census
    def census(self):
        torch = self.torch
        from torch.profiler import ProfilerActivity, profile
        stream, part = self.plain_or_all()
        for name, (cm, x) in self.models.items():
            snap = self.tid.snap()
            with torch.no_grad():
                with torch.cuda.stream(stream):
                    cm(x)
                stream.synchronize()
                interposed = self.tid.delta(snap)
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                    with torch.cuda.stream(stream):
                        cm(x)
                    stream.synchronize()
            names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
            c = common.kernel_census(names)
            g, _ = self.measure.capture(cm, x, stream)
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                with torch.cuda.stream(stream):
                    g.replay()
                stream.synchronize()
            gev = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                         key=lambda e: e.time_range.start)
            gnames = [e.name for e in gev]
            gc = common.kernel_census(gnames)
            del g
            c["graph_replay"] = {k: gc[k] for k in ("kernels", "triton", "closed", "reshaped_clones")}
            # what the two sides' kernels are (the same when the tidal side reused the
            # unmodified side's compiled graphs) and how long each ran in one replay
            c["graph_replay"]["signature"] = common.kernel_signature(gnames)
            c["graph_replay"]["kernel_us"] = common.kernel_times(gev)
            c["interposed_per_request"] = interposed
            if interposed is not None:
                c["interposed_total"] = sum(interposed[k] for k in Tidal.COUNTERS
                                            if k not in ("joins", "launches_graph_probe", "launches_smem_full",
                                                         "launches_cluster_routed"))
            self.res["kernels"][name] = c
            self.log("%s kernels/request: %d (%d Triton, %d closed: %s); graph replay %d kernels%s%s" % (
                name, c["kernels"], c["triton"], c["closed"],
                ", ".join("%s %d" % kv for kv in c["kinds"].items() if kv[0] != "triton") or "none",
                gc["kernels"], "; as clones %d" % c["reshaped_clones"] if self.tt else "",
                "; interposed %s" % interposed if interposed else ""))
            for n, k in c["closed_names"][:8]:
                self.log("    closed x%d: %s" % (k, n))
        self.part_all = part

    def plain_or_all(self):
        """Section a's / the census's stream: a plain stream, or tidal partition "all" (hybrid)."""
        if getattr(self, "_pa", None) is None:
            torch = self.torch
            if self.tt:
                p = self.tidal_part("all-hybrid", "all")
                self._pa = (p.stream(), p)
                self.log("tidal partition all-hybrid: mask %s, placed %s" % (p.mask, p.placed))
            else:
                self._pa = (torch.cuda.Stream(priority=0), None)
        return self._pa

    # -- a / b: latency of one model on one stream
    def latency_rows(self, section, config, stream, names, part=None, refs=True):
        torch, meas, a = self.torch, self.measure, self.args
        for name in names:
            cm, x = self.models[name]
            n = a.n_large if name == "bert-large" else a.n
            snap = self.tid.snap()
            lat = meas.latencies(meas.eager_issue(cm, x), stream, n, a.warmup)
            eager_stats = self.tid.delta(snap)
            box = {}   # tidal counters from just before the capture: how its kernels were captured
            g, y = meas.capture(cm, x, stream, before=lambda: box.setdefault("snap", self.tid.snap()))
            cap_stats = self.tid.delta(box["snap"])
            glat = meas.latencies(meas.graph_issue(g), stream, n, a.warmup)
            ref_path = os.path.join(a.work, "ref_%s.pt" % name)
            diff = rel = None
            if self.side == "unmod" and section == "a":
                torch.save(y.detach().cpu(), ref_path)
            elif refs and os.path.exists(ref_path):
                diff, rel = outdiff(y, torch.load(ref_path))
                ok = isinstance(diff, float) and rel is not None and rel <= REL_DIFF_LIMIT
                self.check("outputs %s %s vs unmod-plain" % (config, name), ok,
                           "max |diff| %s, relative %s (limit %s)" % (diff, rel, REL_DIFF_LIMIT))
            pc = self.part_check(part, "%s %s" % (config, name)) if part is not None else None
            for mode, l, st in (("eager", lat, eager_stats), ("graph", glat, cap_stats)):
                row = dict(section=section, side=self.side, config=config, model=name, mode=mode,
                           **summarize_us(l), tidal_launches=st, max_abs_diff_vs_unmod=diff,
                           rel_diff_vs_unmod=rel, partition=pc)
                self.res.row(**row)
                self.log("%s %-22s %-10s %-5s p50 %8.1f us  p99 %8.1f us  (n %d)%s%s" % (
                    section, config, name, mode, row["p50_us"], row["p99_us"], row["n"],
                    "  tidal %s" % st if st else "", "  diff %s" % diff if diff is not None else ""))
            del g, y
            self.res.save()

    def section_a(self):
        names = list(self.models)
        if not self.tt:
            stream, _ = self.plain_or_all()
            self.latency_rows("a", "unmod-plain", stream, names)
            return
        for placement in self.args.placements.split(","):
            if placement == "hybrid":
                stream, p = self.plain_or_all()
            else:
                p = self.tidal_part("all-%s" % placement, "all", placement)
                stream = p.stream()
            self.probe(stream, set(range(self.nsm)), "tidal all-%s stream" % placement)
            self.latency_rows("a", "tidal-all-%s" % placement, stream, names, part=p)
            if placement == "hybrid" and self.args.graph_pairs:
                plain = self.torch.cuda.Stream(priority=0)
                for n in names:
                    run_section(self.res, self.log, "a pair %s" % n, self.pair_rows, "a", "all", "tidal-all-hybrid", stream,
                                "unmod-plain", plain, n, p)

    def section_b(self):
        """LS models on an LS-SM partition vs a green context of the same SMs: on the LS set
        (2-SM groups: clusters of at most 2 blocks there, and a tidal partition routes larger
        ones to its 8-SM groups) and, when it differs, on the union of the 8-SM groups
        inside it (both sides' contexts then run clusters of up to 8 themselves). Each model
        and set is its own step: a model the green context refuses (cuDNN's cluster
        convolutions on 2-SM groups) is an error row, and the others still run."""
        from common import parse_smset, run_section
        names = [n for n in ("bert-base", "resnet50") if n in self.models]
        sets = [self.ls_sms]
        cs = self.green().cluster_set(self.ls_sms)
        self.res["settings"]["ls_cluster_sms"] = cs
        if cs and set(parse_smset(cs, self.nsm)) != set(parse_smset(self.ls_sms, self.nsm)):
            sets.append(cs)
        for smset in sets:
            allowed = set(parse_smset(smset, self.nsm))
            if self.tt:
                p = self.tidal_part("ls-b-%d" % len(allowed), smset)
                self.log("tidal partition for %s: mask %s, placed %s" % (smset, p.mask, p.placed))
                self.res["settings"].setdefault("tidal_ls_placed", p.placed)
                s = p.stream()
                self.probe(s, allowed, "tidal %s stream" % smset)
                gs = None   # stream() makes a new green context each call: one per SM set
                if self.args.graph_pairs:
                    gs = self.green().stream(smset)
                    self.probe(gs, allowed, "green %s stream (tidal process)" % smset)
                for n in names:
                    run_section(self.res, self.log, "b tidal-%s %s" % (smset, n), self.latency_rows, "b",
                                "tidal-%s" % smset, s, [n], part=p)
                    if gs is not None:
                        run_section(self.res, self.log, "b pair-%s %s" % (smset, n), self.pair_rows, "b", smset,
                                    "tidal-" + smset, s, "green-" + smset, gs, n, p)
            else:
                s = self.green().stream(smset)
                self.probe(s, allowed, "green %s stream" % smset)
                for n in names:
                    run_section(self.res, self.log, "b green-%s %s" % (smset, n), self.latency_rows, "b",
                                "green-%s" % smset, s, [n])

    def pair_rows(self, section, sms, tidal_config, ts, other_config, other, name, part):
        """A section's comparison in one process, interleaved (measure.interleaved): the
        model's graph captured on the tidal partition's stream ts and on `other`, a stream
        no partition governs (libtidal launches there as given: the counters say so), and
        replayed request for request, so that the ratio carries no drift between the two
        sides' processes (their rows are a minute apart). Both graphs run this process's
        kernels: the originals are byte-identical to the unmodified side's. Rows: section
        SECTION-pair, configs pair-TIDAL_CONFIG and pair-OTHER_CONFIG, both with pair_key
        TIDAL_CONFIG, role tidal / other and sms SMS (the report pairs them by the key)."""
        meas, a = self.measure, self.args
        cm, x = self.models[name]
        stats = {}
        gt, _ = meas.capture(cm, x, ts, before=lambda: stats.setdefault("t", self.tid.snap()))
        stats["t"] = self.tid.delta(stats["t"])
        go, _ = meas.capture(cm, x, other, before=lambda: stats.setdefault("o", self.tid.snap()))
        stats["o"] = self.tid.delta(stats["o"])
        n = a.n_large if name == "bert-large" else a.n
        lt, lo = meas.interleaved([(meas.graph_issue(gt), ts), (meas.graph_issue(go), other)], n, a.warmup)
        self.part_check(part, "pair-%s %s" % (tidal_config, name))
        for role, config, l, st in (("tidal", tidal_config, lt, stats["t"]), ("other", other_config, lo, stats["o"])):
            row = dict(section=section + "-pair", side=self.side, config="pair-" + config, model=name, mode="graph",
                       pair_key=tidal_config, role=role, sms=sms, **summarize_us(l), tidal_launches=st)
            self.res.row(**row)
            self.log("%s-pair %-24s %-10s graph p50 %8.1f us  p99 %8.1f us  (n %d)  tidal %s" % (
                section, row["config"], name, row["p50_us"], row["p99_us"], row["n"], st))
        del gt, go
        self.res.save()

    def green(self):
        if getattr(self, "_green", None) is None:
            from greenctx import GreenSplit
            self._green = GreenSplit(log=self.log)
            self.res["settings"]["green_groups"] = self._green.group_sms
        return self._green

    # -- c: LS under a BE storm
    def section_c(self):
        torch, meas, a = self.torch, self.measure, self.args
        if "bert-base" not in self.models:
            raise RuntimeError("section c needs bert-base (LS)")
        be_name = "bert-large" if "bert-large" in self.models else None
        if be_name is None:
            if not a.quick:
                raise RuntimeError("section c needs bert-large (BE); --quick uses bert-base as BE instead")
            be_name = "bert-base"
        self.res["settings"]["storm"] = {"ls": "bert-base graph", "be": "%s graph" % be_name,
                                         "be_depth": a.be_depth, "ls_requests": a.storm_n}
        ls_cm, ls_x = self.models["bert-base"]
        be_cm, be_x = self.models[be_name]
        configs = []   # (name, ls stream, be stream or None, ls alone ref name, partitions)
        if self.tt:
            lp = self.tidal_part("ls", self.ls_sms)
            bp = self.tidal_part("be", self.be_sms)
            self.log("tidal partitions: ls %s placed %s, be %s placed %s" % (lp.mask, lp.placed, bp.mask, bp.placed))
            ls_s, be_s = lp.stream(), bp.stream()
            configs += [("alone-tidal", ls_s, None, None, lp), ("iv-tidal", ls_s, be_s, "alone-tidal", lp)]
            be_only = [("be-alone-tidal", be_s, bp)]
        else:
            hi = torch.cuda.Stream(priority=-5)
            lo = torch.cuda.Stream(priority=0)
            p0, p1 = torch.cuda.Stream(priority=0), torch.cuda.Stream(priority=0)
            self.res["settings"]["priorities"] = {"ls_high": hi.priority, "be_low": lo.priority}
            gr = self.green()
            gls, gbe = gr.stream(self.ls_sms), gr.stream(self.be_sms)
            configs += [("alone-plain", p0, None, None, None), ("i-plain", p0, p1, "alone-plain", None),
                        ("alone-priority", hi, None, None, None), ("ii-priority", hi, lo, "alone-priority", None),
                        ("alone-green", gls, None, None, None), ("iii-green", gls, gbe, "alone-green", None)]
            be_only = [("be-alone-plain", p1, None), ("be-alone-green", gbe, None)]
        graphs = {}

        def graph_on(which, stream):
            key = (which, id(stream))
            if key not in graphs:
                cm, x = (ls_cm, ls_x) if which == "ls" else (be_cm, be_x)
                graphs[key] = meas.capture(cm, x, stream)[0]
            return graphs[key]

        alone = {}
        for name, ls_s, be_s, ref, part in configs:
            snap = self.tid.snap()
            g_ls = graph_on("ls", ls_s)
            g_be = graph_on("be", be_s) if be_s is not None else None
            r = meas.ls_under_storm(g_ls.replay, ls_s, a.storm_n, a.warmup,
                                    be_issue=g_be.replay if g_be else None, be_stream=be_s, depth=a.be_depth)
            st = summarize_us(r["ls_ns"])
            be_rps = r["be_done"] / (r["window_ns"] / 1e9) if g_be else None
            row = dict(config=name, side=self.side, ls_p50_us=st["p50_us"], ls_p99_us=st["p99_us"],
                       ls_mean_us=st["mean_us"], ls_n=st["n"], be_rps=round(be_rps, 2) if be_rps is not None else None,
                       be_done=r["be_done"], window_s=round(r["window_ns"] / 1e9, 3), alone_ref=ref,
                       tidal_launches=self.tid.delta(snap),
                       partition=self.part_check(part, "storm %s" % name) if part else None)
            if ref is None:
                alone[name] = row
            else:
                row["p50_vs_alone"] = common.ratio(row["ls_p50_us"], alone[ref]["ls_p50_us"])
                row["p99_vs_alone"] = common.ratio(row["ls_p99_us"], alone[ref]["ls_p99_us"])
            self.res["storm"].append(row)
            self.log("c %-16s LS p50 %8.1f us  p99 %8.1f us%s" % (
                name, row["ls_p50_us"], row["ls_p99_us"],
                "  BE %.1f req/s (%d in %.2fs)  LS/alone p50 %.2fx p99 %.2fx" % (
                    be_rps, r["be_done"], row["window_s"], row["p50_vs_alone"], row["p99_vs_alone"]) if g_be else ""))
            self.res.save()
        for name, be_s, part in be_only:
            r = meas.be_alone(graph_on("be", be_s).replay, be_s, a.be_alone_s, depth=a.be_depth)
            row = dict(config=name, side=self.side, be_rps=round(r["be_rps"], 2), be_done=r["be_done"],
                       window_s=round(r["window_ns"] / 1e9, 3),
                       partition=self.part_check(part, "storm %s" % name) if part else None)
            self.res["storm"].append(row)
            self.log("c %-16s BE alone %.1f req/s" % (name, r["be_rps"]))
        if self.tt and a.graph_pairs:
            self.storm_pairs(graph_on, ls_s, be_s, lp, bp)
        graphs.clear()
        torch.cuda.synchronize()

    def storm_pairs(self, graph_on, ls_s, be_s, lp, bp):
        """Section c's comparison with the static green split inside this process, in
        alternating rounds (--pair-rounds, the first of each round rotating): tidal's LS/BE
        partitions (iv) against green contexts of the same SMs that no partition governs
        (iii, launched as given), then BE alone on each. The two sides' storms otherwise run
        a minute apart in two processes, and a BE throughput of 20-odd requests per storm
        moves 5% with one request: the rows carry be_done so the reader sees the resolution."""
        meas, a = self.measure, self.args
        gr = self.green()
        gls, gbe = gr.stream(self.ls_sms), gr.stream(self.be_sms)
        cfgs = [("pair-iv-tidal", ls_s, be_s, lp, bp), ("pair-iii-green", gls, gbe, None, None)]
        rounds = max(1, a.pair_rounds)
        per = max(20, a.storm_n // rounds)
        acc = {c[0]: {"ls": [], "be_done": 0, "window_ns": 0, "be_alone": 0, "alone_ns": 0, "launches": {}}
               for c in cfgs}
        for r in range(rounds):
            for k in range(len(cfgs)):
                name, l_s, b_s, _, _ = cfgs[(r + k) % len(cfgs)]
                snap = self.tid.snap()   # counters per run: the other configuration's runs interleave
                out = meas.ls_under_storm(graph_on("ls", l_s).replay, l_s, per, 5,
                                          be_issue=graph_on("be", b_s).replay, be_stream=b_s, depth=a.be_depth)
                for key, v in (self.tid.delta(snap) or {}).items():
                    acc[name]["launches"][key] = acc[name]["launches"].get(key, 0) + v
                acc[name]["ls"] += out["ls_ns"]
                acc[name]["be_done"] += out["be_done"]
                acc[name]["window_ns"] += out["window_ns"]
            for k in range(len(cfgs)):
                name, _, b_s, _, _ = cfgs[(r + k) % len(cfgs)]
                out = meas.be_alone(graph_on("be", b_s).replay, b_s, a.be_alone_s / rounds, depth=a.be_depth)
                acc[name]["be_alone"] += out["be_done"]
                acc[name]["alone_ns"] += out["window_ns"]
        for name, _, _, lpart, bpart in cfgs:
            x = acc[name]
            st = summarize_us(x["ls"])
            row = dict(config=name, side=self.side, pair=True, rounds=rounds, ls_p50_us=st["p50_us"],
                       ls_p99_us=st["p99_us"], ls_mean_us=st["mean_us"], ls_n=st["n"],
                       be_rps=round(x["be_done"] / (x["window_ns"] / 1e9), 2), be_done=x["be_done"],
                       window_s=round(x["window_ns"] / 1e9, 3),
                       be_alone_rps=round(x["be_alone"] / (x["alone_ns"] / 1e9), 2), be_alone_done=x["be_alone"],
                       tidal_launches=x["launches"],
                       partition=self.part_check(lpart, "storm %s" % name) if lpart else None,
                       be_partition=self.part_check(bpart, "storm %s be" % name) if bpart else None)
            self.res["storm"].append(row)
            self.log("c %-16s LS p50 %8.1f us  p99 %8.1f us  BE %.1f req/s (%d in %.2fs)  BE alone %.1f req/s (%d)" % (
                name, row["ls_p50_us"], row["ls_p99_us"], row["be_rps"], row["be_done"], row["window_s"],
                row["be_alone_rps"], row["be_alone_done"]))
        self.res.save()


def main():
    args = parse()
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    log = Log(args.side)
    if args.side == "tidal":
        import tidal.torch  # noqa: F401 -- before torch.compile: static launcher off, Triton hook
    import torch
    res = Results(args.side, os.path.join(args.out, "%s.json" % args.side))
    env = common.environment()
    if args.side == "tidal":
        env["tidal"] = tidal.torch.info()
    res["env"] = env
    res["settings"]["args"] = vars(args)
    common.print_env(log, env)
    res.save()
    if not torch.cuda.is_available():
        raise SystemExit("bench.py: no CUDA device")
    tt = check_side(args.side)
    b = Bench(args, tt, res, log)
    t0 = time.time()
    if run_section(res, log, "compile", b.compile_all) is None:
        res.save()
        log("compile failed: nothing else can run")
        return 1
    secs = args.sections.split(",")
    if "census" in secs:
        run_section(res, log, "census", b.census)
    if not args.compile_only:
        import sm_profile
        for s, fn in (("a", b.section_a), ("b", b.section_b), ("c", b.section_c),
                      ("profile", lambda: sm_profile.run(b))):
            if s in secs:
                run_section(res, log, s, fn)
    torch.cuda.synchronize()
    if tt:
        res["tidal_stats_end"] = tt.stats()
        log("tidal stats at the end: %s" % res["tidal_stats_end"])
    res["timings"]["total"] = round(time.time() - t0, 1)
    res.save()
    log("wrote %s; sections %s; %d errors" % (res.path, res["timings"], len(res["errors"])))
    for e in res["errors"]:
        log("FAILED %s: %s" % (e["section"], e["error"]))
    bad = [c for c in res["checks"] if not c["ok"]]
    for c in bad:
        log("FAILED check %s: %s" % (c["check"], c.get("detail", "")))
    return 1 if res["errors"] or bad else 0


if __name__ == "__main__":
    sys.exit(main())
