#!/usr/bin/env bash
# test/gpu/llvm_ir_ptx.sh -- PTX for the GPU suite through tidal-opt's LLVM-IR path (no GPU needed).
#
#   test/gpu/llvm_ir_ptx.sh [OUTDIR]          (default: <repo>/build-llvm-gpu)
#
# Compiles test/gpu/kernels/*.cu to NVVM IR with clang-22 (-x cuda --cuda-device-only
# -emit-llvm -O3 --cuda-gpu-arch=sm_90a -nocudalib, with CUDA's libdevice linked in as builtin
# bitcode: fmaf, min, max become __nv_* calls that -nocudalib alone leaves unresolved), then
# with tidal-opt:
#   OUTDIR/ll/<k>.ll          the NVVM IR
#   OUTDIR/orig/<k>.ptx       tidal-opt <k>.ll --emit=ptx            (plain NVPTX lowering)
#   OUTDIR/tidal/<k>.ptx      tidal-opt <k>.ll --emit=ptx -p tidal   (the PTX pass on that PTX)
#   OUTDIR/tidal-ir/<k>.ll    tidal-opt <k>.ll --emit=llvm -p tidal  (the transform at IR level)
#   OUTDIR/tidal-ir/<k>.ptx   that IR lowered by tidal-opt --emit=ptx
#   */<k>.report              tidal-opt --report
# and assembles every PTX file with ptxas -arch=sm_90a. The harness takes a pair of
# directories: test/gpu/run.sh --ptx-dirs OUTDIR/orig OUTDIR/tidal --only "$(cat OUTDIR/only-tidal)"
# (and OUTDIR/tidal-ir with OUTDIR/only-tidal-ir). The Triton specs need Triton's PTX and are
# left out of the --only lists. Exit status 0 when every step worked; a missing clang-22 or
# tidal-opt without the LLVM path skips with status 0 and says so.
#
# Environment: TIDAL_OPT (default <repo>/build-llvm/bin/tidal-opt), CLANG (clang-22),
#   CUDA_HOME (/usr/local/cuda), JOBS (8).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
O=${1:-$root/build-llvm-gpu}
TIDAL_OPT=${TIDAL_OPT:-$root/build-llvm/bin/tidal-opt}
CLANG=${CLANG:-$(command -v clang-22 || command -v /usr/lib/llvm-22/bin/clang || true)}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
PTXAS=$CUDA_HOME/bin/ptxas; [[ -x $PTXAS ]] || PTXAS=$(command -v ptxas || true)
JOBS=${JOBS:-8}

skip() { echo "llvm_ir_ptx: skipped: $*"; exit 0; }
[[ -n $CLANG && -x $CLANG ]] || skip "clang-22 not found (apt-get install clang-22, or set CLANG)"
[[ -x $TIDAL_OPT ]] || skip "no tidal-opt at $TIDAL_OPT (build build-llvm, or set TIDAL_OPT)"
"$TIDAL_OPT" --help | grep -q -- '--emit=KIND' || skip "$TIDAL_OPT has no LLVM-IR path"
[[ -n $PTXAS ]] || skip "ptxas not found (set CUDA_HOME)"
[[ -f $CUDA_HOME/nvvm/libdevice/libdevice.10.bc ]] || skip "no $CUDA_HOME/nvvm/libdevice/libdevice.10.bc"

rm -rf "$O/ll" "$O/orig" "$O/tidal" "$O/tidal-ir"
mkdir -p "$O/ll" "$O/orig" "$O/tidal" "$O/tidal-ir" "$O/logs"
export CLANG TIDAL_OPT PTXAS CUDA_HOME O

# one kernel file: IR, three PTX flavours, ptxas; one status line
one() {
  f=$1; k=$(basename "$f" .cu)
  if ! "$CLANG" -x cuda --cuda-device-only -emit-llvm -S -O3 --cuda-gpu-arch=sm_90a -nocudalib \
       -Xclang -mlink-builtin-bitcode -Xclang "$CUDA_HOME/nvvm/libdevice/libdevice.10.bc" \
       --cuda-path="$CUDA_HOME" -Wno-unknown-cuda-version "$f" -o "$O/ll/$k.ll" >"$O/logs/$k.clang.log" 2>&1; then
    echo "FAILED $k: clang: $(head -3 "$O/logs/$k.clang.log" | tr '\n' ' ')"; return
  fi
  "$TIDAL_OPT" "$O/ll/$k.ll" --emit=ptx -o "$O/orig/$k.ptx" 2>"$O/logs/$k.orig.log" ||
    { echo "FAILED $k: --emit=ptx: $(head -3 "$O/logs/$k.orig.log" | tr '\n' ' ')"; return; }
  # --assume-balanced-arrive: as test/gpu/run.sh (the suite's bar.arrive kernels balance their arrivals)
  "$TIDAL_OPT" "$O/ll/$k.ll" --emit=ptx -p tidal --assume-balanced-arrive --report -o "$O/tidal/$k.ptx" >"$O/tidal/$k.report" 2>&1 ||
    { echo "FAILED $k: --emit=ptx -p tidal: $(tail -3 "$O/tidal/$k.report" | tr '\n' ' ')"; return; }
  "$TIDAL_OPT" "$O/ll/$k.ll" --emit=llvm -p tidal --assume-balanced-arrive --report -o "$O/tidal-ir/$k.ll" >"$O/tidal-ir/$k.report" 2>&1 ||
    { echo "FAILED $k: --emit=llvm -p tidal: $(tail -3 "$O/tidal-ir/$k.report" | tr '\n' ' ')"; return; }
  "$TIDAL_OPT" "$O/tidal-ir/$k.ll" --emit=ptx -o "$O/tidal-ir/$k.ptx" 2>"$O/logs/$k.tidal-ir.log" ||
    { echo "FAILED $k: lowering the rewritten IR: $(head -3 "$O/logs/$k.tidal-ir.log" | tr '\n' ' ')"; return; }
  for d in orig tidal tidal-ir; do
    "$PTXAS" -arch=sm_90a "$O/$d/$k.ptx" -o /dev/null >"$O/logs/$k.$d.ptxas.log" 2>&1 ||
      { echo "FAILED $k: ptxas $d/$k.ptx: $(head -3 "$O/logs/$k.$d.ptxas.log" | tr '\n' ' ')"; return; }
  done
  summary() { sed -n 1p "$1" | sed 's/^.*: //'; }
  echo "ok $k: tidal: $(summary "$O/tidal/$k.report"); tidal-ir: $(summary "$O/tidal-ir/$k.report")"
}
export -f one

printf '%s\n' "$here"/kernels/*.cu | xargs -P "$JOBS" -I{} bash -c 'one {}' | sort | tee "$O/status.txt"
{ grep -h '^  refused' "$O"/tidal/*.report | sed 's/^/tidal:    /'
  grep -h '^  refused' "$O"/tidal-ir/*.report | sed 's/^/tidal-ir: /'; } | tee "$O/refusals.txt"

# --only lists: the CUDA specs (specs.inc: mk("spec", "file", "entry", ...)); for tidal-ir,
# without specs whose kernel the IR transform refused for an IR-only reason (ir-*), since
# the harness then sees a module without the rewrite.
specs=$(grep -o 'mk("[A-Za-z0-9_]*", "[A-Za-z0-9_/]*", "[A-Za-z0-9_]*"' "$here/specs.inc" | sed 's/mk(//; s/"//g; s/,//g')
only_tidal=() only_ir=() left_out=()
while read -r spec file entry; do
  [[ $file == triton/* ]] && continue
  only_tidal+=("=$spec")   # exact names: "histogram" would also pick triton_histogram_i32
  if grep -q "^  refused   $entry (line [0-9]*): ir-" "$O/tidal-ir/$file.report" 2>/dev/null; then
    left_out+=("$spec")
  else
    only_ir+=("=$spec")
  fi
done <<<"$specs"
(IFS=,; echo "${only_tidal[*]}") >"$O/only-tidal"
(IFS=,; echo "${only_ir[*]}") >"$O/only-tidal-ir"
echo "tidal-ir leaves out (IR-only refusals): ${left_out[*]:-none}"

nfail=$(grep -c '^FAILED' "$O/status.txt" || true)
nok=$(grep -c '^ok' "$O/status.txt" || true)
echo
echo "On the GPU machine (from the repo root):"
echo "  test/gpu/run.sh --ptx-dirs ${O#$root/}/orig ${O#$root/}/tidal --only $(cat "$O/only-tidal")"
echo "  test/gpu/run.sh --ptx-dirs ${O#$root/}/orig ${O#$root/}/tidal-ir --only $(cat "$O/only-tidal-ir")"
echo "$nok passed, $nfail failed"
(( nfail == 0 ))
