#!/usr/bin/env bash
# The double kernel's block tile on a Hopper GPU: each candidate below is built as the first
# tile (its settings and layout as -D flags) and timed at 8192^3 beside cuBLAS, every build in
# one run. Output: $OUT/dmma-tiles.csv, one line per build: its settings, the double kernel's
# first tile (eTOPS, result), the WMMA tiled kernel's first tile and cuBLAS (eTOPS).

#
#   OUT=build/dmma-out bash scripts/dmma_tiles_gpu.sh
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/dmma-out}
mkdir -p "$OUT" build/dmma
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
[ -f COMMIT ] && cat COMMIT
python3 tangle.py gemm.md -o build/dmma/tiles.cu || exit 1
# BLOCK_M BLOCK_N BLOCK_K WARPS_M WARPS_N STAGES AHEAD SPREAD SKEW TRANSPOSE_A TRANSPOSE_B
candidates=(
    "128 64 16 2 2 3 1 1 32 0 1"
    "128 64 16 2 2 3 1 1 32 0 0"
    "128 64 16 2 2 3 1 0 32 0 1"
    "128 64 16 2 2 3 1 0 32 0 0"
    "128 64 16 2 2 3 0 1 32 0 1"
    "128 64 16 2 2 3 0 1 32 0 0"
    "64 128 16 2 2 3 1 0 32 0 1"
    "128 64 16 4 1 3 1 1 32 0 1"
    "128 64 32 4 1 2 1 1 32 0 1"
    "128 64 16 2 2 3 1 0 32 1 0"
    "128 64 16 2 2 3 1 0 32 1 1"
)
i=0
for c in "${candidates[@]}"; do
    set -- $c
    flags="-DBLOCK_M=$1 -DBLOCK_N=$2 -DBLOCK_K=$3 -DBLOCK_WARPS_M=$4 -DBLOCK_WARPS_N=$5 -DSTAGES=$6 -DPREFETCH_FRAGMENTS=$7 -DSPREAD_COPIES=$8 -DSKEW_BYTES=$9 -DTRANSPOSE_A=${10} -DTRANSPOSE_B=${11}"
    nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -DTYPE_FROM_MAKE -DF64_IN_OUT \
        -DUSE_CUBLAS=1 $flags -o build/dmma/tiles-$i \
        build/dmma/tiles.cu -lcublas 2> build/dmma/tiles-$i.log &
    i=$((i + 1))
done
wait
i=0
for c in "${candidates[@]}"; do
    g=build/dmma/tiles-$i
    if [ ! -x $g ]; then echo "candidate $i ($c): no build"; tail -3 $g.log; i=$((i + 1)); continue; fi
    $g 8192 8192 8192 --tile=all --verify=sample --csv > build/dmma/tiles-$i.csv
    dmma=$(grep ',dmma,' build/dmma/tiles-$i.csv | head -1 | cut -d, -f20,23)
    tiled=$(grep ',tiled,' build/dmma/tiles-$i.csv | head -1 | cut -d, -f20)
    cublas=$(grep ',cublas,' build/dmma/tiles-$i.csv | cut -d, -f20)
    echo "$c,$dmma,$tiled,$cublas" | tee -a "$OUT/dmma-tiles.csv"
    i=$((i + 1))
done
