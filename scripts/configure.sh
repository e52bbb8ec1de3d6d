#!/usr/bin/env bash
# Configure a build tree (the one place the two flavours' options live).
#
#   scripts/configure.sh normal DIR          RelWithDebInfo (BUILD_TYPE), gcc
#   scripts/configure.sh asan DIR MAIN_DIR   Debug + ASan/UBSan (-O1); reuses
#                                           MAIN_DIR's generated corpus and leaves
#                                           the fuzz smoke test to MAIN_DIR
#
# Extra -D options: CMAKE_ARGS. Does nothing if DIR is already configured
# (ninja re-runs CMake by itself when CMakeLists change).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
kind=${1:?usage: configure.sh normal|asan DIR [MAIN_DIR]}
dir=${2:?usage: configure.sh normal|asan DIR [MAIN_DIR]}
[[ -f $dir/build.ninja ]] && exit 0
# shellcheck disable=SC2206
extra=(${CMAKE_ARGS:-})
case "$kind" in
  normal)
    # Triton PTX generated at build time needs triton from PyPI: a venv in the
    # build tree (a download of about 670 MB installed, README "Requirements";
    # TIDAL_TRITON_CORPUS=0 skips it). Without it the committed Triton corpus
    # still runs; say so.
    triton=()
    if [[ ${TIDAL_TRITON_CORPUS:-1} == 1 ]]; then
      if py=$(scripts/triton-venv.sh "$dir/triton-venv"); then
        triton=(-DTIDAL_TRITON_PYTHON="$py")
      else
        echo "configure: WARNING: no triton==3.6.0 from PyPI; the build-time Triton corpus is skipped" >&2
      fi
    else
      echo "configure: TIDAL_TRITON_CORPUS=0: no triton download; the build-time Triton corpus is skipped" >&2
    fi
    exec cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "${triton[@]}" "${extra[@]}" ;;
  asan)
    main=${3:?configure.sh asan needs MAIN_DIR}
    main=$(realpath -m "$main")
    exec cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTIDAL_SANITIZE=ON \
      -DTIDAL_FUZZ=OFF -DTIDAL_BUILD_CORPUS=OFF -DTIDAL_CORPUS_DIR="$main/corpus" "${extra[@]}" ;;
  *) echo "configure.sh: unknown kind $kind" >&2; exit 2 ;;
esac
