#!/usr/bin/env bash
# Session 14, device call 4: (1) bench/probes/green_cluster.sh: do thread-block clusters run
# on green contexts of 2-SM groups (call 3's cuBLASLt failure on green streams, in the
# unmodified process too)? (2) call 3's bench/dnn comparison again with Triton GEMMs only
# (BENCH_GEMM_BACKENDS=TRITON: no cuBLAS on green streams): LS/BE split along the L2 sides
# (measured here by tidal-vram-probe's side experiment), then by SM number, same counts.
set -u
t0=$SECONDS
OUT=$OUT bench/probes/green_cluster.sh > /dev/null 2>&1
grep -E "RESULT|g2:|g8:|device" "$OUT/green-cluster.log"
echo "[4 $((SECONDS - t0))s] green_cluster"
mkdir -p "$OUT/vram"
timeout 60 bench/vram/run.sh "$OUT/vram" --granules 8 --only side --side-stride 1024 > "$OUT/vram-run.log" 2>&1
cat "$OUT/vram/sides.txt"
s0=$(awk '$1=="side0"{print $2}' "$OUT/vram/sides.txt"); s1=$(awk '$1=="side1"{print $2}' "$OUT/vram/sides.txt")
k=$(python3 -c "import sys; sys.path.insert(0,'bench/dnn'); from common import parse_smset; print(len(parse_smset('$s0', 132)))")
echo "[4 $((SECONDS - t0))s] LS side set: $k SMs"
export BENCH_GEMM_BACKENDS=TRITON
args=(--models bert-base,bert-large -- --sections c --storm-n 300 --n 200 --warmup 20)
OUT=$OUT/side BENCH_DEADLINE=300 timeout 310 bench/dnn/run.sh "${args[@]}" --ls-sms "$s0" --be-sms "$s1" > "$OUT/dnn-side.log" 2>&1
echo "[4 $((SECONDS - t0))s] dnn side rc=$?"
OUT=$OUT/contig BENCH_DEADLINE=170 timeout 180 bench/dnn/run.sh "${args[@]}" --ls-sms "0-$((k - 1))" --be-sms "$k-131" > "$OUT/dnn-contig.log" 2>&1
echo "[4 $((SECONDS - t0))s] dnn contig rc=$?"
for d in side contig; do echo "== $d"; sed -n "/^### c\./,/^### kernels/p" "$OUT/$d/dnn/summary.md" 2>/dev/null | head -16; grep FAILED "$OUT/dnn-$d.log" | cut -c1-200 | head -3; done
(cd "$OUT" && tar czf dnn.tgz side contig dnn-side.log dnn-contig.log vram vram-run.log && rm -rf vram side contig)
