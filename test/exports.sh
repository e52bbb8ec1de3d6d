#!/usr/bin/env bash
# test/exports.sh LIBDIR HEADER... -- the shared libraries export only their API.
# libtidal.so: every function the headers (tidal.h, tidal_policy.h, tidal_server.h) declare, plus
# tidal__launch_or_decline (the CUDA runtime wrappers of libtidal_cudart.a call it from
# the program); libtidal-preload.so:
# the same plus the interposed driver entry points and dlsym. Anything else exported
# (a global like `rt`, a helper) is a failure: the preload library is injected into
# arbitrary programs, whose own symbols must not collide with ours.
set -uo pipefail
libdir=$1; shift
api=$(grep -ohE '\btidal_[a-z0-9_]+\(' "$@" | tr -d '(' | sort -u)
[[ -n $api ]] || { echo "exports: no tidal_* functions found in $*"; echo "0 passed, 1 failed"; exit 1; }
pass=0 fail=0
check() {   # check LIB EXPECTED-NAMES...
  local lib=$1; shift
  local want got
  want=$(printf '%s\n' "$@" | sort -u)
  got=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | grep -vE '^(_init|_fini|_edata|_end|__bss_start)$' | sort -u)
  local extra missing
  extra=$(comm -13 <(echo "$want") <(echo "$got"))
  missing=$(comm -23 <(echo "$want") <(echo "$got"))
  if [[ -z $extra && -z $missing ]]; then
    echo "PASS exports.$(basename "$lib"): $(echo "$got" | wc -l) symbols, all from the API"; pass=$((pass + 1))
  else
    echo "FAIL exports.$(basename "$lib"): exported but not API: ${extra//$'\n'/ } | API not exported: ${missing//$'\n'/ }"
    fail=$((fail + 1))
  fi
}
# tidal.h also declares names that are not functions it defines (none today); the API
# list is every tidal_ identifier followed by '('.
check "$libdir/libtidal.so" $api tidal__launch_or_decline
check "$libdir/libtidal-preload.so" $api tidal__launch_or_decline cuLaunchKernel cuLaunchKernel_ptsz \
  cuLaunchKernelEx cuLaunchKernelEx_ptsz cuGetProcAddress cuGetProcAddress_v2 cuLibraryGetKernel \
  cuLibraryEnumerateKernels dlsym
echo "$pass passed, $fail failed"
(( fail == 0 ))
