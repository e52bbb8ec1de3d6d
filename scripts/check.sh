#!/usr/bin/env bash
# The body of `make check` (dependencies are checked by `make deps` first).
#
#   scripts/check.sh [BUILD_DIR [ASAN_BUILD_DIR]]
#
# Builds BUILD_DIR (default build/) and ASAN_BUILD_DIR (default build-asan/,
# -DTIDAL_SANITIZE=ON), runs ctest in both, and ends with test/summary.sh's
# single line "N passed, N failed". Exit status 0 only if everything passed
# and at least one test ran.
#
# Progress: ctest prints a line as each of its tests ends; lit, most of the run,
# is one ctest test, so while it runs a line every PROGRESS_SECONDS (20) gives its
# count from test-results/lit.log ("lit: 212 of 488 tests done, 0 failed").
#
# Environment: CTEST_JOBS (2), BUILD_TYPE (RelWithDebInfo), CMAKE_ARGS (extra
# -D options for both trees), LIT_OPTS (passed to lit by lit itself),
# PROGRESS_SECONDS (20; 0: no progress lines).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build}
asan=${2:-build-asan}
jobs=${CTEST_JOBS:-2}
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }

fail_build() {
  echo "make check: $1 failed after $(elapsed)s"
  echo "0 passed, 1 failed"
  exit 1
}

echo "==> building $build/"
scripts/configure.sh normal "$build" || fail_build "configuring $build/"
ninja -C "$build" all tidal_check_deps || fail_build "building $build/"

# The ASan tree reuses $build's generated corpus instead of regenerating it and
# leaves the fuzz smoke test (already ASan+UBSan instrumented) to $build.
echo "==> building $asan/ (ASan+UBSan)"
scripts/configure.sh asan "$asan" "$build" || fail_build "configuring $asan/"
ninja -C "$asan" tidal_check_deps || fail_build "building $asan/"
echo "==> built in $(elapsed)s"

# progress DIR: while ctest runs in DIR, every PROGRESS_SECONDS the count of lit
# tests finished, from lit's log (scripts/lit-progress.sh).
progress() {
  local every=${PROGRESS_SECONDS:-20}
  (( every > 0 )) || return 0
  while sleep "$every"; do
    scripts/lit-progress.sh "$1/test-results/lit.log" "    [$(elapsed)s] "
  done
}

for dir in "$build" "$asan"; do
  echo "==> ctest in $dir/ ($(ctest --test-dir "$dir" -N | sed -n 's/^Total Tests: //p') tests; lit is one of them)"
  rm -rf "$dir/test-results"
  mkdir -p "$dir/test-results"
  progress "$dir" &
  progress_pid=$!
  ctest --test-dir "$dir" -j"$jobs" --output-on-failure \
    --output-junit "$(realpath -m "$dir/test-results/ctest.xml")"
  kill "$progress_pid" 2>/dev/null
  wait "$progress_pid" 2>/dev/null
done
echo "==> tests finished after $(elapsed)s"

exec test/summary.sh "$build/test-results" "$asan/test-results"
