#!/usr/bin/env bash
# Session 9, device call 3 (issue 11 part 3): torch.compile max-autotune of BERT-base and
# BERT-large, each side autotuning for itself from empty caches (BENCH_SHARE_INDUCTOR=0,
# --fresh-cache), all 19 of Inductor's default GEMM configs (BENCH_MAX_MM_CONFIGS=all):
# autotune_diff.py compares the two sides' AUTOTUNE tables (a choice the unmodified side
# timed and tidal lost, failed or ignored), and each side's "compiled in" times give the
# compile-time ratio with tidal-ptxas.
set -u
t0=$SECONDS
BENCH_SHARE_INDUCTOR=0 BENCH_MAX_MM_CONFIGS=all BENCH_DEADLINE=575 UNMOD_TIMEOUT=250 \
  bench/dnn/run.sh --fresh-cache --compile-only --models bert-base,bert-large > "$OUT/autotune-console.log" 2>&1
echo "[3 $((SECONDS - t0))s] dnn rc=$?"
grep -h "compiled in\|side .*exit\|autotune choices" "$OUT/dnn/run.log" | cut -c1-200
grep -c "Ignoring this choice" "$OUT/dnn/unmod.err.log" "$OUT/dnn/tidal.err.log"
grep -c "^AUTOTUNE" "$OUT/dnn/unmod.err.log" "$OUT/dnn/tidal.err.log"
tail -5 "$OUT/dnn/autotune-diff.log"
cp "$OUT/dnn/autotune-diff.log" "$OUT/" 2>/dev/null
(cd "$OUT" && tar czf device-3-logs.tgz --exclude=dnn/cache dnn && rm -rf dnn)
