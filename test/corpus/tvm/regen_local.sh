#!/bin/bash
# test/corpus/tvm/regen_local.sh [BUILD] -- regenerate local/OP.{tidal.ptx,fatbin} and
# OP.json's fatbin_objdump with the current tools, without TVM: it runs the nvcc command
# lines TVM ran (recorded in OP.json) through BUILD/bin/tidal-nvcc on the committed OP.cu,
# and checks that the rewritten PTX equals `tidal-opt -p tidal OP.ptx`. Run it after a
# change to passes/ changes the emitted PTX (the lit tests in test/lit/tvm compare them).
set -e
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
B=$(cd "$root" && cd "${1:-build}" && pwd)
L=$root/test/corpus/tvm/local
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for op in dense conv2d_nchw softmax; do
  d=$T/$op
  mkdir -p "$d"
  cp "$L/$op.cu" "$d/tvm_kernels.cu"
  for key in tvm_compile_nvcc_cmd ptx_nvcc_cmd; do
    cmd=$(python3 -c "import json;print(json.load(open('$L/$op.json'))['$key'][0])" | sed "s#<tmp>#$d#g")
    # shellcheck disable=SC2086  # the recorded command line is split on purpose
    (cd "$d" && "$B/bin/tidal-nvcc" $cmd 2>/dev/null)
  done
  "$B/bin/tidal-opt" -p tidal "$L/$op.ptx" | cmp - "$d/tvm_kernels.ptx"
  cp "$d/tvm_kernels.ptx" "$L/$op.tidal.ptx"
  cp "$d/tvm_kernels.fatbin" "$L/$op.fatbin"
  python3 - "$L" "$op" "$B" <<'PY'
import json, subprocess, sys
L, op, B = sys.argv[1:4]
p = f"{L}/{op}.json"
m = json.load(open(p))
od = subprocess.run([f"{B}/bin/tidal-objdump", f"{L}/{op}.fatbin"], capture_output=True, text=True, check=True)
m["fatbin_objdump"] = [l for l in od.stdout.splitlines() if l.strip()][1:]
with open(p, "w") as f:
    json.dump(m, f, indent=1)
    f.write("\n")
PY
  echo "$op regenerated"
done
