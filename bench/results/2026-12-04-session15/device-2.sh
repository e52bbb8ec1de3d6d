#!/usr/bin/env bash
# Session 15, device call 2: the session's new GPU parts before the closing gpu-check.
#  1. rt_app l2mem, bimodal, serve in both builds (the per-device home pattern with the
#     sturdier probe, bimodal tensors switched under a running kernel, the C serving engine)
#  2. bench/vram/bimodal.sh (issue 13's isolation benchmark for bimodal tensors)
#  3. the colocation benchmark's serving loop, Python against C (issue 12): LS BERT-base b1
#     alone under engine python (the SLO reference), then under engine c: alone, green
#     66/66, tidal-static, tidal-sgdrc demand 96 with a 2 ms hold; 3 loads x 2 runs x 1.5 s
set -u
t0=$SECONDS
say() { echo "[2 $((SECONDS - t0))s] $*"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
B=build-gpu-rt
test/gpu/runtime/run.sh --build-only > "$OUT/rt-build.log" 2>&1; say "rt build rc=$?"
export TIDAL_NO_DAEMON=1
for m in l2mem bimodal serve; do
  timeout 60 "$B/rt_app_linked" $m > "$OUT/rt-linked-$m.log" 2>&1; say "linked $m rc=$?"
  LD_PRELOAD=$B/lib/libtidal-preload.so timeout 60 "$B/rt_app_plain" $m > "$OUT/rt-preload-$m.log" 2>&1; say "preload $m rc=$?"
done
grep -hE "PASS|FAIL|SKIP" "$OUT"/rt-*.log | cut -c1-220 | head -60
unset TIDAL_NO_DAEMON
OUT=$OUT timeout 90 bench/vram/bimodal.sh > "$OUT/bimodal.out" 2>&1; say "bimodal rc=$?"; grep PHASE "$OUT/bimodal.out"
common=(--loads 0.3,0.5,0.7 --runs 2 --seconds 1.5 --mps "")
OUT=$OUT/py timeout 200 bench/colocate/run.sh --engine python --base alone --tidal "" "${common[@]}" > "$OUT/run-py.out" 2>&1
say "colocate python rc=$?"
ref=$OUT/py/colocate/base/colocate.json
left=$((575 - SECONDS + t0)); ((left < 30)) && left=30
OUT=$OUT/c timeout $left bench/colocate/run.sh --engine c --reference "$ref" --base alone,green \
  --tidal tidal-static,tidal-sgdrc:demand=96:idle=2000 "${common[@]}" > "$OUT/run-c.out" 2>&1
say "colocate c rc=$?"
grep -hE "^\[colocate|^\|" "$OUT/run-py.out" "$OUT/run-c.out" | cut -c1-250 | tail -60
(cd "$OUT" && tar czf colocate-all.tgz run-*.out py c rt-*.log bimodal.out 2>/dev/null && rm -rf py/colocate/base/*.jsonl)
ls "$OUT"; say done
