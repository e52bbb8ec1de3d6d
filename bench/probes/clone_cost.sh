#!/usr/bin/env bash
# bench/probes/clone_cost.sh -- what each part of a clone's launch shape costs per launch
# (clone_cost.cu says why we ask). Log: ${OUT:-/tmp}/clone-cost.log
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-/tmp}; B=${B:-/tmp/clone-cost}; mkdir -p "$B" "$OUT"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
  "$CUDA_HOME/bin/nvcc" -O2 -arch=sm_90a "$here/clone_cost.cu" -o "$B/clone_cost" && "$B/clone_cost" && "$B/clone_cost"
} 2>&1 | tee "$OUT/clone-cost.log"
