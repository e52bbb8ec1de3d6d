"""Unit tests for scripts/tidal-run (no GPU): option parsing, where it finds the pieces, the
environment it sets, and its errors."""
import os
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
RUN = os.path.join(ROOT, "scripts", "tidal-run")


def make_build(d, ptxas_ok=True, lib=True, ptxas=True):
    os.makedirs(os.path.join(d, "bin"), exist_ok=True)
    os.makedirs(os.path.join(d, "lib"), exist_ok=True)
    if lib:
        open(os.path.join(d, "lib", "libtidal-preload.so"), "w").close()
    if ptxas:
        p = os.path.join(d, "bin", "tidal-ptxas")
        with open(p, "w") as f:
            f.write("#!/bin/sh\necho 'Cuda compilation tools, release 12.8'\n" if ptxas_ok else "#!/bin/sh\nexit 127\n")
        os.chmod(p, 0o755)
    return d


def run(args, env=None):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("TIDAL_", "TRITON_", "TORCHINDUCTOR_")) and k != "LD_PRELOAD"}
    e.update(env or {})
    return subprocess.run([RUN] + args, env=e, capture_output=True, text=True, timeout=30)


def parse_env(text):
    out = {}
    for line in text.splitlines():
        if line.startswith("export "):
            k, _, v = line[len("export "):].partition("=")
            out[k] = v
    return out


class TestTidalRun(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tidal-run-test-")
        self.b = make_build(os.path.join(self.tmp, "b"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_help(self):
        r = run(["--help"])
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: tidal-run", r.stdout)
        self.assertIn("--no-rewrite", r.stdout)

    def test_no_command_is_usage_error(self):
        r = run(["--build", self.b])
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage:", r.stderr)

    def test_print_env(self):
        r = run(["--build", self.b, "--partition", "ls:0-65", "--print-env"], env={"LD_PRELOAD": "/x/other.so"})
        self.assertEqual(r.returncode, 0, r.stderr)
        e = parse_env(r.stdout)
        self.assertEqual(e["LD_PRELOAD"], os.path.join(self.b, "lib", "libtidal-preload.so") + ":/x/other.so")
        self.assertEqual(e["TRITON_PTXAS_PATH"], os.path.join(self.b, "bin", "tidal-ptxas"))
        self.assertEqual(e["TIDAL_PARTITION"], "ls:0-65")
        self.assertEqual(e["TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER"], "0")
        self.assertEqual(e["PYTHONPATH"].split(":")[0], os.path.join(ROOT, "python"))
        self.assertIn("tidal", e["TRITON_CACHE_DIR"])
        self.assertIn("tidal", e["TORCHINDUCTOR_CACHE_DIR"])

    def test_keeps_given_caches(self):
        r = run(["--build", self.b, "--print-env"], env={"TRITON_CACHE_DIR": "/c/t", "TORCHINDUCTOR_CACHE_DIR": "/c/i"})
        e = parse_env(r.stdout)
        self.assertNotIn("TRITON_CACHE_DIR", e)
        self.assertNotIn("TORCHINDUCTOR_CACHE_DIR", e)

    def test_exec_sets_environment(self):
        r = run(["--build", self.b, "--", "sh", "-c", 'echo "$TRITON_PTXAS_PATH|$TIDAL_RUN|$TIDAL_NO_REWRITE"'])
        # LD_PRELOAD of an empty file makes ld.so warn on stderr; the command still runs
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), os.path.join(self.b, "bin", "tidal-ptxas") + "|1|")

    def test_no_rewrite(self):
        r = run(["--build", self.b, "--no-rewrite", "--", "sh", "-c", 'echo "${TRITON_PTXAS_PATH:-unset}|$TIDAL_NO_REWRITE"'],
                env={"TRITON_PTXAS_PATH": "/somewhere/tidal-ptxas"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "unset|1")

    def test_no_rewrite_needs_no_ptxas(self):
        b = make_build(os.path.join(self.tmp, "noptxas"), ptxas=False)
        self.assertEqual(run(["--build", b, "--no-rewrite", "true"]).returncode, 0)
        r = run(["--build", b, "true"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("tidal-ptxas not found", r.stderr)

    def test_missing_preload(self):
        b = make_build(os.path.join(self.tmp, "nolib"), lib=False)
        r = run(["--build", b, "true"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("libtidal-preload.so not found", r.stderr)
        self.assertIn("make build", r.stderr)

    def test_broken_ptxas(self):
        b = make_build(os.path.join(self.tmp, "bad"), ptxas_ok=False)
        r = run(["--build", b, "true"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("--version` fails", r.stderr)
        self.assertIn("TIDAL_REAL_PTXAS", r.stderr)

    def test_partition_checks(self):
        r = run(["--build", self.b, "--partition", "a:1", "--partition", "b:2", "true"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("given twice", r.stderr)
        r = run(["--build", self.b, "--partition", "bad name:1", "true"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("want NAME or NAME:SMSET", r.stderr)
        r = run(["--build", self.b, "--partition=be", "--print-env"])
        self.assertEqual(parse_env(r.stdout)["TIDAL_PARTITION"], "be")

    def test_unknown_option_and_command(self):
        r = run(["--build", self.b, "--frobnicate", "true"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown option", r.stderr)
        r = run(["--build", self.b, "no-such-command-here"])
        self.assertEqual(r.returncode, 127)
        self.assertIn("command not found", r.stderr)

    def test_build_dir_missing(self):
        r = run(["--build", os.path.join(self.tmp, "nope"), "true"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("is not a directory", r.stderr)

    def test_installed_layout(self):
        # bin/tidal-run next to bin/tidal-ptxas, lib/libtidal-preload.so, share/tidal/python
        inst = os.path.join(self.tmp, "prefix")
        make_build(inst)
        shutil.copy(RUN, os.path.join(inst, "bin", "tidal-run"))
        shutil.copytree(os.path.join(ROOT, "python"), os.path.join(inst, "share", "tidal", "python"))
        e = {k: v for k, v in os.environ.items() if not k.startswith(("TIDAL_", "TRITON_"))}
        r = subprocess.run([os.path.join(inst, "bin", "tidal-run"), "--print-env"], env=e, capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        env = parse_env(r.stdout)
        self.assertEqual(env["LD_PRELOAD"], os.path.join(inst, "lib", "libtidal-preload.so"))
        self.assertEqual(env["TRITON_PTXAS_PATH"], os.path.join(inst, "bin", "tidal-ptxas"))
        self.assertEqual(env["PYTHONPATH"], os.path.join(inst, "share", "tidal", "python"))


if __name__ == "__main__":
    unittest.main()
