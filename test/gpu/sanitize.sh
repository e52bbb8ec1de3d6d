#!/usr/bin/env bash
# test/gpu/sanitize.sh -- compute-sanitizer over the GPU suite (part of `make gpu-check`).
#
#   test/gpu/sanitize.sh [--build-only] [--no-build] [--tools LIST] [--only SPECS]
#                        [--jobs N] [--budget S] [--steps LIST] [--max-blocks N]
#
# Runs compute-sanitizer's memcheck, racecheck, synccheck and initcheck over every kernel
# spec of the rewrite harness (test/gpu/harness.cu) in launch cases a, b and c, with a
# partial mask and with live mask flips, one process per (tool, spec), several at once; and
# racecheck and synccheck over the hand-written repros of the clone's structure without
# tidal (test/gpu/sanitizer/repro_kernels.cu), which also run natively once. Each tool's
# findings are attributed to the kernel they are in: the original (the harness runs it as
# NAME__ref under --sanitize), the rewritten entry NAME (case a: the verbatim body; case b),
# the clone NAME__tidal_reshaped, or a repro. A finding in the original is the user's kernel's,
# not tidal's: an INFO line. A finding of the rewritten kernels fails its line unless
# test/gpu/sanitizer/allowlist.txt names it together with a repro that showed the same kind
# of finding in this very run (a tool artefact, proven by a kernel without tidal) while the
# control repro stayed clean and the positive control was caught. docs/design.md,
# "compute-sanitizer and tidal", has the barrier argument behind this.
#
# Output: ${OUT:-/tmp}/gpu-sanitize.log, one PASS/FAIL line per (tool, spec) and per repro
# verdict, INFO lines for measurements, and last "N passed, N failed"; raw logs of every
# process in ${OUT:-/tmp}/gpu-sanitize/. Without compute-sanitizer (or without a GPU) it
# says "SKIP sanitize: ..." and ends "0 passed, 0 failed" (exit 0).
#
#   --build-only   build (the suite if $B has none, the repros) and stop: no GPU needed
#   --no-build     use what $B has (test/gpu/run.sh builds the suite; this script the repros)
#   --tools LIST   memcheck,racecheck,synccheck,initcheck (default: all four)
#   --only SPECS   harness --only syntax (=NAME exact, else substring); default: every spec
#   --jobs N       sanitizer processes at once (default 12; SANITIZE_JOBS)
#   --budget S     seconds for all sanitizer processes (default 200; SANITIZE_BUDGET): a
#                  process not started by then is a FAIL "not run", a running one is cut
#                  at the deadline
#   --steps LIST   harness steps per spec (default a,b/half,c-epoch/half,c-static1/half,
#                  c-static/half,flip-c-epoch)
#   --max-blocks N logical grids shrunk to at most N blocks (default 264: 2 per H200 SM; racecheck,
#                  the slowest tool, half that); the clones are planned with --occ 1 (one
#                  worker per SM), so that workers still run several logical blocks each and
#                  cross tidal's barriers between them (c-static1: chunks of 2 and more)
# Environment: TIDAL_GPU_BUILD (default <repo>/build-gpu), CUDA_HOME, COMPUTE_SANITIZER
#   (the tool; default $CUDA_HOME/bin/compute-sanitizer, then PATH), OUT.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
B=${TIDAL_GPU_BUILD:-$root/build-gpu}
S=$B/sanitizer
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=$CUDA_HOME/bin/nvcc; [[ -x $NVCC ]] || NVCC=$(command -v nvcc || true)
OUTDIR=${OUT:-/tmp}
mkdir -p "$OUTDIR"
LOG=$OUTDIR/gpu-sanitize.log
RAW=$OUTDIR/gpu-sanitize
ALLOW=$here/sanitizer/allowlist.txt

build=1 run=1 only="" jobs=${SANITIZE_JOBS:-12} budget=${SANITIZE_BUDGET:-200}
tools=memcheck,racecheck,synccheck,initcheck
steps=a,b/half,c-epoch/half,c-static1/half,c-static/half,flip-c-epoch
max_blocks=264
usage() { sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed -n 's/^# \{0,1\}//p' >&2; exit 2; }
while (( $# )); do
  case "$1" in
    --build-only) run=0 ;;
    --no-build) build=0 ;;
    --tools|--only|--jobs|--budget|--steps|--max-blocks)
      (( $# >= 2 )) || { echo "sanitize: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --tools) tools=$2 ;; --only) only=$2 ;; --jobs) jobs=$2 ;; --budget) budget=$2 ;;
        --steps) steps=$2 ;; --max-blocks) max_blocks=$2 ;;
      esac
      shift ;;
    -h|--help) usage ;;
    *) echo "sanitize: unknown option $1" >&2; usage ;;
  esac
  shift
done
for t in ${tools//,/ }; do
  case "$t" in memcheck|racecheck|synccheck|initcheck) ;; *) echo "sanitize: unknown tool $t" >&2; exit 2 ;; esac
done

: >"$LOG"
log() { echo "$*" | tee -a "$LOG"; }
pass=0 fail=0
ok() { pass=$((pass + 1)); log "PASS $*"; }
bad() { fail=$((fail + 1)); log "FAIL $*"; }
finish() { log "# sanitize wall time $SECONDS s"; log "$pass passed, $fail failed"; (( fail == 0 )); exit $?; }
die() { bad "sanitize: $*"; finish; }

# ---------------------------------------------------------------- build
if (( build )); then
  [[ -n $NVCC ]] || die "nvcc not found (set CUDA_HOME)"
  mkdir -p "$S"
  log "== sanitize build in $S ($(date -u +%FT%TZ))"
  if [[ ! -x $B/tidal_gpu_harness || ! -s $B/ptx/list ]]; then
    # the suite's build (its log goes under $B/logs: gpu-check.log stays the suite's)
    log "no suite build in $B: test/gpu/run.sh --build-only"
    OUT=$B/logs TIDAL_GPU_BUILD=$B "$here/run.sh" --build-only >"$S/suite-build.log" 2>&1 ||
      { tail -20 "$S/suite-build.log" | tee -a "$LOG"; die "building the suite failed ($S/suite-build.log)"; }
  fi
  rm -f "$S/repro" "$S/repro_kernels.ptx"
  "$NVCC" -arch=sm_90a -ptx "$here/sanitizer/repro_kernels.cu" -o "$S/repro_kernels.ptx" >"$S/repro_kernels.log" 2>&1 &
  kpid=$!
  "$NVCC" -std=c++17 -O2 "$here/sanitizer/repro.cu" -o "$S/repro" -L"$CUDA_HOME/lib64/stubs" -lcuda \
    >"$S/repro.log" 2>&1 || { tee -a "$LOG" <"$S/repro.log"; die "building the repro driver failed"; }
  wait "$kpid" || { tee -a "$LOG" <"$S/repro_kernels.log"; die "compiling the repro kernels failed"; }
  log "built $S/repro and $S/repro_kernels.ptx"
fi
if (( ! run )); then log "build only: not running"; exit 0; fi
[[ -x $B/tidal_gpu_harness && -s $B/ptx/list ]] || die "no suite build in $B (run test/gpu/run.sh --build-only)"
[[ -x $S/repro && -s $S/repro_kernels.ptx ]] || die "no repro build in $S (run without --no-build)"

# ---------------------------------------------------------------- the tool and the GPU
SAN=${COMPUTE_SANITIZER:-}
if [[ -z $SAN ]]; then
  for c in "$CUDA_HOME/bin/compute-sanitizer" "$CUDA_HOME/compute-sanitizer/compute-sanitizer" \
           "$(command -v compute-sanitizer 2>/dev/null)"; do
    [[ -n $c && -x $c ]] && { SAN=$c; break; }
  done
fi
if [[ -z $SAN || ! -x $SAN ]]; then
  log "SKIP sanitize: compute-sanitizer not found (\$COMPUTE_SANITIZER, $CUDA_HOME/bin, PATH)"
  log "0 passed, 0 failed"; exit 0
fi
if [[ -z ${TIDAL_SANITIZE_ANY_DEVICE:-} ]] && ! nvidia-smi -L >/dev/null 2>&1; then
  log "SKIP sanitize: no NVIDIA GPU (nvidia-smi -L failed)"
  log "0 passed, 0 failed"; exit 0
fi
log "== sanitize run ($(date -u +%FT%TZ)): $SAN"
"$SAN" --version 2>&1 | sed 's/^/# /' | tee -a "$LOG" >/dev/null
rm -rf "$RAW"
mkdir -p "$RAW"
SANOPTS=(--print-limit 1000 --report-api-errors no)

# ---------------------------------------------------------------- the repros, natively
REPROS=(rc_counted_orig rc_counted_persist rc_warpspec_orig rc_warpspec_persist rc_control_persist rc_race_persist)
native() {   # native LABEL TIMEOUT NAMES...: PASS/FAIL/INFO lines of the repro driver
  local label=$1 to=$2; shift 2
  timeout -k 5 "$to" "$S/repro" "$S/repro_kernels.ptx" "$@" >"$RAW/native-$label.out" 2>&1
  local rc=$? l
  while IFS= read -r l; do
    case "$l" in
      PASS\ *) ok "native ${l#PASS }" ;; FAIL\ *) bad "native ${l#FAIL }" ;; INFO\ *) log "INFO native ${l#INFO }" ;;
    esac
  done <"$RAW/native-$label.out"
  if (( rc == 124 || rc == 137 )); then log "INFO native $label: still running after ${to} s, killed ($*)"
  elif ! grep -qE '^[0-9]+ passed, [0-9]+ failed$' "$RAW/native-$label.out"; then
    bad "native $label: the repro driver exited $rc without its summary: $(tail -3 "$RAW/native-$label.out" | tr '\n' ' ')"
  fi
}
native repros 60 "${REPROS[@]}" rc_unbalanced_orig
# a barrier left half arrived in a persistent loop may in principle wedge: its own process
native unbalanced 20 rc_unbalanced_persist

# ---------------------------------------------------------------- the job list
has() { [[ ",$1," == *",$2,"* ]]; }
listing=$("$B/tidal_gpu_harness" --list --max-blocks "$max_blocks" ${only:+--only "$only"} 2>&1) ||
  die "tidal_gpu_harness --list failed: $listing"
grep '^# ' <<<"$listing" | sed 's/^# /INFO /' | tee -a "$LOG" >/dev/null
declare -A ENTRY SHARED
SPECS=()
while read -r name file entry rest; do
  [[ $name == \#* || -z $entry || $name =~ ^[0-9]+$ ]] && continue
  smem=$(sed -n 's/.* smem \([0-9]*\).*/\1/p' <<<"$rest")
  SPECS+=("$name"); ENTRY[$name]=$entry
  # racecheck checks shared memory: kernels that have some (static or dynamic), and a
  # few without, whose clones share only tidal's own __tidal_sh (chunk starts, leader state)
  SHARED[$name]=0
  if [[ ${smem:-0} != 0 ]] || grep -q '\.shared' "$B/ptx/orig/$file.ptx" 2>/dev/null ||
     [[ " saxpy_guard grid_3d " == *" $name "* ]]; then SHARED[$name]=1; fi
done <<<"$listing"
(( ${#SPECS[@]} )) || die "no spec selected (--only $only)"

W=$S/jobs
rm -rf "$W"
mkdir -p "$W"
: >"$W/list"
n=0
addjob() { n=$((n + 1)); printf '%03d %s %s %s\n' "$n" "$1" "$2" "$3" >>"$W/list"; }
for t in racecheck synccheck; do
  has "$tools" "$t" && for r in "${REPROS[@]}"; do addjob "$t" repro "$r"; done
done
for t in racecheck synccheck memcheck initcheck; do   # racecheck first: the slowest
  has "$tools" "$t" || continue
  for s in "${SPECS[@]}"; do
    [[ $t == racecheck && ${SHARED[$s]} == 0 ]] && continue
    addjob "$t" spec "$s"
  done
done
log "== $n sanitizer processes ($jobs at once, ${budget} s): tools $tools; specs: ${#SPECS[@]} (racecheck on those with shared memory); steps $steps; grids <= $max_blocks logical blocks ($(( (max_blocks + 1) / 2 )) under racecheck), one worker per SM"

# ---------------------------------------------------------------- run them
export SAN B S W steps max_blocks
export SANOPTS_S="${SANOPTS[*]}"
export DEADLINE=$(( $(date +%s) + budget ))
run_job() {
  local id=$1 tool=$2 kind=$3 target=$4 now left to
  now=$(date +%s); left=$((DEADLINE - now))
  if (( left < 10 )); then echo notrun >"$W/$id.status"; return 0; fi
  to=$(( left < 200 ? left : 200 ))
  local cmd
  if [[ $kind == repro ]]; then
    cmd=("$S/repro" "$S/repro_kernels.ptx" --tool "$target")
  else
    local mb=$max_blocks
    [[ $tool == racecheck ]] && mb=$(( (max_blocks + 1) / 2 ))
    cmd=("$B/tidal_gpu_harness" "$B/ptx/orig" "$B/ptx/tidal" --no-fork --sanitize --only "=$target"
         --steps "$steps" --max-blocks "$mb" --occ 1 --launch-timeout $(( to > 20 ? to - 10 : 10 )))
  fi
  local t0=$SECONDS
  # shellcheck disable=SC2086
  timeout -k 5 "$to" "$SAN" --tool "$tool" --log-file "$W/$id.san" $SANOPTS_S "${cmd[@]}" >"$W/$id.out" 2>&1
  local rc=$?
  echo "$rc $((SECONDS - t0)) $to" >"$W/$id.status"
}
export -f run_job
t_jobs=$SECONDS
xargs -P "$jobs" -L 1 bash -c 'run_job "$@"' _ <"$W/list"
log "# sanitizer processes done in $((SECONDS - t_jobs)) s"

# ---------------------------------------------------------------- read the logs
# parse TOOL ENTRY < LOG: "SUMMARY <count> <errors> <warnings>" (racecheck: hazards displayed,
# errors, warnings; the others: errors, -, -; none: "SUMMARY none") and one line per finding
# "FINDING <class> <signature> | <first line>", class: clone, original, entry, repro, unknown.
parse() {
  awk -v tool="$1" -v entry="$2" '
    function flush(   cls, sig, i, n, ids, w) {
      if (!inb) return
      inb = 0
      if (tool == "racecheck" && head !~ /Race reported|[Hh]azard/) { others = others " | " head; return }
      cls = "unknown"; n = split(ids_s, ids, " ")
      for (i = 1; i <= n; i++) {
        w = ids[i]
        if (w ~ /__tidal_reshaped$/) { cls = "clone"; break }
      }
      if (cls == "unknown") for (i = 1; i <= n; i++) if (ids[i] ~ /__ref$/) { cls = "original"; break }
      if (cls == "unknown") for (i = 1; i <= n; i++) if (ids[i] == entry) { cls = "entry"; break }
      if (cls == "unknown") for (i = 1; i <= n; i++) if (ids[i] ~ /^rc_/) { cls = "repro"; break }
      if (tool == "racecheck") {
        sev = head; sub(/:.*/, "", sev)
        sig = sev ":" pairs
      } else {
        sig = head; gsub(/0x[0-9a-fA-F]+/, "X", sig); gsub(/[0-9]+/, "N", sig); gsub(/ /, "_", sig)
      }
      nf++
      printf "FINDING %s %s | %s\n", cls, sig, head
    }
    function idents(s,   t) {
      while (match(s, /[A-Za-z_][A-Za-z0-9_$]*/)) {
        t = substr(s, RSTART, RLENGTH); ids_s = ids_s " " t; s = substr(s, RSTART + RLENGTH)
      }
    }
    function access(s,   a) {   # "Write access at", "and Read access at" -> Write / Read
      if (match(s, /(Read|Write|Atomic)[A-Za-z]* access/)) { a = substr(s, RSTART, RLENGTH); sub(/ access/, "", a); return a }
      return ""
    }
    /^========= / || /^=========$/ {
      line = $0; sub(/^========= ?/, "", line)   # a finding starts right after the prefix; its lines are indented
      if (line ~ /ERROR SUMMARY:/) {
        flush(); match(line, /ERROR SUMMARY: [0-9]+/); summ = substr(line, RSTART + 15, RLENGTH - 15) " - -"; next
      }
      if (line ~ /RACECHECK SUMMARY:/) {
        flush(); s = line
        match(s, /[0-9]+ hazard/); h = substr(s, RSTART, RLENGTH - 7)
        match(s, /[0-9]+ error/); e = substr(s, RSTART, RLENGTH - 6)
        match(s, /[0-9]+ warning/); wn = substr(s, RSTART, RLENGTH - 8)
        summ = h " " e " " wn; next
      }
      if (line ~ /^ *$/) { flush(); next }
      if (line ~ /^ /) {
        if (!inb) next
        rest = line; sub(/^ +/, "", rest)
        if (rest ~ /^and /) { a2 = access(rest); if (a2 != "") pairs = pairs (pairs == "" ? "" : ",") a1 "-" a2 }
        if (rest !~ /Host Frame/) idents(rest)
        next
      }
      flush()
      head = line; sub(/^ +/, "", head)
      if (head ~ /COMPUTE-SANITIZER/ || head ~ /Target application returned/ || head ~ /did.?n.t terminate successfully/ ||
          head ~ /LEAK SUMMARY/) next
      inb = 1; ids_s = ""; pairs = ""; a1 = access(head); idents(head)
      next
    }
    END {
      flush()
      print "SUMMARY " (summ == "" ? "none" : summ)
      if (others != "") print "OTHER" others
    }'
}

# A finding is allowed when an allowlist line names its tool, spec and class, and the
# line's repro showed a finding of the same signature under the same tool in this run;
# all of that only while the controls hold (the control repro clean under the tool; for
# racecheck also the positive control caught). The repro "original" is the spec's own
# kernel as compiled (NAME__ref, in the same process): it can allow findings of the
# rewritten kernels (entry, clone), never its own.
declare -A REPRO_SIGS REPRO_COUNT
for t in racecheck synccheck; do
  for r in "${REPROS[@]}"; do REPRO_COUNT[$t.$r]=-1; done
done
controls_ok() {   # controls_ok TOOL
  [[ ${REPRO_COUNT[$1.rc_control_persist]:--1} == 0 ]] || return 1
  [[ $1 != racecheck ]] || (( ${REPRO_COUNT[racecheck.rc_race_persist]:--1} > 0 ))
}
allowed_by() {   # allowed_by TOOL SPEC CLASS SIG ORIGINAL_SIGS: prints the proving repro, or fails
  local tool=$1 spec=$2 cls=$3 sig=$4 orig=$5 t s c r proof
  [[ -f $ALLOW ]] || return 1
  controls_ok "$tool" || return 1
  while read -r t s c r _; do
    [[ -z $t || $t == \#* ]] && continue
    [[ $t == "$tool" && $s == "$spec" ]] && has "$c" "$cls" || continue
    if [[ $r == original ]]; then
      [[ $cls == entry || $cls == clone ]] || continue
      proof=$orig
    else
      proof=${REPRO_SIGS[$tool.$r]:-}
    fi
    if grep -qxF -- "$sig" <<<"$proof"; then echo "$r"; return 0; fi
  done <"$ALLOW"
  return 1
}
sig_list() { sort | uniq -c | sed 's/^ *//' | awk '{c=$1; $1=""; sub(/^ /,""); printf "%s%s x%s", (NR>1?"; ":""), $0, c}'; }

# first the repro jobs (the allowlist depends on them), then the specs
for pass_kind in repro spec; do
  while read -r id tool kind target; do
    [[ $kind == "$pass_kind" ]] || continue
    label="$tool $target"
    cp "$W/$id.san" "$RAW/$tool-$target.san.log" 2>/dev/null
    cp "$W/$id.out" "$RAW/$tool-$target.out" 2>/dev/null
    st=$(cat "$W/$id.status" 2>/dev/null || echo "missing")
    if [[ $st == notrun || $st == missing ]]; then bad "$label: not run (the ${budget} s budget was spent)"; continue; fi
    read -r rc secs to <<<"$st"
    ent=${ENTRY[$target]:-$target}
    parsed=$(parse "$tool" "$ent" <"$W/$id.san" 2>/dev/null)
    read -r _ count errs warns <<<"$(grep '^SUMMARY ' <<<"$parsed")"
    findings=$(grep '^FINDING ' <<<"$parsed" | sed 's/^FINDING //')
    nfind=$(grep -c . <<<"$findings")
    other=$(grep '^OTHER' <<<"$parsed" | sed 's/^OTHER | //')
    hsum=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$W/$id.out" | tail -1)
    why=""
    (( rc == 124 || rc == 137 )) && why+="timed out after ${to} s; "
    [[ $count == none || -z $count ]] && why+="no summary from compute-sanitizer (exit $rc: $(cat "$W/$id.san" "$W/$id.out" 2>/dev/null | grep -v '^ *$' | tail -3 | tr '\n' ' ' | cut -c1-300)); "
    if [[ $count =~ ^[0-9]+$ ]] && (( count > 0 && nfind == 0 )); then why+="$count reported but none could be read (see $RAW/$tool-$target.san.log); "; fi
    if [[ $kind == repro ]]; then
      sigs=$(sed 's/ | .*//' <<<"$findings" | awk 'NF {print $2}')
      REPRO_SIGS[$tool.$target]=$sigs
      [[ -z $why ]] && REPRO_COUNT[$tool.$target]=${count:-0}
      desc="${count:-?} $([[ $tool == racecheck ]] && echo "hazards ($errs errors, $warns warnings)" || echo errors)"
      [[ -n $sigs ]] && desc+=": $(sig_list <<<"$sigs")"
      res=$(grep -E '^INFO ' "$W/$id.out" | head -1 | sed -e 's/^INFO [^:]*: //' -e 's/ (.*//')
      [[ -n $res ]] && desc+=" [$res]"
      if [[ -n $why ]]; then bad "$label: $why"; continue; fi
      case "$target" in
        rc_control_persist)
          if (( count == 0 )); then ok "$label: clean, as it must be ($desc)"
          else bad "$label: the race-free control is flagged ($desc): the tool misreads the clone's skeleton itself; no allowance holds"; fi ;;
        rc_race_persist)
          if [[ $tool != racecheck ]]; then log "INFO $label: $desc"
          elif (( count > 0 )); then ok "$label: the real race is caught ($desc)"
          else bad "$label: the real race is NOT caught ($desc): a clean racecheck run proves nothing"; fi ;;
        *) log "INFO $label: $desc" ;;
      esac
      continue
    fi
    # a spec
    [[ -n $hsum ]] || why+="the harness ended without its summary (exit $rc; $(grep -E '^(FAIL|PASS)' "$W/$id.out" | tail -1 | cut -c1-200)); "
    hf=$(awk '{print $3}' <<<"${hsum:-0 passed, 0 failed}")
    (( ${hf:-0} > 0 )) && why+="harness: $hsum ($(grep '^FAIL' "$W/$id.out" | head -2 | cut -c1-220 | tr '\n' ' ')); "
    bad_f="" ok_f="" own_f="" nbad=0 nok=0 nown=0
    orig_sigs=$(awk '$1 == "original" {print $2}' <<<"$findings")
    while IFS= read -r f; do
      [[ -z $f ]] && continue
      read -r cls sig _ <<<"$f"
      head=${f#* | }
      if [[ $cls == original ]]; then
        # the spec's kernel as compiled, without tidal (NAME__ref): not tidal's finding; it
        # is what an allowlist line with REPRO "original" compares the rewritten ones with
        nown=$((nown + 1)); own_f+="$sig; "
      elif r=$(allowed_by "$tool" "$target" "$cls" "$sig" "$orig_sigs"); then
        nok=$((nok + 1)); ok_f+="$cls $sig (artefact: $r); "
      else
        nbad=$((nbad + 1)); bad_f+="$cls: $head; "
      fi
    done <<<"$findings"
    (( nbad > 0 )) && why+="$nbad finding(s) not allowlisted: $(cut -c1-600 <<<"${bad_f%; }"); "
    what="${count:-?} $([[ $tool == racecheck ]] && echo hazards || echo errors)"
    [[ -n $other ]] && log "INFO $label: tool messages: $(cut -c1-300 <<<"$other")"
    (( nown > 0 )) && log "INFO $label: $nown finding(s) in the original kernel itself (no tidal in it): $(sort <<<"${own_f//; /$'\n'}" | grep . | uniq -c | sed 's/^ *//' | tr '\n' ';' | cut -c1-300)"
    if [[ -n $why ]]; then
      bad "$label: ${why%; } [${secs}s]"
      grep -E '^(=========|FAIL)' "$W/$id.san" "$W/$id.out" 2>/dev/null | grep -v SUMMARY | head -12 | sed 's/^/    /' >>"$LOG"
    else
      ok "$label: $what$( (( nok )) && echo ", all allowed: $ok_f" | sed 's/; $//'); harness $hsum [${secs}s]"
    fi
  done <"$W/list"
done
finish
