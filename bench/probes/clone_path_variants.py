#!/usr/bin/env python3
"""bench/probes/clone_path_variants.py -- write the PTX variants clone_path.cu times.

Input: the default tidal rewrite of bench/gpu/bench_kernels.cu (its `tiny__tidal_reshaped`)
and the unmodified PTX. Each variant cuts one part of the clone's path for the covering
static launch (workers = blocks: the path runs prologue, fast check, the leader's START
snippet, the body, the claim test, exit). Cut parts are never needed on that path; the
variants are for timing only, not correct clones. Usage: clone_path_variants.py
TIDAL.ptx ORIG.ptx OUTDIR; prints NAME=FILE arguments for clone_path."""
import re
import sys

ENTRY = "tiny__tidal_reshaped"


def entry_span(text, name):
    m = re.search(r"\.visible \.entry %s\(" % re.escape(name), text)
    if not m:
        sys.exit("no entry %s" % name)
    # the entry's last "}" at column 0 before the next entry (the protocol's snippets are
    # blocks that close at column 0 too)
    nxt = re.compile(r"\n(\.visible |\.weak )?\.(entry|func) ").search(text, m.end())
    end = text.rindex("\n}\n", m.start(), nxt.start() + 1 if nxt else len(text)) + 3
    return m.start(), end


def edit(text, fn):
    a, b = entry_span(text, ENTRY)
    body = text[a:b]
    new = fn(body)
    if new == body:
        sys.exit("variant changed nothing")
    return text[:a] + new + text[b:]


def cut_gridcheck(e):
    return re.sub(r"\tmul\.wide\.u32 \t%tdl_a0, %tdl_nx, %tdl_ny;\n(.*\n){3}\t@%tdl_p trap;\n", "", e, count=1)


def cut_gridid(e):
    return e.replace("\tmov.u64 \t%tdl_a0, %gridid;\n\tor.b64 \t%tdl_key, %tdl_key, %tdl_a0;\n", "")


def cut_start(e):
    return e.replace("\t@!%tdl_leader bra \t$tdl_started;", "\tbra.uni \t$tdl_started;", 1)


def cut_phys(e):
    return re.sub(r"\tmov\.u32 \t%tdl_t0, %nctaid\.x;\n\tmov\.u32 \t%tdl_t1, %nctaid\.y;\n\tmul\.lo\.u32 \t%tdl_phys.*\n"
                  r"\tmov\.u32 \t%tdl_t1, %nctaid\.z;\n\tmul\.lo\.u32 \t%tdl_phys.*\n", "", e)


def cut_all(e):
    return cut_phys(cut_start(cut_gridid(cut_gridcheck(e))))


# Session 19: what the clone still pays after cut-all (+0.32 against bare's +0.03).
def cut_loop(e):
    """After its one logical block the worker exits (the covering launch has one per worker)."""
    return e.replace("\tadd.u32 \t%tdl_lin, %tdl_lin, 1;\n\tsetp.lt.u32 \t%tdl_p, %tdl_lin, %tdl_b1;\n"
                     "\t@!%tdl_p bra.uni \t$tdl_claim;\n", "\texit;\n", 1)


def cut_reload(e):
    return re.sub(r"(\$tdl_logical:\n)\tld\.param\.v2\.u32 .*\n\tld\.param\.u32 .*\n\tmul\.lo\.u32 .*\n\tmul\.lo\.u32 .*\n",
                  r"\1", e, count=1)


def cut_sh(e):
    return re.sub(r"\tld\.param\.u32 \t%tdl_t0, \[__tidal_launch\+56\];\n\tcvt\.u64\.u32 \t%tdl_sh, %tdl_t0;\n"
                  r"\tmov\.u64 \t%tdl_a0, \w+;\n\tadd\.u64 \t%tdl_sh, %tdl_sh, %tdl_a0;\n", "", e, count=1)


def cut_leader(e):
    return re.sub(r"\tmov\.u32 \t%tdl_t0, %tid\.x;\n\tmov\.u32 \t%tdl_t1, %tid\.y;\n.*\n\tmov\.u32 \t%tdl_t1, %tid\.z;\n.*\n",
                  "\tmov.u32 \t%tdl_t0, %tid.x;\n", e, count=1)


def cut_divcheck(e):
    return re.sub(r"\tsetp\.eq\.u32 \t%tdl_p, %tdl_total, %tdl_nx;\n\t@%tdl_p bra\.uni \t\$tdl_body;\n(\t(rem|div)\.u32 .*\n){4}",
                  "", e, count=1)


def cut_pid(e):
    return re.sub(r"\tmov\.u32 \t%tdl_t0, %ctaid\.z;\n(.*\n){5}\tmad\.lo\.u32 \t%tdl_pid, %tdl_pid, %tdl_t1, %tdl_t0;\n",
                  "\tmov.u32 \t%tdl_pid, %ctaid.x;\n", e, count=1)


def cut_values(e):
    """The prologue's first, partial load of the grid (for the overflow check) and the
    key, hist and slot/epoch loads: the fast path needs none of them."""
    e = re.sub(r"\tld\.param\.v2\.u32 \t\{%tdl_slotix, %tdl_epoch\}.*\n", "", e, count=1)
    e = re.sub(r"\tld\.param\.u64 \t%tdl_key, .*\n", "", e, count=1)
    e = re.sub(r"\tor\.b64 \t%tdl_key, .*\n", "", e, count=1)
    return re.sub(r"\tld\.param\.u64 \t%tdl_hist, .*\n", "", e, count=1)


LEAN = [cut_gridcheck, cut_gridid, cut_start, cut_phys, cut_loop, cut_reload, cut_sh, cut_leader, cut_divcheck,
        cut_pid, cut_values]


def checked(fn):
    def run(e):
        n = fn(e)
        if n == e:
            sys.exit("%s changed nothing" % fn.__name__)
        return n
    return run


def lean(e):
    for fn in LEAN:
        e = checked(fn)(e)
    return e


def lean_but(keep):
    def run(e):
        for fn in LEAN:
            if fn is not keep:
                e = checked(fn)(e)
        return e
    return run


def bare(orig):
    """The least a clone can be: the parameter, a test of its partition, the body on ctaid."""
    a, b = entry_span(orig, "tiny")
    e = orig[a:b].replace(".entry tiny(", ".entry " + ENTRY + "(")
    e = e.replace("\t.param .u64 tiny_param_0\n", "\t.param .u64 tiny_param_0,\n\t.param .align 8 .b8 __tidal_launch[64]\n")
    e = e.replace("{\n", "{\n\t.reg .pred %tdl_p;\n\t.reg .u64 %tdl_ctl;\n\tld.param.u64 \t%tdl_ctl, [__tidal_launch];\n"
                  "\tsetp.eq.u64 \t%tdl_p, %tdl_ctl, 0;\n\t@%tdl_p trap;\n", 1)
    return orig[:a] + e + orig[b:]


def main():
    tidal, orig, out = sys.argv[1:4]
    t = open(tidal).read()
    o = open(orig).read()
    vs = {"orig": o, "clone": t, "bare": bare(o)}
    for name, fn in [("no-gridcheck", cut_gridcheck), ("no-gridid", cut_gridid), ("no-start", cut_start),
                     ("no-phys", cut_phys), ("cut-all", cut_all), ("no-loop", cut_loop), ("no-reload", cut_reload),
                     ("no-sh", cut_sh), ("no-leader", cut_leader), ("no-divcheck", cut_divcheck), ("no-pid", cut_pid),
                     ("no-values", cut_values), ("lean", lean)] + [
                         ("lean+" + fn.__name__[4:], lean_but(fn)) for fn in LEAN]:
        vs[name] = edit(t, fn)
    for name, text in vs.items():
        path = "%s/%s.ptx" % (out, name)
        open(path, "w").write(text)
        print("%s=%s" % (name, path), end=" ")
    print()


main()
