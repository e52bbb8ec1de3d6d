#!/usr/bin/env bash
# Session 14, device call 1 (and 2, after the timing fix): the first runs of tidal-vram-probe (issue 13): calib, side,
# slice (128 granules + the remap, 1 KiB chunks), iso; analysis on the GPU machine.
set -u
t0=$SECONDS
mkdir -p "$OUT/vram"
timeout 480 bench/vram/run.sh "$OUT/vram" --granules 128 > "$OUT/run.log" 2>&1; rc=$?
echo "[1 $((SECONDS - t0))s] vram rc=$rc"
grep -E "^(device|memory|calib|side: SM|slice: (victims|run +[0-9]? |[0-9]+ classes)|iso|done)" "$OUT/vram/probe.log" | cut -c1-200 | head -80
cat "$OUT/vram/summary.md" 2>/dev/null | head -80
(cd "$OUT" && tar czf vram.tgz vram run.log && rm -rf vram)
ls -la "$OUT"
