#!/usr/bin/env bash
# scripts/version.sh -- print tidal's version, read from the one place it is written
# (CMakeLists.txt's project() line). The plain-gcc builds of the GPU suites and of
# bench/dnn pass it as -DTIDAL_VERSION, as CMake does.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
v=$(sed -n 's/^project(tidal VERSION \([0-9][0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[[ -n $v ]] || { echo "version.sh: no 'project(tidal VERSION ...)' line in $root/CMakeLists.txt" >&2; exit 1; }
echo "$v"
