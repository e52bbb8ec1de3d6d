#!/usr/bin/env bash
# test/gpu/selftest.sh -- checks the GPU suite itself on a machine WITHOUT a GPU:
# everything builds (run.sh --build-only: tidal-opt, kernels -> PTX, rewrite, ptxas,
# harness), and the harness, run against fake_libcuda.c (a libcuda.so.1 that runs no
# PTX), passes a clean fake and fails each injected fault. Ends with "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
export TIDAL_GPU_BUILD=${TIDAL_GPU_BUILD:-$root/build-gpu}
B=$TIDAL_GPU_BUILD
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
pass=0 fail=0
ok() { echo "PASS $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

if OUT=${OUT:-/tmp} "$here/run.sh" --build-only >"$B.selftest-build.log" 2>&1; then
  ok "build (run.sh --build-only)"
else
  tail -30 "$B.selftest-build.log"; bad "build (run.sh --build-only)"
  echo "$pass passed, $fail failed"; exit 1
fi
# every PTX file rewritten and assembled, except kernels/refused_*.cu, which must be refused
n_ptx=$(wc -l <"$B/ptx/list")
n_ok=$(grep -cE '^(rewritten [^ ]+|REFUSED refused_[^ ]+) ' "$B.selftest-build.log" || true)
n_exp=$(grep -c '^REFUSED refused_' "$B.selftest-build.log" || true)
if [[ $n_ok == "$n_ptx" ]]; then ok "tidal-opt: $((n_ptx - n_exp)) PTX files rewritten and assembled, $n_exp refused as expected"
else grep -E 'REFUSED|FAILED' "$B.selftest-build.log" | grep -v '^REFUSED refused_' | head; bad "tidal-opt: only $n_ok of $n_ptx PTX files as expected"; fi

fake=$B/fake-cuda
mkdir -p "$fake"
if gcc -shared -fPIC -O1 -I"$CUDA_HOME/include" -I"$root/runtime" -I"$root/abi" "$here/fake_libcuda.c" -o "$fake/libcuda.so.1" -lpthread; then
  ok "fake libcuda builds"
else
  bad "fake libcuda builds"; echo "$pass passed, $fail failed"; exit 1
fi
H() { LD_LIBRARY_PATH=$fake FAKE_CUDA_KERNEL_MS=3 "$B/tidal_gpu_harness" "$B/ptx/orig" "$B/ptx/tidal" \
        --only grid_3d,griddim_out,twin_b,triton_vec_add_f32,refused_exit,grid_huge,fma_flip_long --launch-timeout 2 \
        --budget 120 "$@"; }

if out=$(H 2>&1) && tail -1 <<<"$out" | grep -Eq '^[0-9]+ passed, 0 failed$'; then
  ok "harness on a clean fake: $(tail -1 <<<"$out")"
else
  grep FAIL <<<"$out" | head; bad "harness on a clean fake: $(tail -1 <<<"$out")"
fi
# each fault on a spec whose steps can see it (huge: the >= 2^24 grid; join: the flow-in spec)
for b in diff exec twice outside noviol slot epoch static flags huge join crash hang; do
  only=grid_3d; [[ $b == huge ]] && only==grid_huge; [[ $b == join ]] && only==fma_flip_long
  if out=$(FAKE_CUDA_BUG=$b H --only "$only" 2>&1); then
    bad "fault '$b' went unnoticed: $(tail -1 <<<"$out")"
  else
    ok "fault '$b' detected: $(tail -1 <<<"$out")"
  fi
done
echo "$pass passed, $fail failed"
(( fail == 0 ))
