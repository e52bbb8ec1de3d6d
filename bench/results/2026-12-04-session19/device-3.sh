#!/usr/bin/env bash
# Session 19 call 3:
#  1. rt_app serve, both builds, twice each: call 2's five serve failures came with
#     millisecond host stalls (queued late p99 1.5-4.7 ms); the batch checks now judge the
#     engine from the queueing (rt_app.cu)
#  2. bench/dnn census,a,b,c on BERT-base and BERT-large at the session's protocol: every
#     ratio of issue 10 in one run
set -u
t0=$SECONDS
say() { echo "[3 $((SECONDS - t0))s] $*"; }
R=$OUT/call3; mkdir -p "$R"
test/gpu/runtime/run.sh --build-only > "$R/rt-build.log" 2>&1; say "rt build rc=$?"
B=$PWD/build-gpu-rt
for i in 1 2; do
  timeout 60 "$B/rt_app_linked" serve > "$R/serve-linked-$i.log" 2>&1; say "linked serve $i rc=$?"
  LD_PRELOAD=$B/lib/libtidal-preload.so timeout 60 "$B/rt_app_plain" serve > "$R/serve-preload-$i.log" 2>&1; say "preload serve $i rc=$?"
done
grep -hcE '^PASS' "$R"/serve-*.log | paste -sd' '; grep -hE '^FAIL' "$R"/serve-*.log | cut -c1-330
grep -hE 'batched|wait-p50' "$R"/serve-*.log | cut -c1-330
dl=$((575 - (SECONDS - t0))); ((dl > 420)) && dl=420
say "dnn (deadline ${dl}s)"; BENCH_DEADLINE=$dl UNMOD_TIMEOUT=180 OUT=$R bench/dnn/run.sh --models bert-base,bert-large \
  -- --sections census,a,b,c --n 200 --n-large 60 --storm-n 200 --warmup 20 --placements hybrid > "$R/dnn-console.log" 2>&1
say "dnn rc=$?"
cp "$R/dnn/summary.md" "$R/dnn-summary.md" 2>/dev/null; cp "$R/dnn/ls_p99_vs_be.png" "$R/" 2>/dev/null
sed -n '/### a\./,/### kernels per/p' "$R/dnn-summary.md" | head -40
grep -A12 -i 'storm' "$R/dnn-summary.md" | head -30
(cd "$R" && tar czf dnn-logs.tgz --exclude=dnn/cache dnn 2>/dev/null && rm -rf dnn)
say done
