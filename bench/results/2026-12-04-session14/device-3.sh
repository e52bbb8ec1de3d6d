#!/usr/bin/env bash
# Session 14, device call 3: (1) tidal-vram-probe at 256 B grain (slice classes of the
# 256 B units call 2 found) with side, home, iso-side and iso; (2) bench/dnn section c
# (BERT-base LS graph under a BERT-large BE storm) with the LS/BE split along the L2
# sides the probe measured on this machine, then (warm caches) with the same SM counts
# split by SM number (0..k-1 / k..131), the layout of every earlier run.
set -u
t0=$SECONDS
mkdir -p "$OUT/vram"
timeout 100 bench/vram/run.sh "$OUT/vram" --granules 64 --grain 256 --max-runs 160 --ls-granules 16 > "$OUT/vram-run.log" 2>&1
echo "[3 $((SECONDS - t0))s] vram rc=$?"
grep -E "^(calib|side: [0-9]|home|iso-side: LS (H0|all) .* rep 0|slice: (victims|run +[0-3] |[0-9]+ classes)|iso: LS .* rep 0|done)" "$OUT/vram/probe.log" | cut -c1-170
cat "$OUT/vram/sides.txt"
s0=$(awk '$1=="side0"{print $2}' "$OUT/vram/sides.txt"); s1=$(awk '$1=="side1"{print $2}' "$OUT/vram/sides.txt")
k=$(python3 -c "import sys; sys.path.insert(0,'bench/dnn'); from common import parse_smset; print(len(parse_smset('$s0', 132)))")
echo "LS side set ($k SMs): $s0"; echo "BE side set: $s1"
args=(--models bert-base,bert-large -- --sections c --storm-n 300 --n 200 --warmup 20)
OUT=$OUT/side BENCH_DEADLINE=290 timeout 300 bench/dnn/run.sh "${args[@]}" --ls-sms "$s0" --be-sms "$s1" > "$OUT/dnn-side.log" 2>&1
echo "[3 $((SECONDS - t0))s] dnn side rc=$?"
OUT=$OUT/contig BENCH_DEADLINE=175 timeout 185 bench/dnn/run.sh "${args[@]}" --ls-sms "0-$((k - 1))" --be-sms "$k-131" > "$OUT/dnn-contig.log" 2>&1
echo "[3 $((SECONDS - t0))s] dnn contig rc=$?"
for d in side contig; do echo "== $d"; sed -n "/^### c\./,/^### kernels/p" "$OUT/$d/dnn/summary.md" 2>/dev/null | head -16; done
(cd "$OUT" && tar czf vram.tgz vram vram-run.log && tar czf dnn.tgz side contig dnn-side.log dnn-contig.log && rm -rf vram side contig)
