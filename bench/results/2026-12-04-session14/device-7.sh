#!/usr/bin/env bash
# Session 14, device call 7: tidal_l2mem on the GPU: the runtime suite's l2mem case in both
# builds, then the isolation benchmark bench/vram/l2mem_iso.sh.
set -u
t0=$SECONDS
test/gpu/runtime/run.sh --build-only > "$OUT/rt-build.log" 2>&1; echo "[7 $((SECONDS - t0))s] runtime build rc=$?"
B=build-gpu-rt
TIDAL_DEBUG=1 timeout 120 $B/rt_app_linked l2mem > "$OUT/l2mem-linked.log" 2>&1; echo "linked rc=$?"
grep -E "^(PASS|FAIL)|L2 (memory|sides)" "$OUT/l2mem-linked.log" | cut -c1-300
LD_PRELOAD=$B/lib/libtidal-preload.so timeout 120 $B/rt_app_plain l2mem > "$OUT/l2mem-preload.log" 2>&1; echo "preload rc=$?"
grep -E "^(PASS|FAIL)" "$OUT/l2mem-preload.log" | cut -c1-300
echo "[7 $((SECONDS - t0))s] rt_app"
OUT=$OUT timeout 200 bench/vram/l2mem_iso.sh > /dev/null 2>&1; echo "[7 $((SECONDS - t0))s] l2mem_iso rc=$?"
cat "$OUT/l2mem-iso.log"
