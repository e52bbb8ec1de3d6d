#!/usr/bin/env bash
# bench/vram/bimodal.sh -- what a bimodal tensor buys (bimodal.cu, issue 13 build item 3):
# builds libtidal the way the GPU runtime suite does (test/gpu/runtime/run.sh --build-only,
# into ${TIDAL_GPU_RT_BUILD:-build-gpu-rt}), then bimodal against it, and runs it (12 runs
# of at least 20 ms after making and writing a 256 MiB tensor: seconds, not yet timed on the
# GPU).
#
#   bench/vram/bimodal.sh [--build-only]
#
# Output: ${OUT:-/tmp}/bimodal.csv (a line a run) and bimodal.log, whose last four lines are
#   PHASE a ls=idle be_sms=all(N) mode=all be_gbs=G ls_median=- ls_p99=-
#   PHASE b ls=active be_sms=side1(N) mode=side be_gbs=G ls_median=C ls_p99=C
#   PHASE c ls=active be_sms=side1(N) mode=all be_gbs=G ls_median=C ls_p99=C
#   PHASE d ls=idle be_sms=all(N) mode=side be_gbs=G ls_median=- ls_p99=-
# (medians of 3 runs; GB/s of BE, LS's DRAM latency in cycles).
exec "$(dirname "${BASH_SOURCE[0]}")/l2_bench.sh" bimodal bimodal "$@"
