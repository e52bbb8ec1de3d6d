#!/usr/bin/env bash
# bench/vram/l2mem_iso.sh -- issue 13's isolation benchmark on libtidal's parts (l2mem_iso.cu):
# builds libtidal the way the GPU runtime suite does (test/gpu/runtime/run.sh --build-only,
# into ${TIDAL_GPU_RT_BUILD:-build-gpu-rt}), then l2mem_iso against it, and runs it.
#
#   bench/vram/l2mem_iso.sh [--build-only]
#
# Output: ${OUT:-/tmp}/l2mem-iso.csv and .log.
exec "$(dirname "${BASH_SOURCE[0]}")/l2_bench.sh" l2mem_iso l2mem-iso "$@"
