#!/usr/bin/env bash
# run.sh — integration test of tidald, tidalctl and tidal_client (no GPU).
#
#   test/control/run.sh --bin DIR --probe PATH [--seeds DIR] [--xml FILE]
#
# DIR holds tidald and tidalctl; PATH is control_probe (test/control/control_probe.c);
# --seeds: the fuzz_tidald inputs played to a real tidald in 9. (default: the source
# tree's test/fuzz/seeds/fuzz_tidald).
# Starts its own tidald on a private socket (a temp dir) and a unique shm name, runs the
# checks below, writes a JUnit file (one <testcase> per check) and removes its daemon,
# tenants, socket and shm on exit (trap). Exit status: 0 when every check passed.
set -u

BIN= PROBE= XML= SEEDS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fuzz/seeds/fuzz_tidald" 2>/dev/null && pwd)
while (( $# )); do
  case $1 in
    --bin) BIN=$2; shift 2 ;;
    --probe) PROBE=$2; shift 2 ;;
    --seeds) SEEDS=$2; shift 2 ;;
    --xml) XML=$2; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x $BIN/tidald && -x $BIN/tidalctl && -x $PROBE ]] || { echo "run.sh: need --bin DIR (tidald, tidalctl) and --probe PATH" >&2; exit 2; }

TMP=$(mktemp -d /tmp/tidal-control-test.XXXXXX)
export TIDAL_SOCKET=$TMP/tidald.sock
export TIDAL_SHM=/tidal-test-$$-$RANDOM
SHMFILE=/dev/shm/${TIDAL_SHM#/}
CTL=$BIN/tidalctl
DPID=
PIDS=()

cleanup() {
  local p
  for p in "${PIDS[@]}" $DPID; do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -f "$SHMFILE" "$SHMFILE"-f[0-9]
  if [[ ${KEEP_TMP:-0} == 1 ]]; then echo "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- result bookkeeping ------------------------------------------------------------------
NAMES=() FAILS=()
pass() { NAMES+=("$1"); FAILS+=(""); echo "PASS: $1"; }
fail() { NAMES+=("$1"); FAILS+=("${2:-failed}"); echo "FAIL: $1: ${2:-failed}"; }
# check NAME CMD...: passes when CMD exits 0
check() { local n=$1; shift; if "$@" >>"$TMP/check.log" 2>&1; then pass "$n"; else fail "$n" "$*"; fi; }

write_xml() {
  [[ -n $XML ]] || return 0
  mkdir -p "$(dirname "$XML")"
  local nf=0 i
  for i in "${!NAMES[@]}"; do [[ -n ${FAILS[$i]} ]] && nf=$((nf + 1)); done
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo '<testsuites>'
    echo "<testsuite name=\"control\" tests=\"${#NAMES[@]}\" failures=\"$nf\" errors=\"0\" skipped=\"0\">"
    for i in "${!NAMES[@]}"; do
      if [[ -n ${FAILS[$i]} ]]; then
        local m=${FAILS[$i]//&/&amp;}; m=${m//</&lt;}; m=${m//>/&gt;}; m=${m//\"/&quot;}
        echo "<testcase classname=\"control\" name=\"${NAMES[$i]}\"><failure message=\"$m\"/></testcase>"
      else
        echo "<testcase classname=\"control\" name=\"${NAMES[$i]}\"/>"
      fi
    done
    echo '</testsuite>'
    echo '</testsuites>'
  } >"$XML"
}

# ---- helpers -------------------------------------------------------------------------------
now_ms() { date +%s%3N; }
# wait_for FILE REGEX [SECONDS]: until a line of FILE matches
wait_for() {
  local end=$(( $(now_ms) + ${3:-3} * 1000 ))
  while (( $(now_ms) < end )); do
    grep -Eq -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.02
  done
  echo "timeout waiting for /$2/ in $1:"; tail -5 "$1"
  return 1
}
start_daemon() {
  "$BIN/tidald" "$@" 2>>"$TMP/tidald.log" &
  DPID=$!
  local end=$(( $(now_ms) + 10000 ))
  while (( $(now_ms) < end )); do
    "$CTL" ping >/dev/null 2>&1 && return 0
    kill -0 "$DPID" 2>/dev/null || { echo "tidald exited"; tail "$TMP/tidald.log"; return 1; }
    sleep 0.02
  done
  return 1
}
start_tenant() { # start_tenant LOG ARGS...
  local log=$1; shift
  "$PROBE" tenant --socket "$TIDAL_SOCKET" "$@" >"$log" 2>&1 &
  PIDS+=($!)
  LASTPID=$!
}
expect_exit() { # expect_exit CODE PATTERN CMD...: exit status CODE, stderr+stdout match PATTERN
  local code=$1 pat=$2; shift 2
  local out rc
  out=$("$@" 2>&1); rc=$?
  [[ $rc == "$code" ]] || { echo "exit $rc (want $code): $out"; return 1; }
  [[ -z $pat ]] || grep -Eq -- "$pat" <<<"$out" || { echo "no /$pat/ in: $out"; return 1; }
}
raw() { "$PROBE" raw --socket "$TIDAL_SOCKET" "$@"; }
raw_expect() { # raw_expect INPUT-FILE REGEX...: every REGEX in the answer
  local in=$1; shift
  local out; out=$(raw <"$in") || { echo "raw exit $?: $out"; return 1; }
  local p; for p in "$@"; do grep -Eq -- "$p" <<<"$out" || { echo "no /$p/ in: ${out:0:400}"; return 1; }; done
}
alive() { kill -0 "$DPID" 2>/dev/null; }
count_lines() { grep -Ec -- "$2" "$1" 2>/dev/null || true; }

# ---- 1. start, help, basic requests -------------------------------------------------------
check daemon_starts start_daemon
check tidald_help bash -c "'$BIN/tidald' --help | grep -q SYNOPSIS && '$BIN/tidald' --help | grep -q 'EXIT STATUS'"
check tidalctl_help bash -c "'$CTL' --help | grep -q SYNOPSIS && '$CTL' --help | grep -q ENVIRONMENT"
check socket_mode_0660 bash -c "[[ \$(stat -c %a '$TIDAL_SOCKET') == 660 ]]"
check shm_mode_0660 bash -c "[[ \$(stat -c %a '$SHMFILE') == 660 ]]"
check create_ls expect_exit 0 'created ls 0-47' "$CTL" create ls 0-47
check create_be expect_exit 0 'created be 48-131' "$CTL" create be 48-131
check create_all expect_exit 0 'created everything all' "$CTL" create everything all
check list_text expect_exit 0 'be +48-131 +84' "$CTL" list
check list_json expect_exit 0 '"name": "ls", "sms": "0-47", "count": 48' "$CTL" --json list
check destroy expect_exit 0 'destroyed everything' "$CTL" destroy everything
check list_after_destroy bash -c "! '$CTL' list | grep -q everything"

# ---- 2. refused requests and usage errors -------------------------------------------------
check err_exists expect_exit 1 'tidalctl: error: exists: ls' "$CTL" create ls 1-2
check err_no_such expect_exit 1 'no such partition: nope' "$CTL" set nope 1-2
check err_destroy_missing expect_exit 1 'no such partition' "$CTL" destroy nope
check err_sm_256 expect_exit 1 'bad SM set' "$CTL" create x 0-256
check err_sm_reversed expect_exit 1 'bad SM set' "$CTL" create x 9-3
check err_sm_garbage expect_exit 1 'bad SM set' "$CTL" set ls 'abc'
# an empty SM set (an unset variable) does not empty a partition; "none" does
check err_sm_empty expect_exit 1 "empty SM set ''" "$CTL" set ls ''
check err_sm_blank expect_exit 1 'empty SM set' "$CTL" set ls '  '
check err_sm_empty_create expect_exit 1 'empty SM set' "$CTL" create x ''
check sm_empty_kept expect_exit 0 'ls +0-47 +48' "$CTL" list
check sm_none_explicit expect_exit 0 'set ls none' "$CTL" set ls none
check sm_none_restored expect_exit 0 'set ls 0-47' "$CTL" set ls 0-47
# hist of a partition tidald does not have: refused like set and destroy
check err_hist_missing expect_exit 1 'tidalctl: error: no such partition: nope' "$CTL" hist nope
check err_hist_missing_json expect_exit 1 'no such partition: nope' "$CTL" --json hist nope
check err_bad_name expect_exit 1 'bad partition name' "$CTL" create 'bad name!' 1
check err_long_name expect_exit 1 'bad partition name' "$CTL" create aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1
check usage_unknown_cmd expect_exit 2 'unknown command' "$CTL" frob
check usage_missing_arg expect_exit 2 'takes 2 arguments' "$CTL" create onlyname
check usage_no_cmd expect_exit 2 'no command' "$CTL"
check unreachable_69 expect_exit 69 'cannot reach tidald' "$CTL" --socket "$TMP/none.sock" ping
check second_daemon_refused expect_exit 1 'another tidald answers' "$BIN/tidald"
check second_daemon_same_shm_refused expect_exit 1 'held by another tidald' \
  "$BIN/tidald" --socket "$TMP/other.sock"
check second_daemon_same_shm_no_socket_left test ! -e "$TMP/other.sock"
# A tidald that cannot start leaves nothing behind: the socket path is checked (and bound)
# before the segment is made, and every failure removes what that start made.
touch "$TMP/plain-file"
check start_fail_not_a_socket expect_exit 1 'exists and is not a socket' \
  "$BIN/tidald" --socket "$TMP/plain-file" --shm "$TIDAL_SHM-f1"
check start_fail_not_a_socket_no_shm test ! -e "$SHMFILE-f1"
check start_fail_no_dir expect_exit 1 'mkdir .*/no/such: No such file' \
  "$BIN/tidald" --socket "$TMP/no/such/tidald.sock" --shm "$TIDAL_SHM-f2"
check start_fail_no_dir_no_shm test ! -e "$SHMFILE-f2"
mkdir -p "$TMP/ro" && chmod 0500 "$TMP/ro"
if [[ ! -w $TMP/ro ]]; then   # (root writes anyway)
  check start_fail_bind expect_exit 1 'bind .*: Permission denied' \
    "$BIN/tidald" --socket "$TMP/ro/tidald.sock" --shm "$TIDAL_SHM-f3"
  check start_fail_bind_no_shm test ! -e "$SHMFILE-f3"
fi
check start_fail_made_dir_removed bash -c "'$BIN/tidald' --socket '$TMP/newdir/tidald.sock' --shm '$TIDAL_SHM' 2>/dev/null; \
  [[ \$? == 1 && ! -e '$TMP/newdir' ]]"
# a segment of another layout (not ours): refused, left as it was, no socket left
head -c 100 /dev/zero > "$SHMFILE-f4"
check start_fail_bad_segment expect_exit 1 'not a tidal segment' \
  "$BIN/tidald" --socket "$TMP/f4.sock" --shm "$TIDAL_SHM-f4"
check start_fail_bad_segment_kept bash -c "[[ \$(stat -c %s '$SHMFILE-f4') == 100 ]]"
check start_fail_bad_segment_no_socket test ! -e "$TMP/f4.sock"
check first_daemon_unharmed expect_exit 0 'ls +0-47' "$CTL" list

# ---- 3. tenants: a set reaches them ---------------------------------------------------------
start_tenant "$TMP/a.log" --name tenantA --blocks 1; TA=$LASTPID
check tenant_a_snapshot wait_for "$TMP/a.log" '^snap gen [0-9]+ ls=0-47 be=48-131$'
check set_reaches_tenant bash -c "'$CTL' set ls 0-31 >/dev/null && true"
check tenant_a_sees_set wait_for "$TMP/a.log" '^snap gen [0-9]+ ls=0-31 be=48-131$' 2
start_tenant "$TMP/b.log" --name tenantB --mps --blocks 2; TB=$LASTPID
check tenant_b_snapshot wait_for "$TMP/b.log" '^snap gen [0-9]+ ls=0-31 be=48-131$'
check tenants_two expect_exit 0 'tenantB .* yes' "$CTL" tenants
check tenants_json expect_exit 0 '"name": "tenantB", "since": [0-9]+, "mps": true' "$CTL" tenants --json
"$CTL" set be 32-131 >/dev/null
check two_tenants_see_set_a wait_for "$TMP/a.log" 'ls=0-31 be=32-131$' 2
check two_tenants_see_set_b wait_for "$TMP/b.log" 'ls=0-31 be=32-131$' 2

# ---- 4. hist and tenants --stats ------------------------------------------------------------
check hist_sums expect_exit 0 'partition ls: 2 tenants, 2 answered, 96 blocks, 2 violations' "$CTL" hist ls
check hist_table expect_exit 0 '^ +31 +3  #{50}$' "$CTL" hist ls
check hist_json expect_exit 0 '"sm_blocks": \{"0": 3, "1": 3' "$CTL" --json hist ls
check tenants_stats expect_exit 0 'partition be +blocks 200' "$CTL" tenants --stats
start_tenant "$TMP/c.log" --name mute --no-answer; TC=$LASTPID
check tenant_c_snapshot wait_for "$TMP/c.log" '^snap gen'
t0=$(now_ms)
check hist_deadline_timeout expect_exit 0 'mute\): timeout' "$CTL" hist ls
t1=$(now_ms)
check hist_deadline_bounded bash -c "(( $t1 - $t0 < 1500 ))"
check hist_still_sums expect_exit 0 '3 tenants, 2 answered, 96 blocks' "$CTL" hist ls

# ---- 5. malformed requests: errors, the daemon survives --------------------------------------
printf 'blah\x01\x02zz\n' >"$TMP/in.garbage"
check raw_garbage raw_expect "$TMP/in.garbage" '^error: bad byte 0x01' '^end$'
printf 'frobnicate now\n' >"$TMP/in.unknown"
check raw_unknown_verb raw_expect "$TMP/in.unknown" "^error: unknown request 'frobnicate'"
{ head -c 1048576 /dev/zero | tr '\0' 'a'; printf '\nping\n'; } >"$TMP/in.huge"
check raw_1mb_line raw_expect "$TMP/in.huge" '^error: line too long' '^ok pong'
printf 'create x 0-256\ncreate y 5-3\nset ls abc\ncreate z\ncreate w 1,,2\n' >"$TMP/in.badsets"
check raw_bad_smsets bash -c "out=\$('$PROBE' raw --socket '$TIDAL_SOCKET' <'$TMP/in.badsets'); [[ \$(grep -c '^error: bad SM set' <<<\"\$out\") == 4 ]] && grep -q 'usage: create NAME SMSET' <<<\"\$out\""
printf 'ping\0zzz\n' >"$TMP/in.nul"
check raw_nul_byte raw_expect "$TMP/in.nul" '^error: bad byte 0x7f'
printf 'list' >"$TMP/in.half"
check raw_half_line_eof raw_expect "$TMP/in.half" '^error: incomplete request'
printf 'create half 0-' >"$TMP/in.half2"
check raw_half_line_close bash -c "'$PROBE' raw --socket '$TIDAL_SOCKET' --close-early <'$TMP/in.half2' && '$CTL' ping"
check half_line_created_nothing bash -c "! '$CTL' list | grep -q half"
# the longest line there is (8191 bytes + "\n") is a request; one byte more is not
{ printf 'ping'; head -c 8187 /dev/zero | tr '\0' ' '; printf '\n'; } >"$TMP/in.8191"
check raw_line_8191 raw_expect "$TMP/in.8191" '^ok pong'
{ printf 'ping'; head -c 8188 /dev/zero | tr '\0' ' '; printf '\nping\n'; } >"$TMP/in.8192"
check raw_line_8192 bash -c "out=\$('$PROBE' raw --socket '$TIDAL_SOCKET' <'$TMP/in.8192'); grep -q '^error: line too long' <<<\"\$out\" && [[ \$(grep -c '^ok pong' <<<\"\$out\") == 1 ]]"
printf 'stats 1 ls violations 0 sm 0:1\nstats-end 1\n' >"$TMP/in.stats"
check raw_stats_not_tenant raw_expect "$TMP/in.stats" '^error: stats lines are for tenant'
for i in $(seq 200); do echo ping; done >"$TMP/in.pipelined"
check raw_pipelined_200 bash -c "[[ \$('$PROBE' raw --socket '$TIDAL_SOCKET' <'$TMP/in.pipelined' | grep -c '^ok pong') == 200 ]]"
"$PROBE" idle --socket "$TIDAL_SOCKET" --ms 3000 & PIDS+=($!)
"$PROBE" idle --socket "$TIDAL_SOCKET" --ms 3000 & PIDS+=($!)
sleep 0.1
t0=$(now_ms)
check idle_clients_do_not_block expect_exit 0 'created idle' "$CTL" create idle 7
t1=$(now_ms)
check idle_clients_fast bash -c "(( $t1 - $t0 < 1000 ))"
"$CTL" destroy idle >/dev/null
check daemon_survives_malformed alive

# ---- 6. SIGKILL: tenants keep their masks, do not hang; a restart resumes ---------------------
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null; DPID=
check kill9_tenant_a_disconnected wait_for "$TMP/a.log" '^disconnected$' 2
check kill9_tenant_a_keeps_masks wait_for "$TMP/a.log" '^kept gen [0-9]+ ls=0-31 be=32-131$' 2
check kill9_tenant_b_keeps_masks wait_for "$TMP/b.log" '^kept gen [0-9]+ ls=0-31 be=32-131$' 2
sleep 0.7
check kill9_tenants_alive kill -0 "$TA" "$TB" "$TC"
check kill9_stale_socket_left test -S "$TIDAL_SOCKET"
check ctl_while_down_69 expect_exit 69 'cannot reach tidald' "$CTL" list
nsnap_a=$(count_lines "$TMP/a.log" '^snap')
check restart_replaces_stale_socket start_daemon
check restart_resumes_partitions expect_exit 0 'ls +0-31 +32' "$CTL" list
check restart_tenants_reconnect bash -c "for i in \$(seq 100); do [[ \$('$CTL' tenants | grep -c '^[0-9]') == 3 ]] && exit 0; sleep 0.03; done; exit 1"
check restart_tenant_a_changed bash -c "(( \$(grep -c '^snap' '$TMP/a.log') > $nsnap_a ))"
"$CTL" set ls 0-15 >/dev/null
check after_restart_set_reaches_a wait_for "$TMP/a.log" '^snap gen [0-9]+ ls=0-15 be=32-131$' 2
check after_restart_set_reaches_b wait_for "$TMP/b.log" '^snap gen [0-9]+ ls=0-15 be=32-131$' 2

# ---- 7. SIGTERM: clean exit, socket removed, shm kept; --reset starts empty ------------------
kill -TERM "$DPID"; wait "$DPID"; rc=$?; DPID=
check sigterm_exit_0 test "$rc" = 0
check sigterm_socket_removed test ! -e "$TIDAL_SOCKET"
check sigterm_shm_kept test -e "$SHMFILE"
check reset_starts start_daemon --reset
check reset_empty bash -c "[[ \$('$CTL' list | wc -l) == 1 ]]"
check reset_tenant_a_remaps wait_for "$TMP/a.log" '^snap gen [0-9]+$' 3
"$CTL" create fresh 100-103 >/dev/null
check reset_tenant_b_sees_new wait_for "$TMP/b.log" '^snap gen [0-9]+ fresh=100-103$' 3
check no_slow_waits bash -c "! grep -h SLOW '$TMP'/[abc].log"
# --spin: the same service from a tidald that never sleeps in ppoll; SIGTERM still stops it (8.)
kill -TERM "$DPID"; wait "$DPID"; DPID=
check spin_starts start_daemon --spin
check spin_serves expect_exit 0 'fresh +100-103' "$CTL" list
"$CTL" set fresh 100-101 >/dev/null
check spin_set_reaches_a wait_for "$TMP/a.log" '^snap gen [0-9]+ fresh=100-101$' 3
check spin_set_reaches_b wait_for "$TMP/b.log" '^snap gen [0-9]+ fresh=100-101$' 3

# ---- 8. tenants leave: forgotten on EOF; clean shutdown ----------------------------------------
kill -TERM "$TA" "$TB" "$TC"
trc=0; for p in "$TA" "$TB" "$TC"; do wait "$p" || trc=$?; done
check tenants_exit_clean test "$trc" = 0
check tenants_forgotten bash -c "for i in \$(seq 50); do [[ \$('$CTL' --json tenants) == '[]' ]] && exit 0; sleep 0.02; done; exit 1"
kill -TERM "$DPID"; wait "$DPID"; rc=$?; DPID=
check final_sigterm_exit_0 test "$rc" = 0

# ---- 9. the fuzz target's inputs (test/fuzz/seeds/fuzz_tidald) over the socket ---------------
# fuzz_tidald drives tidald's request code from memory; here a real tidald gets the same
# inputs from real connections (split sends, EOF, close, stalled readers, tenants answering
# hist), one after the other, and must answer a new connection after each and at the end.
if [[ -d $SEEDS ]]; then
  check fuzz_daemon_starts start_daemon --reset --stats-timeout 50
  check fuzz_seeds_replayed bash -c "'$PROBE' fuzz-replay --socket '$TIDAL_SOCKET' --stats-ms 50 '$SEEDS' >'$TMP/fuzz-replay.log' 2>&1 || { tail -3 '$TMP/fuzz-replay.log'; exit 1; }"
  check fuzz_daemon_alive alive
  check fuzz_daemon_answers bash -c "'$CTL' create after-fuzz 0-3 | grep -q 'created after-fuzz' && '$CTL' list | grep -Eq 'after-fuzz +0-3' && '$CTL' destroy after-fuzz >/dev/null"
  check fuzz_no_tenants_left bash -c "[[ \$('$CTL' --json tenants) == '[]' ]]"
  kill -TERM "$DPID"; wait "$DPID"; rc=$?; DPID=
  check fuzz_daemon_exit_0 test "$rc" = 0
else
  fail fuzz_seeds_replayed "no seeds directory (--seeds): $SEEDS"
fi

# ---- 10. a broken tidald: the client never crashes or hangs ----------------------------------
FAKE=$TMP/fake.sock
fake() { # fake MODE: a fake daemon for one connection, a tenant against it
  "$PROBE" fake-daemon --socket "$FAKE" --mode "$1" --shm "$TIDAL_SHM" >"$TMP/fake-$1.log" 2>&1 &
  local fp=$! i
  PIDS+=($fp)
  for i in $(seq 100); do [[ -S $FAKE ]] && break; sleep 0.02; done
  local t0; t0=$(now_ms)
  timeout 10 "$PROBE" tenant --socket "$FAKE" --name victim >"$TMP/victim-$1.log" 2>&1 &
  local vp=$!
  sleep 2.2
  kill -TERM "$vp" 2>/dev/null; wait "$vp"; FAKE_RC=$?; wait "$fp" 2>/dev/null
  FAKE_MS=$(( $(now_ms) - t0 ))
}
fake silent
check fake_silent_open_fails bash -c "grep -q '^open failed -12' '$TMP/victim-silent.log'"
fake garbage
check fake_garbage_open_fails bash -c "grep -q '^open failed' '$TMP/victim-garbage.log' && [[ $FAKE_RC == 3 ]]"
fake hello-garbage
check fake_hello_garbage_survives bash -c "grep -q '^open ok' '$TMP/victim-hello-garbage.log' && grep -q '^stats answered' '$TMP/victim-hello-garbage.log' && grep -q '^disconnected' '$TMP/victim-hello-garbage.log' && grep -q '^bye' '$TMP/victim-hello-garbage.log' && [[ $FAKE_RC == 0 ]]"
check fake_no_slow_waits bash -c "! grep -h SLOW '$TMP'/victim-*.log"

write_xml
nf=0; for f in "${FAILS[@]}"; do [[ -n $f ]] && nf=$((nf + 1)); done
echo "control: ${#NAMES[@]} checks, $nf failed"
if (( nf )); then echo "---- tidald log ----"; tail -40 "$TMP/tidald.log"; fi
(( nf == 0 ))
