#!/usr/bin/env bash
# test/gpu/selftest.sh -- checks the GPU suite itself on a machine WITHOUT a GPU:
# everything builds (run.sh --build-only: tidal-opt, kernels -> PTX, rewrite, ptxas,
# harness), and the harness, run against fake_libcuda.c (a libcuda.so.1 that runs no
# PTX), passes a clean fake and fails each injected fault; test/gpu/sanitize.sh, run with a
# fake compute-sanitizer, attributes findings and applies its allowlist as it should.
# Ends with "N passed, N failed".
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

# test/gpu/sanitize.sh against the fake libcuda and a fake compute-sanitizer
# (sanitizer/fake_compute_sanitizer.sh, findings by FAKE_SAN_RULES): the harness's --sanitize,
# --steps and --max-blocks, attribution, the allowlist and the controls it depends on
san() { LD_LIBRARY_PATH=$fake FAKE_CUDA_KERNEL_MS=3 COMPUTE_SANITIZER=${SAN_TOOL:-$here/sanitizer/fake_compute_sanitizer.sh} \
          TIDAL_SANITIZE_ANY_DEVICE=1 OUT=$B/sanitize-selftest "$here/sanitize.sh" \
          --only =counted_early_exit,=warp_specialized,=grid_3d --tools racecheck,memcheck --jobs 4 "$@" 2>&1; }
rules='racecheck|rc_race_persist|rc_race_persist|Error:Write-Read'
rules+=';racecheck|rc_counted_persist|rc_counted_persist|Error:Write-Read'
rules+=';racecheck|=counted_early_exit|counted_early_exit__tidal_reshaped|Error:Write-Read'
rules+=';racecheck|=warp_specialized|warp_specialized__tidal_reshaped|Error:Read-Write'
rules+=';memcheck|=grid_3d|grid_3d__tidal_reshaped|Invalid __global__ write of size 4 bytes'
expect() {   # expect OUTPUT WHAT REGEX...: every REGEX matches a line of OUTPUT
  local o=$1 w=$2 r; shift 2
  for r in "$@"; do grep -Eq "$r" <<<"$o" || { bad "sanitize.sh: $w: no line /$r/"; return; }; done
  ok "sanitize.sh: $w"
}
o=$(FAKE_SAN_RULES=$rules san)
expect "$o" "attribution and allowlist" \
  '^PASS racecheck rc_control_persist: clean' '^PASS racecheck rc_race_persist: the real race is caught' \
  '^PASS racecheck counted_early_exit: 1 hazards, all allowed: clone Error:Write-Read \(artefact: rc_counted_persist\); harness [0-9]+ passed, 0 failed' \
  '^FAIL racecheck warp_specialized: 1 finding\(s\) not allowlisted: clone: ' \
  '^FAIL memcheck grid_3d: 1 finding\(s\) not allowlisted: clone: Invalid __global__ write' \
  '^PASS memcheck counted_early_exit: 0 errors; harness [0-9]+ passed, 0 failed' '^PASS racecheck grid_3d: 0 hazards'
o=$(FAKE_SAN_RULES="$rules;racecheck|rc_control_persist|rc_control_persist|Warning:Write-Write" \
    FAKE_SAN_NOSUMMARY='=grid_3d' san --no-build)
expect "$o" "a flagged control voids the allowlist; a missing summary fails" \
  '^FAIL racecheck rc_control_persist: the race-free control is flagged' \
  '^FAIL racecheck counted_early_exit: 1 finding\(s\) not allowlisted' '^FAIL racecheck grid_3d: no summary from compute-sanitizer'
o=$(FAKE_SAN_RULES="$rules;racecheck|=grid_3d|grid_3d__ref|Error:Write-Read" san --no-build --tools racecheck)
expect "$o" "a finding in the original itself is not tidal's" \
  '^INFO racecheck grid_3d: 1 finding\(s\) in the original kernel itself' '^PASS racecheck grid_3d: 1 hazards'
o=$(FAKE_SAN_RULES=$rules san --no-build --tools memcheck --budget 0)
expect "$o" "an exhausted budget fails the processes not run" '^FAIL memcheck grid_3d: not run'
o=$(SAN_TOOL=$B/no-such-sanitizer san --no-build)
expect "$o" "a named SKIP without compute-sanitizer" '^SKIP sanitize: compute-sanitizer not found' '^0 passed, 0 failed$'

echo "$pass passed, $fail failed"
(( fail == 0 ))
