#!/usr/bin/env bash
# Session 17, device call 3: GSLICE with a ladder of placed LS graphs, after call 2's two
# failures (a Record field the row used does not exist; ResNet-50's cuDNN cluster kernels
# refused on ladder steps with no whole 8-SM cluster group: the ladder now starts at from=64).
# The SLO and the baselines (alone, green) are call 2's (--reference: its base process).
#  0. rt_app serve, both builds (the share rule is now largest subset)
#  1. LS BERT-base: tidal-gslice:placed=1 (ladder 16 from 16), 2 runs
#  2. LS ResNet-50 on 0-63: tidal-gslice:placed=1:ladder=8:from=64, 3 runs
set -u
t0=$SECONDS
say() { echo "[3 $((SECONDS - t0))s] $*"; }
B=build-gpu-rt
test/gpu/runtime/run.sh --build-only > "$OUT/rt-build.log" 2>&1; say "rt build rc=$?"
export TIDAL_NO_DAEMON=1
timeout 60 "$B/rt_app_linked" serve > "$OUT/rt-linked-serve.log" 2>&1; say "linked serve rc=$?"
LD_PRELOAD=$B/lib/libtidal-preload.so timeout 60 "$B/rt_app_plain" serve > "$OUT/rt-preload-serve.log" 2>&1; say "preload serve rc=$?"
grep -hE "PASS|FAIL|SKIP" "$OUT"/rt-*-serve.log | cut -c1-200 | head -30
unset TIDAL_NO_DAEMON
R=$PWD/bench/results/2026-12-04-session17/call2
OUT=$OUT/bert timeout 230 bench/colocate/run.sh --deadline 220 --engine c --base "" --mps "" \
  --reference $R/bert/colocate/base/colocate.json --tidal tidal-gslice:placed=1 \
  --loads 0.3,0.5,0.7 --runs 2 --seconds 1.5 > "$OUT/bert.out" 2>&1
say "bert rc=$?"
grep -hE "^\[colocate.*(load|FAIL)|^\||FAIL|rror" "$OUT/bert.out" | cut -c1-300 | tail -24
left=$((560 - (SECONDS - t0)))
OUT=$OUT/cnn timeout $((left + 5)) bench/colocate/run.sh --deadline $left --engine c --ls resnet50 \
  --ls-sms 0-63 --be-sms 64-131 --base "" --mps "" --reference $R/cnn/colocate/base/colocate.json \
  --tidal tidal-gslice:placed=1:ladder=8:from=64 --loads 0.3,0.5,0.7 --runs 3 --seconds 1.5 > "$OUT/cnn.out" 2>&1
say "cnn rc=$?"
grep -hE "^\[colocate.*(load|FAIL)|^\||FAIL|rror" "$OUT/cnn.out" | cut -c1-300 | tail -30
(cd "$OUT" && tar czf colocate.tgz bert.out cnn.out bert cnn rt-*.log 2>/dev/null && rm -rf bert cnn)
ls "$OUT"; say done
