#!/usr/bin/env bash
# bench/vram/run.sh -- build tidal-vram-probe (vram_probe.cu) on the GPU machine, run it,
# and turn its raw data into the map and plots (analyze.py).
#
#   bench/vram/run.sh OUTDIR [probe options...]     (docs/vram-channels.md)
#
# OUTDIR receives the probe's raw files, probe.log, and analyze.py's map.json,
# summary.md and PNG plots.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:?usage: bench/vram/run.sh OUTDIR [probe options]}
shift
mkdir -p "$out"
B=${B:-/tmp/vram-probe}
mkdir -p "$B"
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
$NVCC -O2 -arch=sm_90 -o "$B/vram_probe" "$here/vram_probe.cu" -lcuda || exit 1
command -v cuobjdump >/dev/null && cuobjdump -sass "$B/vram_probe" > "$out/sass.txt" 2>/dev/null
PYTHONUNBUFFERED=1 "$B/vram_probe" "$out" "$@" 2>&1 | tee "$out/probe.log"
rc=${PIPESTATUS[0]}
python3 "$here/analyze.py" "$out" 2>&1 | tee "$out/analyze.log"
exit "$rc"
