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
    end = text.index("\n}\n", m.start()) + 3
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
                     ("no-phys", cut_phys), ("cut-all", cut_all)]:
        vs[name] = edit(t, fn)
    for name, text in vs.items():
        path = "%s/%s.ptx" % (out, name)
        open(path, "w").write(text)
        print("%s=%s" % (name, path), end=" ")
    print()


main()
