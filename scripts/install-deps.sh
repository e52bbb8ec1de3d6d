#!/usr/bin/env bash
# Check (and, as root, install) what tidal needs on Debian 12.
#
# Packages: scripts/deps.txt (the single list). Missing ones are installed with
# apt-get when running as root (apt-get update first, only if something is
# missing); otherwise the script lists them and exits 1.
# Also checks the CUDA toolkit at $CUDA_HOME (default /usr/local/cuda).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}

mapfile -t pkgs < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$here/deps.txt" | grep -v '^$')

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${pkgs[@]}"; do
    installed "$p" || missing+=("$p")
  done
else
  echo "install-deps: dpkg-query not found; not a Debian system? Need: ${pkgs[*]}" >&2
  exit 1
fi

status=0
if (( ${#missing[@]} )); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "install-deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "install-deps: missing Debian packages: ${missing[*]}" >&2
    echo "install-deps: install them with:  sudo apt-get install ${missing[*]}" >&2
    echo "install-deps:               (or:  sudo make deps)" >&2
    status=1
  fi
fi

for tool in nvcc ptxas; do
  if [[ ! -x "$cuda/bin/$tool" ]]; then
    echo "install-deps: $cuda/bin/$tool not found: install the CUDA 13 toolkit at $cuda" \
         "(or set CUDA_HOME)" >&2
    status=1
  fi
done

# lit normally comes from llvm-22-tools; without it the build falls back to a
# lit on PATH or `python3 -m lit` (pip install lit).
if [[ ! -x /usr/lib/llvm-22/bin/lit ]] && ! command -v lit >/dev/null 2>&1 \
   && ! python3 -c 'import lit' >/dev/null 2>&1; then
  echo "install-deps: no lit found (/usr/lib/llvm-22/bin/lit from llvm-22-tools, or: pip install lit)" >&2
  status=1
fi

if (( status == 0 )); then
  echo "install-deps: all dependencies present"
fi
exit "$status"
