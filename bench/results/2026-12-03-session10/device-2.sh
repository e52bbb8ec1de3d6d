#!/usr/bin/env bash
# Session 10, device call 2: `make gpu-check` (rewrite harness, runtime suite with tidald
# and memcheck sections, compute-sanitizer over the suite) at the session's last change.
set -u
t0=$SECONDS
OUT=$OUT make gpu-check > "$OUT/gpu-check-all.out" 2>&1; rc=$?
echo "[2 $((SECONDS - t0))s] make gpu-check rc=$rc"; tail -2 "$OUT/gpu-check-all.out"
for l in gpu-check gpu-runtime gpu-sanitize; do echo "$l: $(tail -1 "$OUT/$l.log")"; grep -E "^FAIL" "$OUT/$l.log" | cut -c1-300 | head -10; done
grep -h "ERROR SUMMARY" "$OUT/gpu-runtime.log" | sort | uniq -c
(cd "$OUT" && tar czf device-2-logs.tgz gpu-check-all.out gpu-sanitize colocate.log tidald.log 2>/dev/null; rm -rf gpu-sanitize)
