#!/usr/bin/env bash
# Session 16, device call 5: SGDRC with BE graphs placed per share (issue 12).
# bench/colocate, C engine, LS BERT-base b1 (Poisson), BE BERT-large b16 closed loop, 66/66:
# alone and green (the SLO reference, the best baseline), tidal-static, tidal-sgdrc demand 96
# with a 2 ms hold as in session 15, and the same with placed=1 (BE's graph on the 36 SMs it
# keeps while LS holds 0-95, run then instead of its all-SM clones); 3 loads x 2 runs x 1.5 s.
set -u
t0=$SECONDS
say() { echo "[5 $((SECONDS - t0))s] $*"; }
bench/colocate/run.sh --deadline 330 --engine c --base alone,green --mps "" \
  --tidal tidal-static,tidal-sgdrc:demand=96:idle=2000,tidal-sgdrc:demand=96:idle=2000:placed=1 \
  --loads 0.3,0.5,0.7 --runs 2 --seconds 1.5 > "$OUT/colo.out" 2>&1
say "colocate rc=$?"
grep -hE "^\[colocate.*(load|FAIL)|^\||FAIL" "$OUT/colo.out" | cut -c1-270 | tail -60
(cd "$OUT" && tar czf colocate.tgz colo.out colocate 2>/dev/null && rm -rf colocate)
ls "$OUT"; say done
