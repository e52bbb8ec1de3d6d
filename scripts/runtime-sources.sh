#!/usr/bin/env bash
# scripts/runtime-sources.sh -- libtidal's C sources, one per line, relative to the repo
# root: the TIDAL_RUNTIME_SOURCES list of CMakeLists.txt (the one place they are named), for
# the scripts that build libtidal without CMake (bench/dnn/run.sh, test/gpu/runtime/run.sh).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
srcs=$(awk '/set\(TIDAL_RUNTIME_SOURCES/,/\)/' "$root/CMakeLists.txt" | grep -o 'runtime/[A-Za-z0-9_]*\.c')
[[ -n $srcs ]] || { echo "runtime-sources.sh: no TIDAL_RUNTIME_SOURCES in $root/CMakeLists.txt" >&2; exit 1; }
echo "$srcs"
