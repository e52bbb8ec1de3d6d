# -*- Python -*-
#
# lit configuration for tidal. One file, two suites:
#
#   tidal  :: <path>   hand-written tests: test/lit/**/*.{ptx,test,ll} (ShTest, RUN: lines)
#   corpus :: <path>   generated: one test per corpus PTX file (see tidal_corpus_format.py)
#
# Each suite has its own generated lit.site.cfg.py in the build tree
# (build/test/lit and build/test/lit-corpus) that sets config.tidal_suite and
# the tool paths, then loads this file.

import os
import shutil
import sys

import lit.formats

config.name = config.tidal_suite

# ---------------------------------------------------------------------------
# Environment shared by both suites
# ---------------------------------------------------------------------------
_path = [config.tidal_tools_dir, config.llvm_tools_dir]
if config.ptxas:
    _path.append(os.path.dirname(config.ptxas))
config.environment["PATH"] = os.pathsep.join(
    _path + [config.environment.get("PATH", os.environ.get("PATH", ""))]
)

if config.tidal_sanitize:
    # abort_on_error: a sanitizer report becomes SIGABRT, so `not tidal-opt ...`
    # cannot mistake it for an ordinary "bad input" exit status 1.
    config.environment.setdefault(
        "ASAN_OPTIONS",
        "detect_leaks=1:abort_on_error=1:halt_on_error=1:strict_string_checks=1",
    )
    config.environment.setdefault(
        "UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1:abort_on_error=1"
    )
    config.available_features.add("asan")

# A hung test fails alone instead of stalling the whole run (needs psutil,
# python3-psutil; `lit --timeout N` overrides).
if not lit_config.maxIndividualTestTime and lit_config.maxIndividualTestTimeIsSupported[0]:
    lit_config.maxIndividualTestTime = 600 if config.tidal_sanitize else 300

# valgrind (memcheck) catches reads past an arena block that ASan cannot see; not
# under the ASan tree (the two do not mix)
if not config.tidal_sanitize and shutil.which("valgrind"):
    config.available_features.add("valgrind")

if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
else:
    config.ptxas = ""

# ---------------------------------------------------------------------------
# Suite-specific setup
# ---------------------------------------------------------------------------
if config.tidal_suite == "corpus":
    sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from tidal_corpus_format import CorpusFormat

    config.test_source_root = config.tidal_exec_root
    config.test_exec_root = config.tidal_exec_root
    config.suffixes = []
    config.test_format = CorpusFormat(
        tidal_opt=config.tidal_opt,
        ptxas=config.ptxas,
        # (root directory, prefix of the test name, glob under root)
        roots=[
            (config.corpus_build_dir, "", "**/*.ptx"),
            (config.corpus_src_dir, "", "triton/**/*.ptx"),
        ],
    )
else:
    config.test_format = lit.formats.ShTest(execute_external=False)
    config.suffixes = [".ptx", ".test", ".ll"]
    # Inputs/ holds files used by tests that are not tests themselves.
    config.excludes = ["Inputs", "CMakeLists.txt", "README.txt", "README.md"]
    config.test_source_root = os.path.dirname(os.path.abspath(__file__))
    config.test_exec_root = config.tidal_exec_root

    # Tools are on PATH (tidal-opt, FileCheck, not, count, ptxas); the
    # substitutions below give absolute paths for the cases that need them.
    config.substitutions.append(("%tidal-opt", config.tidal_opt))
    config.substitutions.append(("%FileCheck", config.filecheck))
    config.substitutions.append(("%ptxas", config.ptxas or "false"))
    config.substitutions.append(("%corpus_build", config.corpus_build_dir))
    config.substitutions.append(("%corpus_src", config.corpus_src_dir))
    config.substitutions.append(("%srcroot", config.tidal_src_root))
    config.substitutions.append(("%tidal_version", config.tidal_version))

    # tidal-nvcc (test/lit/nvcc): the real nvcc sits next to ptxas; the
    # runtime libraries (libtidal.a, libtidal_cudart.a) are in <build>/lib once
    # built, which the feature `libtidal` says.
    _nvcc = os.path.join(os.path.dirname(config.ptxas), "nvcc") if config.ptxas else ""
    if _nvcc and os.access(_nvcc, os.X_OK):
        config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", _nvcc or "false"))
    config.substitutions.append(("%fatbinary", os.path.join(os.path.dirname(_nvcc), "fatbinary")
                                 if _nvcc else "false"))
    # the toolkit's libraries (cudart_static), next to nvcc's bin/
    config.substitutions.append(("%cudalib", os.path.join(os.path.dirname(os.path.dirname(_nvcc)), "lib64")
                                 if _nvcc else "/nonexistent"))
    config.substitutions.append(("%objroot", config.tidal_obj_root))
    _rt = os.path.join(config.tidal_obj_root, "lib")
    if all(os.path.exists(os.path.join(_rt, f)) for f in ("libtidal.a", "libtidal_cudart.a")):
        config.available_features.add("libtidal")
    # tidal-opt --cubin compiles in process with libnvptxcompiler when the build
    # linked it (only where the toolkit has the static archive: the GPU machine).
    import subprocess
    try:
        _ver = subprocess.run([config.tidal_opt, "--version"], capture_output=True, text=True,
                              timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        _ver = ""
    if "libnvptxcompiler" in _ver:
        config.available_features.add("nvptxcompiler")
    import shutil
    if shutil.which("pkg-config"):
        config.available_features.add("pkg-config")
    if shutil.which("cmake"):
        config.available_features.add("cmake")
