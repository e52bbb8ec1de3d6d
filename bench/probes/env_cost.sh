#!/usr/bin/env bash
# bench/probes/env_cost.sh -- build env_cost.cu and run it plain, then under libtidal's
# LD_PRELOAD with a default partition of all SMs (its kernels are not rewritten: libtidal
# is only present). Log: ${OUT:-/tmp}/env-cost.log. PRELOAD=path to libtidal-preload.so.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-/tmp}; B=${B:-/tmp/env-cost}; mkdir -p "$B" "$OUT"
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  $NVCC -O2 -arch=sm_90a -o "$B/env_cost" "$here/env_cost.cu" -lcuda || exit 1
  echo "== plain process"; "$B/env_cost"
  if [[ -n ${PRELOAD:-} ]]; then
    echo "== under LD_PRELOAD=$PRELOAD, TIDAL_PARTITION=all:0-131"
    LD_PRELOAD=$PRELOAD TIDAL_PARTITION=all:0-131 "$B/env_cost"
  fi
  echo "== plain process again"; "$B/env_cost"
} 2>&1 | tee "$OUT/env-cost.log"
