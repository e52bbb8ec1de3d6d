#!/bin/bash
# The tidal GPU benchmark (needs an NVIDIA GPU, nvcc, the driver). Builds
# tidal-opt, compiles bench/gpu/bench_kernels.cu to PTX, rewrites it, runs
# tidal_bench, and keeps the log in ${OUT:-bench/results}/tidal-bench.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BENCH_BUILD:-/tmp/tidal-bench}; mkdir -p "$B"
R=${OUT:-bench/results}; mkdir -p "$R"
opt=${TIDAL_OPT:-}
if [[ -z $opt ]]; then
  gcc -std=c17 -O2 -D_POSIX_C_SOURCE=200809L -Ipasses -Iruntime -Iabi passes/*.c driver/tidal-opt.c driver/cubin.c driver/exec.c \
    -o "$B/tidal-opt" -ldl
  opt=$B/tidal-opt
fi
nvcc -arch=sm_90a -ptx bench/gpu/bench_kernels.cu -o "$B/bench_kernels.ptx"
"$opt" -p tidal --report "$B/bench_kernels.ptx" -o "$B/bench_kernels.tidal.ptx"
nvcc -std=c++17 -O2 -arch=sm_90a bench/gpu/tidal_bench.cu -o "$B/tidal_bench" -lcuda
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; date -u;
  "$B/tidal_bench" "$B/bench_kernels.ptx" "$B/bench_kernels.tidal.ptx"; } 2>&1 | tee "$R/tidal-bench.log"
