#!/usr/bin/env bash
# test/gpu/tvm_ptx.sh -- PTX pairs for the TVM GPU check (no GPU, no TVM needed).
#
#   test/gpu/tvm_ptx.sh [OUTDIR]          (default: <repo>/build-tvm-gpu)
#
# From the committed TVM corpus (test/corpus/tvm/local: OP.cu, OP.ptx, launch.txt; made by
# gen_tvm_corpus.py with apache-tvm 0.27.0.post1) writes two ORIG/TIDAL pairs of directories
# with one <op>.ptx per operator:
#   OUTDIR/orig/       TVM's PTX as committed (tvm.support.nvcc.compile_cuda with the plain nvcc)
#   OUTDIR/tidal/      that PTX through tidal-opt -p tidal --report (the tidal-opt path)
#   OUTDIR/nvcc-orig/  OP.cu with TVM's nvcc flags through nvcc -arch=sm_90a -ptx
#   OUTDIR/nvcc-tidal/ the same through tidal-nvcc (the "TVM's nvcc is tidal-nvcc" path)
#   */<op>.report      tidal-opt's report; every PTX file is assembled with ptxas -arch=sm_90a
# and builds the harness OUTDIR/run_tvm (test/gpu/tvm/run_tvm.cu, nvcc, -lcuda; needs no GPU).
# On the GPU machine (from the repo root, OUTDIR carried over):
#   OUTDIR/run_tvm OUTDIR/orig OUTDIR/tidal test/corpus/tvm/local/launch.txt
#   OUTDIR/run_tvm OUTDIR/nvcc-orig OUTDIR/nvcc-tidal test/corpus/tvm/local/launch.txt
# (or rebuild run_tvm there with the nvcc line below). Exit status 0 when every step worked.
#
# Why not test/gpu/run.sh --ptx-dirs: its specs (specs.inc) would have to name "tvm/<op>" files
# that run.sh's default mode neither builds nor copies, which would break `make gpu-check`.
#
# Environment: TIDAL_OPT, TIDAL_NVCC (default <repo>/build-tvm/bin/...), CUDA_HOME (/usr/local/cuda).
# (TIDAL_NVCC here names tidal-nvcc; tidal-nvcc itself reads it as the real nvcc, so it is
# not passed on.)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
O=${1:-$root/build-tvm-gpu}
SRC=$root/test/corpus/tvm/local
TIDAL_OPT=${TIDAL_OPT:-$root/build-tvm/bin/tidal-opt}
TIDAL_NVCC=${TIDAL_NVCC:-$root/build-tvm/bin/tidal-nvcc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=$CUDA_HOME/bin/nvcc
PTXAS=$CUDA_HOME/bin/ptxas
# The flags TVM's compile_cuda(compiler="nvcc") passes (see OP.json "ptx_nvcc_cmd").
TVM_FLAGS=(-O3 -U__CUDA_NO_HALF_OPERATORS__ -U__CUDA_NO_HALF_CONVERSIONS__ -U__CUDA_NO_BFLOAT16_OPERATORS__
  -U__CUDA_NO_BFLOAT16_CONVERSIONS__ -U__CUDA_NO_BFLOAT162_OPERATORS__ -U__CUDA_NO_BFLOAT162_CONVERSIONS__
  --expt-relaxed-constexpr --expt-extended-lambda --use_fast_math)

for t in "$TIDAL_OPT" "$TIDAL_NVCC" "$NVCC" "$PTXAS"; do
  [[ -x $t ]] || { echo "tvm_ptx: missing $t (build tidal: cmake -B build-tvm ... && ninja -C build-tvm; or set TIDAL_OPT/TIDAL_NVCC/CUDA_HOME)"; exit 1; }
done
[[ -f $SRC/launch.txt ]] || { echo "tvm_ptx: no $SRC/launch.txt"; exit 1; }

rm -rf "$O/orig" "$O/tidal" "$O/nvcc-orig" "$O/nvcc-tidal"
mkdir -p "$O/orig" "$O/tidal" "$O/nvcc-orig" "$O/nvcc-tidal" "$O/logs"
fail=0
bad() { echo "FAILED $*"; fail=$((fail + 1)); }

for stem in $(grep -v '^#' "$SRC/launch.txt" | awk '{print $2}' | sort -u); do
  cp "$SRC/$stem.ptx" "$O/orig/$stem.ptx"
  # --case-b: run_tvm checks every launch case, case b included
  "$TIDAL_OPT" -p tidal --case-b --report "$O/orig/$stem.ptx" -o "$O/tidal/$stem.ptx" >"$O/tidal/$stem.report" 2>&1 ||
    { bad "$stem: tidal-opt: $(tail -2 "$O/tidal/$stem.report" | tr '\n' ' ')"; continue; }
  "$NVCC" "${TVM_FLAGS[@]}" -arch=sm_90a -ptx "$SRC/$stem.cu" -o "$O/nvcc-orig/$stem.ptx" >"$O/logs/$stem.nvcc.log" 2>&1 ||
    { bad "$stem: nvcc -ptx: $(head -3 "$O/logs/$stem.nvcc.log" | tr '\n' ' ')"; continue; }
  env -u TIDAL_NVCC "$TIDAL_NVCC" --tidal-case-b --tidal-report="$O/nvcc-tidal/$stem.report" "${TVM_FLAGS[@]}" -arch=sm_90a -ptx "$SRC/$stem.cu" \
    -o "$O/nvcc-tidal/$stem.ptx" >"$O/logs/$stem.tidal-nvcc.log" 2>&1 ||
    { bad "$stem: tidal-nvcc -ptx: $(head -3 "$O/logs/$stem.tidal-nvcc.log" | tr '\n' ' ')"; continue; }
  for d in orig tidal nvcc-orig nvcc-tidal; do
    "$PTXAS" -arch=sm_90a "$O/$d/$stem.ptx" -o /dev/null >"$O/logs/$stem.$d.ptxas.log" 2>&1 ||
      bad "$stem: ptxas $d/$stem.ptx: $(head -3 "$O/logs/$stem.$d.ptxas.log" | tr '\n' ' ')"
  done
  for d in tidal nvcc-tidal; do
    grep -q '__tidal_rewritten_v5' "$O/$d/$stem.ptx" || bad "$stem: $d/$stem.ptx not rewritten: $(grep refused "$O/$d/$stem.report" | head -2 | tr '\n' ' ')"
  done
  echo "ok $stem: tidal-opt: $(sed -n 1p "$O/tidal/$stem.report" | sed 's/^.*: //'); tidal-nvcc: $(sed -n 1p "$O/nvcc-tidal/$stem.report" | sed 's/^.*: //')"
done

# The harness (host code only; libcuda from the stubs at link time, the driver's at run time).
"$NVCC" -std=c++17 -O2 -I"$root/runtime" -I"$root/abi" "$here/tvm/run_tvm.cu" -o "$O/run_tvm" \
  -L"$CUDA_HOME/lib64/stubs" -lcuda >"$O/logs/run_tvm.build.log" 2>&1 ||
  bad "building run_tvm: $(head -5 "$O/logs/run_tvm.build.log" | tr '\n' ' ')"

rel=${O#$root/}
echo
echo "On the GPU machine (from the repo root, $rel carried over):"
echo "  $rel/run_tvm $rel/orig $rel/tidal test/corpus/tvm/local/launch.txt"
echo "  $rel/run_tvm $rel/nvcc-orig $rel/nvcc-tidal test/corpus/tvm/local/launch.txt"
echo "$fail failed"
(( fail == 0 ))
