"""python/ as an installable package, without a GPU and without the network.

* `pip install` from the checkout's python/ into a temporary venv: the installed copy has
  the project version and finds the build tree's libtidal, libtidal-preload and tidal-ptxas
  (recorded at install time: TIDAL_BUILD, else <checkout>/build).
* `cmake --install` of the build tree (TIDAL_TEST_BUILD, which ctest sets) into a temporary
  prefix P, then `pip install P/share/tidal/python`: that copy finds P's libraries; so does
  P/share/tidal/python on PYTHONPATH, as the installed tidal-run sets it.

pip runs with --no-index --no-build-isolation --no-deps, in a venv made with
--system-site-packages from a python that has pip, setuptools >= 61 and wheel (Debian:
python3-pip, python3-setuptools, python3-wheel, python3-venv; scripts/deps.txt):
TIDAL_TEST_PIP_PYTHON, else this python, else /usr/bin/python3.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PYDIR = os.path.join(ROOT, "python")

# exit 0 when this python can build python/ offline; setuptools before 70.1 needs the wheel
# package for that
_BUILD_TOOLS = textwrap.dedent("""
    import importlib.util, re, sys
    import setuptools
    if importlib.util.find_spec("pip") is None:
        sys.exit("no pip")
    v = tuple(int(x) for x in re.findall(r"[0-9]+", setuptools.__version__)[:2])
    if v < (61, 0):
        sys.exit("setuptools %s < 61" % setuptools.__version__)
    if v < (70, 1) and importlib.util.find_spec("wheel") is None:
        sys.exit("setuptools %s without the wheel package" % setuptools.__version__)
""")


def clean_env(**extra):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("TIDAL_", "TRITON_", "PIP_", "FAKE_")) and k not in ("LD_PRELOAD", "PYTHONPATH")}
    e.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONNOUSERSITE="1")
    e.update({k: v for k, v in extra.items() if v is not None})
    return e


def pip_python():
    """(python, None) for one that can build the package offline, else (None, why not)."""
    given = os.environ.get("TIDAL_TEST_PIP_PYTHON")
    cands = [given] if given else [sys.executable, "/usr/bin/python3"]
    tried = []
    for py in cands:
        if not py or not os.path.exists(py):
            tried.append("%s: absent" % py)
            continue
        r = subprocess.run([py, "-c", _BUILD_TOOLS], capture_output=True, text=True, env=clean_env())
        if r.returncode == 0:
            return py, None
        tried.append("%s: %s" % (py, (r.stderr.strip().splitlines() or ["setuptools < 61, or no wheel"])[-1]))
    return None, "; ".join(tried)


def cmake_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(tidal VERSION ([0-9.]+)", f.read()).group(1)


def tree_listing(d):
    out = []
    for dp, dns, fns in os.walk(d):
        dns[:] = [n for n in dns if n != "__pycache__"]
        out += [os.path.relpath(os.path.join(dp, n), d) for n in dns + fns]
    return sorted(out)


# what the installed package reports (run with the venv's python, away from the checkout)
REPORT = """
import importlib.metadata, json, os
import tidal
from tidal import _lib, _locate
out = {"file": tidal.__file__, "version": tidal.__version__, "dist_version": None,
       "paths": tidal.paths(), "config": _locate.config()}
try:
    out["dist_version"] = importlib.metadata.version("tidal")
except importlib.metadata.PackageNotFoundError:
    pass
if out["paths"]["libtidal"] and os.environ.get("REPORT_LOAD") == "1":
    lib = _lib.load_path(out["paths"]["libtidal"])   # the real library: every entry point bound
    out["loaded"] = {"path": lib.path, "missing": lib.missing}
print(json.dumps(out))
"""


class _Venv:
    def __init__(self, tc, base_python, parent):
        self.tc = tc
        self.dir = os.path.join(parent, "venv")
        r = subprocess.run([base_python, "-m", "venv", "--system-site-packages", "--without-pip", self.dir],
                           capture_output=True, text=True, env=clean_env())
        tc.assertEqual(r.returncode, 0, "python -m venv: %s" % r.stderr)
        self.python = os.path.join(self.dir, "bin", "python")
        self.cwd = parent

    def pip_install(self, src, **env):
        r = subprocess.run([self.python, "-m", "pip", "install", "--no-index", "--no-build-isolation", "--no-deps",
                            "--force-reinstall", src], capture_output=True, text=True, env=clean_env(**env),
                           cwd=self.cwd, timeout=240)
        self.tc.assertEqual(r.returncode, 0, "pip install %s failed:\n%s\n%s" % (src, r.stdout, r.stderr))

    def report(self, python=None, **env):
        r = subprocess.run([python or self.python, "-c", REPORT], capture_output=True, text=True,
                           env=clean_env(**env), cwd=self.cwd, timeout=60)
        self.tc.assertEqual(r.returncode, 0, "report failed:\n%s\n%s" % (r.stdout, r.stderr))
        return json.loads(r.stdout.strip().splitlines()[-1])


class _Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base_python, why = pip_python()
        cls.no_python = why

    def setUp(self):
        if self.base_python is None:
            self.fail("no python here can build python/ offline (needs pip, setuptools >= 61 and wheel: "
                      "Debian python3-pip python3-setuptools python3-wheel python3-venv, scripts/deps.txt; "
                      "or set TIDAL_TEST_PIP_PYTHON): %s" % self.no_python)
        self.tmp = tempfile.mkdtemp(prefix="tidal-install-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)


def _fake_build(d):
    os.makedirs(os.path.join(d, "lib"))
    os.makedirs(os.path.join(d, "bin"))
    for n in ("lib/libtidal.so", "lib/libtidal-preload.so"):
        open(os.path.join(d, n), "w").close()
    with open(os.path.join(d, "bin", "tidal-ptxas"), "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(os.path.join(d, "bin", "tidal-ptxas"), 0o755)
    return d


class TestPipFromTree(_Base):
    def test_pip_install_from_checkout(self):
        fake = _fake_build(os.path.join(self.tmp, "some-build"))
        before = tree_listing(PYDIR)
        v = _Venv(self, self.base_python, self.tmp)
        v.pip_install(PYDIR, TIDAL_BUILD=fake)
        self.assertEqual(tree_listing(PYDIR), before, "pip install wrote into python/")
        d = v.report()
        self.assertTrue(d["file"].startswith(v.dir + os.sep), d["file"])   # the installed copy, not the checkout
        self.assertEqual(d["version"], cmake_version())
        self.assertEqual(d["dist_version"], cmake_version())
        self.assertEqual(d["config"]["ORIGIN"], "build")
        self.assertEqual(d["config"]["SOURCE"], ROOT)
        self.assertEqual(d["paths"]["errors"], {})
        self.assertEqual(d["paths"]["libtidal"], os.path.join(fake, "lib", "libtidal.so"))
        self.assertEqual(d["paths"]["preload"], os.path.join(fake, "lib", "libtidal-preload.so"))
        self.assertEqual(d["paths"]["ptxas"], os.path.join(fake, "bin", "tidal-ptxas"))
        # the environment still comes first
        d = v.report(TIDAL_PTXAS="/nonexistent/tidal-ptxas")
        self.assertEqual(d["paths"]["errors"]["ptxas"],
                         "TIDAL_PTXAS=/nonexistent/tidal-ptxas is not an executable file (no such file)")

        # without TIDAL_BUILD at install time: the checkout's build/
        v.pip_install(PYDIR)
        d = v.report()
        self.assertEqual(d["config"]["ROOT"], os.path.join(ROOT, "build"))
        self.assertEqual(d["paths"]["origins"][0].split(",")[0], "the build tree %s" % os.path.join(ROOT, "build"))

        # the real build tree: its libtidal.so loads with every entry point python/tidal binds
        build = os.environ.get("TIDAL_TEST_BUILD")
        if build:
            build = os.path.abspath(build)
            v.pip_install(PYDIR, TIDAL_BUILD=build)
            d = v.report(REPORT_LOAD="1")
            self.assertEqual(d["paths"]["errors"], {})
            self.assertEqual(d["paths"]["libtidal"], os.path.join(build, "lib", "libtidal.so"))
            self.assertEqual(d["paths"]["ptxas"], os.path.join(build, "bin", "tidal-ptxas"))
            self.assertEqual(d["loaded"], {"path": os.path.realpath(os.path.join(build, "lib", "libtidal.so")),
                                           "missing": []})


@unittest.skipUnless(os.environ.get("TIDAL_TEST_BUILD"), "TIDAL_TEST_BUILD (the build tree, ctest sets it) not set")
class TestCmakeInstall(_Base):
    def test_install_prefix(self):
        build = os.path.abspath(os.environ["TIDAL_TEST_BUILD"])
        cmake = os.environ.get("TIDAL_TEST_CMAKE", "cmake")
        prefix = os.path.join(self.tmp, "prefix")
        r = subprocess.run([cmake, "--install", build, "--prefix", prefix], capture_output=True, text=True,
                           timeout=240)
        self.assertEqual(r.returncode, 0, "cmake --install:\n%s\n%s" % (r.stdout, r.stderr))
        share = os.path.join(prefix, "share", "tidal", "python")
        for f in ("pyproject.toml", "setup.py", "README.md", "tidal/__init__.py", "tidal/_config.py"):
            self.assertTrue(os.path.isfile(os.path.join(share, f)), f)
        lib = os.path.join(prefix, "lib")

        # pip install from P/share/tidal/python: it writes nothing there, the copy finds P's pieces
        before = tree_listing(share)
        v = _Venv(self, self.base_python, self.tmp)
        v.pip_install(share)
        self.assertEqual(tree_listing(share), before, "pip install wrote into %s" % share)
        d = v.report(REPORT_LOAD="1")
        self.assertTrue(d["file"].startswith(v.dir + os.sep), d["file"])
        self.assertEqual(d["version"], cmake_version())
        self.assertEqual(d["dist_version"], cmake_version())
        self.assertEqual({k: d["config"][k] for k in ("ORIGIN", "ROOT", "LIBDIR", "BINDIR")},
                         {"ORIGIN": "install", "ROOT": prefix, "LIBDIR": lib, "BINDIR": os.path.join(prefix, "bin")})
        self.assertEqual(d["paths"]["libtidal"], os.path.join(lib, "libtidal.so"))
        self.assertEqual(d["paths"]["preload"], os.path.join(lib, "libtidal-preload.so"))
        self.assertEqual(d["loaded"], {"path": os.path.realpath(os.path.join(lib, "libtidal.so")), "missing": []})
        self._check_ptxas(d, prefix)

        # P/share/tidal/python on PYTHONPATH (the installed tidal-run sets it): the same
        d2 = v.report(python=self.base_python, PYTHONPATH=share)
        self.assertEqual(d2["file"], os.path.join(share, "tidal", "__init__.py"))
        self.assertEqual(d2["config"]["ROOT"], prefix)
        for piece in ("libtidal", "preload", "ptxas"):
            self.assertEqual(d2["paths"][piece], d["paths"][piece], piece)

        # the installed tidal-run puts that directory on PYTHONPATH and preloads P's library
        r = subprocess.run([os.path.join(prefix, "bin", "tidal-run"), "--no-rewrite", "--print-env"],
                           capture_output=True, text=True, env=clean_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("export PYTHONPATH=%s\n" % share, r.stdout)
        self.assertIn("export LD_PRELOAD=%s\n" % os.path.join(lib, "libtidal-preload.so"), r.stdout)

    def _check_ptxas(self, d, prefix):
        want = os.path.join(prefix, "bin", "tidal-ptxas")
        if os.path.exists(want):
            self.assertEqual(d["paths"]["ptxas"], want)
        else:
            # installing the tools is not this package's rule (the top-level CMakeLists.txt):
            # until it installs tidal-ptxas, the package must say it looked there
            self.assertIsNone(d["paths"]["ptxas"])
            self.assertIn("%s: no such file (the install prefix %s" % (want, prefix), d["paths"]["errors"]["ptxas"])


if __name__ == "__main__":
    unittest.main()
