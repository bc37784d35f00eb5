#!/usr/bin/env bash
# Tries several arrangements of warps in a thread block (WARPS_M x WARPS_N) for
# the simple kernel and times each at 8192^3; prints one CSV line per try.
#   bash scripts/tune_warps.sh F64_IN_OUT:0 F16_IN_F32_OUT:0 TF32_IN_F32_OUT:1
set -eu
cd "$(dirname "$0")/.."
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d ' .')
mkdir -p build/tune && python3 tangle.py gemm.md -o build/tune/gemm.cu
shapes="1x4 2x2 2x4 4x2 4x4 2x8 8x2 4x8 8x4"
for c in "$@"; do
    t=${c%%:*}; tb=${c##*:}
    for w in $shapes; do
        nvcc -O3 -std=c++17 -arch=sm_$cc -DTYPE_FROM_MAKE -D$t -DMNK_FROM_MAKE -DTRANSPOSE_B=$tb \
            -DWARPS_M=${w%x*} -DWARPS_N=${w#*x} -DUSE_CUBLAS=0 -o build/tune/$t-$tb-$w build/tune/gemm.cu &
    done
done
wait
for c in "$@"; do
    t=${c%%:*}; tb=${c##*:}
    for w in $shapes; do
        printf '%s,' "$w"
        build/tune/$t-$tb-$w 8192 8192 8192 --verify=sample --warmup 2 --repeat 5 --csv
    done
done
