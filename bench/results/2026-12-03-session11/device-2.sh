#!/usr/bin/env bash
# Session 11, device call 2 (carry: build-llvm-gpu from test/gpu/llvm_ir_ptx.sh): own
# chunks in the original's wave order (TIDAL_LAUNCH_INTERLEAVE): bench/probes/gemm_clone.sh,
# then `make gpu-check` (new harness modes c-static-il, flip-c-static-il), then the LLVM-IR
# path's clones through the harness.
set -u
t0=$SECONDS
OUT=$OUT bench/probes/gemm_clone.sh > "$OUT/gemm_clone.log" 2>&1
echo "[1 $((SECONDS - t0))s] gemm_clone"; grep -v '^{' "$OUT/gemm_clone.log" | sed 's/"max_err[^}]*label"/ /' | cut -c1-120
OUT=$OUT make gpu-check > "$OUT/gpu-check-all.out" 2>&1; rc=$?
echo "[2 $((SECONDS - t0))s] make gpu-check rc=$rc"; tail -1 "$OUT/gpu-check-all.out"
for l in gpu-check gpu-runtime gpu-sanitize; do echo "$l: $(tail -1 "$OUT/$l.log")"; grep -E "^FAIL" "$OUT/$l.log" | cut -c1-300 | head -10; done
grep -h "ERROR SUMMARY" "$OUT/gpu-runtime.log" | sort | uniq -c | head -3
(cd "$OUT" && tar czf device-2-logs.tgz gpu-check-all.out gpu-sanitize colocate.log tidald.log dnn 2>/dev/null; rm -rf gpu-sanitize dnn tidald.log colocate.log)
left=$((560 - SECONDS + t0))
mkdir -p "$OUT/ir"
timeout $((left > 30 ? left : 30)) env OUT=$OUT/ir test/gpu/run.sh --ptx-dirs build-llvm-gpu/orig build-llvm-gpu/tidal-ir --only "$(cat build-llvm-gpu/only-tidal-ir)" > "$OUT/ir/run.out" 2>&1
echo "[3 $((SECONDS - t0))s] IR path rc=$?"; tail -2 "$OUT/ir/run.out"; grep -E "^FAIL" "$OUT/ir/"*.log 2>/dev/null | cut -c1-300 | head -10
(cd "$OUT" && tar czf ir-logs.tgz ir && rm -rf ir)
