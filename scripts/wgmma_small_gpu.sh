#!/usr/bin/env bash
# Why the Hopper kernel is slow at small sizes: its event-timed median beside the time
# Nsight Compute measures for one launch of each kernel (gpu__time_duration), at 256^3,
# 1024^3 and 2048^3, F16_IN_F32_OUT, layout TN; for the shipped kernel and for the variant
# whose epilogue loads C in batches (worklog/hopper-batched-epilogue.md).
# Writes $OUT/wgmma-small.txt.
#   OUT=dir bash scripts/wgmma_small_gpu.sh
set -u
cd "$(dirname "$0")/.."
. scripts/gpu_env.sh wgmma_small_gpu hopper
OUT=${OUT:-build/wgmma-small}
dir=build/wgmma-small
mkdir -p "$OUT" "$dir"
python3 tangle.py gemm.md -o "$dir/gemm.cu" || exit 1
python3 tangle.py gemm.md --change worklog/hopper-batched-epilogue.md -o "$dir/batched.cu" || exit 1
rm -f "$dir/gemm" "$dir/batched"
for v in gemm batched; do
    nvcc -O3 -std=c++17 -lineinfo $target -DTYPE_FROM_MAKE -DF16_IN_F32_OUT -DMNK_FROM_MAKE -DTRANSPOSE_A=0 \
        -DTRANSPOSE_B=1 -DUSE_CUBLAS=1 -o "$dir/$v" "$dir/$v.cu" -lcublas &
done
wait
[ -x "$dir/gemm" ] && [ -x "$dir/batched" ] || exit 1
{
    for v in gemm batched; do
    echo "==== $v"
    for n in 256 1024 2048; do
        echo "== $n^3, events"
        "$dir/$v" $n $n $n --warmup 5 --repeat 20 | grep -E "^(Kernel|Time|Speed|cuBLAS time)"
        echo "== $n^3, ncu (one launch of each kernel after the warm-up)"
        timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum,launch__grid_size \
            "$dir/$v" $n $n $n --warmup 1 --repeat 1 --cublas=off 2>&1 | grep -E "gemm|sum_slices|flush|duration|grid_size" | head -n 40
    done
    done
} 2>&1 | tee "$OUT/wgmma-small.txt"
