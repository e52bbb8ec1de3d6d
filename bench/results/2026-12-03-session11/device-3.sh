#!/usr/bin/env bash
# Session 11, device call 3: what the addmm clone pays with no claim at all. M=256: 128
# tiles, one wave (every worker one tile, no ticket: %tdl_once); M=2048: 1024 tiles, own
# chunks of 7 (share 100, no time cap: ~1 claim per worker). Unmodified vs clone.
set -u
B=$PWD/build-dnn
bench/dnn/run.sh --build-only > /dev/null || exit 1
T=(scripts/tidal-run --build "$B" --partition all:0-131 --)
C=(env TIDAL_PLACEMENT=hybrid TIDAL_SHORT_US=0 TIDAL_STATIC_SHARE=100 TIDAL_CHUNK_US=1000)
for m in 256 512 2048; do
  P=(python3 bench/probes/gemm_clone.py --only addmm --n 300 --warmup 20 --m $m)
  echo "M=$m unmod: $("${P[@]}" 2>&1 | grep '"kernel"' | tee -a $OUT/noclaim.jsonl | grep -o '"us": [0-9.]*')"
  echo "M=$m clone: $("${C[@]}" "${T[@]}" "${P[@]}" 2>&1 | grep '"kernel"' | tee -a $OUT/noclaim.jsonl | grep -o '"us": [0-9.]*')"
done
