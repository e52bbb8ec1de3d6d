#!/usr/bin/env bash
# Session 13, device call 3: the rest of the colocation benchmark, held to call 2's SLO
# (--reference call2/base-colocate.json), with tidal.serve's finer replay (1 ns timer slack,
# a spin before each arrival: call 2's rows queued requests ~70 us late). First the tidal
# process: static, SGDRC with demand 66 (the static split's LS set) without and with a 2 ms
# hold, SGDRC demand 96 with the hold, GSLICE; then the baselines again with the new replay
# (alone, green, and timeslice, which failed in call 2), then mps and mps-pct 50/50.
# The unmodified Inductor cache of call 2 is restored first (same graphs and autotuning).
set -u
t0=$SECONDS
CALL2=bench/results/2026-12-03-session13/call2
common=(--reference "$CALL2/base-colocate.json" --runs 3 --seconds 1.5 --loads 0.3,0.5,0.7)
mkdir -p build && tar -C build -xzf dnn-cache-unmod-inductor.tgz && echo "inductor cache restored: $(du -sh build/dnn-cache/unmod/inductor | cut -f1)"
timeout 310 bench/colocate/run.sh --base "" --mps "" "${common[@]}" \
  --tidal tidal-static,tidal-sgdrc:demand=66,tidal-sgdrc:demand=66:idle=2000,tidal-sgdrc:demand=96:idle=2000,tidal-gslice \
  > "$OUT/run-tidal.out" 2>&1
echo "[1 $((SECONDS - t0))s] tidal rc=$?"
left=$((500 - SECONDS + t0)); ((left < 30)) && left=30
timeout $left bench/colocate/run.sh --base alone,green,timeslice --tidal "" "${common[@]}" > "$OUT/run-base.out" 2>&1
echo "[2 $((SECONDS - t0))s] baselines rc=$?"
grep -hE "^\[colocate|^\|" "$OUT/run-tidal.out" "$OUT/run-base.out" | cut -c1-250 | tail -90
R=$OUT/colocate
cp "$R"/colocate.md "$R"/*.png "$OUT/" 2>/dev/null
(cd "$OUT" && tar czf colocate-all.tgz run-*.out colocate && rm -rf colocate run-*.out)
ls "$OUT"; echo "[3 $((SECONDS - t0))s] done"
