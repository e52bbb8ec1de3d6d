#!/usr/bin/env bash
# Session 19 call 4: bench/dnn census,a,b,c again (a second run of every issue 10 ratio),
# with section b's new interleaved pairs (green context vs tidal partition of the same
# SMs, one process, request for request): call 3's section b put tidal 5% behind green
# with the two sides' rows a minute apart and all 192 kernels originals on both.
set -u
t0=$SECONDS
say() { echo "[4 $((SECONDS - t0))s] $*"; }
R=$OUT/call4; mkdir -p "$R"
dl=$((560 - (SECONDS - t0))); ((dl > 420)) && dl=420
say "dnn (deadline ${dl}s)"; BENCH_DEADLINE=$dl UNMOD_TIMEOUT=180 OUT=$R bench/dnn/run.sh --models bert-base,bert-large \
  -- --sections census,a,b,c --n 200 --n-large 60 --storm-n 200 --warmup 20 --placements hybrid > "$R/dnn-console.log" 2>&1
say "dnn rc=$?"
cp "$R/dnn/summary.md" "$R/dnn-summary.md" 2>/dev/null; cp "$R/dnn/ls_p99_vs_be.png" "$R/" 2>/dev/null
sed -n '/### a\./,/### kernels per/p' "$R/dnn-summary.md" | head -48
grep -h 'b-pair\|FAILED\|Error' "$R/dnn/tidal.log" | cut -c1-400 | head
(cd "$R" && tar czf dnn-logs.tgz --exclude=dnn/cache dnn 2>/dev/null && rm -rf dnn)
say done
