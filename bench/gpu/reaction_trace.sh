#!/usr/bin/env bash
# Where a cross-process reaction goes (needs an NVIDIA GPU): one tidald and one tenant
# (rt_app tenant be --set 0-65, linked with libtidal, TIDAL_WATCH=spin, chunks of 1), both
# with TIDAL_DEBUG, whose log lines carry CLOCK_MONOTONIC stamps in us. Per trial it prints
# when the tenant sent `set be 0-65` on a new connection, when tidald logged the set, when
# the tenant's watcher saw the change and applied the mask, when the answer came back, and
# the reaction on the GPU clock (last block started on a removed SM, after the request).
#
#   bench/gpu/reaction_trace.sh [TRIALS]     (default 4; once with tidald, once with tidald --spin)
# Builds with test/gpu/runtime/run.sh --build-only (${TIDAL_GPU_RT_BUILD:-build-gpu-rt}); the
# log goes to ${OUT:-/tmp}/reaction-trace.log.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=${TIDAL_GPU_RT_BUILD:-$root/build-gpu-rt}
OUTDIR=${OUT:-/tmp}
n=${1:-4}
OUT=$OUTDIR/build "$root/test/gpu/runtime/run.sh" --build-only >/dev/null 2>&1 ||
  { echo "reaction_trace: building failed (see $OUTDIR/build/gpu-runtime.log)"; exit 1; }
T=$(mktemp -d)
export TIDAL_SOCKET=$T/tidald.sock TIDAL_SHM=/tidal-trace-$$
stamp() { sed -n "s/.*\[\([0-9.]*\) us\] .*$1.*/\1/p" "$2" | tail -1; }
{
  echo "# reaction trace: $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)"
  echo "# us after the request was sent: tidald logged the set / watcher saw the change / mask applied / answer received; reaction on the GPU clock"
  for mode in "" --spin; do
    TIDAL_DEBUG=1 "$B/bin/tidald" --reset $mode 2>"$T/tidald.log" &
    D=$!
    for i in $(seq 50); do "$B/bin/tidalctl" ping >/dev/null 2>&1 && break; sleep 0.1; done
    "$B/bin/tidalctl" create ls 0-47 >/dev/null; "$B/bin/tidalctl" create be 48-131 >/dev/null
    for ((i = 1; i <= n; i++)); do
      "$B/bin/tidalctl" set be 0-131 >/dev/null
      TIDAL_DEBUG=1 TIDAL_WATCH=spin TIDAL_MAX_CHUNK=1 TIDAL_TENANT=trace TIDAL_PARTITION=be \
        "$B/rt_app_linked" tenant be --set 0-65 >"$T/out" 2>"$T/err"
      line=$(grep -o 'reaction_us.*' "$T/out")
      t0=$(sed -n 's/.*request sent at \([0-9.]*\) us.*/\1/p' <<<"$line")
      t1=$(sed -n 's/.*answer at \([0-9.]*\),.*/\1/p' <<<"$line")
      ts=$(stamp "set be 0-65" "$T/tidald.log") tc=$(stamp "partitions changed" "$T/err")
      ta=$(stamp 'partition "be" mask applied' "$T/err")
      awk -v m="tidald${mode:+ $mode}" -v i="$i" -v t0="$t0" -v ts="$ts" -v tc="$tc" -v ta="$ta" -v t1="$t1" \
          -v r="$(awk '{print $2}' <<<"$line")" \
        'BEGIN { printf "%-13s trial %d: set logged +%.1f, change seen +%.1f, mask applied +%.1f, answer +%.1f; reaction %.1f us\n",
                 m, i, ts - t0, tc - t0, ta - t0, t1 - t0, r }'
    done
    kill -TERM "$D"; wait "$D" 2>/dev/null
  done
} 2>&1 | tee "$OUTDIR/reaction-trace.log"
rm -rf "$T"
