#!/usr/bin/env bash
# Run one ctest test that writes a JUnit-style XML result file.
#
#   run-xml-test.sh [--cmocka] XML -- COMMAND [ARGS...]
#
# Removes XML first (cmocka refuses to overwrite an existing file and a stale
# file would be counted by test/summary.sh), runs COMMAND, and exits with its
# status. With --cmocka, whose console output is empty when
# CMOCKA_MESSAGE_OUTPUT=XML, the failed test cases are printed from XML when
# COMMAND fails.
set -u
show_cmocka=0
if [[ "${1:-}" == --cmocka ]]; then show_cmocka=1; shift; fi
xml=${1:?usage: run-xml-test.sh [--cmocka] XML -- COMMAND [ARGS...]}
shift
[[ "${1:-}" == -- ]] && shift
(( $# > 0 )) || { echo "run-xml-test.sh: no command" >&2; exit 2; }

mkdir -p "$(dirname "$xml")"
rm -f "$xml"
"$@"
rc=$?
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
