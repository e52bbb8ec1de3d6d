#!/usr/bin/env bash
# Session 15, device call 3: `make gpu-check` after the session's last GPU-facing change
# (bimodal tensors, the l2mem probe's per-device pattern, the C serving engine, the public
# headers' shared bracket), then bench/vram/bimodal.sh again (call 2's ran into its 90 s
# timeout after phase a; l2_bench now has a watchdog that names a stuck step).
set -u
t0=$SECONDS
say() { echo "[3 $((SECONDS - t0))s] $*"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$OUT make gpu-check > "$OUT/gpu-check-all.out" 2>&1; say "make gpu-check rc=$?"; tail -2 "$OUT/gpu-check-all.out"
for l in gpu-check gpu-runtime gpu-sanitize; do echo "$l: $(tail -1 "$OUT/$l.log")"; grep -E "^FAIL|: FAIL" "$OUT/$l.log" | cut -c1-300 | head -10; done
grep -hE "(l2mem|bimodal|serve)\.[a-z-]+" "$OUT/gpu-runtime.log" | grep -E "PASS|FAIL" | cut -c1-200 | head -40
OUT=$OUT timeout 100 bench/vram/bimodal.sh > "$OUT/bimodal.out" 2>&1; say "bimodal rc=$?"; tail -12 "$OUT/bimodal.out"
(cd "$OUT" && tar czf gpu-logs.tgz gpu-check-all.out gpu-*.log gpu-sanitize tidald.log policy-trace.jsonl bimodal.* 2>/dev/null; rm -rf gpu-sanitize gpu-check-all.out gpu-check.log gpu-check-cubin-nvptxcompiler.log gpu-sanitize.log)
ls "$OUT"; say done
