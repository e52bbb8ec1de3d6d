#!/usr/bin/env bash
# bench/colocate/run.sh -- the colocation benchmark (colocate.py), one command on the GPU
# machine: LS from Poisson or bursty arrivals, BE closed-loop, every configuration a user could
# pick (bench/colocate/README.md: what runs, how to reproduce, what to expect of the time).
#
#   bench/colocate/run.sh [--quick] [--deadline S] [--compile-only] [--base CONFIGS]
#                         [--mps CONFIGS] [--mps-pct LS,BE] [--tidal CONFIGS]
#                         [--reference JSON] [COLOCATE.PY OPTIONS]
#
#   --quick          a subset that fits one 600 s device command with cold compile caches:
#                    --base alone,none,green --mps "" --tidal tidal-static,
#                    tidal-sgdrc:demand=96:idle=2000,tidal-gslice, loads 0.3,0.5,0.7, 1 run
#                    of 2 s per point, --deadline 560 (options after it override these)
#   --deadline S     the whole command ends within S seconds: each process gets what is left
#                    (less 15 s for the merge) and is stopped at it; a stopped process's rows
#                    so far are merged, and the run says so and exits 1 (default: no limit)
#   --compile-only   the unmodified and the tidal process compile their models (every LS
#                    batch size) and exit: fills the compile caches for a later run
#   --base CONFIGS   unmodified processes (default alone,none,prio,green,timeslice); its
#                    solo p99 is every process's SLO ("" : skip, then --reference is needed)
#   --mps CONFIGS    under an MPS daemon started here (default mps,mps-pct; "" : skip)
#   --mps-pct LS,BE  the active-thread percentages of mps-pct (default 50,50)
#   --tidal CONFIGS  one process under scripts/tidal-run (default tidal-static,
#                    tidal-sgdrc:demand=66, tidal-sgdrc:demand=96:idle=2000, tidal-gslice; "" :
#                    skip; the demands are BERT-base's: 66 the static split, 96 its measured knee)
#   --reference JSON the SLO and capacity from an earlier base run of the same LS model
#                    (instead of --base's); its rows head the merged table of its arrivals
#   --engine E       python (default) or c: every process serves with that loop (colocate.py
#                    --engine); with c the unmodified processes load the libtidal.so built
#                    here for its engine alone (nothing is interposed, no kernel rewritten)
#   other options go to every colocate.py process (colocate.py --help), among them
#     --ls bert-base|resnet50   the LS model (default bert-base)
#     --arrivals poisson|bursty [--burst-factor 5 --burst-ms 50 --quiet-factor 0.25]
#     --ls-batches 1,2,4,8      a CUDA graph per LS batch size: adaptive batching (default 1)
#     --loads 0.3,0.5,0.7 --runs N --seconds S
#
# Before it starts it prints the plan: configurations x loads x runs x seconds and an estimate
# of the time with warm and with cold compile caches (colocate.py --plan).
# GEMMs: BENCH_GEMM_BACKENDS defaults to TRITON here (Triton GEMMs, no cuBLAS): cuBLASLt's
# sm90 GEMMs launch clusters of more than 2 blocks, which the green contexts of the green and
# tidal configurations refuse (docs/design.md "Known limits"; ResNet-50's fc layer failed so
# in session 7). Set BENCH_GEMM_BACKENDS=TRITON,ATEN for bench/dnn's default. Convolutions stay
# cuDNN's (BENCH_CONV_BACKENDS=ATEN): each process's colocate.json names the closed kernels.
#
# The unmodified processes compile into ${BENCH_DNN_CACHE:-build/dnn-cache}/unmod; the tidal
# process starts from a copy of that Inductor cache (the same graphs and autotuning choices,
# as bench/dnn does) and recompiles the Triton kernels through tidal-ptxas. Results in
# ${OUT:-bench/results}/colocate/: base/, mps/, mps-pct/, tidal/ (each process's
# colocate.json, log and stderr), then colocate.md (a table per LS model and arrival
# process), colocate-summary.json and the plots.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
base=alone,none,prio,green,timeslice mps=mps,mps-pct mps_pct=50,50 tidal=tidal-static,tidal-sgdrc:demand=66,tidal-sgdrc:demand=96:idle=2000,tidal-gslice
reference="" engine=python pass=() quick=() deadline="" compile_only=0
while (($#)); do
  case $1 in
    -h | --help) sed -n '2,50p' "$0"; exit 0 ;;
    --quick)
      base=alone,none,green mps="" tidal=tidal-static,tidal-sgdrc:demand=96:idle=2000,tidal-gslice
      quick=(--loads "0.3,0.5,0.7" --runs 1 --seconds 2)
      deadline=${deadline:-560}
      shift ;;
    --deadline) deadline=${2?}; shift 2 ;;
    --compile-only) compile_only=1; shift ;;
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
pass=("${quick[@]}" "${pass[@]}")   # options given after --quick override its choices
[[ $mps_pct =~ ^[0-9]+,[0-9]+$ ]] || { echo "run.sh: --mps-pct $mps_pct: want LS,BE percentages" >&2; exit 2; }
[[ -z $deadline || $deadline =~ ^[0-9]+$ ]] || { echo "run.sh: --deadline $deadline: want seconds" >&2; exit 2; }
((compile_only)) || [[ -n $base || -n $reference ]] || { echo "run.sh: --base \"\" needs --reference JSON" >&2; exit 2; }
R=${OUT:-$root/bench/results}/colocate
C=${BENCH_DNN_CACHE:-$root/build/dnn-cache}
B=${TIDAL_DNN_BUILD:-$root/build-dnn}
PY=${PYTHON:-python3}
mkdir -p "$R" "$C/unmod/inductor" "$C/unmod/triton" "$C/tidal/inductor" "$C/tidal/triton"
cd "$root" || exit 1
start=$SECONDS
say() { echo "[colocate/run.sh $((SECONDS - start))s] $*"; }
status=0 ran=()
export BENCH_GEMM_BACKENDS=${BENCH_GEMM_BACKENDS:-TRITON}
say "GEMM backends $BENCH_GEMM_BACKENDS, conv backends ${BENCH_CONV_BACKENDS:-ATEN} (BENCH_GEMM_BACKENDS, BENCH_CONV_BACKENDS)${deadline:+; deadline ${deadline} s}"

# the plan: what runs, how many points, how long (an error here, e.g. an unknown
# configuration, stops the run before anything starts)
plan=()
[[ -n $base ]] && plan+=("base=$base")
[[ -n $mps ]] && plan+=("mps=$mps")
[[ -n $tidal ]] && plan+=("tidal=$tidal")
if ((${#plan[@]})); then
  build_flag=()
  [[ -n $tidal && ! -f $B/lib/libtidal-preload.so ]] && build_flag=(--plan-build)
  PYTHONPATH="$root/python" "$PY" "$here/colocate.py" --out "$R" "${pass[@]}" "${build_flag[@]}" --plan "${plan[@]}" ||
    { say "FAIL: the plan (above) is not runnable"; exit 2; }
fi
((compile_only)) && say "compile only: the models are compiled, nothing is measured"

# one colocate.py process: NAME then its environment and options
process() {
  local name=$1; shift
  local lim=()
  if [[ -n $deadline ]]; then
    local left=$((deadline - (SECONDS - start) - 15))
    if ((left < 30)); then
      say "SKIPPED $name: ${left}s left of the ${deadline}s deadline (its configurations are missing from the table)"
      status=1
      return 1
    fi
    lim=(timeout --signal=TERM --kill-after=10 "$left")
  fi
  rm -rf "${R:?}/$name"   # a file of an earlier run is never merged as this one's
  mkdir -p "$R/$name"
  ran+=("$name")
  say "$name: $*"
  "${lim[@]}" "$@" --out "$R/$name" "${pass[@]}" 2>"$R/$name/err.log" | tee "$R/$name/log"
  local rc=${PIPESTATUS[0]}
  if ((rc == 124 || rc == 137)) && ((${#lim[@]})); then
    say "$name: STOPPED at the deadline (${deadline}s): its rows so far are merged, the rest is missing"
  fi
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

tidal_process() {   # tidal_process EXTRA-OPTIONS...: the tidal process, from the unmodified Inductor cache
  if ! "$root/bench/dnn/run.sh" --build-only >"$R/build.log" 2>&1; then
    say "FAIL: build (log $R/build.log)"; tail -20 "$R/build.log"; status=1; return 1
  fi
  if [[ -n $(find "$C/unmod/inductor" -name '*.py' -print -quit 2>/dev/null) ]]; then
    rm -rf "${C:?}/tidal/inductor" && cp -a "$C/unmod/inductor" "$C/tidal/inductor" &&
      say "tidal: Inductor cache copied from the unmodified processes' (same graphs, same autotuning choices)"
  else
    say "WARNING: tidal: no unmodified Inductor cache; its kernel choices may differ from the baselines'"
  fi
  process tidal env TORCHINDUCTOR_CACHE_DIR="$C/tidal/inductor" TRITON_CACHE_DIR="$C/tidal/triton" TIDAL_NO_DAEMON=1 \
    "$root/scripts/tidal-run" --build "$B" -- "$PY" "$here/colocate.py" --configs "$tidal" "$@"
}

if ((compile_only)); then
  process base "${unmod[@]}" "$PY" "$here/colocate.py" --configs "${base:-alone}" --compile-only
  [[ -n $tidal ]] && tidal_process --compile-only
  say "compile only: done in $((SECONDS - start))s, status $status"
  exit "$status"
fi

if [[ -n $base && -n $reference ]]; then   # held to the given reference's SLO
  process base "${unmod[@]}" "$PY" "$here/colocate.py" --configs "$base" --reference "$reference"
elif [[ -n $base ]]; then
  process base "${unmod[@]}" "$PY" "$here/colocate.py" --configs "$base"
  # a base process that failed some configurations (exit 1) still measured the SLO
  [[ -f $R/base/colocate.json ]] && reference=$R/base/colocate.json
fi
[[ -n $reference && -f $reference ]] || { say "no reference (the base process failed before its solo measurement?): stop"; exit 1; }

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

[[ -n $tidal ]] && tidal_process --reference "$reference"

jsons=()
for d in "${ran[@]}"; do [[ -f $R/$d/colocate.json ]] && jsons+=("$R/$d/colocate.json"); done
# a given reference's rows come first (its solo and SLO head its table)
[[ -n $reference && $reference != "$R/base/colocate.json" ]] && jsons=("$reference" "${jsons[@]}")
say "merge: ${jsons[*]}"
PYTHONPATH="$root/python" "$PY" "$here/colocate.py" --merge "${jsons[@]}" --out "$R" >"$R/merge.log" 2>&1 ||
  { say "FAIL: merge"; cat "$R/merge.log"; status=1; }
cat "$R/colocate.md" 2>/dev/null
say "done in $((SECONDS - start))s, status $status; results in $R"
exit "$status"
