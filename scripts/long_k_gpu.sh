#!/usr/bin/env bash
# Problems whose M x N is too small to fill the GPU while K is long, where splitting K
# across blocks (split-K, stream-K) is what cuBLAS does and the tiled kernel does not:
# every tile of the 16-bit pairs and int8 (layout TN), each forced, with cuBLAS in the same
# run; then the tile the program chooses, once with K split as it chooses and once unsplit
# (--split-k=1), to measure what splitting gains. Writes $OUT/long-k.csv.
#
#   OUT=dir bash scripts/long_k_gpu.sh
#   PART=split OUT=dir bash scripts/long_k_gpu.sh    only the split/unsplit comparison
set -u
cd "$(dirname "$0")/.."
. scripts/gpu_env.sh long_k_gpu
OUT=${OUT:-build/long-k}
TYPES="F16_IN_F32_OUT F16_IN_OUT BF16_IN_F32_OUT I8_IN_I32_OUT"
mkdir -p "$OUT" build/long-k
python3 tangle.py gemm.md -o build/long-k/gemm.cu || exit 1
for t in $TYPES; do
    echo "nvcc -O3 -std=c++17 -arch=sm_$cc -DTYPE_FROM_MAKE -D$t -DMNK_FROM_MAKE -DTRANSPOSE_A=0 -DTRANSPOSE_B=1 -DUSE_CUBLAS=1 -o build/long-k/$t build/long-k/gemm.cu -lcublas"
done | xargs -P 4 -I{} sh -c "{}" || exit 1
./build/long-k/F16_IN_F32_OUT --csv-header > "$OUT/long-k.csv"
SIZES=("512 512 16384" "256 256 65536" "1024 1024 16384" "512 512 512")
if [ "${PART:-all}" != split ]; then
    for mnk in "${SIZES[@]}"; do
        for t in $TYPES; do
            echo "$t $mnk" >&2
            ./build/long-k/$t $mnk --tile=all --csv --warmup 5 --repeat 20 >> "$OUT/long-k.csv" ||
                echo "FAILED: $t $mnk (exit $?)" >&2
        done
    done
fi
for mnk in "${SIZES[@]}"; do
    for t in $TYPES; do
        for split in "" --split-k=1; do
            echo "$t $mnk chosen tile $split" >&2
            ./build/long-k/$t $mnk --kernel=tiled $split --csv --warmup 5 --repeat 20 \
                >> "$OUT/long-k.csv" || echo "FAILED: $t $mnk $split (exit $?)" >&2
        done
    done
done
