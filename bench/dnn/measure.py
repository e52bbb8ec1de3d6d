"""Latency loops, CUDA-graph capture, the SM probe, and the LS-under-BE-storm loop.

Every request is timed on the host from issue to observed completion (what a serving
loop sees), in nanoseconds (time.perf_counter_ns). CUDA errors surface as exceptions from
torch (synchronize / query raise them); nothing here swallows one.
"""
import collections
import time

import torch

_now = time.perf_counter_ns


def capture(fn, x, stream, warmup=3, before=None):
    """Warm fn(x) up on stream (eager), then capture one call into a CUDA graph on stream
    (before(), if given, is called between the two). Returns (graph, static output). The
    input x is the graph's static input."""
    with torch.no_grad():
        with torch.cuda.stream(stream):
            for _ in range(warmup):
                fn(x)
        stream.synchronize()
        if before is not None:
            before()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=stream, capture_error_mode="thread_local"):
            y = fn(x)
        stream.synchronize()
        # one replay, checked, before anything is timed
        with torch.cuda.stream(stream):
            g.replay()
        stream.synchronize()
    return g, y


def latencies(issue, stream, n, warmup):
    """Issue `issue()` on stream n times (after warmup), synchronizing each; ns per request."""
    return interleaved([(issue, stream)], n, warmup)[0]


def interleaved(pairs, n, warmup):
    """Like latencies() for several (issue, stream) configurations at once: request i of
    each, in an order that rotates with i, before request i + 1 of any, so that all of
    them see the same machine (clocks, other tenants) over the run. ns per request, one
    list per pair."""
    out = [[] for _ in pairs]
    with torch.no_grad():
        for i in range(warmup + n):
            for k in range(len(pairs)):
                j = (i + k) % len(pairs)
                issue, stream = pairs[j]
                with torch.cuda.stream(stream):
                    t0 = _now()
                    issue()
                    stream.synchronize()
                    t1 = _now()
                if i >= warmup:
                    out[j].append(t1 - t0)
    return out


def graph_issue(g):
    return g.replay


def eager_issue(fn, x):
    def issue():
        fn(x)
    return issue


# ------------------------------------------------------------------ which SMs a stream runs on

_smid_kernel = None


def _get_smid_kernel():
    global _smid_kernel
    if _smid_kernel is None:
        import triton
        import triton.language as tl

        @triton.jit
        def smid_kernel(out, spin):
            sm = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)
            i = 0
            acc = sm
            while i < spin:
                acc = acc * 3 + 1
                i += 1
            tl.store(out + tl.program_id(0), sm + (acc & 0))

        _smid_kernel = smid_kernel
    return _smid_kernel


def smids_of(stream, programs=20000, spin=2000):
    """The set of %smid values a Triton kernel of `programs` programs sees on stream."""
    k = _get_smid_kernel()
    with torch.cuda.stream(stream):   # the fill and the kernel on the same stream, in order
        out = torch.full((programs,), -1, device="cuda", dtype=torch.int32)
        k[(programs,)](out, spin)
    stream.synchronize()
    v = out.cpu().tolist()
    if -1 in v:
        raise RuntimeError("SM probe: %d of %d programs did not run" % (v.count(-1), programs))
    return set(v)


# ------------------------------------------------------------------ LS under a BE storm


class _Storm:
    """Keeps `depth` BE requests queued on be_stream (one running, the rest waiting), from
    one thread, polled: top_up() retires finished ones (timestamped) and issues new ones."""

    def __init__(self, be_issue, be_stream, depth):
        self.issue = be_issue
        self.stream = be_stream
        self.depth = depth
        self.free = [torch.cuda.Event() for _ in range(depth + 1)]
        self.inflight = collections.deque()
        self.done = []   # completion times (ns, when observed)
        self.issued = 0

    def top_up(self):
        while self.inflight and self.inflight[0].query():
            self.free.append(self.inflight.popleft())
            self.done.append(_now())
        while len(self.inflight) < self.depth:
            with torch.cuda.stream(self.stream):
                self.issue()
            ev = self.free.pop()
            ev.record(self.stream)
            self.inflight.append(ev)
            self.issued += 1

    def drain(self):
        while self.inflight:
            self.inflight.popleft().synchronize()
            self.done.append(_now())


def ls_under_storm(ls_issue, ls_stream, n, warmup, be_issue=None, be_stream=None, depth=2, be_lead_ms=50):
    """LS requests back to back (each waited for by polling its event) while BE, if given,
    always has `depth` requests queued. Returns {ls_ns: [...], be_done: count in the LS
    window, window_ns, be_issued}. BE starts be_lead_ms before the first LS request."""
    storm = _Storm(be_issue, be_stream, depth) if be_issue is not None else None
    ev = torch.cuda.Event()
    lat = []
    with torch.no_grad():
        if storm is not None:
            t_lead = _now() + be_lead_ms * 1_000_000
            while _now() < t_lead:
                storm.top_up()
        t_start = None
        for i in range(warmup + n):
            if i == warmup:
                t_start = _now()
            t0 = _now()
            with torch.cuda.stream(ls_stream):
                ls_issue()
            ev.record(ls_stream)
            if storm is not None:
                storm.top_up()
            while not ev.query():
                if storm is not None:
                    storm.top_up()
            t1 = _now()
            if i >= warmup:
                lat.append(t1 - t0)
        t_end = _now()
        be_done = 0
        if storm is not None:
            be_done = sum(1 for t in storm.done if t_start <= t <= t_end)
            storm.drain()
        ls_stream.synchronize()
    return {"ls_ns": lat, "be_done": be_done, "window_ns": t_end - t_start,
            "be_issued": storm.issued if storm else 0}


def be_alone(be_issue, be_stream, seconds, depth=2):
    """BE throughput alone: requests completed per second over `seconds` (after 0.1 s warm-up)."""
    storm = _Storm(be_issue, be_stream, depth)
    with torch.no_grad():
        t_warm = _now() + 100_000_000
        while _now() < t_warm:
            storm.top_up()
        t0 = _now()
        t_end = t0 + int(seconds * 1e9)
        while _now() < t_end:
            storm.top_up()
        t1 = _now()
        n = sum(1 for t in storm.done if t0 <= t <= t1)
        storm.drain()
    return {"be_done": n, "window_ns": t1 - t0, "be_rps": n / ((t1 - t0) / 1e9)}
