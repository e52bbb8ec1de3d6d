#!/usr/bin/env bash
# The rewrite's verdicts over the whole corpus, per corpus and per refusal class.
#
#   scripts/corpus-census.sh [BUILD_DIR] [TIDAL_OPT]
#
# Runs `tidal-opt -p tidal --report` on every corpus PTX file: BUILD_DIR/corpus/*/ (nvcc
# sm_90, sm_90a, -G, -lineinfo; llc; Triton generated at build time), the committed
# Triton PTX (test/corpus/triton/*/) and TVM's (test/corpus/tvm/local/, not its
# *.tidal.ptx outputs), and with an LLVM-enabled tidal-opt the IR-level rewrite of
# test/corpus/llvm/*.ll (llvm-ir). Prints one line per corpus ("cuda: N kernels, N rewritten,
# N refused (P%)"), then the count of each exit mode and refusal class, then every
# refused kernel. TIDAL_OPT (default BUILD_DIR/bin/tidal-opt) may be another build,
# e.g. one of main, to compare. docs/design.md "Refusals" quotes its counts.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build}
opt=${2:-$build/bin/tidal-opt}
[[ -x $opt ]] || { echo "corpus-census: no tidal-opt at $opt (make build)" >&2; exit 2; }
shopt -s nullglob
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT

verdicts() {   # CORPUS FILE [tidal-opt args...]: "CORPUS FILE KERNEL VERDICT CLASS"
  local c=$1 f=$2; shift 2
  "$opt" "$f" "$@" -p tidal --report -o /dev/null 2>&1 |
    sed -n 's/^  \(rewritten\|refused\)  *\([^ ]*\) (line [0-9]*): \([a-z-]*\).*/\2 \1 \3/p' |
    sed "s|^|$c $f |"
}

for f in "$build"/corpus/*/*.ptx test/corpus/triton/*/*.ptx test/corpus/tvm/local/*.ptx; do
  case $f in
    *.tidal.ptx) continue ;;
    "$build"/corpus/llc/*) c=llvm ;;
    "$build"/corpus/triton-gen/* | test/corpus/triton/*) c=triton ;;
    test/corpus/tvm/*) c=tvm ;;
    *) c=cuda ;;
  esac
  verdicts "$c" "$f" >>"$rows"
done
# the IR path, where this tidal-opt has it (built with LLVM 22)
if "$opt" test/corpus/llvm/saxpy_annotated.ll --emit=llvm -o /dev/null >/dev/null 2>&1; then
  for f in test/corpus/llvm/*.ll; do verdicts llvm-ir "$f" >>"$rows"; done
else
  echo "(no LLVM-IR path in $opt: test/corpus/llvm/*.ll left out)"
fi

awk '{ n[$1]++; if ($4 == "refused") r[$1]++; else w[$1]++ }
     END { for (c in n) printf "%s: %d kernels, %d rewritten, %d refused (%.1f%%)\n", c, n[c], w[c], r[c], 100 * r[c] / n[c] }' \
  "$rows" | sort
echo
awk '{ print $1, $4, $5 }' "$rows" | sort | uniq -c | awk '{ printf "  %5d  %s %s %s\n", $1, $2, $3, $4 }'
echo
awk '$4 == "refused" { print "  " $1 " " $2 ": " $3 ": " $5 }' "$rows"
