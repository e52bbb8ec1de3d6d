#!/usr/bin/env bash
# Session 12, device call 5: call 4 again for the tidal configurations only (call 4 stopped
# at "green": cuBLAS on a green-context stream made outside libtidal failed under the
# preload), with SGDRC's and GSLICE's LS demand at BERT-base's measured knee (96 SMs).
set -u
t0=$SECONDS
timeout 280 bench/colocate/run.sh --configs tidal-static,tidal-sgdrc,tidal-gslice --ls-demand 96 \
  --loads 0.3,0.5,0.7 --seconds 3 > "$OUT/colocate.out" 2>&1
echo "[1 $((SECONDS - t0))s] colocate rc=$?"
grep -v "^  " "$OUT/colocate.out" | grep -E "colocate|FAIL|Error|error" | cut -c1-240 | tail -30
cat "$OUT/colocate/colocate.md" 2>/dev/null
(cd "$OUT" && tar czf colocate-traces.tgz colocate/trace-*.jsonl 2>/dev/null; rm -f colocate/trace-*.jsonl)
