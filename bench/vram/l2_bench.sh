#!/usr/bin/env bash
# bench/vram/l2_bench.sh PROGRAM STEM [--build-only] -- build and run one of the benchmarks on
# libtidal's L2 parts (bench/vram/PROGRAM.cu: l2mem_iso, bimodal). Builds libtidal the way
# the GPU runtime suite does (test/gpu/runtime/run.sh --build-only, into
# ${TIDAL_GPU_RT_BUILD:-build-gpu-rt}) unless it is there, then PROGRAM against it, and runs
# it: ${OUT:-/tmp}/STEM.csv and STEM.log. l2mem_iso.sh and bimodal.sh call it.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
prog=${1:?usage: l2_bench.sh PROGRAM STEM [--build-only]}
stem=${2:?usage: l2_bench.sh PROGRAM STEM [--build-only]}
B=${TIDAL_GPU_RT_BUILD:-$root/build-gpu-rt}
OUT=${OUT:-/tmp}
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
mkdir -p "$OUT"
[[ -f $B/lib/libtidal.so ]] || "$root/test/gpu/runtime/run.sh" --build-only > "$OUT/$stem-build.log" 2>&1 || {
  echo "$prog: building libtidal failed ($OUT/$stem-build.log)"; exit 1; }
$NVCC -O2 -arch=sm_90 -I"$root/runtime" -I"$root/abi" "$here/$prog.cu" -L"$B/lib" -ltidal \
  -Xlinker -rpath="$B/lib" -lcuda -o "$B/$prog" || exit 1
[[ ${3:-} == --build-only ]] && { echo "$prog: built $B/$prog"; exit 0; }
"$B/$prog" "$OUT/$stem.csv" 2>&1 | tee "$OUT/$stem.log"
exit "${PIPESTATUS[0]}"
