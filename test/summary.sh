#!/usr/bin/env bash
# Add up test results into ONE final line: "N passed, N failed".
#
#   test/summary.sh RESULTS_DIR...      (e.g. build/test-results build-asan/test-results)
#
# Each RESULTS_DIR holds
#   ctest.xml          ctest --output-junit: one <testcase> per ctest test
#   tests/<name>.xml   the detailed JUnit-style file that ctest test <name> wrote
#                      (lit --xunit-xml-output, cmocka XML, fuzz-run.sh)
# A ctest test counts as the test cases of its detail file (passed = tests -
# failures - errors - skipped; skipped cases are listed by name with their reason
# but not counted), or
# as one test when it has none. A ctest test that failed while its detail file
# shows no failure (crash, sanitizer report at exit, missing file) adds one
# failure. Exit status: 0 only if nothing failed and something passed.
set -uo pipefail

if (( $# == 0 )); then
  echo "usage: test/summary.sh RESULTS_DIR..." >&2
  exit 2
fi

# Sum the <testsuite> attributes of a JUnit file: prints "tests failed skipped".
# Tags may span lines (RS="<" makes each tag one record).
sum_suites() {
  awk 'BEGIN { RS = "<" }
       function attr(rec, key,   m) {
         if (match(rec, "[ \t\n]" key "=\"[0-9]+\"")) {
           m = substr(rec, RSTART, RLENGTH); gsub(/[^0-9]/, "", m); return m + 0
         }
         return 0
       }
       /^testsuite[ \t\n]/ { t += attr($0, "tests"); f += attr($0, "failures") + attr($0, "errors")
                             s += attr($0, "skipped") }
       END { printf "%d %d %d\n", t, f, s }' "$1"
}

# Test cases of a JUnit file, one per line: with MODE "failed" the names of the
# failed ones; with "skipped" "NAME: REASON" for the skipped ones (REASON: the
# <skipped message>, e.g. lit's "Missing required feature(s): nvcc").
cases() {
  awk -v mode="$2" 'BEGIN { RS = "<" }
       function attr(rec, key) {
         if (match(rec, "[ \t\n]" key "=\"[^\"]*\"")) {
           return substr(rec, RSTART + length(key) + 3, RLENGTH - length(key) - 4)
         }
         return ""
       }
       function unxml(s) {
         gsub(/&quot;/, "\"", s); gsub(/&apos;/, "\047", s); gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s)
         gsub(/&amp;/, "\\&", s); return s
       }
       /^testsuite[ \t\n]/ { suite = attr($0, "name") }
       /^testcase[ \t\n]/  { cls = attr($0, "classname"); name = attr($0, "name")
                             # lit: classname "<suite>.<dir>" -> "<suite> :: <dir>/<name>"
                             if (cls == "") cur = suite " :: " name
                             else if ((i = index(cls, ".")) > 0) {
                               d = substr(cls, i + 1)
                               cur = substr(cls, 1, i - 1) " :: " (d == substr(cls, 1, i - 1) ? "" : d "/") name
                             } else cur = cls " :: " name
                             cur = unxml(cur) }
       mode == "failed" && /^(failure|error)[ \t\n\/>]/ { if (cur != "") print cur; cur = "" }
       mode == "skipped" && /^skipped[ \t\n\/>]/ {
                             why = unxml(attr($0, "message"))
                             if (cur != "") print cur ": " (why != "" ? why : "(no reason given)"); cur = "" }' "$1"
}

# ctest.xml -> "name status" per ctest test.
ctest_cases() {
  awk 'BEGIN { RS = "<" }
       function attr(rec, key) {
         if (match(rec, "[ \t\n]" key "=\"[^\"]*\"")) {
           return substr(rec, RSTART + length(key) + 3, RLENGTH - length(key) - 4)
         }
         return ""
       }
       /^testcase[ \t\n]/ { print attr($0, "name"), attr($0, "status") }' "$1"
}

total_pass=0
total_fail=0
total_skip=0
failures=()
skips=()

echo
echo "==================== test summary ===================="
for dir in "$@"; do
  dir=${dir%/}
  ctest_xml=$dir/ctest.xml
  if [[ ! -s $ctest_xml ]]; then
    printf '%-16s no ctest results (%s missing): counted as 1 failure\n' "$dir" "$ctest_xml"
    total_fail=$((total_fail + 1))
    failures+=("${dir%/test-results}: ctest did not run")
    continue
  fi
  declare -A kp=() kf=() ks=()
  kinds=()
  while read -r name status; do
    [[ -n $name ]] || continue
    kind=${name%%.*}
    if [[ -z ${kp[$kind]+x} ]]; then kinds+=("$kind"); kp[$kind]=0; kf[$kind]=0; ks[$kind]=0; fi
    detail=$dir/tests/$name.xml
    if [[ -s $detail ]]; then
      read -r t f s < <(sum_suites "$detail")
      p=$((t - f - s))
      (( p < 0 )) && p=0
      if (( f > 0 )); then
        while IFS= read -r c; do failures+=("${dir%/test-results}: [$name] $c"); done < <(cases "$detail" failed)
      fi
      if (( s > 0 )); then
        while IFS= read -r c; do skips+=("${dir%/test-results}: [$name] $c"); done < <(cases "$detail" skipped)
      fi
      if [[ $status == fail && $f -eq 0 ]]; then
        f=1
        failures+=("${dir%/test-results}: ctest test '$name' failed (crash or error outside its test cases; see its output above)")
      fi
    elif [[ $status == run ]]; then
      p=1 f=0 s=0
    else
      p=0 f=1 s=0
      failures+=("${dir%/test-results}: ctest test '$name' $status (no result file)")
    fi
    kp[$kind]=$((kp[$kind] + p)); kf[$kind]=$((kf[$kind] + f)); ks[$kind]=$((ks[$kind] + s))
  done < <(ctest_cases "$ctest_xml")

  line=""
  for kind in "${kinds[@]}"; do
    part="$kind ${kp[$kind]}/${kf[$kind]}"
    (( ks[$kind] )) && part+=" (${ks[$kind]} skipped)"
    line+="${line:+, }$part"
    total_pass=$((total_pass + kp[$kind])); total_fail=$((total_fail + kf[$kind]))
    total_skip=$((total_skip + ks[$kind]))
  done
  printf '%-16s %s\n' "${dir%/test-results}:" "${line:-no tests}"
  unset kp kf ks
done
echo "(per tree: kind passed/failed)"

if (( ${#failures[@]} )); then
  echo
  echo "Failed:"
  shown=0
  for f in "${failures[@]}"; do
    if (( shown == 40 )); then echo "  ... and $(( ${#failures[@]} - 40 )) more"; break; fi
    echo "  $f"
    shown=$((shown + 1))
  done
fi
if (( total_skip )); then
  echo
  echo "Skipped ($total_skip, not counted), with the reason:"
  for c in "${skips[@]}"; do echo "  $c"; done
  (( ${#skips[@]} < total_skip )) && echo "  ... and $(( total_skip - ${#skips[@]} )) more without a <testcase> entry"
fi
if (( total_pass + total_fail == 0 )); then
  echo "error: no tests ran"
fi
echo "======================================================"
echo "$total_pass passed, $total_fail failed"

(( total_fail == 0 && total_pass > 0 ))
