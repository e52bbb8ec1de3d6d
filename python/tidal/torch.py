"""PyTorch streams on tidal partitions.

    import tidal.torch as tt
    ls = tt.Partition("ls", "0-65")          # create; tt.Partition("ls") finds an existing one
    be = tt.Partition("be", "66-131")
    s = ls.stream(priority=-1)               # a torch.cuda.ExternalStream on ls's SMs
    with torch.cuda.stream(s):
        y = model(x)                         # eager, or CUDA-graph capture / replay on s
    be.set("0-131")                          # live; be.mask == "0-131"
    be.placement = "persistent"              # "hybrid" (default) / "persistent" / "original"
    be.short_us = 20                         # hybrid: kernels shorter than this run as originals
    tt.stats(be)                             # dict of libtidal's counters

Run the process under the launcher: `scripts/tidal-run python3 app.py` (or build/bin/tidal-run).
It preloads libtidal-preload.so, which interposes every cuLaunchKernel* of the process
(PyTorch's, cuBLAS's, Triton's), and points TRITON_PTXAS_PATH at tidal-ptxas so that every
Triton / torch.compile kernel carries the tidal rewrite.

What a partition stream does (docs/runtime.md): it is a CUDA stream made by
tidal_partition_stream. When the partition's SM set is a union of the device's 2-SM
green-context groups (e.g. "0-65", "66-131", "all"; `Partition.placed` says so) the stream
lives in a green context of those SMs, and every kernel launched on it, rewritten or not
(cuBLAS, cuDNN, aten), runs there; rewritten kernels additionally follow the live mask (as
persistent clones when long, per `placement`). Otherwise only the rewritten kernels are
confined (by their mask). Kernels captured into a CUDA graph on the stream keep this
placement when the graph is replayed.

Importing this module:
  * turns off torch.compile's static CUDA launcher (torch._inductor.config
    .use_static_cuda_launcher and TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER=0): it loads and
    launches cubins itself, bypassing Triton's load_binary;
  * turns off the bundling of Triton cubins into Inductor's FX-graph cache
    (bundle_triton_into_fx_graph_cache, TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0):
    a graph compiled without tidal would unpack its cubins into Triton's cache under the
    keys tidal-ptxas's compiles have (tidal-ptxas reports ptxas's version), and load
    kernels without the rewrite;
  * sets TRITON_PTXAS_PATH to tidal-ptxas when it is unset and one is found ($TIDAL_PTXAS,
    ../bin next to the preloaded library, $TIDAL_BUILD, the install prefix or build tree this
    package came from; python/README.md "How the libraries are found");
  * wraps Triton's load_binary (when Triton is importable) so that every Triton module is
    checked for the rewrite; tt.stats() reports modules with and without it, and one
    without it prints a warning (TIDAL_TORCH_STRICT=1: raises instead).
Nothing falls back silently: Partition() raises TidalError when the process is not under
the preload, when Triton would compile without tidal-ptxas, or when the static launcher was
turned back on. `tidal-run --no-rewrite` (TIDAL_NO_REWRITE=1) is the explicit way to run
without the rewrite (placement by green contexts only).
"""
import ctypes
import os
import threading

import torch

from . import _lib
from . import _locate
from ._lib import TidalError, PLACEMENTS

__all__ = ["Partition", "Bimodal", "TidalError", "stats", "reset_stats", "info", "init", "device_sms", "l2_sides",
           "PLACEMENTS"]

_PLACEMENT_NAMES = {v: k for k, v in PLACEMENTS.items()}
_lock = threading.RLock()
_rt = None          # the _lib.Lib once init() succeeded
_import_notes = []  # what the import did / could not do (info())


def _env_flag(name):
    v = os.environ.get(name, "")
    return bool(v) and v != "0"


def _no_rewrite():
    return _env_flag("TIDAL_NO_REWRITE")


# ------------------------------------------------------------------ import-time setup

def _disable_static_launcher():
    os.environ["TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER"] = "0"
    try:
        import torch._inductor.config as ic
    except ImportError as e:   # a torch without Inductor: nothing launches cubins itself
        _import_notes.append("torch._inductor not importable (%s)" % e)
        return
    if hasattr(ic, "use_static_cuda_launcher"):
        ic.use_static_cuda_launcher = False
    os.environ["TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE"] = "0"
    if hasattr(ic, "bundle_triton_into_fx_graph_cache"):
        ic.bundle_triton_into_fx_graph_cache = False


def _static_launcher_on():
    try:
        import torch._inductor.config as ic
    except ImportError:
        return False
    return bool(getattr(ic, "use_static_cuda_launcher", False))


def _setup_ptxas(lib_path):
    if _no_rewrite():
        return
    cur = os.environ.get("TRITON_PTXAS_PATH")
    if cur:
        return
    try:
        p = _lib.find_ptxas(None, lib_path)
    except TidalError as e:   # Partition() raises it (_problems)
        _import_notes.append("TRITON_PTXAS_PATH not set: %s" % e)
        return
    os.environ["TRITON_PTXAS_PATH"] = p
    _import_notes.append("TRITON_PTXAS_PATH set to %s" % p)


def _on_not_rewritten(name):
    if _no_rewrite():
        return
    if _env_flag("TIDAL_TORCH_STRICT"):
        raise TidalError("Triton module %s carries no tidal rewrite (TIDAL_TORCH_STRICT=1)" % name)
    with _lock:
        first = not _on_not_rewritten.warned
        _on_not_rewritten.warned = True
    if first:
        _lib.warn("Triton module %s carries no tidal rewrite: it was compiled without tidal-ptxas "
                  "(before TRITON_PTXAS_PATH pointed at it, or taken from a Triton/Inductor cache "
                  "shared with unmodified runs: use separate TRITON_CACHE_DIR and "
                  "TORCHINDUCTOR_CACHE_DIR). Its kernels are not masked; tt.stats() counts such "
                  "modules (further ones are not reported here)" % name)


_on_not_rewritten.warned = False


def _install_hook(lib):
    """Install the Triton load hook; returns its undo (a no-op without Triton). TidalError
    when Triton is importable but has no driver."""
    try:
        import triton  # noqa: F401
    except ImportError:
        _import_notes.append("triton not importable: no Triton module checks")
        return lambda: None
    return _lib.install_triton_hook(lib, on_not_rewritten=_on_not_rewritten)


def _setup_at_import():
    _disable_static_launcher()
    lib = _lib.find_preloaded()
    _setup_ptxas(lib.path if lib is not None else None)
    if lib is not None:
        try:
            _install_hook(lib)
        except TidalError as e:  # no usable Triton driver yet: init() tries again and raises
            _import_notes.append("Triton load hook not installed at import: %s" % e)


_setup_at_import()


# ------------------------------------------------------------------ the runtime

def _problems(lib):
    """Why tidal.torch cannot run in this process (a list of sentences; empty: it can)."""
    out = []
    if lib is None:
        hint = ""
        if os.environ.get("TIDAL_LIB"):
            hint = (" (TIDAL_LIB=%s names a library, but loading it now cannot interpose the "
                    "launches PyTorch already resolved)" % os.environ["TIDAL_LIB"])
        if os.environ.get("TIDAL_RUN"):
            hint += " (TIDAL_RUN is set: was LD_PRELOAD dropped on the way, e.g. by a wrapper script?)"
        try:
            preload = "LD_PRELOAD=%s" % _locate.locate("preload")
        except TidalError as e:
            preload = "LD_PRELOAD=libtidal-preload.so; %s" % e
        out.append("libtidal is not preloaded in this process%s: run it under the launcher, "
                   "`tidal-run python3 ...` (it sets %s)" % (hint, preload))
        return out
    env_lib = os.environ.get("TIDAL_LIB")
    if (env_lib and "preload" in os.path.basename(env_lib) and os.path.exists(env_lib)
            and os.path.realpath(env_lib) != lib.path):
        out.append("TIDAL_LIB=%s, but the process has libtidal from %s preloaded" % (env_lib, lib.path))
    ok, where = _lib.launches_interposed(lib)
    if not ok:
        out.append("cuLaunchKernel in this process is %s, not libtidal's (%s): rewritten kernels "
                   "would run unmasked; run the process under `scripts/tidal-run`" % (where, lib.path))
    if not _no_rewrite():
        px = os.environ.get("TRITON_PTXAS_PATH")
        if not px:
            try:
                found = "%s was found now, but importing tidal.torch did not set it" % _lib.find_ptxas(None, lib.path)
            except TidalError as e:
                found = str(e)
            out.append("TRITON_PTXAS_PATH is not set (%s): Triton kernels would compile without the "
                       "rewrite; run under `tidal-run`, or `tidal-run --no-rewrite` to run without it"
                       % found)
        elif not _lib.is_tidal_ptxas(px):
            out.append("TRITON_PTXAS_PATH=%s is not tidal-ptxas: Triton kernels would compile "
                       "without the rewrite (use `tidal-run --no-rewrite` to mean that)" % px)
        elif not os.access(px, os.X_OK):
            out.append("TRITON_PTXAS_PATH=%s is not executable" % px)
        else:
            ok, text = _lib.ptxas_version(px)
            if not ok:
                out.append("`%s --version` fails (%s): Triton would fall back to its bundled ptxas, "
                           "without the rewrite; point tidal-ptxas at a real ptxas (TIDAL_REAL_PTXAS, "
                           "CUDA_HOME)" % (px, text))
    if _static_launcher_on():
        out.append("torch._inductor.config.use_static_cuda_launcher is on again: torch.compile's "
                   "static launcher loads cubins past Triton's load_binary; leave it off")
    if lib.missing:
        out.append("%s lacks %s: rebuild it (make build)" % (lib.path, ", ".join(lib.missing)))
    return out


def _cuda_context():
    """Make PyTorch's CUDA context (the device's primary one) current on this thread: libtidal
    adopts the context current at tidal_init."""
    if not torch.cuda.is_available():
        raise TidalError("torch.cuda is not available (no GPU, or a CPU-only PyTorch)")
    try:
        torch.cuda.init()
        dev = torch.cuda.current_device()
        torch.empty(1, device=torch.device("cuda", dev))   # the primary context exists and is current
    except Exception as e:
        raise TidalError("PyTorch could not make its CUDA context current (%s: %s)" % (type(e).__name__, e)) from None
    return dev


def init():
    """Check that tidal can run in this process and start libtidal (tidal_init). Idempotent;
    Partition() calls it. Raises TidalError naming what is missing."""
    global _rt
    with _lock:
        if _rt is not None:
            return _rt
        lib = _lib.find_preloaded()
        probs = _problems(lib)
        if probs:
            raise TidalError("tidal.torch cannot run here:\n  - " + "\n  - ".join(probs))
        _cuda_context()
        undo_hook = _install_hook(lib)
        try:
            lib.check(lib.tidal_init(0), "tidal_init")
        except BaseException:
            undo_hook()
            raise
        _rt = lib
        return lib


def device_sms():
    """SM count of the device (as kernels see %nsmid)."""
    lib = init()
    n = ctypes.c_uint()
    lib.check(lib.tidal_device_sms(ctypes.byref(n)), "tidal_device_sms")
    return n.value


def l2_sides():
    """The two halves of the L2 as SM sets ("0-1,8-13,...", "2-7,..."): the SMs that read
    through SM 0's half, then the others (tidal_l2_sides; measured once per process, a few
    ms). Partitions of one side each keep their L2 traffic apart, e.g.
        side0, side1 = tt.l2_sides()
        ls, be = tt.Partition("ls", side0), tt.Partition("be", side1)
    Raises TidalError when the device shows no two sides (TIDAL_ERR_UNSUPPORTED)."""
    lib = init()
    a, b = _lib.SmSet(), _lib.SmSet()
    lib.check(lib.tidal_l2_sides(ctypes.byref(a), ctypes.byref(b)), "tidal_l2_sides")
    return lib.format_mask(a), lib.format_mask(b)


def info():
    """What tidal.torch found (never raises): library, interposition, ptxas, static launcher,
    Triton module counts, and the problems Partition() would raise for."""
    lib = _lib.find_preloaded()
    ok, where = _lib.launches_interposed(lib) if lib is not None else (False, None)
    d = {
        "library": lib.path if lib is not None else None,
        "preloaded": lib is not None,
        "launches_interposed": ok,
        "cuLaunchKernel_from": where,
        "rewrite": not _no_rewrite(),
        "triton_ptxas_path": os.environ.get("TRITON_PTXAS_PATH"),
        "real_ptxas_env": os.environ.get("TIDAL_REAL_PTXAS"),
        "ptxas_version": (_lib.ptxas_version(os.environ["TRITON_PTXAS_PATH"])[1]
                          if os.environ.get("TRITON_PTXAS_PATH") else None),
        "static_cuda_launcher": _static_launcher_on(),
        "default_partition_env": os.environ.get("TIDAL_PARTITION"),
        "triton_modules": _lib.triton_hook_counts(),
        "notes": list(_import_notes),
        "problems": _problems(lib),
        "paths": _locate.paths(),
        "initialized": _rt is not None,
    }
    return d


def _stats_dict(lib, part):
    st = _lib.Stats()
    lib.check(lib.tidal_stats_get(part._h if part is not None else None, ctypes.byref(st)), "tidal_stats_get")
    d = {n: int(getattr(st, n)) for n in _lib.STATS_COUNTERS}
    c = _lib.triton_hook_counts()
    d["triton_modules_rewritten"] = c["attached"]
    d["triton_modules_not_rewritten"] = c["not_rewritten"]
    if part is None:
        del d["violations"]   # a device counter: per partition only
        return d
    n = ctypes.c_uint()
    lib.check(lib.tidal_device_sms(ctypes.byref(n)), "tidal_device_sms")
    blocks = [int(st.sm_blocks[i]) for i in range(min(n.value, _lib.MAX_SMS))]
    allowed = set(part.sms)
    d["sm_blocks"] = blocks
    d["blocks_total"] = sum(blocks)
    d["blocks_outside_mask"] = sum(b for i, b in enumerate(blocks) if i not in allowed)
    return d


def stats(part=None):
    """libtidal's counters as a dict: launches_rewritten (as persistent clones),
    launches_original (rewritten kernels run as originals on a placed stream),
    launches_unknown (kernels without the rewrite: cuBLAS, cuDNN, aten, ...),
    launches_refused, launches_unmasked, joins, launches_graph_probe (clones captured into a
    graph in the slow probe mode: no capture slot was left), launches_smem_full (of
    launches_unmasked: dynamic shared memory within TIDAL_SH_BYTES of the per-block limit, no
    room for the clone's protocol words), launches_cluster_routed (launches with clusters larger
    than a partition stream's green context runs, sent to the partition's cluster groups)
    (process counters), plus
    triton_modules_rewritten / _not_rewritten. With a Partition: its device counters too:
    violations, sm_blocks (logical blocks per SM, rewritten kernels only), blocks_total and
    blocks_outside_mask (against the current mask)."""
    return _stats_dict(init(), part)


def reset_stats(part=None):
    """Zero the process counters (and part's device counters)."""
    lib = init()
    lib.check(lib.tidal_stats_reset(part._h if part is not None else None), "tidal_stats_reset")


def _cuda_driver():
    name = os.environ.get("TIDAL_LIBCUDA", "libcuda.so.1")
    try:
        cu = ctypes.CDLL(name)
        f = cu.cuStreamDestroy_v2
    except OSError as e:
        raise TidalError("cannot load %s: %s" % (name, e)) from None
    except AttributeError:
        raise TidalError("%s has no cuStreamDestroy_v2: not a CUDA driver library (TIDAL_LIBCUDA)" % name) from None
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_void_p]
    return f


class Partition:
    """A named SM set of libtidal (tidal_partition_create / _find).

    Partition(name, smset) creates one local to this process ("0-65", "0-47,64", "all", or a
    list of SM ids);
    Partition(name) finds an existing one (made earlier in the process, or tidald's once
    libtidal joined it). Keep the Partition alive while its streams are in use."""

    def __init__(self, name, smset=None):
        if not isinstance(name, str) or not name:
            raise TidalError("partition name %r: want a non-empty string" % (name,))
        lib = init()
        device = torch.cuda.current_device()
        h = ctypes.c_void_p()
        if smset is None:
            st = lib.tidal_partition_find(name.encode(), ctypes.byref(h))
            if st == _lib.ERR_NOT_FOUND:
                raise TidalError("no partition named %r: pass an SM set to create it, e.g. "
                                 "tt.Partition(%r, '0-65'), or create it with tidalctl" % (name, name))
            lib.check(st, "tidal_partition_find(%s)" % name)
        else:
            text = _lib.smset_text(smset)
            lib.check(lib.tidal_partition_create(name.encode(), text.encode(), ctypes.byref(h)),
                      "tidal_partition_create(%s, %s)" % (name, text))
        self._lib = lib
        self._h = h
        self.name = name
        self.device = device
        self._streams = []      # raw CUstreams made by stream()
        self._placement = "hybrid"
        self._short_us = None
        self._closed = False

    # -- state
    def _live(self):
        if self._closed:
            raise TidalError("partition %s was closed" % self.name)
        return self._h

    @property
    def handle(self):
        """The tidal_part * as an int (for the C API)."""
        return self._live().value

    def _mask(self):
        m = _lib.SmSet()
        self._lib.check(self._lib.tidal_partition_get_mask(self._live(), ctypes.byref(m)),
                        "tidal_partition_get_mask(%s)" % self.name)
        return m

    @property
    def mask(self):
        """The current SM set, canonical text ("0-65", "none")."""
        return self._lib.format_mask(self._mask())

    @property
    def sms(self):
        """The current SM ids, ascending."""
        return _lib.smset_bits_to_list(self._mask())

    def set(self, smset):
        """Move the partition to smset, live: running rewritten kernels see it at their next
        claim. Streams made before keep their green context (see stream())."""
        text = _lib.smset_text(smset)
        self._lib.check(self._lib.tidal_partition_set(self._live(), text.encode()),
                        "tidal_partition_set(%s, %s)" % (self.name, text))

    @property
    def placed(self):
        """True when the current set is a union of green-context SM groups: streams made now
        place every kernel (rewritten or not) on it."""
        st = self._lib.tidal_partition_placed(self._live())
        if st < 0:
            raise self._lib.error(st, "tidal_partition_placed(%s)" % self.name)
        return bool(st)

    @property
    def placement(self):
        """"hybrid" (default), "persistent" or "original": how rewritten kernels launched on
        this partition's streams run (tidal_partition_set_placement)."""
        return self._placement

    @placement.setter
    def placement(self, mode):
        if mode not in PLACEMENTS:
            raise TidalError("placement %r: want one of %s" % (mode, ", ".join(sorted(PLACEMENTS))))
        self._lib.check(self._lib.tidal_partition_set_placement(self._live(), PLACEMENTS[mode], 0),
                        "tidal_partition_set_placement(%s, %s)" % (self.name, mode))
        self._placement = mode

    @property
    def short_us(self):
        """The hybrid threshold in microseconds (the last one set here; else TIDAL_SHORT_US,
        else libtidal's default 20)."""
        if self._short_us is not None:
            return self._short_us
        v = os.environ.get("TIDAL_SHORT_US", "20")
        try:
            return int(v)
        except ValueError:   # libtidal refuses it at tidal_init, so this is not reached in practice
            raise TidalError("TIDAL_SHORT_US=%s: want 0-10000000" % v) from None

    @short_us.setter
    def short_us(self, us):
        us = _to_int(us, "short_us")
        if us <= 0:
            raise TidalError("short_us must be > 0 (got %d)" % us)
        self._lib.check(self._lib.tidal_partition_set_placement(self._live(), PLACEMENTS[self._placement], us),
                        "tidal_partition_set_placement(%s, short_us=%d)" % (self.name, us))
        self._short_us = us

    # -- streams
    def stream(self, priority=0):
        """A new torch.cuda.ExternalStream of this partition (tidal_partition_stream): in a
        green context of its SMs when `placed`, else in the process's context with the
        rewritten kernels masked. priority: CUDA's (lower is higher; clamped by CUDA). The
        stream is destroyed by close()."""
        h = self._live()
        priority = _to_int(priority, "priority")
        s = ctypes.c_void_p()
        self._lib.check(self._lib.tidal_partition_stream(h, priority, ctypes.byref(s)),
                        "tidal_partition_stream(%s)" % self.name)
        if not s.value:
            raise TidalError("tidal_partition_stream(%s) returned a NULL stream" % self.name)
        self._streams.append(s.value)
        ext = torch.cuda.ExternalStream(s.value, device=torch.device("cuda", self.device))
        try:
            ext.tidal_partition = self   # keeps the partition alive as long as the stream object
        except AttributeError:
            pass
        return ext

    def bind(self, stream):
        """Bind an existing stream (torch.cuda.Stream, or a CUstream as int) to this partition:
        its rewritten kernels run on the partition's SMs (masked; no green context)."""
        self._lib.check(self._lib.tidal_stream_bind(ctypes.c_void_p(_stream_ptr(stream)), self._live()),
                        "tidal_stream_bind(%s)" % self.name)

    @staticmethod
    def unbind(stream):
        lib = init()
        lib.check(lib.tidal_stream_bind(ctypes.c_void_p(_stream_ptr(stream)), None), "tidal_stream_bind(NULL)")

    # -- counters
    def stats(self):
        return stats(self)

    def reset_stats(self):
        reset_stats(self)

    # -- end
    def close(self):
        """Synchronize and destroy the streams made by stream(), then destroy the partition
        (TidalError TIDAL_ERR_BUSY while other streams or modules are bound to it)."""
        if self._closed:
            return
        if self._streams:
            destroy = _cuda_driver()
            while self._streams:   # each stream leaves the list once destroyed: a retry does the rest
                s = self._streams[0]
                try:
                    torch.cuda.ExternalStream(s, device=torch.device("cuda", self.device)).synchronize()
                except Exception as e:
                    raise TidalError("synchronizing stream %#x of partition %s: %s: %s"
                                     % (s, self.name, type(e).__name__, e)) from None
                self._lib.check(self._lib.tidal_stream_bind(ctypes.c_void_p(s), None),
                                "tidal_stream_bind(%#x, NULL) of partition %s" % (s, self.name))
                r = destroy(ctypes.c_void_p(s))
                if r != 0:
                    raise TidalError("cuStreamDestroy(%#x) of partition %s: CUresult %d" % (s, self.name, r))
                self._streams.pop(0)
        self._lib.check(self._lib.tidal_partition_destroy(self._h), "tidal_partition_destroy(%s)" % self.name)
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        if self._closed:
            return "<tidal.torch.Partition %s (closed)>" % self.name
        try:
            return "<tidal.torch.Partition %s %s%s>" % (self.name, self.mask, " placed" if self.placed else "")
        except TidalError as e:
            return "<tidal.torch.Partition %s (%s)>" % (self.name, e)


class Bimodal:
    """A bimodal tensor (libtidal's tidal_bimodal; docs/runtime.md "Bimodal tensors"): nbytes
    on all of the device's memory and again homed on L2 side `side` (0 or 1), both zero at
    first, and a mode that says which copy kernels read, switched while they run.

        t = tt.Bimodal(64 << 20, side=1)     # BE's side (tt.l2_sides()[1] are its SMs)
        t.write(weights_bytes)               # both copies; nothing may read them meanwhile
        kernel(..., t.desc, ...)             # a kernel of yours: tidal_bimodal_mode / _addr
        t.mode = "side"                      # LS became active: BE reads its side's copy
        t.mode = "all"

    Only kernels that read the descriptor (abi/tidal_l2.h) can use it: PyTorch's own kernels
    cannot address the side copy."""

    def __init__(self, nbytes, side):
        nbytes, side = _to_int(nbytes, "nbytes"), _to_int(side, "side")
        if nbytes <= 0 or side not in (0, 1):
            raise TidalError("Bimodal(nbytes=%d, side=%d): want nbytes > 0 and side 0 or 1" % (nbytes, side))
        lib = init()
        h = ctypes.c_void_p()
        lib.check(lib.tidal_bimodal_create(nbytes, side, ctypes.byref(h)),
                  "tidal_bimodal_create(%d, side %d)" % (nbytes, side))
        self._lib, self._h = lib, h
        self.nbytes, self.side = nbytes, side
        self._mode = "all"

    def _live(self):
        if self._h is None:
            raise TidalError("bimodal tensor was closed")
        return self._h

    @property
    def desc(self):
        """The device address of the descriptor kernels take (tidal_bimodal_desc_addr), an int."""
        v = ctypes.c_uint64()
        self._lib.check(self._lib.tidal_bimodal_desc_addr(self._live(), ctypes.byref(v)), "tidal_bimodal_desc_addr")
        return v.value

    def write(self, data, offset=0):
        """Write data to both copies at byte offset: bytes, bytearray, memoryview, or a
        contiguous CPU torch tensor (its bytes). Synchronous; kernels must not read the range
        meanwhile."""
        offset = _to_int(offset, "offset")
        if offset < 0:
            raise TidalError("offset=%d: want >= 0" % offset)
        keep = None
        if hasattr(data, "data_ptr"):   # a torch tensor
            if getattr(getattr(data, "device", None), "type", None) != "cpu" or not data.is_contiguous():
                raise TidalError("Bimodal.write: want a contiguous CPU tensor (got %r)" % (getattr(data, "device", None),))
            ptr, n = data.data_ptr(), data.numel() * data.element_size()
        else:
            try:
                view = memoryview(data).cast("B")
            except TypeError:
                raise TidalError("Bimodal.write: want bytes-like data or a CPU tensor (got %s)"
                                 % type(data).__name__) from None
            n = view.nbytes
            keep = (ctypes.c_char * n).from_buffer_copy(view) if n else None
            ptr = ctypes.addressof(keep) if n else None
        self._lib.check(self._lib.tidal_bimodal_write(self._live(), offset, ptr, n),
                        "tidal_bimodal_write(%d bytes at %d)" % (n, offset))

    @property
    def mode(self):
        """"all" or "side": the copy kernels read (as last set here)."""
        return self._mode

    @mode.setter
    def mode(self, mode):
        if mode not in _lib.BIMODAL_MODES:
            raise TidalError("mode %r: want 'all' or 'side'" % (mode,))
        self._lib.check(self._lib.tidal_bimodal_set(self._live(), _lib.BIMODAL_MODES[mode]),
                        "tidal_bimodal_set(%s)" % mode)
        self._mode = mode

    def close(self):
        """Free both copies (no kernel may still read them)."""
        if self._h is None:
            return
        self._lib.check(self._lib.tidal_bimodal_destroy(self._h), "tidal_bimodal_destroy")
        self._h = None

    def __repr__(self):
        state = "closed" if self._h is None else "mode %s" % self._mode
        return "<tidal.torch.Bimodal %d bytes, side %d, %s>" % (self.nbytes, self.side, state)


def _to_int(v, what):
    try:
        return int(v)
    except (TypeError, ValueError):
        raise TidalError("%s=%r: want an integer" % (what, v)) from None


def _stream_ptr(stream):
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    p = getattr(stream, "cuda_stream", None)
    if p is None:
        raise TidalError("not a CUDA stream: %r" % (stream,))
    return int(p)
