#!/usr/bin/env bash
# Session 10, device call 1: ABI v5 (tidal_launch.first: a measured long kernel's workers
# run most of its grid as their own chunks, no claim) and the sample gate (duration
# samples without the host's launch gap). The clone-cost probe on BERT-large's addmm and
# GELU shapes, then bench/dnn sections census, a, c (BERT-base, BERT-large), cold compile.
set -u
t0=$SECONDS
el() { echo "[1 $((SECONDS - t0))s] $*"; }
el "gemm_clone probe"; timeout 200 bench/probes/gemm_clone.sh > "$OUT/gemm_clone.out" 2>&1; el "probe rc=$?"
grep -v '^{' "$OUT/gemm_clone.out" | grep -E '"kernel"|rror|Traceback' | cut -c1-300 | head -40
dl=$((585 - (SECONDS - t0))); ((dl > 420)) && dl=420
el "dnn (deadline ${dl}s)"; BENCH_DEADLINE=$dl UNMOD_TIMEOUT=170 bench/dnn/run.sh --models bert-base,bert-large \
  -- --sections census,a,c --n 200 --n-large 60 --storm-n 200 --warmup 20 --placements hybrid > "$OUT/dnn-console.log" 2>&1
el "dnn rc=$?"
cp "$OUT/dnn/summary.md" "$OUT/dnn-summary.md" 2>/dev/null; cp "$OUT/dnn/ls_p99_vs_be.png" "$OUT/" 2>/dev/null
sed -n '/### a\./,/### kernels per/p' "$OUT/dnn-summary.md" | head -30
grep -A14 "bert-large: kernels whose" "$OUT/dnn-summary.md"
(cd "$OUT" && tar czf device-1-logs.tgz --exclude=dnn/cache dnn 2>/dev/null && rm -rf dnn)
el "done"; ls "$OUT"
