#!/usr/bin/env bash
# Session 11, device call 4: call 3 again with the launches replayed from a CUDA graph
# (the host's launch rate out of the time). M=256: 128 tiles, one wave, no claim
# (%tdl_once): the clone's cost per launch; M=2048: 1024 tiles, own chunks of 7.
set -u
B=$PWD/build-dnn
bench/dnn/run.sh --build-only > /dev/null || exit 1
T=(scripts/tidal-run --build "$B" --partition all:0-131 --)
C=(env TIDAL_PLACEMENT=hybrid TIDAL_SHORT_US=0 TIDAL_STATIC_SHARE=100 TIDAL_CHUNK_US=1000)
for m in 256 2048; do
  P=(python3 bench/probes/gemm_clone.py --only addmm --graph --n 200 --warmup 20 --m $m)
  echo "M=$m unmod: $("${P[@]}" 2>&1 | grep '"kernel"' | tee -a $OUT/graph.jsonl | grep -o '"us": [0-9.]*')"
  echo "M=$m clone: $("${C[@]}" "${T[@]}" "${P[@]}" 2>&1 | tee $OUT/clone-$m.log | grep '"kernel"' | tee -a $OUT/graph.jsonl | grep -o '"us": [0-9.]*')"
  echo "M=$m clone, default share: $(env TIDAL_PLACEMENT=hybrid TIDAL_SHORT_US=0 "${T[@]}" "${P[@]}" 2>&1 | grep '"kernel"' | tee -a $OUT/graph.jsonl | grep -o '"us": [0-9.]*')"
done
grep -h '"stats"' $OUT/clone-*.log | cut -c1-600
