#!/usr/bin/env bash
# test/runtime_layers.sh OBJ... -- libtidal's calls go one way (docs/design.md §5, "Layers").
# From the symbols each object file defines and uses (nm), which module (runtime/NAME.c)
# calls or reads which; prints that graph and fails on a module missing from the table
# below, on a call from a layer to one above it, and on any cycle. Arguments may be
# ;-separated lists (CMake's $<TARGET_OBJECTS:...>).
set -uo pipefail

# The layers, top first (docs/design.md §5 has the same picture): a module may use the
# modules of its own layer (without a cycle) and of the layers below.
layers=(
  "interposers: preload wrap_cudart"
  "serving: serve"
  "policies: policy policy_sgdrc policy_gslice policy_layout scaling"
  "api: entry init stats"
  "launch: launch routes functions modules streams green bimodal l2addr l2mem l2side"
  "control: remote partitions flowin"
  "driver: device cu"
  "leaves: errors smset control_proto tidal_client"
)
# dlsym is libc's: cu.c calls it, and the preload library interposes it (its hook is not a
# module's function)
ignore=" dlsym "

objs=()
for a in "$@"; do IFS=';' read -ra part <<<"$a"; objs+=("${part[@]}"); done
((${#objs[@]})) || { echo "usage: runtime_layers.sh OBJ..."; echo "0 passed, 1 failed"; exit 1; }
declare -A layer_of def
for i in "${!layers[@]}"; do
  for m in ${layers[$i]#*:}; do layer_of[$m]=$i; done
done
module() { local b; b=$(basename "$1"); b=${b%.o}; echo "${b%.c}"; }

pass=0 fail=0
ok() { echo "PASS runtime-layers.$1"; pass=$((pass + 1)); }
bad() { echo "FAIL runtime-layers.$1"; fail=$((fail + 1)); }

unknown=()
for o in "${objs[@]}"; do
  m=$(module "$o")
  [[ -n ${layer_of[$m]+x} ]] || unknown+=("$m")
  while read -r s; do def[$s]=$m; done < <(nm --defined-only "$o" | awk '$2 ~ /^[TDBRCGVW]$/ {print $3}')
done
if ((${#unknown[@]})); then bad "table: not in the layer table of test/runtime_layers.sh: ${unknown[*]}"; else ok table; fi

edges=$(for o in "${objs[@]}"; do
  m=$(module "$o")
  nm -u "$o" | awk '{print $2}' | while read -r s; do
    t=${def[$s]:-}
    [[ -n $t && $t != "$m" && $ignore != *" $s "* ]] && echo "$m $t"
  done
done | sort -u)

echo "-- who calls whom (layer: module -> modules it uses)"
for i in "${!layers[@]}"; do
  for m in ${layers[$i]#*:}; do
    to=$(awk -v m="$m" '$1 == m {printf " %s", $2}' <<<"$edges")
    [[ -n $to ]] && echo "   ${layers[$i]%%:*}: $m ->$to"
  done
done

up=$(while read -r a b; do
  [[ -n $a && -n ${layer_of[$a]+x} && -n ${layer_of[$b]+x} ]] || continue
  ((layer_of[$a] > layer_of[$b])) && echo "$a -> $b"
done <<<"$edges")
if [[ -n $up ]]; then bad "down: calls up the layers: ${up//$'\n'/, }"; else ok down; fi

if cycle=$(tsort <<<"$edges" 2>&1 >/dev/null) && [[ -z $cycle ]]; then ok acyclic; else bad "acyclic: ${cycle//$'\n'/ }"; fi

echo "$pass passed, $fail failed"
((fail == 0))
