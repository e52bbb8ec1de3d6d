"""Unit tests for python/tidal (tidal._lib, tidal.torch, tidal.triton) without a GPU.

libtidal is replaced by fake_tidal.c (built here with cc), preloaded like the real
libtidal-preload.so; torch and triton by small stub packages written to a temporary
directory. Every case runs in a fresh interpreter, since LD_PRELOAD acts at process start,
with TIDAL_BUILD pointing at an empty directory unless it says otherwise, so that the
checkout's own build tree (found by tidal._locate) does not leak into them.
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
EMPTY_BUILD = None   # a directory with nothing in it (the default TIDAL_BUILD of run_py)
FAKE_BUILD = None    # lib/libtidal.so, lib/libtidal-preload.so (copies of FAKE_SO), bin/tidal-ptxas

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
    # like Triton's: triton.runtime.driver is a DriverConfig whose .active raises without a
    # GPU driver (FAKE_TRITON_NO_DRIVER=1, read at each access)
    "triton/runtime/__init__.py": "from .driver import driver\n",
    "triton/runtime/driver.py": """
        import os
        class _Utils:
            def load_binary(self, name, kernel, shared, device):
                return (kernel, 0x99, 32, 0, 1024)
        class _Driver:
            utils = _Utils()
        class DriverConfig:
            _active = _Driver()
            @property
            def active(self):
                if os.environ.get("FAKE_TRITON_NO_DRIVER") == "1":
                    raise RuntimeError("0 active drivers ([]). There should only be one.")
                return self._active
        driver = DriverConfig()
    """,
}


def setUpModule():
    global TMP, FAKE_SO, STUBS, PTXAS, EMPTY_BUILD, FAKE_BUILD
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
    EMPTY_BUILD = os.path.join(TMP, "empty-build")
    os.makedirs(EMPTY_BUILD)
    FAKE_BUILD = make_fake_build(os.path.join(TMP, "fake-build"))


def make_fake_build(d):
    """d/lib/libtidal.so, d/lib/libtidal-preload.so (copies of the fake library) and
    d/bin/tidal-ptxas (the fake ptxas); returns d."""
    os.makedirs(os.path.join(d, "lib"))
    os.makedirs(os.path.join(d, "bin"))
    for n in ("libtidal.so", "libtidal-preload.so"):
        shutil.copy(FAKE_SO, os.path.join(d, "lib", n))
    shutil.copy(PTXAS, os.path.join(d, "bin", "tidal-ptxas"))
    return d


def tearDownModule():
    if TMP:
        shutil.rmtree(TMP, ignore_errors=True)


def run_py(code, preload=True, env=None, stubs=True, pydir=None, python=None):
    """Run code in a new interpreter (python, default this one) with pydir (default the
    checkout's python/) on PYTHONPATH; returns the JSON object it prints last."""
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("TIDAL_", "TRITON_", "TORCHINDUCTOR_", "FAKE_"))
         and k not in ("LD_PRELOAD", "PYTHONPATH")}
    e["PYTHONPATH"] = (STUBS + os.pathsep if stubs else "") + (pydir or PYDIR)
    e["TIDAL_LIBCUDA"] = FAKE_SO
    e["TRITON_PTXAS_PATH"] = PTXAS
    e["TIDAL_BUILD"] = EMPTY_BUILD
    if preload:
        e["LD_PRELOAD"] = preload if isinstance(preload, str) else FAKE_SO
    e.update(env or {})
    for k, v in list(e.items()):
        if v is None:
            del e[k]
    r = subprocess.run([python or sys.executable, "-c", textwrap.dedent(code)], env=e, capture_output=True,
                       text=True, timeout=60, cwd=TMP)
    if r.returncode != 0:
        raise AssertionError("child failed (%d):\n%s\n%s" % (r.returncode, r.stdout, r.stderr))
    return json.loads(r.stdout.strip().splitlines()[-1])


LOCATE_SCRIPT = """
    import json
    import tidal
    from tidal import _locate
    out = {"paths": tidal.paths()}
    try:
        out["origins"] = [o.label for o in _locate.origins()]
    except tidal.TidalError as e:
        out["origins_error"] = str(e)
    try:
        out["version"] = tidal.__version__
    except tidal.TidalError as e:
        out["version_error"] = str(e)
    print(json.dumps(out))
"""


def copy_package(dest_parent, config=None):
    """A copy of python/tidal in dest_parent/tidal (with a _config.py of that text when
    given); returns dest_parent."""
    shutil.copytree(os.path.join(PYDIR, "tidal"), os.path.join(dest_parent, "tidal"),
                    ignore=shutil.ignore_patterns("__pycache__", "_config.py"))
    if config is not None:
        with open(os.path.join(dest_parent, "tidal", "_config.py"), "w") as f:
            f.write(textwrap.dedent(config))
    return dest_parent


def cmake_version():
    import re
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(tidal VERSION ([0-9.]+)", f.read()).group(1)


class TestLocate(unittest.TestCase):
    """tidal._locate: where libtidal, libtidal-preload and tidal-ptxas are looked for, in order."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tidal-locate-", dir=TMP)

    def locate(self, env=None, pydir=None):
        return run_py(LOCATE_SCRIPT, preload=False, stubs=False, env=env, pydir=pydir)

    def test_tidal_build(self):
        d = self.locate(env={"TIDAL_BUILD": FAKE_BUILD})
        p = d["paths"]
        self.assertEqual(p["errors"], {})
        self.assertEqual(p["libtidal"], os.path.join(FAKE_BUILD, "lib", "libtidal.so"))
        self.assertEqual(p["preload"], os.path.join(FAKE_BUILD, "lib", "libtidal-preload.so"))
        self.assertEqual(p["ptxas"], os.path.join(FAKE_BUILD, "bin", "tidal-ptxas"))
        self.assertEqual(d["origins"], ["TIDAL_BUILD=%s" % FAKE_BUILD])

    def test_tidal_build_without_the_pieces_does_not_fall_through(self):
        d = self.locate(env={"TIDAL_BUILD": EMPTY_BUILD})
        err = d["paths"]["errors"]
        self.assertEqual(sorted(err), ["libtidal", "preload", "ptxas"])
        self.assertEqual(err["libtidal"],
                         "libtidal.so not found: searched %s/lib/libtidal.so: no such file (TIDAL_BUILD=%s). "
                         "Set TIDAL_LIB=PATH; or build it there, or point TIDAL_BUILD at the build tree that "
                         "has it" % (EMPTY_BUILD, EMPTY_BUILD))
        self.assertNotIn(os.path.join(ROOT, "build"), err["ptxas"])   # the checkout's build tree is not tried

    def test_env_variable_decides(self):
        d = self.locate(env={"TIDAL_BUILD": FAKE_BUILD, "TIDAL_PTXAS": "/nonexistent/tidal-ptxas",
                             "TIDAL_LIB": PTXAS, "TIDAL_PRELOAD": FAKE_SO})
        p = d["paths"]
        self.assertEqual(p["errors"]["ptxas"],
                         "TIDAL_PTXAS=/nonexistent/tidal-ptxas is not an executable file (no such file)")
        self.assertEqual(p["libtidal"], PTXAS)     # any file: TIDAL_LIB is taken as given
        self.assertEqual(p["preload"], FAKE_SO)

    def test_not_executable_ptxas(self):
        b = make_fake_build(os.path.join(self.tmp, "b"))
        os.chmod(os.path.join(b, "bin", "tidal-ptxas"), 0o644)
        d = self.locate(env={"TIDAL_BUILD": b})
        self.assertIn("%s/bin/tidal-ptxas: not executable" % b, d["paths"]["errors"]["ptxas"])

    def test_checkout_build_tree(self):
        # a checkout: CMakeLists.txt with project(tidal VERSION ...), python/tidal, build/
        co = os.path.join(self.tmp, "co")
        os.makedirs(co)
        with open(os.path.join(co, "CMakeLists.txt"), "w") as f:
            f.write("cmake_minimum_required(VERSION 3.25)\nproject(tidal VERSION 9.8.7 LANGUAGES C)\n")
        copy_package(os.path.join(co, "python"))
        make_fake_build(os.path.join(co, "build"))
        d = self.locate(env={"TIDAL_BUILD": None}, pydir=os.path.join(co, "python"))
        self.assertEqual(d["version"], "9.8.7")
        self.assertEqual(d["origins"], ["the checkout's build tree %s/build" % co])
        self.assertEqual(d["paths"]["libtidal"], os.path.join(co, "build", "lib", "libtidal.so"))
        self.assertEqual(d["paths"]["ptxas"], os.path.join(co, "build", "bin", "tidal-ptxas"))
        # imported through a build tree's share/tidal/python link (as tidal-run does): that tree
        # only, even where it lacks a piece the checkout's build/ has
        bt = os.path.join(self.tmp, "bt")
        os.makedirs(os.path.join(bt, "share", "tidal"))
        open(os.path.join(bt, "CMakeCache.txt"), "w").close()
        os.symlink(os.path.join(co, "python"), os.path.join(bt, "share", "tidal", "python"))
        os.makedirs(os.path.join(bt, "lib"))
        shutil.copy(FAKE_SO, os.path.join(bt, "lib", "libtidal.so"))
        d = self.locate(env={"TIDAL_BUILD": None}, pydir=os.path.join(bt, "share", "tidal", "python"))
        self.assertEqual(d["paths"]["libtidal"], os.path.join(bt, "lib", "libtidal.so"))
        self.assertEqual(d["paths"]["preload"], None)
        self.assertIn("%s/lib/libtidal-preload.so: no such file (the build tree %s, this package was imported "
                      "through its share/tidal/python)" % (bt, bt), d["paths"]["errors"]["preload"])
        self.assertNotIn(os.path.join(co, "build"), d["paths"]["errors"]["preload"])

    def test_this_checkout(self):
        d = self.locate(env={"TIDAL_BUILD": None})
        self.assertEqual(d["version"], cmake_version())
        self.assertEqual(d["origins"], ["the checkout's build tree %s" % os.path.join(ROOT, "build")])

    def test_installed_config(self):
        pd = copy_package(os.path.join(self.tmp, "inst"), """
            ORIGIN = 'install'
            VERSION = '1.2.3'
            ROOT = %r
            LIBDIR = %r
            BINDIR = %r
        """ % (FAKE_BUILD, os.path.join(FAKE_BUILD, "lib"), os.path.join(FAKE_BUILD, "bin")))
        d = self.locate(env={"TIDAL_BUILD": None}, pydir=pd)
        self.assertEqual(d["version"], "1.2.3")
        self.assertEqual(d["paths"]["libtidal"], os.path.join(FAKE_BUILD, "lib", "libtidal.so"))
        self.assertEqual(d["origins"], ["the install prefix %s, recorded by cmake --install in %s"
                                        % (FAKE_BUILD, os.path.join(pd, "tidal", "_config.py"))])
        # TIDAL_BUILD comes first
        d = self.locate(env={"TIDAL_BUILD": EMPTY_BUILD}, pydir=pd)
        self.assertIsNone(d["paths"]["libtidal"])

    def test_malformed_config(self):
        pd = copy_package(os.path.join(self.tmp, "bad"), "ORIGIN = 'install'\nVERSION = '1'\n")
        d = self.locate(env={"TIDAL_BUILD": None}, pydir=pd)
        self.assertIn("_config.py is malformed (missing ROOT, LIBDIR, BINDIR): reinstall tidal",
                      d["paths"]["errors"]["libtidal"])
        self.assertIn("malformed", d["version_error"])
        self.assertIn("malformed", d["origins_error"])

    def test_copy_with_no_origin(self):
        pd = copy_package(os.path.join(self.tmp, "loose"))
        d = self.locate(env={"TIDAL_BUILD": None}, pydir=pd)
        self.assertEqual(d["origins"], [])
        self.assertIn("libtidal.so not found: searched nowhere. Set TIDAL_LIB=PATH; or this copy of tidal records "
                      "no install prefix or build tree", d["paths"]["errors"]["libtidal"])
        self.assertIn("the tidal version is unknown", d["version_error"])

    def test_locate_unknown_piece(self):
        d = run_py("""
            import json, tidal
            try:
                tidal.locate("cubin")
                msg = None
            except tidal.TidalError as e:
                msg = str(e)
            print(json.dumps({"msg": msg}))
        """, preload=False, stubs=False)
        self.assertEqual(d["msg"], "tidal.locate('cubin'): want one of libtidal, preload, ptxas")


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
    out["sides"] = tt.l2_sides()
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
        self.assertEqual(d["sides"][0], "0-1,4-5,8-9,12-13,16-17,20-21,24-25,28-29,32-33,36-37,40-41,44-45,48-49,"
                         "52-53,56-57,60-61,64-65,68-69,72-73,76-77,80-81,84-85,88-89,92-93,96-97,100-101,104-105,"
                         "108-109,112-113,116-117,120-121,124-125,128-129")
        self.assertTrue(d["sides"][1].startswith("2-3,6-7,"))

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
        self.assertIn("TRITON_PTXAS_PATH is not set (tidal-ptxas not found: searched ", d["msg"])
        # where it looked: next to the preloaded library, then TIDAL_BUILD (nothing after it)
        self.assertIn(os.path.normpath(os.path.join(os.path.dirname(FAKE_SO), "..", "bin", "tidal-ptxas")), d["msg"])
        self.assertIn(os.path.join(EMPTY_BUILD, "bin", "tidal-ptxas") + ": no such file (TIDAL_BUILD=", d["msg"])
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

    def test_init_failure_retries_the_same(self):
        d = run_py("""
            import json
            import tidal.torch as tt, tidal._lib as L
            msgs = []
            for i in range(2):
                try:
                    tt.Partition("ls", "0-65")
                except tt.TidalError as e:
                    msgs.append(str(e))
            print(json.dumps({"msgs": msgs, "rt": tt._rt is not None, "hook": L._hook.installed}))
        """, env={"FAKE_TIDAL_INIT_FAIL": "1"})
        self.assertEqual(len(d["msgs"]), 2)
        self.assertEqual(d["msgs"][0], d["msgs"][1])
        self.assertIn("tidal_init: cannot load the CUDA driver", d["msgs"][0])
        self.assertFalse(d["rt"])
        self.assertTrue(d["hook"])    # installed at import, before init(): init()'s undo keeps it

    def test_no_triton_driver_raises_tidal_error(self):
        d = run_py("""
            import json
            import tidal.torch as tt
            out = {"notes": tt.info()["notes"]}
            try:
                tt.Partition("ls", "0-65")
            except Exception as e:
                out["err"] = [type(e).__name__, str(e)]
            print(json.dumps(out))
        """, env={"FAKE_TRITON_NO_DRIVER": "1"})
        self.assertTrue(any(n.startswith("Triton load hook not installed at import: Triton has no GPU driver")
                            for n in d["notes"]), d["notes"])
        self.assertEqual(d["err"][0], "TidalError")
        self.assertIn("Triton has no GPU driver it can use", d["err"][1])

    def test_cuda_context_failure_is_tidal_error(self):
        d = run_py("""
            import json
            import torch.cuda
            def init():
                raise RuntimeError("CUDA error: no CUDA-capable device is detected")
            torch.cuda.init = init
            import tidal.torch as tt
            out = []
            for i in range(2):
                try:
                    tt.Partition("ls", "0-65")
                except Exception as e:
                    out.append([type(e).__name__, str(e)])
            print(json.dumps({"errs": out, "rt": tt._rt is not None}))
        """)
        self.assertEqual(d["errs"][0], ["TidalError", "PyTorch could not make its CUDA context current "
                                        "(RuntimeError: CUDA error: no CUDA-capable device is detected)"])
        self.assertEqual(d["errs"][1], d["errs"][0])
        self.assertFalse(d["rt"])

    def test_bad_arguments_are_tidal_errors(self):
        d = run_py("""
            import json
            import tidal.torch as tt
            p = tt.Partition("ls", "0-65")
            out = {}
            cases = {
                "name": lambda: tt.Partition(5, "0-1"),
                "empty_name": lambda: tt.Partition(""),
                "smset_values": lambda: p.set(["a", 1]),
                "smset_type": lambda: p.set(object()),
                "short_us": lambda: setattr(p, "short_us", "x"),
                "priority": lambda: p.stream(priority="high"),
                "placement": lambda: setattr(p, "placement", "sideways"),
            }
            for k, f in cases.items():
                try:
                    f()
                    out[k] = None
                except Exception as e:
                    out[k] = [type(e).__name__, str(e)]
            out["mask"] = p.mask
            print(json.dumps(out))
        """)
        for k in ("name", "empty_name", "smset_values", "smset_type", "short_us", "priority", "placement"):
            self.assertEqual(d[k][0], "TidalError", (k, d[k]))
        self.assertEqual(d["name"][1], "partition name 5: want a non-empty string")
        self.assertEqual(d["smset_values"][1], "SM set ['a', 1]: want a string like '0-65' or a list of SM ids")
        self.assertEqual(d["short_us"][1], "short_us='x': want an integer")
        self.assertEqual(d["priority"][1], "priority='high': want an integer")
        self.assertEqual(d["mask"], "0-65")    # the failed set() calls changed nothing

    def test_bimodal(self):
        d = run_py("""
            import ctypes, json
            import tidal.torch as tt
            out = {}
            t = tt.Bimodal(10000, side=1)
            libc = ctypes.CDLL(None)
            side_at = libc.fake_bimodal_side
            side_at.restype, side_at.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t]
            t.write(b"abcdef", offset=4095)
            t.write(bytearray(b"XY"), offset=9998)

            class Tensor:   # a CPU tensor as torch has it: its bytes at data_ptr()
                class device:
                    type = "cpu"
                def __init__(self, b):
                    self.buf = ctypes.create_string_buffer(b, len(b))
                def data_ptr(self):
                    return ctypes.addressof(self.buf)
                def numel(self):
                    return len(self.buf) // 2
                def element_size(self):
                    return 2
                def is_contiguous(self):
                    return True
            t.write(Tensor(b"1234"), offset=0)
            desc = t.desc
            words = (ctypes.c_uint32 * 2).from_address(desc)   # mode, side
            all_addr = ctypes.c_uint64.from_address(desc + 8).value
            out["all"] = ctypes.string_at(all_addr + 4095, 6).decode() + ctypes.string_at(all_addr, 4).decode()
            out["side"] = (ctypes.string_at(side_at(t._h, 4095), 6).decode() +
                           ctypes.string_at(side_at(t._h, 9998), 2).decode())
            out["mode0"] = [t.mode, words[0], words[1]]
            t.mode = "side"
            out["mode1"] = [t.mode, words[0]]
            errs = {}
            for k, f in {"mode": lambda: setattr(t, "mode", "both"), "past": lambda: t.write(b"xyz", offset=9998),
                         "side": lambda: tt.Bimodal(100, side=2), "size": lambda: tt.Bimodal(0, side=0),
                         "data": lambda: t.write(12), "offset": lambda: t.write(b"x", offset=-1)}.items():
                try:
                    f()
                    errs[k] = None
                except Exception as e:
                    errs[k] = [type(e).__name__, str(e)]
            out["errs"] = errs
            out["mode_after"] = [t.mode, words[0]]
            out["repr"] = repr(t)
            t.close()
            t.close()
            try:
                t.mode = "all"
            except tt.TidalError as e:
                out["closed"] = str(e)
            out["repr_closed"] = repr(t)
            print(json.dumps(out))
        """)
        self.assertEqual(d["all"], "abcdef1234")
        self.assertEqual(d["side"], "abcdefXY")
        self.assertEqual(d["mode0"], ["all", 0, 1])
        self.assertEqual(d["mode1"], ["side", 1])
        for k, v in d["errs"].items():
            self.assertEqual(v[0], "TidalError", (k, v))
        self.assertIn("mode 'both': want 'all' or 'side'", d["errs"]["mode"][1])
        self.assertIn("tidal_bimodal_write(3 bytes at 9998): tidal_bimodal_write: past the end", d["errs"]["past"][1])
        self.assertIn("want nbytes > 0 and side 0 or 1", d["errs"]["side"][1])
        self.assertIn("want nbytes > 0 and side 0 or 1", d["errs"]["size"][1])
        self.assertIn("want bytes-like data or a CPU tensor (got int)", d["errs"]["data"][1])
        self.assertIn("offset=-1: want >= 0", d["errs"]["offset"][1])
        self.assertEqual(d["mode_after"], ["side", 1])   # the failed calls changed nothing
        self.assertEqual(d["repr"], "<tidal.torch.Bimodal 10000 bytes, side 1, mode side>")
        self.assertEqual(d["closed"], "bimodal tensor was closed")
        self.assertEqual(d["repr_closed"], "<tidal.torch.Bimodal 10000 bytes, side 1, closed>")

    def test_close_after_a_failed_destroy(self):
        d = run_py("""
            import ctypes, json
            import tidal.torch as tt
            p = tt.Partition("ls", "0-65")
            p.stream(); p.stream()
            out = {}
            try:
                p.close()
            except tt.TidalError as e:
                out["first"] = str(e)
            out["closed_after_first"] = p._closed
            out["left"] = len(p._streams)
            p.close()
            out["closed"] = p._closed
            out["destroyed"] = ctypes.CDLL(None).fake_streams_destroyed()
            print(json.dumps(out))
        """, env={"FAKE_TIDAL_DESTROY_FAIL": "2"})   # the second stream's destroy fails
        self.assertEqual(d["first"], "cuStreamDestroy(0x1010) of partition ls: CUresult 1")
        self.assertFalse(d["closed_after_first"])
        self.assertEqual(d["left"], 1)          # the failed one is still to do, the first is done
        self.assertTrue(d["closed"])
        self.assertEqual(d["destroyed"], 2)     # each stream destroyed once, none twice

    def test_not_preloaded_names_the_preload_found(self):
        d = self._problem(preload=False, env={"TIDAL_BUILD": FAKE_BUILD})
        self.assertIn("(it sets LD_PRELOAD=%s)" % os.path.join(FAKE_BUILD, "lib", "libtidal-preload.so"), d["msg"])
        d = self._problem(preload=False)
        self.assertIn("it sets LD_PRELOAD=libtidal-preload.so; libtidal-preload.so not found: searched %s"
                      % os.path.join(EMPTY_BUILD, "lib", "libtidal-preload.so"), d["msg"])

    def test_ptxas_next_to_the_preloaded_library(self):
        d = run_py("""
            import json, os
            import tidal.torch as tt
            print(json.dumps({"p": os.environ.get("TRITON_PTXAS_PATH"), "lib": tt.info()["library"]}))
        """, preload=os.path.join(FAKE_BUILD, "lib", "libtidal-preload.so"), env={"TRITON_PTXAS_PATH": None})
        self.assertEqual(d["lib"], os.path.join(FAKE_BUILD, "lib", "libtidal-preload.so"))
        self.assertEqual(d["p"], os.path.join(FAKE_BUILD, "bin", "tidal-ptxas"))

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
        with open(os.path.join(ROOT, "runtime", "tidal_policy.h")) as f:
            ph = f.read()
        for name in self.L.POLICY_PROTOTYPES:
            self.assertRegex(ph, r"\b%s\s*\(" % name, "%s is not in tidal_policy.h" % name)
        for name in self.L.BIMODAL_PROTOTYPES:
            self.assertRegex(self.h, r"\b%s\s*\(" % name, "%s is not in tidal.h" % name)

    def test_policy_struct_layouts(self):
        with open(os.path.join(ROOT, "runtime", "tidal_policy.h")) as f:
            ph = f.read()
        for tag, cls in (("tidal_policy_config", self.L.PolicyConfig), ("tidal_service_config", self.L.ServiceConfig),
                         ("tidal_scaling", self.L.Scaling)):
            body = self.re.search(r"typedef struct %s \{(.*?)\} %s;" % (tag, tag), ph, self.re.S).group(1)
            body = self.re.sub(r"/\*.*?\*/", "", body, flags=self.re.S)
            names = []
            for decl in body.split(";"):
                decl = decl.strip()
                if not decl:
                    continue
                m = self.re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)   # a function pointer
                if m:
                    names.append(m.group(1))
                    continue
                # "unsigned min_sms, max_sms" declares two
                head, *more = [x.strip() for x in decl.split(",")]
                names.append(self.re.findall(r"\w+", head)[-1])
                names += [self.re.findall(r"\w+", x)[-1] for x in more]
            self.assertEqual(names, [f[0] if f[0] != "cls" else "cls" for f in cls._fields_], tag)

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
        with open(os.path.join(ROOT, "abi", "tidal_l2.h")) as f:
            l2h = f.read()
        for name, val in self.L.BIMODAL_MODES.items():
            m = self.re.search(r"#define TIDAL_BIMODAL_%s (\d+)u?\b" % name.upper(), l2h)
            self.assertIsNotNone(m, name)
            self.assertEqual(int(m.group(1)), val, name)


@unittest.skipUnless(os.environ.get("TIDAL_TEST_PRELOAD"), "TIDAL_TEST_PRELOAD (the built libtidal-preload.so) not set")
class TestRealLibrary(unittest.TestCase):
    """The real libtidal-preload.so (ctest passes it): every entry point python/tidal binds
    exists, the process counts as interposed, and without a GPU Partition() fails with
    libtidal's own message."""

    def test_real_preload(self):
        real = os.path.abspath(os.environ["TIDAL_TEST_PRELOAD"])
        d = run_py("""
            import json
            from tidal import _lib
            import tidal.torch as tt
            lib = _lib.find_preloaded()
            out = {"path": lib.path, "missing": lib.missing, "interposed": _lib.launches_interposed(lib)[0]}
            out["optional_missing"] = [n for n in list(_lib.POLICY_PROTOTYPES) + list(_lib.BIMODAL_PROTOTYPES)
                                       if isinstance(getattr(lib, n), _lib._Missing)]
            try:
                tt.Partition("ls", "0-65")
                out["msg"] = None
            except tt.TidalError as e:
                out["msg"] = str(e)
            print(json.dumps(out))
        """, env={"LD_PRELOAD": real, "TIDAL_LIBCUDA": "libcuda-absent-for-this-test.so.1", "TIDAL_NO_DAEMON": "1"})
        self.assertEqual(d["path"], os.path.realpath(real))
        self.assertEqual(d["missing"], [], "python/tidal binds entry points the library lacks")
        self.assertEqual(d["optional_missing"], [], "python/tidal binds entry points the library lacks")
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

    # -- a failed enable() changes nothing, and a second call fails the same way

    ENABLE_TWICE = """
        import json, os
        import tidal.triton, tidal._lib as L
        from triton.runtime import driver
        env_keys = ("TRITON_PTXAS_PATH", "TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER")
        out = {"before": {k: os.environ.get(k) for k in env_keys}, "calls": []}
        def state():
            return {"env": {k: os.environ.get(k) for k in env_keys},
                    "lib": tidal.triton._lib_obj is not None, "part_name": tidal.triton._part_name,
                    "hook": [L._hook.installed, L._hook.lib is not None, L._hook.resolver is not None],
                    "preloaded": L.find_preloaded() is not None}
        for i in range(2):
            try:
                tidal.triton.enable(%s)
                out["calls"].append({"ok": True})
            except Exception as e:
                out["calls"].append({"type": type(e).__name__, "msg": str(e)})
            out["calls"][-1]["state"] = state()
        %s
        print(json.dumps(out))
    """

    def _enable_twice(self, args, after="", **kw):
        return run_py(self.ENABLE_TWICE % (args, after), **kw)

    def test_enable_without_driver_raises_and_rolls_back(self):
        args = "partition='tp:0-65', ptxas=%r" % PTXAS
        # TRITON_PTXAS_PATH set before: kept; then unset before: stays unset
        for before in ("/prev/ptxas", None):
            d = self._enable_twice(args, """
        os.environ.pop("FAKE_TRITON_NO_DRIVER")     # the driver is back: enable() works now
        tidal.triton.enable(%s)
        driver.active.utils.load_binary("k", 0x20, 0, 0)
        out["after"] = {"stats": tidal.triton.stats(), "ptxas": os.environ["TRITON_PTXAS_PATH"]}""" % args,
                                   env={"FAKE_TRITON_NO_DRIVER": "1", "TRITON_PTXAS_PATH": before})
            c1, c2 = d["calls"]
            self.assertEqual(c1["type"], "TidalError", c1)
            self.assertIn("Triton has no GPU driver it can use (triton.runtime.driver.active: RuntimeError: "
                          "0 active drivers ([]). There should only be one.)", c1["msg"])
            self.assertEqual((c2["type"], c2["msg"]), (c1["type"], c1["msg"]))   # not "already called"
            for c in (c1, c2):
                self.assertEqual(c["state"], {"env": d["before"], "lib": False, "part_name": None,
                                              "hook": [False, False, False], "preloaded": True})
            self.assertEqual(d["before"]["TRITON_PTXAS_PATH"], before)
            self.assertEqual(d["after"], {"stats": {"attached": 1, "not_rewritten": 0}, "ptxas": PTXAS})

    def test_enable_without_preload_retries_the_same(self):
        # libtidal loaded from TIDAL_LIB by the first call is not taken for a preloaded one
        d = self._enable_twice("partition='tp:0-65', ptxas=%r" % PTXAS, preload=False,
                               env={"FAKE_TRITON_NO_DRIVER": "1", "TIDAL_LIB": FAKE_SO})
        c1, c2 = d["calls"]
        self.assertIn("Triton has no GPU driver", c1["msg"])
        self.assertEqual(c2["msg"], c1["msg"])
        self.assertFalse(c2["state"]["preloaded"])
        self.assertFalse(c2["state"]["lib"])

    def test_enable_inductor_failure_unwraps_load_binary(self):
        d = run_py("""
            import json, os, sys
            class Broken:   # importing torch._inductor.config fails with something not ImportError
                def find_spec(self, name, path=None, target=None):
                    if name == "torch._inductor.config":
                        raise RuntimeError("inductor is broken")
                    return None
            sys.meta_path.insert(0, Broken())
            import tidal.triton, tidal._lib as L
            from triton.runtime import driver
            out = {}
            try:
                tidal.triton.enable(partition="tp:0-65", ptxas=%r)
            except tidal.triton.TidalError as e:
                out["msg"] = str(e)
            u = driver.active.utils
            out["wrapped"] = hasattr(u.load_binary, "_tidal_hook")
            out["own_attr"] = "load_binary" in vars(u)
            out["hook"] = [L._hook.installed, L._hook.lib is not None]
            out["env"] = [os.environ.get("TRITON_PTXAS_PATH"), os.environ.get("TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER")]
            out["lib"] = tidal.triton._lib_obj is not None
            print(json.dumps(out))
        """ % PTXAS, env={"TRITON_PTXAS_PATH": None})
        self.assertEqual(d["msg"], "importing torch._inductor.config failed (RuntimeError: inductor is broken)")
        self.assertEqual(d["wrapped"], False)
        self.assertEqual(d["own_attr"], False)   # the class's load_binary again, not a copy
        self.assertEqual(d["hook"], [False, False])
        self.assertEqual(d["env"], [None, None])
        self.assertFalse(d["lib"])

    def test_enable_bad_partition(self):
        for arg in ("5", "'bad name'", "''", "'x' * 40"):
            d = self._enable_twice("partition=%s, ptxas=%r" % (arg, PTXAS))
            for c in d["calls"]:
                self.assertEqual(c["type"], "TidalError", (arg, c))
                self.assertIn("want NAME (a tidald partition) or NAME:SMSET", c["msg"])
                self.assertFalse(c["state"]["lib"])

    def test_enable_explicit_libtidal_missing_does_not_fall_back(self):
        d = self._enable_twice("partition='tp:0-65', ptxas=%r, libtidal='/nonexistent/libtidal.so'" % PTXAS,
                               preload=False, env={"TIDAL_LIB": FAKE_SO})
        for c in d["calls"]:
            self.assertEqual(c["msg"], "libtidal=/nonexistent/libtidal.so is not a file (no such file)")
            self.assertEqual(c["state"]["env"], d["before"])

    def test_enable_finds_libtidal_next_to_ptxas(self):
        d = run_py("""
            import json, os
            import tidal.triton
            tidal.triton.enable(partition="tp:0-65", ptxas=%r)
            print(json.dumps({"lib": tidal.triton._lib_obj.path, "preloaded": tidal.triton._lib_obj.preloaded,
                              "ptxas": os.environ["TRITON_PTXAS_PATH"]}))
        """ % os.path.join(FAKE_BUILD, "bin", "tidal-ptxas"), preload=False)
        self.assertEqual(d["lib"], os.path.realpath(os.path.join(FAKE_BUILD, "lib", "libtidal.so")))
        self.assertFalse(d["preloaded"])
        self.assertEqual(d["ptxas"], os.path.join(FAKE_BUILD, "bin", "tidal-ptxas"))

    def test_enable_nothing_found(self):
        d = self._enable_twice("partition='tp:0-65'", preload=False, env={"TRITON_PTXAS_PATH": None})
        for c in d["calls"]:
            self.assertEqual(c["type"], "TidalError")
            self.assertTrue(c["msg"].startswith("tidal-ptxas not found: searched %s/bin/tidal-ptxas: no such file "
                                                "(TIDAL_BUILD=%s)" % (EMPTY_BUILD, EMPTY_BUILD)), c["msg"])
            self.assertEqual(c["state"]["env"], {"TRITON_PTXAS_PATH": None,
                                                 "TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER": None})


@unittest.skipUnless(os.environ.get("TIDAL_TEST_TRITON_PYTHON"),
                     "TIDAL_TEST_TRITON_PYTHON (a python with triton 3.6, no torch; ctest passes "
                     "TIDAL_TRITON_PYTHON) not set")
class TestRealTriton(unittest.TestCase):
    """tidal.triton.enable() under the real Triton without a GPU driver (no torch, no libcuda):
    Triton's own "0 active drivers" comes as TidalError, and nothing is left set."""

    def test_enable_without_driver(self):
        d = run_py(TestTriton.ENABLE_TWICE % ("partition='tp:0-65', ptxas=%r" % PTXAS, ""), stubs=False,
                   python=os.environ["TIDAL_TEST_TRITON_PYTHON"], env={"TRITON_PTXAS_PATH": None})
        c1, c2 = d["calls"]
        self.assertEqual(c1["type"], "TidalError", c1)
        self.assertIn("Triton has no GPU driver it can use (triton.runtime.driver.active: RuntimeError: "
                      "0 active drivers", c1["msg"])
        self.assertEqual((c2["type"], c2["msg"]), (c1["type"], c1["msg"]))
        for c in (c1, c2):
            self.assertEqual(c["state"], {"env": {"TRITON_PTXAS_PATH": None,
                                                  "TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER": None},
                                          "lib": False, "part_name": None, "hook": [False, False, False],
                                          "preloaded": True})


@unittest.skipUnless(os.environ.get("TIDAL_TEST_BUILD"), "TIDAL_TEST_BUILD (the build tree, ctest sets it) not set")
class TestPolicyModels(unittest.TestCase):
    """tidal.policy's fit and knee are libtidal's (the real libtidal.so; no GPU needed)."""

    def run_models(self, code):
        lib = os.path.join(os.environ["TIDAL_TEST_BUILD"], "lib", "libtidal.so")
        return run_py(code, preload=False, stubs=False, env={"TIDAL_LIB": lib})

    def test_fit_and_knee(self):
        d = self.run_models("""
            import json
            from tidal import policy
            n = [8, 16, 33, 66, 132]
            m, rms = policy.fit(n, [4000.0 / k + 100 for k in n])
            print(json.dumps({"a": m.a_us, "b": m.b_us, "rms": rms, "knee": m.knee(132),
                              "knee10": m.knee(132, grain=2, slack=10), "lat": m.latency(40)}))
        """)
        self.assertAlmostEqual(d["a"], 4000, places=6)
        self.assertAlmostEqual(d["b"], 100, places=6)
        self.assertLess(d["rms"], 1e-6)
        self.assertEqual(d["knee"], 110)
        self.assertEqual(d["knee10"], 4)
        self.assertAlmostEqual(d["lat"], 200, places=6)

    def test_errors_are_tidal_errors(self):
        d = self.run_models("""
            import json
            from tidal import policy, TidalError
            out = {}
            for what, f in (("one-count", lambda: policy.fit([66, 66], [1.0, 2.0])),
                            ("lengths", lambda: policy.fit([1, 2], [1.0])),
                            ("knee", lambda: policy.Scaling(1, 1).knee(132, grain=0))):
                try:
                    f()
                    out[what] = "no error"
                except TidalError as e:
                    out[what] = str(e)
            print(json.dumps(out))
        """)
        self.assertIn("two SM counts", d["one-count"])
        self.assertIn("2 SM counts but 1 latencies", d["lengths"])
        self.assertIn("bad arguments", d["knee"])

    def test_policy_ls_first(self):
        d = self.run_models("""
            import json
            from tidal import policy
            moves = []
            side0 = ",".join("%d-%d" % (s, s + 1) for s in range(0, 132, 4))   # pairs 0-1, 4-5, ...
            pol = policy.Policy("sgdrc", sms=132, apply=lambda sid, sms: moves.append((sid, sms)), ls_first=side0)
            ls = pol.add("ls", "ls", None, slo_us=500, profile=policy.Scaling(4000, 100), demand_sms=8)
            be = pol.add("be", "be", None)
            pol.begin(ls)
            out = {"ls": pol.share(ls), "be_n": len(pol.share(be))}
            try:
                policy.Policy("sgdrc", sms=132, apply=lambda sid, sms: None, ls_first="2")
            except policy.TidalError as e:
                out["odd"] = str(e)
            try:
                policy.Policy("sgdrc", sms=132, apply=lambda sid, sms: None, ls_first="0-1,x")
            except policy.TidalError as e:
                out["parse"] = str(e)
            print(json.dumps(out))
        """)
        self.assertEqual(d["ls"], [0, 1, 4, 5, 8, 9, 12, 13])   # the first 8 of ls_first, not 0-7
        self.assertEqual(d["be_n"], 124)
        self.assertIn("splits the slice of SMs 2-3", d["odd"])
        self.assertIn("ls_first '0-1,x'", d["parse"])

    def test_policy_batch_profile(self):
        d = self.run_models("""
            import json
            from tidal import policy, TidalError
            pol = policy.Policy("gslice", sms=132, apply=lambda sid, sms: None)
            sid = pol.add("cnn", "ls", None, slo_us=951, max_batch=8)
            pol.end(sid, 466, 1)
            before = pol.batch(sid, 10000)[0]
            pol.batch_profile(sid, {1: 466, 2: 443, 4: 582, 8: 767})
            after = pol.batch(sid, 10000)[0]
            try:
                pol.batch_profile(sid, {9: 100})
                err = ""
            except TidalError as e:
                err = str(e)
            print(json.dumps({"before": before, "after": after, "err": err}))
        """)
        self.assertEqual((d["before"], d["after"]), (1, 2))   # b2 (443 us) fits half the SLO once profiled
        self.assertIn("batch 9 (1..8)", d["err"])

    def test_serve_with_sgdrc(self):
        d = self.run_models("""
            import json, time
            from tidal import policy, serve
            moves = []
            pol = policy.Policy("sgdrc", sms=132, apply=lambda sid, sms: moves.append((sid, len(sms), sms[:1])))
            srv = serve.Server(pol)
            ls = srv.service("ls", "ls", lambda ids: time.sleep(0.002), slo_us=20000,
                             profile=policy.Scaling(4000, 100))
            be = srv.service("be", "be", lambda ids: time.sleep(0.005), max_batch=4)
            arr = serve.poisson(100, 1.0, seed=3)
            rec = srv.run({"ls": arr}, seconds=1.0)
            st = pol.state()
            print(json.dumps({"arrivals": len(arr), "ls": len(rec["ls"]), "be": len(rec["be"]),
                              "be_batches": sorted({r.batch for r in rec["be"]}),
                              "ls_sms": sorted({r.sms for r in rec["ls"]}),
                              "min_lat_us": min((r.end - r.arrival) * 1e6 for r in rec["ls"]),
                              "sum": serve.summarize(rec["ls"], 20000), "moves": moves[:6],
                              "nmoves": len(moves), "state": st,
                              "bursty": len(serve.bursty(200, 20.0, seed=1)) / 20.0}))
        """)
        self.assertEqual(d["ls"], d["arrivals"])            # every request served, once
        self.assertGreater(d["be"], 0)
        self.assertEqual(d["be_batches"], [4])
        self.assertEqual(d["ls_sms"], [110])                 # the profile's knee
        self.assertGreaterEqual(d["min_lat_us"], 2000)
        self.assertEqual(d["sum"]["n"], d["arrivals"])
        self.assertTrue(0 <= d["sum"]["slo_attainment"] <= 1)
        # add: LS placed, BE everywhere; then each LS request takes 0-109 from BE and gives it back
        self.assertEqual(d["moves"][:2], [[0, 110, [0]], [1, 132, [0]]])
        self.assertIn([1, 22, [110]], d["moves"])
        self.assertEqual(d["state"]["policy"], "sgdrc")
        self.assertEqual([s["name"] for s in d["state"]["services"]], ["ls", "be"])
        self.assertTrue(150 < d["bursty"] < 250, d["bursty"])   # mean rate kept

    def test_serve_without_policy(self):
        d = self.run_models("""
            import json, time
            from tidal import serve
            srv = serve.Server(None)
            srv.service("ls", "ls", lambda ids: time.sleep(0.001), slo_us=5000, max_batch=4)
            srv.service("be", "be", lambda ids: time.sleep(0.003), max_batch=2)
            arr = serve.poisson(300, 0.5, seed=5)
            rec = srv.run({"ls": arr}, seconds=0.5)
            print(json.dumps({"arrivals": len(arr), "ls": len(rec["ls"]), "be": len(rec["be"]),
                              "ls_batches": sorted({r.batch for r in rec["ls"]}),
                              "sms": sorted({r.sms for r in rec["ls"] + rec["be"]})}))
        """)
        self.assertEqual(d["ls"], d["arrivals"])
        self.assertGreater(d["be"], 0)
        self.assertEqual(d["sms"], [0])
        self.assertLessEqual(max(d["ls_batches"]), 4)

    def test_serve_instances_share_one_queue(self):
        d = self.run_models("""
            import json, threading, time
            from tidal import policy, serve, TidalError
            ran, lock = [], threading.Lock()
            def instance(k):
                def run(ids):
                    with lock:
                        ran.append((k, list(ids)))
                    time.sleep(0.02)
                return run
            arr = [0.05 + 0.1 * i + d for i in range(5) for d in (0.0, 0.0005)]   # pairs
            out = {}
            for n in (1, 2):
                ran.clear()
                pol = policy.Policy("sgdrc", sms=132, apply=lambda sid, sms: None)
                srv = serve.Server(pol)
                srv.service("ls", "ls", [instance(k) for k in range(n)], slo_us=50000, demand_sms=66)
                rec = srv.run({"ls": arr}, seconds=0.6)
                out[n] = {"ids": sorted(i for _, ids in ran for i in ids), "instances": sorted({k for k, _ in ran}),
                          "max_wait_ms": max((r.start - r.arrival) * 1e3 for r in rec["ls"]),
                          "records": len(rec["ls"]),
                          "inflight": [x["inflight"] for x in pol.state()["services"]]}
            try:
                serve.Server(None).service("x", "ls", [])
                out["empty"] = "no error"
            except TidalError as e:
                out["empty"] = str(e)
            print(json.dumps(out))
        """)
        for n in ("1", "2"):
            self.assertEqual(d[n]["ids"], list(range(10)))      # every request once
            self.assertEqual(d[n]["records"], 10)
            self.assertEqual(d[n]["inflight"], [0])             # every begin ended
        self.assertEqual(d["2"]["instances"], [0, 1])
        # one instance: the second of each pair waits for the first (20 ms); two: neither waits
        self.assertGreaterEqual(d["1"]["max_wait_ms"], 15)
        self.assertLess(d["2"]["max_wait_ms"], 15)
        self.assertIn("non-empty list of callables", d["empty"])

    def test_apply_failure_is_reported(self):
        d = self.run_models("""
            import json
            from tidal import policy, TidalError
            def apply(sid, sms):
                raise RuntimeError("no such partition")
            pol = policy.Policy("gslice", sms=132, apply=apply)
            try:
                pol.add("be", "be", None)
                out = "no error"
            except TidalError as e:
                out = str(e)
            print(json.dumps({"err": out, "kept": str(pol.apply_error)}))
        """)
        self.assertIn("tidal_policy_add_service(be)", d["err"])
        self.assertEqual(d["kept"], "no such partition")


@unittest.skipUnless(os.environ.get("TIDAL_TEST_BUILD"), "TIDAL_TEST_BUILD (the build tree, ctest sets it) not set")
class TestServeC(unittest.TestCase):
    """tidal.serve's engine="c": the real libtidal.so's tidal_server over fake_cuda.c (a graph
    exec handle below 0x100000 runs that many us; a larger one fails its launch)."""

    GRAPHS = """
        class NewGraph:              # PyTorch >= 2.8
            def __init__(self, h):
                self.h = h
            def raw_cuda_graph_exec(self):
                return self.h
        class KeepGraph:             # older: keep_graph=True, no raw_cuda_graph_exec
            def __init__(self, h):
                self.h = h
            def raw_cuda_graph(self):
                return self.h
        class LazyGraph(NewGraph):   # keep_graph=True, not instantiated yet
            instantiated = 0
            def raw_cuda_graph_exec(self):
                if not self.instantiated:
                    raise RuntimeError("instantiate() first")
                return self.h
            def instantiate(self):
                self.instantiated += 1
        class OldGraph:              # older, captured without keep_graph
            def raw_cuda_graph(self):
                raise RuntimeError("keep_graph=False")
        class Stream:
            def __init__(self, h):
                self.cuda_stream = h
    """

    @classmethod
    def setUpClass(cls):
        cc = shutil.which("cc") or shutil.which("gcc")
        cls.fake_cuda = os.path.join(TMP, "fake_cuda.so")
        subprocess.run([cc, "-shared", "-fPIC", "-O1", os.path.join(HERE, "fake_cuda.c"), "-o", cls.fake_cuda],
                       check=True)

    def run_c(self, code):
        lib = os.path.join(os.environ["TIDAL_TEST_BUILD"], "lib", "libtidal.so")
        return run_py(textwrap.dedent(self.GRAPHS) + textwrap.dedent(code), preload=False, stubs=False,
                      env={"TIDAL_LIB": lib, "TIDAL_LIBCUDA": self.fake_cuda})

    def test_serve_without_policy(self):
        d = self.run_c("""
            import json, time
            from tidal import serve
            srv = serve.Server(None, engine="c")
            srv.service("ls", "ls", graphs=[NewGraph(1000), KeepGraph(1000)], streams=[Stream(1), Stream(2)],
                        slo_us=5000)
            srv.service("be", "be", graphs=[2000], streams=[3], max_batch=2)
            arr = serve.poisson(300, 0.5, seed=5)
            t0 = time.monotonic()
            rec = srv.run({"ls": arr}, seconds=0.5)
            t1 = time.monotonic()
            ls, be = rec["ls"], rec["be"]
            print(json.dumps({"arrivals": len(arr), "ls": len(ls), "be": len(be),
                              "type": type(ls[0]).__name__, "fields": list(ls[0]._fields),
                              "be_batches": sorted({r.batch for r in be}), "sms": sorted({r.sms for r in ls + be}),
                              "in_time": all(t0 <= r.arrival <= r.start <= r.end <= t1 for r in ls),
                              "arrival_err_us": max(abs(r.arrival - (ls[0].arrival - arr[0]) - a) * 1e6
                                                    for r, a in zip(sorted(ls, key=lambda r: r.arrival), arr)),
                              "min_run_us": min((r.end - r.start) * 1e6 for r in ls),
                              "counts": srv.counts}))
            srv.close()
        """)
        self.assertEqual(d["ls"], d["arrivals"])            # every request served, once
        self.assertGreater(d["be"], 0)
        self.assertEqual(d["type"], "Record")
        self.assertEqual(d["fields"], ["service", "arrival", "start", "end", "batch", "sms", "share"])
        self.assertEqual(d["be_batches"], [2])
        self.assertEqual(d["sms"], [0])
        self.assertTrue(d["in_time"])                      # seconds of time.monotonic()
        self.assertLess(d["arrival_err_us"], 1)            # the schedule, to the ns
        self.assertGreaterEqual(d["min_run_us"], 1000)     # the fake graph's 1 ms
        self.assertEqual(d["counts"]["ls"]["requests"], d["arrivals"])
        self.assertEqual(d["counts"]["be"]["requests"], d["be"])
        self.assertEqual(d["counts"]["be"]["batches"] * 2, d["be"])

    def test_serve_with_sgdrc(self):
        d = self.run_c("""
            import json
            from tidal import policy, serve
            moves = []
            pol = policy.Policy("sgdrc", sms=132, apply=lambda sid, sms: moves.append((sid, len(sms))))
            srv = serve.Server(pol, engine="c")
            srv.service("ls", "ls", lambda ids: None, graphs=[LazyGraph(500)], streams=[Stream(1)], slo_us=20000,
                        profile=policy.Scaling(4000, 100), wait="yield")
            # BE: its graph on all SMs (listed as the all-SM share too, so that it wins there),
            # and one placed on the 22 it keeps while LS holds 110
            srv.service("be", "be", graphs=[{1: 1500}], streams=[Stream(2)], wait="block",
                        shares=[{"110-131": 1400, "0-131": 1500}])
            arr = serve.poisson(200, 0.5, seed=3)
            rec = srv.run({"ls": arr}, seconds=0.5)
            st = pol.state()
            be_by_share = sorted({(r.share, r.sms) for r in rec["be"]})
            print(json.dumps({"arrivals": len(arr), "ls": len(rec["ls"]), "be": len(rec["be"]),
                              "be_by_share": be_by_share, "ls_share": sorted({r.share for r in rec["ls"]}),
                              "ls_sms": sorted({r.sms for r in rec["ls"]}), "moves": moves[:2],
                              "shrinks": sum(1 for m in moves if m == (1, 22)),
                              "inflight": [x["inflight"] for x in st["services"]],
                              "requests": [x["requests"] for x in st["services"]]}))
        """)
        self.assertEqual(d["ls"], d["arrivals"])
        self.assertGreater(d["be"], 0)
        self.assertEqual(d["ls_sms"], [110])                 # the profile's knee, reserved at begin
        self.assertEqual(d["be_by_share"], [[1, 22], [2, 132]])  # the placed graph exactly while LS holds 0-109
        self.assertEqual(d["ls_share"], [0])
        self.assertEqual(d["moves"], [[0, 110], [1, 132]])
        self.assertGreater(d["shrinks"], 0)                  # BE loses LS's SMs while LS runs
        self.assertEqual(d["inflight"], [0, 0])              # every begin ended
        self.assertEqual(d["requests"][0], d["ls"])          # batches of 1: a begin each

    def test_graph_forms_and_errors(self):
        d = self.run_c("""
            import json
            from tidal import serve, TidalError
            out = {}
            def err(f):
                try:
                    f()
                    return "no error"
                except TidalError as e:
                    return str(e)
            srv = serve.Server(None, engine="c")
            # a graph per batch size: 1 and 4 (2 and 3 run on 4's)
            srv.service("ls", "ls", graphs=[{1: NewGraph(100), 4: KeepGraph(300)}], streams=[Stream(1)], max_batch=4)
            out["old"] = err(lambda: srv.service("a", "ls", graphs=[OldGraph()], streams=[Stream(1)]))
            out["not_graph"] = err(lambda: srv.service("b", "ls", graphs=[object()], streams=[Stream(1)]))
            out["callables"] = err(lambda: srv.service("c", "ls", lambda ids: None))
            out["mismatch"] = err(lambda: srv.service("d", "ls", graphs=[100, 100], streams=[1]))
            out["no_max"] = err(lambda: srv.service("e", "ls", graphs=[{1: 100}], streams=[1], max_batch=2))
            out["wait"] = err(lambda: srv.service("f", "ls", graphs=[100], streams=[1], wait="nap"))
            out["tick"] = err(lambda: srv.run({"ls": [0.001]}, seconds=0.01, tick_s=0.01))
            out["engine"] = err(lambda: serve.Server(None, engine="rust"))
            rec = srv.run({"ls": [0.001 * i for i in range(1, 20)]}, seconds=0.05)
            out["served"] = len(rec["ls"])
            bad = serve.Server(None, engine="c")
            bad.service("ls", "ls", graphs=[0x200000], streams=[Stream(7)])
            bad.service("be", "be", graphs=[100], streams=[Stream(8)])
            out["launch"] = err(lambda: bad.run({"ls": [0.001, 0.002]}, seconds=0.05))
            srv.close()
            out["closed"] = err(lambda: srv.run({"ls": [0.001]}, seconds=0.01))
            print(json.dumps(out))
        """)
        self.assertEqual(d["served"], 19)
        self.assertIn("keep_graph=True", d["old"])
        self.assertIn("not a graph engine='c' can launch", d["not_graph"])
        self.assertIn("give graphs= and streams=", d["callables"])
        self.assertIn("2 graphs and 1 streams", d["mismatch"])
        self.assertIn("no graph for a batch of 2", d["no_max"])
        self.assertIn("wait 'nap'", d["wait"])
        self.assertIn("tick_s and spin_us are the Python engine's", d["tick"])
        self.assertIn("engine 'rust'", d["engine"])
        self.assertIn("tidal_server_run: cuGraphLaunch (service ls, instance 0): CUDA_ERROR_INVALID_VALUE", d["launch"])
        self.assertIn("used after close()", d["closed"])


class TestServerHeader(unittest.TestCase):
    """python/tidal/_lib.py against runtime/tidal_server.h: functions, struct layouts, waits."""

    def test_layouts(self):
        import re
        sys.path.insert(0, PYDIR)
        from tidal import _lib as L
        with open(os.path.join(ROOT, "runtime", "tidal_server.h")) as f:
            h = f.read()
        for name in L.SERVER_PROTOTYPES:
            self.assertRegex(h, r"\b%s\s*\(" % name, "%s is not in tidal_server.h" % name)
        for tag, cls in (("tidal_server_config", L.ServerConfig), ("tidal_server_share", L.ServerShare),
                         ("tidal_server_instance", L.ServerInstance),
                         ("tidal_server_service", L.ServerService), ("tidal_server_record", L.ServerRecord),
                         ("tidal_server_counts", L.ServerCounts)):
            body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (tag, tag), h, re.S).group(1)
            body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
            names = []
            for decl in body.split(";"):
                decl = decl.strip()
                if decl:
                    m = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
                    names.append(m.group(1) if m else re.findall(r"\w+", decl)[-1])
            self.assertEqual(names, [f[0] for f in cls._fields_], tag)
        for name, val in L.SERVER_WAITS.items():
            m = re.search(r"\bTIDAL_SERVER_WAIT_%s\s*=\s*(\d+)" % name.upper(), h)
            self.assertIsNotNone(m, name)
            self.assertEqual(int(m.group(1)), val, name)


if __name__ == "__main__":
    unittest.main()
