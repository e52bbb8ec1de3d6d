#!/usr/bin/env bash
# Session 12, device call 1: `make gpu-check` at session 11's last commit (the reformat,
# the probes' shared macros, the sample-gate knob); then session 11's device-4 probe:
# addmm replayed from one CUDA graph (gemm_clone.py --graph), M=256 (one wave) and M=2048.
set -u
t0=$SECONDS
OUT=$OUT make gpu-check > "$OUT/gpu-check-all.out" 2>&1; rc=$?
echo "[1 $((SECONDS - t0))s] make gpu-check rc=$rc"; tail -2 "$OUT/gpu-check-all.out"
for l in gpu-check gpu-runtime gpu-sanitize; do echo "$l: $(tail -1 "$OUT/$l.log")"; grep -E "^FAIL" "$OUT/$l.log" | cut -c1-300 | head -10; done
grep -h "ERROR SUMMARY" "$OUT/gpu-runtime.log" | sort | uniq -c
(cd "$OUT" && tar czf device-1-logs.tgz gpu-check-all.out gpu-sanitize colocate.log tidald.log 2>/dev/null; rm -rf gpu-sanitize)
timeout 240 bash bench/results/2026-12-03-session11/device-4.sh > "$OUT/graph.log" 2>&1
echo "[2 $((SECONDS - t0))s] graph probe rc=$?"; cat "$OUT/graph.log" | cut -c1-300
