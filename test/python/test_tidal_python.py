"""Unit tests for python/tidal (tidal._lib, tidal.torch, tidal.triton) without a GPU.

libtidal is replaced by fake_tidal.c (built here with cc), preloaded like the real
libtidal-preload.so; torch and triton by small stub packages written to a temporary
directory. Every case runs in a fresh interpreter, since LD_PRELOAD acts at process start.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PYDIR = os.path.join(ROOT, "python")

TMP = None
FAKE_SO = None
STUBS = None
PTXAS = None

FAKE_TORCH = {
    "torch/__init__.py": """
        class device:
            def __init__(self, *a):
                self.a = a
        def empty(*a, **k):
            return None
        from . import cuda
    """,
    "torch/cuda/__init__.py": """
        def is_available():
            return True
        def init():
            pass
        def current_device():
            return 0
        class ExternalStream:
            def __init__(self, ptr, device=None):
                self.cuda_stream = ptr
                self.device = device
                self.synced = 0
            def synchronize(self):
                self.synced += 1
    """,
    "torch/_inductor/__init__.py": "",
    "torch/_inductor/config.py": "use_static_cuda_launcher = True\n",
    "triton/__init__.py": "",
    "triton/runtime/__init__.py": "",
    "triton/runtime/driver.py": """
        class _Utils:
            def load_binary(self, name, kernel, shared, device):
                return (kernel, 0x99, 32, 0, 1024)
        class _Driver:
            utils = _Utils()
        active = _Driver()
    """,
}


def setUpModule():
    global TMP, FAKE_SO, STUBS, PTXAS
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise unittest.SkipTest("no C compiler for fake_tidal.c")
    TMP = tempfile.mkdtemp(prefix="tidal-pytest-")
    FAKE_SO = os.path.join(TMP, "fake_tidal.so")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", os.path.join(HERE, "fake_tidal.c"), "-o", FAKE_SO], check=True)
    STUBS = os.path.join(TMP, "stubs")
    for rel, text in FAKE_TORCH.items():
        p = os.path.join(STUBS, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(textwrap.dedent(text))
    os.makedirs(os.path.join(TMP, "bin"))
    PTXAS = os.path.join(TMP, "bin", "tidal-ptxas")
    with open(PTXAS, "w") as f:
        f.write("#!/bin/sh\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n")
    os.chmod(PTXAS, 0o755)


def tearDownModule():
    if TMP:
        shutil.rmtree(TMP, ignore_errors=True)


def run_py(code, preload=True, env=None, stubs=True):
    """Run code in a new interpreter; returns the JSON object it prints last."""
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("TIDAL_", "TRITON_", "TORCHINDUCTOR_")) and k not in ("LD_PRELOAD", "PYTHONPATH")}
    e["PYTHONPATH"] = (STUBS + os.pathsep if stubs else "") + PYDIR
    e["TIDAL_LIBCUDA"] = FAKE_SO
    e["TRITON_PTXAS_PATH"] = PTXAS
    if preload:
        e["LD_PRELOAD"] = FAKE_SO
    e.update(env or {})
    for k, v in list(e.items()):
        if v is None:
            del e[k]
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=e, capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 0:
        raise AssertionError("child failed (%d):\n%s\n%s" % (r.returncode, r.stdout, r.stderr))
    return json.loads(r.stdout.strip().splitlines()[-1])


class TestLib(unittest.TestCase):
    def test_preloaded_found_and_interposed(self):
        d = run_py("""
            import json
            from tidal import _lib
            lib = _lib.find_preloaded()
            ok, where = _lib.launches_interposed(lib)
            print(json.dumps({"path": lib.path, "missing": lib.missing, "ok": ok, "where": where}))
        """)
        self.assertEqual(d["path"], os.path.realpath(FAKE_SO))
        self.assertEqual(d["missing"], [])
        self.assertTrue(d["ok"])
        self.assertEqual(d["where"], os.path.realpath(FAKE_SO))

    def test_not_preloaded(self):
        d = run_py("""
            import json
            from tidal import _lib
            lib = _lib.find_preloaded()
            print(json.dumps({"lib": lib is None, "interposed": _lib.launches_interposed(lib)[0]}))
        """, preload=False)
        self.assertEqual(d, {"lib": True, "interposed": False})

    def test_missing_entry_point_raises(self):
        d = run_py("""
            import ctypes, json
            from tidal import _lib
            lib = _lib.Lib(ctypes.CDLL(None), "libc", False)
            try:
                lib.tidal_partition_stream(None, 0, None)
                msg = None
            except _lib.TidalError as e:
                msg = str(e)
            print(json.dumps({"missing": len(lib.missing), "msg": msg}))
        """, preload=False)
        self.assertGreater(d["missing"], 10)
        self.assertIn("does not export tidal_partition_stream", d["msg"])

    def test_error_text(self):
        d = run_py("""
            import ctypes, json
            from tidal import _lib
            lib = _lib.find_preloaded()
            lib.check(lib.tidal_init(0), "tidal_init")
            h = ctypes.c_void_p()
            st = lib.tidal_partition_create(b"x", b"0-6x", ctypes.byref(h))
            print(json.dumps({"st": st, "err": str(lib.error(st, "create x"))}))
        """)
        self.assertEqual(d["st"], -2)
        self.assertEqual(d["err"], "create x: bad SM set (SM set does not parse)")

    def test_triton_hook_counts(self):
        d = run_py("""
            import json
            from tidal import _lib
            lib = _lib.find_preloaded()
            seen = []
            class U:
                def load_binary(self, name, kernel, shared, device):
                    return (kernel, 1, 2, 3, 4)
            u = U()
            _lib.install_triton_hook(lib, on_not_rewritten=seen.append, utils=u)
            _lib.install_triton_hook(lib, utils=u)          # idempotent
            u.load_binary("k_even", 0x10, 0, 0)
            u.load_binary("k_odd", 0x11, 0, 0)
            print(json.dumps({"c": _lib.triton_hook_counts(), "seen": seen}))
        """)
        self.assertEqual(d["c"]["attached"], 1)
        self.assertEqual(d["c"]["not_rewritten"], 1)
        self.assertEqual(d["c"]["not_rewritten_names"], ["k_odd"])
        self.assertEqual(d["seen"], ["k_odd"])


PART_SCRIPT = """
    import json
    import tidal.torch as tt
    import torch._inductor.config as ic
    out = {"static": ic.use_static_cuda_launcher}
    ls = tt.Partition("ls", "0-65")
    be = tt.Partition("be", "66-131")
    out["mask"] = ls.mask
    out["n"] = len(ls.sms)
    out["placed"] = ls.placed
    s = ls.stream(priority=-1)
    out["stream"] = s.cuda_stream
    out["kept"] = s.tidal_partition is ls
    be.set("0-131")
    out["be_mask"] = be.mask
    be.set([4, 1, 2, 3])
    out["be_list"] = be.mask
    be.set("1-4")
    out["be_placed_odd"] = be.placed
    be.placement = "persistent"
    be.short_us = 15
    out["placement"] = [be.placement, be.short_us]
    try:
        be.placement = "sideways"
    except tt.TidalError as e:
        out["bad_placement"] = str(e)
    try:
        tt.Partition("ls", "0-1")
    except tt.TidalError as e:
        out["dup"] = str(e)
    try:
        tt.Partition("nope")
    except tt.TidalError as e:
        out["nope"] = str(e)
    out["found"] = tt.Partition("ls").mask
    st = tt.stats(ls)
    out["stats"] = {k: st[k] for k in ("launches_rewritten", "launches_original", "launches_unknown",
                                       "blocks_total", "blocks_outside_mask", "violations")}
    out["pstats_keys"] = sorted(tt.stats())
    out["repr"] = repr(ls)
    ls.close()
    try:
        ls.mask
    except tt.TidalError as e:
        out["closed"] = str(e)
    out["sms"] = tt.device_sms()
    print(json.dumps(out))
"""


class TestTorch(unittest.TestCase):
    def test_partition_api(self):
        d = run_py(PART_SCRIPT)
        self.assertFalse(d["static"])
        self.assertEqual(d["mask"], "0-65")
        self.assertEqual(d["n"], 66)
        self.assertTrue(d["placed"])
        self.assertEqual(d["stream"], 0x1000)
        self.assertTrue(d["kept"])
        self.assertEqual(d["be_mask"], "0-131")
        self.assertEqual(d["be_list"], "1-4")
        self.assertFalse(d["be_placed_odd"])
        self.assertEqual(d["placement"], ["persistent", 15])
        self.assertIn("want one of hybrid, original, persistent", d["bad_placement"])
        self.assertIn("partition exists", d["dup"])
        self.assertIn("no partition named 'nope'", d["nope"])
        self.assertEqual(d["found"], "0-65")
        self.assertEqual(d["stats"]["blocks_total"], 9)
        self.assertEqual(d["stats"]["blocks_outside_mask"], 2)
        self.assertEqual(d["stats"]["launches_original"], 5)
        self.assertNotIn("violations", d["pstats_keys"])
        self.assertIn("triton_modules_rewritten", d["pstats_keys"])
        self.assertEqual(d["repr"], "<tidal.torch.Partition ls 0-65 placed>")
        self.assertIn("was closed", d["closed"])
        self.assertEqual(d["sms"], 132)

    def _problem(self, preload=True, env=None):
        return run_py("""
            import json, os
            import tidal.torch as tt
            try:
                tt.Partition("ls", "0-65")
                msg = None
            except tt.TidalError as e:
                msg = str(e)
            print(json.dumps({"msg": msg, "static_env": os.environ.get("TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER")}))
        """, preload=preload, env=env)

    def test_no_preload_raises(self):
        d = self._problem(preload=False)
        self.assertIn("libtidal is not preloaded", d["msg"])
        self.assertIn("tidal-run", d["msg"])
        self.assertEqual(d["static_env"], "0")

    def test_plain_ptxas_raises(self):
        d = self._problem(env={"TRITON_PTXAS_PATH": "/usr/bin/true"})
        self.assertIn("is not tidal-ptxas", d["msg"])

    def test_no_ptxas_raises_unless_no_rewrite(self):
        d = self._problem(env={"TRITON_PTXAS_PATH": None, "PATH": "/usr/bin:/bin"})
        self.assertIn("TRITON_PTXAS_PATH is not set", d["msg"])
        d = self._problem(env={"TRITON_PTXAS_PATH": None, "PATH": "/usr/bin:/bin", "TIDAL_NO_REWRITE": "1"})
        self.assertIsNone(d["msg"])

    def test_ptxas_found_from_env(self):
        d = run_py("""
            import json, os
            import tidal.torch as tt
            print(json.dumps({"p": os.environ.get("TRITON_PTXAS_PATH"), "notes": tt.info()["notes"]}))
        """, env={"TRITON_PTXAS_PATH": None, "TIDAL_PTXAS": PTXAS})
        self.assertEqual(d["p"], PTXAS)

    def test_broken_ptxas_raises(self):
        bad = os.path.join(TMP, "bin", "tidal-ptxas-broken")
        with open(bad, "w") as f:
            f.write("#!/bin/sh\necho 'cannot run the real ptxas' >&2\nexit 127\n")
        os.chmod(bad, 0o755)
        d = self._problem(env={"TRITON_PTXAS_PATH": bad})
        self.assertIn("--version` fails", d["msg"])

    def test_static_launcher_back_on_raises(self):
        d = run_py("""
            import json
            import tidal.torch as tt
            import torch._inductor.config as ic
            ic.use_static_cuda_launcher = True
            try:
                tt.init()
                msg = None
            except tt.TidalError as e:
                msg = str(e)
            print(json.dumps({"msg": msg}))
        """)
        self.assertIn("static launcher", d["msg"])

    def test_init_failure_is_libtidals_message(self):
        d = self._problem(env={"FAKE_TIDAL_INIT_FAIL": "1"})
        self.assertIn("tidal_init: cannot load the CUDA driver: fake (CUDA driver not available)", d["msg"])

    def test_info_never_raises(self):
        d = run_py("""
            import json
            import tidal.torch as tt
            i = tt.info()
            print(json.dumps({"problems": i["problems"], "preloaded": i["preloaded"]}))
        """, preload=False)
        self.assertFalse(d["preloaded"])
        self.assertEqual(len(d["problems"]), 1)


class TestHeader(unittest.TestCase):
    """python/tidal/_lib.py against runtime/tidal.h: names, struct layout, constants."""

    @classmethod
    def setUpClass(cls):
        import re
        sys.path.insert(0, PYDIR)
        from tidal import _lib
        cls.L = _lib
        with open(os.path.join(ROOT, "runtime", "tidal.h")) as f:
            cls.h = f.read()
        cls.re = re

    def test_functions_declared(self):
        for name in self.L.PROTOTYPES:
            self.assertRegex(self.h, r"\b%s\s*\(" % name, "%s is not in tidal.h" % name)

    def test_stats_layout(self):
        body = self.re.search(r"typedef struct tidal_stats \{(.*?)\} tidal_stats;", self.h, self.re.S).group(1)
        fields = self.re.findall(r"uint64_t\s+(\w+)(\[\d+\])?;", body)
        self.assertEqual([f[0] for f in fields], list(self.L.STATS_COUNTERS) + ["sm_blocks"])
        self.assertEqual(fields[-1][1], "[256]")

    def test_constants(self):
        for name, val in (("TIDAL_PLACE_HYBRID", self.L.PLACE_HYBRID), ("TIDAL_PLACE_PERSISTENT", self.L.PLACE_PERSISTENT),
                          ("TIDAL_PLACE_ORIGINAL", self.L.PLACE_ORIGINAL), ("TIDAL_ERR_NOT_FOUND", self.L.ERR_NOT_FOUND),
                          ("TIDAL_ERR_NOT_REWRITTEN", self.L.ERR_NOT_REWRITTEN), ("TIDAL_ERR_EXISTS", self.L.ERR_EXISTS),
                          ("TIDAL_SMSET_WORDS", self.L.SMSET_WORDS)):
            m = self.re.search(r"\b%s\s*=?\s*(-?\d+)" % name, self.h)
            self.assertIsNotNone(m, name)
            self.assertEqual(int(m.group(1)), val, name)


@unittest.skipUnless(os.environ.get("TIDAL_TEST_PRELOAD"), "TIDAL_TEST_PRELOAD (the built libtidal-preload.so) not set")
class TestRealLibrary(unittest.TestCase):
    """The real libtidal-preload.so (ctest passes it): every entry point python/tidal binds
    exists, the process counts as interposed, and without a GPU Partition() fails with
    libtidal's own message."""

    def test_real_preload(self):
        real = os.environ["TIDAL_TEST_PRELOAD"]
        d = run_py("""
            import json
            from tidal import _lib
            import tidal.torch as tt
            lib = _lib.find_preloaded()
            out = {"path": lib.path, "missing": lib.missing, "interposed": _lib.launches_interposed(lib)[0]}
            try:
                tt.Partition("ls", "0-65")
                out["msg"] = None
            except tt.TidalError as e:
                out["msg"] = str(e)
            print(json.dumps(out))
        """, env={"LD_PRELOAD": real, "TIDAL_LIBCUDA": "libcuda-absent-for-this-test.so.1", "TIDAL_NO_DAEMON": "1"})
        self.assertEqual(d["path"], os.path.realpath(real))
        self.assertEqual(d["missing"], [], "python/tidal binds entry points the library lacks")
        self.assertTrue(d["interposed"])
        self.assertIn("tidal_init: ", d["msg"])
        self.assertIn("libcuda-absent-for-this-test.so.1", d["msg"])


class TestTriton(unittest.TestCase):
    def test_enable_uses_preloaded_library(self):
        d = run_py("""
            import json, os
            import tidal.triton
            from triton.runtime import driver
            tidal.triton.enable(partition="tp:0-65", ptxas=%r)
            driver.active.utils.load_binary("k", 0x20, 0, 0)
            driver.active.utils.load_binary("k2", 0x21, 0, 0)
            import tidal._lib as L
            print(json.dumps({"stats": tidal.triton.stats(), "part": bool(tidal.triton._part),
                              "lib": tidal.triton._lib_obj.path, "ptxas": os.environ["TRITON_PTXAS_PATH"],
                              "preloaded": tidal.triton._lib_obj.preloaded}))
        """ % PTXAS)
        self.assertEqual(d["stats"], {"attached": 1, "not_rewritten": 1})
        self.assertTrue(d["part"])
        self.assertTrue(d["preloaded"])
        self.assertEqual(d["lib"], os.path.realpath(FAKE_SO))
        self.assertEqual(d["ptxas"], PTXAS)

    def test_enable_bad_ptxas_raises(self):
        d = run_py("""
            import json
            import tidal.triton
            try:
                tidal.triton.enable(partition="tp:0-65", ptxas="/nonexistent/tidal-ptxas")
                msg = None
            except tidal.triton.TidalError as e:
                msg = str(e)
            print(json.dumps({"msg": msg}))
        """, env={"TIDAL_PTXAS": PTXAS})
        self.assertIn("ptxas=/nonexistent/tidal-ptxas is not an executable file", d["msg"])

    def test_enable_twice_raises(self):
        d = run_py("""
            import json
            import tidal.triton
            tidal.triton.enable(partition="tp:0-65", ptxas=%r)
            try:
                tidal.triton.enable(partition="tp:0-65", ptxas=%r)
                msg = None
            except tidal.triton.TidalError as e:
                msg = str(e)
            print(json.dumps({"msg": msg}))
        """ % (PTXAS, PTXAS))
        self.assertIn("already called", d["msg"])


if __name__ == "__main__":
    unittest.main()
