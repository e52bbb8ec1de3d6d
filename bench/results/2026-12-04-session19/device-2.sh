#!/usr/bin/env bash
# Session 19 call 2, after the departure's fence became a release store (call 1 found the
# fence kept the body's dead-result atomics as ATOMG):
#  1. bench/probes/clone_path.sh and bench/gpu/run.sh tiny: the clone's per-launch cost now
#  2. make gpu-check: exactly-once and live flips with the new departure
set -u
t0=$SECONDS
say() { echo "[2 $((SECONDS - t0))s] $*"; }
R=$OUT/call2; mkdir -p "$R/gc"
OUT=$R timeout 120 bench/probes/clone_path.sh > /dev/null 2>&1; say "clone_path rc=$?"
grep -E 'RESULT (plain|orig|clone|bare|cut-all|lean) |PASS|FAIL|==.*block' "$R/clone-path.log" | tail -20
OUT=$R timeout 120 bench/gpu/run.sh tiny > /dev/null 2>&1; say "tiny rc=$?"
grep -E '^(1|264) ' "$R/tidal-bench-tiny.log" | head -20
timeout 460 make gpu-check OUT="$R/gc" > "$R/gpu-check.out" 2>&1; say "gpu-check rc=$?"
grep -hE "passed|FAIL" "$R/gpu-check.out" | tail -15
(cd "$R" && tar czf gc.tgz gc && rm -rf gc)
say done
