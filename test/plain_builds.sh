#!/usr/bin/env bash
# test/plain_builds.sh DIR -- the GPU suites and bench/dnn build tidal with plain gcc (the
# GPU machine has no CMake deps); those builds are only run there, so a change that breaks
# them (a new -D the CMake build passes, a new source file) used to surface only on the
# H200. This builds them here, without a GPU, into DIR, with the benchmarks that link the
# runtime suite's libtidal (bench/vram's l2mem_iso and bimodal), and tidalctl as an image
# without cJSON gets it.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
d=${1:?usage: plain_builds.sh DIR}
mkdir -p "$d"
pass=0 fail=0
step() {   # step NAME LOG CMD...
  local name=$1 log=$2; shift 2
  if "$@" >"$log" 2>&1; then
    echo "PASS plain-build.$name"; pass=$((pass + 1))
  else
    echo "FAIL plain-build.$name (exit $?): last lines of $log:"; tail -15 "$log" | sed 's/^/  | /'; fail=$((fail + 1))
  fi
}
step gpu-rewrite-suite "$d/gpu.log" env TIDAL_GPU_BUILD="$d/gpu" OUT="$d/gpu-out" "$root/test/gpu/run.sh" --build-only
step gpu-sanitize "$d/gpu-sanitize.log" env TIDAL_GPU_BUILD="$d/gpu" OUT="$d/gpu-out" "$root/test/gpu/sanitize.sh" --build-only
step gpu-runtime-suite "$d/gpu-rt.log" env TIDAL_GPU_RT_BUILD="$d/gpu-rt" OUTDIR="$d/gpu-rt-out" "$root/test/gpu/runtime/run.sh" --build-only
step bench-dnn "$d/dnn.log" env TIDAL_DNN_BUILD="$d/dnn" OUT="$d/dnn-out" BENCH_DNN_CACHE="$d/dnn-cache" "$root/bench/dnn/run.sh" --build-only
step bench-gpu "$d/bench-gpu.log" env BENCH_BUILD="$d/bench-gpu" OUT="$d/bench-gpu-out" "$root/bench/gpu/run.sh" --build-only
# issue 13's benchmarks on libtidal's L2 parts, against the runtime suite's libtidal
step bench-vram-l2mem-iso "$d/l2mem-iso.log" env TIDAL_GPU_RT_BUILD="$d/gpu-rt" OUT="$d/vram-out" "$root/bench/vram/l2mem_iso.sh" --build-only
step bench-vram-bimodal "$d/bimodal.log" env TIDAL_GPU_RT_BUILD="$d/gpu-rt" OUT="$d/vram-out" "$root/bench/vram/bimodal.sh" --build-only
# the GPU image may lack cJSON: the runtime suite then builds tidalctl --json-only policy
tidalctl_no_cjson() {
  local r=$root/runtime fx=$root/test/lit/cli/Inputs/policy-state.json out
  gcc -O1 -std=c17 -D_POSIX_C_SOURCE=200809L -DTIDAL_VERSION=\"plain\" -DTIDALCTL_NO_CJSON -Wall -Wextra -Werror \
    -I"$r" "$r/tidalctl.c" "$r/tidalctl_policy.c" "$r/control_proto.c" "$r/tidal_client.c" "$r/smset.c" -lrt -lpthread \
    -o "$d/tidalctl-no-cjson" || return 1
  "$d/tidalctl-no-cjson" policy --json "$fx" | grep -q '^{"policy":"sgdrc"' || return 1
  out=$("$d/tidalctl-no-cjson" policy "$fx" 2>&1) && return 1
  grep -q "built without cJSON: only 'policy --json FILE'" <<<"$out"
}
step tidalctl-no-cjson "$d/tidalctl-no-cjson.log" tidalctl_no_cjson
echo "$pass passed, $fail failed"
(( fail == 0 ))
