#!/usr/bin/env bash
# Session 14, device call 8: `make gpu-check` at the session's last GPU-facing change (issue
# 14's pipeline of phases, runtime layers and driver core; tidal_l2_sides, tidal_l2mem, the
# cluster explanation, ls_first).
set -u
t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
OUT=$OUT make gpu-check > "$OUT/gpu-check-all.out" 2>&1; rc=$?
echo "[8 $((SECONDS - t0))s] make gpu-check rc=$rc"; tail -2 "$OUT/gpu-check-all.out"
for l in gpu-check gpu-runtime gpu-sanitize; do echo "$l: $(tail -1 "$OUT/$l.log")"; grep -E "^FAIL" "$OUT/$l.log" | cut -c1-300 | head -10; done
grep -E "(l2side|l2mem|cluster|policy)\." "$OUT/gpu-runtime.log" | grep -E "^(PASS|FAIL)|: (PASS|FAIL)" | cut -c1-260 | head -40
(cd "$OUT" && tar czf gpu-logs.tgz gpu-check-all.out gpu-*.log gpu-sanitize tidald.log policy-trace.jsonl 2>/dev/null; rm -rf gpu-sanitize gpu-check-all.out gpu-check.log gpu-check-cubin-nvptxcompiler.log gpu-sanitize.log)
ls "$OUT"
