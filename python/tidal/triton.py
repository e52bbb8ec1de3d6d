"""Run Triton / torch.compile kernels on a tidal partition.

    import tidal.triton
    tidal.triton.enable(partition="be")      # a tidald partition, or "be:48-131" (local)

What enable() does:
  1. points TRITON_PTXAS_PATH at tidal-ptxas, so every kernel Triton compiles from now on
     carries the tidal rewrite (already-cached kernels do not: set TRITON_ALWAYS_COMPILE=1
     or clear the Triton cache);
  2. loads libtidal.so and wraps Triton's load_binary, so every module Triton loads is
     attached to the partition (and turns off torch.compile's static CUDA launcher, which
     bypasses load_binary) (eagerly loaded, its __tidal_ctl set). Triton's own launcher
     then runs the rewritten kernels unchanged, on the partition's SMs (launch case b).
     For reshaped persistent launches (case c) run the process under
     LD_PRELOAD=libtidal-preload.so instead; enable() works with it too.

Paths: libtidal.so from `libtidal=`, $TIDAL_LIB, or ../lib next to the tidal-ptxas found;
tidal-ptxas from `ptxas=`, $TIDAL_PTXAS, or `tidal-ptxas` on PATH. Errors raise
TidalError with libtidal's message; nothing falls back silently.
"""
import ctypes
import os
import shutil

__all__ = ["enable", "stats", "TidalError"]


class TidalError(RuntimeError):
    pass


_lib = None
_part = None
_part_name = None
_attached = 0
_refused = 0


def _find_ptxas(ptxas):
    p = ptxas or os.environ.get("TIDAL_PTXAS") or shutil.which("tidal-ptxas")
    if not p or not os.access(p, os.X_OK):
        raise TidalError("tidal-ptxas not found: pass ptxas=, set TIDAL_PTXAS or put it on PATH")
    return os.path.abspath(p)


def _find_lib(libtidal, ptxas):
    cands = [libtidal, os.environ.get("TIDAL_LIB")]
    if ptxas:
        cands.append(os.path.join(os.path.dirname(ptxas), "..", "lib", "libtidal.so"))
    for c in cands:
        if c and os.path.exists(c):
            return os.path.abspath(c)
    raise TidalError("libtidal.so not found: pass libtidal=, or set TIDAL_LIB (tried %s)"
                     % ", ".join(str(c) for c in cands if c))


def _check(st, what):
    if st != 0:
        msg = _lib.tidal_last_error().decode()
        name = _lib.tidal_strerror(st).decode()
        raise TidalError("%s: %s (%s)" % (what, msg, name))


def _load(path):
    lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    lib.tidal_last_error.restype = ctypes.c_char_p
    lib.tidal_strerror.restype = ctypes.c_char_p
    lib.tidal_strerror.argtypes = [ctypes.c_int]
    lib.tidal_init.argtypes = [ctypes.c_uint]
    lib.tidal_partition_find.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.tidal_partition_create.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.tidal_module_attach.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    return lib


def _ensure_partition():
    """Resolve the partition once a CUDA context exists (at the first module load)."""
    global _part
    if _part is not None:
        return _part
    st = _lib.tidal_init(0)
    _check(st, "tidal_init")
    p = ctypes.c_void_p()
    name, _, smset = _part_name.partition(":")
    if smset:
        st = _lib.tidal_partition_find(name.encode(), ctypes.byref(p))
        if st != 0:
            _check(_lib.tidal_partition_create(name.encode(), smset.encode(), ctypes.byref(p)),
                   "partition %s" % _part_name)
    else:
        _check(_lib.tidal_partition_find(name.encode(), ctypes.byref(p)),
               "partition %s (create it with tidalctl, or pass NAME:SMSET)" % name)
    _part = p
    return _part


def enable(partition, libtidal=None, ptxas=None):
    """Route Triton's kernels through tidal onto `partition` (see the module doc)."""
    global _lib, _part_name
    if _lib is not None:
        raise TidalError("tidal.triton.enable() was already called")
    ptxas_path = _find_ptxas(ptxas)
    os.environ["TRITON_PTXAS_PATH"] = ptxas_path
    _lib = _load(_find_lib(libtidal, ptxas_path))
    _part_name = partition

    from triton.runtime import driver
    utils = driver.active.utils
    orig = utils.load_binary

    def load_binary(*args, **kwargs):
        global _attached, _refused
        res = orig(*args, **kwargs)
        part = _ensure_partition()
        st = _lib.tidal_module_attach(ctypes.c_void_p(res[0]), part)
        if st == -9:   # TIDAL_ERR_NOT_REWRITTEN: compiled before enable() or refused whole
            _refused += 1
        else:
            _check(st, "attaching %s" % (args[0] if args else "module"))
            _attached += 1
        return res

    utils.load_binary = load_binary

    # torch.compile (PyTorch >= 2.8) loads and launches Triton cubins with its own "static
    # CUDA launcher", which never calls Triton's load_binary: turn it off so that every
    # module goes through the hook above.
    try:
        import torch._inductor.config as inductor_config
        if hasattr(inductor_config, "use_static_cuda_launcher"):
            inductor_config.use_static_cuda_launcher = False
    except ImportError:
        pass


def stats():
    """{'attached': modules attached, 'not_rewritten': modules without the rewrite}"""
    return {"attached": _attached, "not_rewritten": _refused}
