#!/usr/bin/env bash
# One progress line for a lit run that writes its log as it goes (lit -v, one line per
# finished test: "PASS: tidal :: cli/io.test (12 of 488)"); scripts/check.sh prints it
# every PROGRESS_SECONDS while ctest runs lit.
#
#   scripts/lit-progress.sh LOG [PREFIX]
#
# Prints "PREFIXlit: N of M tests done, F failed" (F counts FAIL, XPASS, TIMEOUT and
# UNRESOLVED), "PREFIXlit: M tests found, running" before the first one ends, and
# nothing while LOG is missing or empty. Exit status 0.
set -u
log=${1:?usage: lit-progress.sh LOG [PREFIX]}
prefix=${2:-}
[[ -s $log ]] || exit 0
n=$(grep -Eo '\([0-9]+ of [0-9]+\)$' "$log" | tail -1 | tr -d '()')
f=$(grep -Ec '^(FAIL|XPASS|TIMEOUT|UNRESOLVED): ' "$log")
if [[ -n $n ]]; then
  echo "${prefix}lit: $n tests done, $f failed"
else
  m=$(sed -n 's/^-- Testing: \([0-9]*\)\( of [0-9]*\)\{0,1\} tests.*/\1/p' "$log" | head -1)
  [[ -n $m ]] && echo "${prefix}lit: $m tests found, running"
fi
exit 0
