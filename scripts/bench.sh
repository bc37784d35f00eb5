#!/usr/bin/env bash
# Times every type pair (its first WMMA shape), B plain and B transposed, at
# 8192^3 on the GPU in this machine, and prints the CSV lines of ./gemm.
# Uses the binaries that scripts/check_gpu.sh built in build/check/.
#   bash scripts/bench.sh [SIZE] > results/file.csv
set -eu
cd "$(dirname "$0")/.."
n=${1:-8192}
first=1
for c in F16_IN_F32_OUT-16x16x16 F16_IN_OUT-16x16x16 BF16_IN_F32_OUT-16x16x16 \
         TF32_IN_F32_OUT-16x16x8 F64_IN_OUT-8x8x4 I8_IN_I32_OUT-16x16x16 U8_IN_I32_OUT-16x16x16; do
    for tb in 0 1; do
        bin=build/check/$c-0$tb
        [ $first = 1 ] && { "$bin" --csv-header; first=0; }
        "$bin" $n $n $n --verify=sample --warmup 3 --repeat 10 --csv
    done
done
