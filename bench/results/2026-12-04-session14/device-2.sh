#!/usr/bin/env bash
# Session 14, device call 2: tidal-vram-probe after the timing fix (the timed load's address
# depends on the first clock read), with home (the L2 side of every line of every granule)
# and iso-side (LS/BE isolation by L2 side); slice and iso again.
set -u
t0=$SECONDS
mkdir -p "$OUT/vram"
timeout 480 bench/vram/run.sh "$OUT/vram" --granules 128 > "$OUT/run.log" 2>&1; rc=$?
echo "[2 $((SECONDS - t0))s] vram rc=$rc"
grep -E "^(calib|side: [0-9]|home|iso-side: LS (H0|all) .* rep 0|slice: (victims|run +[0-7] |[0-9]+ classes)|iso: LS .* rep 0|done)" "$OUT/vram/probe.log" | cut -c1-170 | head -60
sed -n '/^## home/,$p' "$OUT/vram/summary.md" 2>/dev/null | grep -v "^|---" | head -70
(cd "$OUT" && tar czf vram.tgz vram run.log && rm -rf vram)
