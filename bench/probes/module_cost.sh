#!/usr/bin/env bash
# bench/probes/module_cost.sh -- is a verbatim original entry slower inside a rewritten
# module (module_cost.c says why we ask)? Builds tidal-opt with gcc, compiles
# module_cost_kernels.cu to PTX, makes cubins: plain; rewritten (default: originals
# verbatim); rewritten --case-b; plain + tidal's module globals only; and times the
# original entries of each. Log: ${OUT:-/tmp}/module-cost.log
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
OUT=${OUT:-/tmp}; B=${B:-/tmp/module-cost}; mkdir -p "$B" "$OUT"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
{
  set -e
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
  gcc -std=c17 -O2 -D_POSIX_C_SOURCE=200809L -DTIDAL_VERSION="\"$("$root/scripts/version.sh")\"" \
    -I"$root/passes" -I"$root/runtime" -I"$root/abi" -I"$root/driver" "$root"/passes/*.c "$root/driver/tidal-opt.c" \
    "$root/driver/cubin.c" "$root/driver/exec.c" -o "$B/tidal-opt" -lm -ldl
  "$CUDA_HOME/bin/nvcc" -arch=sm_90a -ptx "$here/module_cost_kernels.cu" -o "$B/k.ptx"
  "$B/tidal-opt" -p tidal "$B/k.ptx" -o "$B/t.ptx"
  "$B/tidal-opt" -p tidal --case-b "$B/k.ptx" -o "$B/tb.ptx"
  # tidal's module-scope declarations alone, added to the plain PTX (no clone)
  grep -E '^\.((visible|weak) \.)?(global|const|shared).*__tidal' "$B/t.ptx" > "$B/decls.txt" || true
  awk -v d="$B/decls.txt" '/^\.address_size/ {print; while ((getline l < d) > 0) print l; next} {print}' "$B/k.ptx" > "$B/g.ptx"
  echo "tidal module declarations added for 'globals':"; cat "$B/decls.txt"
  # one declaration at a time: which one costs?
  add_decl() {   # add_decl OUT TEXT: the plain PTX with TEXT after .address_size
    awk -v t="$2" '/^\.address_size/ {print; print t; next} {print}' "$B/k.ptx" > "$B/$1.ptx"
  }
  add_decl c1 '.weak .const .align 8 .u64 __tidal_ctl = 0;'
  add_decl c0 '.weak .const .align 8 .u64 __tidal_ctl;'
  add_decl g1 '.weak .global .align 4 .u32 __tidal_rewritten_v3 = 1;'
  add_decl g0 '.weak .global .align 1 .b8 k_pw__tidal_nparams[3];'
  add_decl e0 $'.weak .entry __tidal_rewritten_v5()\n{\n\tret;\n}'
  for v in k t tb g c1 c0 g1 g0 e0; do "$CUDA_HOME/bin/ptxas" -arch=sm_90a "$B/$v.ptx" -o "$B/$v.cubin"; done
  gcc -std=c17 -O2 -I"$CUDA_HOME/include" "$here/module_cost.c" -o "$B/module_cost" -L"$CUDA_HOME/lib64/stubs" -lcuda
  set +e
  "$B/module_cost" plain="$B/k.cubin" rewritten="$B/t.cubin" case-b="$B/tb.cubin" globals="$B/g.cubin" plain2="$B/k.cubin"
  echo "== one tidal declaration each"
  "$B/module_cost" plain="$B/k.cubin" const-init="$B/c1.cubin" const="$B/c0.cubin" global-init="$B/g1.cubin" \
    global-sized="$B/g0.cubin" entry="$B/e0.cubin" plain2="$B/k.cubin"
  echo "== again, reversed load order"
  "$B/module_cost" plain="$B/k.cubin" globals="$B/g.cubin" case-b="$B/tb.cubin" rewritten="$B/t.cubin" plain2="$B/k.cubin"
} 2>&1 | tee "$OUT/module-cost.log"
