#!/usr/bin/env bash
# bench/colocate/run.sh -- the colocation benchmark (colocate.py), one command on the GPU
# machine: LS from Poisson arrivals, BE closed-loop, every configuration a user could pick.
#
#   bench/colocate/run.sh [--base CONFIGS] [--mps CONFIGS] [--mps-pct LS,BE] [--tidal CONFIGS]
#                         [--reference JSON] [COLOCATE.PY OPTIONS]
#
#   --base CONFIGS   unmodified processes (default alone,none,prio,green,timeslice); its
#                    solo p99 is every process's SLO ("" : skip, then --reference is needed)
#   --mps CONFIGS    under an MPS daemon started here (default mps,mps-pct; "" : skip)
#   --mps-pct LS,BE  the active-thread percentages of mps-pct (default 50,50)
#   --tidal CONFIGS  one process under scripts/tidal-run (default tidal-static,
#                    tidal-sgdrc:demand=66, tidal-sgdrc:demand=96:idle=2000, tidal-gslice; "" : skip)
#   --reference JSON the SLO and capacity from an earlier base run (instead of --base's);
#                    its rows head the merged table
#   --engine E       python (default) or c: every process serves with that loop (colocate.py
#                    --engine); with c the unmodified processes load the libtidal.so built
#                    here for its engine alone (nothing is interposed, no kernel rewritten)
#   other options go to every colocate.py process (e.g. --loads 0.3 --seconds 2 --runs 3)
#
# The unmodified processes compile into ${BENCH_DNN_CACHE:-build/dnn-cache}/unmod; the tidal
# process starts from a copy of that Inductor cache (the same graphs and autotuning choices,
# as bench/dnn does) and recompiles the Triton kernels through tidal-ptxas. Results in
# ${OUT:-bench/results}/colocate/: base/, mps/, mps-pct/, tidal/ (each process's
# colocate.json, log and stderr), then colocate.md, colocate-summary.json and the plots.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
base=alone,none,prio,green,timeslice mps=mps,mps-pct mps_pct=50,50 tidal=tidal-static,tidal-sgdrc:demand=66,tidal-sgdrc:demand=96:idle=2000,tidal-gslice
reference="" engine=python pass=()
while (($#)); do
  case $1 in
    -h | --help) sed -n '2,25p' "$0"; exit 0 ;;
    --base) base=${2?}; shift 2 ;;
    --mps) mps=${2?}; shift 2 ;;
    --mps-pct) mps_pct=${2?}; shift 2 ;;
    --tidal) tidal=${2?}; shift 2 ;;
    --reference) reference=${2?}; shift 2 ;;
    --engine) engine=${2?}; pass+=(--engine "$engine"); shift 2 ;;
    *) pass+=("$1"); shift ;;
  esac
done
[[ $engine == python || $engine == c ]] || { echo "run.sh: --engine $engine: want python or c" >&2; exit 2; }
[[ $mps_pct =~ ^[0-9]+,[0-9]+$ ]] || { echo "run.sh: --mps-pct $mps_pct: want LS,BE percentages" >&2; exit 2; }
[[ -n $base || -n $reference ]] || { echo "run.sh: --base \"\" needs --reference JSON" >&2; exit 2; }
R=${OUT:-$root/bench/results}/colocate
C=${BENCH_DNN_CACHE:-$root/build/dnn-cache}
B=${TIDAL_DNN_BUILD:-$root/build-dnn}
PY=${PYTHON:-python3}
mkdir -p "$R" "$C/unmod/inductor" "$C/unmod/triton" "$C/tidal/inductor" "$C/tidal/triton"
cd "$root" || exit 1
start=$SECONDS
say() { echo "[colocate/run.sh $((SECONDS - start))s] $*"; }
status=0

# one colocate.py process: NAME then its environment and options
process() {
  local name=$1; shift
  mkdir -p "$R/$name"
  say "$name: $*"
  "$@" --out "$R/$name" "${pass[@]}" 2>"$R/$name/err.log" | tee "$R/$name/log"
  local rc=${PIPESTATUS[0]}
  if ((rc != 0)); then
    say "$name: exit $rc; last lines of $R/$name/err.log:"; tail -25 "$R/$name/err.log"; status=1
  fi
  return "$rc"
}
unmod=(env -u LD_PRELOAD -u TRITON_PTXAS_PATH -u TIDAL_PARTITION PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
  TORCHINDUCTOR_CACHE_DIR="$C/unmod/inductor" TRITON_CACHE_DIR="$C/unmod/triton")
build() {
  "$root/bench/dnn/run.sh" --build-only >"$R/build.log" 2>&1 || { say "FAIL: build (log $R/build.log)"; tail -20 "$R/build.log"; exit 1; }
}
if [[ $engine == c ]]; then   # the C engine is libtidal's: the unmodified processes load libtidal.so
  build
  unmod+=(TIDAL_LIB="$B/lib/libtidal.so" TIDAL_NO_DAEMON=1)
fi

if [[ -n $base && -n $reference ]]; then   # held to the given reference's SLO
  process base "${unmod[@]}" "$PY" "$here/colocate.py" --configs "$base" --reference "$reference"
elif [[ -n $base ]]; then
  process base "${unmod[@]}" "$PY" "$here/colocate.py" --configs "$base" && reference=$R/base/colocate.json
fi
[[ -n $reference && -f $reference ]] || { say "no reference (the base process failed?): stop"; exit 1; }

if [[ -n $mps ]]; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/tidal-colocate-mps.$$ CUDA_MPS_LOG_DIRECTORY=/tmp/tidal-colocate-mps-log.$$
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d; then
    trap 'echo quit | nvidia-cuda-mps-control >/dev/null 2>&1' EXIT
    say "MPS daemon up ($CUDA_MPS_PIPE_DIRECTORY)"
    for cfg in ${mps//,/ }; do
      if [[ $cfg == mps-pct ]]; then
        process mps-pct "${unmod[@]}" CUDA_MPS_ACTIVE_THREAD_PERCENTAGE="${mps_pct%,*}" "$PY" "$here/colocate.py" \
          --configs mps-pct --mps-pct "$mps_pct" --reference "$reference"
      else
        process "$cfg" "${unmod[@]}" "$PY" "$here/colocate.py" --configs "$cfg" --reference "$reference"
      fi
    done
    echo quit | nvidia-cuda-mps-control
    trap - EXIT
    sleep 1
    cp "$CUDA_MPS_LOG_DIRECTORY"/control.log "$R/mps-control.log" 2>/dev/null
  else
    say "FAIL: nvidia-cuda-mps-control -d"; status=1
  fi
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
fi

if [[ -n $tidal ]]; then
  build
  if [[ -n $(find "$C/unmod/inductor" -name '*.py' -print -quit 2>/dev/null) ]]; then
    rm -rf "${C:?}/tidal/inductor" && cp -a "$C/unmod/inductor" "$C/tidal/inductor" &&
      say "tidal: Inductor cache copied from the unmodified processes' (same graphs, same autotuning choices)"
  else
    say "WARNING: tidal: no unmodified Inductor cache; its kernel choices may differ from the baselines'"
  fi
  process tidal env TORCHINDUCTOR_CACHE_DIR="$C/tidal/inductor" TRITON_CACHE_DIR="$C/tidal/triton" TIDAL_NO_DAEMON=1 \
    "$root/scripts/tidal-run" --build "$B" -- "$PY" "$here/colocate.py" --configs "$tidal" --reference "$reference"
fi

jsons=()
for d in base mps mps-pct tidal; do [[ -f $R/$d/colocate.json ]] && jsons+=("$R/$d/colocate.json"); done
# a given reference's rows come first (its solo and SLO head the table)
[[ -n $reference && $reference != "$R/base/colocate.json" ]] && jsons=("$reference" "${jsons[@]}")
say "merge: ${jsons[*]}"
PYTHONPATH="$root/python" "$PY" "$here/colocate.py" --merge "${jsons[@]}" --out "$R" >"$R/merge.log" 2>&1 ||
  { say "FAIL: merge"; cat "$R/merge.log"; status=1; }
cat "$R/colocate.md" 2>/dev/null
exit "$status"
