#!/usr/bin/env bash
# The tree follows .clang-format: every tracked *.c and *.h file must be unchanged by
# clang-format (version 14, the Debian 12 package; scripts/deps.txt). Lists the files
# that are not, and how to fix them. Run from anywhere.
#
#   scripts/check-format.sh          # check (exit 1 if a file would change)
#   scripts/check-format.sh --fix    # reformat those files in place
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cf=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$cf" >/dev/null 2>&1; then
  echo "check-format.sh: $cf not found (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.c' '*.h' 2>/dev/null)
if [[ ${#files[@]} -eq 0 ]]; then
  echo "check-format.sh: no tracked C files (not a git checkout?)" >&2
  exit 1
fi
if [[ ${1:-} == --fix ]]; then
  "$cf" -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! "$cf" "$f" | cmp -s - "$f"; then
    echo "$f: not formatted as .clang-format says"
    bad=$((bad + 1))
  fi
done
if [[ $bad -gt 0 ]]; then
  echo "check-format.sh: $bad of ${#files[@]} files differ; scripts/check-format.sh --fix reformats them"
  exit 1
fi
echo "check-format.sh: ${#files[@]} files formatted"
