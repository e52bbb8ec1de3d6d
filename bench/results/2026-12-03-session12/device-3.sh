#!/usr/bin/env bash
# Session 12, device call 3: the offline SM-scaling profiler (bench/dnn section profile) on
# BERT-base b1 and ResNet-50 b1 (tidal side only: partitions 0..k-1), then `make gpu-check`
# (with the runtime suite's new policy checks) after the session's last change.
set -u
t0=$SECONDS
BENCH_DEADLINE=330 bench/dnn/run.sh --only tidal --models bert-base,resnet50 -- --sections profile \
  --profile-n 100 --warmup 10 > "$OUT/profile.out" 2>&1
echo "[1 $((SECONDS - t0))s] profile rc=$?"
grep -E "^\[run.sh|profile |FAIL|Error|error" "$OUT/profile.out" | grep -v "^  " | cut -c1-220 | tail -45
mkdir -p "$OUT/profile" && cp "$OUT"/dnn/profile-* "$OUT/profile/" 2>/dev/null
(cd "$OUT" && tar czf dnn-logs.tgz dnn profile.out && rm -rf dnn profile.out)
OUT=$OUT make gpu-check > "$OUT/gpu-check-all.out" 2>&1; rc=$?
echo "[2 $((SECONDS - t0))s] make gpu-check rc=$rc"; tail -2 "$OUT/gpu-check-all.out"
for l in gpu-check gpu-runtime gpu-sanitize; do echo "$l: $(tail -1 "$OUT/$l.log")"; grep -E "^FAIL" "$OUT/$l.log" | cut -c1-300 | head -10; done
grep -E "policy\." "$OUT/gpu-runtime.log" | cut -c1-400
(cd "$OUT" && tar czf gpu-logs.tgz gpu-check-all.out gpu-*.log gpu-sanitize colocate.log tidald.log policy-trace.jsonl 2>/dev/null; rm -rf gpu-sanitize gpu-check-all.out gpu-check.log gpu-check-cubin-nvptxcompiler.log gpu-sanitize.log)
ls "$OUT"
