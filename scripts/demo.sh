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
# Later steps (rewrite passes, running on a GPU) get added here.
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

step "demo finished"
