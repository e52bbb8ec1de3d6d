"""Run Triton / torch.compile kernels on a tidal partition.

    import tidal.triton
    tidal.triton.enable(partition="be")      # a tidald partition, or "be:48-131" (local)

What enable() does:
  1. points TRITON_PTXAS_PATH at tidal-ptxas, so every kernel Triton compiles from now on
     carries the tidal rewrite (already-cached kernels do not: set TRITON_ALWAYS_COMPILE=1
     or clear the Triton cache);
  2. loads libtidal and wraps Triton's load_binary, so every module Triton loads is
     attached to the partition (eagerly loaded, its __tidal_ctl set), and turns off
     torch.compile's static CUDA launcher, which bypasses load_binary. Triton's own
     launcher then runs the rewritten kernels unchanged, on the partition's SMs (launch
     case b: without the preload enable() sets TIDAL_CASE_B=1, so tidal-ptxas puts the
     case-b check into the original entries) -- except kernels with dynamic shared memory (GEMMs, attention: their
     original entry is left byte-identical), which run unmasked without the preload.
     For reshaped persistent launches (case c, every rewritten kernel) run the process under
     LD_PRELOAD=libtidal-preload.so (scripts/tidal-run) instead; enable() works with it
     too, and then uses the preloaded library rather than loading a second copy.
For PyTorch streams on partitions (green contexts, graph capture) see tidal.torch.

Paths: the preloaded libtidal when the process has one; else libtidal.so from `libtidal=`,
$TIDAL_LIB, ../lib next to the tidal-ptxas used, $TIDAL_BUILD/lib, the install prefix or
build tree this package was installed from, or a checkout's build tree; tidal-ptxas from
`ptxas=`, $TIDAL_PTXAS, ../bin next to the preloaded libtidal, then the same places
(python/README.md, "How the libraries are found"). Errors raise TidalError with libtidal's
message; nothing falls back silently. An enable() that raises changes nothing (environment,
Triton's load_binary, this module's state), so it can be called again.
"""
import ctypes
import os
import re
import threading

from . import _lib as _lib_mod
from . import _locate
from ._lib import TidalError

__all__ = ["enable", "stats", "TidalError"]

_lib_obj = None      # the _lib.Lib in use
_lib = None          # its raw ctypes handle (kept for tests that call libtidal directly)
_part = None         # the partition (ctypes.c_void_p) once resolved
_part_name = None
_part_lock = threading.Lock()
_enable_lock = threading.Lock()

# a partition name as libtidal takes it (runtime/tidal.h), optionally ":SMSET"
_PARTITION_RE = re.compile(r"^[A-Za-z0-9_.-]{1,31}(:.+)?$")


def _load_lib(libtidal, ptxas):
    pre = _lib_mod.find_preloaded()
    if pre is not None:
        if libtidal and os.path.realpath(libtidal) != pre.path:
            raise TidalError("libtidal=%s, but the process already has libtidal from %s (preloaded); "
                             "drop libtidal= or the preload" % (libtidal, pre.path))
        return pre
    near = [("next to tidal-ptxas %s" % ptxas, os.path.join(os.path.dirname(ptxas), "..", "lib"))]
    path = _locate.locate("libtidal", explicit=libtidal, explicit_name="libtidal=", near=near)
    return _lib_mod.load_path(path)


def _ensure_partition():
    """Resolve the partition once a CUDA context exists (at the first module load)."""
    global _part
    with _part_lock:
        if _part is not None:
            return _part
        lib = _lib_obj
        lib.check(lib.tidal_init(0), "tidal_init")
        p = ctypes.c_void_p()
        name, _, smset = _part_name.partition(":")
        if smset:
            st = lib.tidal_partition_find(name.encode(), ctypes.byref(p))
            if st == _lib_mod.ERR_NOT_FOUND:
                lib.check(lib.tidal_partition_create(name.encode(), smset.encode(), ctypes.byref(p)),
                          "partition %s" % _part_name)
            else:
                lib.check(st, "partition %s" % name)
        else:
            lib.check(lib.tidal_partition_find(name.encode(), ctypes.byref(p)),
                      "partition %s (create it with tidalctl, or pass NAME:SMSET)" % name)
        _part = p
        return _part


def _inductor_config():
    """torch._inductor.config, or None without PyTorch / Inductor; TidalError when importing
    it fails otherwise."""
    try:
        import torch._inductor.config as inductor_config
    except ImportError:
        return None
    except Exception as e:
        raise TidalError("importing torch._inductor.config failed (%s: %s)" % (type(e).__name__, e)) from None
    return inductor_config


def enable(partition, libtidal=None, ptxas=None):
    """Route Triton's kernels through tidal onto `partition` (see the module doc). Raises
    TidalError and leaves everything as it was when something is missing."""
    global _lib, _lib_obj, _part_name, _part
    with _enable_lock:
        if _lib_obj is not None:
            raise TidalError("tidal.triton.enable() was already called (partition %s)" % _part_name)
        if not isinstance(partition, str) or not _PARTITION_RE.match(partition):
            raise TidalError("enable(partition=%r): want NAME (a tidald partition) or NAME:SMSET, NAME 1-31 "
                             "of [A-Za-z0-9_.-], SMSET like 0-65 or all" % (partition,))
        # the steps that can fail first, each undone when a later one fails; then the
        # environment, which cannot
        ptxas_path = _lib_mod.find_ptxas(ptxas)
        lib = _load_lib(libtidal, ptxas_path)
        # set before the hook is in place: it resolves the partition from them
        _part_name, _part, _lib_obj, _lib = partition, None, lib, lib.dll
        try:
            undo_hook = _lib_mod.install_triton_hook(lib, resolver=_ensure_partition)
            try:
                inductor_config = _inductor_config()
            except BaseException:
                undo_hook()
                raise
        except BaseException:
            _part_name, _part, _lib_obj, _lib = None, None, None, None
            raise
        os.environ["TRITON_PTXAS_PATH"] = ptxas_path
        # Without the preload nothing launches the clones: Triton launches the original entry,
        # which obeys the partition only with the case-b check that tidal-ptxas leaves out by
        # default (it costs every launch ~0.2 us). With the preload libtidal launches a clone
        # wherever a mask must be obeyed, and originals stay verbatim.
        if _lib_mod.find_preloaded() is None:
            os.environ["TIDAL_CASE_B"] = "1"
        # torch.compile (PyTorch >= 2.8) loads and launches Triton cubins with its own "static
        # CUDA launcher", which never calls Triton's load_binary: turn it off so that every
        # module goes through the hook above.
        os.environ["TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER"] = "0"
        if inductor_config is not None and hasattr(inductor_config, "use_static_cuda_launcher"):
            inductor_config.use_static_cuda_launcher = False


def stats():
    """{'attached': modules attached, 'not_rewritten': modules without the rewrite}"""
    c = _lib_mod.triton_hook_counts()
    return {"attached": c["attached"], "not_rewritten": c["not_rewritten"]}
