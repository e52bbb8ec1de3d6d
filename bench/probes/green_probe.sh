#!/usr/bin/env bash
# bench/probes/green_probe.sh -- build and run green_probe.cu on the GPU machine;
# log to ${OUT:-/tmp}/green-probe.log
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-/tmp}; B=${B:-/tmp/green-probe}; mkdir -p "$B" "$OUT"
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  $NVCC -O2 -arch=sm_90a -o "$B/green_probe" "$here/green_probe.cu" -lcuda &&
  $NVCC -arch=sm_90a -cubin -o "$B/green_probe.cubin" "$here/green_probe.cu" &&
  "$B/green_probe" "$B/green_probe.cubin"
} 2>&1 | tee "$OUT/green-probe.log"
