#!/usr/bin/env bash
# Session 18, device call 1:
#  1. make gpu-check: session 17's libtidal commits after its last gpu-check (the queued
#     batch rule, the SM-set subset helper in launch/green/serve/policy_layout) and the new
#     rt_app serve checks of GSLICE's adaptive batching (serve.batches.*)
#  2. the CNN baselines of issue 12 with 3 runs (session 16 had one): LS ResNet-50 b1 on
#     0-63, BE BERT-large b16 on 64-131; alone, none, prio, timeslice; session 17's SLO
#     (--reference: its call 2 base process, SLO 936.2 us)
set -u
t0=$SECONDS
say() { echo "[1 $((SECONDS - t0))s] $*"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p "$OUT/gc"
timeout 470 make gpu-check OUT="$OUT/gc" > "$OUT/gpu-check.out" 2>&1; say "gpu-check rc=$?"
grep -hE "passed|FAIL" "$OUT/gpu-check.out" | tail -15
grep -rhE "serve\.batches" "$OUT/gc" 2>/dev/null | cut -c1-400 | sort -u | head -12
R=$PWD/bench/results/2026-12-04-session17/call2
left=$((575 - (SECONDS - t0)))
if ((left > 60)); then
  OUT=$OUT/cnn timeout $((left + 5)) bench/colocate/run.sh --deadline $left --engine c --ls resnet50 \
    --ls-sms 0-63 --be-sms 64-131 --base alone,none,prio,timeslice --mps "" --tidal "" \
    --reference $R/cnn/colocate/base/colocate.json --loads 0.3,0.5,0.7 --runs 3 --seconds 1.5 > "$OUT/cnn.out" 2>&1
  say "cnn rc=$?"
  grep -hE "^\[colocate.*(load|FAIL|compiled|solo)|FAIL|rror" "$OUT/cnn.out" | cut -c1-260 | tail -45
fi
(cd "$OUT" && tar czf out.tgz gc cnn cnn.out 2>/dev/null && rm -rf gc cnn)
ls "$OUT"; say done
