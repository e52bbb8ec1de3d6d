#!/usr/bin/env bash
# Session 17, device call 1: correctness of session 16's review commits (one stream lookup
# per launch, runtime/routes.c, streams/green/serve refactors), never GPU-run, and the
# protocol's per-launch cost (issue 10's 0.5 us target).
set -u
t0=$SECONDS
say() { echo "[1 $((SECONDS - t0))s] $*"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p "$OUT/gc"
timeout 470 make gpu-check OUT="$OUT/gc" > "$OUT/gpu-check.out" 2>&1; say "gpu-check rc=$?"
grep -hE "passed|FAIL" "$OUT/gpu-check.out" | tail -15
OUT=$OUT timeout 100 bench/gpu/run.sh tiny > "$OUT/tiny.out" 2>&1; say "tiny rc=$?"
grep -E "^\||per launch|added" "$OUT/tiny.out" | tail -30
(cd "$OUT" && tar czf gc.tgz gc && rm -rf gc)
ls "$OUT"; say done
