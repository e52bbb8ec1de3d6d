#!/usr/bin/env bash
# Session 19 call 1: where the placed clone's per-launch time goes now (bisect of its fast
# path, 1 and 264 blocks), and the tiny benchmark at the same commit.
set -uo pipefail
R=$OUT/call1; mkdir -p "$R"
OUT=$R timeout 200 bench/probes/clone_path.sh > /dev/null 2>&1; echo "clone_path rc=$?"
OUT=$R timeout 200 bench/gpu/run.sh tiny > /dev/null 2>&1; echo "tiny rc=$?"
grep -E 'RESULT|PASS|FAIL|==.*block' "$R/clone-path.log" | tail -70
grep -E 'c-static|orig' "$R/tidal-bench-tiny.log" | head -20
