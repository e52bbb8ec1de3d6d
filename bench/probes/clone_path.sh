#!/usr/bin/env bash
# bench/probes/clone_path.sh -- where the placed clone's per-launch device time goes
# (clone_path.cu says why we ask). Needs the H200; log: ${OUT:-/tmp}/clone-path.log
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd); root=$(cd "$here/../.." && pwd)
OUT=${OUT:-/tmp}; B=${B:-/tmp/clone-path}; mkdir -p "$B" "$OUT"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}; NVCC=$CUDA_HOME/bin/nvcc
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
  (cd "$root" && gcc -std=c17 -O2 -D_POSIX_C_SOURCE=200809L -DTIDAL_VERSION='"probe"' -Ipasses -Iruntime -Iabi -Idriver \
     passes/*.c driver/tidal-opt.c driver/cubin.c driver/exec.c -o "$B/tidal-opt" -lm -ldl) &&
  "$NVCC" -arch=sm_90a -ptx "$root/bench/gpu/bench_kernels.cu" -o "$B/orig.in.ptx" &&
  "$B/tidal-opt" -p tidal "$B/orig.in.ptx" -o "$B/tidal.in.ptx" &&
  args=$(python3 "$here/clone_path_variants.py" "$B/tidal.in.ptx" "$B/orig.in.ptx" "$B") &&
  "$NVCC" -O2 -arch=sm_90a -I"$root/abi" "$here/clone_path.cu" -o "$B/clone_path" -L"$CUDA_HOME/lib64/stubs" -lcuda &&
  for f in "$B"/clone.ptx "$B"/cut-all.ptx "$B"/lean.ptx "$B"/bare.ptx; do
    "$CUDA_HOME/bin/ptxas" -arch=sm_90a "$f" -o "$f.cubin" && echo "== SASS of tiny__tidal_reshaped in $(basename "$f")" &&
    "$CUDA_HOME/bin/cuobjdump" -sass -fun tiny__tidal_reshaped "$f.cubin" | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's/ *\/\* 0x[0-9a-f]* \*\///'
  done
  for n in 1 264; do
    echo "== $n block(s) per launch"; CLONE_PATH_BLOCKS=$n "$B/clone_path" $args && CLONE_PATH_BLOCKS=$n "$B/clone_path" $args
  done
} 2>&1 | tee "$OUT/clone-path.log"
