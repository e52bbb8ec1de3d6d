"""libtidal through ctypes: loading, prototypes, errors, the Triton load hook (private).

tidal.triton and tidal.torch share this module; users never see ctypes. Three things live
here:

* Lib: one loaded libtidal with the prototypes of runtime/tidal.h bound. Entry points the
  library lacks (an older build) raise TidalError when called, naming the function.
* Finding the library: the copy preloaded into the process (LD_PRELOAD=libtidal-preload.so,
  as tidal-run sets it; found through the global symbol scope, ctypes.CDLL(None)), else
  (tidal.triton only) libtidal.so as tidal._locate finds it (TIDAL_LIB, next to tidal-ptxas,
  the install prefix or build tree). launches_interposed() tells whether cuLaunchKernel in
  this process is libtidal's.
* The Triton hook: Triton's load_binary wrapped so that every module Triton loads goes
  through tidal_module_attach (its functions loaded eagerly, its __tidal_ctl pointed at a
  partition) and is counted as rewritten or not.
"""
import ctypes
import os
import sys
import threading

from ._errors import TidalError
from . import _locate

__all__ = ["TidalError", "Lib", "SmSet", "Stats", "find_preloaded", "load_path", "launches_interposed",
           "find_ptxas", "is_tidal_ptxas", "install_triton_hook", "triton_hook_counts", "smset_bits_to_list"]


# runtime/tidal.h status codes (names used when the library itself is not loaded)
OK = 0
ERR_INVALID = -1
ERR_PARSE = -2
ERR_NOT_INIT = -3
ERR_NO_DRIVER = -4
ERR_CUDA = -5
ERR_NO_MEMORY = -6
ERR_EXISTS = -7
ERR_NOT_FOUND = -8
ERR_NOT_REWRITTEN = -9
ERR_BUSY = -10
ERR_SMS = -11
ERR_DAEMON = -12
ERR_MPS = -13
ERR_UNSUPPORTED = -14

PLACE_HYBRID = 0
PLACE_PERSISTENT = 1
PLACE_ORIGINAL = 2
PLACEMENTS = {"hybrid": PLACE_HYBRID, "persistent": PLACE_PERSISTENT, "original": PLACE_ORIGINAL}

SMSET_WORDS = 4
MAX_SMS = 64 * SMSET_WORDS

# abi/tidal_l2.h: the copy a bimodal tensor's kernels read
BIMODAL_ALL = 0
BIMODAL_SIDE = 1
BIMODAL_MODES = {"all": BIMODAL_ALL, "side": BIMODAL_SIDE}


class SmSet(ctypes.Structure):
    """struct tidal_smset: bit s of bits[s / 64] is SM s."""
    _fields_ = [("bits", ctypes.c_uint64 * SMSET_WORDS)]


_U64 = ctypes.c_uint64
STATS_COUNTERS = ("launches_rewritten", "launches_original", "launches_unknown", "launches_refused",
                  "launches_unmasked", "joins", "launches_graph_probe", "launches_smem_full", "launches_cluster_routed",
                  "violations")


class Stats(ctypes.Structure):
    """struct tidal_stats (runtime/tidal.h), in its field order."""
    _fields_ = [(n, _U64) for n in STATS_COUNTERS] + [("sm_blocks", _U64 * MAX_SMS)]


class Scaling(ctypes.Structure):
    """struct tidal_scaling (runtime/tidal_policy.h): latency(n) = a_us / n + b_us."""
    _fields_ = [("a_us", ctypes.c_double), ("b_us", ctypes.c_double)]


_NOW_FN = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)
_APPLY_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(SmSet))


class PolicyConfig(ctypes.Structure):
    """struct tidal_policy_config (runtime/tidal_policy.h), in its field order."""
    _fields_ = [("kind", ctypes.c_int), ("sms", ctypes.c_uint), ("grain", ctypes.c_uint),
                ("knee_slack", ctypes.c_double), ("window_us", ctypes.c_uint64), ("idle_us", ctypes.c_uint64),
                ("slo_high", ctypes.c_double), ("slo_low", ctypes.c_double), ("tune_step", ctypes.c_uint),
                ("tune_every", ctypes.c_uint), ("batch_frac", ctypes.c_double), ("online_min", ctypes.c_uint),
                ("now_us", _NOW_FN), ("apply", _APPLY_FN), ("ctx", ctypes.c_void_p), ("trace_path", ctypes.c_char_p),
                ("state_path", ctypes.c_char_p), ("state_every_ms", ctypes.c_uint), ("ls_first", SmSet)]


class ServiceConfig(ctypes.Structure):
    """struct tidal_service_config (runtime/tidal_policy.h), in its field order."""
    _fields_ = [("name", ctypes.c_char_p), ("cls", ctypes.c_int), ("part", ctypes.c_void_p),
                ("slo_us", ctypes.c_double), ("profile", ctypes.POINTER(Scaling)), ("min_sms", ctypes.c_uint),
                ("max_sms", ctypes.c_uint), ("max_batch", ctypes.c_uint), ("max_queue_us", ctypes.c_uint64),
                ("demand_sms", ctypes.c_uint)]


_SERVER_NOW_FN = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)
_SERVER_SLEEP_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64)

SERVER_WAITS = {"default": 0, "spin": 1, "yield": 2, "block": 3}


class ServerConfig(ctypes.Structure):
    """struct tidal_server_config (runtime/tidal_server.h), in its field order."""
    _fields_ = [("spin_us", ctypes.c_uint), ("tick_us", ctypes.c_uint), ("now_ns", _SERVER_NOW_FN),
                ("sleep_ns", _SERVER_SLEEP_FN), ("ctx", ctypes.c_void_p)]


class ServerShare(ctypes.Structure):
    """struct tidal_server_share (runtime/tidal_server.h), in its field order."""
    _fields_ = [("mask", SmSet), ("graph", ctypes.c_void_p), ("graphs", ctypes.POINTER(ctypes.c_void_p))]


class ServerInstance(ctypes.Structure):
    """struct tidal_server_instance (runtime/tidal_server.h), in its field order."""
    _fields_ = [("stream", ctypes.c_void_p), ("graph", ctypes.c_void_p), ("graphs", ctypes.POINTER(ctypes.c_void_p)),
                ("shares", ctypes.POINTER(ServerShare)), ("nshares", ctypes.c_uint)]


class ServerService(ctypes.Structure):
    """struct tidal_server_service (runtime/tidal_server.h), in its field order."""
    _fields_ = [("name", ctypes.c_char_p), ("cls", ctypes.c_int), ("policy_id", ctypes.c_int),
                ("max_batch", ctypes.c_uint), ("wait", ctypes.c_int),
                ("instances", ctypes.POINTER(ServerInstance)), ("ninstances", ctypes.c_uint)]


class ServerRecord(ctypes.Structure):
    """struct tidal_server_record (runtime/tidal_server.h), in its field order."""
    _fields_ = [("service", ctypes.c_int), ("instance", ctypes.c_uint), ("batch", ctypes.c_uint),
                ("sms", ctypes.c_uint), ("share", ctypes.c_uint), ("request", _U64), ("arrival_ns", _U64), ("queued_ns", _U64),
                ("start_ns", _U64), ("end_ns", _U64)]


class ServerCounts(ctypes.Structure):
    """struct tidal_server_counts (runtime/tidal_server.h), in its field order."""
    _fields_ = [("dispatched", _U64), ("requests", _U64), ("batches", _U64)]


_vp = ctypes.c_void_p
_P = ctypes.POINTER
# name: (restype, argtypes), as declared in runtime/tidal.h
PROTOTYPES = {
    "tidal_init": (ctypes.c_int, [ctypes.c_uint]),
    "tidal_shutdown": (ctypes.c_int, []),
    "tidal_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "tidal_last_error": (ctypes.c_char_p, []),
    "tidal_device_sms": (ctypes.c_int, [_P(ctypes.c_uint)]),
    "tidal_l2_sides": (ctypes.c_int, [_P(SmSet), _P(SmSet)]),
    "tidal_smset_parse": (ctypes.c_int, [ctypes.c_char_p, _P(SmSet), _P(ctypes.c_int), _P(ctypes.c_size_t)]),
    "tidal_smset_format": (ctypes.c_size_t, [_P(SmSet), ctypes.c_char_p, ctypes.c_size_t]),
    "tidal_smset_count": (ctypes.c_uint, [_P(SmSet)]),
    "tidal_partition_create": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, _P(_vp)]),
    "tidal_partition_find": (ctypes.c_int, [ctypes.c_char_p, _P(_vp)]),
    "tidal_partition_set": (ctypes.c_int, [_vp, ctypes.c_char_p]),
    "tidal_partition_set_mask": (ctypes.c_int, [_vp, _P(SmSet)]),
    "tidal_partition_get_mask": (ctypes.c_int, [_vp, _P(SmSet)]),
    "tidal_partition_name": (ctypes.c_char_p, [_vp]),
    "tidal_partition_destroy": (ctypes.c_int, [_vp]),
    "tidal_stream_bind": (ctypes.c_int, [_vp, _vp]),
    "tidal_set_default_partition": (ctypes.c_int, [_vp]),
    "tidal_partition_stream": (ctypes.c_int, [_vp, ctypes.c_int, _P(_vp)]),
    "tidal_partition_placed": (ctypes.c_int, [_vp]),
    "tidal_partition_set_placement": (ctypes.c_int, [_vp, ctypes.c_int, ctypes.c_uint]),
    "tidal_module_attach": (ctypes.c_int, [_vp, _vp]),
    "tidal_stats_get": (ctypes.c_int, [_vp, _P(Stats)]),
    "tidal_stats_reset": (ctypes.c_int, [_vp]),
}
# runtime/tidal_policy.h: bound as well, but not required (tidal.torch runs without them; a
# call of one the library lacks raises)
POLICY_PROTOTYPES = {
    "tidal_scaling_fit": (ctypes.c_int, [_P(ctypes.c_uint), _P(ctypes.c_double), ctypes.c_size_t, _P(Scaling),
                                         _P(ctypes.c_double)]),
    "tidal_scaling_latency": (ctypes.c_double, [_P(Scaling), ctypes.c_uint]),
    "tidal_scaling_knee": (ctypes.c_uint, [_P(Scaling), ctypes.c_uint, ctypes.c_uint, ctypes.c_double]),
    "tidal_policy_create": (ctypes.c_int, [_P(PolicyConfig), _P(_vp)]),
    "tidal_policy_add_service": (ctypes.c_int, [_vp, _P(ServiceConfig), _P(ctypes.c_int)]),
    "tidal_policy_request_begin": (ctypes.c_int, [_vp, ctypes.c_int, ctypes.c_uint]),
    "tidal_policy_request_end": (ctypes.c_int, [_vp, ctypes.c_int, ctypes.c_double, ctypes.c_uint]),
    "tidal_policy_tick": (ctypes.c_int, [_vp]),
    "tidal_policy_batch": (ctypes.c_int, [_vp, ctypes.c_int, ctypes.c_double, ctypes.c_uint, _P(ctypes.c_uint),
                                          _P(ctypes.c_uint64)]),
    "tidal_policy_batch_profile": (ctypes.c_int, [_vp, ctypes.c_int, ctypes.c_uint, ctypes.c_double]),
    "tidal_policy_share": (ctypes.c_int, [_vp, ctypes.c_int, _P(SmSet), _P(ctypes.c_uint)]),
    "tidal_policy_model": (ctypes.c_int, [_vp, ctypes.c_int, _P(Scaling), _P(ctypes.c_int)]),
    "tidal_policy_state": (ctypes.c_int, [_vp, ctypes.c_char_p, ctypes.c_size_t]),
    "tidal_policy_destroy": (ctypes.c_int, [_vp]),
}

# runtime/tidal.h's bimodal tensors: bound as well, not required (a library without them
# still runs tidal.torch; a call of one it lacks raises)
BIMODAL_PROTOTYPES = {
    "tidal_bimodal_create": (ctypes.c_int, [ctypes.c_size_t, ctypes.c_uint, _P(_vp)]),
    "tidal_bimodal_write": (ctypes.c_int, [_vp, ctypes.c_size_t, _vp, ctypes.c_size_t]),
    "tidal_bimodal_set": (ctypes.c_int, [_vp, ctypes.c_uint]),
    "tidal_bimodal_desc_addr": (ctypes.c_int, [_vp, _P(ctypes.c_uint64)]),
    "tidal_bimodal_destroy": (ctypes.c_int, [_vp]),
}

# runtime/tidal_server.h: optional too (tidal.serve's engine="c")
SERVER_PROTOTYPES = {
    "tidal_server_create": (ctypes.c_int, [_vp, _P(ServerConfig), _P(_vp)]),
    "tidal_server_add_service": (ctypes.c_int, [_vp, _P(ServerService), _P(ctypes.c_int)]),
    "tidal_server_arrivals": (ctypes.c_int, [_vp, ctypes.c_int, _P(ctypes.c_uint64), ctypes.c_size_t]),
    "tidal_server_instantiate": (ctypes.c_int, [_vp, _vp, _P(_vp)]),
    "tidal_server_run": (ctypes.c_int, [_vp, ctypes.c_uint64]),
    "tidal_server_records": (ctypes.c_int, [_vp, _P(_P(ServerRecord)), _P(ctypes.c_size_t)]),
    "tidal_server_counts_get": (ctypes.c_int, [_vp, ctypes.c_int, _P(ServerCounts)]),
    "tidal_server_destroy": (ctypes.c_int, [_vp]),
}

_ERR_NAMES = {OK: "TIDAL_OK", ERR_INVALID: "TIDAL_ERR_INVALID", ERR_PARSE: "TIDAL_ERR_PARSE",
              ERR_NOT_INIT: "TIDAL_ERR_NOT_INIT", ERR_NO_DRIVER: "TIDAL_ERR_NO_DRIVER", ERR_CUDA: "TIDAL_ERR_CUDA",
              ERR_NO_MEMORY: "TIDAL_ERR_NO_MEMORY", ERR_EXISTS: "TIDAL_ERR_EXISTS",
              ERR_NOT_FOUND: "TIDAL_ERR_NOT_FOUND", ERR_NOT_REWRITTEN: "TIDAL_ERR_NOT_REWRITTEN",
              ERR_BUSY: "TIDAL_ERR_BUSY", ERR_SMS: "TIDAL_ERR_SMS", ERR_DAEMON: "TIDAL_ERR_DAEMON",
              ERR_MPS: "TIDAL_ERR_MPS", ERR_UNSUPPORTED: "TIDAL_ERR_UNSUPPORTED"}


class _Missing:
    """Stands in for an entry point the loaded library does not export."""

    def __init__(self, name, path):
        self.name, self.path = name, path

    def __call__(self, *args):
        raise TidalError("%s does not export %s (runtime/tidal.h): it is older than this python/tidal; "
                         "rebuild it (make build)" % (self.path, self.name))


class Lib:
    """One libtidal, its prototypes bound. Attributes are the tidal_* functions.

    The function objects are this object's own (CDLL[name] makes a fresh one), so code that
    changes argtypes on the raw handle (.dll) does not change them here."""

    def __init__(self, dll, path, preloaded):
        self.dll = dll
        self.path = path
        self.preloaded = preloaded
        self.missing = []
        for name, (res, args) in (list(PROTOTYPES.items()) + list(POLICY_PROTOTYPES.items()) +
                                  list(BIMODAL_PROTOTYPES.items()) + list(SERVER_PROTOTYPES.items())):
            try:
                f = dll[name]
            except AttributeError:
                if name in PROTOTYPES:
                    self.missing.append(name)
                setattr(self, name, _Missing(name, path))
                continue
            f.restype = res
            f.argtypes = args
            setattr(self, name, f)

    def strerror(self, st):
        try:
            s = self.tidal_strerror(st)
            return s.decode() if s else _ERR_NAMES.get(st, str(st))
        except TidalError:
            return _ERR_NAMES.get(st, str(st))

    def last_error(self):
        try:
            s = self.tidal_last_error()
            return s.decode(errors="replace") if s else ""
        except TidalError:
            return ""

    def error(self, st, what):
        """TidalError for status st (read on the thread that got st: the detail is per thread)."""
        detail = self.last_error()
        return TidalError("%s: %s (%s)" % (what, detail or "failed", self.strerror(st)))

    def check(self, st, what):
        if st != OK:
            raise self.error(st, what)
        return st

    def format_mask(self, mask):
        buf = ctypes.create_string_buffer(1024)
        n = self.tidal_smset_format(ctypes.byref(mask), buf, len(buf))
        if n >= len(buf):
            buf = ctypes.create_string_buffer(n + 1)
            self.tidal_smset_format(ctypes.byref(mask), buf, len(buf))
        return buf.value.decode()


def smset_bits_to_list(mask):
    """SM ids of a SmSet, ascending."""
    return [s for s in range(MAX_SMS) if (mask.bits[s // 64] >> (s % 64)) & 1]


def smset_text(smset):
    """An SM set as libtidal's text: a string as is ("0-65", "all"), or SM ids."""
    if isinstance(smset, str):
        return smset
    try:
        ids = sorted(int(x) for x in smset)
    except (TypeError, ValueError):
        raise TidalError("SM set %r: want a string like '0-65' or a list of SM ids" % (smset,)) from None
    return ",".join(str(i) for i in ids) if ids else "none"


# ------------------------------------------------------------------ where symbols come from

class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _dladdr_fn():
    for name in (None, "libdl.so.2"):
        try:
            f = ctypes.CDLL(name).dladdr
        except (OSError, AttributeError):
            continue
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        return f
    return None


def symbol_file(fn):
    """Path of the shared object that defines the ctypes function fn (dladdr), or None."""
    dladdr = _dladdr_fn()
    if dladdr is None:
        return None
    info = _DlInfo()
    addr = ctypes.cast(fn, ctypes.c_void_p).value
    if not addr or not dladdr(addr, ctypes.byref(info)) or not info.dli_fname:
        return None
    return os.path.realpath(info.dli_fname.decode(errors="replace"))


def _global_scope():
    return ctypes.CDLL(None)


_loaded = {}   # realpath -> Lib, for the libraries load_path() dlopen'ed


def find_preloaded():
    """The libtidal already in the process's global symbol scope (preloaded, or linked in),
    as a Lib; None when there is none. A library load_path() loaded (RTLD_GLOBAL, so it is in
    that scope too) does not count: it was not preloaded."""
    g = _global_scope()
    try:
        init = g.tidal_init
    except AttributeError:
        return None
    path = symbol_file(init) or "<the process's global scope>"
    if path in _loaded:
        return None
    return Lib(g, path, preloaded=True)


def load_path(path):
    """dlopen libtidal at path (RTLD_GLOBAL) as a Lib (the same Lib for the same file)."""
    real = os.path.realpath(path)
    if real in _loaded:
        return _loaded[real]
    try:
        dll = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise TidalError("cannot load %s: %s" % (path, e)) from None
    lib = Lib(dll, real, preloaded=False)
    _loaded[real] = lib
    return lib


def launches_interposed(lib):
    """(True, path) when cuLaunchKernel, as the process's global scope resolves it, is
    libtidal's (the preload's hook); else (False, what it resolves to)."""
    g = _global_scope()
    try:
        f = g.cuLaunchKernel
    except AttributeError:
        return False, "no cuLaunchKernel in the global symbol scope"
    where = symbol_file(f)
    if where is None:
        return False, "cuLaunchKernel of unknown origin (dladdr failed)"
    return (lib is not None and where == lib.path), where


# ------------------------------------------------------------------ tidal-ptxas

def find_ptxas(explicit=None, lib_path=None):
    """tidal-ptxas: explicit (ptxas=), else $TIDAL_PTXAS, else ../bin next to the libtidal at
    lib_path (the preloaded one), else TIDAL_BUILD / the install prefix / the build tree
    (tidal._locate). An explicit path or $TIDAL_PTXAS that is not an executable file raises,
    as does finding none (TidalError naming what was searched)."""
    near = []
    if lib_path and os.path.isabs(lib_path):
        near.append(("next to the libtidal in use, %s" % lib_path,
                     os.path.join(os.path.dirname(lib_path), "..", "bin")))
    return _locate.locate("ptxas", explicit=explicit, explicit_name="ptxas=", near=near)


def is_tidal_ptxas(path):
    """Whether path names tidal-ptxas (by its name or the name of what it links to)."""
    if not path:
        return False
    names = {os.path.basename(path), os.path.basename(os.path.realpath(path))}
    return any(n.startswith("tidal-ptxas") for n in names)


_ptxas_checked = {}


def ptxas_version(path):
    """(ok, text): whether `path --version` runs and names a release, as Triton requires
    (Triton silently falls back to its bundled ptxas when it does not)."""
    if path in _ptxas_checked:
        return _ptxas_checked[path]
    import subprocess
    try:
        r = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
        text = (r.stdout + r.stderr).strip()
        ok = r.returncode == 0 and "release" in text
        line = [ln for ln in text.splitlines() if "release" in ln]
        res = (ok, line[-1] if (ok and line) else "exit %d: %s" % (r.returncode, text[-300:]))
    except (OSError, subprocess.SubprocessError) as e:
        res = (False, str(e))
    _ptxas_checked[path] = res
    return res


# ------------------------------------------------------------------ Triton's load_binary

class _Hook:
    def __init__(self):
        self.lock = threading.RLock()
        self.installed = False
        self.lib = None
        self.resolver = None      # () -> partition handle (c_void_p) or None (the default)
        self.attached = 0
        self.not_rewritten = 0
        self.not_rewritten_names = []
        self.on_not_rewritten = None   # callback(name) (warn / raise)


_hook = _Hook()


def triton_hook_counts():
    with _hook.lock:
        return {"attached": _hook.attached, "not_rewritten": _hook.not_rewritten,
                "not_rewritten_names": list(_hook.not_rewritten_names[:20])}


def triton_utils():
    """Triton's driver.active.utils (what holds load_binary); TidalError when Triton is not
    importable or has no driver it can use (no GPU, no libcuda, no PyTorch with CUDA)."""
    try:
        from triton.runtime import driver
    except ImportError as e:
        raise TidalError("triton is not importable (%s): install triton" % e) from None
    try:
        return driver.active.utils
    except Exception as e:   # Triton raises RuntimeError("0 active drivers ...") and others
        raise TidalError("Triton has no GPU driver it can use (triton.runtime.driver.active: %s: %s): "
                         "Triton needs a GPU and its driver here (for NVIDIA: the GPU, libcuda.so.1, "
                         "and PyTorch with CUDA, which Triton's CUDA backend detects the GPU with)"
                         % (type(e).__name__, e)) from None


def install_triton_hook(lib, resolver=None, on_not_rewritten=None, utils=None):
    """Wrap Triton's load_binary once (idempotent): each module it loads is passed to
    tidal_module_attach(module, resolver() or NULL). A later call may set the resolver (a
    partition for modules loaded from then on) and the not-rewritten callback.

    Returns undo(): it puts back the lib, resolver and callback from before this call, and
    unwraps load_binary if this call wrapped it (for callers that fail after it). Nothing is
    changed when it raises (TidalError: no Triton, or no Triton driver)."""
    with _hook.lock:
        if not _hook.installed:
            if utils is None:
                utils = triton_utils()
            try:
                orig = utils.load_binary
            except AttributeError:
                raise TidalError("Triton's driver utils (%r) have no load_binary: this Triton is not one "
                                 "tidal supports (triton 3.x)" % (utils,)) from None
        prev = (_hook.lib, _hook.resolver, _hook.on_not_rewritten)
        wrapped_now = not _hook.installed
        own = wrapped_now and "load_binary" in getattr(utils, "__dict__", {})

        def undo():
            with _hook.lock:
                _hook.lib, _hook.resolver, _hook.on_not_rewritten = prev
                if wrapped_now and _hook.installed:
                    if own:
                        utils.load_binary = orig
                    else:
                        del utils.load_binary   # the class's method shows through again
                    _hook.installed = False

        _hook.lib = lib
        if resolver is not None:
            _hook.resolver = resolver
        if on_not_rewritten is not None:
            _hook.on_not_rewritten = on_not_rewritten
        if not wrapped_now:
            return undo

        def load_binary(*args, **kwargs):
            res = orig(*args, **kwargs)
            name = args[0] if args else kwargs.get("name", "module")
            with _hook.lock:
                lib_, resolve, cb = _hook.lib, _hook.resolver, _hook.on_not_rewritten
                part = resolve() if resolve is not None else None
                if part is None:
                    # attach needs an initialized runtime; Triton made its context current
                    lib_.check(lib_.tidal_init(0), "tidal_init")
                st = lib_.tidal_module_attach(ctypes.c_void_p(res[0]), part)
                if st == ERR_NOT_REWRITTEN:
                    _hook.not_rewritten += 1
                    if len(_hook.not_rewritten_names) < 1000:
                        _hook.not_rewritten_names.append(str(name))
                else:
                    lib_.check(st, "attaching Triton module %s" % name)
                    _hook.attached += 1
            if st == ERR_NOT_REWRITTEN and cb is not None:
                cb(str(name))
            return res

        load_binary._tidal_hook = True
        utils.load_binary = load_binary
        _hook.installed = True
        return undo


def warn(msg):
    sys.stderr.write("tidal: %s\n" % msg)
    sys.stderr.flush()
