#!/usr/bin/env bash
# Session 11, device call 1: `make gpu-check` at session 10's last change (+ the
# TIDAL_SAMPLE_GATE knob); bench/probes/gemm_clone.sh with a near claim-free config; ncu of
# the addmm probe kernel unmodified and as the clone (where its time goes), and whether ncu
# can profile a timed launch behind the sample gate (kernel replay waits in the launch call).
set -u
t0=$SECONDS
OUT=$OUT make gpu-check > "$OUT/gpu-check-all.out" 2>&1; rc=$?
echo "[1 $((SECONDS - t0))s] make gpu-check rc=$rc"; tail -2 "$OUT/gpu-check-all.out"
for l in gpu-check gpu-runtime gpu-sanitize; do echo "$l: $(tail -1 "$OUT/$l.log")"; grep -E "^FAIL" "$OUT/$l.log" | cut -c1-300 | head -10; done
grep -h "ERROR SUMMARY" "$OUT/gpu-runtime.log" | sort | uniq -c
(cd "$OUT" && tar czf device-1-logs.tgz gpu-check-all.out gpu-sanitize colocate.log tidald.log 2>/dev/null; rm -rf gpu-sanitize)
OUT=$OUT bench/probes/gemm_clone.sh > "$OUT/gemm_clone.log" 2>&1
echo "[2 $((SECONDS - t0))s] gemm_clone"; cat "$OUT/gemm_clone.log" | grep -v '^{' | cut -c1-200
B=$PWD/build-dnn
NCU=(ncu --clock-control none -k regex:addmm --launch-skip 30 --launch-count 1 --section SpeedOfLight
     --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --print-summary none)
P=(python3 bench/probes/gemm_clone.py --n 10 --warmup 25)
T=(scripts/tidal-run --build "$B" --partition all:0-131 --)
timeout 150 "${NCU[@]}" "${P[@]}" > "$OUT/ncu-unmod.txt" 2>&1; echo "[3 $((SECONDS - t0))s] ncu unmod rc=$?"
timeout 150 env TIDAL_SAMPLE_GATE=0 TIDAL_PLACEMENT=hybrid TIDAL_SHORT_US=0 "${NCU[@]}" "${T[@]}" "${P[@]}" > "$OUT/ncu-clone.txt" 2>&1
echo "[4 $((SECONDS - t0))s] ncu clone (gate off) rc=$?"
timeout 60 env TIDAL_PLACEMENT=hybrid TIDAL_SHORT_US=0 "${NCU[@]}" "${T[@]}" "${P[@]}" > "$OUT/ncu-clone-gate.txt" 2>&1
echo "[5 $((SECONDS - t0))s] ncu clone (gate on, 60 s limit) rc=$?"
for f in ncu-unmod ncu-clone; do echo "== $f"; grep -E 'addmm|Duration|Elapsed Cycles|SM Active|Registers|Warp Cycles Per Issued|Issued Warp|No Eligible|Stall|Achieved Occupancy|Block Limit' "$OUT/$f.txt" | head -40; done
echo "== gate on"; tail -5 "$OUT/ncu-clone-gate.txt"
