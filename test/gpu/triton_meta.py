#!/usr/bin/env python3
"""Print the launch metadata Triton records for the corpus kernels the GPU suite uses.

Usage: python3 triton_meta.py [NAME ...]     (needs triton==3.6.0; no GPU)

The PTX in test/corpus/triton/local/ does not carry Triton's metadata; the harness needs
two numbers from it: `shared` (bytes of dynamic shared memory, the .extern global_smem)
and num_warps (block size / 32, also visible as .reqntid). This script recompiles each
named kernel through gen_triton_corpus.py's own spec, prints those numbers, and says
whether the regenerated PTX is byte-identical to the stored file. The values are copied
into the Triton specs in harness.cu (kTritonShared*).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.realpath(os.path.join(HERE, "..", "corpus", "triton"))
sys.path.insert(0, CORPUS)
if os.path.exists("/usr/local/cuda/bin/ptxas"):
    os.environ.setdefault("TRITON_PTXAS_PATH", "/usr/local/cuda/bin/ptxas")
import tempfile  # noqa: E402
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="tidal_triton_meta_")
import gen_triton_corpus as g  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

def _strip(ptx):
    """Drop `.file` lines: they hold the absolute paths of the Python sources."""
    return "\n".join(l for l in ptx.splitlines() if not l.lstrip().startswith(".file"))


DEFAULT = ["vec_add_f32", "softmax_row_f32_1024", "layernorm_fwd_f16", "matmul_f16_128x128x64_w4_s4"]


def main():
    names = sys.argv[1:] or DEFAULT
    specs = {s["name"]: s for s in g.specs()}
    for n in names:
        spec = specs[n]
        fn = spec["fn"]
        sig = {a: ("constexpr" if a in spec["const"] else spec["sig"][a]) for a in fn.arg_names}
        div = spec["div"]
        if div is None:
            div = [a for a, t in spec["sig"].items() if t.startswith("*")]
        attrs = {(fn.arg_names.index(a), ): [["tt.divisibility", 16]] for a in div}
        src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=dict(spec["const"]), attrs=attrs)
        k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(spec["opts"]))
        md = k.metadata
        stored = os.path.join(CORPUS, "local", n + ".ptx")
        same = os.path.exists(stored) and _strip(open(stored).read()) == _strip(k.asm["ptx"])
        print("%-40s entry=%-24s shared=%-7d num_warps=%-3d num_ctas=%d  identical_to_stored=%s"
              % (n, md.name, md.shared, md.num_warps, md.num_ctas, same))


if __name__ == "__main__":
    main()
