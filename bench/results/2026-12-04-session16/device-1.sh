#!/usr/bin/env bash
# Session 16, device call 1: cluster routes (issue 10) on the H200.
#  1. rt_app cluster in both builds, TIDAL_DEBUG=1 (the 8-SM cluster groups' %smid map is
#     logged); rt_app place and graph (linked) as a regression check of placement
#  2. bench/dnn ResNet-50 b1 (cuDNN convolutions, clusters): census, a (all SMs), b (a
#     0-65 partition vs a green context) — the CNN rows issue 10 asks for
set -u
t0=$SECONDS
say() { echo "[1 $((SECONDS - t0))s] $*"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
B=build-gpu-rt
test/gpu/runtime/run.sh --build-only > "$OUT/rt-build.log" 2>&1; say "rt build rc=$?"
tail -3 "$OUT/rt-build.log"
export TIDAL_NO_DAEMON=1
TIDAL_DEBUG=1 timeout 60 "$B/rt_app_linked" cluster > "$OUT/rt-linked-cluster.log" 2>&1; say "linked cluster rc=$?"
TIDAL_DEBUG=1 LD_PRELOAD=$B/lib/libtidal-preload.so timeout 60 "$B/rt_app_plain" cluster > "$OUT/rt-preload-cluster.log" 2>&1; say "preload cluster rc=$?"
for m in place graph; do timeout 90 "$B/rt_app_linked" $m > "$OUT/rt-linked-$m.log" 2>&1; say "linked $m rc=$?"; done
grep -hE "PASS|FAIL|SKIP" "$OUT"/rt-*.log | cut -c1-230 | head -60
grep -hE "cluster|placement: " "$OUT/rt-linked-cluster.log" | cut -c1-300 | head -30
unset TIDAL_NO_DAEMON
UNMOD_TIMEOUT=170 BENCH_DEADLINE=400 OUT=$OUT timeout 420 bench/dnn/run.sh --models resnet50 -- --sections census,a,b \
  > "$OUT/dnn.out" 2>&1
say "dnn rc=$?"
grep -vE "^\s*$" "$OUT/dnn.out" | grep -E "^\||resnet50|FAIL|rror|closed|routed" | cut -c1-260 | tail -50
(cd "$OUT" && tar czf all.tgz rt-*.log dnn.out dnn 2>/dev/null && rm -rf dnn)
ls "$OUT"; say done
