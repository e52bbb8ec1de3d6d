#!/usr/bin/env bash
# fake_compute_sanitizer.sh -- a stand-in compute-sanitizer for checking test/gpu/sanitize.sh
# without a GPU (test/gpu/selftest.sh): it runs the program as given and writes a report
# in compute-sanitizer's text format to --log-file, with the findings FAKE_SAN_RULES asks
# for. A rule is TOOL|MATCH|KERNEL|WHAT: when --tool is TOOL and the command line contains
# MATCH, one finding in KERNEL; WHAT is Error:Write-Read-style for racecheck (severity,
# first access, second access), else the message line (memcheck: "Invalid __global__ write
# of size 4 bytes"). Rules are separated by ';'. FAKE_SAN_NOSUMMARY=MATCH: no summary line.
set -uo pipefail
tool=memcheck logf=/dev/stdout
while (( $# )); do
  case "$1" in
    --version) echo "NVIDIA (R) Compute Sanitizer (fake for test/gpu/selftest.sh)"; exit 0 ;;
    --tool) tool=$2; shift 2 ;;
    --log-file) logf=$2; shift 2 ;;
    --print-limit|--report-api-errors) shift 2 ;;
    --*) echo "fake compute-sanitizer: unknown option $1" >&2; exit 1 ;;
    *) break ;;
  esac
done
cmdline="$*"
"$@"
rc=$?
{
  echo "========= COMPUTE-SANITIZER"
  n=0
  IFS=';' read -ra rules <<<"${FAKE_SAN_RULES:-}"
  for r in "${rules[@]}"; do
    IFS='|' read -r t m k w <<<"$r"
    [[ -n $t && $t == "$tool" && $cmdline == *"$m"* ]] || continue
    n=$((n + 1))
    if [[ $tool == racecheck ]]; then
      IFS=':-' read -r sev a b <<<"$w"
      echo "========= $sev: Race reported between $a access at $k+0x1f0"
      echo "=========     and $b access at $k+0x3a0 [128 hazards]"
    else
      echo "========= $w"
      echo "=========     at $k+0x70"
      echo "=========     by thread (0,0,0) in block (0,0,0)"
    fi
    echo "========="
  done
  (( rc )) && echo "========= Target application returned an error"
  if [[ -z ${FAKE_SAN_NOSUMMARY:-} || $cmdline != *"$FAKE_SAN_NOSUMMARY"* ]]; then
    if [[ $tool == racecheck ]]; then echo "========= RACECHECK SUMMARY: $n hazards displayed ($n errors, 0 warnings)"
    else echo "========= ERROR SUMMARY: $n errors"; fi
  fi
} >"$logf"
exit "$rc"
