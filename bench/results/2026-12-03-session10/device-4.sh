#!/usr/bin/env bash
# Session 10, device call 4: the protocol's per-launch cost at ABI v5 (bench/gpu/run.sh
# tiny: the placed clone's fast path reads tidal_launch.first), then a second bench/dnn
# run (census, a, b, c) for the run-to-run spread of the storm comparison.
set -u
t0=$SECONDS
el() { echo "[4 $((SECONDS - t0))s] $*"; }
el "tiny"; bench/gpu/run.sh tiny > "$OUT/tiny.out" 2>&1; el "tiny rc=$?"
grep -E "c-static|orig|^ *[0-9]+ blocks|tiny" "$OUT/tidal-bench-tiny.log" | head -30
dl=$((580 - (SECONDS - t0))); ((dl > 400)) && dl=400
el "dnn (deadline ${dl}s)"; BENCH_DEADLINE=$dl UNMOD_TIMEOUT=170 bench/dnn/run.sh --models bert-base,bert-large \
  -- --sections census,a,b,c --n 200 --n-large 60 --storm-n 200 --warmup 20 --placements hybrid > "$OUT/dnn-console.log" 2>&1
el "dnn rc=$?"
cp "$OUT/dnn/summary.md" "$OUT/dnn-summary.md" 2>/dev/null; cp "$OUT/dnn/ls_p99_vs_be.png" "$OUT/" 2>/dev/null
sed -n '/### a\./,/### kernels per/p' "$OUT/dnn-summary.md" | head -34
grep -A6 "bert-large: kernels whose" "$OUT/dnn-summary.md"
(cd "$OUT" && tar czf device-4-logs.tgz --exclude=dnn/cache dnn tiny.out 2>/dev/null && rm -rf dnn)
el "done"; ls "$OUT"
