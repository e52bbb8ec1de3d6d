#!/usr/bin/env bash
# test/gpu/run.sh -- build and run the tidal GPU correctness suite.
#
#   test/gpu/run.sh [--build-only] [--no-build] [HARNESS OPTIONS...]
#
# From a clean checkout: builds tidal-opt (plain gcc line over passes/*.c; TIDAL_OPT=path
# uses an existing binary instead), compiles test/gpu/kernels/*.cu to PTX with
# nvcc -arch=sm_90a, copies the Triton PTX the specs use from test/corpus/triton/local,
# rewrites every PTX file with `tidal-opt -p tidal` (its --report goes next to the output),
# assembles each rewritten file with ptxas -arch=sm_90a, builds the harness (nvcc, -lcuda)
# and runs it. Everything is logged to ${OUT:-/tmp}/gpu-check.log; the last line is the
# harness's "N passed, N failed" and the exit status is the harness's.
#
#   --build-only   stop after building (works without a GPU: a compile/link check)
#   --no-build     reuse the build directory
#   --cubin BACKEND   run the harness on cubins instead of PTX: every rewritten file is
#                  compiled by `tidal-opt -p tidal --cubin` with TIDAL_CUBIN_BACKEND=BACKEND
#                  (nvptxcompiler, nvjitlink, ptxas) into $B/cubin-BACKEND/<file>.cubin
#                  (refused files stay PTX); log gpu-check-cubin-BACKEND.log. tidal-opt
#                  links libnvptxcompiler when $CUDA_HOME has libnvptxcompiler_static.a.
#   --ptx-dirs ORIG TIDAL   use ORIG/<file>.ptx and TIDAL/<file>.ptx as they are (e.g. the
#                  LLVM-IR path's output, test/gpu/llvm_ir_ptx.sh): no tidal-opt, nvcc -ptx,
#                  rewrite or ptxas steps; only the harness is built (unless --no-build)
# Environment: TIDAL_GPU_BUILD (build dir, default <repo>/build-gpu), JOBS (16),
#   CUDA_HOME (/usr/local/cuda), TIDAL_OPT, OUT.
# Harness options (see tidal_gpu_harness --help): --only A,B  --budget S  --no-fork ...
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
B=${TIDAL_GPU_BUILD:-$root/build-gpu}
JOBS=${JOBS:-16}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=$CUDA_HOME/bin/nvcc; [[ -x $NVCC ]] || NVCC=$(command -v nvcc || true)
PTXAS=$CUDA_HOME/bin/ptxas; [[ -x $PTXAS ]] || PTXAS=$(command -v ptxas || true)
OUTDIR=${OUT:-/tmp}
mkdir -p "$OUTDIR"

build=1 run=1
args=()
ptx_orig="" ptx_tidal="" cubin_backend=""
while (( $# )); do
  case "$1" in
    --build-only) run=0 ;;
    --no-build) build=0 ;;
    --cubin)
      (( $# >= 2 )) || { echo "gpu-check: --cubin needs a backend (nvptxcompiler, nvjitlink, ptxas)" >&2; exit 2; }
      case "$2" in nvptxcompiler|nvjitlink|ptxas) cubin_backend=$2 ;;
        *) echo "gpu-check: --cubin $2: not one of nvptxcompiler, nvjitlink, ptxas" >&2; exit 2 ;; esac
      shift ;;
    --ptx-dirs)
      (( $# >= 3 )) || { echo "gpu-check: --ptx-dirs needs ORIG and TIDAL directories" >&2; exit 2; }
      ptx_orig=$(cd "$2" && pwd) && ptx_tidal=$(cd "$3" && pwd) || exit 2
      shift 2 ;;
    *) args+=("$1") ;;
  esac
  shift
done
LOG=$OUTDIR/gpu-check${cubin_backend:+-cubin-$cubin_backend}.log

: >"$LOG"
log() { echo "$*" | tee -a "$LOG"; }
die() { log "gpu-check: $*"; log "0 passed, 1 failed"; exit 1; }

[[ -n $NVCC ]] || die "nvcc not found (set CUDA_HOME)"
[[ -n $PTXAS ]] || die "ptxas not found (set CUDA_HOME)"

TRITON_SRC=$root/test/corpus/triton/local
# The Triton PTX files the specs name (file stems "triton/<name>" in specs.inc).
mapfile -t TRITON_PTX < <(grep -o '"triton/[A-Za-z0-9_]*"' "$here/specs.inc" | tr -d '"' | sed 's|^triton/||' | sort -u)

if (( build )) && [[ -n $ptx_orig ]]; then
  # given PTX directories: only the harness is built
  mkdir -p "$B/logs"
  log "== gpu-check build in $B, PTX from $ptx_orig and $ptx_tidal ($(date -u +%FT%TZ))"
  rm -f "$B/tidal_gpu_harness"
  if ! "$NVCC" -std=c++17 -O2 -I"$root/runtime" -I"$root/abi" "$here/harness.cu" -o "$B/tidal_gpu_harness" \
       -L"$CUDA_HOME/lib64/stubs" -lcuda -lpthread >"$B/logs/harness.build.log" 2>&1; then
    tee -a "$LOG" <"$B/logs/harness.build.log"
    die "building the harness failed"
  fi
  log "built $B/tidal_gpu_harness"
elif (( build )); then
  rm -rf "$B/ptx" "$B/tidal_gpu_harness"
  mkdir -p "$B/ptx/orig/triton" "$B/ptx/tidal/triton" "$B/logs"
  log "== gpu-check build in $B ($(date -u +%FT%TZ))"
  { "$NVCC" --version | tail -2; command -v nvidia-smi >/dev/null && nvidia-smi -L; } 2>&1 | tee -a "$LOG"

  # 1. tidal-opt
  if [[ -n ${TIDAL_OPT:-} ]]; then
    [[ -x $TIDAL_OPT ]] || die "TIDAL_OPT=$TIDAL_OPT is not executable"
    cp "$TIDAL_OPT" "$B/tidal-opt"
  else
    cc=${CC:-gcc}
    # libnvptxcompiler (static only) is linked in where the toolkit has it, as CMake does
    nvptx=()
    if [[ -f $CUDA_HOME/lib64/libnvptxcompiler_static.a && -f $CUDA_HOME/include/nvPTXCompiler.h ]]; then
      nvptx=(-DTIDAL_HAVE_NVPTXCOMPILER -isystem "$CUDA_HOME/include" "$root/driver/cubin_nvptxcompiler.c"
             "$CUDA_HOME/lib64/libnvptxcompiler_static.a" -lpthread)
    fi
    if ! "$cc" -std=c17 -O2 -D_POSIX_C_SOURCE=200809L -DTIDAL_VERSION="\"$("$root/scripts/version.sh")\"" -I"$root/passes" -I"$root/runtime" -I"$root/abi" -I"$root/driver" \
         "$root"/passes/*.c "$root/driver/tidal-opt.c" "$root/driver/cubin.c" "$root/driver/exec.c" "${nvptx[@]}" \
         -o "$B/tidal-opt" -lm -ldl >"$B/logs/tidal-opt.build.log" 2>&1; then
      tee -a "$LOG" <"$B/logs/tidal-opt.build.log"
      die "building tidal-opt failed"
    fi
  fi
  "$B/tidal-opt" --help 2>&1 | grep -q '^  tidal ' || die "$B/tidal-opt has no 'tidal' pass"
  log "tidal-opt: $("$B/tidal-opt" --version 2>&1 | tr '\n' ';')"

  # the harness builds in the background meanwhile (step 6 waits for it)
  "$NVCC" -std=c++17 -O2 -I"$root/runtime" -I"$root/abi" "$here/harness.cu" -o "$B/tidal_gpu_harness" \
    -L"$CUDA_HOME/lib64/stubs" -lcuda -lpthread >"$B/logs/harness.build.log" 2>&1 &
  harness_pid=$!

  # 2. kernels -> PTX (parallel)
  export NVCC B
  printf '%s\n' "$here"/kernels/*.cu | xargs -P "$JOBS" -I{} bash -c \
    'f={}; s=$(basename "$f" .cu); "$NVCC" -arch=sm_90a -ptx "$f" -o "$B/ptx/orig/$s.ptx" >"$B/logs/$s.nvcc.log" 2>&1 || { echo "nvcc failed: $f"; cat "$B/logs/$s.nvcc.log"; }' \
    2>&1 | tee -a "$LOG"
  for f in "$here"/kernels/*.cu; do
    [[ -s $B/ptx/orig/$(basename "$f" .cu).ptx ]] || die "no PTX for $f"
  done
  # 3. Triton PTX
  for t in "${TRITON_PTX[@]}"; do
    [[ -f $TRITON_SRC/$t.ptx ]] || die "missing $TRITON_SRC/$t.ptx"
    cp "$TRITON_SRC/$t.ptx" "$B/ptx/orig/triton/$t.ptx"
  done

  # 4. rewrite + 5. ptxas, in parallel; one status line per file
  export PTXAS
  (cd "$B/ptx/orig" && find . -name '*.ptx' | sed 's|^\./||' | sort) >"$B/ptx/list"
  xargs -P "$JOBS" -I{} bash -c '
    p={}; o="$B/ptx/orig/$p"; t="$B/ptx/tidal/$p"; r="$B/ptx/tidal/${p%.ptx}.report"
    # --case-b: the harness checks every launch case (verbatim originals by report).
    # --assume-balanced-arrive: the suite'"'"'s bar.arrive kernels (named_barriers,
    # warp_specialized) balance every arrival in every block; the default refusal
    # (named-arrive) is test/lit/tidal/refuse_named_arrive.ptx
    if ! "$B/tidal-opt" -p tidal --case-b --assume-balanced-arrive --report "$o" -o "$t" >"$r" 2>&1; then
      rm -f "$t"; echo "REWRITE-FAILED $p: $(tail -3 "$r" | tr "\n" " ")"; exit 0
    fi
    if cmp -s "$o" "$t"; then echo "REFUSED $p (byte-identical): $(grep -i refus "$r" | head -2 | tr "\n" " ")"; exit 0; fi
    if ! "$PTXAS" -arch=sm_90a "$t" -o /dev/null >"$t.ptxas.log" 2>&1; then
      echo "PTXAS-FAILED $p: $(head -3 "$t.ptxas.log" | tr "\n" " ")"; exit 0
    fi
    clones=$(grep -c "^\.visible \.entry [A-Za-z0-9_\$]*__tidal_reshaped(" "$t" || true)
    echo "rewritten $p ($clones reshaped clone(s))"
  ' <"$B/ptx/list" 2>&1 | sort | tee -a "$LOG"

  # 6. harness
  if ! wait "$harness_pid"; then
    tee -a "$LOG" <"$B/logs/harness.build.log"
    die "building the harness failed"
  fi
  log "built $B/tidal_gpu_harness"
fi

if (( ! run )); then
  log "build only: not running"
  exit 0
fi
[[ -x $B/tidal_gpu_harness ]] || die "no harness in $B (run without --no-build)"

# Cubins by one backend of `tidal-opt --cubin` (files tidal refuses stay PTX: the
# harness expects them byte-identical to the original).
if [[ -n $cubin_backend ]]; then
  [[ -z $ptx_orig ]] || die "--cubin and --ptx-dirs do not go together"
  [[ -s $B/ptx/list && -x $B/tidal-opt ]] || die "--cubin needs the build in $B (run without --no-build)"
  C=$B/cubin-$cubin_backend
  rm -rf "$C"
  mkdir -p "$C/triton"
  log "== cubins by $cubin_backend in $C"
  export B C cubin_backend
  xargs -P "$JOBS" -I{} bash -c '
    p={}; o="$B/ptx/orig/$p"; t="$B/ptx/tidal/$p"; c="$C/${p%.ptx}.cubin"
    if [[ ! -f $t ]] || cmp -s "$o" "$t"; then cp "$o" "$C/$p"; echo "ptx $p (not rewritten)"; exit 0; fi
    if ! TIDAL_CUBIN_BACKEND=$cubin_backend "$B/tidal-opt" -p tidal --case-b --assume-balanced-arrive --cubin=sm_90a "$o" -o "$c" >"$c.log" 2>&1; then
      rm -f "$c"; echo "CUBIN-FAILED $p: $(tail -2 "$c.log" | tr "\n" " ")"; exit 0
    fi
    # the harness reads what the pass said of each entry (a verbatim original: no case b)
    r="$B/ptx/tidal/${p%.ptx}.report"; [[ -f $r ]] && cp "$r" "$C/${p%.ptx}.report"
    echo "cubin $p: $(grep -o "by .*" "$c.log")"
  ' <"$B/ptx/list" 2>&1 | sort | tee -a "$LOG"
  want=$cubin_backend; [[ $want == nvptxcompiler ]] && want=libnvptxcompiler; [[ $want == nvjitlink ]] && want=nvJitLink
  n_by=$(grep -c "^cubin .*: by $want" "$LOG" || true)
  n_other=$(grep "^cubin " "$LOG" | grep -vc ": by $want" || true)
  log "cubins by $want: $n_by; by another backend: $n_other"
  (( n_by > 0 && n_other == 0 )) || die "expected every cubin from $want"
  ptx_orig=$B/ptx/orig ptx_tidal=$C
fi

log "== gpu-check run ($(date -u +%FT%TZ))"
if [[ -n $ptx_orig ]]; then
  "$B/tidal_gpu_harness" "$ptx_orig" "$ptx_tidal" "${args[@]}" 2>&1 | tee -a "$LOG"
else
  "$B/tidal_gpu_harness" "$B/ptx/orig" "$B/ptx/tidal" "${args[@]}" 2>&1 | tee -a "$LOG"
fi
rc=${PIPESTATUS[0]}
exit "$rc"
