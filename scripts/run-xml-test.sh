#!/usr/bin/env bash
# Run one ctest test that writes a JUnit-style XML result file.
#
#   run-xml-test.sh [--cmocka] [--log FILE] XML -- COMMAND [ARGS...]
#
# Removes XML first (cmocka refuses to overwrite an existing file and a stale
# file would be counted by test/summary.sh), runs COMMAND, and exits with its
# status. With --cmocka, whose console output is empty when
# CMOCKA_MESSAGE_OUTPUT=XML, the failed test cases are printed from XML when
# COMMAND fails. With --log (lit), COMMAND's output goes to FILE as it comes,
# one line per finished test, so scripts/check.sh can show progress while ctest
# holds the console; afterwards the console gets FILE without the lines of
# tests that passed or were skipped (failures in full, and the summary).
set -u
show_cmocka=0 log=
while :; do
  case "${1:-}" in
    --cmocka) show_cmocka=1; shift ;;
    --log) log=${2:?run-xml-test.sh: --log needs a file}; shift 2 ;;
    *) break ;;
  esac
done
xml=${1:?usage: run-xml-test.sh [--cmocka] [--log FILE] XML -- COMMAND [ARGS...]}
shift
[[ "${1:-}" == -- ]] && shift
(( $# > 0 )) || { echo "run-xml-test.sh: no command" >&2; exit 2; }

mkdir -p "$(dirname "$xml")"
rm -f "$xml"
if [[ -n $log ]]; then
  mkdir -p "$(dirname "$log")"
  "$@" >"$log" 2>&1
  rc=$?
  grep -Ev '^(PASS|UNSUPPORTED|XFAIL|EXCLUDED): .* \([0-9]+ of [0-9]+\)$' "$log"
else
  "$@"
  rc=$?
fi
if (( rc != 0 && show_cmocka )); then
  if [[ -s "$xml" ]]; then
    echo "---- failed test cases (from $xml) ----"
    # print each <testcase> element that contains a <failure> or <error>
    awk '/<testcase /{buf=""; keep=0; intc=1}
         intc{buf=buf $0 "\n"; if ($0 ~ /<(failure|error)/) keep=1}
         /<\/testcase>/{if (keep) printf "%s", buf; intc=0}' "$xml"
  else
    echo "---- $1 exited with status $rc and wrote no XML result (crash?) ----"
  fi
fi
exit "$rc"
