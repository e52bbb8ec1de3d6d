#!/usr/bin/env bash
# Session 19 call 5: bench/dnn census,a,b with section a's interleaved pairs (a'): the
# graph on tidal partition "all" against the same graph on a plain stream tidal does not
# govern, request for request in one process. Call 4's cross-process BERT-large ratio was
# 1.066 where call 3's was 1.002 (same code; that side's eager ran 0.71x, the host moved).
set -u
t0=$SECONDS
say() { echo "[5 $((SECONDS - t0))s] $*"; }
R=$OUT/call5; mkdir -p "$R"
dl=$((540 - (SECONDS - t0))); ((dl > 420)) && dl=420
say "dnn (deadline ${dl}s)"; BENCH_DEADLINE=$dl UNMOD_TIMEOUT=180 OUT=$R bench/dnn/run.sh --models bert-base,bert-large \
  -- --sections census,a,b --n 200 --n-large 60 --warmup 20 --placements hybrid > "$R/dnn-console.log" 2>&1
say "dnn rc=$?"
cp "$R/dnn/summary.md" "$R/dnn-summary.md" 2>/dev/null
sed -n '/### a\./,/### kernels per/p' "$R/dnn-summary.md" | head -40
grep -h 'a-pair\|b-pair\|FAILED\|Error' "$R/dnn/tidal.log" | cut -c1-420 | head
(cd "$R" && tar czf dnn-logs.tgz --exclude=dnn/cache dnn 2>/dev/null && rm -rf dnn)
say done
