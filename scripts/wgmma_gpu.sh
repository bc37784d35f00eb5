#!/usr/bin/env bash
# The Hopper kernel at 8192^3 beside cuBLAS, for the three 16-bit pairs in the layouts TN and
# NN, with the blocks walked in groups of GROUP_M = 8 (as shipped) and of 16 rows, each run
# with cuBLAS in the same process (20 timed launches, median); then, unless SWEEP=0, the sweep
# of the 16-bit pairs, which runs the Hopper kernel beside the others. Needs a Hopper GPU.
# Writes $OUT/wgmma-groups.csv and the sweep's files under $OUT/sweep.
#
#   OUT=dir bash scripts/wgmma_gpu.sh
set -u
cd "$(dirname "$0")/.."
. scripts/gpu_env.sh wgmma_gpu hopper
OUT=${OUT:-build/wgmma}
PAIRS="F16_IN_F32_OUT F16_IN_OUT BF16_IN_F32_OUT"
dir=build/wgmma
mkdir -p "$OUT" "$dir"
python3 tangle.py gemm.md -o "$dir/gemm.cu" || exit 1
for t in $PAIRS; do for tb in 1 0; do for g in 8 16; do
    echo "nvcc -O3 -std=c++17 $target -DTYPE_FROM_MAKE -D$t -DMNK_FROM_MAKE -DTRANSPOSE_A=0 -DTRANSPOSE_B=$tb -DGROUP_M=$g -DUSE_CUBLAS=1 -o $dir/$t-$tb-g$g $dir/gemm.cu -lcublas"
done; done; done | xargs -P 12 -I{} sh -c "{}" || exit 1
"$dir/F16_IN_F32_OUT-1-g8" --csv-header > "$OUT/wgmma-groups.csv"
for t in $PAIRS; do for tb in 1 0; do for g in 8 16; do
    echo "$t TRANSPOSE_B=$tb GROUP_M=$g" >&2
    timeout 120 "$dir/$t-$tb-g$g" 8192 8192 8192 --kernel=wgmma --verify=sample --csv --warmup 5 \
        --repeat 20 >> "$OUT/wgmma-groups.csv" || echo "FAILED: $t $tb $g (exit $?)" >&2
done; done; done
[ "${SWEEP:-1}" = 0 ] || python3 scripts/sweep.py run --types F16_IN_F32_OUT,F16_IN_OUT,BF16_IN_F32_OUT \
    --out "$OUT/sweep"
