"""Unit tests for bench/dnn's GPU-free parts: statistics, kernel classification, and
report.py on synthetic results shaped like bench.py's (unmod.json / tidal.json)."""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DNN = os.path.join(ROOT, "bench", "dnn")
sys.path.insert(0, DNN)

import common  # noqa: E402
import report  # noqa: E402
import sm_profile  # noqa: E402


def lat_row(section, side, config, model, mode, p50, p99, **kw):
    r = dict(section=section, side=side, config=config, model=model, mode=mode, n=100, p50_us=p50, p90_us=p50,
             p99_us=p99, mean_us=p50, min_us=p50, max_us=p99, tidal_launches=None, max_abs_diff_vs_unmod=None,
             partition=None)
    r.update(kw)
    return r


def census(k, t):
    return {"kernels": k, "triton": t, "closed": k - t, "kinds": {"triton": t, "cublas": k - t}, "copies": 0,
            "reshaped_clones": 0, "closed_names": [["nvjet_hsh_128x64", k - t]], "triton_distinct": t,
            "graph_replay": {"kernels": k, "triton": t, "closed": k - t, "reshaped_clones": 0},
            "interposed_per_request": None}


def synthetic():
    env = {"torch": "2.11.0", "torch_cuda": "13.0", "triton": "3.6.0", "transformers": "5.17.0", "gpu": "H200",
           "sms": 132, "nvidia_smi": "x"}
    settings = {"ls_sms": "0-65", "be_sms": "66-131", "inductor": {"max_autotune_gemm_backends": "TRITON,ATEN"},
                "storm": {"ls": "bert-base graph", "be": "bert-large graph"}}
    u = {"side": "unmod", "env": env, "settings": settings, "compile": {"bert-base": {"build_s": 1, "first_call_s": 30,
                                                                                       "total_s": 31}},
         "kernels": {"bert-base": census(100, 80)}, "checks": [{"check": "sms-inside green", "ok": True,
                                                                "detail": "66 SMs"}],
         "errors": [], "timings": {"a": 3}, "rows": [
             lat_row("a", "unmod", "unmod-plain", "bert-base", "graph", 500.0, 600.0),
             lat_row("a", "unmod", "unmod-plain", "bert-base", "eager", 900.0, 1100.0),
             lat_row("b", "unmod", "green-0-65", "bert-base", "graph", 700.0, 800.0)],
         "storm": [
             dict(config="alone-plain", side="unmod", ls_p50_us=500.0, ls_p99_us=600.0, be_rps=None, alone_ref=None),
             dict(config="i-plain", side="unmod", ls_p50_us=2000.0, ls_p99_us=5000.0, be_rps=200.0,
                  alone_ref="alone-plain", p50_vs_alone=4.0, p99_vs_alone=8.33),
             dict(config="be-alone-plain", side="unmod", be_rps=250.0)]}
    launches = {"launches_rewritten": 10, "launches_original": 60, "launches_unknown": 30, "launches_refused": 0,
                "launches_unmasked": 0, "joins": 0}
    t = {"side": "tidal", "env": env, "settings": settings, "compile": {}, "kernels": {"bert-base": census(100, 80)},
         "checks": [], "errors": [], "timings": {}, "rows": [
             lat_row("a", "tidal", "tidal-all-hybrid", "bert-base", "graph", 550.0, 700.0, tidal_launches=launches,
                     max_abs_diff_vs_unmod=0.001,
                     partition={"violations": 0, "blocks_total": 5, "blocks_outside_mask": 0}),
             lat_row("a", "tidal", "tidal-all-hybrid", "bert-base", "eager", 1000.0, 1200.0, tidal_launches=launches),
             lat_row("b", "tidal", "tidal-0-65", "bert-base", "graph", 770.0, 900.0, tidal_launches=launches)],
         "storm": [
             dict(config="alone-tidal", side="tidal", ls_p50_us=760.0, ls_p99_us=900.0, be_rps=None, alone_ref=None,
                  tidal_launches=launches, partition={"violations": 0, "blocks_total": 1, "blocks_outside_mask": 0}),
             dict(config="iv-tidal", side="tidal", ls_p50_us=800.0, ls_p99_us=1000.0, be_rps=120.0,
                  alone_ref="alone-tidal", p50_vs_alone=1.05, p99_vs_alone=1.11, tidal_launches=launches,
                  partition={"violations": 0, "blocks_total": 1, "blocks_outside_mask": 0}),
             dict(config="be-alone-tidal", side="tidal", be_rps=130.0)]}
    return u, t


class TestCommon(unittest.TestCase):
    def test_percentile(self):
        xs = list(range(1, 101))
        self.assertEqual(common.percentile(xs, 50), 50.5)
        self.assertAlmostEqual(common.percentile(xs, 99), 99.01)
        self.assertEqual(common.percentile([7], 99), 7.0)
        s = common.summarize_us([1000, 2000, 3000])
        self.assertEqual((s["n"], s["p50_us"], s["min_us"], s["max_us"]), (3, 2.0, 1.0, 3.0))

    def test_classify(self):
        c = common.classify_kernel
        self.assertEqual(c("triton_poi_fused_add_0"), "triton")
        self.assertEqual(c("triton_tem_fused_mm_1__tidal_reshaped"), "triton")
        self.assertEqual(c("nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTN"), "cublas")
        self.assertEqual(c("sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64"), "cublas")
        self.assertEqual(c("sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc"), "cudnn")
        self.assertEqual(c("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128> >(Flash_fwd_params)"),
                         "attention")
        self.assertEqual(c("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >"), "aten")
        self.assertEqual(c("something_else"), "other")

    def test_format_smset(self):
        f = common.format_smset
        self.assertEqual(f([0, 1, 2, 5, 7, 8]), "0-2,5,7-8")
        self.assertEqual(f(range(64)), "0-63")
        self.assertEqual(f([16, 0, 1, 17, 1]), "0-1,16-17")   # unordered, a repeat
        self.assertEqual(f([]), "")
        for text in ("0-65", "3", "0-1,16-17,32-33,48-49"):
            self.assertEqual(f(common.parse_smset(text, 132)), text)

    def test_census(self):
        k = common.kernel_census(["triton_a", "triton_a__tidal_reshaped", "nvjet_x", "nvjet_x", "Memset (Device)"])
        self.assertEqual((k["kernels"], k["triton"], k["closed"], k["copies"], k["reshaped_clones"]), (4, 2, 2, 1, 1))
        self.assertEqual(k["closed_names"], [("nvjet_x", 2)])
        self.assertEqual(k["triton_distinct"], 1)

    def test_ratio(self):
        self.assertEqual(common.ratio(3.0, 2.0), 1.5)
        self.assertIsNone(common.ratio(None, 2.0))
        self.assertIsNone(common.ratio(1.0, 0))


    def test_kernel_signature_and_times(self):
        a = ["triton_mm_1", "Memcpy HtoD", "triton_poi_2", "sm90_xmma_gemm"]
        b = ["triton_mm_1__tidal_reshaped", "triton_poi_2", "sm90_xmma_gemm"]
        self.assertEqual(common.kernel_signature(a), common.kernel_signature(b))
        self.assertNotEqual(common.kernel_signature(a), common.kernel_signature(list(reversed(b))))

        class Ev:
            def __init__(self, name, us):
                self.name = name
                self.time_range = type("R", (), {"elapsed_us": lambda _s, us=us: us})()
        u = common.kernel_times([Ev("triton_mm_1", 10.0), Ev("triton_poi_2", 2.0), Ev("triton_mm_1", 10.0)])
        t = common.kernel_times([Ev("triton_mm_1__tidal_reshaped", 11.0), Ev("triton_poi_2", 2.5),
                                 Ev("triton_mm_1__tidal_reshaped", 10.5)])
        self.assertEqual(u["triton_mm_1"], [2, 20.0, 0])
        self.assertEqual(t["triton_mm_1"], [2, 21.5, 2])
        d = common.kernel_time_diff(u, t)
        self.assertEqual(d["top"][0][0], "triton_mm_1")
        self.assertEqual(d["clone_delta_us"], 1.5)
        self.assertEqual(d["original_delta_us"], 0.5)
        self.assertEqual((d["unmod_us"], d["tidal_us"]), (22.0, 24.0))


class TestProfile(unittest.TestCase):
    def test_default_counts(self):
        self.assertEqual(sm_profile.default_counts(132), [2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 66, 80, 96, 112, 132])
        self.assertEqual(sm_profile.default_counts(20), [2, 4, 8, 12, 16, 20])

    def test_measured_knee(self):
        pts = [{"sms": 8, "p50_us": 900.0}, {"sms": 32, "p50_us": 104.0}, {"sms": 66, "p50_us": 100.0},
               {"sms": 132, "p50_us": 101.0}]
        self.assertEqual(sm_profile._measured_knee(pts, 0.05), 32)
        self.assertEqual(sm_profile._measured_knee(pts, 0.01), 66)


class TestReport(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="dnn-report-test-")

    def tearDown(self):
        shutil.rmtree(self.d, ignore_errors=True)

    def test_derive(self):
        u, t = synthetic()
        der = report.derive(u, t)
        a = {(r["model"], r["mode"]): r for r in der["a"]}
        g = a[("bert-base", "graph")]
        self.assertEqual(g["p50_ratio"], 1.1)
        self.assertEqual(g["added_us_per_kernel"], 0.5)     # (550 - 500) / 100 kernels
        self.assertEqual(g["max_abs_diff_vs_unmod"], 0.001)
        b = der["b"][0]
        self.assertEqual((b["green_p50_us"], b["tidal_p50_us"], b["p50_ratio"]), (700.0, 770.0, 1.1))
        self.assertEqual(b["sms"], "0-65")                  # green-0-65 paired with tidal-0-65
        # a second SM set (the cluster groups inside the LS set): its own pair, not mixed in
        u["rows"].append(lat_row("b", "unmod", "green-0-63", "bert-base", "graph", 720.0, 820.0))
        t["rows"].append(lat_row("b", "tidal", "tidal-0-63", "bert-base", "graph", 702.0, 800.0))
        bs = {r["sms"]: r for r in report.derive(u, t)["b"]}
        self.assertEqual(sorted(bs), ["0-63", "0-65"])
        self.assertEqual((bs["0-63"]["green_p50_us"], bs["0-63"]["tidal_p50_us"], bs["0-63"]["p50_ratio"]),
                         (720.0, 702.0, 0.975))
        self.assertEqual(bs["0-65"]["tidal_p50_us"], 770.0)
        self.assertEqual(b["all_sms_unmod_p50_us"], 500.0)
        c = {r["config"]: r for r in der["c"]}
        self.assertEqual(c["i-plain"]["be_vs_be_alone"], 0.8)
        self.assertEqual(c["iv-tidal"]["be_alone_ref"], "be-alone-tidal")
        self.assertEqual(c["be-alone-plain"]["be_rps"], 250.0)
        self.assertTrue(any(r["config"] == "iv-tidal" and r["launches_original"] == 60 for r in der["tidal_stats"]))

    def test_derive_pairs(self):
        u, t = synthetic()
        given = {"launches_original": 0, "launches_unmasked": 192}
        t["rows"] += [lat_row("b-pair", "tidal", "pair-tidal-0-65", "bert-base", "graph", 690.0, 760.0,
                              pair_key="tidal-0-65", role="tidal", sms="0-65"),
                      lat_row("b-pair", "tidal", "pair-green-0-65", "bert-base", "graph", 700.0, 800.0,
                              tidal_launches=given, pair_key="tidal-0-65", role="other", sms="0-65"),
                      lat_row("a-pair", "tidal", "pair-tidal-all-hybrid", "bert-large", "graph", 5100.0, 5200.0,
                              pair_key="tidal-all-hybrid", role="tidal", sms="all"),
                      lat_row("a-pair", "tidal", "pair-unmod-plain", "bert-large", "graph", 5000.0, 5100.0,
                              tidal_launches={"launches_original": 3}, pair_key="tidal-all-hybrid", role="other",
                              sms="all")]
        der = report.derive(u, t)
        b, a = der["b_pair"], der["a_pair"]
        self.assertEqual(len(b), 1)                     # one row per tidal/other pair
        self.assertEqual((b[0]["sms"], b[0]["other_p50_us"], b[0]["tidal_p50_us"], b[0]["p50_ratio"]),
                         ("0-65", 700.0, 690.0, 0.9857))
        self.assertEqual(b[0]["p99_ratio"], 0.95)
        self.assertTrue(b[0]["other_as_given"])
        self.assertEqual((a[0]["model"], a[0]["sms"], a[0]["p50_ratio"]), ("bert-large", "all", 1.02))
        self.assertFalse(a[0]["other_as_given"])        # 3 of its launches went through tidal: flagged
        md = report.markdown(u, t, der) if hasattr(report, "markdown") else None
        if md is not None:
            self.assertIn("a'. section a in one process", md)

    def test_derive_storm_pairs(self):
        u, t = synthetic()
        t["storm"] += [dict(config="pair-iv-tidal", side="tidal", pair=True, rounds=4, ls_p50_us=1100.0,
                            ls_p99_us=1300.0, ls_n=200, be_rps=100.0, be_done=25, be_alone_rps=115.0,
                            be_alone_done=115),
                       dict(config="pair-iii-green", side="tidal", pair=True, rounds=4, ls_p50_us=1000.0,
                            ls_p99_us=1300.0, ls_n=200, be_rps=80.0, be_done=20, be_alone_rps=115.0,
                            be_alone_done=115)]
        der = report.derive(u, t)
        self.assertFalse(any(r["config"].startswith("pair-") for r in der["c"]))   # not mixed into table c
        cp = der["c_pair"]
        self.assertEqual(len(cp), 1)
        self.assertEqual((cp[0]["ls_p50_ratio"], cp[0]["ls_p99_ratio"], cp[0]["be_ratio"], cp[0]["be_alone_ratio"]),
                         (1.1, 1.0, 1.25, 1.0))
        self.assertEqual((cp[0]["green_be_done"], cp[0]["tidal_be_done"]), (20, 25))
        self.assertIn("### c'. the storm against the green split", report.markdown(u, t, der))

    def test_interleaved_rotates(self):
        """measure.interleaved: every configuration's request i runs before any request i + 1,
        the first of each round rotates, and the warmup requests are not returned."""
        import contextlib
        import types
        calls = []
        fake = types.ModuleType("torch")
        fake.no_grad = contextlib.nullcontext
        fake.cuda = types.SimpleNamespace(stream=lambda s: contextlib.nullcontext())
        saved = sys.modules.get("torch")
        sys.modules["torch"] = fake
        try:
            sys.modules.pop("measure", None)
            import measure
            st = types.SimpleNamespace(synchronize=lambda: None)
            out = measure.interleaved([(lambda: calls.append("a"), st), (lambda: calls.append("b"), st)], 3, 1)
        finally:
            sys.modules.pop("measure", None)
            if saved is None:
                sys.modules.pop("torch", None)
            else:
                sys.modules["torch"] = saved
        self.assertEqual("".join(calls), "abbaabba")
        self.assertEqual([len(x) for x in out], [3, 3])

    def test_main_writes_files(self):
        u, t = synthetic()
        for side in (u, t):
            with open(os.path.join(self.d, "%s.json" % side["side"]), "w") as f:
                json.dump(side, f)
        r = subprocess.run([sys.executable, os.path.join(DNN, "report.py"), self.d], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("### a. unmodified vs tidal", r.stdout)
        self.assertIn("| iv-tidal |", r.stdout)
        for f in ("results.json", "results.csv", "summary.md"):
            self.assertTrue(os.path.exists(os.path.join(self.d, f)), f)
        with open(os.path.join(self.d, "results.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 6 + 6)
        try:
            import matplotlib  # noqa: F401
            self.assertTrue(os.path.exists(os.path.join(self.d, "ls_p99_vs_be.png")))
        except ImportError:
            self.assertIn("no plot: matplotlib not importable", r.stdout)

    def test_missing_side_fails(self):
        u, _ = synthetic()
        with open(os.path.join(self.d, "unmod.json"), "w") as f:
            json.dump(u, f)
        r = subprocess.run([sys.executable, os.path.join(DNN, "report.py"), self.d], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(r.returncode, 1)
        self.assertIn("missing side(s): tidal", r.stdout)


if __name__ == "__main__":
    unittest.main()


class AutotuneDiff(unittest.TestCase):
    """bench/dnn/autotune_diff.py: a choice the unmodified side timed and the tidal side
    lost (not listed, failed, ignored) is found; kernel names are not compared."""
    TABLE = ("AUTOTUNE addmm(128x768, 128x768, 768x768)\n"
             "strides: [0, 1], [768, 1], [1, 768]\n"
             "dtypes: torch.float16, torch.float16, torch.float16\n"
             "  triton_mm_{a} 0.0108 ms 100.0% BLOCK_K=32, BLOCK_M=64, num_stages=5, num_warps=8\n"
             "  triton_mm_{b} {t} ms 93.4% BLOCK_K=128, BLOCK_M=64, num_stages=5, num_warps=4\n"
             "  addmm 0.0317 ms 34.2% \n"
             "SingleProcess AUTOTUNE benchmarking takes 0.17 seconds\n")

    def run_diff(self, unmod, tidal):
        import autotune_diff
        return autotune_diff.compare(unmod, tidal)

    def test_same_choices_other_names(self):
        lines, p, f, n = self.run_diff(self.TABLE.format(a=1, b=2, t="0.0116"), self.TABLE.format(a=7, b=9, t="0.0120"))
        self.assertEqual((p, f, n), (1, 0, 1), lines)

    def test_failed_choice_is_lost(self):
        lines, p, f, n = self.run_diff(self.TABLE.format(a=1, b=2, t="0.0116"), self.TABLE.format(a=1, b=2, t="inf"))
        self.assertEqual((p, f), (0, 1))
        self.assertTrue(any("BLOCK_K=128" in x and "failed" in x for x in lines), lines)

    def test_missing_and_ignored(self):
        tidal = "\n".join(l for l in self.TABLE.format(a=1, b=2, t="0.0116").splitlines() if "BLOCK_K=128" not in l)
        tidal += "\nTriton Error [CUDA]: invalid argument. Ignoring this choice.\n"
        lines, p, f, n = self.run_diff(self.TABLE.format(a=1, b=2, t="0.0116"), tidal)
        self.assertEqual(f, 2, lines)   # the op (a choice not listed; no stats: a complete table) and the ignored line
        self.assertTrue(any("1 choice(s) ignored under tidal after the last table, 0 unmodified" in x for x in lines), lines)
        self.assertTrue(any("not listed" in x for x in lines), lines)

    @staticmethod
    def stats(n):
        return 'Autotune Choices Stats:\n{"num_choices": %d, "num_triton_choices": %d, "best_kernel": "triton_mm_1"}\n' % (n, n - 1)

    def test_out_of_the_best_ten_is_not_lost(self):
        # the table shows the best few of num_choices: a choice that moved out of it is there
        tidal = "\n".join(l for l in self.TABLE.format(a=1, b=2, t="0.0116").splitlines() if "BLOCK_K=128" not in l)
        lines, p, f, n = self.run_diff(self.stats(20) + self.TABLE.format(a=1, b=2, t="0.0116"), self.stats(20) + tidal)
        self.assertEqual((p, f, n), (1, 0, 1), lines)
        self.assertTrue(any("1 of the unmodified side's best 3 outside tidal's" in x for x in lines), lines)

    def test_fewer_choices_is_lost(self):
        lines, p, f, n = self.run_diff(self.stats(20) + self.TABLE.format(a=1, b=2, t="0.0116"),
                                       self.stats(19) + self.TABLE.format(a=1, b=2, t="0.0116"))
        self.assertEqual((p, f), (0, 1), lines)
        self.assertTrue(any("1 of 20 choices missing" in x for x in lines), lines)

    def test_ignored_belongs_to_its_op(self):
        # an ignored choice on both sides before the same op is no loss; one more under tidal is
        ign = "Runtime error during autotuning: OutOfResources: shared memory\nIgnoring this choice.\n"
        table = self.TABLE.format(a=1, b=2, t="0.0116")
        lines, p, f, n = self.run_diff(ign + self.stats(20) + table, ign + self.stats(20) + table)
        self.assertEqual((p, f), (1, 0), lines)
        lines, p, f, n = self.run_diff(ign + self.stats(20) + table, ign + ign + self.stats(20) + table)
        self.assertEqual((p, f), (0, 1), lines)
        self.assertTrue(any("2 choice(s) ignored under tidal, 1 unmodified" in x for x in lines), lines)

    def test_nothing_in_common_exits_2(self):
        d = tempfile.mkdtemp()
        try:
            a, b = os.path.join(d, "u.log"), os.path.join(d, "t.log")
            with open(a, "w") as fa:
                fa.write(self.TABLE.format(a=1, b=2, t="0.0116"))
            with open(b, "w") as fb:
                fb.write("no tables here\n")
            r = subprocess.run([sys.executable, os.path.join(DNN, "autotune_diff.py"), a, b], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn("nothing compared", r.stderr)
        finally:
            shutil.rmtree(d)
