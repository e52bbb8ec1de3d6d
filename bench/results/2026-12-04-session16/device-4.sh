#!/usr/bin/env bash
# Session 16, device call 4: bench/vram after call 3's findings: kernels loaded eagerly (the
# LS probe's lazy first load waited for BE, which waited for LS), BE's own globaltimer span
# checked against the events (a BE that did not run its time is said, its GB/s negative).
set -u
t0=$SECONDS
say() { echo "[4 $((SECONDS - t0))s] $*"; }
OUT=$OUT timeout 120 bench/vram/bimodal.sh > "$OUT/bimodal.out" 2>&1; say "bimodal rc=$?"
grep -E "^\||PHASE|stuck|watchdog|rror|BE ran" "$OUT/bimodal.out" | head -40
OUT=$OUT timeout 100 bench/vram/l2mem_iso.sh > "$OUT/iso.out" 2>&1; say "l2mem_iso rc=$?"
grep -E "^\||stuck|watchdog|rror|BE ran" "$OUT/iso.out" | head -30
ls "$OUT"; say done
