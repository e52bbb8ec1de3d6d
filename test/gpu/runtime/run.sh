#!/usr/bin/env bash
# test/gpu/runtime/run.sh -- libtidal on the GPU: every launch path, live masks, graphs,
# tidald/tidalctl across processes, Triton. Part of `make gpu-check` (needs an NVIDIA GPU,
# CUDA 13; PyTorch + Triton for the Triton checks).
#
#   test/gpu/runtime/run.sh [--build-only]
#
# Builds with plain gcc/nvcc lines (the GPU machine has no FileCheck/libelf, so not the
# CMake tree) into ${TIDAL_GPU_RT_BUILD:-<repo>/build-gpu-rt}: tidal-opt, tidal-ptxas,
# tidal-nvcc, libtidal (.a/.so/-preload.so/_cudart.a), tidald, tidalctl, and rt_app twice:
#   rt_app_linked   tidal-nvcc rt_app.cu              (launches through the cudart wrappers)
#   rt_app_plain    tidal-nvcc --tidal-no-runtime     (run under LD_PRELOAD=libtidal-preload.so)
# Section 8 runs some of them under compute-sanitizer (memcheck) when it is installed: no
# failing driver call may be reported.
# Log: ${OUT:-/tmp}/gpu-runtime.log; last line "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=${TIDAL_GPU_RT_BUILD:-$root/build-gpu-rt}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
OUTDIR=${OUT:-/tmp}
mkdir -p "$OUTDIR" "$B/obj" "$B/bin" "$B/lib"
LOG=$OUTDIR/gpu-runtime.log
: >"$LOG"
log() { echo "$*" | tee -a "$LOG"; }
pass=0 fail=0
check() {   # check NAME OK-STATUS DETAIL
  if [[ $2 == 0 ]]; then pass=$((pass + 1)); log "PASS $1${3:+: $3}"; else fail=$((fail + 1)); log "FAIL $1${3:+: $3}"; fi
}
# run a program that prints PASS/FAIL lines; count them; a non-zero exit without FAIL lines is a failure
run_prog() {   # run_prog LABEL CMD...
  local label=$1; shift
  local out rc
  out=$(timeout 300 "$@" 2>&1); rc=$?
  echo "$out" | sed "s/^/  [$label] /" >>"$LOG"
  local p f
  p=$(grep -c '^PASS ' <<<"$out"); f=$(grep -c '^FAIL ' <<<"$out")
  while IFS= read -r l; do [[ $l == PASS* || $l == FAIL* ]] && echo "$label: $l"; done <<<"$out"
  pass=$((pass + p)); fail=$((fail + f))
  if [[ $rc != 0 && $f == 0 ]]; then fail=$((fail + 1)); log "FAIL $label: exit $rc without a FAIL line"; fi
  if [[ $p == 0 && $f == 0 && $rc == 0 ]]; then fail=$((fail + 1)); log "FAIL $label: no checks ran"; fi
  LAST_OUT=$out
}

CFLAGS="-O2 -g -std=c17 -D_POSIX_C_SOURCE=200809L -DTIDAL_VERSION=\"$("$root/scripts/version.sh")\" -Wall -Wextra -Werror -I$root/passes -I$root/runtime -I$root/abi -I$CUDA_HOME/include"
build() {
  set -e
  echo "== build in $B"
  local objs=()
  for f in "$root"/passes/*.c; do gcc $CFLAGS -c "$f" -o "$B/obj/passes_$(basename "${f%.c}").o"; objs+=("$B/obj/passes_$(basename "${f%.c}").o"); done
  rm -f "$B/lib/libtidal_passes.a"; ar rcs "$B/lib/libtidal_passes.a" "${objs[@]}"
  gcc $CFLAGS "$root"/driver/tidal-opt.c "$root"/driver/cubin.c "$root"/driver/exec.c "$B/lib/libtidal_passes.a" -ldl -o "$B/bin/tidal-opt"
  gcc $CFLAGS "$root"/driver/tidal-ptxas.c "$root"/driver/dropin.c "$root"/driver/exec.c "$B/lib/libtidal_passes.a" -o "$B/bin/tidal-ptxas"
  gcc $CFLAGS "$root"/driver/tidal-nvcc.c "$root"/driver/dropin.c "$root"/driver/exec.c "$root"/driver/nvcc_*.c "$B/lib/libtidal_passes.a" -o "$B/bin/tidal-nvcc"
  local rto=()
  # libtidal's sources: the list CMakeLists.txt builds (TIDAL_RUNTIME_SOURCES)
  local srcs
  srcs=$("$root/scripts/runtime-sources.sh") || return 1
  for f in $srcs; do
    f=$(basename "${f%.c}")
    gcc $CFLAGS -fPIC -c "$root/runtime/$f.c" -o "$B/obj/rt_$f.o"; rto+=("$B/obj/rt_$f.o")
  done
  rm -f "$B/lib/libtidal.a" "$B/lib/libtidal_cudart.a"
  ar rcs "$B/lib/libtidal.a" "${rto[@]}"
  gcc -shared -o "$B/lib/libtidal.so" "${rto[@]}" -ldl -lpthread -lrt -lm
  gcc $CFLAGS -fPIC -shared -o "$B/lib/libtidal-preload.so" "$root/runtime/preload.c" "${rto[@]}" -ldl -lpthread -lrt -lm
  gcc $CFLAGS -fPIC -c "$root/runtime/wrap_cudart.c" -o "$B/obj/wrap_cudart.o"
  ar rcs "$B/lib/libtidal_cudart.a" "$B/obj/wrap_cudart.o"
  # tidalctl policy parses with cJSON; an image without it gets the --json-only build
  if pkg-config --exists libcjson 2>/dev/null; then cjson=($(pkg-config --cflags --libs libcjson)); else cjson=(-DTIDALCTL_NO_CJSON); fi
  for t in tidald tidalctl; do
    src=("$root/runtime/$t.c") extra=()
    if [[ $t == tidald ]]; then src+=("$root"/runtime/tidald_*.c); fi   # every tidald_*.c is the daemon's
    if [[ $t == tidalctl ]]; then src+=("$root/runtime/tidalctl_policy.c"); extra=("${cjson[@]}"); fi
    gcc $CFLAGS "${src[@]}" "$B/obj/rt_control_proto.o" "$B/obj/rt_tidal_client.o" "$B/obj/rt_smset.o" "${extra[@]}" -lrt -lpthread -o "$B/bin/$t"
  done
  cd "$B"
  # rt_app reaches the API by dlsym: --undefined for every function it looks up (GET(...))
  # pulls their objects out of libtidal.a (nothing in the program refers to them: stats.o,
  # the policies and l2mem.o were left out)
  "$B/bin/tidal-nvcc" -arch=sm_90a -O2 -I"$root/runtime" -I"$root/abi" -Xlinker -export-dynamic \
    $(grep -o 'GET([a-z_0-9]*)' "$here/rt_app.cu" | sed 's/GET(\(.*\))/-Xlinker --undefined=tidal_\1/' | sort -u) "$here/rt_app.cu" -o "$B/rt_app_linked" \
    --tidal-report="$B/rt_app.report"
  "$B/bin/tidal-nvcc" --tidal-no-runtime -arch=sm_90a -O2 -I"$root/runtime" -I"$root/abi" "$here/rt_app.cu" "$B/obj/rt_smset.o" -o "$B/rt_app_plain"
  # rt_app l2addr's modules: parameter 0 of both kernels translated (and once with the tidal pass after it)
  "$CUDA_HOME/bin/nvcc" -arch=sm_90a -ptx "$here/l2addr_kernels.cu" -o "$B/l2a.ptx"
  "$B/bin/tidal-opt" -p l2addr --l2addr l2a_fill:0,l2a_sum:0 "$B/l2a.ptx" -o "$B/l2a.l2.ptx"
  "$B/bin/tidal-opt" -p l2addr,tidal --l2addr l2a_fill:0,l2a_sum:0 "$B/l2a.ptx" -o "$B/l2a.both.ptx"
  cd - >/dev/null
  set +e
  echo "build ok"
}

build_only=0
[[ ${1:-} == --build-only ]] && build_only=1
# not `if ! (build)`: a condition turns off set -e inside build, and a failed step went on
# to "build ok" (a missing tidald on the H200)
(build) >>"$LOG" 2>&1
if (($? != 0)); then
  tail -30 "$LOG"
  log "build failed"; log "0 passed, 1 failed"; exit 1
fi
(( build_only )) && { log "0 passed, 0 failed"; exit 0; }

nvidia-smi -L 2>&1 | tee -a "$LOG"
export TIDAL_NO_DAEMON=1   # until the tidald section
PRE=$B/lib/libtidal-preload.so

log "== 1. programs built by tidal-nvcc (cudart wrappers)"
TIDAL_PARTITION=t:0-65 run_prog linked.env "$B/rt_app_linked" env 50000
run_prog linked.api "$B/rt_app_linked" api
run_prog linked.flip "$B/rt_app_linked" flip
run_prog linked.graph "$B/rt_app_linked" graph
run_prog linked.place "$B/rt_app_linked" place
run_prog linked.smem "$B/rt_app_linked" smem
TIDAL_POLICY_TRACE=$OUTDIR/policy-trace.jsonl run_prog linked.policy "$B/rt_app_linked" policy
run_prog linked.l2side "$B/rt_app_linked" l2side
run_prog linked.l2mem "$B/rt_app_linked" l2mem
run_prog linked.bimodal "$B/rt_app_linked" bimodal
run_prog linked.l2addr "$B/rt_app_linked" l2addr "$B/l2a.l2.ptx" "$B/l2a.both.ptx"
run_prog linked.serve "$B/rt_app_linked" serve

log "== 2. the same program, no libtidal linked, under LD_PRELOAD"
TIDAL_PARTITION=t:10-40,100-120 LD_PRELOAD=$PRE run_prog preload.env "$B/rt_app_plain" env 50000
LD_PRELOAD=$PRE run_prog preload.api "$B/rt_app_plain" api
LD_PRELOAD=$PRE run_prog preload.flip "$B/rt_app_plain" flip
LD_PRELOAD=$PRE run_prog preload.graph "$B/rt_app_plain" graph
LD_PRELOAD=$PRE run_prog preload.place "$B/rt_app_plain" place
LD_PRELOAD=$PRE run_prog preload.smem "$B/rt_app_plain" smem
LD_PRELOAD=$PRE run_prog preload.policy "$B/rt_app_plain" policy
LD_PRELOAD=$PRE run_prog preload.l2side "$B/rt_app_plain" l2side
LD_PRELOAD=$PRE run_prog preload.l2mem "$B/rt_app_plain" l2mem
LD_PRELOAD=$PRE run_prog preload.bimodal "$B/rt_app_plain" bimodal
LD_PRELOAD=$PRE run_prog preload.l2addr "$B/rt_app_plain" l2addr "$B/l2a.l2.ptx" "$B/l2a.both.ptx"
LD_PRELOAD=$PRE run_prog preload.serve "$B/rt_app_plain" serve
run_prog linked.cluster "$B/rt_app_linked" cluster
LD_PRELOAD=$PRE run_prog preload.cluster "$B/rt_app_plain" cluster
# under the preload the refused cluster launch (16 blocks, larger than any cluster group)
# comes through libtidal, which says why
grep -q "thread-block clusters was refused" <<<"$LAST_OUT"; check preload.cluster.warning $? "libtidal's warning names the cause"
# without libtidal the rewritten kernels run as the originals (launch case a)
out=$("$B/rt_app_plain" env 1000 2>&1); rc=$?
grep -q "the tidal API is not in this process" <<<"$out"; check plain.no-runtime-refuses-api $? "$(head -1 <<<"$out")"

log "== 3. tidald / tidalctl: two tenant processes, live set, reaction time"
unset TIDAL_NO_DAEMON
T=$(mktemp -d)
export TIDAL_SOCKET=$T/tidald.sock TIDAL_SHM=/tidal-gpu-test-$$
"$B/bin/tidald" --reset >"$T/tidald.log" 2>&1 &
DPID=$!
for i in $(seq 50); do "$B/bin/tidalctl" ping >/dev/null 2>&1 && break; sleep 0.1; done
"$B/bin/tidalctl" ping >/dev/null 2>&1; check tidald.up $? ""
"$B/bin/tidalctl" create ls 0-47 >>"$LOG" 2>&1; check tidalctl.create-ls $? ""
"$B/bin/tidalctl" create be 48-131 >>"$LOG" 2>&1; check tidalctl.create-be $? ""
# two processes at once, one per launch path
TIDAL_TENANT=ls-linked TIDAL_PARTITION=ls "$B/rt_app_linked" tenant ls --blocks 20000 --spin 50000000 >"$T/ls.out" 2>&1 &
P1=$!
TIDAL_TENANT=be-preload TIDAL_PARTITION=be LD_PRELOAD=$PRE "$B/rt_app_plain" tenant be --blocks 20000 --spin 50000000 >"$T/be.out" 2>&1 &
P2=$!
sleep 0.3; "$B/bin/tidalctl" tenants >>"$LOG" 2>&1
# both tenants appear in `tidalctl tenants` (they connect once CUDA is up)
ok=1
for i in $(seq 100); do
  "$B/bin/tidalctl" tenants >"$T/tenants.txt" 2>&1
  grep -q ls-linked "$T/tenants.txt" && grep -q be-preload "$T/tenants.txt" && { ok=0; break; }
  sleep 0.05
done
cat "$T/tenants.txt" >>"$LOG"; check tidalctl.tenants $ok "$(grep -c pid "$T/tenants.txt" || true) lines"
wait $P1; r1=$?; wait $P2; r2=$?
for f in ls be; do sed "s/^/  [tenant.$f] /" "$T/$f.out" >>"$LOG"; done
for l in $(grep -h -c '^PASS' "$T/ls.out" "$T/be.out"); do pass=$((pass + l)); done
for l in $(grep -h -c '^FAIL' "$T/ls.out" "$T/be.out"); do fail=$((fail + l)); done
check tenants.two-processes $(( r1 | r2 )) "exit $r1 / $r2"
# hist of be after its run: the be tenant has exited; a live one answers
TIDAL_TENANT=hist TIDAL_PARTITION=be "$B/rt_app_linked" tenant be --blocks 20000 --spin 100000000 >"$T/h.out" 2>&1 &
P3=$!
for i in $(seq 200); do "$B/bin/tidalctl" tenants 2>/dev/null | grep -q ' hist ' && break; sleep 0.05; done
sleep 0.5   # the tenant's kernel is running now
"$B/bin/tidalctl" hist be >"$T/hist.txt" 2>&1; rc=$?
cat "$T/hist.txt" >>"$LOG"
# "partition be: T tenants, A answered, B blocks, V violations": one live tenant answered, B > 0
grep -qE "partition be: [1-9][0-9]* tenants?, [1-9][0-9]* answered, [1-9][0-9]* blocks" "$T/hist.txt"
check tidalctl.hist $(( rc | $? )) "$(head -1 "$T/hist.txt")"
wait $P3
# live set from another process while a kernel runs; repeated for the reaction time
# live set from another process while a kernel runs, repeated: the reaction time
# (settings: the default; a spinning watcher thread; plus chunks of at most 4 or 1; a
# spinning tidald as well. With chunks of 1 a removed SM's worker stops after the block it
# runs, so "last start on a removed SM" is about when the mask landed plus one block)
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
restart_tidald() {   # restart_tidald [ARGS]: same socket and segment (the partitions stay)
  kill -TERM "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null
  "$B/bin/tidald" "$@" >>"$T/tidald.log" 2>&1 &
  DPID=$!
  for i in $(seq 50); do "$B/bin/tidalctl" ping >/dev/null 2>&1 && break; sleep 0.1; done
}
for setting in "default" "TIDAL_WATCH=spin" "TIDAL_WATCH=spin TIDAL_MAX_CHUNK=4" "TIDAL_WATCH=spin TIDAL_MAX_CHUNK=1" \
               "tidald --spin, TIDAL_WATCH=spin" "tidald --spin, TIDAL_WATCH=spin TIDAL_MAX_CHUNK=1"; do
  reacts=() controls=()
  [[ $setting == tidald* ]] && restart_tidald --spin
  for i in 1 2 3 4 5; do
    "$B/bin/tidalctl" set be 0-131 >/dev/null 2>&1
    envs=(); [[ $setting != default ]] && read -ra envs <<<"${setting#tidald --spin, }"
    LAST_OUT=
    run_prog "tidalctl.live.$i" env "${envs[@]}" TIDAL_TENANT=live TIDAL_PARTITION=be "$B/rt_app_linked" tenant be --set 0-65
    r=$(grep -o 'reaction_us [0-9.]*' <<<"$LAST_OUT" | awk '{print $2}')
    c=$(grep -o 'control_us [0-9.-]*' <<<"$LAST_OUT" | awk '{print $2}')
    [[ -n $r ]] && reacts+=("$r") && controls+=("$c")
    log "reaction [$setting] trial $i: $(grep -o 'reaction_us.*' <<<"$LAST_OUT")"
  done
  if (( ${#reacts[@]} )); then
    log "REACTION [$setting] (GPU clock, median of ${#reacts[@]}, 5 us blocks): request sent -> mask in device memory $(printf '%s\n' "${controls[@]}" | median) us; -> last block started on a removed SM $(printf '%s\n' "${reacts[@]}" | median) us"
  fi
  [[ $setting == tidald* ]] && restart_tidald
done
# tidald dies mid-run: the tenant keeps its mask and finishes; a restarted tidald resumes
"$B/bin/tidalctl" set be 48-131 >/dev/null 2>&1
TIDAL_TENANT=orphan TIDAL_PARTITION=be "$B/rt_app_linked" tenant be --blocks 20000 --spin 100000000 >"$T/o.out" 2>&1 &
P4=$!
sleep 1.5
kill -9 $DPID; wait $DPID 2>/dev/null
wait $P4; r4=$?
sed "s/^/  [orphan] /" "$T/o.out" >>"$LOG"
grep -q '^PASS tenant.inside' "$T/o.out"; check tidald.killed.tenant-finishes $(( r4 | $? )) "exit $r4"
"$B/bin/tidald" >"$T/tidald2.log" 2>&1 &
DPID=$!
for i in $(seq 50); do "$B/bin/tidalctl" ping >/dev/null 2>&1 && break; sleep 0.1; done
"$B/bin/tidalctl" list >"$T/list2.txt" 2>&1
grep -qE "^be +48-131 " "$T/list2.txt"; check tidald.restart-resumes $? "$(tr '\n' ' ' <"$T/list2.txt")"

log "== 4. MPS: tenants are told the truth"
if command -v nvidia-cuda-mps-control >/dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=$T/mps CUDA_MPS_LOG_DIRECTORY=$T/mpslog
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d
  sleep 1
  # the hog test: client A holds 66 SMs (all shared memory each) for 3 s; client B's blocks
  # can only go to the other 66, yet B's %smid values overlap A's: no shared id space
  TIDAL_NO_DAEMON=1 "$B/rt_app_plain" hog 66 3000 >"$T/hog.out" 2>&1 &
  HP=$!
  sleep 1
  TIDAL_NO_DAEMON=1 timeout 60 "$B/rt_app_plain" probe >"$T/probe.out" 2>&1
  wait $HP
  cat "$T/hog.out" "$T/probe.out" | tee -a "$LOG"
  ha=$(grep -o 'SMs: [0-9,-]*' "$T/hog.out" | cut -c6-); pb=$(grep -o 'SMs: [0-9,-]*' "$T/probe.out" | cut -c6-)
  expand() { tr ',' '\n' <<<"$1" | awk -F- 'NF == 1 {print $1} NF == 2 {for (i = $1; i <= $2; i++) print i}'; }
  ov=$(comm -12 <(expand "$ha" | sort) <(expand "$pb" | sort) | wc -l)
  [[ -n $ha && -n $pb && $ov -gt 0 ]]; check mps.hog.ids-not-shared $? "B's ids overlap A's held ids on $ov SMs although B could not run there"
  out=$(TIDAL_PARTITION=be timeout 60 "$B/rt_app_linked" tenant be --blocks 20000 2>&1)
  echo "$out" | sed 's/^/  [mps] /' >>"$LOG"
  grep -q "MPS client" <<<"$out"; check mps.detected-and-refused $? "$(grep -m1 'MPS client' <<<"$out" | cut -c1-160)"
  echo quit | nvidia-cuda-mps-control
  sleep 1
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
else
  log "SKIP mps: nvidia-cuda-mps-control not found"
fi
kill $DPID 2>/dev/null; wait $DPID 2>/dev/null
cat "$T/tidald.log" "$T/tidald2.log" >"$OUTDIR/tidald.log" 2>/dev/null
rm -f "/dev/shm${TIDAL_SHM}"
unset TIDAL_SOCKET TIDAL_SHM
export TIDAL_NO_DAEMON=1

log "== 5. Triton (tidal.triton)"
if python3 -c "import triton, torch" 2>/dev/null; then
  export TIDAL_PTXAS=$B/bin/tidal-ptxas TIDAL_LIB=$B/lib/libtidal.so
  export TRITON_CACHE_DIR=$T/triton-cache
  run_prog triton.caseb python3 "$here/triton_rt.py" tp:0-65
  export TRITON_CACHE_DIR=$T/triton-cache2
  LD_PRELOAD=$PRE run_prog triton.casec python3 "$here/triton_rt.py" tp:70-131
  # a torch.compile'd model: unmodified run, then the same with tidal (fresh caches each)
  TORCHINDUCTOR_CACHE_DIR=$T/ind0 TRITON_CACHE_DIR=$T/tc0 python3 "$here/torch_compile_rt.py" baseline "$T/y.pt" >>"$LOG" 2>&1
  check torch_compile.baseline $? ""
  TORCHINDUCTOR_CACHE_DIR=$T/ind1 TRITON_CACHE_DIR=$T/tc1 run_prog torch_compile python3 "$here/torch_compile_rt.py" tidal "$T/y.pt" tc:0-131
else
  log "SKIP triton: python3 cannot import triton and torch"
fi
log "== 6. examples/cmake-project built with CMAKE_CUDA_COMPILER=tidal-nvcc"
if command -v cmake >/dev/null && command -v ninja >/dev/null; then
  CP=$B/cmake-project
  rm -rf "$CP"
  cmake -S "$root/examples/cmake-project" -B "$CP" -G Ninja -DCMAKE_CUDA_COMPILER="$B/bin/tidal-nvcc" \
    -DCMAKE_CUDA_ARCHITECTURES=90 >>"$LOG" 2>&1 && cmake --build "$CP" >>"$LOG" 2>&1
  check cmake-project.build $? ""
  out=$(ctest --test-dir "$CP" --output-on-failure 2>&1); rc=$?
  echo "$out" >>"$LOG"
  check cmake-project.ctest $rc "$(grep 'tests passed' <<<"$out")"
  # the same tests with libtidal running every kernel as its reshaped clone on SMs 0-65
  out=$(TIDAL_NO_DAEMON=1 TIDAL_PARTITION=cm:0-65 LD_PRELOAD=$PRE ctest --test-dir "$CP" --output-on-failure 2>&1); rc=$?
  echo "$out" >>"$LOG"
  n=0
  for p in saxpy scan histogram; do   # which kernels libtidal ran as clones (TIDAL_DEBUG)
    o=$(TIDAL_NO_DAEMON=1 TIDAL_PARTITION=cm:0-65 LD_PRELOAD=$PRE TIDAL_DEBUG=1 "$CP/$p" 2>&1); echo "$o" >>"$LOG"
    n=$((n + $(grep -c 'rewritten, [0-9]* parameters' <<<"$o")))
  done
  [[ $rc == 0 && $n -ge 3 ]]; check cmake-project.ctest-under-libtidal $? "$(grep 'tests passed' <<<"$out"); $n kernels launched as clones on SMs 0-65"
else
  log "SKIP cmake-project: cmake/ninja not found"
fi
log "== 7. examples/colocate (LS + BE tenants, split moved live with tidalctl)"
out=$(env -u TIDAL_NO_DAEMON PHASE_SECONDS=2 timeout 120 "$root/examples/colocate/run.sh" "$B" 2>&1); rc=$?
echo "$out" | tee "$OUTDIR/colocate.log" >>"$LOG"
# phase 2: ls's SM map covers exactly 0-87 and be's exactly 88-131
m_ls=$(awk '/== phase 2/ {p = 1} p && /^ls  / {print $2; exit}' <<<"$out")
m_be=$(awk '/== phase 2/ {p = 1} p && /^be  / {print $2; exit}' <<<"$out")
want_ls=$(printf '#%.0s' $(seq 88))$(printf '.%.0s' $(seq 44)); want_be=$(printf '.%.0s' $(seq 88))$(printf '#%.0s' $(seq 44))
[[ $rc == 0 && $m_ls == "$want_ls" && $m_be == "$want_be" ]]
check colocate.maps-follow-moves $? "exit $rc; phase 2 maps ls ${m_ls:0:3}..${m_ls: -3} be ${m_be:0:3}..${m_be: -3}"
log "== 8. compute-sanitizer: libtidal makes no failing driver call"
# memcheck reports every CUDA API call that returns an error (--report-api-errors explicit,
# its default) as well as device memory errors; libtidal's own calls must not add any: no
# probing of modules, functions, handle kinds or parameter counts (docs/runtime.md). The
# programs' own checks are timing-dependent under instrumentation and run in sections 1-2;
# here only the sanitizer's summary decides.
CS=$(command -v compute-sanitizer || true)
for c in "$CUDA_HOME/bin/compute-sanitizer" "$CUDA_HOME/compute-sanitizer/compute-sanitizer"; do
  [[ -z $CS && -x $c ]] && CS=$c
done
if [[ -n $CS ]]; then
  sanitize() {   # sanitize NAME CMD...
    local name=$1; shift
    local out rc summary first
    out=$(timeout 600 "$CS" --tool memcheck --target-processes all "$@" 2>&1); rc=$?
    echo "$out" | sed "s/^/  [sanitizer.$name] /" >>"$LOG"
    summary=$(grep -oE 'ERROR SUMMARY: [0-9]+ errors?' <<<"$out" | tail -1)
    first=$(grep -m1 -oE 'Program hit [A-Za-z_]+ \(error [0-9]+\).* on CUDA API call to [A-Za-z0-9_]+' <<<"$out")
    [[ $summary == "ERROR SUMMARY: 0 errors" ]]
    check "sanitizer.$name" $? "${summary:-no ERROR SUMMARY line}; program exit $rc${first:+; first: $first}"
  }
  TIDAL_PARTITION=t:0-65 sanitize linked.env "$B/rt_app_linked" env 2000
  sanitize linked.graph "$B/rt_app_linked" graph
  sanitize linked.place "$B/rt_app_linked" place
  sanitize linked.serve "$B/rt_app_linked" serve   # the serving engine's launches, writes and queries
  sanitize preload.env env TIDAL_PARTITION=t:10-40,100-120 LD_PRELOAD="$PRE" "$B/rt_app_plain" env 2000
  sanitize preload.api env LD_PRELOAD="$PRE" "$B/rt_app_plain" api
  # an example built by CMake with tidal-nvcc (section 6), its kernels as clones on SMs 0-65
  if [[ -x ${CP:-}/saxpy ]]; then
    sanitize example.saxpy env TIDAL_PARTITION=cm:0-65 LD_PRELOAD="$PRE" "$CP/saxpy"
  else
    log "SKIP sanitizer.example.saxpy: examples/cmake-project was not built (section 6)"
  fi
else
  log "SKIP sanitizer: compute-sanitizer not found (PATH, \$CUDA_HOME/bin, \$CUDA_HOME/compute-sanitizer)"
fi
rm -rf "$T"
log "$pass passed, $fail failed"
(( fail == 0 ))
