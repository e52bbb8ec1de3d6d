#!/usr/bin/env bash
# Build-time cost of tidal-nvcc against nvcc: compiles a few corpus CUDA files
# (test/corpus/cuda/*.cu) with `-c` for sm_90a + compute_90a PTX, N times each,
# alternating the two compilers, and prints per-file and total wall times and
# the ratio tidal-nvcc / nvcc (target: <= 1.10).
#
#   bench/nvcc_build_time.sh [-n N] [-t TIDAL_NVCC] [-c NVCC] [-f FLAG]... [FILE.cu ...]
#
# -f FLAG adds FLAG to both compilers' command lines (e.g. -f --split-compile=0).
# Defaults: N=5, build/bin/tidal-nvcc, $CUDA_HOME/bin/nvcc or
# /usr/local/cuda/bin/nvcc, and the files listed below. --tidal-no-runtime:
# compile-only, so the runtime does not matter.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n=5
tidal=$root/build/bin/tidal-nvcc
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
extra=()
while getopts n:t:c:f: opt; do
  case $opt in
    f) extra+=("$OPTARG") ;;
    n) n=$OPTARG ;;
    t) tidal=$OPTARG ;;
    c) nvcc=$OPTARG ;;
    *) echo "usage: $0 [-n N] [-t TIDAL_NVCC] [-c NVCC] [-f FLAG]... [FILE.cu ...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if (($#)); then files=("$@"); else
  files=()
  for f in gemm_tiled reduction softmax atomics warp_primitives device_functions; do
    files+=("$root/test/corpus/cuda/$f.cu")
  done
fi
[[ -x $tidal ]] || { echo "$0: no tidal-nvcc at $tidal (-t)" >&2; exit 2; }
[[ -x $nvcc ]] || { echo "$0: no nvcc at $nvcc (-c)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-gencode 'arch=compute_90a,code=[sm_90a,compute_90a]' -c ${extra[@]+"${extra[@]}"})

now() { date +%s.%N; }
# time_one COMPILER... -- FILE: seconds for one compile
time_one() {
  local f=${*: -1} t0 t1
  t0=$(now)
  "${@:1:$#-1}" "${flags[@]}" "$f" -o "$work/out.o" > /dev/null 2>&1 ||
    { echo "$0: compile failed: ${*}" >&2; return 1; }
  t1=$(now)
  echo "$t1 - $t0" | bc -l
}

echo "# tidal-nvcc build time: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -n), $(nproc) cores"
echo "# nvcc: $nvcc ($("$nvcc" --version | grep -o 'release [0-9.]*'))"
echo "# tidal-nvcc: $tidal"
echo "# flags: ${flags[*]}; $n repetitions each, alternating; times are the median, seconds"
printf '%-24s %10s %10s %8s\n' file nvcc tidal-nvcc ratio
tot_n=0 tot_t=0
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
for f in "${files[@]}"; do
  # one warm-up each (page cache, first-run costs), not counted
  time_one "$nvcc" "$f" > /dev/null
  time_one "$tidal" --tidal-no-runtime "$f" > /dev/null
  : > "$work/n" ; : > "$work/t"
  for ((i = 0; i < n; i++)); do
    time_one "$nvcc" "$f" >> "$work/n"
    time_one "$tidal" --tidal-no-runtime "$f" >> "$work/t"
  done
  mn=$(median < "$work/n") mt=$(median < "$work/t")
  tot_n=$(echo "$tot_n + $mn" | bc -l) tot_t=$(echo "$tot_t + $mt" | bc -l)
  printf '%-24s %10.3f %10.3f %7.3fx\n' "$(basename "$f")" "$mn" "$mt" "$(echo "$mt / $mn" | bc -l)"
done
printf '%-24s %10.3f %10.3f %7.3fx\n' TOTAL "$tot_n" "$tot_t" "$(echo "$tot_t / $tot_n" | bc -l)"
ratio=$(echo "$tot_t / $tot_n" | bc -l)

# Where the extra time goes: ptxas on nvcc's PTX against ptxas on the same
# PTX after the tidal pass (the rewritten module is larger), and the pass.
ptxas=$(dirname "$nvcc")/ptxas
opt=$(dirname "$tidal")/tidal-opt
if [[ -x $opt ]]; then
  echo "# breakdown (median seconds): ptxas -arch=sm_90a on nvcc's PTX / on the rewritten PTX; tidal-opt -p tidal"
  printf '%-24s %10s %10s %10s %12s\n' file ptxas ptxas-tidal tidal-opt "ptx bytes"
  for f in "${files[@]}"; do
    "$nvcc" -arch=sm_90a -ptx "$f" -o "$work/a.ptx"
    "$opt" -p tidal "$work/a.ptx" -o "$work/b.ptx"
    : > "$work/pa"; : > "$work/pb"; : > "$work/po"
    for ((i = 0; i < n; i++)); do
      t0=$(now); "$ptxas" -arch=sm_90a "$work/a.ptx" -o "$work/a.cubin"; t1=$(now)
      "$ptxas" -arch=sm_90a "$work/b.ptx" -o "$work/b.cubin"; t2=$(now)
      "$opt" -p tidal "$work/a.ptx" -o "$work/c.ptx"; t3=$(now)
      echo "$t1 - $t0" | bc -l >> "$work/pa"; echo "$t2 - $t1" | bc -l >> "$work/pb"
      echo "$t3 - $t2" | bc -l >> "$work/po"
    done
    printf '%-24s %10.3f %10.3f %10.3f %5d->%d\n' "$(basename "$f")" "$(median < "$work/pa")" \
      "$(median < "$work/pb")" "$(median < "$work/po")" "$(wc -c < "$work/a.ptx")" "$(wc -c < "$work/b.ptx")"
  done
fi
if (($(echo "$ratio <= 1.10" | bc -l))); then
  echo "ratio $(printf %.3f "$ratio") <= 1.10: within target"
else
  echo "ratio $(printf %.3f "$ratio") > 1.10: over target"
fi
