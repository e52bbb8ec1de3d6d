#!/usr/bin/env bash
# Session 7, device call X: the GPU suites (rewrite harness, runtime suite with its
# compute-sanitizer memcheck section), the tiny per-launch benchmark, and bench/dnn with
# the unmodified side's compile cache carried in (the tidal side recompiles: its cubins
# carry the rewrite). Everything lands in $OUT.
set -u
t0=$SECONDS
el() { echo "[x $((SECONDS - t0))s] $*"; }
el "rewrite harness"; test/gpu/run.sh > "$OUT/run-sh.out" 2>&1; el "run.sh rc=$?: $(tail -1 "$OUT/gpu-check.log")"
el "runtime suite"; OUTDIR=$OUT test/gpu/runtime/run.sh > "$OUT/runtime.out" 2>&1; el "runtime rc=$?: $(tail -1 "$OUT/gpu-runtime.log")"
el "tiny"; bench/gpu/run.sh tiny > "$OUT/tiny.out" 2>&1; el "tiny rc=$?"
dl=$((578 - (SECONDS - t0))); ((dl > 300)) && dl=300
el "dnn (deadline ${dl}s)"; BENCH_DEADLINE=$dl bench/dnn/run.sh --load-cache build/dnn-carry-unmod --models bert-base,bert-large,resnet50 \
  -- --n 100 --n-large 40 --storm-n 100 --warmup 10 --placements hybrid > "$OUT/dnn-console.log" 2>&1
el "dnn rc=$?"
cp "$OUT/dnn/summary.md" "$OUT/dnn-summary.md" 2>/dev/null
(cd "$OUT" && tar czf dnn.tgz --exclude=dnn/cache dnn && rm -rf dnn)
(cd "$OUT" && tar czf logs.tgz run-sh.out runtime.out tiny.out colocate.log tidald.log gpu-check*.log 2>/dev/null)
el "done"; ls "$OUT"
