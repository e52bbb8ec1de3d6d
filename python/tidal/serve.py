"""tidal.serve: a serving loop in one process around libtidal's policies (tidal.policy).

    pol = tidal.policy.Policy("sgdrc")                    # or "gslice"
    srv = tidal.serve.Server(pol)
    ls = srv.service("bert", "ls", run_bert, partition=p_ls, slo_us=2000, max_batch=8)
    be = srv.service("bert-large", "be", run_large, partition=p_be)   # closed loop
    records = srv.run({"bert": tidal.serve.poisson(rate=300, seconds=10, seed=1)}, seconds=10)

A service's `run(batch)` gets the list of the batch's request ids and returns when the
batch's work is done (for a GPU model: issue it on the service's stream and synchronize).
`run` may also be a list of such callables, the service's instances (each with its own
stream and graph, as a server's model instances): one worker per instance takes batches
from the service's one queue, so that a request that arrives while another runs starts at
once instead of queueing behind it.
Each LS service has a request queue fed by its arrival times; its worker takes a batch of
the size the policy picks for the measured arrival rate (tidal_policy_batch), waits at most
the policy's max_wait for it to fill, calls policy.begin (the SMs are reserved before the
work is issued), runs it, and calls policy.end with the batch's latency. A BE service runs
closed-loop: batches of max_batch, one after the other. Every request gets a record:
(service, arrival, start, end, batch, sms) in seconds of time.monotonic().

Arrivals: poisson(rate, seconds, seed) and bursty(rate, seconds, seed, ...) — an on/off
pattern (short bursts at several times the mean rate between quiet spells, as invocation
traces of serverless functions show), generated here, nothing downloaded.

Two engines run the same loop. engine="python" (the default) is the above, with threads of
this interpreter and callables. engine="c" is libtidal's tidal_server (runtime/tidal_server.h:
C threads, no Python on a request's path): an instance is a CUDA graph and its stream, given
as graphs= and streams= instead of run:

    srv = tidal.serve.Server(pol, engine="c")
    srv.service("bert", "ls", graphs=[g0, g1], streams=[s0, s1], partition=p_ls, slo_us=2000)

graphs: per instance a torch.cuda.CUDAGraph (its raw_cuda_graph_exec(), PyTorch >= 2.8; else
one captured with keep_graph=True, whose raw_cuda_graph() libtidal instantiates), a raw
CUgraphExec (int), or {batch: graph} / [graph for batch 1, 2, ...] with the graph of each
batch size (a missing size runs on the next larger one); streams: torch.cuda.Stream or raw
CUstream ints. A service may give both run and graphs/streams: each engine takes its own,
so a caller switches engines with the one flag. engine="c" replays the graph with
cuGraphLaunch and nothing else (torch's replay() also refills its RNG seed and offset, which
only graphs that draw random numbers need); its records are in seconds of
time.monotonic() too, its waits per service (wait="spin" | "yield" | "block"; default spin
for LS, yield for BE). Without a policy it still needs libtidal (the preloaded one, else
libtidal.so as tidal.locate finds it), initialized without tidald: nothing is interposed
there, it only runs the loop. Server.counts has each service's dispatched/requests/batches
after a run of the C engine.

shares= (engine="c", with a policy): per instance a dict {SM set: graph(s)} of graphs captured
on a stream of exactly that set (tidal.torch.Partition(name, set).stream()); a batch runs
the graph of the share with the most SMs inside the policy's mask of the service when it
begins (the first of equals), else the instance's own, and its Record's share says which
(1 + its index, 0: the instance's graph). BE under SGDRC: a graph of the SMs it keeps while
LS holds its demand, which never touches LS's SMs, and its own graph (clones that follow
the live mask) listed as the share of all SMs, which wins while LS idles. LS under GSLICE:
a ladder of graphs on its first 16, 32, 48... SMs; a share between two steps runs the
lower one.
"""
import collections
import ctypes
import math
import random
import threading
import time

from ._errors import TidalError
from . import _lib

__all__ = ["Server", "poisson", "bursty", "Record", "summarize"]

Record = collections.namedtuple("Record", "service arrival start end batch sms share", defaults=(0,))


def poisson(rate, seconds, seed=0):
    """Arrival times (s, from 0) of a Poisson process of `rate` requests/s."""
    if rate <= 0 or seconds <= 0:
        raise TidalError("poisson(rate=%r, seconds=%r): both must be > 0" % (rate, seconds))
    rng, t, out = random.Random(seed), 0.0, []
    while True:
        t += rng.expovariate(rate)
        if t >= seconds:
            return out
        out.append(t)


def bursty(rate, seconds, seed=0, burst_factor=5.0, burst_s=0.05, quiet_factor=0.25):
    """Arrival times with mean `rate`: Poisson within alternating bursts (burst_factor x the
    mean, exponentially distributed lengths of mean burst_s) and quiet spells (quiet_factor x
    the mean), their lengths chosen so that the long-run mean is `rate`."""
    if rate <= 0 or seconds <= 0 or burst_factor <= 1 or not 0 <= quiet_factor < 1:
        raise TidalError("bursty: want rate, seconds > 0, burst_factor > 1, 0 <= quiet_factor < 1")
    # fraction f of time in bursts: f*B + (1-f)*Q = 1
    f = (1 - quiet_factor) / (burst_factor - quiet_factor)
    quiet_s = burst_s * (1 - f) / f
    rng, t, out, burst = random.Random(seed), 0.0, [], False
    while t < seconds:
        length = rng.expovariate(1.0 / (burst_s if burst else quiet_s))
        r = rate * (burst_factor if burst else quiet_factor)
        end = min(t + length, seconds)
        if r > 0:
            u = t + rng.expovariate(r)
            while u < end:
                out.append(u)
                u += rng.expovariate(r)
        t, burst = end, not burst
    return out


def summarize(records, slo_us=None):
    """{n, p50_us, p99_us, slo_attainment, throughput_per_s} of one service's records."""
    if not records:
        return {"n": 0}
    lat = sorted((r.end - r.arrival) * 1e6 for r in records)

    def pct(q):
        return lat[min(len(lat) - 1, max(0, int(math.ceil(q / 100.0 * len(lat))) - 1))]
    span = max(r.end for r in records) - min(r.arrival for r in records)
    out = {"n": len(lat), "p50_us": round(pct(50), 1), "p99_us": round(pct(99), 1),
           "throughput_per_s": round(len(lat) / span, 1) if span > 0 else None}
    if slo_us:
        out["slo_attainment"] = round(sum(1 for x in lat if x <= slo_us) / len(lat), 4)
    return out


def _fine_timer_slack():
    """PR_SET_TIMERSLACK of the calling thread to 1 ns (Linux; elsewhere nothing)."""
    try:
        import ctypes
        ctypes.CDLL(None).prctl(29, 1, 0, 0, 0)   # PR_SET_TIMERSLACK
    except (OSError, AttributeError):
        pass


class _Service:
    def __init__(self, server, name, cls, runs, sid, max_batch, slo_us):
        self.server, self.name, self.cls, self.runs, self.sid = server, name, cls, runs, sid
        self.max_batch, self.slo_us = max_batch, slo_us
        self.queue = collections.deque()   # (request id, arrival time)
        self.cond = threading.Condition()
        self.records = []
        self.arrivals = collections.deque(maxlen=64)   # recent arrival times, for the rate
        self.error = None

    def rate(self):
        a = self.arrivals
        if len(a) < 2 or a[-1] <= a[0]:
            return 0.0
        return (len(a) - 1) / (a[-1] - a[0])


class _NoPolicy:
    """Server(None): the baselines (no policy moves any SMs): LS batches take what is queued
    (up to max_batch) without waiting; records carry sms = 0 (unknown)."""

    def __init__(self):
        self.max_batch = []

    def add(self, name, cls, partition, max_batch=1, **_kw):
        self.max_batch.append(max_batch)
        return len(self.max_batch) - 1

    def begin(self, sid, demand_sms=0):
        pass

    def end(self, sid, latency_us, batch=1):
        pass

    def tick(self):
        pass

    def batch(self, sid, arrival_per_s, queued=0):
        return self.max_batch[sid], 0

    def share(self, sid):
        return []


def _graph_exec(g, instantiate, what):
    """The CUgraphExec (int) of a graph as service(graphs=...) takes it; instantiate(CUgraph)
    makes one in C (owned by the server)."""
    if isinstance(g, int) and not isinstance(g, bool):
        if g <= 0:
            raise TidalError("%s: CUgraphExec %r: want a non-zero handle" % (what, g))
        return g
    f = getattr(g, "raw_cuda_graph_exec", None)
    if f is not None:
        try:
            h = f()
        except Exception as e:   # captured with keep_graph=True and not instantiated yet
            inst = getattr(g, "instantiate", None)
            if inst is None:
                raise TidalError("%s: raw_cuda_graph_exec() failed (%s: %s)" % (what, type(e).__name__, e)) from None
            try:
                inst()
                h = f()
            except Exception as e2:
                raise TidalError("%s: raw_cuda_graph_exec() failed after instantiate() (%s: %s)"
                                 % (what, type(e2).__name__, e2)) from None
        if h:
            return int(h)
    raw = getattr(g, "raw_cuda_graph", None)
    if raw is not None:
        try:
            graph = raw()
        except Exception as e:
            raise TidalError("%s: this PyTorch's CUDAGraph has no raw_cuda_graph_exec() (PyTorch >= 2.8), and "
                             "raw_cuda_graph() failed (%s: %s): capture the graph with "
                             "torch.cuda.CUDAGraph(keep_graph=True) so that libtidal can instantiate it"
                             % (what, type(e).__name__, e)) from None
        if not graph:
            raise TidalError("%s: raw_cuda_graph() gave no graph: capture it with keep_graph=True" % what)
        return instantiate(int(graph))
    raise TidalError("%s: %r is not a graph engine='c' can launch: want a torch.cuda.CUDAGraph (PyTorch >= 2.8: "
                     "raw_cuda_graph_exec(); older: captured with keep_graph=True, raw_cuda_graph()) or a "
                     "CUgraphExec (int)" % (what, g))


def _stream_handle(s, what):
    h = s if isinstance(s, int) and not isinstance(s, bool) else getattr(s, "cuda_stream", None)
    if not isinstance(h, int) or isinstance(h, bool) or h < 0:
        raise TidalError("%s: %r: want a torch.cuda.Stream or a CUstream (int)" % (what, s))
    return h


class _CEngine:
    """libtidal's tidal_server under a Server(engine="c")."""

    def __init__(self, policy):
        if policy is not None:
            lib = policy._lib
        else:
            from .policy import _any_lib
            lib = _any_lib()
        # the driver table and the context; a libtidal that is not the preload one (an
        # unmodified process) does not join tidald
        lib.check(lib.tidal_init(0 if lib.preloaded else 1), "tidal_init")
        h = ctypes.c_void_p()
        lib.check(lib.tidal_server_create(policy._handle() if policy is not None else None, None, ctypes.byref(h)),
                  "tidal_server_create")
        self.lib, self.h, self.keep, self.ids = lib, h, [], {}

    def instantiate(self, graph):
        e = ctypes.c_void_p()
        self.lib.check(self.lib.tidal_server_instantiate(self.h, ctypes.c_void_p(graph), ctypes.byref(e)),
                       "tidal_server_instantiate")
        return e.value

    def _table(self, g, max_batch, w, inst):
        """One graph, or one per batch size (a dict or a list), into inst.graph / inst.graphs."""
        if isinstance(g, dict) or (isinstance(g, (list, tuple)) and max_batch > 1):
            by = dict(g) if isinstance(g, dict) else {b + 1: x for b, x in enumerate(g)}
            bad = [b for b in by if not isinstance(b, int) or not 1 <= b <= max_batch]
            if bad:
                raise TidalError("%s: graphs for batch sizes %s: want 1..max_batch (%d)" % (w, bad, max_batch))
            table = (ctypes.c_void_p * max_batch)()
            for b, x in by.items():
                table[b - 1] = _graph_exec(x, self.instantiate, "%s, batch %d" % (w, b))
            inst.graphs = ctypes.cast(table, ctypes.POINTER(ctypes.c_void_p))
            self.keep.append(table)
        else:
            inst.graph = _graph_exec(g, self.instantiate, w)

    def _shares(self, shares, max_batch, w, inst):
        """{SM set: graph(s)}: graphs captured on a stream of exactly that set, the largest
        inside the policy's mask of the service run (tidal_server_share)."""
        if not shares:
            return
        if not isinstance(shares, dict):
            raise TidalError("%s: shares %r: want a dict {SM set: graph(s)}" % (w, shares))
        arr = (_lib.ServerShare * len(shares))()
        for i, (smset, g) in enumerate(shares.items()):
            text = _lib.smset_text(smset)
            self.lib.check(self.lib.tidal_smset_parse(text.encode(), ctypes.byref(arr[i].mask), None, None),
                           "%s: share %r" % (w, text))
            self._table(g, max_batch, "%s share %s" % (w, text), arr[i])
        inst.shares = ctypes.cast(arr, ctypes.POINTER(_lib.ServerShare))
        inst.nshares = len(shares)
        self.keep.append(arr)

    def add(self, name, cls, sid, max_batch, wait, graphs, streams, shares=None):
        what = "Server.service(%s)" % name
        if graphs is None or streams is None:
            raise TidalError("%s: engine='c' runs CUDA graphs: give graphs= and streams= (an instance each)" % what)
        graphs = list(graphs) if isinstance(graphs, (list, tuple)) else [graphs]
        streams = list(streams) if isinstance(streams, (list, tuple)) else [streams]
        if not graphs or len(graphs) != len(streams):
            raise TidalError("%s: %d graphs and %d streams: want one of each per instance" % (what, len(graphs),
                                                                                          len(streams)))
        if wait not in _lib.SERVER_WAITS:
            raise TidalError("%s: wait %r: want one of %s" % (what, wait, ", ".join(_lib.SERVER_WAITS)))
        if shares is not None and (not isinstance(shares, (list, tuple)) or len(shares) != len(graphs)):
            raise TidalError("%s: shares: want a list with one dict {SM set: graph(s)} per instance" % what)
        inst = (_lib.ServerInstance * len(graphs))()
        for k, (g, st) in enumerate(zip(graphs, streams)):
            w = "%s instance %d" % (what, k)
            inst[k].stream = _stream_handle(st, w + ": stream")
            self._table(g, max_batch, w, inst[k])
            self._shares(shares[k] if shares is not None else None, max_batch, w, inst[k])
        sv = _lib.ServerService(name.encode(), 1 if cls == "ls" else 2, sid, int(max_batch), _lib.SERVER_WAITS[wait],
                                ctypes.cast(inst, ctypes.POINTER(_lib.ServerInstance)), len(graphs))
        i = ctypes.c_int()
        self.lib.check(self.lib.tidal_server_add_service(self.h, ctypes.byref(sv), ctypes.byref(i)),
                       "tidal_server_add_service(%s)" % name)
        self.keep += [graphs, streams]   # the exec handles belong to these graphs
        self.ids[name] = i.value
        return i.value

    def run(self, services, arrivals, seconds):
        for name, s in services.items():
            if s.cls != "ls":
                continue
            ts = sorted(arrivals.get(name, []))
            arr = (ctypes.c_uint64 * max(len(ts), 1))(*[max(0, int(round(t * 1e9))) for t in ts])
            self.lib.check(self.lib.tidal_server_arrivals(self.h, self.ids[name], arr, len(ts)),
                           "tidal_server_arrivals(%s)" % name)
        st = self.lib.tidal_server_run(self.h, int(round(seconds * 1e9)))
        if st != _lib.OK:
            raise self.lib.error(st, "tidal_server_run")
        recs, n = ctypes.POINTER(_lib.ServerRecord)(), ctypes.c_size_t()
        self.lib.check(self.lib.tidal_server_records(self.h, ctypes.byref(recs), ctypes.byref(n)),
                       "tidal_server_records")
        names = {i: name for name, i in self.ids.items()}
        out = {name: [] for name in services}
        for k in range(n.value):
            r = recs[k]
            name = names[r.service]
            out[name].append(Record(name, r.arrival_ns / 1e9, r.start_ns / 1e9, r.end_ns / 1e9, r.batch, r.sms,
                                    r.share))
        counts = {}
        for name, i in self.ids.items():
            c = _lib.ServerCounts()
            self.lib.check(self.lib.tidal_server_counts_get(self.h, i, ctypes.byref(c)), "tidal_server_counts_get")
            counts[name] = {"dispatched": c.dispatched, "requests": c.requests, "batches": c.batches}
        return out, counts

    def close(self):
        if self.h is not None:
            self.lib.check(self.lib.tidal_server_destroy(self.h), "tidal_server_destroy")
            self.h = None


class Server:
    """Services over one tidal.policy.Policy, or none (None: the baselines; see the
    module's docstring). engine: "python" (callables) or "c" (CUDA graphs, libtidal's
    tidal_server)."""

    def __init__(self, policy, clock=time.monotonic, engine="python"):
        if engine not in ("python", "c"):
            raise TidalError("Server: engine %r: want 'python' or 'c'" % (engine,))
        if engine == "c" and clock is not time.monotonic:
            raise TidalError("Server: engine='c' times requests with CLOCK_MONOTONIC (time.monotonic): no clock=")
        self.policy, self.clock = policy if policy is not None else _NoPolicy(), clock
        self.engine = engine
        self.services = {}
        self.counts = {}
        self._stop = threading.Event()
        self._c = _CEngine(policy) if engine == "c" else None

    def service(self, name, cls, run=None, partition=None, slo_us=0.0, profile=None, max_batch=1,
                max_queue_us=0, min_sms=0, max_sms=0, demand_sms=0, graphs=None, streams=None, wait="default",
                shares=None):
        if name in self.services:
            raise TidalError("Server.service: %s exists" % name)
        if cls not in ("ls", "be"):
            raise TidalError("Server.service(%s): class %r: want 'ls' or 'be'" % (name, cls))
        runs = []
        if self.engine == "python":
            runs = list(run) if isinstance(run, (list, tuple)) else [run]
            if not runs or not all(callable(r) for r in runs):
                raise TidalError("Server.service(%s): run: want a callable or a non-empty list of callables" % name)
        elif not isinstance(max_batch, int) or max_batch < 1:
            raise TidalError("Server.service(%s): max_batch %r: want an int >= 1" % (name, max_batch))
        sid = self.policy.add(name, cls, partition, slo_us=slo_us, profile=profile, min_sms=min_sms,
                              max_sms=max_sms, max_batch=max_batch, max_queue_us=max_queue_us,
                              demand_sms=demand_sms)
        if shares is not None and self._c is None:
            raise TidalError("Server.service(%s): shares are engine='c''s (graphs placed per share)" % name)
        if self._c is not None:
            self._c.add(name, cls, sid, max_batch, wait, graphs, streams, shares)
        s = _Service(self, name, cls, runs, sid, max_batch, slo_us)
        self.services[name] = s
        return s

    def close(self):
        """Frees the C engine's server (and the graphs it instantiated); the Python engine
        holds nothing."""
        if self._c is not None:
            self._c.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # -- workers
    def _run_batch(self, s, run_fn, batch):
        ids = [rid for rid, _ in batch]
        self.policy.begin(s.sid)
        sms = len(self.policy.share(s.sid))
        t0 = self.clock()
        run_fn(ids)
        t1 = self.clock()
        self.policy.end(s.sid, (t1 - t0) * 1e6, len(ids))
        with s.cond:
            for rid, arrival in batch:
                s.records.append(Record(s.name, arrival if arrival is not None else t0, t0, t1, len(ids), sms))

    def _ls_worker(self, s, run_fn):
        try:
            while True:
                # one lock over the wait, the batch's choice and its taking: several
                # instances' workers share the queue
                with s.cond:
                    while not s.queue and not self._stop.is_set():
                        s.cond.wait(0.01)
                    if not s.queue and self._stop.is_set():
                        return
                    b, wait_us = self.policy.batch(s.sid, s.rate(), len(s.queue))
                    deadline = s.queue[0][1] + wait_us / 1e6
                    while s.queue and len(s.queue) < b and self.clock() < deadline and not self._stop.is_set():
                        s.cond.wait(max(0.0, min(deadline - self.clock(), 0.01)))
                    batch = [s.queue.popleft() for _ in range(min(b, len(s.queue)))]
                if batch:
                    self._run_batch(s, run_fn, batch)
        except BaseException as e:   # reported by run()
            s.error = e
            self._stop.set()

    def _be_worker(self, s, run_fn, k):
        n = 0
        try:
            while not self._stop.is_set():
                batch = [("%s-%d-%d" % (s.name, k, n + i), None) for i in range(s.max_batch)]
                n += s.max_batch
                self._run_batch(s, run_fn, batch)
        except BaseException as e:
            s.error = e
            self._stop.set()

    def run(self, arrivals, seconds, tick_s=0.001, spin_us=100):
        """Replay arrivals ({LS service: [times in s from the start]}) for `seconds`, BE
        services closed-loop the whole time; then wait for the queued requests. Returns
        {service: [Record]}. A service's exception stops the run and is raised here.
        The replaying thread sleeps with a 1 ns timer slack (Linux's default 50 us would
        make every request late) and spins the last spin_us before an arrival: a request
        is queued within a few us of its time (its record's arrival is that time)."""
        unknown = sorted(set(arrivals) - set(self.services))
        if unknown:
            raise TidalError("Server.run: no services %s" % unknown)
        if self._c is not None:
            if (tick_s, spin_us) != (0.001, 100):
                raise TidalError("Server.run: engine='c' ticks every 1 ms and spins 100 us (tidal_server's "
                                 "defaults); tick_s and spin_us are the Python engine's")
            if self._c.h is None:
                raise TidalError("Server.run: used after close()")
            records, self.counts = self._c.run(self.services, arrivals, seconds)
            for name, recs in records.items():
                self.services[name].records = recs
            return records
        self._stop.clear()
        _fine_timer_slack()
        threads = []
        for s in self.services.values():
            for k, run_fn in enumerate(s.runs):
                fn, args = (self._ls_worker, (s, run_fn)) if s.cls == "ls" else (self._be_worker, (s, run_fn, k))
                t = threading.Thread(target=fn, args=args, name="tidal-serve-%s-%d" % (s.name, k), daemon=True)
                threads.append(t)
                t.start()
        start = self.clock()
        events = sorted((t, name) for name, ts in arrivals.items() for t in ts)
        i = 0
        while not self._stop.is_set():
            now = self.clock() - start
            while i < len(events) and events[i][0] < seconds and (events[i][0] <= now or now >= seconds):
                t, name = events[i]
                s = self.services[name]
                with s.cond:
                    s.queue.append((i, start + t))
                    s.arrivals.append(start + t)
                    s.cond.notify()
                i += 1
            if now >= seconds:
                break
            self.policy.tick()
            nxt = events[i][0] if i < len(events) else seconds
            left = nxt - (self.clock() - start)
            if left > spin_us / 1e6:
                time.sleep(min(left - spin_us / 1e6, tick_s))
            else:
                while self.clock() - start < nxt:
                    pass
        self._stop.set()
        for t in threads:
            t.join()
        for s in self.services.values():
            if s.error is not None:
                raise TidalError("service %s failed: %s: %s" % (s.name, type(s.error).__name__, s.error))
        return {name: s.records for name, s in self.services.items()}
