#!/usr/bin/env bash
# Session 13, device call 2: the colocation benchmark's baselines (bench/colocate/run.sh,
# unmodified processes): alone (the ceiling), none, prio, green, timeslice, then under an MPS
# daemon mps and mps-pct (50/50); BERT-base b1 LS with 2 instances at 30/50/70% load, BERT-large
# b16 BE, 3 runs of 2 s per point. The unmodified Inductor cache comes back (for call 3's
# tidal process: the same graphs and autotuning choices).
set -u
t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
timeout 560 bench/colocate/run.sh --tidal "" --runs 3 --seconds 2 --loads 0.3,0.5,0.7 > "$OUT/run.out" 2>&1
echo "[1 $((SECONDS - t0))s] colocate rc=$?"
grep -E "^\[colocate" "$OUT/run.out" | cut -c1-200 | tail -60
R=$OUT/colocate
cp "$R/base/colocate.json" "$OUT/base-colocate.json" 2>/dev/null
cp "$R"/colocate.md "$R"/*.png "$OUT/" 2>/dev/null
(cd "$OUT" && tar czf colocate-all.tgz run.out colocate && rm -rf colocate run.out)
C=build/dnn-cache
if [[ -d $C/unmod/inductor ]]; then
  (cd build && tar czf "$OUT/dnn-cache-unmod-inductor.tgz" dnn-cache/unmod/inductor)
  ls -la "$OUT/dnn-cache-unmod-inductor.tgz"
  echo "cache root: $(cd "$C" && pwd)"
fi
ls "$OUT"; echo "[2 $((SECONDS - t0))s] done"
