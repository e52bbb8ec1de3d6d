#!/usr/bin/env bash
# Session 10, device call 3: the LLVM-IR path on the GPU (carried: build-llvm-gpu from
# test/gpu/llvm_ir_ptx.sh; ABI v5 changed llvm_protocol.c), the gemm_clone probe with a
# TIDAL_CHUNK_US=40 variant, then bench/dnn with section b (LS alone on a 66-SM tidal
# partition vs a 66-SM green context) next to census, a, c.
set -u
t0=$SECONDS
el() { echo "[3 $((SECONDS - t0))s] $*"; }
mkdir -p "$OUT/ir" "$OUT/irp"
el "IR path (tidal-ir)"; OUT=$OUT/ir test/gpu/run.sh --ptx-dirs build-llvm-gpu/orig build-llvm-gpu/tidal-ir --only "$(cat build-llvm-gpu/only-tidal-ir)" > "$OUT/ir/run.out" 2>&1
el "IR rc=$?: $(tail -1 "$OUT/ir/gpu-check.log")"; grep -E "^FAIL" "$OUT/ir/gpu-check.log" | head
el "IR path (PTX pass on NVPTX's PTX)"; OUT=$OUT/irp test/gpu/run.sh --no-build --ptx-dirs build-llvm-gpu/orig build-llvm-gpu/tidal --only "$(cat build-llvm-gpu/only-tidal)" > "$OUT/irp/run.out" 2>&1
el "IR-PTX rc=$?: $(tail -1 "$OUT/irp/gpu-check.log")"; grep -E "^FAIL" "$OUT/irp/gpu-check.log" | head
el "gemm_clone probe"; timeout 150 bench/probes/gemm_clone.sh > "$OUT/gemm_clone.out" 2>&1; el "probe rc=$?"
grep -E 'kernel|rror|Traceback' "$OUT/gemm_clone.out" | grep -v '^{' | sed 's/, "n": 300//; s/"max_chunk.*"label"/"label"/' | cut -c1-200 | head -20
dl=$((580 - (SECONDS - t0))); ((dl > 400)) && dl=400
el "dnn (deadline ${dl}s)"; BENCH_DEADLINE=$dl UNMOD_TIMEOUT=170 bench/dnn/run.sh --models bert-base,bert-large \
  -- --sections census,a,b,c --n 200 --n-large 60 --storm-n 200 --warmup 20 --placements hybrid > "$OUT/dnn-console.log" 2>&1
el "dnn rc=$?"
cp "$OUT/dnn/summary.md" "$OUT/dnn-summary.md" 2>/dev/null; cp "$OUT/dnn/ls_p99_vs_be.png" "$OUT/" 2>/dev/null
sed -n '/### a\./,/### kernels per/p' "$OUT/dnn-summary.md" | head -34
grep -A8 "bert-large: kernels whose" "$OUT/dnn-summary.md"
(cd "$OUT" && tar czf device-3-logs.tgz --exclude=dnn/cache dnn ir irp 2>/dev/null && rm -rf dnn ir irp)
el "done"; ls "$OUT"
