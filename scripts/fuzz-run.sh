#!/usr/bin/env bash
# Run a libFuzzer binary over a working copy of the seeds and the PTX corpus.
#
#   fuzz-run.sh --binary FUZZER --seconds N --work DIR [--fresh] [--xml FILE]
#               [--corpus DIR]... [-- EXTRA_LIBFUZZER_ARGS...]
#
# Every regular file under each --corpus DIR (seeds, generated corpus PTX,
# committed Triton PTX) is copied into DIR/corpus (names flattened), which is
# the corpus libFuzzer reads and grows; crashes go to DIR/artifacts/. --fresh
# starts from an empty DIR/corpus. --xml writes a one-test JUnit file that
# test/summary.sh counts. Exit status: the fuzzer's (0 = no crash found).
set -u
bin="" secs=60 work="" fresh=0 xml="" corpora=()
while (( $# )); do
  case "$1" in
    --binary) bin=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --fresh) fresh=1; shift ;;
    --xml) xml=$2; shift 2 ;;
    --corpus) corpora+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "fuzz-run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n "$bin" && -n "$work" ]] || { echo "usage: fuzz-run.sh --binary FUZZER --seconds N --work DIR ..." >&2; exit 2; }
name=$(basename "$bin")

write_xml() {  # $1 = failures (0/1), $2 = message
  [[ -n "$xml" ]] || return 0
  mkdir -p "$(dirname "$xml")"
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo '<testsuites>'
    echo "<testsuite name=\"fuzz\" tests=\"1\" failures=\"$1\" errors=\"0\" skipped=\"0\">"
    if (( $1 )); then
      echo "<testcase classname=\"fuzz\" name=\"$name\"><failure message=\"$2\"/></testcase>"
    else
      echo "<testcase classname=\"fuzz\" name=\"$name\"/>"
    fi
    echo '</testsuite>'
    echo '</testsuites>'
  } > "$xml"
}
[[ -n "$xml" ]] && rm -f "$xml"

if [[ ! -x "$bin" ]]; then
  echo "fuzz-run.sh: $bin not built" >&2
  write_xml 1 "fuzzer binary missing"
  exit 1
fi

corpus="$work/corpus"
artifacts="$work/artifacts"
(( fresh )) && rm -rf "$corpus"
mkdir -p "$corpus" "$artifacts"
n=0
for dir in "${corpora[@]}"; do
  [[ -d "$dir" ]] || continue
  tag=$(basename "$dir")
  while IFS= read -r -d '' f; do
    rel=${f#"$dir"/}
    cp -f "$f" "$corpus/${tag}__${rel//\//__}"
    n=$((n + 1))
  done < <(find "$dir" -name __pycache__ -prune -o -type f ! -name '.*' ! -name '*.pyc' -print0)
done
echo "fuzz-run.sh: $name for ${secs}s; $n input files copied; working corpus $corpus; artifacts $artifacts/"

# -timeout: one input running longer is reported as a hang (a failure).
"$bin" -max_total_time="$secs" -timeout=60 -print_final_stats=1 \
  -artifact_prefix="$artifacts/" "$@" "$corpus"
rc=$?
if (( rc == 0 )); then
  write_xml 0 ""
else
  echo "fuzz-run.sh: $name exited with status $rc; reproducer(s):" >&2
  ls -1 "$artifacts" >&2 || true
  write_xml 1 "fuzzer exit status $rc, see $artifacts"
fi
exit "$rc"
