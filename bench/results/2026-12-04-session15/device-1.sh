#!/usr/bin/env bash
# Session 15, device call 1: `make gpu-check` at 93de0cf: the re-run that session 14 could not
# afford (rt_app linked keeps every dlsym-looked-up object; l2mem accepts a named refusal).
set -u
t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
OUT=$OUT make gpu-check > "$OUT/gpu-check-all.out" 2>&1; rc=$?
echo "[1 $((SECONDS - t0))s] make gpu-check rc=$rc"; tail -2 "$OUT/gpu-check-all.out"
for l in gpu-check gpu-runtime gpu-sanitize; do echo "$l: $(tail -1 "$OUT/$l.log")"; grep -E "^FAIL" "$OUT/$l.log" | cut -c1-300 | head -10; done
grep -E "(l2side|l2mem|cluster|policy)\." "$OUT/gpu-runtime.log" | grep -E "^(PASS|FAIL)|: (PASS|FAIL)" | cut -c1-260 | head -40
(cd "$OUT" && tar czf gpu-logs.tgz gpu-check-all.out gpu-*.log gpu-sanitize tidald.log policy-trace.jsonl 2>/dev/null; rm -rf gpu-sanitize gpu-check-all.out gpu-check.log gpu-check-cubin-nvptxcompiler.log gpu-sanitize.log)
ls "$OUT"
