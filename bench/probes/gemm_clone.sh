#!/usr/bin/env bash
# gemm_clone.sh -- on the GPU machine: bench/probes/gemm_clone.py (BERT-large's addmm and
# GELU shapes, us per launch, back to back) unmodified and under tidal on a partition of
# all SMs, per placement and static share:
#   unmod          plain python3, no tidal
#   original       TIDAL_PLACEMENT=original: the rewritten kernels run as their originals
#   clone-share0   every launch the clone (TIDAL_SHORT_US=0), own chunks as large as the
#                  tickets (TIDAL_STATIC_SHARE=0: ABI v4's schedule)
#   clone-share75  the same with the default static share (each worker's own chunk covers
#                  its part of 3/4 of the grid; abi/tidal_abi.h tidal_launch.first)
#   clone-share90  90%
#   clone-share75-us40  75% with TIDAL_CHUNK_US=40 (own chunks may hold twice the work)
#   clone-share100-us1000  own chunks as large as the grid allows (7 of 1024/132 tiles),
#                  no time cap: about one claim per worker (what claims cost, apart)
# Output: one JSON line per kernel and configuration on stdout (and in $OUT/gemm_clone.jsonl).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
B=${TIDAL_DNN_BUILD:-$root/build-dnn}
bench/dnn/run.sh --build-only > /dev/null || { echo "gemm_clone.sh: tidal build failed" >&2; exit 1; }
out=${OUT:-/tmp}/gemm_clone.jsonl
: > "$out"
run() {   # run LABEL ENV... -- the probe
  local label=$1; shift
  env PROBE_LABEL="$label" "$@" python3 bench/probes/gemm_clone.py --n 300 --warmup 20 2>&1 | tee -a "$out" | grep -v '^{"stats"' | sed "s/^/$label: /"
}
run unmod
T=(scripts/tidal-run --build "$B" --partition all:0-131 --)
run original TIDAL_PLACEMENT=original "${T[@]}"
run clone-share0 TIDAL_PLACEMENT=hybrid TIDAL_SHORT_US=0 TIDAL_STATIC_SHARE=0 "${T[@]}"
run clone-share75 TIDAL_PLACEMENT=hybrid TIDAL_SHORT_US=0 "${T[@]}"
run clone-share90 TIDAL_PLACEMENT=hybrid TIDAL_SHORT_US=0 TIDAL_STATIC_SHARE=90 "${T[@]}"
run clone-share75-us40 TIDAL_PLACEMENT=hybrid TIDAL_SHORT_US=0 TIDAL_CHUNK_US=40 "${T[@]}"
run clone-share100-us1000 TIDAL_PLACEMENT=hybrid TIDAL_SHORT_US=0 TIDAL_STATIC_SHARE=100 TIDAL_CHUNK_US=1000 "${T[@]}"
