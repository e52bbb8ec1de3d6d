#!/usr/bin/env bash
# bench/vram/l2mem_iso.sh -- issue 13's isolation benchmark on libtidal's parts (l2mem_iso.cu):
# builds libtidal the way the GPU runtime suite does (test/gpu/runtime/run.sh --build-only,
# into ${TIDAL_GPU_RT_BUILD:-build-gpu-rt}), then l2mem_iso against it, and runs it.
# Output: ${OUT:-/tmp}/l2mem-iso.csv and .log.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
B=${TIDAL_GPU_RT_BUILD:-$root/build-gpu-rt}
OUT=${OUT:-/tmp}
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
mkdir -p "$OUT"
[[ -f $B/lib/libtidal.so ]] || "$root/test/gpu/runtime/run.sh" --build-only > "$OUT/l2mem-iso-build.log" 2>&1 || {
  echo "l2mem_iso.sh: building libtidal failed ($OUT/l2mem-iso-build.log)"; exit 1; }
$NVCC -O2 -arch=sm_90 -I"$root/runtime" -I"$root/abi" "$here/l2mem_iso.cu" -L"$B/lib" -ltidal \
  -Xlinker -rpath="$B/lib" -lcuda -o "$B/l2mem_iso" || exit 1
"$B/l2mem_iso" "$OUT/l2mem-iso.csv" 2>&1 | tee "$OUT/l2mem-iso.log"
exit "${PIPESTATUS[0]}"
