#!/usr/bin/env bash
# Session 19 call 6: make gpu-check's runtime suite again (test/gpu/runtime/run.sh) at the
# session's last GPU-facing commit. Call 2's gpu-check had every suite green but five
# serve checks of this one, on a host that stalled for milliseconds; rt_app's batch checks
# now judge the engine from the queueing (c804c33). The harness (2299/0 in both builds) and
# the sanitizer suite (181/0) ran in call 2 after the protocol change (88e00ed).
set -u
t0=$SECONDS
R=$OUT/call6; mkdir -p "$R"
OUT=$R timeout 330 test/gpu/runtime/run.sh > "$R/runtime.out" 2>&1; echo "[6 $((SECONDS - t0))s] runtime rc=$?"
grep -E '^FAIL|FAIL ' "$R/gpu-runtime.log" | cut -c1-300 | head -20
tail -1 "$R/gpu-runtime.log"
