#!/usr/bin/env bash
# Session 16, device call 2: a CNN on partitions, now that cluster launches are routed.
#  1. bench/dnn ResNet-50 b1: census, a (all SMs), b (0-65 and its cluster groups 0-63: tidal
#     partition vs green context), then the SM-scaling profile in cluster order (issue 12.1)
#  2. bench/colocate, LS ResNet-50 b1 (Poisson), BE BERT-large b16, C engine, LS on 0-63 (8
#     cluster groups) / BE on 64-131: alone, none, prio, green, timeslice, mps, mps-pct,
#     tidal-static, tidal-sgdrc (demand 64, 2 ms hold), tidal-gslice; 1 run of 2 s per load
set -u
t0=$SECONDS
say() { echo "[2 $((SECONDS - t0))s] $*"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
UNMOD_TIMEOUT=110 BENCH_DEADLINE=170 OUT=$OUT timeout 180 bench/dnn/run.sh --models resnet50 -- --sections census,a,b \
  > "$OUT/dnn.out" 2>&1
say "dnn rc=$?"
BENCH_DEADLINE=80 OUT=$OUT/prof timeout 90 bench/dnn/run.sh --only tidal --models resnet50 -- --sections profile \
  --profile-order clusters --profile-n 60 > "$OUT/prof.out" 2>&1
say "profile rc=$?"
grep -hE "^\| resnet50|FAIL|profile resnet50" "$OUT/dnn.out" "$OUT/prof.out" | cut -c1-240 | head -40
left=$((585 - SECONDS + t0))
bench/colocate/run.sh --deadline $left --engine c --ls resnet50 --ls-sms 0-63 --be-sms 64-131 \
  --base alone,none,prio,green,timeslice --mps mps,mps-pct \
  --tidal tidal-static,tidal-sgdrc:demand=64:idle=2000,tidal-gslice \
  --loads 0.3,0.5,0.7 --runs 1 --seconds 2 > "$OUT/colo.out" 2>&1
say "colocate rc=$?"
grep -hE "^\[colocate|^\||FAIL|closed" "$OUT/colo.out" | cut -c1-250 | tail -45
cp "$OUT"/prof/dnn/profile-resnet50.* "$OUT/" 2>/dev/null
(cd "$OUT" && tar czf all.tgz dnn.out prof.out colo.out dnn prof colocate 2>/dev/null && rm -rf dnn prof colocate)
ls "$OUT"; say done
