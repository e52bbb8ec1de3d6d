#!/usr/bin/env bash
# Make (or reuse) a Python venv with triton==3.6.0 from PyPI, used to generate
# Triton PTX for sm_90a at build time (no GPU needed).
#
#   scripts/triton-venv.sh DIR     prints DIR/bin/python on success
#
# Exit status 0 when DIR/bin/python imports triton 3.6.0; otherwise 1 with the
# reason on stderr (no PyPI, no python3-venv ...). Callers report the skip.
set -uo pipefail
dir=${1:?usage: triton-venv.sh DIR}
want=3.6.0
py=$dir/bin/python
have() { "$py" -c "import triton, sys; sys.exit(triton.__version__ != '$want')" 2>/dev/null; }
if [[ -x $py ]] && have; then echo "$py"; exit 0; fi
echo "triton-venv: creating $dir with triton==$want from PyPI (build-time Triton corpus):" \
     "a network download, about 670 MB installed; TIDAL_TRITON_CORPUS=0 skips it" >&2
rm -rf "$dir"
if ! python3 -m venv "$dir" >&2; then
  echo "triton-venv: python3 -m venv failed (is python3-venv installed?)" >&2
  exit 1
fi
if ! "$py" -m pip install --quiet --disable-pip-version-check "triton==$want" >&2; then
  echo "triton-venv: pip install triton==$want failed (PyPI unreachable?)" >&2
  exit 1
fi
have || { echo "triton-venv: triton $want does not import from $dir" >&2; exit 1; }
echo "$py"
