#!/usr/bin/env bash
# Session 17, device call 2: GSLICE with a ladder of placed LS graphs (issue 12), the
# largest-subset share rule (SGDRC placed re-run: BE's own graph now listed as the all-SM
# share), C engine, Poisson.
#  1. LS BERT-base b1, BE BERT-large b16: alone, green 66/66, tidal-gslice:placed=1 (ladder of
#     16), tidal-sgdrc:demand=96:idle=2000:placed=1; 3 loads x 2 runs x 1.5 s
#  2. LS ResNet-50 b1 on the cluster groups 0-63: alone, green 0-63/64-131, tidal-static,
#     tidal-gslice:placed=1:ladder=8, tidal-sgdrc:demand=64:idle=2000:placed=1; 3 runs
set -u
t0=$SECONDS
say() { echo "[2 $((SECONDS - t0))s] $*"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$OUT/bert timeout 260 bench/colocate/run.sh --deadline 250 --engine c --base alone,green --mps "" \
  --tidal tidal-gslice:placed=1,tidal-sgdrc:demand=96:idle=2000:placed=1 \
  --loads 0.3,0.5,0.7 --runs 2 --seconds 1.5 > "$OUT/bert.out" 2>&1
say "bert rc=$?"
grep -hE "^\[colocate.*(load|FAIL)|^\||FAIL|rror" "$OUT/bert.out" | cut -c1-300 | tail -40
left=$((575 - (SECONDS - t0)))
OUT=$OUT/cnn timeout $((left + 5)) bench/colocate/run.sh --deadline $left --engine c --ls resnet50 \
  --ls-sms 0-63 --be-sms 64-131 --base alone,green --mps "" \
  --tidal tidal-static,tidal-gslice:placed=1:ladder=8,tidal-sgdrc:demand=64:idle=2000:placed=1 \
  --loads 0.3,0.5,0.7 --runs 3 --seconds 1.5 > "$OUT/cnn.out" 2>&1
say "cnn rc=$?"
grep -hE "^\[colocate.*(load|FAIL)|^\||FAIL|rror" "$OUT/cnn.out" | cut -c1-300 | tail -50
(cd "$OUT" && tar czf colocate.tgz bert.out cnn.out bert cnn 2>/dev/null && rm -rf bert cnn)
ls "$OUT"; say done
