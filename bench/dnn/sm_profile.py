"""sm_profile.py: the offline SM-scaling profiler (bench.py --side tidal --sections profile): each model's
request latency, and each of its kernels' time per request, against the SM count it gets
from a tidal partition of the first k SMs of an order (a green context where k is a multiple
of the group grain, so short kernels run as originals there and long ones as clones on those
SMs). --profile-order index: SMs 0..k-1. --profile-order clusters: the co-schedulable 8-SM
groups' SMs, group after group (bench/dnn/greenctx.py measures them), then the rest: every
multiple of 8 up to 120 is then a union of whole cluster groups, where kernels with
thread-block clusters of up to 8 blocks (cuDNN's and cuBLASLt's sm90 kernels) run; in
index order the H200's first cluster group is complete only at k = 50.

Per model it fits latency(k) = a/k + b with libtidal's own fit (tidal.policy.fit, the code
the policies use), finds the knee (the fewest SMs within --profile-slack of the latency on
all SMs, on the model and on the measurements), and writes OUT/profile-<model>.json, which
is what a serving loop hands the policies (tidal.policy.Scaling(a_us, b_us); bench/colocate
takes the file as --ls-profile), and OUT/profile-<model>.png (measured points and fitted
curves) when matplotlib is there. An SM count at which the model fails (a closed kernel the
partition's green context refuses) is recorded in the JSON's "failed" with its error and
skipped; the fit and knees come from the counts that worked ("measured_sms"), at least two.
"""
import json
import os


def default_counts(nsm):
    ks = [2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 66, 80, 96, 112, nsm]
    return sorted({k for k in ks if k <= nsm})


def _measured_knee(points, slack):
    best = min(p["p50_us"] for p in points)
    return min(p["sms"] for p in points if p["p50_us"] <= (1 + slack) * best)


def cluster_order(bench):
    """SM ids: the 8-SM cluster groups' SMs in group order, then the SMs in none."""
    from greenctx import GreenSplit
    g = GreenSplit(min_count=8, flags=0, log=bench.log)
    try:
        order = [sm for grp in g.group_sms for sm in sorted(grp)]
    finally:
        g.close()
    return order + [sm for sm in range(bench.nsm) if sm not in set(order)]


def profile_model(bench, name, counts, n, warmup, slack, order):
    import torch
    from torch.profiler import ProfilerActivity, profile
    import common
    from tidal import policy
    meas, log = bench.measure, bench.log
    cm, x = bench.models[name]
    points, kernels = [], {}
    failed = []
    for k in counts:
        p = bench.tidal_part("prof-%d" % k, common.format_smset(order[:k]))
        s = p.stream()
        g = None
        try:
            g, _ = meas.capture(cm, x, s)
            lat = meas.latencies(meas.graph_issue(g), s, n, warmup)
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                with torch.cuda.stream(s):
                    g.replay()
                s.synchronize()
        except RuntimeError as e:
            # closed kernels may not run on a few SMs (session 12: ResNet-50's cuDNN
            # convolution fails with CUDNN_STATUS_EXECUTION_FAILED on a 2-SM partition; a
            # cluster launch larger than a 2-SM-grain green context allows is one candidate,
            # docs/design.md "Known limits"): the count is recorded as failed and the next
            # one is tried, so a profile comes from the counts that work
            failed.append({"sms": k, "error": str(e)[:300]})
            log("profile %-10s %3d SMs: FAILED: %s" % (name, k, str(e)[:200]))
            g = None
            try:
                torch.cuda.synchronize()
            except RuntimeError as e2:   # a sticky error: every later count would fail too
                raise RuntimeError("profile %s: the CUDA context is unusable after the failure at %d SMs (%s); "
                                   "measured at %s, failed at %s" % (name, k, str(e2)[:200],
                                                                     [q["sms"] for q in points],
                                                                     [f["sms"] for f in failed])) from e
            p.close()
            continue
        ev = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        for kname, (launches, us, _clones) in common.kernel_times(ev).items():
            kernels.setdefault(kname, {"launches": launches, "us": {}})["us"][k] = us
        row = dict(sms=k, placed=bool(p.placed), **common.summarize_us(lat))
        points.append(row)
        log("profile %-10s %3d SMs%s: p50 %8.1f us  p99 %8.1f us" % (
            name, k, "" if row["placed"] else " (not placed)", row["p50_us"], row["p99_us"]))
        del g
        p.close()
    if failed:
        log("profile %s: measured at %s SMs; FAILED at %s (recorded in the JSON's \"failed\")" % (
            name, [q["sms"] for q in points], [f["sms"] for f in failed]))
    if len(points) < 2:
        raise RuntimeError("profile %s: measured at %d SM counts (failed: %s)" % (name, len(points), failed))
    nsm = counts[-1]
    model, rms = policy.fit([q["sms"] for q in points], [q["p50_us"] for q in points])
    out = {"model": name, "sms": counts, "n": n, "slack": slack, "points": points, "failed": failed,
           "measured_sms": [q["sms"] for q in points],
           "fit": dict(model.as_dict(), rms_us=round(rms, 2)),
           "knee": {"fit": model.knee(nsm, 2, slack), "measured": _measured_knee(points, slack)},
           "kernels": {}}
    for kname, kd in sorted(kernels.items(), key=lambda kv: -max(kv[1]["us"].values())):
        ks = sorted(kd["us"])
        entry = {"launches": kd["launches"], "us": {str(k): kd["us"][k] for k in ks},
                 "knee_measured": _measured_knee([{"sms": k, "p50_us": kd["us"][k]} for k in ks], slack)}
        if len(ks) >= 2:
            try:
                m, r = policy.fit(ks, [kd["us"][k] for k in ks])
                entry["fit"] = dict(m.as_dict(), rms_us=round(r, 3))
                entry["knee"] = m.knee(nsm, 2, slack)
            except Exception as e:   # a kernel seen at one SM count only
                entry["fit_error"] = str(e)
        out["kernels"][kname] = entry
    log("profile %s: latency = %.1f/n + %.1f us (rms %.1f us); knee %d SMs (fit), %d (measured)" % (
        name, model.a_us, model.b_us, rms, out["knee"]["fit"], out["knee"]["measured"]))
    return out


def plot(prof, path, top=6):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return "no plot: %s" % e
    from tidal import policy
    fig, (ax, axk) = plt.subplots(1, 2, figsize=(12, 4.5))
    ks = [p["sms"] for p in prof["points"]]
    ax.plot(ks, [p["p50_us"] for p in prof["points"]], "o", label="p50 measured")
    ax.plot(ks, [p["p99_us"] for p in prof["points"]], "x", label="p99 measured")
    m = policy.Scaling(prof["fit"]["a_us"], prof["fit"]["b_us"])
    grid = list(range(2, ks[-1] + 1, 2))
    ax.plot(grid, [m.latency(k) for k in grid], "-", label="%.0f/n + %.0f us" % (m.a_us, m.b_us))
    ax.axvline(prof["knee"]["fit"], ls=":", c="k", label="knee %d SMs" % prof["knee"]["fit"])
    failed = [f["sms"] for f in prof.get("failed", [])]
    ax.set(xlabel="SMs (tidal partition of the first k, %s order)" % prof.get("order", "index"),
           ylabel="request latency (us)",
           title=prof["model"] + (" (FAILED at %s SMs)" % failed if failed else ""))
    ax.set_ylim(bottom=0)
    ax.legend()
    for kname, kd in list(prof["kernels"].items())[:top]:
        kk = sorted(int(k) for k in kd["us"])
        axk.plot(kk, [kd["us"][str(k)] for k in kk], "o-", ms=3, label=kname[:40])
    axk.set(xlabel="SMs", ylabel="us per request", title="%s: the %d longest kernels" % (prof["model"], top))
    axk.set_yscale("log")
    axk.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def run(bench):
    a = bench.args
    if not bench.tt:
        raise RuntimeError("the profile section runs on the tidal side (it needs tidal partitions)")
    if a.profile_order not in ("index", "clusters"):
        raise RuntimeError("--profile-order: %r is neither index nor clusters" % a.profile_order)
    order = cluster_order(bench) if a.profile_order == "clusters" else list(range(bench.nsm))
    dflt = default_counts(bench.nsm) if a.profile_order == "index" else \
        sorted({k for k in list(range(8, 121, 8)) + [bench.nsm] if k <= bench.nsm})
    counts = [int(v) for v in a.profile_sms.split(",")] if a.profile_sms else dflt
    bad = [k for k in counts if k < 1 or k > bench.nsm]
    if bad:
        raise RuntimeError("--profile-sms: %s outside 1..%d" % (bad, bench.nsm))
    names = [m for m in (a.profile_models.split(",") if a.profile_models else bench.models) if m in bench.models]
    bench.res["profile"] = {}
    for name in names:
        prof = profile_model(bench, name, sorted(counts), a.profile_n, a.warmup, a.profile_slack, order)
        prof["order"] = a.profile_order
        prof["sm_order"] = order
        bench.res["profile"][name] = prof
        path = os.path.join(a.out, "profile-%s.json" % name)
        with open(path, "w") as f:
            json.dump(prof, f, indent=1)
        why = plot(prof, os.path.join(a.out, "profile-%s.png" % name))
        bench.log("wrote %s%s" % (path, "; " + why if why else " and its .png"))
        bench.res.save()
