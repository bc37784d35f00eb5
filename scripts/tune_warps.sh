#!/usr/bin/env bash
# Tries arrangements of the simple kernel's thread block: WARPS_M x WARPS_N warps,
# blocks walked in groups of GROUP_M rows of patches. Times each at 8192^3 and
# prints one CSV line per try, prefixed with the variant.
#   bash scripts/tune_warps.sh F64_IN_OUT:0 F16_IN_F32_OUT:0 TF32_IN_F32_OUT:1
#   VARIANTS="4x4:1 4x4:8" bash scripts/tune_warps.sh F64_IN_OUT:0
set -eu
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
    echo "usage: bash scripts/tune_warps.sh TYPE:TRANSPOSE_B [TYPE:TRANSPOSE_B ...]" >&2
    exit 2
fi
for c in "$@"; do
    case $c in
        *_IN_*:[01]) ;;
        *) echo "tune_warps: '$c' is not TYPE:TRANSPOSE_B, e.g. F16_IN_F32_OUT:1" >&2; exit 2 ;;
    esac
done
. scripts/gpu_env.sh tune_warps
mkdir -p build/tune && python3 tangle.py gemm.md -o build/tune/gemm.cu
variants=${VARIANTS:-"4x4:1 4x4:4 4x4:8 4x4:16 8x4:1 8x4:8 2x4:8 4x2:8"}
for c in "$@"; do
    t=${c%%:*}; tb=${c##*:}
    for v in $variants; do
        w=${v%%:*}; g=${v##*:}
        nvcc -O3 -std=c++17 -arch=sm_$cc -DTYPE_FROM_MAKE -D$t -DMNK_FROM_MAKE -DTRANSPOSE_B=$tb \
            -DWARPS_M=${w%x*} -DWARPS_N=${w#*x} -DGROUP_M=$g -DUSE_CUBLAS=0 \
            -o build/tune/$t-$tb-$w-$g build/tune/gemm.cu &
    done
done
wait
for c in "$@"; do
    t=${c%%:*}; tb=${c##*:}
    for v in $variants; do
        w=${v%%:*}; g=${v##*:}
        printf '%s,' "$v"
        build/tune/$t-$tb-$w-$g 8192 8192 8192 --kernel=simple --verify=sample --warmup 2 --repeat 5 --csv
    done
done
