#!/usr/bin/env bash
# Session 8, device call C: (1) compute-sanitizer again where call B failed: racecheck on
# named_barriers under the new rule (findings of the untouched kernel are not tidal's), and
# synccheck on the barrier-funnel kernels in the clone's steps alone (in call B the case-b
# step's abort poisoned the process before any clone ran); (2) bench/dnn, BERT-base and
# BERT-large, sections census, a and c, cold compile.
set -u
t0=$SECONDS
el() { echo "[c $((SECONDS - t0))s] $*"; }
mkdir -p "$OUT/san1" "$OUT/san2"
el "sanitize named_barriers"; OUT=$OUT/san1 test/gpu/sanitize.sh --tools racecheck,synccheck --only =named_barriers,=warp_specialized --budget 60 > "$OUT/san1.out" 2>&1
el "rc=$?"; grep -E "^(PASS|FAIL|INFO) (racecheck|synccheck) (named|warp)" "$OUT/san1/gpu-sanitize.log" | cut -c1-300
el "sanitize funnel clones"; OUT=$OUT/san2 test/gpu/sanitize.sh --no-build --tools synccheck,racecheck --only =early_return_sync,=early_return_loop --steps c-static/half,c-epoch/half,flip-c-epoch --budget 60 > "$OUT/san2.out" 2>&1
el "rc=$?"; grep -E "^(PASS|FAIL) (racecheck|synccheck) early" "$OUT/san2/gpu-sanitize.log" | cut -c1-400
for f in "$OUT"/san2/gpu-sanitize/synccheck-early_return_sync.san.log; do grep -oE "at [a-z_]+(__ref|__tidal_reshaped)?\+0x[0-9a-f]+" "$f" | sort | uniq -c; done
dl=$((590 - (SECONDS - t0) - 15)); ((dl > 480)) && dl=480
el "dnn (deadline ${dl}s)"; BENCH_DEADLINE=$dl UNMOD_TIMEOUT=200 bench/dnn/run.sh --models bert-base,bert-large \
  -- --sections census,a,c --n 200 --n-large 60 --storm-n 200 --warmup 20 --placements hybrid > "$OUT/dnn-console.log" 2>&1
el "dnn rc=$?"
cp "$OUT/dnn/summary.md" "$OUT/dnn-summary.md" 2>/dev/null
(cd "$OUT" && tar czf c-logs.tgz --exclude=dnn/cache dnn san1 san2 san1.out san2.out && rm -rf dnn san1 san2 san1.out san2.out)
el "done"; ls "$OUT"
