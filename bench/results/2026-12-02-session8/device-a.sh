#!/usr/bin/env bash
# Session 8, device call A: where the clone's per-launch device time goes
# (bench/probes/clone_cost.sh), the tiny benchmark with the tidal-opt of 7265fca
# (probe-old/: the tree before the trap check was dropped) and with this tree, and the
# runtime suite (its tidald sections were not run after session 7's build fix).
set -u
t0=$SECONDS
el() { echo "[a $((SECONDS - t0))s] $*"; }
el "probe"; OUT=$OUT bench/probes/clone_cost.sh > /dev/null 2>&1; grep RESULT "$OUT/clone-cost.log"
el "old tidal-opt"; (cd probe-old && gcc -std=c17 -O2 -D_POSIX_C_SOURCE=200809L -DTIDAL_VERSION='"old"' -Ipasses -Iruntime -Iabi -Idriver passes/*.c driver/tidal-opt.c driver/cubin.c driver/exec.c -o /tmp/tidal-opt-old -lm -ldl) || el "old build failed"
for v in old new; do
  mkdir -p "$OUT/tiny-$v"
  if [[ $v == old ]]; then TIDAL_OPT=/tmp/tidal-opt-old BENCH_BUILD=/tmp/tb-old OUT=$OUT/tiny-$v bench/gpu/run.sh tiny > "$OUT/tiny-$v/console.log" 2>&1
  else BENCH_BUILD=/tmp/tb-new OUT=$OUT/tiny-$v bench/gpu/run.sh tiny > "$OUT/tiny-$v/console.log" 2>&1; fi
  el "tiny $v rc=$?"; grep -E "^(1|264) " "$OUT/tiny-$v"/tidal-bench-tiny.log | head -20
done
el "runtime suite"; OUTDIR=$OUT test/gpu/runtime/run.sh > "$OUT/runtime.out" 2>&1; el "runtime rc=$?: $(tail -1 "$OUT/gpu-runtime.log")"
grep -iE "fail|ERROR SUMMARY" "$OUT/gpu-runtime.log" | head -20
(cd "$OUT" && tar czf a-logs.tgz tiny-old tiny-new runtime.out colocate.log tidald.log 2>/dev/null && rm -rf tiny-old tiny-new runtime.out)
el "done"; ls "$OUT"
