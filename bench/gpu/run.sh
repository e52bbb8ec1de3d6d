#!/bin/bash
# The tidal GPU benchmark (needs an NVIDIA GPU, nvcc, the driver). Builds
# tidal-opt, compiles bench/gpu/bench_kernels.cu to PTX, rewrites it, runs
# tidal_bench (ABI v5: abi/tidal_abi.h), and keeps the log in
# ${OUT:-bench/results}/tidal-bench.log (tidal-bench-tiny.log for `tiny`).
#
#   bench/gpu/run.sh [--build-only] [tiny]
#     --build-only   build tidal-opt, the PTX pair and tidal_bench, then stop (no GPU needed)
#     tiny           only section 0: per-launch cost of a tiny kernel, eager and as a graph
set -euo pipefail
cd "$(dirname "$0")/../.."
build_only=0
[[ ${1:-} == --build-only ]] && { build_only=1; shift; }
B=${BENCH_BUILD:-/tmp/tidal-bench}; mkdir -p "$B"
R=${OUT:-bench/results}; mkdir -p "$R"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=$CUDA_HOME/bin/nvcc; [[ -x $NVCC ]] || NVCC=nvcc
opt=${TIDAL_OPT:-}
if [[ -z $opt ]]; then
  gcc -std=c17 -O2 -D_POSIX_C_SOURCE=200809L -DTIDAL_VERSION="\"$(scripts/version.sh)\"" -Ipasses -Iruntime -Iabi -Idriver passes/*.c driver/tidal-opt.c driver/cubin.c driver/exec.c \
    -o "$B/tidal-opt" -lm -ldl
  opt=$B/tidal-opt
fi
"$NVCC" -arch=sm_90a -ptx bench/gpu/bench_kernels.cu -o "$B/bench_kernels.ptx"
# --case-b: the bench measures launch case b too (case a is then a case-b module's original)
"$opt" -p tidal --case-b --report "$B/bench_kernels.ptx" -o "$B/bench_kernels.tidal.ptx"
# and the default rewrite (no case b): the tiny section's c-epoch* / c-static* rows
"$opt" -p tidal "$B/bench_kernels.ptx" -o "$B/bench_kernels.tidal-default.ptx"
export TIDAL_BENCH_DEFAULT_PTX=$B/bench_kernels.tidal-default.ptx
"$NVCC" -std=c++17 -O2 -arch=sm_90a -Iabi bench/gpu/tidal_bench.cu -o "$B/tidal_bench" -L"$CUDA_HOME/lib64/stubs" -lcuda
if (( build_only )); then echo "built $B/tidal_bench, $B/bench_kernels.ptx, $B/bench_kernels.tidal.ptx"; exit 0; fi
log=$R/tidal-bench${1:+-$1}.log
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; date -u;
  "$B/tidal_bench" "$B/bench_kernels.ptx" "$B/bench_kernels.tidal.ptx" "$@"; } 2>&1 | tee "$log"
