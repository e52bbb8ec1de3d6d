#!/bin/bash
# Builds tidal-opt and the smoke probe on the GPU machine and runs it.
set -e
B=${OUT:-/tmp}/smoke; mkdir -p $B
gcc -std=c17 -O2 -D_POSIX_C_SOURCE=200809L -Ipasses -Iruntime -Iabi -Idriver passes/*.c driver/tidal-opt.c driver/cubin.c driver/exec.c -o $B/tidal-opt -ldl -lm
nvcc -arch=sm_90a -ptx test/corpus/cuda/saxpy.cu -o $B/saxpy.ptx
$B/tidal-opt -p tidal --report $B/saxpy.ptx -o $B/saxpy.tidal.ptx
nvcc -std=c++17 -O2 -arch=sm_90a bench/probes/tidal_smoke.cu -o $B/smoke -lcuda
$B/smoke $B/saxpy.ptx $B/saxpy.tidal.ptx
