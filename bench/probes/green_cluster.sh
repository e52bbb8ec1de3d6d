#!/usr/bin/env bash
# bench/probes/green_cluster.sh -- build and run green_cluster.cu on the GPU machine;
# log to ${OUT:-/tmp}/green-cluster.log
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-/tmp}; B=${B:-/tmp/green-cluster}; mkdir -p "$B" "$OUT"
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
{
  $NVCC -O2 -arch=sm_90 -o "$B/green_cluster" "$here/green_cluster.cu" -lcuda &&
  $NVCC -arch=sm_90 -cubin -o "$B/green_cluster.cubin" "$here/green_cluster.cu" &&
  "$B/green_cluster" "$B/green_cluster.cubin"
} 2>&1 | tee "$OUT/green-cluster.log"
