#!/usr/bin/env bash
# Every output of one tidal-opt over every PTX and LLVM-IR file of the tree, into DIR, so
# that a change to passes/ or driver/tidal-opt.c can be diffed byte for byte against the
# tool before it:
#
#   scripts/pass-outputs.sh DIR                     (TIDAL_OPT=build/bin/tidal-opt)
#   TIDAL_OPT=/tmp/old/tidal-opt scripts/pass-outputs.sh /tmp/before
#   scripts/pass-outputs.sh /tmp/after && diff -r /tmp/before /tmp/after
#
# Inputs: test/**/*.ptx|.ll|.bc, build/corpus/**/*.ptx and a few inputs made here, in
# build/pass-outputs-inputs/, for diagnostics no committed file reaches (IR that does not
# parse, truncated and whole bitcode); names are relative to the repository root, as
# the reports print them. Per input and variant DIR/<input>/<variant>
# holds .out (standard output), .err (standard error), .rc (exit status) and the -o file
# where the variant writes one. PTX variants: the round trip, -p tidal (PTX, text and JSON
# reports, --case-b, --assume-balanced-arrive, twice), -d cfg and --stats before and after
# -p tidal. IR variants (a tidal-opt built with LLVM 22): --emit=ptx with and without
# -p tidal, -d cfg, --stats, and the IR-level rewrite as text and bitcode.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:?usage: pass-outputs.sh DIR}
opt=$(realpath "${TIDAL_OPT:-build/bin/tidal-opt}")
[[ -x $opt ]] || { echo "pass-outputs: no tidal-opt at $opt" >&2; exit 2; }
mkdir -p "$out"
out=$(realpath "$out")

# one variant: NAME then tidal-opt's arguments; @O@ is the variant's -o file
run() {
  local input=$1 name=$2 d=$out/$1
  shift 2
  local args=() a
  for a in "$@"; do args+=("${a//@O@/$d/$name.o}"); done
  mkdir -p "$d"
  local rc=0
  "$opt" "${args[@]}" >"$d/$name.out" 2>"$d/$name.err" || rc=$?
  echo "$rc" >"$d/$name.rc"
}

one() {
  local f=$1
  case $f in
  *.ptx)
    run "$f" roundtrip "$f"
    run "$f" tidal -p tidal -o @O@ "$f"
    run "$f" report -p tidal --report -o @O@ "$f"
    run "$f" report-json -p tidal --report=json -o /dev/null "$f"
    run "$f" case-b -p tidal --case-b --report=json -o @O@ "$f"
    run "$f" balanced -p tidal --assume-balanced-arrive --report -o @O@ "$f"
    run "$f" twice -p tidal,tidal --report -o @O@ "$f"
    run "$f" verify -p verify "$f"
    run "$f" cfg -d cfg "$f"
    run "$f" stats --stats "$f"
    run "$f" tidal-cfg -p tidal -d cfg "$f"
    run "$f" tidal-stats -p tidal --stats "$f"
    ;;
  *.ll | *.bc)
    run "$f" emit-ptx --emit=ptx "$f"
    run "$f" emit-ptx-tidal --emit=ptx -p tidal --report=json -o @O@ "$f"
    run "$f" emit-ptx-cfg --emit=ptx -d cfg "$f"
    run "$f" emit-ptx-stats --emit=ptx --stats "$f"
    run "$f" emit-ptx-tidal-cfg --emit=ptx -p tidal -d cfg "$f"
    run "$f" emit-ptx-tidal-stats --emit=ptx -p tidal --stats "$f"
    run "$f" ir-tidal -p tidal --report -o @O@ "$f"
    run "$f" ir-tidal-json --emit=llvm -p tidal --report=json -o @O@ "$f"
    run "$f" ir-tidal-bc --emit=bc -p tidal -o @O@ "$f"
    run "$f" ir-verify -p verify -o @O@ "$f"
    run "$f" ir-stats --stats "$f"
    run "$f" ir-tidal-stats -p tidal --stats "$f"
    ;;
  esac
}
export -f run one
export out opt

gen=build/pass-outputs-inputs
mkdir -p "$gen"
printf 'define void @f( {\n' >"$gen/syntax.ll"
printf 'target triple = "nvptx64-nvidia-cuda"\ndefine ptx_kernel void @k() {\n  %%x = add i32 1, %%y\n  ret void\n}\n' \
  >"$gen/undefined_value.ll"
llvm_as=$(command -v llvm-as-22 || command -v /usr/lib/llvm-22/bin/llvm-as || true)
if [[ -n $llvm_as ]]; then
  "$llvm_as" test/lit/llvm/Inputs/ok.ll -o "$gen/ok.bc"
  head -c 40 "$gen/ok.bc" >"$gen/truncated.bc"
fi

{
  find "$gen" -type f
  find test -type f \( -name '*.ptx' -o -name '*.ll' -o -name '*.bc' \)
  [[ -d build/corpus ]] && find build/corpus -type f -name '*.ptx'
} | LC_ALL=C sort | xargs -P "${JOBS:-2}" -I{} bash -c 'one "$1"' _ {}
echo "pass-outputs: $(find "$out" -type f | wc -l) files in $out"
