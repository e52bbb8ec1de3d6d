#!/usr/bin/env bash
# Session 8, device call B: after the %tdl_once fast path and the named-arrive refusal:
# the clone-path probe and the tiny benchmark (the protocol's per-launch cost), the
# rewrite harness (exactly-once, live flips: test/gpu/run.sh) and compute-sanitizer over
# it and the repros (test/gpu/sanitize.sh, first run on the GPU), and the runtime suite
# when there is time left in the call.
set -u
t0=$SECONDS
el() { echo "[b $((SECONDS - t0))s] $*"; }
el "clone-path probe"; OUT=$OUT bench/probes/clone_path.sh > /dev/null 2>&1; grep -E "RESULT (plain|clone|bare|cut-all)|PASS|FAIL" "$OUT/clone-path.log"
el "tiny"; BENCH_BUILD=/tmp/tb OUT=$OUT bench/gpu/run.sh tiny > "$OUT/tiny.out" 2>&1; el "tiny rc=$?"; grep -E "^(1|264) +(original|c-static)" "$OUT/tidal-bench-tiny.log"
el "rewrite harness"; test/gpu/run.sh > "$OUT/run-sh.out" 2>&1; el "run.sh rc=$?: $(tail -1 "$OUT/gpu-check.log")"
grep -E "^FAIL" "$OUT/gpu-check.log" | head -20
el "sanitize"; SANITIZE_BUDGET=${SANITIZE_BUDGET:-230} test/gpu/sanitize.sh > "$OUT/sanitize.out" 2>&1; el "sanitize rc=$?: $(tail -1 "$OUT/gpu-sanitize.log")"
grep -E "^FAIL" "$OUT/gpu-sanitize.log" | head -30
if (( SECONDS - t0 < 330 )); then
  el "runtime suite"; OUTDIR=$OUT timeout 250 test/gpu/runtime/run.sh > "$OUT/runtime.out" 2>&1; el "runtime rc=$?: $(tail -1 "$OUT/gpu-runtime.log")"
  grep -E "^FAIL" "$OUT/gpu-runtime.log" | head -20
else el "runtime suite: no time left in this call"; fi
(cd "$OUT" && tar czf b-logs.tgz runtime.out colocate.log tidald.log run-sh.out tiny.out sanitize.out gpu-sanitize 2>/dev/null && rm -rf gpu-sanitize run-sh.out tiny.out sanitize.out runtime.out colocate.log tidald.log)
el "done"; ls "$OUT"
