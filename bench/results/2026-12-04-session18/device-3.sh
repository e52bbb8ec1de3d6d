#!/usr/bin/env bash
# Session 18, device call 3 (issue 12): LS BERT-base b1, BE BERT-large b16, C engine, Poisson,
# 3 runs x 1.5 s on one machine (session 13's 3-run table was the Python engine; session 17's
# C-engine rows had 2 runs and two machines). This process's solo p99 sets the SLO.
#   base: alone, none, prio, green 66/66;  mps: mps-pct 50/50;
#   tidal: tidal-static, tidal-sgdrc:demand=96:idle=2000:placed=1,
#          tidal-gslice:placed=1:be=8 (GSLICE's BE on a ladder of graphs on what LS leaves:
#          first measurement)
set -u
t0=$SECONDS
say() { echo "[3 $((SECONDS - t0))s] $*"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$OUT/bert timeout 500 bench/colocate/run.sh --deadline 490 --engine c --base alone,none,prio,green --mps mps-pct \
  --tidal tidal-static,tidal-sgdrc:demand=96:idle=2000:placed=1,tidal-gslice:placed=1:be=8 \
  --loads 0.3,0.5,0.7 --runs 3 --seconds 1.5 > "$OUT/bert.out" 2>&1
say "bert rc=$?"
grep -hE "^\[colocate.*(load|FAIL|solo)|FAIL|rror" "$OUT/bert.out" | cut -c1-330 | tail -75
(cd "$OUT" && tar czf out.tgz bert bert.out 2>/dev/null && rm -rf bert)
ls "$OUT"; say done
