#!/usr/bin/env bash
# Session 14, device call 6: (1) green_cluster.sh with the mixed and sub contexts (can a
# partition's green context run clusters of 4 and 8 on its co-schedulable 8-SM groups?);
# (2) the GPU runtime suite built, and its new l2side case run in both builds.
set -u
t0=$SECONDS
OUT=$OUT bench/probes/green_cluster.sh > /dev/null 2>&1
grep -E "RESULT|g2:|g8:|mixed|sub:" "$OUT/green-cluster.log"
echo "[6 $((SECONDS - t0))s] green_cluster"
test/gpu/runtime/run.sh --build-only > "$OUT/rt-build.log" 2>&1; echo "[6 $((SECONDS - t0))s] runtime build rc=$?"; tail -3 "$OUT/rt-build.log"
B=build-gpu-rt
TIDAL_DEBUG=1 timeout 120 $B/rt_app_linked l2side > "$OUT/l2side-linked.log" 2>&1; echo "linked rc=$?"
grep -E "^(PASS|FAIL)|L2 (sides|probe)" "$OUT/l2side-linked.log" | cut -c1-330
LD_PRELOAD=$B/lib/libtidal-preload.so timeout 120 $B/rt_app_plain l2side > "$OUT/l2side-preload.log" 2>&1; echo "preload rc=$?"
grep -E "^(PASS|FAIL)" "$OUT/l2side-preload.log" | cut -c1-330
echo "[6 $((SECONDS - t0))s] done"
