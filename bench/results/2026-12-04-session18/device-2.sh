#!/usr/bin/env bash
# Session 18, device call 2 (issue 12), LS ResNet-50 on 0-63, BE BERT-large b16 on 64-131,
# C engine, Poisson, session 17's SLO (--reference: 936.2 us):
#  A. adaptive batching on the GPU: LS graphs for batches 1 and 2 (ResNet-50 b2 runs about
#     as fast as b1 on an H200), --batch-frac 0.7 (a batch may take 655 us, its oldest
#     request wait 280 us): alone and green (what is queued, up to 2), tidal-static (the
#     same), tidal-gslice placed ladder 8 from 64 (GSLICE's rule with what is queued)
#  B. the MPS baselines with 3 runs (session 16 had one), batch 1
set -u
t0=$SECONDS
say() { echo "[2 $((SECONDS - t0))s] $*"; }
R=$PWD/bench/results/2026-12-04-session17/call2/cnn/colocate/base/colocate.json
common=(--engine c --ls resnet50 --ls-sms 0-63 --be-sms 64-131 --reference $R --loads 0.3,0.5,0.7 --runs 3 --seconds 1.5)
OUT=$OUT/batched timeout 330 bench/colocate/run.sh --deadline 320 "${common[@]}" --base alone,green --mps "" \
  --tidal tidal-static,tidal-gslice:placed=1:ladder=8:from=64 --ls-batches 1,2 --batch-frac 0.7 > "$OUT/batched.out" 2>&1
say "batched rc=$?"
grep -hE "^\[colocate.*(load|FAIL|compiled|solo|batch)|FAIL|rror" "$OUT/batched.out" | cut -c1-300 | tail -45
left=$((578 - (SECONDS - t0)))
if ((left > 90)); then
  OUT=$OUT/mps timeout $((left + 5)) bench/colocate/run.sh --deadline $left "${common[@]}" --base "" --mps mps,mps-pct \
    --tidal "" > "$OUT/mps.out" 2>&1
  say "mps rc=$?"
  grep -hE "^\[colocate.*(load|FAIL)|FAIL|rror" "$OUT/mps.out" | cut -c1-220 | tail -20
fi
(cd "$OUT" && tar czf out.tgz batched mps batched.out mps.out 2>/dev/null && rm -rf batched mps)
ls "$OUT"; say done
