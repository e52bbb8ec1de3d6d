#!/usr/bin/env bash
# run.sh — `cmake --install` into a temporary prefix, then use only that tree (no GPU).
#
#   test/install/run.sh --build DIR --source DIR --cudalib DIR [--cmake CMAKE] [--xml FILE]
#                       --layout bin=B,lib=L,include=I,data=D,man=M,unit=U
#
# The layout is the build's CMAKE_INSTALL_<X>DIR and TIDAL_SYSTEMD_UNITDIR (relative to the
# prefix). The prefix is moved after the install checks, so everything after them also
# proves the tree relocatable: a pkg-config consumer and a CMake consumer of libtidal,
# examples/cmake-project compiled by the installed tidal-nvcc and linked with tidal::cudart,
# tidal-nvcc on a .cu file (also as a symlink named nvcc), tidal-opt/tidal-ptxas/
# tidal-objdump, tidald answering tidalctl on a private socket, tidal-run's paths.
# Writes a JUnit file (one <testcase> per check) and exits 0 only when every check passed.
set -u

BUILD= SRC= CUDALIB= CMAKE=cmake XML= LAYOUT=
while (($#)); do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --source) SRC=$2; shift 2 ;;
    --cudalib) CUDALIB=$2; shift 2 ;;
    --cmake) CMAKE=$2; shift 2 ;;
    --layout) LAYOUT=$2; shift 2 ;;
    --xml) XML=$2; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -d $BUILD && -d $SRC && -d $CUDALIB && -n $LAYOUT ]] ||
  { echo "run.sh: need --build DIR --source DIR --cudalib DIR --layout ..." >&2; exit 2; }
declare -A dir
IFS=',' read -ra kv <<<"$LAYOUT"
for x in "${kv[@]}"; do dir[${x%%=*}]=${x#*=}; done
for k in bin lib include data man unit; do
  [[ -n ${dir[$k]:-} ]] || { echo "run.sh: --layout lacks $k=" >&2; exit 2; }
done

TMP=$(mktemp -d /tmp/tidal-install-test.XXXXXX)
INST=$TMP/installed   # where cmake --install puts it
P=$TMP/moved          # where it is used from
LOG=$TMP/check.log
DPID=
SHM=/tidal-install-test-$$-$RANDOM
cleanup() {
  [[ -n $DPID ]] && kill -KILL "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
  rm -f "/dev/shm/${SHM#/}"
  if [[ ${KEEP_TMP:-0} == 1 ]]; then echo "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- result bookkeeping (as test/control/run.sh) -------------------------------------------
NAMES=() FAILS=() SKIPS=()
pass() { NAMES+=("$1"); FAILS+=(""); SKIPS+=(""); echo "PASS: $1"; }
fail() { NAMES+=("$1"); FAILS+=("${2:-failed}"); SKIPS+=(""); echo "FAIL: $1: ${2:-failed}"; }
skip() { NAMES+=("$1"); FAILS+=(""); SKIPS+=("$2"); echo "SKIP: $1: $2"; }
# check NAME CMD...: passes when CMD exits 0; its output goes to the log (shown on failure)
check() {
  local n=$1; shift
  echo "==== $n: $*" >>"$LOG"
  local t0=$SECONDS
  if "$@" >>"$LOG" 2>&1; then
    pass "$n ($((SECONDS - t0)) s)"
  else
    fail "$n" "$*"
    sed -n "/^==== $n: /,\$p" "$LOG" | tail -n 25 | sed 's/^/    /'
  fi
}
write_xml() {
  [[ -n $XML ]] || return 0
  mkdir -p "$(dirname "$XML")"
  local nf=0 ns=0 i
  for i in "${!NAMES[@]}"; do
    [[ -n ${FAILS[$i]} ]] && nf=$((nf + 1))
    [[ -n ${SKIPS[$i]} ]] && ns=$((ns + 1))
  done
  x() { local m=${1//&/&amp;}; m=${m//</&lt;}; m=${m//>/&gt;}; echo "${m//\"/&quot;}"; }
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo '<testsuites>'
    echo "<testsuite name=\"install\" tests=\"${#NAMES[@]}\" failures=\"$nf\" errors=\"0\" skipped=\"$ns\">"
    for i in "${!NAMES[@]}"; do
      local n; n=$(x "${NAMES[$i]% (*}")
      if [[ -n ${FAILS[$i]} ]]; then
        echo "<testcase classname=\"install\" name=\"$n\"><failure message=\"$(x "${FAILS[$i]}")\"/></testcase>"
      elif [[ -n ${SKIPS[$i]} ]]; then
        echo "<testcase classname=\"install\" name=\"$n\"><skipped message=\"$(x "${SKIPS[$i]}")\"/></testcase>"
      else
        echo "<testcase classname=\"install\" name=\"$n\"/>"
      fi
    done
    echo '</testsuite>'
    echo '</testsuites>'
  } >"$XML"
}
finish() {
  write_xml
  local nf=0 ns=0 i
  for i in "${!FAILS[@]}"; do
    [[ -n ${FAILS[$i]} ]] && nf=$((nf + 1))
    [[ -n ${SKIPS[$i]} ]] && ns=$((ns + 1))
  done
  echo "install: $(( ${#NAMES[@]} - nf - ns )) passed, $nf failed, $ns skipped ($SECONDS s)"
  exit $((nf > 0))
}

# each_exists DIR NAME...: every DIR/NAME is there (executable, for programs)
each_exists() {
  local d=$1 f bad=0; shift
  for f in "$@"; do [[ -e $d/$f ]] || { echo "missing: $d/$f"; bad=1; }; done
  return $bad
}
each_executable() {
  local d=$1 f bad=0; shift
  for f in "$@"; do [[ -x $d/$f && -f $d/$f ]] || { echo "missing or not executable: $d/$f"; bad=1; }; done
  return $bad
}
same_file() { [[ $(realpath -m "$1") == $(realpath -m "$2") ]] || { echo "'$1' is not '$2'"; return 1; }; }
has() { grep -Eq -- "$2" "$1" || { echo "no /$2/ in $1:"; head -c 2000 "$1"; return 1; }; }
hasnt() { ! grep -Eq -- "$2" "$1" || { echo "/$2/ in $1:"; grep -E -- "$2" "$1" | head; return 1; }; }

for k in bin lib include data man unit; do
  [[ ${dir[$k]} != /* ]] || { fail "layout_relative" "CMAKE_INSTALL_${k^^}DIR is absolute (${dir[$k]}): an install into a temporary prefix needs relative ones"; finish; }
done
TOOLS=(tidal-opt tidal-nvcc tidal-ptxas tidal-objdump tidald tidalctl tidal-run)

# ---- 1. the install itself, and what it put where ------------------------------------------
check install "$CMAKE" --install "$BUILD" --prefix "$INST"
check tools_installed each_executable "$INST/${dir[bin]}" "${TOOLS[@]}"
check libraries_installed each_exists "$INST/${dir[lib]}" libtidal.a libtidal.so libtidal-preload.so libtidal_cudart.a
check headers_installed each_exists "$INST/${dir[include]}" tidal.h tidal_policy.h tidal_server.h tidal_api_begin.h tidal_api_end.h tidal_abi.h tidal_l2.h
check pkgconfig_installed each_exists "$INST/${dir[lib]}/pkgconfig" tidal.pc tidal-cudart.pc
check cmake_package_installed each_exists "$INST/${dir[lib]}/cmake/tidal" tidalConfig.cmake tidalConfigVersion.cmake tidalTargets.cmake
check cmake_module_installed each_exists "$INST/${dir[data]}/tidal/cmake" TidalRuntime.cmake
check python_files_installed each_exists "$INST/${dir[data]}/tidal/python/tidal" __init__.py torch.py triton.py
man_pages=(); for t in "${TOOLS[@]}"; do man_pages+=("$t.1"); done
check man_pages_installed each_exists "$INST/${dir[man]}/man1" "${man_pages[@]}"
# groff -ww: every warning; -z: no output. A page that renders with a warning is broken.
man_lint() {
  local f bad=0
  for f in "$INST/${dir[man]}"/man1/tidal*.1; do
    groff -man -ww -z "$f" 2>"$TMP/groff.err" || bad=1
    [[ ! -s $TMP/groff.err ]] || { echo "$f:"; cat "$TMP/groff.err"; bad=1; }
    grep -q '^\.SH "NAME"' "$f" && grep -q '^\.SH "SYNOPSIS"' "$f" || { echo "$f: no NAME or SYNOPSIS"; bad=1; }
  done
  return $bad
}
if command -v groff >/dev/null; then check man_pages_render man_lint; else skip man_pages_render "no groff here"; fi
UNIT=$INST/${dir[unit]}/tidald.service
check systemd_unit_installed has "$UNIT" "^ExecStart=$INST/${dir[bin]}/tidald( |$)"
check systemd_unit_no_placeholder hasnt "$UNIT" '@[A-Z_]+@'
# Nothing but the unit may name the prefix, the build tree or the source tree (text files;
# binaries keep source paths in their debug information)
no_baked_paths() {
  local out
  out=$(grep -rIl --exclude=tidald.service -e "$INST" -e "$(realpath "$BUILD")" -e "$(realpath "$SRC")" "$INST")
  [[ -z $out ]] || { echo "these name the install, build or source tree:"; echo "$out"; return 1; }
}
check no_baked_paths no_baked_paths

# ---- 2. everything else from the moved tree -------------------------------------------------
check relocate mv "$INST" "$P"
BIN=$P/${dir[bin]} LIB=$P/${dir[lib]}
export PKG_CONFIG_PATH=$LIB/pkgconfig
unset PKG_CONFIG_LIBDIR TIDAL_RUNTIME_DIR TIDAL_BUILD TIDAL_PRELOAD TIDAL_PTXAS TIDAL_PYTHON
cd "$TMP" || exit 1

# pkg-config: tidal.pc's paths follow the tree; a C program builds and runs against it
check pkgconfig_paths_follow bash -c "[[ \$(realpath \"\$(pkg-config --variable=libdir tidal)\") == \$(realpath '$LIB') ]] &&
  [[ \$(realpath \"\$(pkg-config --variable=includedir tidal)\") == \$(realpath '$P/${dir[include]}') ]]"
check pkgconfig_consumer_builds bash -c "gcc -std=c17 -Wall -Wextra -Werror '$SRC/test/install/consumer.c' -o pc-consumer \
  \$(pkg-config --cflags --libs tidal) -Wl,-rpath,\$(pkg-config --variable=libdir tidal)"
check pkgconfig_consumer_runs bash -c "./pc-consumer | grep -q 'consumer: tidal 0.1, 0-47,64 (49 SMs)'"
uses_prefix_lib() { same_file "$(ldd ./pc-consumer | awk '/libtidal[.]so/ { print $3 }')" "$LIB/libtidal.so.0"; }
check pkgconfig_consumer_uses_prefix uses_prefix_lib
check pkgconfig_static bash -c "gcc -std=c17 '$SRC/test/install/consumer.c' -o pc-consumer-static \
  \$(pkg-config --cflags tidal) '$LIB/libtidal.a' \$(pkg-config --static --libs-only-l tidal | sed 's/-ltidal//') && ./pc-consumer-static"

# tidal-nvcc on a .cu file, called through a symlink named nvcc (TVM's shim, CMake's
# compiler checks): it still finds its runtime in the tree's libdir, and the object's
# kernels are rewritten
mkdir -p shim && ln -s "$BIN/tidal-nvcc" shim/nvcc
check nvcc_symlink_compiles shim/nvcc -arch=sm_90 -c "$SRC/test/install/launch.cu" -o launch.o
check objdump_sees_rewrite bash -c "'$BIN/tidal-objdump' launch.o > objdump.txt && grep -q '_Z4bumpPi: rewritten' objdump.txt && ! grep -q 'not rewritten' objdump.txt"
# tidal-cudart.pc: the link a host compiler makes (make, meson): the stub's launch now
# reaches libtidal's wrapper
check pkgconfig_cudart_links bash -c "g++ launch.o -o launch-pc \$(pkg-config --libs tidal-cudart) -L'$CUDALIB' -lcudart_static -ldl -lpthread -lrt && ./launch-pc | grep -q 'launch built'"
check pkgconfig_cudart_wraps bash -c "nm launch-pc | grep -q 'T __wrap___cudaLaunchKernel\$' && nm launch-pc | grep -q 'T tidal_launch_kernel\$'"
# tidal-nvcc's own host link: the runtime from <bin>/../<libdir>, found from its own path
check nvcc_links_runtime bash -c "'$BIN/tidal-nvcc' -arch=sm_90 launch.o -o launch-nvcc && ./launch-nvcc | grep -q 'launch built' &&
  nm launch-nvcc | grep -q 'T __wrap___cudaLaunchKernel\$' && nm launch-nvcc | grep -q 'T tidal_launch_kernel\$'"

# tidal-opt and tidal-ptxas on the PTX that tidal-nvcc embedded
mkdir -p ptx
check objdump_extracts_ptx "$BIN/tidal-objdump" --extract-ptx ptx launch.o
check tidal_opt_runs bash -c "'$BIN/tidal-opt' --stats ptx/*.ptx | grep -q bump"
check tidal_ptxas_runs bash -c "'$BIN/tidal-ptxas' -arch=sm_90 ptx/*.ptx -o k.cubin && '$BIN/tidal-objdump' k.cubin | grep -q '_Z4bumpPi: rewritten'"

# CMake: find_package(tidal) from the tree; every imported target, the version file, and
# a C program linked with tidal::tidal
check cmake_consumer_configures "$CMAKE" -S "$SRC/test/install/consumer" -B cmake-consumer -G Ninja -DCMAKE_PREFIX_PATH="$P"
check cmake_consumer_builds "$CMAKE" --build cmake-consumer
check cmake_consumer_runs bash -c "cmake-consumer/consumer | grep -q 'consumer: tidal 0.1, 0-47,64'"
cmake_targets_in_prefix() {
  local name path bad=0
  while read -r name path; do
    [[ $(realpath "$path") == "$(realpath "$P")"/* && -e $path ]] || { echo "$name: $path is not in $P"; bad=1; }
  done <cmake-consumer/targets.txt
  [[ $(wc -l <cmake-consumer/targets.txt) -ge 11 ]] || { echo "targets.txt is short"; bad=1; }
  return $bad
}
check cmake_targets_in_prefix cmake_targets_in_prefix

# examples/cmake-project, compiled by the installed tidal-nvcc; -DTIDAL_LINK_RUNTIME=ON finds
# the package next to it and links tidal::cudart (the launch wraps, libtidal.a)
check example_configures "$CMAKE" -S "$SRC/examples/cmake-project" -B example -G Ninja \
  -DCMAKE_CUDA_COMPILER="$BIN/tidal-nvcc" -DCMAKE_CUDA_ARCHITECTURES=90 -DTIDAL_LINK_RUNTIME=ON
check example_uses_package has example/CMakeCache.txt "^tidal_DIR:PATH=$P/"
check example_builds "$CMAKE" --build example
check example_links_runtime bash -c "for p in saxpy scan histogram; do nm example/\$p | grep -q 'T __wrap___cudaLaunchKernel\$' &&
  nm example/\$p | grep -q 'T tidal_launch_kernel\$' || { echo \"\$p: no wraps\"; exit 1; }; done"
check example_rewritten bash -c "'$BIN/tidal-objdump' example/saxpy example/scan example/histogram > example.objdump &&
  grep -q '_Z5saxpyifPKfPf: rewritten' example.objdump && ! grep -q 'not rewritten' example.objdump"
# no GPU here: each program exits 77, which CTest reports as skipped, not failed
check example_ctest bash -c "cd example && ctest --output-on-failure"

# tidald and tidalctl: a daemon on a private socket and shm name (as test/control/run.sh)
export TIDAL_SOCKET=$TMP/run/tidald.sock TIDAL_SHM=$SHM
mkdir -p "$TMP/run" && chmod 700 "$TMP/run"
start_tidald() {
  "$BIN/tidald" 2>"$TMP/tidald.log" &
  DPID=$!
  local i
  for i in $(seq 250); do
    "$BIN/tidalctl" ping >/dev/null 2>&1 && return 0
    kill -0 "$DPID" 2>/dev/null || { echo "tidald exited:"; cat "$TMP/tidald.log"; return 1; }
    sleep 0.02
  done
  echo "tidald did not answer"; return 1
}
check tidald_starts start_tidald
check tidalctl_create bash -c "'$BIN/tidalctl' create ls 0-47 | grep -q 'created ls 0-47'"
check tidalctl_list bash -c "'$BIN/tidalctl' list | grep -Eq '^ls +0-47 +48'"
check tidald_stops bash -c "kill -TERM $DPID; for i in \$(seq 100); do kill -0 $DPID 2>/dev/null || exit 0; sleep 0.02; done; exit 1"
wait "$DPID" 2>/dev/null
DPID=
unset TIDAL_SOCKET TIDAL_SHM

# tidal-run: libtidal-preload.so, tidal-ptxas and the Python package from the tree
tidal_run_env() {
  "$BIN/tidal-run" --print-env >run.env || return 1
  # shellcheck disable=SC1091
  (source ./run.env &&
    same_file "$LD_PRELOAD" "$LIB/libtidal-preload.so" &&
    same_file "$TRITON_PTXAS_PATH" "$BIN/tidal-ptxas" &&
    same_file "$PYTHONPATH" "$P/${dir[data]}/tidal/python")
}
check tidal_run_paths tidal_run_env

# ---- 3. Python ------------------------------------------------------------------------------
# `pip install` of the installed package (cmake/TidalPython.cmake), offline, into a venv;
# the copy pip makes must find this prefix's libtidal and tidal-ptxas. Debian's python3
# (setuptools and wheel from scripts/deps.txt) builds without the network.
PYTHON=/usr/bin/python3; [[ -x $PYTHON ]] || PYTHON=python3
PYPROJ=$P/${dir[data]}/tidal/python/pyproject.toml
pip_install() {
  [[ -f $PYPROJ ]] || { echo "no $PYPROJ"; return 1; }
  "$PYTHON" -m venv --system-site-packages "$TMP/venv" &&
    "$TMP/venv/bin/python" -m pip install -q --no-index --no-build-isolation --no-deps "$(dirname "$PYPROJ")" &&
    (cd / && env -u TIDAL_LIB -u TIDAL_PRELOAD -u TIDAL_PTXAS -u TIDAL_BUILD "$TMP/venv/bin/python" -c '
import sys, tidal
prefix = sys.argv[1]
assert "venv" in tidal.__file__, tidal.__file__
for piece in ("libtidal", "preload", "ptxas"):
    p = tidal.locate(piece)
    assert p.startswith(prefix + "/"), (piece, p, prefix)
print("tidal", tidal.__version__, "from", tidal.__file__)' "$P")
}
check python_pip_install pip_install

finish
