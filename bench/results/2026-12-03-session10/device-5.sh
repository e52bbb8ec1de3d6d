#!/usr/bin/env bash
# Session 10, device call 5 (diagnostic): is BE's throughput gap to the green split the
# clones? The storm (section c) again with TIDAL_SHORT_US=40 on the tidal side (kernels
# up to 40 us run as originals: the mask-change bound becomes 40 us).
set -u
t0=$SECONDS
el() { echo "[5 $((SECONDS - t0))s] $*"; }
el "dnn c, TIDAL_SHORT_US=40"; TIDAL_SHORT_US=40 BENCH_DEADLINE=400 UNMOD_TIMEOUT=170 bench/dnn/run.sh --models bert-base,bert-large \
  -- --sections c --storm-n 200 --warmup 20 --placements hybrid > "$OUT/dnn-console.log" 2>&1
el "dnn rc=$?"
cp "$OUT/dnn/summary.md" "$OUT/dnn-summary.md" 2>/dev/null
sed -n '/### c\./,/### kernels per/p' "$OUT/dnn-summary.md" | head -20
sed -n '/### tidal launches per/,/^$/p' "$OUT/dnn-summary.md"
(cd "$OUT" && tar czf device-5-logs.tgz --exclude=dnn/cache dnn 2>/dev/null && rm -rf dnn)
el "done"
