#!/usr/bin/env bash
# Session 12, device call 4: the colocation benchmark (bench/colocate/run.sh), BERT-base b1
# LS at 30/50/70% of its solo capacity, BERT-large b16 BE closed-loop, every configuration;
# SGDRC's LS profile is call 3's fit of BERT-base (bench/dnn section profile) when it exists.
set -u
t0=$SECONDS
P=bench/results/2026-12-03-session12/call3/profile/profile-bert-base.json
prof=()
if [[ -f $P ]]; then
  prof=(--ls-profile "$(python3 -c "import json; f = json.load(open('$P'))['fit']; print('%.3f,%.3f' % (f['a_us'], f['b_us']))")")
fi
echo "profile: ${prof[*]:-none}"
timeout 540 bench/colocate/run.sh --loads 0.3,0.5,0.7 --seconds 3 "${prof[@]}" > "$OUT/colocate.out" 2>&1
echo "[1 $((SECONDS - t0))s] colocate rc=$?"
grep -v "^  " "$OUT/colocate.out" | grep -E "colocate|FAIL|Error|error" | cut -c1-240 | tail -40
cat "$OUT/colocate/colocate.md" 2>/dev/null
(cd "$OUT" && tar czf colocate-traces.tgz colocate/trace-*.jsonl colocate/*.log 2>/dev/null; rm -f colocate/trace-*.jsonl)
