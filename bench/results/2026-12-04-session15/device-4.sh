#!/usr/bin/env bash
# Session 15, device call 4 (right after call 3, machine warm): the colocation benchmark's new
# parts in one --quick run (issue 12): LS = ResNet-50 b1 (a CNN), bursty arrivals, adaptive
# batching with a graph per LS batch size (1, 2, 4, 8), the C serving engine; configurations
# alone, none, green, tidal-static, tidal-sgdrc (demand 96, 2 ms hold), tidal-gslice; loads
# 0.3/0.5/0.7, one run of 2 s each, within a 420 s deadline (what is left of the budget).
set -u
t0=$SECONDS
bench/colocate/run.sh --quick --deadline 420 --engine c --ls resnet50 --ls-batches 1,2,4,8 --arrivals bursty \
  > "$OUT/run.out" 2>&1
echo "[4 $((SECONDS - t0))s] colocate rc=$?"
grep -hE "^\[colocate|^\||FAIL|closed" "$OUT/run.out" | cut -c1-260 | tail -70
(cd "$OUT" && tar czf colocate-all.tgz run.out colocate && rm -rf colocate run.out)
ls "$OUT"; echo "[4 $((SECONDS - t0))s] done"
