#!/usr/bin/env bash
# Per-launch cost of libtidal (needs an NVIDIA GPU): one tiny kernel (rt_app rate: BLOCKS
# blocks of 128 threads, one atomic each) launched back to back on one stream, built and run
#   nvcc        plain nvcc, no tidal at all                       (the baseline)
#   rewritten   tidal-nvcc --tidal-no-runtime, no libtidal       (launch case a)
#   linked      tidal-nvcc, libtidal linked, no partition        (interposed, passed through)
#   linked/all  the same with TIDAL_PARTITION=t:all              (reshaped clone, case c)
#   ... no flow-in                                               (TIDAL_FLOW_IN=0)
#   preload/all LD_PRELOAD=libtidal-preload.so, TIDAL_PARTITION=t:all
# Host: median µs per cudaLaunchKernel call over 41 bursts of 128 launches (short enough
# not to fill the launch queue). End to end: µs per launch over 5000 launches and one
# synchronize. Each variant runs REPS times (3) as separate processes, interleaved with
# the others; the table has the medians. Ratios are against the nvcc row of the same run.
#
#   bench/gpu/launch_cost.sh [--no-build] [BLOCKS...]      (default: 1 264)
# Builds with test/gpu/runtime/run.sh --build-only into ${TIDAL_GPU_RT_BUILD:-build-gpu-rt};
# the log goes to ${OUT:-/tmp}/launch-cost.log.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=${TIDAL_GPU_RT_BUILD:-$root/build-gpu-rt}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
OUTDIR=${OUT:-/tmp}
LOG=$OUTDIR/launch-cost.log
build=1
[[ ${1:-} == --no-build ]] && { build=0; shift; }
(( $# )) || set -- 1 264
if (( build )); then
  OUT=$OUTDIR/build "$root/test/gpu/runtime/run.sh" --build-only >/dev/null 2>&1 ||
    { echo "launch_cost: building failed (see $OUTDIR/build/gpu-runtime.log)"; exit 1; }
  "$CUDA_HOME/bin/nvcc" -std=c++17 -arch=sm_90a -O2 -I"$root/runtime" -I"$root/abi" "$root/test/gpu/runtime/rt_app.cu" \
    "$B/obj/rt_smset.o" -o "$B/rt_app_nvcc" || { echo "launch_cost: nvcc build failed"; exit 1; }
fi
PRE=$B/lib/libtidal-preload.so
export TIDAL_NO_DAEMON=1
REPS=${REPS:-3}
variants=(
  "nvcc|TIDAL_X=1|rt_app_nvcc"
  "rewritten|TIDAL_X=1|rt_app_plain"
  "linked|TIDAL_X=1|rt_app_linked"
  "linked/all|TIDAL_PARTITION=t:all|rt_app_linked"
  "linked/all no flow-in|TIDAL_PARTITION=t:all TIDAL_FLOW_IN=0|rt_app_linked"
  "preload/all|TIDAL_PARTITION=t:all LD_PRELOAD=$PRE|rt_app_plain"
)
med() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
{
  echo "# launch cost: $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), median of $REPS runs"
  printf '%-24s %7s %10s %8s %10s %8s  %s\n' variant blocks "host us" ratio "e2e us" ratio check
  for blocks in "$@"; do
    T=$(mktemp -d)
    for ((r = 0; r < REPS; r++)); do
      for i in "${!variants[@]}"; do
        IFS='|' read -r name envs prog <<<"${variants[$i]}"
        out=$(env $envs "$B/$prog" rate "$blocks" 2>&1)
        sed -n 's/.*: host \([0-9.]*\) us.*/\1/p' <<<"$out" >>"$T/$i.h"
        sed -n 's/.*end to end \([0-9.]*\) us.*/\1/p' <<<"$out" >>"$T/$i.e"
        grep -q '^PASS rate.every-block-ran' <<<"$out" || echo "$name: $(grep -m1 -E 'FAIL|error' <<<"$out")" >>"$T/$i.bad"
      done
    done
    base_h="" base_e=""
    for i in "${!variants[@]}"; do
      IFS='|' read -r name envs prog <<<"${variants[$i]}"
      h=$(med <"$T/$i.h") e=$(med <"$T/$i.e")
      ok=ok; [[ -s $T/$i.bad ]] && ok="FAIL: $(head -1 "$T/$i.bad")"
      [[ -n $h && -n $e ]] || { echo "$name: no result"; continue; }
      [[ -z $base_h ]] && base_h=$h base_e=$e
      awk -v n="$name" -v b="$blocks" -v h="$h" -v bh="$base_h" -v e="$e" -v be="$base_e" -v ok="$ok" \
        'BEGIN { printf "%-24s %7s %10.2f %7.2fx %10.2f %7.2fx  %s\n", n, b, h, h / bh, e, e / be, ok }'
    done
    rm -rf "$T"
  done
} 2>&1 | tee "$LOG"
