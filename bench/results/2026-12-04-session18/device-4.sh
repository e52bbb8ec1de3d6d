#!/usr/bin/env bash
# Session 18, device call 4 (issue 12): bursty arrivals (serve.bursty: bursts at 5x the mean
# rate, 50 ms mean, 0.25x between them), where batching what is queued matters most. C engine.
#  1. LS ResNet-50 on 0-63, graphs for batches 1, 2 and 4 (the baselines and static take
#     what is queued, up to 4; the policies decide with their rule): alone, green,
#     tidal-static, tidal-gslice placed ladder 8 from 64, tidal-sgdrc placed demand 64;
#     3 runs x 2 s
#  2. LS BERT-base, graphs for batches 1 and 2: alone, green, tidal-sgdrc placed demand 96,
#     tidal-gslice placed be=8; 2 runs x 2 s, in what is left of the call
set -u
t0=$SECONDS
say() { echo "[4 $((SECONDS - t0))s] $*"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$OUT/cnn timeout 285 bench/colocate/run.sh --deadline 275 --engine c --ls resnet50 --ls-sms 0-63 --be-sms 64-131 \
  --base alone,green --mps "" --tidal tidal-static,tidal-gslice:placed=1:ladder=8:from=64,tidal-sgdrc:demand=64:idle=2000:placed=1 \
  --arrivals bursty --ls-batches 1,2,4 --loads 0.3,0.5,0.7 --runs 3 --seconds 2 > "$OUT/cnn.out" 2>&1
say "cnn rc=$?"
grep -hE "^\[colocate.*(load|FAIL|solo)|FAIL|rror" "$OUT/cnn.out" | cut -c1-260 | tail -50
left=$((570 - (SECONDS - t0)))
if ((left > 120)); then
  OUT=$OUT/bert timeout $((left + 5)) bench/colocate/run.sh --deadline $left --engine c --base alone,green --mps "" \
    --tidal tidal-sgdrc:demand=96:idle=2000:placed=1,tidal-gslice:placed=1:be=8 \
    --arrivals bursty --ls-batches 1,2 --loads 0.3,0.5,0.7 --runs 2 --seconds 2 > "$OUT/bert.out" 2>&1
  say "bert rc=$?"
  grep -hE "^\[colocate.*(load|FAIL|solo)|FAIL|rror" "$OUT/bert.out" | cut -c1-260 | tail -30
fi
(cd "$OUT" && tar czf out.tgz cnn bert cnn.out bert.out 2>/dev/null && rm -rf cnn bert)
ls "$OUT"; say done
