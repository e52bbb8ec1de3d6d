#!/usr/bin/env bash
# bench/colocate/run.sh -- the colocation benchmark (colocate.py: LS from Poisson arrivals,
# BE closed-loop; no isolation, priorities, green contexts, tidal static / SGDRC / GSLICE),
# one command on the GPU machine. Results in ${OUT:-bench/results}/colocate/.
#
#   bench/colocate/run.sh [COLOCATE.PY OPTIONS]   (e.g. --loads 0.5 --seconds 3 --ls-profile A,B)
#
# Builds tidal-ptxas and libtidal-preload.so as bench/dnn does (build-dnn/), and runs under
# scripts/tidal-run with the tidal side's compile caches (build/dnn-cache/tidal): a cold
# cache compiles both models (about 75 s each with bench/dnn's settings).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
case ${1:-} in -h | --help) sed -n '2,10p' "$0"; exit 0 ;; esac
R=${OUT:-$root/bench/results}/colocate
mkdir -p "$R"
B=${TIDAL_DNN_BUILD:-$root/build-dnn}
"$root/bench/dnn/run.sh" --build-only >"$R/build.log" 2>&1 || { echo "colocate: build failed (log $R/build.log)"; tail -20 "$R/build.log"; exit 1; }
C=${BENCH_DNN_CACHE:-$root/build/dnn-cache}
mkdir -p "$C/tidal/inductor" "$C/tidal/triton"
cd "$root" || exit 1
env TORCHINDUCTOR_CACHE_DIR="$C/tidal/inductor" TRITON_CACHE_DIR="$C/tidal/triton" TIDAL_NO_DAEMON=1 \
  "$root/scripts/tidal-run" --build "$B" -- "${PYTHON:-python3}" "$here/colocate.py" --out "$R" "$@" 2>"$R/colocate.err.log" |
  tee "$R/colocate.log"
rc=${PIPESTATUS[0]}
((rc == 0)) || { echo "colocate: exit $rc; last lines of $R/colocate.err.log:"; tail -25 "$R/colocate.err.log"; }
exit "$rc"
