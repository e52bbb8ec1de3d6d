#!/usr/bin/env bash
# bench/dnn/run.sh -- the real-model benchmark: BERT-base (LS), BERT-large (BE), ResNet-50,
# torch.compile (max-autotune, Triton GEMMs), unmodified vs tidal, on one GPU.
#
#   bench/dnn/run.sh [OPTIONS] [-- BENCH.PY OPTIONS]
#
#   --quick             plumbing check: bert-base only, few iterations, one placement
#   --only SIDE         unmod | tidal | report (default: both sides, then the report)
#   --compile-only      build, compile and census only (fills the caches; no timing)
#   --build-only        build tidal-ptxas, libtidal-preload.so and libtidal.so (below) and stop: no GPU,
#                       no PyTorch needed (make check runs it: the plain-gcc build stays sound)
#   --models LIST       default bert-base,bert-large,resnet50
#   --tidal-build DIR   take tidal-ptxas / libtidal-preload.so from DIR/bin, DIR/lib (e.g.
#                       build/ of `make build`); default: build them here with gcc into
#                       ${TIDAL_DNN_BUILD:-build-dnn}/ (seconds; rebuilt when sources change)
#   --load-cache DIR    unpack DIR/dnn-cache-{unmod,tidal}.tar.gz into the cache first
#   --save-cache        pack the caches into $R/cache/*.tar.gz (each kept only if < 16 MiB)
#   --fresh-cache       empty the caches first (a cold run: everything is compiled)
#
# Writes to R=${OUT:-bench/results}/dnn: run.log (this output), unmod.log / tidal.log (each
# side's progress), unmod.err.log / tidal.err.log (their stderr: Inductor's autotuning
# tables, warnings, tracebacks), unmod.json / tidal.json, and from report.py results.json,
# results.csv, summary.md, ls_p99_vs_be.png.
#
# Caches (kept between runs): ${BENCH_DNN_CACHE:-build/dnn-cache}/{unmod,tidal}/{inductor,triton}.
# The tidal side starts from a copy of the unmodified side's Inductor cache, so both run the
# same kernels with the same autotuning choices (BENCH_SHARE_INDUCTOR=0: it autotunes itself,
# and autotune_diff.py then compares the two sides' choices into autotune-diff.log);
# the Triton caches are separate, since the tidal side's cubins carry the rewrite.
# Time limits: the unmodified side gets ${UNMOD_TIMEOUT:-300} s, the tidal side what is left of
# ${BENCH_DEADLINE:-560} s (minus 20 s for the report); a side that runs out is killed and the
# report uses what it wrote so far. Exit status 0 only when both sides and the report succeeded.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 2
start=$SECONDS
PY=${PYTHON:-python3}

quick=0 only="" build_only=0 compile_only=0 models="" tidal_build=${TIDAL_BUILD:-} load_cache="" save_cache=0 fresh=0
extra=()
while (($# > 0)); do
  case $1 in
    --quick) quick=1; shift ;;
    --only) only=${2:?--only needs unmod, tidal or report}; shift 2 ;;
    --compile-only) compile_only=1; shift ;;
    --build-only) build_only=1; shift ;;
    --models) models=${2:?--models needs a list}; shift 2 ;;
    --tidal-build) tidal_build=${2:?--tidal-build needs a directory}; shift 2 ;;
    --load-cache) load_cache=${2:?--load-cache needs a directory}; shift 2 ;;
    --save-cache) save_cache=1; shift ;;
    --fresh-cache) fresh=1; shift ;;
    -h | --help) sed -n '2,30p' "$0"; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $only in "" | unmod | tidal | report) ;; *) echo "run.sh: --only $only: want unmod, tidal or report" >&2; exit 2 ;; esac

R=${OUT:-$root/bench/results}/dnn
mkdir -p "$R"
exec > >(tee -a "$R/run.log") 2>&1
C=${BENCH_DNN_CACHE:-$root/build/dnn-cache}
W=$C/work
mkdir -p "$C/unmod/inductor" "$C/unmod/triton" "$C/tidal/inductor" "$C/tidal/triton" "$W"
el() { echo $((SECONDS - start)); }
say() { echo "[run.sh $(el)s] $*"; }

say "bench/dnn/run.sh $(date -u +%FT%TZ) at $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (+ uncommitted changes)')"
((build_only)) || nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.used,memory.total --format=csv,noheader 2>&1 | sed 's/^/  gpu: /'
((build_only)) || nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader 2>/dev/null | sed 's/^/  other process on the GPU: /'
((build_only)) || "$PY" -c 'import sys, torch, triton; print("  python %s, torch %s (CUDA %s), triton %s" % (sys.version.split()[0], torch.__version__, torch.version.cuda, triton.__version__))' ||
  { say "FAIL: $PY cannot import torch and triton"; exit 1; }

common=(--out "$R" --work "$W")
if ((quick)); then
  common+=(--models "${models:-bert-base}" --n 50 --n-large 20 --warmup 10 --storm-n 50 --be-alone-s 0.3
    --placements hybrid --quick)
else
  common+=(--models "${models:-bert-base,bert-large,resnet50}")
fi
((compile_only)) && common+=(--compile-only)
common+=("${extra[@]}")
say "bench.py options: ${common[*]}"

# --- caches
if ((fresh)); then
  say "fresh caches: emptying $C"
  rm -rf "${C:?}/unmod" "${C:?}/tidal" "$W"
  mkdir -p "$C/unmod/inductor" "$C/unmod/triton" "$C/tidal/inductor" "$C/tidal/triton" "$W"
fi
if [[ -n $load_cache ]]; then
  for s in unmod tidal; do
    t=$load_cache/dnn-cache-$s.tar.gz
    if [[ -f $t ]]; then
      if rm -rf "${C:?}/$s" && tar -C "$C" -xzf "$t"; then
        say "cache $s: unpacked $t ($(du -sh "$C/$s" | cut -f1))"
        # Triton's group files name their children by absolute path: re-root them if the
        # cache was packed elsewhere (else every kernel is a miss and compiles again)
        old=$(cat "$C/$s/.cache-root" 2>/dev/null || true)
        if [[ -n $old && $old != "$C" ]]; then
          find "$C/$s" -name '__grp__*.json' -exec sed -i "s|$old/|$C/|g" {} +
          say "cache $s: re-rooted from $old to $C"
        fi
      else
        say "WARNING: cannot unpack $t"
      fi
    else
      say "cache $s: no $t (cold)"
    fi
  done
fi
for s in unmod tidal; do
  say "cache $s: $(du -sh "$C/$s" 2>/dev/null | cut -f1) in $C/$s"
  if [[ ($only == "" || $only == "$s") && -z $(find "$C/$s/inductor" -name '*.py' -print -quit 2>/dev/null) ]] &&
    ((!compile_only)); then
    say "NOTE: cache $s is cold: this side compiles everything (minutes); to stay within the time limits, run --compile-only first (or --load-cache)"
  fi
done

# --- the tidal pieces
# build_tidal DIR: tidal-ptxas, libtidal-preload.so and libtidal.so (bench/colocate's unmodified
# processes load it for the C serving engine) with plain gcc (as test/gpu/runtime/run.sh)
build_tidal() {
  local B=$1 CF f o
  local objs=() rto=()
  if [[ -x $B/bin/tidal-ptxas && -f $B/lib/libtidal-preload.so && -f $B/lib/libtidal.so ]] &&
    [[ -z $(find passes driver runtime abi -newer "$B/lib/libtidal-preload.so" -name '*.[ch]' 2>/dev/null | head -1) ]] &&
    [[ -z $(find passes driver abi -newer "$B/bin/tidal-ptxas" -name '*.[ch]' 2>/dev/null | head -1) ]]; then
    say "tidal pieces in $B are up to date"
    return 0
  fi
  say "building tidal-ptxas, libtidal-preload.so and libtidal.so into $B"
  mkdir -p "$B/obj" "$B/bin" "$B/lib"
  CF="-O2 -g -std=c17 -D_POSIX_C_SOURCE=200809L -DTIDAL_VERSION=\"$(scripts/version.sh)\" -Wall -Wextra -Ipasses -Iruntime -Iabi -I${CUDA_HOME:-/usr/local/cuda}/include"
  local pids=() p
  for f in passes/*.c; do
    o=$B/obj/passes_$(basename "${f%.c}").o
    # shellcheck disable=SC2086
    gcc $CF -c "$f" -o "$o" &
    pids+=($!)
    objs+=("$o")
  done
  for p in "${pids[@]}"; do wait "$p" || return 1; done   # not a bare wait: that waits for the tee too
  rm -f "$B/lib/libtidal_passes.a"
  ar rcs "$B/lib/libtidal_passes.a" "${objs[@]}" || return 1
  # shellcheck disable=SC2086
  gcc $CF driver/tidal-ptxas.c driver/dropin.c driver/exec.c "$B/lib/libtidal_passes.a" -o "$B/bin/tidal-ptxas" || return 1
  # libtidal's sources: the list CMakeLists.txt builds (TIDAL_RUNTIME_SOURCES), compiled as it does
  local srcs
  srcs=$("$root/scripts/runtime-sources.sh") || return 1
  for f in $srcs; do
    o=$B/obj/rt_$(basename "${f%.c}").o
    # shellcheck disable=SC2086
    gcc $CF -fPIC -fvisibility=hidden -c "$f" -o "$o" || return 1
    rto+=("$o")
  done
  # shellcheck disable=SC2086
  gcc $CF -fPIC -fvisibility=hidden -shared -Wl,--no-undefined -o "$B/lib/libtidal-preload.so" runtime/preload.c \
    "${rto[@]}" -ldl -lpthread -lrt -lm || return 1
  # shellcheck disable=SC2086
  gcc $CF -fPIC -shared -Wl,--no-undefined -o "$B/lib/libtidal.so" "${rto[@]}" -ldl -lpthread -lrt -lm || return 1
  say "built $B/bin/tidal-ptxas, $B/lib/libtidal-preload.so, $B/lib/libtidal.so"
}

if ((build_only)); then
  build_tidal "${TIDAL_DNN_BUILD:-$root/build-dnn}"
  exit $?
fi

if [[ $only == "" || $only == tidal ]]; then
  if [[ -z $tidal_build ]]; then
    tidal_build=${TIDAL_DNN_BUILD:-$root/build-dnn}
    build_tidal "$tidal_build" >"$R/tidal-build.log" 2>&1
    rc=$?
    cat "$R/tidal-build.log"
    ((rc == 0)) || { say "FAIL: building the tidal pieces (log: $R/tidal-build.log)"; exit 1; }
  fi
  # The tidal side assembles with the same ptxas as the unmodified side (Triton's bundled one):
  # the rewrite is then the only difference between the two sides' cubins.
  bundled=$(env -u TRITON_PTXAS_PATH "$PY" -c 'import triton.knobs as k; print(k.nvidia.ptxas.path)' 2>/dev/null)
  if [[ -z ${TIDAL_REAL_PTXAS:-} && -n $bundled ]]; then export TIDAL_REAL_PTXAS=$bundled; fi
  if [[ -n ${TIDAL_REAL_PTXAS:-} ]]; then
    say "tidal: pieces from $tidal_build; tidal-ptxas assembles with TIDAL_REAL_PTXAS=$TIDAL_REAL_PTXAS ($("$TIDAL_REAL_PTXAS" --version 2>&1 | grep -o 'release [0-9.]*')); Triton's own: ${bundled:-unknown}"
  else
    say "WARNING: Triton's bundled ptxas not found: tidal-ptxas uses \$CUDA_HOME/bin/ptxas, maybe another version than the unmodified side's"
  fi
  TORCHINDUCTOR_CACHE_DIR="$C/tidal/inductor" TRITON_CACHE_DIR="$C/tidal/triton" "$root/scripts/tidal-run" --build "$tidal_build" --print-env | sed 's/^/  tidal-run: /' ||
    { say "FAIL: scripts/tidal-run cannot set up (see above)"; exit 1; }
fi

# --- the two sides
status=0
run_side() {   # run_side SIDE TIMEOUT CMD...
  local side=$1 limit=$2; shift 2
  say "== side $side (time limit ${limit}s): $*"
  local t0=$SECONDS rc
  timeout --signal=TERM --kill-after=15 "$limit" "$@" 2>"$R/$side.err.log" | tee "$R/$side.log"
  rc=${PIPESTATUS[0]}
  say "== side $side: exit $rc after $((SECONDS - t0))s"
  if ((rc == 124 || rc == 137)); then
    say "FAIL: side $side ran out of its ${limit}s (killed); the report uses what it wrote. Warm the caches first (--compile-only), or raise UNMOD_TIMEOUT / BENCH_DEADLINE"
  fi
  if ((rc != 0)); then
    status=1
    say "last lines of $R/$side.err.log:"
    tail -25 "$R/$side.err.log" | sed 's/^/  | /'
  fi
}

deadline=${BENCH_DEADLINE:-560}
if [[ $only == "" || $only == unmod ]]; then
  run_side unmod "${UNMOD_TIMEOUT:-300}" env -u LD_PRELOAD -u TRITON_PTXAS_PATH -u TIDAL_PARTITION \
    TORCHINDUCTOR_CACHE_DIR="$C/unmod/inductor" TRITON_CACHE_DIR="$C/unmod/triton" \
    "$PY" "$here/bench.py" --side unmod "${common[@]}"
fi
if [[ $only == "" || $only == tidal ]]; then
  # The same kernels on both sides: the tidal side starts from the unmodified side's Inductor
  # cache (compiled FX graphs, autotuning choices, kernel sources), and compiles the Triton
  # kernels again into its own Triton cache, through tidal-ptxas. BENCH_SHARE_INDUCTOR=0:
  # the tidal side autotunes for itself (its choices then differ).
  if [[ ${BENCH_SHARE_INDUCTOR:-1} != 0 && -n $(find "$C/unmod/inductor" -name '*.py' -print -quit 2>/dev/null) ]]; then
    rm -rf "${C:?}/tidal/inductor" && cp -a "$C/unmod/inductor" "$C/tidal/inductor" &&
      say "tidal side: Inductor cache copied from the unmodified side's ($(du -sh "$C/tidal/inductor" | cut -f1)): same graphs, same autotuning choices"
  else
    say "WARNING: tidal side: its own Inductor cache (BENCH_SHARE_INDUCTOR=0 or no unmodified cache): its kernel choices may differ"
  fi
  left=$((deadline - $(el) - 20))
  ((left < 60)) && left=60
  run_side tidal "$left" env TORCHINDUCTOR_CACHE_DIR="$C/tidal/inductor" TRITON_CACHE_DIR="$C/tidal/triton" \
    TIDAL_NO_DAEMON=1 "$root/scripts/tidal-run" --build "$tidal_build" -- \
    "$PY" "$here/bench.py" --side tidal "${common[@]}"
fi

# --- report
if ((!compile_only)); then
  say "== report"
  "$PY" "$here/report.py" "$R" || status=1
fi
# Lost autotune choices (issue 11): only when the tidal side autotuned itself
# (BENCH_SHARE_INDUCTOR=0); with a shared Inductor cache it autotunes nothing.
if [[ ${BENCH_SHARE_INDUCTOR:-1} == 0 && -f $R/unmod.err.log && -f $R/tidal.err.log ]]; then
  "$PY" "$here/autotune_diff.py" "$R/unmod.err.log" "$R/tidal.err.log" >"$R/autotune-diff.log" 2>&1
  rc=$?
  say "autotune choices, unmodified vs tidal: $(tail -1 "$R/autotune-diff.log") (exit $rc; $R/autotune-diff.log)"
  ((rc == 0)) || status=1
fi

if ((save_cache)); then
  mkdir -p "$R/cache"
  for s in unmod tidal; do
    t=$R/cache/dnn-cache-$s.tar.gz
    echo "$C" >"$C/$s/.cache-root"
    # a warm start needs Inductor's cache and, of Triton's, each kernel's .cubin and .json:
    # the intermediate files (and the PTX) are left out to keep the tar small
    # (the tidal side's Inductor cache is the unmodified side's copy: left out)
    tar -C "$C" -czf "$t" --exclude='*.ttir' --exclude='*.ttgir' --exclude='*.llir' --exclude='*.ptx' \
      --exclude='*.source' --exclude='*.lock' --exclude='tidal/inductor' "$s"
    sz=$(stat -c %s "$t")
    if ((sz >= 16 * 1024 * 1024)); then
      say "cache $s: $((sz / 1048576)) MiB packed: over 16 MiB, not kept"
      rm -f "$t"
    else
      say "cache $s: packed into $t ($((sz / 1024)) KiB)"
    fi
  done
fi
say "done in $(el)s, status $status; results in $R"
exit $status
