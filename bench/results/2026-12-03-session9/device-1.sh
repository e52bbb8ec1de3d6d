#!/usr/bin/env bash
# Session 9, device call 1: the barrier funnel's barrier as a called .func (one barrier
# instruction per kernel: synccheck's "Divergent thread(s) in block" in session 8 was lanes
# of a warp at two tail-duplicated copies of it): the rewrite harness, compute-sanitizer
# over the whole suite, the LLVM-IR path's PTX (carried: build-llvm-gpu, made with
# test/gpu/llvm_ir_ptx.sh), then bench/dnn sections census, a, c (BERT-base, BERT-large).
set -u
t0=$SECONDS
el() { echo "[1 $((SECONDS - t0))s] $*"; }
el "rewrite harness"; test/gpu/run.sh > "$OUT/run-sh.out" 2>&1; el "run.sh rc=$?: $(tail -1 "$OUT/gpu-check.log")"
grep -E "^FAIL" "$OUT/gpu-check.log" | head -20
el "sanitize"; test/gpu/sanitize.sh --no-build > "$OUT/sanitize.out" 2>&1; el "sanitize rc=$?: $(tail -1 "$OUT/gpu-sanitize.log")"
grep -E "^FAIL" "$OUT/gpu-sanitize.log" | cut -c1-400 | head -30
grep -E "^(PASS|FAIL|INFO) [a-z]+ early_return" "$OUT/gpu-sanitize.log" | cut -c1-200
mkdir -p "$OUT/ir"
el "IR path (tidal-ir)"; OUT=$OUT/ir test/gpu/run.sh --no-build --ptx-dirs build-llvm-gpu/orig build-llvm-gpu/tidal-ir --only "$(cat build-llvm-gpu/only-tidal-ir)" > "$OUT/ir/run.out" 2>&1
el "IR rc=$?: $(tail -1 "$OUT/ir/gpu-check.log")"; grep -E "^FAIL" "$OUT/ir/gpu-check.log" | head
el "IR path (PTX pass on NVPTX's PTX)"; mkdir -p "$OUT/irp"; OUT=$OUT/irp test/gpu/run.sh --no-build --ptx-dirs build-llvm-gpu/orig build-llvm-gpu/tidal --only "$(cat build-llvm-gpu/only-tidal)" > "$OUT/irp/run.out" 2>&1
el "IR-PTX rc=$?: $(tail -1 "$OUT/irp/gpu-check.log")"; grep -E "^FAIL" "$OUT/irp/gpu-check.log" | head
dl=$((585 - (SECONDS - t0))); ((dl > 430)) && dl=430
el "dnn (deadline ${dl}s)"; BENCH_DEADLINE=$dl UNMOD_TIMEOUT=170 bench/dnn/run.sh --models bert-base,bert-large \
  -- --sections census,a,c --n 200 --n-large 60 --storm-n 200 --warmup 20 --placements hybrid > "$OUT/dnn-console.log" 2>&1
el "dnn rc=$?"
cp "$OUT/dnn/summary.md" "$OUT/dnn-summary.md" 2>/dev/null; cp "$OUT/dnn/ls_p99_vs_be.png" "$OUT/" 2>/dev/null
(cd "$OUT" && tar czf device-1-logs.tgz --exclude=dnn/cache dnn ir irp run-sh.out sanitize.out gpu-sanitize 2>/dev/null && rm -rf dnn ir irp run-sh.out sanitize.out gpu-sanitize)
el "done"; ls "$OUT"
