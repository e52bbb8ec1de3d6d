#!/usr/bin/env bash
# examples/colocate/run.sh -- an LS and a BE tenant share the GPU through tidald; the SM
# split is moved live with tidalctl, and the per-SM block histograms show each move.
#
#   examples/colocate/run.sh [BUILD_DIR]     (default: build; needs tidal-nvcc, libtidal,
#                                             tidald and tidalctl built there, and a GPU)
# Environment: PHASE_SECONDS (3), TIDAL_SOCKET / TIDAL_SHM (private ones by default).
# Exit status: 0 done; 77 no NVIDIA GPU on this machine (checked first: nothing is built
# or started); 1 anything else (a missing tool, a tenant that stopped, ...).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
PHASE=${PHASE_SECONDS:-3}
EXIT_NO_GPU=77

# A GPU: nvidia-smi lists one, or (no nvidia-smi, as in some containers) a /dev/nvidiaN
# device node exists.
gpu_present() {
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]'
  else
    compgen -G '/dev/nvidia[0-9]*' >/dev/null
  fi
}
if ! gpu_present; then
  echo "colocate: no NVIDIA GPU on this machine (nvidia-smi -L lists none, or no /dev/nvidiaN):" \
       "the two tenants need one; nothing was run (exit $EXIT_NO_GPU)" >&2
  exit "$EXIT_NO_GPU"
fi
B=$(cd "${1:-$root/build}" && pwd)
for t in bin/tidal-nvcc bin/tidald bin/tidalctl lib/libtidal.a lib/libtidal_cudart.a; do
  [[ -e $B/$t ]] || { echo "colocate: $B/$t is missing (build first: make build)" >&2; exit 1; }
done
W=$(mktemp -d)
export TIDAL_SOCKET=${TIDAL_SOCKET:-$W/tidald.sock} TIDAL_SHM=${TIDAL_SHM:-/tidal-colocate-$$}
cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -f "/dev/shm$TIDAL_SHM"
  rm -rf "$W"
}
pids=()
trap cleanup EXIT

echo "== building the tenant with tidal-nvcc"
"$B/bin/tidal-nvcc" -arch=sm_90a -O2 "$here/colocate.cu" -o "$W/colocate" --tidal-report="$W/report.txt"
grep -m1 -i "layer" "$W/report.txt" || true

echo "== starting tidald and the two partitions"
"$B/bin/tidald" --reset >"$W/tidald.log" 2>&1 &
pids+=($!)
for i in $(seq 50); do "$B/bin/tidalctl" ping >/dev/null 2>&1 && break; sleep 0.1; done
"$B/bin/tidalctl" create ls 0-47
"$B/bin/tidalctl" create be 48-131

total=$((3 * PHASE + 6))
TIDAL_TENANT=ls TIDAL_PARTITION=ls "$W/colocate" ls "$total" &
pids+=($!)
TIDAL_TENANT=be TIDAL_PARTITION=be "$W/colocate" be "$total" &
pids+=($!)

# SM map of one partition between two snapshots: '#' = ran blocks there, '.' = did not
snapshot() { "$B/bin/tidalctl" hist "$1" | awk '$1 ~ /^[0-9]+$/ && NF >= 2 {print $1, $2}' >"$W/$1.$2"; }
smmap() {   # smmap NAME FROM TO
  awk -v n=132 'NR == FNR {prev[$1] = $2; next} {cur[$1] = $2}
    END {line = ""; for (s = 0; s < n; s++) line = line ((cur[s] - prev[s] > 0) ? "#" : ".");
         d = 0; for (s in cur) d += cur[s] - prev[s]; printf "%s  %d blocks\n", line, d}' \
    "$W/$1.$2" "$W/$1.$3"
}
# phase N: apply the split, let the change settle (running kernels leave the SMs taken from
# them within microseconds; claims already held finish), then count PHASE seconds
phase() {   # phase N LS-SET BE-SET TITLE
  "$B/bin/tidalctl" set ls "$2" >/dev/null
  "$B/bin/tidalctl" set be "$3" >/dev/null
  sleep 0.3
  snapshot ls "$1a"; snapshot be "$1a"
  sleep "$PHASE"
  snapshot ls "$1b"; snapshot be "$1b"
  echo; echo "== phase $1: ls $2, be $3 ($4)"
  awk 'BEGIN {t = "SM  "; u = "    "; for (s = 0; s < 132; s++) {t = t (s % 10 ? " " : int(s / 10) % 10); u = u s % 10}
              print t; print u}'
  printf 'ls  '; smmap ls "$1a" "$1b"
  printf 'be  '; smmap be "$1a" "$1b"
  tenants_alive " during phase $1"
}
# a tenant that stopped (a CUDA error, no device after all) makes every map empty: say so
tenants_alive() {
  local name pid
  for name in ls be; do
    [[ $name == ls ]] && pid=${pids[1]} || pid=${pids[2]}
    if ! kill -0 "$pid" 2>/dev/null; then
      local rc=0; wait "$pid" || rc=$?
      echo "colocate: the $name tenant stopped (exit status $rc; its messages are above)$1" >&2
      exit 1
    fi
  done
}
sleep 1.5   # both tenants up (CUDA initialisation)
tenants_alive " before the first phase"
phase 1 0-47 48-131 "the starting split"
phase 2 0-87 88-131 "tidalctl set: an LS load spike"
phase 3 0-23 24-131 "tidalctl set: quiet hours, BE takes more"
wait "${pids[1]}" "${pids[2]}"
echo; echo "== partitions"; "$B/bin/tidalctl" list
