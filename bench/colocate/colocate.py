#!/usr/bin/env python3
"""The colocation benchmark (issue 12.4): an LS model served from Poisson or bursty arrivals
at fractions of its solo capacity, a BE model closed-loop, in each configuration a user could
pick, with tidal.serve's loop (python/tidal/serve.py). bench/colocate/run.sh runs it as
several processes (the baselines unmodified, MPS clients, tidal under scripts/tidal-run) and
merges what they write; one process runs the configurations it is given:

  alone         LS only (no BE): the ceiling every configuration is held to
  none          two plain streams
  prio          the LS streams at high priority
  green         green contexts (made without tidal, bench/dnn/greenctx.py): LS on --ls-sms,
                BE on --be-sms (2-SM groups, tidal's grain: clusters of more than 2 blocks
                fail there, as on tidal's partition streams: docs/design.md "Known limits")
  timeslice     BE in a second process (no MPS): the GPU time-slices the two contexts
  mps           BE in a second process, both MPS clients (the caller starts the daemon)
  mps-pct       as mps, the LS process at --mps-pct's first and BE at its second active-thread
                percentage (GSLICE's lever; the LS percentage is set by the caller, before
                this process starts CUDA: run.sh does)
  tidal-static  tidal partitions of --ls-sms and --be-sms, nothing moves
  tidal-sgdrc   tidal.policy "sgdrc": LS reserves its demand while it has work (and idle_us
                after), BE runs on every other SM, and on all of them while LS idles;
                variants as tidal-sgdrc:idle=2000 (the hold in us); :placed=1 (--engine c):
                BE also has a graph captured on a partition stream of the SMs it keeps while
                LS holds its demand, run then instead of its all-SM clones
                (tidal_server_share), so that no BE launch lands on LS's SMs
  tidal-gslice  tidal.policy "gslice": the LS share tuned from measured latencies under the SLO;
                :placed=1 (--engine c): each LS instance also has graphs captured on partition
                streams of the first F, F + N, F + 2N... SMs of the LS order (:ladder=N,
                default 16; :from=F, default N; the share never goes below F), and a batch
                runs the largest of them inside LS's share (tidal_server_share), so a grown
                share runs LS's kernels on more SMs as originals, at green speed;
                :be=M (with placed=1): BE too has graphs, on what LS leaves of the order
                past each F, F + M, F + 2M... SMs, and a batch runs the largest inside BE's
                share, so no BE launch lands on LS's SMs (docs/performance.md §20.2)

LS models (--ls, bench/dnn/models.py builds them): bert-base (b1 seq 128) or resnet50
(torchvision ResNet-50, 224x224; Inductor may leave its convolutions to cuDNN: each process
ends with a census of the LS graph's kernels, "ls_kernels", the closed ones named). BE: any.

Arrivals (--arrivals): poisson, or bursty (tidal.serve.bursty, generated here from the seed:
Poisson within bursts at --burst-factor x the mean rate, of exponentially distributed length
with mean --burst-ms, between quiet spells at --quiet-factor x the mean, so that the mean is
the load's rate). Every row and colocate.json's "arrivals" say which; the merge makes one
table per (LS model, arrivals).

Adaptive batching (--ls-batches 1,2,4,8; default 1, batch 1 only): each LS instance holds
one CUDA graph per size; the service's max_batch is the largest. With a policy the batch is
tidal_policy_batch's (GSLICE's rule: the largest batch whose expected latency fits
batch_frac x SLO and that fills within the rest, waiting at most --ls-max-queue-us); without
one (the baselines, tidal-static) it is what is queued, up to max_batch, without waiting. A
batch of k requests runs the graph of the smallest captured size >= k (the other rows are
padding: this benchmark's inputs are fixed tensors, nothing is copied per request, as at
batch 1). Records carry k; rows the mean batch, the batches and the graphs run.

Each request is timed on the host from its arrival to its completion (its instance's stream
synchronized). The LS service has --ls-instances instances (a stream and graphs each), as a
server's model instances: one queue, a request starts on a free instance. SLO = --slo-factor
x the LS model's solo p99 at batch 1 (one plain stream, all SMs, measured in this process,
or taken from --reference: the unmodified process's, so that every process is held to one
SLO); capacity = 1 / its solo mean (requests/s at batch 1), the loads' unit.
A configuration that fails (setting up, or in a run) is an error row of colocate.json, with
the exception, and a FAILED line of the merged table; the others still run, and the process
exits 1.
Writes OUT/colocate.json (every configuration x load x run: LS p50/p99/SLO attainment and
its latencies, mean batch, BE batches/s, the policy's state); `--merge A.json B.json ...`
writes OUT/colocate.md (a table per (LS model, arrivals), mean and range over runs) and per
(LS model, arrivals) colocate[-TAG]-cdf.png (LS latency CDFs), colocate[-TAG].png (BE
throughput against LS load) and colocate[-TAG]-sms.png (the policies' SM shares over time,
from their traces); TAG (e.g. resnet50-bursty) only when the merge has several groups.
`--plan` prints what run.sh would run and an estimate of its time (no GPU).
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


MAX_BATCH = 64          # libtidal's POLICY_MAX_BATCH: the largest batch a policy tracks
ARRIVALS = ("poisson", "bursty")


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ls", default="bert-base", help="the LS model: bert-base or resnet50 (bench/dnn/models.py)")
    ap.add_argument("--be", default="bert-large")
    ap.add_argument("--configs", default="alone,none,prio,green")
    ap.add_argument("--loads", default="0.3,0.5,0.7", help="LS arrival rates as fractions of its solo capacity")
    ap.add_argument("--seconds", type=float, default=3.0, help="per configuration, load and run")
    ap.add_argument("--runs", type=int, default=1, help="runs per configuration and load (seeds seed, seed+1, ...)")
    ap.add_argument("--arrivals", default="poisson", choices=ARRIVALS,
                    help="the LS arrival process: poisson, or bursty (the three options below)")
    ap.add_argument("--burst-factor", type=float, default=5.0,
                    help="bursty: the rate within a burst, x the mean rate (> 1; default 5)")
    ap.add_argument("--burst-ms", type=float, default=50.0,
                    help="bursty: the mean length of a burst in ms (exponentially distributed; default 50)")
    ap.add_argument("--quiet-factor", type=float, default=0.25,
                    help="bursty: the rate between bursts, x the mean rate (0 <= q < 1; default 0.25); the "
                         "quiet spells' mean length follows from the three so that the mean rate is the load's")
    ap.add_argument("--ls-batches", default="1",
                    help="LS batch sizes with a CUDA graph each, e.g. 1,2,4,8 (must include 1; at most %d); the "
                         "service's max_batch is the largest; default 1 (batch 1 only)" % MAX_BATCH)
    ap.add_argument("--ls-max-queue-us", type=int, default=0,
                    help="with a policy and batches > 1: the longest a request waits for its batch to fill "
                         "(tidal_service_config.max_queue_us; 0: libtidal's default, the SLO)")
    ap.add_argument("--batch-frac", type=float, default=None,
                    help="with a policy: the share of the SLO a batch's latency may take "
                         "(tidal_policy_config.batch_frac; default libtidal's, 0.5)")
    ap.add_argument("--ls-instances", type=int, default=2)
    ap.add_argument("--ls-sms", default="0-65")
    ap.add_argument("--be-sms", default="66-131")
    ap.add_argument("--mps-pct", default="50,50", help="LS,BE active-thread percentages of mps-pct")
    ap.add_argument("--slo-factor", type=float, default=2.0)
    ap.add_argument("--reference", default=None,
                    help="a colocate.json (of the same LS model) whose solo, SLO and capacity this process uses")
    ap.add_argument("--ls-profile", default=None,
                    help="A,B: the LS model's latency = A/n + B us; or a profile JSON of bench/dnn's profile "
                         "section (profile-MODEL.json: its fit; it must be the LS model's)")
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
    ap.add_argument("--compile-only", action="store_true",
                    help="compile the models (every LS batch size) and exit: fills the compile caches")
    ap.add_argument("--be-child", action="store_true", help=argparse.SUPPRESS)   # the BE process of TWO_PROCESS
    ap.add_argument("--merge", nargs="+", metavar="JSON", default=None,
                    help="merge these colocate.json files into OUT's table and plots (no GPU): a table per "
                         "(LS model, arrivals), headed by the first file of it (its solo and SLO); a "
                         "configuration in a later file replaces an earlier file's rows of it")
    ap.add_argument("--plan", nargs="+", metavar="PROCESS=CONFIGS", default=None,
                    help="print the configurations x loads x runs x seconds run.sh would run, with an "
                         "estimate of its time (no GPU); PROCESS: base, mps, mps-pct or tidal")
    ap.add_argument("--plan-build", action="store_true", help=argparse.SUPPRESS)   # run.sh: tidal pieces to build
    a = ap.parse_args(argv)
    import models   # bench/dnn/models.py: the names only (torch is imported when a model is built)
    for what, m in (("--ls", a.ls), ("--be", a.be)):
        if m not in models.MODELS:
            ap.error("%s %s: unknown model (bench/dnn/models.py has %s)" % (what, m, ", ".join(models.MODELS)))
    try:
        a.batches = parse_batches(a.ls_batches)
        a.arrival_spec = arrivals_spec(a.arrivals, a.burst_factor, a.burst_ms, a.quiet_factor)
    except ValueError as e:
        ap.error(str(e))
    return a


# ------------------------------------------------------------------ pure helpers (unit-tested)

def parse_batches(text):
    """'1,2,4,8' -> (1, 2, 4, 8): the LS batch sizes with a graph each (sorted, distinct;
    1 must be there: the solo reference and a lone request run batch 1)."""
    try:
        sizes = sorted({int(v) for v in str(text).split(",") if v.strip()})
    except ValueError:
        raise ValueError("--ls-batches %r: want sizes like 1,2,4,8" % text) from None
    if not sizes or sizes[0] != 1:
        raise ValueError("--ls-batches %r: must include 1 (the solo reference and a lone request run batch 1)" % text)
    if sizes[-1] > MAX_BATCH:
        raise ValueError("--ls-batches %r: %d > %d, the largest batch libtidal's policies track" % (
            text, sizes[-1], MAX_BATCH))
    return tuple(sizes)


def graph_batch(sizes, k):
    """The graph a batch of k requests runs: the smallest captured size >= k (the rest of its
    rows are padding). k above the largest size is an error (the service's max_batch is the
    largest, so the serving loop never takes more)."""
    if k < 1:
        raise ValueError("a batch of %d requests" % k)
    for b in sizes:
        if b >= k:
            return b
    raise ValueError("a batch of %d requests: no graph that large (sizes %s)" % (k, ",".join(map(str, sizes))))


def arrivals_spec(kind, burst_factor=5.0, burst_ms=50.0, quiet_factor=0.25):
    """The arrival process as colocate.json records it: {kind, parameters, label, title};
    the label (file-name safe) tells runs of different processes apart in the merge."""
    if kind == "poisson":
        return {"kind": "poisson", "label": "poisson", "title": "Poisson arrivals"}
    if kind != "bursty":
        raise ValueError("--arrivals %r: want %s" % (kind, " or ".join(ARRIVALS)))
    if not burst_factor > 1 or not 0 <= quiet_factor < 1 or not burst_ms > 0:
        raise ValueError("bursty arrivals: want --burst-factor > 1, 0 <= --quiet-factor < 1, --burst-ms > 0 "
                         "(got %g, %g, %g)" % (burst_factor, quiet_factor, burst_ms))
    f = (1 - quiet_factor) / (burst_factor - quiet_factor)   # the share of time in bursts (serve.bursty)
    quiet_ms = burst_ms * (1 - f) / f
    return {"kind": "bursty", "burst_factor": burst_factor, "burst_ms": burst_ms, "quiet_factor": quiet_factor,
            "quiet_ms": round(quiet_ms, 1),
            "label": "bursty-%gx-%gms-q%g" % (burst_factor, burst_ms, quiet_factor),
            "title": "bursty arrivals (bursts at %gx the mean rate, %g ms on average; quiet spells at %gx, "
                     "%.0f ms on average)" % (burst_factor, burst_ms, quiet_factor, quiet_ms)}


def make_arrivals(spec, rate, seconds, seed):
    """Arrival times (s from 0) of spec's process at mean `rate` requests/s."""
    from tidal import serve
    if spec["kind"] == "poisson":
        return serve.poisson(rate, seconds, seed=seed)
    return serve.bursty(rate, seconds, seed=seed, burst_factor=spec["burst_factor"],
                        burst_s=spec["burst_ms"] / 1e3, quiet_factor=spec["quiet_factor"])


def batch_stats(request_batches):
    """{mean, batches: {k: count}} from the batch size each request's record carries (a batch
    of k requests leaves k records saying k): the batches run per size, and the mean batch
    over batches (requests / batches), not over requests."""
    per_k = {}
    for k in request_batches:
        per_k[k] = per_k.get(k, 0) + 1
    hist = {}
    for k, n in per_k.items():
        if n % k:
            raise ValueError("%d records say batch %d: not whole batches" % (n, k))
        hist[k] = n // k
    nb = sum(hist.values())
    return {"mean": round(sum(per_k.values()) / nb, 3) if nb else None,
            "batches": {str(k): hist[k] for k in sorted(hist)}}


def load_profile(text, ls):
    """--ls-profile: 'A,B' or a bench/dnn profile JSON -> (a_us, b_us, what). The JSON must
    be the LS model's (a profile of another model is an error, not a silent mismatch)."""
    if text.endswith(".json") or os.path.exists(text):
        with open(text) as f:
            prof = json.load(f)
        if prof.get("model") != ls:
            raise ValueError("--ls-profile %s is a profile of %s, the LS model is %s" % (text, prof.get("model"), ls))
        fit = prof["fit"]
        return float(fit["a_us"]), float(fit["b_us"]), "%s (measured at %s SMs%s)" % (
            os.path.basename(text), prof.get("measured_sms", [q["sms"] for q in prof.get("points", [])]),
            ", failed at %s" % [x["sms"] for x in prof["failed"]] if prof.get("failed") else "")
    try:
        pa, pb = (float(v) for v in text.split(","))
    except ValueError:
        raise ValueError("--ls-profile %r: want A,B (us) or a profile JSON" % text) from None
    return pa, pb, "A,B given"


def config_names(configs):
    return [c.strip() for c in configs.split(",") if c.strip()]


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
        if not sep or k not in ("idle", "demand", "placed", "ladder", "from", "be") or not v.isdigit():
            raise SystemExit("colocate.py: configuration %s: option %r: want idle=US, demand=SMS, placed=0|1, "
                             "ladder=SMS, from=SMS or be=SMS" % (cfg, o))
        kw[k] = int(v)
    if base not in CONFIGS:
        raise SystemExit("colocate.py: unknown configuration %s (known: %s)" % (base, ", ".join(CONFIGS)))
    allowed = {"tidal-sgdrc": ("idle", "demand", "placed"),
               "tidal-gslice": ("demand", "placed", "ladder", "from", "be")}
    bad = [k for k in kw if k not in allowed.get(base, ())]
    if bad:
        raise SystemExit("colocate.py: configuration %s: option %s is not %s's (%s has %s)" % (
            cfg, bad[0], base, base, ", ".join(allowed.get(base, ())) or "none"))
    for k in ("ladder", "from", "be"):
        if k in kw and (not kw.get("placed") or kw[k] < 2 or kw[k] % 2):
            raise SystemExit("colocate.py: configuration %s: %s=N needs placed=1 and an even N >= 2" % (cfg, k))
    return base, kw


def ladder_sets(order, step, keep, first=None):
    """The LS ladder of tidal-gslice:placed=1: the first `first` (default step), first +
    step, ... SMs of the LS order, up to all but keep (BE's slice), as SM-set texts. A CNN
    whose cuDNN kernels launch clusters needs whole 8-SM cluster groups in every step:
    start it at its --ls-sms (from=64 with 0-63)."""
    from common import format_smset
    return [format_smset(sorted(order[:n])) for n in range(first or step, len(order) - keep + 1, step)]


def be_ladder_sets(order, step, keep, first):
    """BE's ladder of tidal-gslice:placed=1:be=M: what LS leaves of the order past its first
    `first`, first + step, ... SMs (LS never has fewer than first; BE keeps at least keep)."""
    from common import format_smset
    return [format_smset(sorted(order[n:])) for n in range(first, len(order) - keep + 1, step)]


def ladder_counts(records, shares):
    """Batches per ladder step (its SM count; 0: the instance's own graph) of a service's
    records, a batch being one (start, end); shares: the {SM set: graph(s)} the engine had."""
    from common import parse_smset
    steps = [0] + [len(parse_smset(n, 1 << 10)) for n in shares]
    seen = {}
    for _s, _e, share in {(r.start, r.end, r.share) for r in records}:
        seen[steps[share]] = seen.get(steps[share], 0) + 1
    return {str(k): seen[k] for k in sorted(seen)}


# ------------------------------------------------------------------ models

class Models:
    """The compiled models of this process (bench/dnn/models.py builds and compiles them, with
    its Inductor settings). The LS model is compiled at every size of ls_batches (compiled
    with dynamic=False: a graph per input shape), the others at their models.SPECS batch."""

    def __init__(self, names, ls=None, ls_batches=(1,)):
        import torch
        import models as M
        import measure
        self.torch, self.measure, self.M = torch, measure, M
        self.settings = s = M.settings()
        M.configure_inductor(s)
        if ls is not None and len(ls_batches) > 1:
            self._allow_shapes(torch, len(ls_batches))
        self.comp, self.inputs, self.compile_s = {}, {}, {}
        for name in names:
            if name not in M.SPECS:
                raise SystemExit("colocate.py: unknown model %s (bench/dnn/models.py has %s)" % (
                    name, ", ".join(M.MODELS)))
            sizes = ls_batches if name == ls else (M.SPECS[name][0],)
            m, x = M.build(name, attn=s["attn_implementation"], batch=sizes[0])
            cm, first = M.compile_model(m, x, s)
            self.comp[name] = cm
            self.inputs[name] = {sizes[0]: x}
            self.compile_s[name] = {str(sizes[0]): round(first, 1)}
            for b in sizes[1:]:
                xb = M.make_input(name, b)
                self.inputs[name][b] = xb
                self.compile_s[name][str(b)] = round(M.compile_shape(cm, xb), 1)
            log("%s compiled (first call %s s by batch size)" % (name, self.compile_s[name]))

    @staticmethod
    def _allow_shapes(torch, n):
        """Dynamo recompiles the LS model once per batch size; past its recompile limit it
        would run the model eagerly, without a word in a benchmark's output: the limit is
        raised to fit the sizes and reaching it made an error."""
        import torch._dynamo.config as dc
        for k in ("recompile_limit", "cache_size_limit"):
            if hasattr(dc, k):
                setattr(dc, k, max(getattr(dc, k), n + 2))
        if hasattr(dc, "fail_on_recompile_limit_hit"):
            dc.fail_on_recompile_limit_hit = True

    def graph_on(self, name, stream, batch=None):
        """A CUDA graph of one call of model `name` at `batch` (default: its only size) on stream."""
        xs = self.inputs[name]
        x = xs[batch if batch is not None else next(iter(xs))]
        g, y = self.measure.capture(self.comp[name], x, stream)
        if batch is not None and y.shape[0] != batch:
            raise RuntimeError("%s batch %d: the graph's output has %d rows" % (name, batch, y.shape[0]))
        return g

    def runner(self, name, stream):
        """run(ids) of a BE service: one replay of the model's graph on stream, synchronized."""
        g = self.graph_on(name, stream)
        torch = self.torch

        def run(_ids):
            with torch.cuda.stream(stream):
                g.replay()
            stream.synchronize()
        run.graph, run.stream = g, stream   # the graph kept alive with the runner; both for engine c
        return run


class LSInstance:
    """One instance of the LS service: a stream and a CUDA graph per batch size on it.
    run(ids) replays the graph of graph_batch(sizes, len(ids)); graphs counts the replays per
    size (one worker thread per instance: no lock)."""

    def __init__(self, mdl, name, stream, sizes):
        self.torch, self.stream, self.sizes = mdl.torch, stream, tuple(sizes)
        self.graphs = {b: mdl.graph_on(name, stream, b) for b in self.sizes}
        self.graphs_run = {}

    def __call__(self, ids):
        b = graph_batch(self.sizes, len(ids))
        with self.torch.cuda.stream(self.stream):
            self.graphs[b].replay()
        self.stream.synchronize()
        self.graphs_run[b] = self.graphs_run.get(b, 0) + 1


def ls_census(mdl, name, sizes):
    """The kernels of one replay of the LS graph per batch size (torch.profiler, a plain
    stream): Triton (rewritable) and closed (cuDNN, cuBLAS, ...) with their names, as
    bench/dnn's census. Run after the measurements: the profiler is not attached then."""
    torch = mdl.torch
    from torch.profiler import ProfilerActivity, profile
    import common
    out = {}
    st = torch.cuda.Stream()
    for b in sizes:
        g = mdl.graph_on(name, st, b)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            with torch.cuda.stream(st):
                g.replay()
            st.synchronize()
        c = common.kernel_census([e.name for e in prof.events()
                                  if e.device_type == torch.autograd.DeviceType.CUDA])
        out[str(b)] = {k: c[k] for k in ("kernels", "triton", "closed", "kinds", "closed_names")}
        out[str(b)]["closed_names"] = c["closed_names"][:10]
        del g
    return out


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


def error_row(results, name, load, run_i, e, where):
    """A configuration (load None: its setting up) or one run of it failed: an error row of
    colocate.json and a FAILED line of the merged table, never a hidden skip."""
    import traceback
    tb = traceback.format_exc()
    print(tb, file=sys.stderr, flush=True)
    msg = "%s: %s" % (type(e).__name__, " ".join(str(e).split())[:400])
    results["rows"].append({"config": name, "load": load, "run": run_i, "error": msg, "where": where,
                            "arrivals": results["arrivals"]["label"]})
    results["errors"].append({"config": name, "load": load, "run": run_i, "where": where, "error": msg,
                              "traceback": tb[-4000:]})
    log("FAILED %s%s (%s): %s" % (name, "" if load is None else " load %.1f run %d" % (load, run_i), where, msg))


def save(results, a):
    path = os.path.join(a.out, "colocate.json")
    with open(path + ".tmp", "w") as f:
        json.dump(results, f)
    os.replace(path + ".tmp", path)


def main(a):
    os.makedirs(a.out, exist_ok=True)
    names = config_names(a.configs)
    configs = [config_options(c) for c in names]
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
    ref = None
    if a.reference:
        with open(a.reference) as f:
            ref = json.load(f)
        if ref["settings"]["ls"] != a.ls:   # an SLO is one model's
            raise SystemExit("colocate.py: --reference %s measured LS %s, this process serves %s" % (
                a.reference, ref["settings"]["ls"], a.ls))
    prof_ab = None
    if a.ls_profile:
        try:
            prof_ab = load_profile(a.ls_profile, a.ls)
        except (ValueError, OSError, KeyError) as e:
            raise SystemExit("colocate.py: %s" % e)
    if tidal_side:
        import tidal.torch as tt  # before torch.compile: the Triton hook, the static launcher off
        from tidal import policy
    import torch
    from common import format_smset, parse_smset, percentile, summarize_us
    from tidal import serve
    from greenctx import GreenSplit
    one_process = kinds - set(TWO_PROCESS) - {"alone"}
    mdl = Models([a.ls] + ([a.be] if one_process or a.compile_only else []), ls=a.ls, ls_batches=a.batches)
    nsm = torch.cuda.get_device_properties(0).multi_processor_count
    results = {"settings": {k: v for k, v in vars(a).items() if k != "arrival_spec"}, "rows": [], "errors": [],
               "arrivals": a.arrival_spec, "ls_batches": list(a.batches), "inductor": mdl.settings,
               "compile_s": mdl.compile_s, "process": {
                   "mps": mps_running(), "mps_pct": os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
                   "tidal": tidal_side}}
    if a.compile_only:
        save(results, a)
        log("compile only: done")
        return 0

    st = torch.cuda.Stream()
    solo_g = mdl.graph_on(a.ls, st, 1)
    solo = summarize_us(mdl.measure.latencies(solo_g.replay, st, 300, 30))
    del solo_g
    # each batch size alone (all SMs, one stream): what batching costs per batch, here
    solo_b = {"1": solo}
    for b in a.batches[1:]:
        g = mdl.graph_on(a.ls, st, b)
        solo_b[str(b)] = summarize_us(mdl.measure.latencies(g.replay, st, 100, 10))
        del g
    results.update(solo_here=solo, solo_batches_here=solo_b)
    if len(a.batches) > 1:
        log("LS %s alone by batch size (p50 us): %s" % (a.ls, ", ".join(
            "b%s %.1f" % (b, v["p50_us"]) for b, v in solo_b.items())))
    if ref is not None:
        solo, slo_us, capacity = ref["solo"], ref["slo_us"], ref["capacity_per_s"]
        log("LS solo here: p50 %.1f p99 %.1f us; the reference's: p50 %.1f p99 %.1f" % (
            results["solo_here"]["p50_us"], results["solo_here"]["p99_us"], solo["p50_us"], solo["p99_us"]))
        if ref.get("inductor") and ref["inductor"] != mdl.settings:
            log("WARNING: the reference was compiled with other Inductor settings: %s (here %s)" % (
                ref["inductor"], mdl.settings))
    else:
        slo_us = a.slo_factor * solo["p99_us"]
        capacity = 1e6 / solo["mean_us"]
    results.update(solo=solo, slo_us=slo_us, capacity_per_s=capacity)
    save(results, a)   # the SLO reference of the next processes, even if this one is stopped early
    log("LS %s solo: p50 %.1f us, p99 %.1f us; SLO %.1f us; capacity %.0f requests/s; %s; LS batches %s" % (
        a.ls, solo["p50_us"], solo["p99_us"], slo_us, capacity, a.arrival_spec["title"],
        ",".join(map(str, a.batches))))
    profile = None
    if prof_ab and tidal_side:
        profile = policy.Scaling(prof_ab[0], prof_ab[1])
        results["ls_profile"] = {"a_us": prof_ab[0], "b_us": prof_ab[1], "from": prof_ab[2]}
        log("LS profile: latency = %.1f/n + %.1f us, from %s" % prof_ab)
    ls_n = len(parse_smset(a.ls_sms, nsm))
    ls_pct, be_pct = (int(v) for v in a.mps_pct.split(","))
    max_batch = a.batches[-1]
    green = None
    for name, (cfg, opt) in zip(names, configs):
        parts, be_proc, pol_kw, ls_runs, be_run, pl, pb = [], None, {}, [], None, None, None
        demand = opt.get("demand", a.ls_demand)
        k = a.ls_instances
        try:
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
                ls_set = (",".join(str(s) for s in sorted(order[:demand])) if (cfg == "tidal-sgdrc" and demand)
                          else a.ls_sms)
                pl = tt.Partition("ls-" + cfg[6:], ls_set)
                pb = tt.Partition("be-" + cfg[6:], "all")
                parts = [pl, pb]
                pb.placement = "persistent"
                if cfg == "tidal-gslice":
                    pl.placement = "persistent"
                sls, sb = [pl.stream() for _ in range(k)], pb.stream()
                if cfg == "tidal-sgdrc":
                    pol_kw = {"idle_us": opt.get("idle", a.idle_us)}
                if opt.get("placed") and a.engine != "c":
                    raise RuntimeError("placed=1 needs --engine c (tidal_server_share)")
                if opt.get("placed") and cfg == "tidal-gslice":
                    # a partition per ladder step (hybrid: its short kernels run as originals
                    # in its green context, clones follow its own fixed mask)
                    ladder = [(n, tt.Partition("ls-ladder-%d" % len(parse_smset(n, nsm)), n))
                              for n in ladder_sets(order, opt.get("ladder", 16), 2, opt.get("from"))]
                    parts += [p_ for _n, p_ in ladder]
                    be_ladder = []
                    if opt.get("be"):
                        be_ladder = [(n, tt.Partition("be-ladder-%d" % len(parse_smset(n, nsm)), n))
                                     for n in be_ladder_sets(order, opt["be"], 2,
                                                             opt.get("from") or opt.get("ladder", 16))]
                        parts += [p_ for _n, p_ in be_ladder]
                elif opt.get("placed"):
                    ls_ids = set(parse_smset(ls_set, nsm))
                    rest = format_smset(sm for sm in range(nsm) if sm not in ls_ids)
                    pr_ = tt.Partition("be-placed", rest)
                    parts.append(pr_)
                    placed_stream = pr_.stream()
                if a.ls_first:
                    pol_kw["ls_first"] = a.ls_first
                if a.batch_frac is not None:
                    pol_kw["batch_frac"] = a.batch_frac
            # the graphs are captured on the configuration's streams: a closed kernel its
            # streams refuse (a cluster launch on a 2-SM-grain green context) fails here
            ls_runs = [LSInstance(mdl, a.ls, s, a.batches) for s in sls]
            be_run = mdl.runner(a.be, sb) if sb is not None else None
            if opt.get("placed") and cfg == "tidal-gslice":
                # every LS instance: its graphs on each ladder step's own stream; the C engine
                # runs the largest step inside LS's share (its own graphs: none fits)
                for inst in ls_runs:
                    inst.shares = {}
                    for n, p_ in ladder:
                        st = p_.stream()
                        inst.shares[n] = {b: mdl.graph_on(a.ls, st, b) for b in a.batches}
                if be_run is not None and be_ladder:
                    # BE's graph on each step of its ladder; none fits: its own (all-SM clones)
                    be_run.ladder = [mdl.runner(a.be, p_.stream()) for _n, p_ in be_ladder]
                    be_run.shares = {n: r_.graph for (n, _p), r_ in zip(be_ladder, be_run.ladder)}
            elif be_run is not None and opt.get("placed"):
                # BE's graph on the SMs it keeps while LS holds its demand: the policy's mask
                # for BE then (all SMs but LS's), run by the C engine instead of be_run's; its
                # own graph listed as the share of all SMs, which the larger share wins then
                placed = mdl.runner(a.be, placed_stream)
                be_run.shares = {rest: placed.graph, format_smset(range(nsm)): be_run.graph}
                be_run.placed = placed
        except Exception as e:   # noqa: BLE001 -- an error row; the next configuration runs
            error_row(results, name, None, None, e, "setting up (streams, partitions, graph capture)")
            save(results, a)
            ls_runs, be_run = [], None
            try:
                torch.cuda.synchronize()
            except Exception as e2:   # noqa: BLE001 -- a sticky CUDA error: every later configuration would fail
                log("the CUDA context is unusable after %s's failure (%s): stopping" % (name, e2))
                break
            finally:
                if be_proc:
                    be_proc.close()
                for p in parts:
                    p.close()
            continue
        try:
            for load in (float(v) for v in a.loads.split(",")):
                for run_i in range(a.runs):
                    try:
                        row = one_run(a, results, name, cfg, load, run_i, ls_runs, be_run, be_proc, pl, pb,
                                      pol_kw, profile, demand, ls_n, slo_us, capacity, max_batch,
                                      policy if tidal_side else None, serve, percentile)
                        results["rows"].append(row)
                    except Exception as e:   # noqa: BLE001 -- an error row; the next run goes on
                        error_row(results, name, load, run_i, e, "serving")
                    save(results, a)
        finally:
            del ls_runs, be_run
            torch.cuda.synchronize()
            if be_proc:
                be_proc.close()
            for p in parts:
                p.close()
    # what stays closed in the LS graphs (after the measurements: no profiler attached before)
    try:
        results["ls_kernels"] = ls_census(mdl, a.ls, a.batches)
        c = results["ls_kernels"]["1"]
        log("LS %s graph, batch 1: %d kernels, %d Triton, %d closed (%s)%s" % (
            a.ls, c["kernels"], c["triton"], c["closed"],
            ", ".join("%s %d" % kv for kv in c["kinds"].items() if kv[0] != "triton") or "none",
            "".join("\n    closed x%d: %s" % (n, kn) for kn, n in c["closed_names"][:6])))
    except Exception as e:   # noqa: BLE001 -- recorded
        results["ls_kernels"] = {"error": "%s: %s" % (type(e).__name__, e)}
        results["errors"].append({"config": None, "where": "LS kernel census", "error": results["ls_kernels"]["error"]})
        log("LS kernel census FAILED: %s" % results["ls_kernels"]["error"])
    save(results, a)
    if results["errors"]:
        log("%d failure(s): %s" % (len(results["errors"]), "; ".join(
            "%s: %s" % (e["config"], e["error"][:120]) for e in results["errors"])))
        return 1
    return 0


def one_run(a, results, name, cfg, load, run_i, ls_runs, be_run, be_proc, pl, pb, pol_kw, profile, demand, ls_n,
            slo_us, capacity, max_batch, policy, serve, percentile):
    """One configuration at one load, one run: a row of colocate.json."""
    seed = a.seed + run_i
    pol, trace = None, None
    if cfg in ("tidal-sgdrc", "tidal-gslice"):   # a fresh policy per run
        trace = os.path.join(a.out, "trace-%s-%.1f-%d.jsonl" % (name.replace(":", "_"), load, run_i))
        pol = policy.Policy(cfg[6:], trace_path=trace, **pol_kw)
    srv = None
    try:
        srv = serve.Server(pol, engine=a.engine)
        # SGDRC without a profile: the LS demand is its whole set (max_sms)
        extra = {"max_sms": ls_n} if (cfg == "tidal-sgdrc" and profile is None and not demand) else {}
        if pol is not None and a.ls_max_queue_us:
            extra["max_queue_us"] = a.ls_max_queue_us
        if pol is not None and ls_runs and getattr(ls_runs[0], "shares", None):
            # GSLICE with a ladder: its share never goes below the smallest step (under it LS
            # would run its own graph, persistent clones)
            from common import parse_smset
            extra["min_sms"] = min(len(parse_smset(n, 1 << 10)) for n in ls_runs[0].shares)
        # each engine takes its own: the Python one the callables, the C one the graphs
        ls_shares = [getattr(inst, "shares", None) for inst in ls_runs]
        ls_svc = srv.service("ls", "ls", ls_runs, partition=pl if pol else None, slo_us=slo_us,
                             profile=profile if pol else None, demand_sms=demand if pol else 0, max_batch=max_batch,
                             graphs=[inst.graphs for inst in ls_runs], streams=[inst.stream for inst in ls_runs],
                             shares=ls_shares if pol is not None and any(ls_shares) else None, **extra)
        sb = results.get("solo_batches_here") or {}
        if pol is not None and max_batch > 1 and sb:
            # GSLICE's offline batch profile: each size alone on all SMs (this process's
            # measurement); the policy refines it from the requests' latencies
            pol.batch_profile(ls_svc.sid, {int(b): v["p50_us"] for b, v in sb.items() if int(b) <= max_batch})
        if be_run is not None:
            shares = getattr(be_run, "shares", None)
            srv.service("be", "be", be_run, partition=pb if pol else None, graphs=[be_run.graph],
                        streams=[be_run.stream], shares=[shares] if shares and pol is not None else None)
        arr = make_arrivals(a.arrival_spec, load * capacity, a.seconds, seed)
        for inst in ls_runs:
            inst.graphs_run = {}
        if be_proc:
            be_proc.go(a.seconds)
        try:
            rec = srv.run({"ls": arr}, seconds=a.seconds)
        finally:
            # the BE child runs its GO whatever happened here: its DONE keeps the protocol in step
            be_n = be_proc.done() if be_proc else None
        if be_n is None:
            be_n = len(rec.get("be", []))
        ls_sum = serve.summarize(rec["ls"], slo_us)
        lat = sorted(int((r.end - r.arrival) * 1e6) for r in rec["ls"])
        waits = sorted((r.start - r.arrival) * 1e6 for r in rec["ls"])
        runs_us = sorted((r.end - r.start) * 1e6 for r in rec["ls"])
        graphs = {}
        if a.engine == "c":   # the C engine replays the graphs itself: a batch is one (start, end) of its records
            sizes = ls_runs[0].sizes if ls_runs else (1,)
            for _s, _e, k in {(r.start, r.end, r.batch) for r in rec["ls"]}:
                b = graph_batch(sizes, k)
                graphs[b] = graphs.get(b, 0) + 1
        for inst in ls_runs:
            for b, c in inst.graphs_run.items():
                graphs[b] = graphs.get(b, 0) + c
        rows_run = sum(b * c for b, c in graphs.items())
        bst = batch_stats([r.batch for r in rec["ls"]])
        row = dict(config=name, load=load, run=run_i, seed=seed, rate_per_s=round(load * capacity, 1),
                   arrivals=a.arrival_spec["label"], n_arrivals=len(arr),
                   arrived_per_s=round(len(arr) / a.seconds, 1),
                   ls=ls_sum, be_batches_per_s=round(be_n / a.seconds, 2), ls_latencies_us=lat,
                   ls_wait_us={q: round(percentile(waits, q), 1) for q in (50, 99)},
                   ls_run_us={q: round(percentile(runs_us, q), 1) for q in (50, 99)},
                   ls_batch_mean=bst["mean"], ls_batches=bst["batches"],
                   ls_graphs={str(b): graphs[b] for b in sorted(graphs)},
                   ls_padding=round(1 - len(rec["ls"]) / rows_run, 4) if rows_run else None,
                   ls_sms_seen=sorted({r.sms for r in rec["ls"]})[:8])
        if getattr(be_run, "ladder", None) and rec.get("be") and pol is not None:
            row["be_ladder_batches"] = ladder_counts(rec["be"], be_run.shares)
        elif getattr(be_run, "shares", None) and rec.get("be"):
            # how many BE batches ran the placed graph (share 1: their mask was the placed set;
            # share 2 is its own graph, listed for all SMs)
            row["be_placed_fraction"] = round(sum(1 for r in rec["be"] if r.share == 1) / len(rec["be"]), 3)
        if ls_runs and getattr(ls_runs[0], "shares", None) and pol is not None:
            # the ladder step each LS batch ran (SMs; 0: its own graph, no step fitted)
            row["ls_ladder_batches"] = ladder_counts(rec["ls"], ls_runs[0].shares)
        if pol is not None:
            row["policy_state"] = pol.state()
            row["trace"] = os.path.basename(trace)
        log("%-22s load %.1f run %d: LS p50 %8.1f p99 %8.1f us (wait p50 %.0f, run p50 %.0f), SLO %5.1f%%; "
            "BE %6.1f batches/s%s%s" % (
                name, load, run_i, ls_sum.get("p50_us", -1), ls_sum.get("p99_us", -1),
                row["ls_wait_us"][50], row["ls_run_us"][50],
                100 * ls_sum.get("slo_attainment", 0), row["be_batches_per_s"],
                "; mean batch %.2f" % bst["mean"] if max_batch > 1 and bst["mean"] else "",
                "; LS SMs %s" % row["ls_sms_seen"] if pol is not None else "")
            + ("; BE placed %.0f%%" % (100 * row["be_placed_fraction"]) if "be_placed_fraction" in row else "")
            + ("; LS ladder %s" % row["ls_ladder_batches"] if "ls_ladder_batches" in row else "")
            + ("; BE ladder %s" % row["be_ladder_batches"] if "be_ladder_batches" in row else ""))
        return row
    finally:
        if srv is not None:
            srv.close()
        if pol is not None:
            pol.close()


# ------------------------------------------------------------------ plan: what run.sh runs, how long

# Seconds, estimated from session 13's logs (bench/results/2026-12-03-session13, call 2 and 3:
# a cold unmodified process compiled BERT-base + BERT-large in 78 s, a warm one in 28 s, the
# tidal process (Triton recompiled through tidal-ptxas) took 47 s, a BE child 19 s to READY,
# 2 s points 2.0-2.1 s apart) and session 12's (ResNet-50 b1 compiled cold in 20 s). Only an
# estimate: run.sh prints it before it starts, and --deadline bounds the real time.
PLAN_COSTS = {
    "start": 10,             # python, torch and transformers imports, the LS solo measurements
    "model_warm": 10,        # per model: Dynamo and the Inductor cache
    "model_cold": 35,        # per model: autotuning (Triton GEMM configs)
    "batch_warm": 3,         # per LS batch size beyond the first
    "batch_cold": 20,
    "tidal_warm": 20,        # the tidal process: libtidal, the Triton hook
    "tidal_cold": 45,        # ... and every Triton kernel through tidal-ptxas
    "tidal_batch_cold": 10,  # ... the kernels of each LS batch size beyond the first
    "build": 30,             # the tidal pieces built with gcc (bench/dnn/run.sh --build-only)
    "config": 2,             # streams, partitions, graph captures
    "green": 5,              # GreenSplit: every 2-SM group probed once per process
    "be_child": 20,          # timeslice / mps / mps-pct: the BE process starts and compiles
    "point": 0.15,           # per point beyond its seconds (policy, records, the JSON)
    "merge": 10,
}
PROCESS_KINDS = ("base", "mps", "tidal")


def plan_estimate(processes, ls, loads, runs, seconds, batches, build=True):
    """processes: [(kind, [configs])] as run.sh runs them (kind base: one unmodified process;
    mps: each configuration its own process under the MPS daemon; tidal: one process under
    tidal-run). Returns {"processes": [...], "configs", "points", "arrival_s", "warm_s",
    "cold_s"}; no GPU."""
    c = PLAN_COSTS
    nload = len(loads)
    out, tot_w, tot_c, ncfg, npts = [], 0.0, 0.0, 0, 0
    inductor_filled = False   # cold: only the first process autotunes; the next ones find its cache
    for kind, cfgs in processes:
        if not cfgs:
            continue
        if kind not in PROCESS_KINDS:
            raise ValueError("--plan %s: want a process of %s" % (kind, ", ".join(PROCESS_KINDS)))
        for cfg in cfgs:
            config_options(cfg)   # an unknown configuration is an error here already
        procs = [[x] for x in cfgs] if kind == "mps" else [cfgs]
        w = cold = 0.0
        for pc in procs:
            kinds = {config_options(x)[0] for x in pc}
            nmodels = 1 + bool(kinds - set(TWO_PROCESS) - {"alone"})
            warm_compile = nmodels * c["model_warm"] + (len(batches) - 1) * c["batch_warm"]
            cold_compile = warm_compile if inductor_filled else \
                nmodels * c["model_cold"] + (len(batches) - 1) * c["batch_cold"]
            inductor_filled = True
            pw, pcold = c["start"] + warm_compile, c["start"] + cold_compile
            if kind == "tidal":   # its Triton cache is its own: cold, every kernel through tidal-ptxas
                pw += c["tidal_warm"]
                pcold += c["tidal_cold"] + (len(batches) - 1) * c["tidal_batch_cold"] + (c["build"] if build else 0)
            per = len(pc) * c["config"] + (c["green"] if "green" in kinds else 0) + \
                sum(c["be_child"] for x in pc if config_options(x)[0] in TWO_PROCESS) + \
                len(pc) * nload * runs * (seconds + c["point"])
            w += pw + per
            cold += pcold + per
        n = len(cfgs) * nload * runs
        out.append({"kind": kind, "configs": list(cfgs), "processes": len(procs), "points": n,
                    "arrival_s": round(n * seconds, 1), "warm_s": round(w), "cold_s": round(cold)})
        tot_w += w
        tot_c += cold
        ncfg += len(cfgs)
        npts += n
    return {"processes": out, "configs": ncfg, "points": npts, "arrival_s": round(npts * seconds, 1),
            "warm_s": round(tot_w + c["merge"]), "cold_s": round(tot_c + c["merge"])}


def plan(a):
    procs = []
    for item in a.plan:
        kind, sep, cfgs = item.partition("=")
        if not sep:
            raise SystemExit("colocate.py --plan %s: want PROCESS=CONFIGS" % item)
        procs.append((kind, config_names(cfgs)))
    loads = [float(v) for v in a.loads.split(",")]
    try:
        e = plan_estimate(procs, a.ls, loads, a.runs, a.seconds, a.batches, build=a.plan_build)
    except ValueError as err:
        raise SystemExit("colocate.py: %s" % err)
    except SystemExit as err:
        raise SystemExit("colocate.py --plan: %s" % err)
    print("[plan] LS %s (batches %s), BE %s, %s; loads %s x %d run(s) x %g s per point" % (
        a.ls, ",".join(map(str, a.batches)), a.be, a.arrival_spec["label"], a.loads, a.runs, a.seconds))
    for p in e["processes"]:
        print("[plan]   %-5s %-40s %2d configuration(s) in %d process(es), %3d points, %5.1f s of arrivals; "
              "~%d s warm, ~%d s cold" % (p["kind"], ",".join(p["configs"])[:40], len(p["configs"]), p["processes"],
                                         p["points"], p["arrival_s"], p["warm_s"], p["cold_s"]))
    print("[plan] total: %d configurations x %d loads x %d run(s) x %g s = %d points, %.1f s of arrivals; "
          "estimate ~%d s with warm compile caches, ~%d s cold (from sessions 12-13's logs; an estimate)" % (
              e["configs"], len(loads), a.runs, a.seconds, e["points"], e["arrival_s"], e["warm_s"], e["cold_s"]))
    return 0


# ------------------------------------------------------------------ merge: table and plots

def doc_arrivals(d):
    """A colocate.json's arrival process (files from before --arrivals were Poisson)."""
    return d.get("arrivals") or arrivals_spec("poisson")


def group_docs(docs):
    """The merge's tables: [(ls, arrivals label, {"docs", "rows"})] in order of first
    appearance, one per (LS model, arrival process): a process's file is one LS model and one
    process, so it belongs to one group. Within a group a configuration measured again in a
    later file replaces the earlier file's rows of it (error rows included)."""
    groups = {}
    for i, d in enumerate(docs):
        key = (d["settings"]["ls"], doc_arrivals(d)["label"])
        groups.setdefault(key, {"docs": [], "idx": []})
        groups[key]["docs"].append(d)
        groups[key]["idx"].append(i)
    out = []
    for key, g in groups.items():
        last = {}
        for i, d in zip(g["idx"], g["docs"]):
            for r in d["rows"]:
                last[r["config"]] = i
        rows = [dict(r, _dir=d.get("_dir", ""), _src=os.path.basename(d.get("_dir", "")))
                for i, d in zip(g["idx"], g["docs"]) for r in d["rows"] if last[r["config"]] == i]
        out.append((key[0], key[1], {"docs": g["docs"], "rows": rows}))
    return out


def _mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def _cell(xs, fmt):
    if len(xs) == 1:
        return fmt % xs[0]
    return (fmt + " (" + fmt + "-" + fmt + ")") % (_mean(xs), min(xs), max(xs))


def group_table(ls, label, g):
    """(markdown, summary rows) of one group: its head (solo, SLO, arrivals, batches, what
    stays closed), the table (mean and range over runs), its FAILED lines, the best rows."""
    ref = g["docs"][0]
    rows = g["rows"]
    ok = [r for r in rows if "error" not in r]
    bad = [r for r in rows if "error" in r]
    groups = {}
    for r in ok:
        groups.setdefault((r["config"], r["load"]), []).append(r)
    order = []
    for r in rows:
        if r["config"] not in order:
            order.append(r["config"])
    st = ref["settings"]
    batches = ref.get("ls_batches", [1])
    arr = doc_arrivals(ref)
    head = ["### LS %s, %s" % (ls, arr["title"]), "",
            "LS %s solo (unmodified, all SMs, batch 1): p50 %.1f / p99 %.1f us; SLO %.1f us; capacity %.0f req/s; "
            "BE %s closed-loop; %s s per point; %d LS instances; LS batches %s%s." % (
                ls, ref["solo"]["p50_us"], ref["solo"]["p99_us"], ref["slo_us"], ref["capacity_per_s"],
                st["be"], st["seconds"], st["ls_instances"], ",".join(map(str, batches)),
                " (the policy's batch rounded up to a captured graph; baselines and tidal-static: what is "
                "queued, up to %d)" % max(batches) if len(batches) > 1 else "")]
    sb = ref.get("solo_batches_here") or {}
    if len(sb) > 1:
        head.append("LS alone by batch size (all SMs, one stream, this file's process), p50: %s us." % ", ".join(
            "b%s %.0f" % (b, sb[b]["p50_us"]) for b in sorted(sb, key=int)))
    ind = ref.get("inductor")
    if ind:
        head.append("Inductor: GEMM backends %s, conv backends %s, max_mm_configs %s." % (
            ind.get("max_autotune_gemm_backends"), ind.get("max_autotune_conv_backends"),
            ind.get("test_configs.max_mm_configs")))
    kern = next((d["ls_kernels"] for d in g["docs"] if isinstance(d.get("ls_kernels"), dict)
                 and "1" in d["ls_kernels"]), None)
    if kern:
        c = kern["1"]
        head.append("LS graph at batch 1: %d kernels, %d Triton (rewritable), %d closed%s." % (
            c["kernels"], c["triton"], c["closed"],
            " (%s)" % ", ".join("%s %d" % kv for kv in c["kinds"].items() if kv[0] != "triton") if c["closed"] else ""))
    slos = sorted({round(d["slo_us"], 1) for d in g["docs"] if "slo_us" in d})
    if len(slos) > 1:
        head.append("WARNING: these files were held to different SLOs (%s us): only rows of one SLO compare." %
                    ", ".join("%.1f" % x for x in slos))
    lines = ["| config | load | LS req/s | arrived/s | mean batch | LS p50 (us) | LS p99 (us) | SLO attainment | "
             "BE batches/s | runs |", "|---|---|---|---|---|---|---|---|---|---|"]
    summary = []
    for cfg in order:
        for r in bad:
            if r["config"] == cfg and r.get("load") is None:
                lines.append("| %s | - | FAILED (%s): %s | | | | | | | 0 |" % (cfg, r.get("where", "?"), r["error"]))
        loads = sorted({k[1] for k in groups if k[0] == cfg} |
                       {r["load"] for r in bad if r["config"] == cfg and r.get("load") is not None})
        for load in loads:
            gr = groups.get((cfg, load), [])
            if gr:
                att = [100 * r["ls"].get("slo_attainment", 0) for r in gr]
                be = [r["be_batches_per_s"] for r in gr]
                mb = [r["ls_batch_mean"] for r in gr if r.get("ls_batch_mean") is not None]
                arrived = [r["arrived_per_s"] for r in gr if "arrived_per_s" in r]
                lines.append("| %s | %.1f | %.0f | %s | %s | %s | %s | %s%% | %s | %d |" % (
                    cfg, load, gr[0]["rate_per_s"], _cell(arrived, "%.0f") if arrived else "-",
                    _cell(mb, "%.2f") if mb else "1",
                    _cell([r["ls"].get("p50_us", -1) for r in gr], "%.0f"),
                    _cell([r["ls"].get("p99_us", -1) for r in gr], "%.0f"), _cell(att, "%.2f"), _cell(be, "%.1f"),
                    len(gr)))
                summary.append({"config": cfg, "load": load, "slo_attainment": _mean(att) / 100,
                                "be_batches_per_s": _mean(be), "ls_batch_mean": _mean(mb) if mb else 1.0,
                                "runs": len(gr)})
            fails = [r for r in bad if r["config"] == cfg and r.get("load") == load]
            if fails:
                lines.append("| %s | %.1f | FAILED %d of %d runs: %s | | | | | | | |" % (
                    cfg, load, len(fails), len(fails) + len(gr), fails[0]["error"]))
    md = "\n".join(head) + "\n\n" + "\n".join(lines) + "\n\n" + best_rows(summary) + "\n"
    return md, summary


def merge(a):
    os.makedirs(a.out, exist_ok=True)
    docs = []
    for path in a.merge:
        with open(path) as f:
            d = json.load(f)
        if "solo" not in d:
            raise SystemExit("colocate.py --merge: %s has no solo measurement (a --compile-only file?)" % path)
        d["_dir"] = os.path.dirname(os.path.abspath(path))
        docs.append(d)
    grouped = group_docs(docs)
    many = len(grouped) > 1
    parts, summaries = [], []
    for ls, label, g in grouped:
        md, summary = group_table(ls, label, g)
        parts.append(md)
        ref = g["docs"][0]
        tag = "-%s-%s" % (ls, label) if many else ""
        summaries.append({"ls": ls, "arrivals": doc_arrivals(ref), "tag": tag, "slo_us": ref["slo_us"],
                          "solo": ref["solo"], "ls_batches": ref.get("ls_batches", [1]), "summary": summary,
                          "failed": [{k: r.get(k) for k in ("config", "load", "run", "where", "error")}
                                     for r in g["rows"] if "error" in r]})
        plots(g["rows"], ref, a.out, tag, "LS %s, %s" % (ls, label))
    text = "\n".join(parts)
    with open(os.path.join(a.out, "colocate.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "colocate-summary.json"), "w") as f:
        json.dump({"groups": summaries}, f, indent=1)
    print(text)
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


def plots(rows, ref, out, tag="", title=""):
    """The group's figures: colocate{tag}-cdf.png, colocate{tag}.png, colocate{tag}-sms.png."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        log("no plots: %s" % e)
        return
    from common import parse_smset
    rows = [r for r in rows if "error" not in r]   # failures are the table's, not the plots'
    if not rows:
        return
    order = []
    for r in rows:
        if r["config"] not in order:
            order.append(r["config"])
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
               title="%s: LS load %.1f" % (title, load) if title else "LS load %.1f" % load, ylim=(0, 1.01))
        ax.title.set_fontsize(8)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "colocate%s-cdf.png" % tag), dpi=110)
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
    ax1.set(xlabel="LS load (fraction of solo capacity)", ylabel="BE batches/s",
            title="BE throughput" + (" (%s)" % title if title else ""))
    ax2.set(xlabel="LS load (fraction of solo capacity)", ylabel="% of LS requests within SLO",
            title="LS SLO attainment" + (" (%s)" % title if title else ""))
    ax1.title.set_fontsize(8)
    ax2.title.set_fontsize(8)
    ax2.axhline(99, ls=":", c="k")
    ax1.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "colocate%s.png" % tag), dpi=110)
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
        ax.set(ylabel="SMs", ylim=(0, 134), title="%s%s, load %.1f" % (title + ": " if title else "", r["config"],
                                                                        r["load"]))
        ax.title.set_fontsize(8)
        ax.legend(fontsize=6, loc="right")
    axs[-1, 0].set_xlabel("ms since the first decision")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "colocate%s-sms.png" % tag), dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    args = parse()
    if args.be_child:
        CHILD = True
        sys.exit(be_child(args))
    if args.merge:
        sys.exit(merge(args))
    if args.plan:
        sys.exit(plan(args))
    sys.exit(main(args))
