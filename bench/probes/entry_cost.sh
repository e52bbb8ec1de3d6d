#!/usr/bin/env bash
# bench/probes/entry_cost.sh -- build and run entry_cost.cu on the GPU machine (what case a's
# per-launch cost is made of); log to ${OUT:-/tmp}/entry-cost.log
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-/tmp}; B=${B:-/tmp/entry-cost}; mkdir -p "$B" "$OUT"
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  $NVCC -O2 -arch=sm_90a -o "$B/entry_cost" "$here/entry_cost.cu" && "$B/entry_cost"
} 2>&1 | tee "$OUT/entry-cost.log"
