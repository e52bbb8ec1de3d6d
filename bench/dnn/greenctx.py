"""Green-context streams made WITHOUT tidal (cuda.bindings.driver), as PyTorch streams.

    gc = GreenSplit()                    # the device's 2-SM groups, each probed for its SM ids
    s  = gc.stream("0-65", priority=0)   # torch.cuda.ExternalStream on exactly SMs 0-65

cuDevSmResourceSplitByCount(CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING, minCount 2)
gives the groups (on the H200, 66 groups of SMs {2i, 2i+1}, but not in SM order: group 64
is {120,121}; bench/results/2026-12-01-session4/green-probe.log), so each group's SMs are
found by running a %smid kernel on a one-group green context. A set is then the union of the
groups inside it (cuDevResourceGenerateDesc over them), cuGreenCtxCreate(desc,
CU_GREEN_CTX_DEFAULT_STREAM) and cuGreenCtxStreamCreate(CU_STREAM_NON_BLOCKING, priority).
A set that is not exactly a union of groups is an error. Every driver call is checked.

Such contexts run thread-block clusters of at most 2 blocks: cuDNN's and cuBLASLt's sm90
kernels fail there (docs/performance.md §16.3). So a set that is also a union of the
co-schedulable 8-SM groups (the split without the flag, minCount 8: 15 groups on the H200,
SMs 0-63 are groups 0-7; session 16 call 1) gets its context made of those instead, which
runs clusters of up to 8 - the same rule libtidal's partition streams follow. Use
cluster_set(smset) for the largest such subset of a set.
"""
import torch

from common import format_smset, parse_smset
from measure import smids_of


def _cu():
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        from cuda import cuda as cu   # cuda-python < 12.6 layout
    return cu


def _check(res, what):
    """cuda.bindings calls return (CUresult, values...): raise on an error, return the values."""
    cu = _cu()
    err = res[0] if isinstance(res, tuple) else res
    if err != cu.CUresult.CUDA_SUCCESS:
        try:
            name = cu.cuGetErrorName(err)[1].decode()
        except Exception:  # noqa: BLE001
            name = str(err)
        raise RuntimeError("%s: %s" % (what, name))
    if isinstance(res, tuple):
        return res[1] if len(res) == 2 else res[1:]
    return None


def _split_flag(cu):
    for enum in ("CUdevSmResourceSplitByCount_flags", "CUdevSmResourceSplit_flags"):
        e = getattr(cu, enum, None)
        if e is not None and hasattr(e, "CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING"):
            return int(e.CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING)
    return 1   # its value in cuda.h (CUDA 12.4 - 13.x)


class GreenSplit:
    def __init__(self, device=0, min_count=2, log=None, flags=None):
        cu = _cu()
        self.cu = cu
        torch.cuda.init()
        torch.empty(1, device="cuda")   # PyTorch's primary context exists and is current
        _check(cu.cuInit(0), "cuInit")
        self.dev = _check(cu.cuDeviceGet(device), "cuDeviceGet")
        self.nsm = torch.cuda.get_device_properties(device).multi_processor_count
        res = _check(cu.cuDeviceGetDevResource(self.dev, cu.CUdevResourceType.CU_DEV_RESOURCE_TYPE_SM),
                     "cuDeviceGetDevResource(SM)")
        self.log = log
        self.flags = _split_flag(cu) if flags is None else flags
        groups, n, remaining = _check(cu.cuDevSmResourceSplitByCount(self.nsm, res, self.flags, min_count),
                                      "cuDevSmResourceSplitByCount(flags %d, minCount %d)" % (self.flags, min_count))
        self.min_count = min_count
        self._cluster = None
        self.groups = list(groups)[:n]
        self.remaining_sms = int(remaining.sm.smCount)
        self.group_sms = []
        self._keep = []   # (ctx, stream) of every stream handed out
        for i, g in enumerate(self.groups):
            ctx, s = self._make([g], 0)
            try:
                sms = smids_of(torch.cuda.ExternalStream(int(s)), programs=2000, spin=200)
            finally:
                torch.cuda.synchronize()
                _check(cu.cuStreamSynchronize(s), "cuStreamSynchronize")
                _check(cu.cuStreamDestroy(s), "cuStreamDestroy")
                _check(cu.cuGreenCtxDestroy(ctx), "cuGreenCtxDestroy")
            self.group_sms.append(sorted(sms))
        seen = [s for g in self.group_sms for s in g]
        if len(seen) != len(set(seen)):
            raise RuntimeError("green groups overlap: %s" % self.group_sms)
        if log:
            log("green split: %d groups of %d SMs (%d SMs left over); first groups %s" % (
                len(self.groups), min_count, self.remaining_sms, self.group_sms[:4]))

    def cluster_grain(self):
        """The co-schedulable 8-SM groups (a GreenSplit of their own, measured once)."""
        if self._cluster is None:
            self._cluster = GreenSplit(min_count=8, flags=0, log=self.log) if self.min_count < 8 else self
        return self._cluster

    def cluster_set(self, smset):
        """The union of the 8-SM groups inside smset, as an SM-set string ("" when none)."""
        g = self.cluster_grain()
        want = set(parse_smset(smset, self.nsm))
        return format_smset(s for grp in g.group_sms if set(grp) <= want for s in grp)

    def _make(self, groups, priority):
        cu = self.cu
        desc = _check(cu.cuDevResourceGenerateDesc(groups, len(groups)), "cuDevResourceGenerateDesc")
        flag = cu.CUgreenCtxCreate_flags.CU_GREEN_CTX_DEFAULT_STREAM
        ctx = _check(cu.cuGreenCtxCreate(desc, self.dev, int(flag)), "cuGreenCtxCreate")
        s = _check(cu.cuGreenCtxStreamCreate(ctx, int(cu.CUstream_flags.CU_STREAM_NON_BLOCKING), priority),
                   "cuGreenCtxStreamCreate")
        return ctx, s

    def groups_for(self, smset):
        want = set(parse_smset(smset, self.nsm))
        pick = [i for i, g in enumerate(self.group_sms) if set(g) <= want]
        got = set(s for i in pick for s in self.group_sms[i])
        if got != want:
            raise ValueError("SM set %s is not a union of green groups (groups inside it cover %d of its %d SMs)"
                             % (smset, len(got), len(want)))
        return pick

    def stream(self, smset, priority=0, verify=True):
        """torch.cuda.ExternalStream of a new green context on exactly smset's SMs: of the
        8-SM groups when smset is a union of them (clusters of up to 8 run), else of this
        split's groups."""
        try:
            src = self.cluster_grain()   # self when this split is already of 8-SM groups
            pick = src.groups_for(smset)
        except ValueError:
            src, pick = self, self.groups_for(smset)
        ctx, s = src._make([src.groups[i] for i in pick], priority)
        self._keep.append((ctx, s))
        ext = torch.cuda.ExternalStream(int(s))
        if verify:
            want = set(parse_smset(smset, self.nsm))
            seen = smids_of(ext)
            if not seen <= want:
                raise RuntimeError("green stream %s ran blocks on SMs %s outside it" % (smset, sorted(seen - want)[:8]))
            ext.smids_seen = len(seen)
        return ext

    def close(self):
        cu = self.cu
        if self._cluster is not None and self._cluster is not self:
            self._cluster.close()
        torch.cuda.synchronize()
        for ctx, s in self._keep:
            _check(cu.cuStreamSynchronize(s), "cuStreamSynchronize")
            _check(cu.cuStreamDestroy(s), "cuStreamDestroy")
            _check(cu.cuGreenCtxDestroy(ctx), "cuGreenCtxDestroy")
        self._keep = []
