#!/usr/bin/env bash
# Every tile of every type pair (layout TN), each forced in turn (--tile=all), over the
# sweep's sizes, with cuBLAS in the same run: the measurements behind TILE_SPEED and
# the choice of tile. Writes $OUT/tiles.csv (one line per tile, kernel and cuBLAS).
#
#   OUT=dir bash scripts/tiles_gpu.sh [SIZES...]     default sizes: 256 512 1000 1024 2048 3000 4096 8192
set -u
cd "$(dirname "$0")/.."
. scripts/gpu_env.sh tiles_gpu
OUT=${OUT:-build/tiles}
SIZES=${*:-256 512 1000 1024 2048 3000 4096 8192}
TYPES="F16_IN_F32_OUT F16_IN_OUT BF16_IN_F32_OUT I8_IN_I32_OUT U8_IN_I32_OUT TF32_IN_F32_OUT F64_IN_OUT"
mkdir -p "$OUT" build/tiles
python3 tangle.py gemm.md -o build/tiles/gemm.cu || exit 1
for t in $TYPES; do
    echo "nvcc -O3 -std=c++17 -arch=sm_$cc -DTYPE_FROM_MAKE -D$t -DMNK_FROM_MAKE -DTRANSPOSE_A=0 -DTRANSPOSE_B=1 -DUSE_CUBLAS=1 -o build/tiles/$t build/tiles/gemm.cu -lcublas"
done | xargs -P 8 -I{} sh -c "{}" || exit 1
# Every tile verified in full at awkward sizes first.
for t in $TYPES; do
    for mnk in "1 1 1" "37 41 29" "129 257 65" "300 200 100"; do
        ./build/tiles/$t $mnk --tile=all --verify=full --csv --warmup 1 --repeat 2 \
            >> "$OUT/tiles-check.csv" || echo "FAILED: $t $mnk (exit $?)" >&2
    done
done
./build/tiles/F16_IN_F32_OUT --csv-header > "$OUT/tiles.csv"
for n in $SIZES; do
    for t in $TYPES; do
        # The simple kernel too where it is cheap, for the floor "never slower than simple".
        kernel=all; [ "$n" -gt 2048 ] && kernel=tiled
        echo "$t $n" >&2
        ./build/tiles/$t $n $n $n --tile=all --kernel=$kernel --csv --warmup 5 --repeat 20 \
            >> "$OUT/tiles.csv" || echo "FAILED: $t $n (exit $?)" >&2
    done
done
