#!/usr/bin/env bash
# Session 17, device call 4: make gpu-check after the session's last GPU-facing change
# (runtime/serve.c: a batch runs the largest placed share inside its mask).
set -u
t0=$SECONDS
say() { echo "[4 $((SECONDS - t0))s] $*"; }
git log --oneline -1
mkdir -p "$OUT/gc"
timeout 470 make gpu-check OUT="$OUT/gc" > "$OUT/gpu-check.out" 2>&1; say "gpu-check rc=$?"
grep -hE "passed|FAIL" "$OUT/gpu-check.out" | tail -12
(cd "$OUT" && tar czf gc.tgz gc && rm -rf gc)
ls "$OUT"; say done
