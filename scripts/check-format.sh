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
# one call: clang-format names each line that differs (file:line:col: error: ...)
if ! "$cf" --dry-run -Werror "${files[@]}"; then
  echo "check-format.sh: files differ from .clang-format; scripts/check-format.sh --fix reformats them"
  exit 1
fi
echo "check-format.sh: ${#files[@]} files formatted"
