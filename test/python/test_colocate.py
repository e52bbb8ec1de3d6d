"""Unit tests for bench/colocate/colocate.py's GPU-free parts: LS batch sizes (parsing, the
graph a batch runs, its padding), the arrival processes, batch statistics, the profile file,
the plan's arithmetic, one run served from fake model instances, and the merge (a table per
LS model and arrival process, error rows, old files)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
COLOCATE = os.path.join(ROOT, "bench", "colocate")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, COLOCATE)

import colocate  # noqa: E402
from tidal import serve  # noqa: E402


class FakeCuda:
    """torch.cuda as LSInstance uses it: a stream context (nothing to do)."""

    class _Ctx:
        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

    def stream(self, _s):
        return self._Ctx()


class FakeTorch:
    cuda = FakeCuda()


class FakeStream:
    def __init__(self):
        self.synced = 0

    def synchronize(self):
        self.synced += 1


class FakeGraph:
    """A captured graph of `batch` rows: replay() takes time like a GPU batch (sublinear)."""

    def __init__(self, batch, us_per_batch):
        self.batch, self.us = batch, us_per_batch
        self.replays = 0

    def replay(self):
        self.replays += 1
        if self.us:
            time.sleep(self.us(self.batch) / 1e6)


class FakeModels:
    """Models as LSInstance sees it: graph_on(name, stream, batch)."""

    def __init__(self, us_per_batch=None):
        self.torch = FakeTorch()
        self.us = us_per_batch
        self.captured = []

    def graph_on(self, name, stream, batch=None):
        self.captured.append((name, batch))
        return FakeGraph(batch, self.us)


def args(*argv):
    return colocate.parse(["--out", "/nonexistent"] + list(argv))


class TestBatches(unittest.TestCase):
    def test_parse_batches(self):
        self.assertEqual(colocate.parse_batches("1,2,4,8"), (1, 2, 4, 8))
        self.assertEqual(colocate.parse_batches("8,1,2,2"), (1, 2, 8))
        self.assertEqual(colocate.parse_batches("1"), (1,))
        for bad, why in (("2,4", "must include 1"), ("1,65", "65 > 64"), ("1,x", "want sizes"), ("", "must include 1")):
            with self.assertRaises(ValueError) as cm:
                colocate.parse_batches(bad)
            self.assertIn(why, str(cm.exception))

    def test_parse_rejects_through_argparse(self):
        with open(os.devnull, "w") as null:
            old, sys.stderr = sys.stderr, null
            try:
                with self.assertRaises(SystemExit):
                    args("--ls-batches", "2,4")
                with self.assertRaises(SystemExit):
                    args("--arrivals", "bursty", "--burst-factor", "1")
                with self.assertRaises(SystemExit):
                    args("--arrivals", "trace")
                with self.assertRaises(SystemExit):
                    args("--ls", "vgg16")
            finally:
                sys.stderr = old
        a = args("--ls-batches", "4,1,2")
        self.assertEqual(a.batches, (1, 2, 4))

    def test_graph_batch_rounds_up(self):
        sizes = (1, 2, 4, 8)
        self.assertEqual([colocate.graph_batch(sizes, k) for k in range(1, 9)], [1, 2, 4, 4, 8, 8, 8, 8])
        self.assertEqual(colocate.graph_batch((1,), 1), 1)
        with self.assertRaises(ValueError):
            colocate.graph_batch(sizes, 9)
        with self.assertRaises(ValueError):
            colocate.graph_batch(sizes, 0)

    def test_instance_picks_the_graph_and_counts_padding(self):
        mdl = FakeModels()
        st = FakeStream()
        inst = colocate.LSInstance(mdl, "resnet50", st, (1, 2, 4, 8))
        self.assertEqual(mdl.captured, [("resnet50", 1), ("resnet50", 2), ("resnet50", 4), ("resnet50", 8)])
        for ids in ([0], [1, 2, 3], [4, 5, 6, 7, 8], [9, 10]):
            inst(ids)
        self.assertEqual(inst.graphs_run, {1: 1, 4: 1, 8: 1, 2: 1})
        self.assertEqual([inst.graphs[b].replays for b in (1, 2, 4, 8)], [1, 1, 1, 1])
        self.assertEqual(st.synced, 4)
        with self.assertRaises(ValueError):
            inst(list(range(9)))

    def test_batch_stats(self):
        # a batch of k leaves k records saying k: 1 + 2 + 4 + 4 = 4 batches of 11 requests
        st = colocate.batch_stats([1, 2, 2, 4, 4, 4, 4, 4, 4, 4, 4])
        self.assertEqual(st["batches"], {"1": 1, "2": 1, "4": 2})
        self.assertAlmostEqual(st["mean"], 11 / 4, places=3)
        self.assertEqual(colocate.batch_stats([]), {"mean": None, "batches": {}})
        with self.assertRaises(ValueError):
            colocate.batch_stats([2, 4, 4, 4, 4])


class TestArrivals(unittest.TestCase):
    def test_spec_and_labels(self):
        p = colocate.arrivals_spec("poisson")
        self.assertEqual((p["kind"], p["label"]), ("poisson", "poisson"))
        b = colocate.arrivals_spec("bursty", 5, 50, 0.25)
        self.assertEqual(b["label"], "bursty-5x-50ms-q0.25")
        # in bursts a fraction f of the time: f*5 + (1-f)*0.25 = 1 -> f = 0.75/4.75
        f = 0.75 / 4.75
        self.assertAlmostEqual(b["quiet_ms"], round(50 * (1 - f) / f, 1))
        self.assertIn("bursts at 5x the mean rate", b["title"])
        self.assertNotEqual(colocate.arrivals_spec("bursty", 8, 20, 0)["label"], b["label"])
        for bad in ((1.0, 50, 0.25), (5, 50, 1.0), (5, 0, 0.25)):
            with self.assertRaises(ValueError):
                colocate.arrivals_spec("bursty", *bad)
        with self.assertRaises(ValueError):
            colocate.arrivals_spec("azure")

    def test_selection(self):
        a = args("--arrivals", "poisson")
        self.assertEqual(colocate.make_arrivals(a.arrival_spec, 500, 2.0, 7), serve.poisson(500, 2.0, seed=7))
        b = args("--arrivals", "bursty", "--burst-factor", "4", "--burst-ms", "20", "--quiet-factor", "0.1")
        got = colocate.make_arrivals(b.arrival_spec, 500, 2.0, 7)
        self.assertEqual(got, serve.bursty(500, 2.0, seed=7, burst_factor=4, burst_s=0.02, quiet_factor=0.1))
        self.assertNotEqual(got, serve.poisson(500, 2.0, seed=7))
        # the mean rate is the load's over a long run
        long = colocate.make_arrivals(b.arrival_spec, 500, 40.0, 3)
        self.assertTrue(400 < len(long) / 40.0 < 600, len(long) / 40.0)


class TestConfigOptions(unittest.TestCase):
    def test_options_per_policy(self):
        self.assertEqual(colocate.config_options("tidal-sgdrc:demand=96:idle=2000:placed=1"),
                         ("tidal-sgdrc", {"demand": 96, "idle": 2000, "placed": 1}))
        self.assertEqual(colocate.config_options("tidal-gslice:placed=1:ladder=8"),
                         ("tidal-gslice", {"placed": 1, "ladder": 8}))
        self.assertEqual(colocate.config_options("green"), ("green", {}))
        for bad, word in (("tidal-gslice:idle=5", "not tidal-gslice's"), ("tidal-sgdrc:ladder=8", "not tidal-sgdrc's"),
                          ("green:placed=1", "not green's"), ("tidal-gslice:ladder=8", "needs placed=1"),
                          ("tidal-gslice:placed=1:ladder=7", "even N"), ("tidal-sgdrc:idle=x", "want idle=US"),
                          ("tidal-nope", "unknown configuration")):
            with self.assertRaises(SystemExit) as cm:
                colocate.config_options(bad)
            self.assertIn(word, str(cm.exception), bad)

    def test_ladder_sets(self):
        order = list(range(64, 72)) + list(range(64))   # --ls-first 64-71: those first
        self.assertEqual(colocate.ladder_sets(order, 16, 2), ["0-7,64-71", "0-23,64-71", "0-39,64-71",
                                                              "0-55,64-71"])
        self.assertEqual(colocate.ladder_sets(list(range(132)), 16, 2)[-1], "0-127")
        self.assertEqual(len(colocate.ladder_sets(list(range(132)), 8, 2)), 16)
        self.assertEqual(colocate.ladder_sets(list(range(132)), 2, 2)[-1], "0-129")
        self.assertEqual(colocate.ladder_sets(list(range(132)), 8, 2, 64)[:2], ["0-63", "0-71"])
        self.assertEqual(colocate.config_options("tidal-gslice:placed=1:ladder=8:from=64"),
                         ("tidal-gslice", {"placed": 1, "ladder": 8, "from": 64}))
        with self.assertRaises(SystemExit):
            colocate.config_options("tidal-gslice:from=64")
        self.assertEqual(colocate.config_options("tidal-gslice:placed=1:be=4")[1], {"placed": 1, "be": 4})
        with self.assertRaises(SystemExit):
            colocate.config_options("tidal-gslice:be=4")

    def test_be_ladder_and_counts(self):
        # BE's steps: what LS leaves past 64, 68, ... 128 (4 SMs at the last; it keeps 2)
        steps = colocate.be_ladder_sets(list(range(132)), 4, 2, 64)
        self.assertEqual(steps[:2], ["64-131", "68-131"])
        self.assertEqual(steps[-1], "128-131")
        # batches per step, a batch being one (start, end): two requests of one batch count once
        R = serve.Record
        recs = [R("ls", 0, 1.0, 2.0, 2, 80, 2), R("ls", 0, 1.0, 2.0, 2, 80, 2), R("ls", 0, 3.0, 4.0, 1, 66, 1),
                R("ls", 0, 5.0, 6.0, 1, 10, 0)]
        self.assertEqual(colocate.ladder_counts(recs, {"0-63": None, "0-79": None}), {"0": 1, "64": 1, "80": 1})


class TestProfileFile(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="colocate-test-")

    def tearDown(self):
        shutil.rmtree(self.d, ignore_errors=True)

    def test_pair_and_json(self):
        self.assertEqual(colocate.load_profile("23584,769", "bert-base")[:2], (23584.0, 769.0))
        path = os.path.join(self.d, "profile-resnet50.json")
        with open(path, "w") as f:
            json.dump({"model": "resnet50", "fit": {"a_us": 9000.0, "b_us": 300.0, "rms_us": 5},
                       "points": [{"sms": 4}, {"sms": 8}], "measured_sms": [4, 8],
                       "failed": [{"sms": 2, "error": "cuDNN error: CUDNN_STATUS_EXECUTION_FAILED"}]}, f)
        a, b, what = colocate.load_profile(path, "resnet50")
        self.assertEqual((a, b), (9000.0, 300.0))
        self.assertIn("failed at [2]", what)
        with self.assertRaises(ValueError) as cm:
            colocate.load_profile(path, "bert-base")
        self.assertIn("profile of resnet50", str(cm.exception))
        with self.assertRaises(ValueError):
            colocate.load_profile("1;2", "bert-base")


class TestPlan(unittest.TestCase):
    def test_counts_and_estimate(self):
        e = colocate.plan_estimate([("base", ["alone", "none", "green"]), ("mps", []),
                                    ("tidal", ["tidal-static", "tidal-sgdrc:demand=96:idle=2000"])],
                                   "resnet50", [0.3, 0.5, 0.7], 1, 2.0, (1, 2, 4, 8))
        self.assertEqual((e["configs"], e["points"], e["arrival_s"]), (5, 15, 30.0))
        self.assertEqual([p["kind"] for p in e["processes"]], ["base", "tidal"])
        self.assertLess(e["warm_s"], e["cold_s"])
        # the default --quick plan fits a 600 s device command with cold caches (the estimate)
        q = colocate.plan_estimate([("base", ["alone", "none", "green"]),
                                    ("tidal", ["tidal-static", "tidal-sgdrc:demand=96:idle=2000", "tidal-gslice"])],
                                   "resnet50", [0.3, 0.5, 0.7], 1, 2.0, (1, 2, 4, 8))
        self.assertLess(q["cold_s"], 560)
        # mps: a process per configuration, each with a BE child
        m = colocate.plan_estimate([("mps", ["mps", "mps-pct"])], "bert-base", [0.5], 2, 1.0, (1,))
        self.assertEqual((m["processes"][0]["processes"], m["points"]), (2, 4))

    def test_unknown_is_an_error(self):
        with self.assertRaises(SystemExit):
            colocate.plan_estimate([("base", ["nope"])], "bert-base", [0.5], 1, 1.0, (1,))
        with self.assertRaises(ValueError):
            colocate.plan_estimate([("gpu", ["alone"])], "bert-base", [0.5], 1, 1.0, (1,))

    def test_command_line(self):
        r = subprocess.run([sys.executable, os.path.join(COLOCATE, "colocate.py"), "--out", "/nonexistent",
                            "--ls", "resnet50", "--ls-batches", "1,2,4,8", "--arrivals", "bursty", "--runs", "1",
                            "--seconds", "2", "--plan", "base=alone,none,green", "tidal=tidal-static"],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("total: 4 configurations x 3 loads x 1 run(s) x 2 s = 12 points", r.stdout)
        self.assertIn("bursty-5x-50ms-q0.25", r.stdout)


class TestOneRun(unittest.TestCase):
    """one_run from fake instances and tidal.serve without a policy (the baselines): what
    is queued is batched up to max_batch, every batch runs a captured size's graph."""

    def test_row(self):
        d = tempfile.mkdtemp(prefix="colocate-run-")
        try:
            a = args("--ls-batches", "1,2,4,8", "--seconds", "0.6", "--arrivals", "bursty", "--burst-factor", "8")
            a.out = d
            # 2 ms per batch whatever its size: requests queue behind it and are batched
            mdl = FakeModels(lambda b: 2000)
            insts = [colocate.LSInstance(mdl, "bert-base", FakeStream(), a.batches)]
            results = {"arrivals": a.arrival_spec}
            from common import percentile
            row = colocate.one_run(a, results, "alone", "alone", 0.7, 0, insts, None, None, None, None, {}, None, 0,
                                   66, 5000.0, 1000.0, 8, None, serve, percentile)
        finally:
            shutil.rmtree(d, ignore_errors=True)
        self.assertEqual(row["arrivals"], "bursty-8x-50ms-q0.25")
        self.assertEqual(row["ls"]["n"], row["n_arrivals"])               # every request served once
        self.assertGreater(row["n_arrivals"], 100)
        self.assertGreater(row["ls_batch_mean"], 1.0)                     # 700/s on a 2 ms server: batches
        graphs = {int(k): v for k, v in row["ls_graphs"].items()}
        self.assertTrue(set(graphs) <= {1, 2, 4, 8}, graphs)
        batches = {int(k): v for k, v in row["ls_batches"].items()}
        self.assertEqual(sum(batches.values()), sum(graphs.values()))    # one graph per batch
        self.assertEqual(sum(k * v for k, v in batches.items()), row["n_arrivals"])
        rows_run = sum(b * c for b, c in graphs.items())
        self.assertAlmostEqual(row["ls_padding"], 1 - row["n_arrivals"] / rows_run, places=3)
        self.assertEqual(row["be_batches_per_s"], 0)


def doc(ls, arrivals, slo, rows, **kw):
    d = {"settings": {"ls": ls, "be": "bert-large", "seconds": 1.5, "ls_instances": 2},
         "solo": {"p50_us": slo / 2.1, "p99_us": slo / 2, "mean_us": slo / 2.1}, "slo_us": slo,
         "capacity_per_s": 1000.0, "rows": rows}
    if arrivals is not None:
        d["arrivals"] = arrivals
    d.update(kw)
    return d


def row(cfg, load, run=0, att=0.9, be=80.0, mb=None, trace=None):
    r = {"config": cfg, "load": load, "run": run, "rate_per_s": 1000.0 * load,
         "ls": {"n": 10, "p50_us": 900.0, "p99_us": 1800.0, "slo_attainment": att},
         "be_batches_per_s": be, "ls_latencies_us": [800, 900, 1000, 2000]}
    if mb is not None:
        r.update(ls_batch_mean=mb, arrived_per_s=1000.0 * load)
    if trace:
        r["trace"] = trace
    return r


class TestMerge(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="colocate-merge-")

    def tearDown(self):
        shutil.rmtree(self.d, ignore_errors=True)

    def write(self, name, d):
        sub = os.path.join(self.d, name)
        os.makedirs(sub, exist_ok=True)
        path = os.path.join(sub, "colocate.json")
        with open(path, "w") as f:
            json.dump(d, f)
        return path

    def test_groups(self):
        po = colocate.arrivals_spec("poisson")
        bu = colocate.arrivals_spec("bursty")
        docs = [doc("bert-base", None, 1459.5, [row("alone", 0.3), row("green", 0.3, att=0.5)]),   # an old file
                doc("bert-base", bu, 1459.5, [row("alone", 0.3, mb=1.4)], ls_batches=[1, 2, 4, 8]),
                doc("resnet50", po, 1000.0, [row("alone", 0.3)]),
                doc("bert-base", po, 1459.5, [row("green", 0.3, att=0.8), row("tidal-static", 0.3)])]
        g = colocate.group_docs(docs)
        self.assertEqual([(ls, label) for ls, label, _ in g],
                         [("bert-base", "poisson"), ("bert-base", "bursty-5x-50ms-q0.25"), ("resnet50", "poisson")])
        rows = g[0][2]["rows"]
        # green measured again in the later file replaces the first file's row
        self.assertEqual([(r["config"], r["ls"]["slo_attainment"]) for r in rows],
                         [("alone", 0.9), ("green", 0.8), ("tidal-static", 0.9)])
        self.assertEqual(len(g[0][2]["docs"]), 2)

    def test_error_rows_are_failed_lines(self):
        po = colocate.arrivals_spec("poisson")
        d = doc("resnet50", po, 1000.0, [
            row("alone", 0.3, mb=1.0), row("alone", 0.5, mb=1.2),
            {"config": "green", "load": None, "run": None, "where": "setting up (streams, partitions, graph capture)",
             "error": "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED", "arrivals": "poisson"},
            row("tidal-static", 0.3, mb=1.0),
            {"config": "tidal-static", "load": 0.3, "run": 1, "where": "serving",
             "error": "TidalError: service ls failed", "arrivals": "poisson"}],
            ls_batches=[1, 2, 4, 8],
            solo_batches_here={"1": {"p50_us": 500.0}, "2": {"p50_us": 560.4}, "4": {"p50_us": 700.0},
                               "8": {"p50_us": 1010.0}},
            ls_kernels={"1": {"kernels": 104, "triton": 83, "closed": 21, "kinds": {"triton": 83, "cudnn": 20,
                                                                                     "cublas": 1},
                              "closed_names": [["sm90_xmma_fprop_implicit_gemm", 10]]}},
            inductor={"max_autotune_gemm_backends": "TRITON", "max_autotune_conv_backends": "ATEN",
                      "test_configs.max_mm_configs": 6})
        (ls, label, g), = colocate.group_docs([d])
        md, summary = colocate.group_table(ls, label, g)
        self.assertIn("### LS resnet50, Poisson arrivals", md)
        self.assertIn("| green | - | FAILED (setting up (streams, partitions, graph capture)): RuntimeError: cuDNN "
                      "error: CUDNN_STATUS_EXECUTION_FAILED |", md)
        self.assertIn("| tidal-static | 0.3 | FAILED 1 of 2 runs: TidalError: service ls failed |", md)
        self.assertIn("| alone | 0.5 | 500 | 500 | 1.20 |", md)
        self.assertIn("LS batches 1,2,4,8 (the policy's batch rounded up", md)
        self.assertIn("104 kernels, 83 Triton (rewritable), 21 closed (cudnn 20, cublas 1)", md)
        self.assertIn("GEMM backends TRITON, conv backends ATEN", md)
        self.assertIn("p50: b1 500, b2 560, b4 700, b8 1010 us.", md)
        self.assertEqual(sorted((s["config"], s["load"]) for s in summary),
                         [("alone", 0.3), ("alone", 0.5), ("tidal-static", 0.3)])

    def test_merge_files_and_plots(self):
        po = colocate.arrivals_spec("poisson")
        bu = colocate.arrivals_spec("bursty")
        base = self.write("base", doc("bert-base", po, 1459.5, [row("alone", 0.3, mb=1.0), row("green", 0.3, mb=1.0)]))
        trace = "trace-tidal-sgdrc-0.3-0.jsonl"
        tid = self.write("tidal", doc("bert-base", po, 1459.5, [row("tidal-sgdrc", 0.3, mb=1.0, trace=trace)]))
        with open(os.path.join(self.d, "tidal", trace), "w") as f:
            f.write(json.dumps({"t_us": 0, "masks": {"ls": "0-95", "be": "96-131"}}) + "\n")
            f.write(json.dumps({"t_us": 500, "masks": {"ls": "0-95", "be": "0-131"}}) + "\n")
        bur = self.write("bursty", doc("bert-base", bu, 1459.5, [row("alone", 0.3, mb=1.7)], ls_batches=[1, 2, 4, 8]))
        out = os.path.join(self.d, "out")

        def merge(*paths):
            return subprocess.run([sys.executable, os.path.join(COLOCATE, "colocate.py"), "--merge"] + list(paths) +
                                  ["--out", out], capture_output=True, text=True, timeout=120,
                                  env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
        try:
            import matplotlib
            plots = bool(matplotlib)
        except ImportError:
            plots = False
        # one group: the file names of before (colocate.png, colocate-sms.png, ...)
        r = merge(base, tid)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(out, "colocate-summary.json")) as f:
            s = json.load(f)
        self.assertEqual([(g["ls"], g["arrivals"]["label"], g["tag"]) for g in s["groups"]],
                         [("bert-base", "poisson", "")])
        if plots:
            for n in ("colocate.png", "colocate-cdf.png", "colocate-sms.png"):
                self.assertTrue(os.path.exists(os.path.join(out, n)), n)
        shutil.rmtree(out)
        # two groups: a table each in colocate.md, the plots tagged
        r = merge(base, tid, bur)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(out, "colocate.md")) as f:
            md = f.read()
        self.assertEqual(md.count("### LS bert-base"), 2)
        self.assertIn("### LS bert-base, bursty arrivals", md)
        if plots:
            for n in ("colocate-bert-base-poisson.png", "colocate-bert-base-poisson-sms.png",
                      "colocate-bert-base-bursty-5x-50ms-q0.25-cdf.png"):
                self.assertTrue(os.path.exists(os.path.join(out, n)), n)
            self.assertFalse(os.path.exists(os.path.join(out, "colocate-bert-base-bursty-5x-50ms-q0.25-sms.png")))


# Stand-ins for torch and bench/dnn's GPU modules, so that colocate.main's own logic runs on
# the CPU: streams, graphs (a replay sleeps), the profiler (kernel names), green contexts
# whose graphs fail to capture as a cluster GEMM does there.
FAKES = {
    "torch/__init__.py": """
        import contextlib
        from . import cuda, profiler, autograd, _dynamo
        @contextlib.contextmanager
        def no_grad():
            yield
    """,
    "torch/autograd.py": """
        class DeviceType:
            CUDA = "cuda"
            CPU = "cpu"
    """,
    "torch/_dynamo/__init__.py": "from . import config\n",
    "torch/_dynamo/config.py": "recompile_limit = 8\nfail_on_recompile_limit_hit = False\n",
    "torch/cuda.py": """
        import contextlib
        class Stream:
            def __init__(self, priority=0):
                self.priority, self.green = priority, False
            def synchronize(self):
                pass
        @contextlib.contextmanager
        def stream(s):
            yield
        def synchronize():
            pass
        class _Props:
            multi_processor_count = 132
        def get_device_properties(_d):
            return _Props()
    """,
    "torch/profiler.py": """
        import contextlib
        class ProfilerActivity:
            CUDA = "cuda"
        class _Ev:
            def __init__(self, name):
                self.name, self.device_type = name, "cuda"
        class _Prof:
            def events(self):
                return [_Ev(n) for n in ("triton_poi_fused_0", "triton_tem_fused_mm_1",
                                         "sm90_xmma_fprop_implicit_gemm_f16f16", "Memset (Device)")]
        @contextlib.contextmanager
        def profile(activities=None):
            yield _Prof()
    """,
    "models.py": """
        MODELS = ("bert-base", "bert-large", "resnet50")
        SPECS = {"bert-base": (1, ""), "bert-large": (16, ""), "resnet50": (1, "")}
        class X:
            def __init__(self, name, b):
                self.name, self.shape = name, (b, 3)
        def settings():
            return {"attn_implementation": "sdpa", "max_autotune_gemm_backends": "TRITON"}
        def configure_inductor(s):
            pass
        def make_input(name, batch=None):
            return X(name, batch or SPECS[name][0])
        def build(name, attn="sdpa", batch=None):
            return name, make_input(name, batch)
        def compile_model(m, x, s, log=None):
            return (lambda x: x), 1.5
        def compile_shape(cm, x, log=None):
            return 0.5
    """,
    "measure.py": """
        import time
        class G:
            def __init__(self, x):
                self.x = x
            def replay(self):
                time.sleep(0.0004 if self.x.name != "bert-large" else 0.002)
        def capture(fn, x, stream):
            if getattr(stream, "green", False) and x.name != "bert-large":
                raise RuntimeError("CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling cublasLtMatmul")
            return G(x), x
        def latencies(issue, stream, n, warmup):
            return [400000 + 1000 * (i % 10) for i in range(n)]
    """,
    "greenctx.py": """
        import torch
        class GreenSplit:
            def stream(self, smset):
                s = torch.cuda.Stream()
                s.green = True
                return s
    """,
}


class TestMainWithFakes(unittest.TestCase):
    """colocate.py's main on the CPU, torch and the model modules replaced (FAKES): solo and
    per-batch solo, the configurations' rows, a configuration whose graphs fail to capture
    (an error row, the others still run, exit 1), the census, the reference's LS check."""

    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="colocate-main-")
        self.fakes = os.path.join(self.d, "fakes")
        for rel, text in FAKES.items():
            path = os.path.join(self.fakes, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(textwrap.dedent(text))

    def tearDown(self):
        shutil.rmtree(self.d, ignore_errors=True)

    def main(self, *argv):
        code = textwrap.dedent("""
            import sys
            sys.path.insert(0, %r)
            import colocate
            sys.path.insert(0, %r)   # ahead of bench/dnn: the fake models, measure, greenctx
            sys.exit(colocate.main(colocate.parse(sys.argv[1:])))
        """ % (COLOCATE, self.fakes))
        e = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD",) and not k.startswith("TIDAL_")}
        e["PYTHONPATH"] = self.fakes + os.pathsep + os.path.join(ROOT, "python")
        return subprocess.run([sys.executable, "-c", code] + list(argv), env=e, capture_output=True, text=True,
                              timeout=120)

    def test_main(self):
        out = os.path.join(self.d, "base")
        r = self.main("--out", out, "--configs", "alone,green,none", "--ls", "resnet50", "--ls-batches", "1,2,4",
                      "--loads", "0.3,0.5", "--runs", "2", "--seconds", "0.3", "--arrivals", "bursty")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)     # green failed
        with open(os.path.join(out, "colocate.json")) as f:
            d = json.load(f)
        self.assertEqual(d["arrivals"]["kind"], "bursty")
        self.assertEqual(d["ls_batches"], [1, 2, 4])
        self.assertEqual(sorted(d["solo_batches_here"]), ["1", "2", "4"])
        self.assertEqual(d["compile_s"]["resnet50"], {"1": 1.5, "2": 0.5, "4": 0.5})
        self.assertAlmostEqual(d["capacity_per_s"], 1e6 / d["solo"]["mean_us"])
        ok = [(x["config"], x["load"], x["run"]) for x in d["rows"] if "error" not in x]
        self.assertEqual(ok, [(c, l, i) for c in ("alone", "none") for l in (0.3, 0.5) for i in (0, 1)])
        bad = [x for x in d["rows"] if "error" in x]
        self.assertEqual([(x["config"], x["load"]) for x in bad], [("green", None)])
        self.assertIn("CUBLAS_STATUS_EXECUTION_FAILED", bad[0]["error"])
        for x in d["rows"]:
            if "error" not in x:
                self.assertEqual(x["arrivals"], "bursty-5x-50ms-q0.25")
                self.assertEqual(x["ls"]["n"], x["n_arrivals"])
                self.assertTrue(set(x["ls_graphs"]) <= {"1", "2", "4"})
        self.assertGreater([x for x in d["rows"] if x["config"] == "none"][0]["be_batches_per_s"], 0)
        self.assertEqual(d["ls_kernels"]["1"]["closed"], 1)
        self.assertEqual(d["ls_kernels"]["4"]["kinds"], {"triton": 2, "cudnn": 1})
        self.assertIn("FAILED green (setting up", r.stdout)
        # another LS model's reference is refused before anything runs
        r2 = self.main("--out", os.path.join(self.d, "x"), "--configs", "alone", "--ls", "bert-base",
                       "--reference", os.path.join(out, "colocate.json"))
        self.assertNotEqual(r2.returncode, 0)
        self.assertIn("measured LS resnet50, this process serves bert-base", r2.stderr)
        # and the merge makes its FAILED line
        mr = subprocess.run([sys.executable, os.path.join(COLOCATE, "colocate.py"), "--merge",
                             os.path.join(out, "colocate.json"), "--out", os.path.join(self.d, "m")],
                            capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
        self.assertEqual(mr.returncode, 0, mr.stdout + mr.stderr)
        self.assertIn("| green | - | FAILED (setting up", mr.stdout)
        self.assertIn("### LS resnet50, bursty arrivals", mr.stdout)


@unittest.skipUnless(os.environ.get("TIDAL_TEST_BUILD"), "TIDAL_TEST_BUILD (the build tree, ctest sets it) not set")
class TestPolicyBatch(unittest.TestCase):
    """The policy's adaptive batch (libtidal's tidal_policy_batch, the real library) picks the
    graph: a batch of k requests runs the smallest captured size >= k."""

    def test_gslice_batches_round_up(self):
        code = textwrap.dedent("""
            import json, sys, time
            sys.path.insert(0, %r)
            sys.path.insert(0, %r)
            import colocate
            from tidal import policy, serve
            sys.path.insert(0, %r)
            from test_colocate import FakeModels, FakeStream
            pol = policy.Policy("gslice", sms=132, apply=lambda sid, sms: None)
            srv = serve.Server(pol)
            # 1 ms per batch whatever its size; SLO 10 ms: GSLICE's budget (batch_frac 0.5) is 5 ms
            mdl = FakeModels(lambda b: 1000)
            insts = [colocate.LSInstance(mdl, "bert-base", FakeStream(), (1, 2, 4, 8)) for _ in range(2)]
            srv.service("ls", "ls", insts, slo_us=10000, demand_sms=66, max_batch=8)
            rec = srv.run({"ls": serve.poisson(2000, 1.0, seed=2)}, seconds=1.0)
            graphs = {}
            for i in insts:
                for b, c in i.graphs_run.items():
                    graphs[b] = graphs.get(b, 0) + c
            st = colocate.batch_stats([r.batch for r in rec["ls"]])
            print(json.dumps({"graphs": graphs, "batches": st["batches"], "n": len(rec["ls"]),
                              "max_batch": max(r.batch for r in rec["ls"])}))
        """ % (COLOCATE, os.path.join(ROOT, "bench", "dnn"), HERE))
        lib = os.path.join(os.environ["TIDAL_TEST_BUILD"], "lib", "libtidal.so")
        e = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD",) and not k.startswith("TIDAL_")}
        e.update(PYTHONPATH=os.path.join(ROOT, "python"), TIDAL_LIB=lib)
        r = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        d = json.loads(r.stdout.strip().splitlines()[-1])
        graphs = {int(k): v for k, v in d["graphs"].items()}
        batches = {int(k): v for k, v in d["batches"].items()}
        self.assertGreater(d["max_batch"], 1)                     # the policy batched
        self.assertLessEqual(d["max_batch"], 8)
        self.assertTrue(set(graphs) <= {1, 2, 4, 8}, graphs)
        # every batch of k ran the graph of the smallest size >= k
        want = {}
        for k, n in batches.items():
            b = colocate.graph_batch((1, 2, 4, 8), k)
            want[b] = want.get(b, 0) + n
        self.assertEqual(graphs, want)


if __name__ == "__main__":
    unittest.main()
