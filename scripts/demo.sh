#!/usr/bin/env bash
# `make demo`: show tidal-opt on the bundled example kernels.
#
#   scripts/demo.sh [BUILD_DIR]
#
# examples/demo/kernels.cu is compiled by test/corpus/CMakeLists.txt (target
# tidal_corpus) to BUILD_DIR/corpus/nvcc-sm90a/kernels.ptx. Steps:
#   1. tidal-opt --stats on it (per-kernel instructions, blocks, barriers, ...);
#   2. a parse + re-print round trip, checked byte-identical with cmp;
#   3. ptxas -arch=sm_90a accepts the re-printed PTX (when ptxas is present).
#   4. the tidal rewrite (tidal-opt -p tidal --report) of every bundled example
#      kernel, and ptxas on the rewritten PTX;
#   5. on a machine with a GPU, examples/colocate (two tenants, SMs moved live with
#      tidalctl); without one the demo says so and shows that example's rewrite report.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build}
opt=$build/bin/tidal-opt
ptxas=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
rel=corpus/nvcc-sm90a/kernels.ptx
ptx=$build/$rel
work=$build/demo
mkdir -p "$work"

if [[ -t 1 ]]; then
  step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
else
  step() { printf '\n==> %s\n' "$*"; }
fi
run() { printf '$ %s\n' "$*"; "$@"; }

[[ -x $opt ]] || { echo "demo: $opt not built (run: make build)" >&2; exit 1; }

if [[ ! -f examples/demo/kernels.cu ]]; then
  echo "demo: examples/demo/kernels.cu is missing" >&2
  exit 1
fi
step "compiling examples/demo/kernels.cu to PTX (nvcc -arch=sm_90a)"
if ninja -C "$build" -t query "$rel" >/dev/null 2>&1; then
  ninja -C "$build" "$rel"
else
  ninja -C "$build" tidal_corpus
fi
[[ -f $ptx ]] || { echo "demo: $ptx was not produced" >&2; exit 1; }
echo "$ptx: $(wc -l < "$ptx") lines, $(grep -c '^\.visible \.entry\|^\.entry' "$ptx" || true) kernel(s)"

step "statistics (tidal-opt --stats)"
run "$opt" --stats "$ptx"

step "round trip: parse and re-print, then compare bytes"
run "$opt" "$ptx" -o "$work/kernels.roundtrip.ptx"
run cmp "$ptx" "$work/kernels.roundtrip.ptx"
echo "round trip is byte-identical"

if [[ -x $ptxas ]]; then
  step "ptxas accepts the re-printed PTX"
  run "$ptxas" -arch=sm_90a "$work/kernels.roundtrip.ptx" -o "$work/kernels.cubin"
  echo "ptxas: ok ($(stat -c %s "$work/kernels.cubin") byte cubin)"
fi

step "tidal rewrite: SM gate + persistent logical blocks (tidal-opt -p tidal --report)"
run "$opt" -p tidal --report "$ptx" -o "$work/kernels.tidal.ptx"
echo "$(grep -c '__tidal_reshaped(' "$work/kernels.tidal.ptx" || true) reshaped clone(s) for runtime launches"
if [[ -x $ptxas ]]; then
  run "$ptxas" -arch=sm_90a "$work/kernels.tidal.ptx" -o "$work/kernels.tidal.cubin"
  echo "ptxas: rewritten PTX ok ($(stat -c %s "$work/kernels.tidal.cubin") byte cubin)"
fi

step "rewrite report over the whole corpus"
total=0; rewritten=0; refused=0
for f in "$build"/corpus/*/*.ptx test/corpus/triton/*/*.ptx; do
  [[ -f $f ]] || continue
  out=$("$opt" -p tidal --report "$f" -o /dev/null)
  k=$(sed -n '1s/.*: \([0-9]*\) kernels, \([0-9]*\) rewritten, \([0-9]*\) refused/\1 \2 \3/p' <<<"$out")
  read -r a b c <<<"$k"
  total=$((total + a)); rewritten=$((rewritten + b)); refused=$((refused + c))
  grep '  refused ' <<<"$out" | sed "s|^  refused  *|  $(basename "$f"): refused |" || true
done
echo "corpus: $total kernels, $rewritten rewritten, $refused refused"

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  step "GPU present: examples/colocate (an LS and a BE tenant, SMs moved live with tidalctl)"
  run examples/colocate/run.sh "$build"
  echo "(the full correctness suite on the device: make gpu-check)"
else
  step "no GPU on this machine: examples/colocate (LS + BE tenants, SMs moved live) needs one"
  echo "the rewritten kernels above run on a GPU through libtidal: examples/colocate/run.sh, make gpu-check"
  echo "rewrite report of examples/colocate/colocate.cu (tidal-nvcc -ptx | tidal-opt --report):"
  if [[ -x $build/bin/tidal-nvcc ]]; then
    run "$build/bin/tidal-nvcc" --tidal-off -arch=sm_90a -ptx examples/colocate/colocate.cu -o "$work/colocate.ptx"
    run "$opt" -p tidal --report "$work/colocate.ptx" -o /dev/null
  fi
fi

step "demo finished"
