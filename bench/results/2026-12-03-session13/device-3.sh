#!/usr/bin/env bash
# Session 13, device call 3: the rest of the colocation benchmark, held to call 2's SLO
# (--reference call2/base-colocate.json): timeslice (failed in call 2: the BE child's log on
# its stdout), mps, mps-pct 50/50, and the tidal process: static, SGDRC with demand 66 (the
# static split's LS set) without and with a 2 ms hold, SGDRC demand 96 with the hold, GSLICE.
# The unmodified Inductor cache of call 2 is restored first (same graphs and autotuning).
set -u
t0=$SECONDS
CALL2=bench/results/2026-12-03-session13/call2
mkdir -p build && tar -C build -xzf dnn-cache-unmod-inductor.tgz && echo "inductor cache restored: $(du -sh build/dnn-cache/unmod/inductor | cut -f1)"
timeout 570 bench/colocate/run.sh --reference "$CALL2/base-colocate.json" --base timeslice \
  --tidal tidal-static,tidal-sgdrc:demand=66,tidal-sgdrc:demand=66:idle=2000,tidal-sgdrc:demand=96:idle=2000,tidal-gslice \
  --runs 3 --seconds 2 --loads 0.3,0.5,0.7 > "$OUT/run.out" 2>&1
echo "[1 $((SECONDS - t0))s] colocate rc=$?"
grep -E "^\[colocate|^\|" "$OUT/run.out" | cut -c1-230 | tail -80
R=$OUT/colocate
cp "$R"/colocate.md "$R"/*.png "$R/colocate-summary.json" "$OUT/" 2>/dev/null
(cd "$OUT" && tar czf colocate-all.tgz run.out colocate && rm -rf colocate run.out)
ls "$OUT"; echo "[2 $((SECONDS - t0))s] done"
