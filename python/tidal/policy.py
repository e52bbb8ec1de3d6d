"""tidal.policy: libtidal's latency models and SM policies from Python (runtime/tidal_policy.h).

The rules are libtidal's C code; this module only binds them.

  fit(sms, latencies_us) -> (Scaling, rms_us)   least squares of latency = a/n + b
  Scaling(a_us, b_us).latency(n), .knee(max_sms, grain=2, slack=0.05)
  Policy("sgdrc" | "gslice", sms=None, apply=None, **config)   a policy over tidal.torch
      partitions (or, with apply=f, calling f(service_id, [SMs]) for each mask change);
      config: tidal_policy_config's fields, ls_first as an SM set (tidal.torch.l2_sides()[0]):
      .add(name, "ls" | "be", partition, slo_us=..., profile=Scaling, min_sms=, max_sms=,
           max_batch=, max_queue_us=, demand_sms=) -> service id
      .begin(id, demand_sms=0), .end(id, latency_us, batch=1), .tick(),
      .batch(id, arrival_per_s, queued=0) -> (batch, max_wait_us), .share(id) -> (SM list),
      .model(id) -> (Scaling, online) or None, .state() -> dict, .close()

fit/Scaling and Policy(apply=...) need no GPU (they use the preloaded libtidal, else
libtidal.so as tidal.locate finds it); Policy over partitions needs tidal.torch (the
partitions are its). Errors raise TidalError. tidal.serve runs services on a Policy.
"""
import ctypes
import json

from ._errors import TidalError
from . import _lib

__all__ = ["Scaling", "fit", "Policy"]

_KINDS = {"sgdrc": 1, "gslice": 2}
_CLASSES = {"ls": 1, "be": 2}
_CONFIG_KEYS = ("grain", "knee_slack", "window_us", "idle_us", "slo_high", "slo_low", "tune_step", "tune_every",
                "batch_frac", "online_min", "trace_path", "state_path", "state_every_ms", "ls_first")


def _any_lib():
    lib = _lib.find_preloaded()
    if lib is None:
        from . import locate
        lib = _lib.load_path(locate("libtidal"))
    return lib


class Scaling:
    """latency(n) = a_us / n + b_us (n SMs)."""

    def __init__(self, a_us, b_us):
        self.a_us, self.b_us = float(a_us), float(b_us)

    def _c(self):
        return _lib.Scaling(self.a_us, self.b_us)

    def latency(self, sms):
        return _any_lib().tidal_scaling_latency(ctypes.byref(self._c()), int(sms))

    def knee(self, max_sms, grain=2, slack=0.05):
        """The fewest SMs (a multiple of grain) within slack of the latency at max_sms."""
        n = _any_lib().tidal_scaling_knee(ctypes.byref(self._c()), int(max_sms), int(grain), float(slack))
        if n == 0:
            raise TidalError("Scaling.knee(max_sms=%r, grain=%r, slack=%r): bad arguments" % (max_sms, grain, slack))
        return n

    def as_dict(self):
        return {"a_us": self.a_us, "b_us": self.b_us}

    def __repr__(self):
        return "Scaling(a_us=%.3f, b_us=%.3f)" % (self.a_us, self.b_us)


def fit(sms, latencies_us):
    """(Scaling, rms_us) fitted to samples at two SM counts or more (TidalError otherwise)."""
    sms, lat = list(sms), list(latencies_us)
    if len(sms) != len(lat):
        raise TidalError("tidal.policy.fit: %d SM counts but %d latencies" % (len(sms), len(lat)))
    lib = _any_lib()
    n = len(sms)
    cs, cl = (ctypes.c_uint * max(n, 1))(*sms), (ctypes.c_double * max(n, 1))(*lat)
    out, rms = _lib.Scaling(), ctypes.c_double()
    lib.check(lib.tidal_scaling_fit(cs, cl, n, ctypes.byref(out), ctypes.byref(rms)), "tidal_scaling_fit")
    return Scaling(out.a_us, out.b_us), rms.value


class Policy:
    """One libtidal policy over tidal.torch partitions (see the module's docstring)."""

    def __init__(self, kind, sms=None, apply=None, **config):
        """apply: instead of moving tidal.torch partitions, call apply(service_id, [SMs]) for
        every mask change (it returns nothing, or raises to fail the decision); sms must then
        be given. Without it the policy moves the services' partitions (tidal.torch)."""
        if kind not in _KINDS:
            raise TidalError("tidal.policy.Policy: kind %r: want one of %s" % (kind, ", ".join(_KINDS)))
        bad = sorted(set(config) - set(_CONFIG_KEYS))
        if bad:
            raise TidalError("tidal.policy.Policy: unknown options %s (known: %s)" % (bad, ", ".join(_CONFIG_KEYS)))
        c = _lib.PolicyConfig()
        c.kind = _KINDS[kind]
        if apply is None:
            from . import torch as tt
            self._lib = tt.init()
            c.sms = int(sms) if sms is not None else tt.device_sms()
            self._apply = None
        else:
            if sms is None:
                raise TidalError("tidal.policy.Policy: with apply=, give sms=")
            self._lib = _any_lib()
            c.sms = int(sms)
            self.apply_error = None

            def hook(_ctx, sid, mask):
                try:
                    apply(sid, _lib.smset_bits_to_list(mask.contents))
                    return 0
                except Exception as e:   # the C side gets a failure status; the error is kept
                    self.apply_error = e
                    return _lib.ERR_INVALID
            self._apply = _lib._APPLY_FN(hook)   # kept: C holds the pointer
            c.apply = self._apply
        for k, v in config.items():
            if k == "ls_first":   # an SM set ("0-1,8-13,...": tidal.torch.l2_sides()[0]) or SM ids
                v = _lib.smset_text(v)
                st = self._lib.tidal_smset_parse(v.encode(), ctypes.byref(c.ls_first), None, None)
                if st:
                    raise TidalError("tidal.policy.Policy: ls_first %r: %s" % (v, self._lib.strerror(st)))
                continue
            setattr(c, k, v.encode() if k in ("trace_path", "state_path") else v)
        h = ctypes.c_void_p()
        self._lib.check(self._lib.tidal_policy_create(ctypes.byref(c), ctypes.byref(h)), "tidal_policy_create")
        self._h, self.kind, self._parts = h, kind, []

    def _handle(self):
        if self._h is None:
            raise TidalError("tidal.policy.Policy: used after close()")
        return self._h

    def add(self, name, cls, partition, slo_us=0.0, profile=None, min_sms=0, max_sms=0, max_batch=0,
            max_queue_us=0, demand_sms=0):
        if cls not in _CLASSES:
            raise TidalError("Policy.add(%r): class %r: want 'ls' or 'be'" % (name, cls))
        prof = profile._c() if profile is not None else None
        s = _lib.ServiceConfig(name.encode(), _CLASSES[cls], partition.handle if partition is not None else None,
                               float(slo_us),
                               ctypes.pointer(prof) if prof is not None else None, int(min_sms), int(max_sms),
                               int(max_batch), int(max_queue_us), int(demand_sms))
        i = ctypes.c_int()
        self._lib.check(self._lib.tidal_policy_add_service(self._handle(), ctypes.byref(s), ctypes.byref(i)),
                        "tidal_policy_add_service(%s)" % name)
        self._parts.append(partition)   # keeps it alive while the policy moves it
        return i.value

    def begin(self, sid, demand_sms=0):
        self._lib.check(self._lib.tidal_policy_request_begin(self._handle(), sid, int(demand_sms)),
                        "tidal_policy_request_begin")

    def end(self, sid, latency_us, batch=1):
        self._lib.check(self._lib.tidal_policy_request_end(self._handle(), sid, float(latency_us), int(batch)),
                        "tidal_policy_request_end")

    def tick(self):
        self._lib.check(self._lib.tidal_policy_tick(self._handle()), "tidal_policy_tick")

    def batch(self, sid, arrival_per_s, queued=0):
        """(batch, max_wait_us): GSLICE's adaptive batch at arrival_per_s with `queued` requests
        waiting now (those need no filling)."""
        b, w = ctypes.c_uint(), ctypes.c_uint64()
        self._lib.check(self._lib.tidal_policy_batch(self._handle(), sid, float(arrival_per_s), int(queued),
                                                     ctypes.byref(b), ctypes.byref(w)), "tidal_policy_batch")
        return b.value, w.value

    def batch_profile(self, sid, latencies_us):
        """What each batch size of service sid takes ({batch: us}, e.g. measured offline on the
        whole GPU): tidal_policy_batch's estimates before a size has run."""
        for b, us in sorted(latencies_us.items()):
            self._lib.check(self._lib.tidal_policy_batch_profile(self._handle(), sid, int(b), float(us)),
                            "tidal_policy_batch_profile")

    def share(self, sid):
        m = _lib.SmSet()
        self._lib.check(self._lib.tidal_policy_share(self._handle(), sid, ctypes.byref(m), None),
                        "tidal_policy_share")
        return _lib.smset_bits_to_list(m)

    def model(self, sid):
        out, online = _lib.Scaling(), ctypes.c_int()
        st = self._lib.tidal_policy_model(self._handle(), sid, ctypes.byref(out), ctypes.byref(online))
        if st == _lib.ERR_NOT_FOUND:
            return None
        self._lib.check(st, "tidal_policy_model")
        return Scaling(out.a_us, out.b_us), bool(online.value)

    def state(self):
        n = self._lib.tidal_policy_state(self._handle(), None, 0)
        self._lib.check(min(n, 0), "tidal_policy_state")
        buf = ctypes.create_string_buffer(n + 1)
        self._lib.tidal_policy_state(self._handle(), buf, n + 1)
        return json.loads(buf.value.decode())

    def close(self):
        if self._h is not None:
            self._lib.check(self._lib.tidal_policy_destroy(self._h), "tidal_policy_destroy")
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
