#!/usr/bin/env bash
# Session 16, device call 3: issue 13's new GPU parts.
#  1. rt_app l2addr in both builds: tidal_l2addr_attach on modules tidal-opt -p l2addr (and
#     -p l2addr,tidal) translated, each side's half filled and summed through parameter 0
#  2. bench/vram/bimodal.sh with its two fixes (the stop word is zeroed before BE starts; a
#     stuck LS probe prints which SMs BE holds) and l2mem_iso.sh again (the same fix applies)
set -u
t0=$SECONDS
say() { echo "[3 $((SECONDS - t0))s] $*"; }
B=build-gpu-rt
test/gpu/runtime/run.sh --build-only > "$OUT/rt-build.log" 2>&1; say "rt build rc=$?"
export TIDAL_NO_DAEMON=1
timeout 60 "$B/rt_app_linked" l2addr "$B/l2a.l2.ptx" "$B/l2a.both.ptx" > "$OUT/rt-linked-l2addr.log" 2>&1; say "linked l2addr rc=$?"
LD_PRELOAD=$B/lib/libtidal-preload.so timeout 60 "$B/rt_app_plain" l2addr "$B/l2a.l2.ptx" "$B/l2a.both.ptx" \
  > "$OUT/rt-preload-l2addr.log" 2>&1; say "preload l2addr rc=$?"
grep -hE "PASS|FAIL|SKIP" "$OUT"/rt-*-l2addr.log | cut -c1-260
unset TIDAL_NO_DAEMON
OUT=$OUT timeout 100 bench/vram/bimodal.sh > "$OUT/bimodal.out" 2>&1; say "bimodal rc=$?"
grep -E "^\||PHASE|stuck|watchdog|rror" "$OUT/bimodal.out" | head -30
OUT=$OUT timeout 100 bench/vram/l2mem_iso.sh > "$OUT/iso.out" 2>&1; say "l2mem_iso rc=$?"
grep -E "^\||stuck|watchdog|rror" "$OUT/iso.out" | head -30
ls "$OUT"; say done
