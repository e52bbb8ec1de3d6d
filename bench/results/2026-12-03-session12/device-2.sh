#!/usr/bin/env bash
# Session 12, device call 2: the policies on real partitions (rt_app policy, both builds):
# SGDRC's reservation evicts only the BE blocks on the LS SMs of a running kernel, GSLICE
# tunes an LS share from measured latencies. Then the policy unit tests on this machine.
set -u
t0=$SECONDS
export TIDAL_NO_DAEMON=1
test/gpu/runtime/run.sh --build-only > "$OUT/build.log" 2>&1 || { echo "build failed"; tail -30 "$OUT/build.log"; exit 1; }
echo "[1 $((SECONDS - t0))s] built"
B=$PWD/build-gpu-rt
TIDAL_POLICY_TRACE=$OUT/trace-linked.jsonl timeout 120 "$B/rt_app_linked" policy 2>&1 | tee "$OUT/policy-linked.log"
echo "[2 $((SECONDS - t0))s] linked rc=${PIPESTATUS[0]}"
TIDAL_POLICY_TRACE=$OUT/trace-preload.jsonl LD_PRELOAD=$B/lib/libtidal-preload.so timeout 120 "$B/rt_app_plain" policy 2>&1 | tee "$OUT/policy-preload.log"
echo "[3 $((SECONDS - t0))s] preload rc=${PIPESTATUS[0]}"
wc -l "$OUT"/trace-*.jsonl; grep -c '"event":"tune"' "$OUT/trace-linked.jsonl"; head -c 1500 "$OUT/trace-linked.jsonl"; echo; tail -c 1200 "$OUT/trace-linked.jsonl"
