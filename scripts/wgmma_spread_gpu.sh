#!/usr/bin/env bash
# Why the Hopper kernel's launches at 8192^3 vary by up to 13 % within a run, where cuBLAS's
# vary by 5 %: F16_IN_F32_OUT, layout TN, as shipped.
#  1. three runs of 50 launches each (events; cuBLAS in the same runs), with nvidia-smi
#     sampling the SM clock, power and throttle reasons every 20 ms beside them;
#  2. Nsight Compute on 20 launches of the kernel, first at the clocks the GPU chooses, then
#     locked at base clock: each launch's duration and elapsed SM cycles. If the cycles stay
#     put while the durations vary, the clock varies; if the cycles vary, the work does.
# Writes $OUT/wgmma-spread.txt and $OUT/wgmma-spread-smi.csv.
#   OUT=dir bash scripts/wgmma_spread_gpu.sh
set -u
cd "$(dirname "$0")/.."
. scripts/gpu_env.sh wgmma_spread_gpu hopper
OUT=${OUT:-build/wgmma-spread}
dir=build/wgmma-spread
mkdir -p "$OUT" "$dir"
python3 tangle.py gemm.md -o "$dir/gemm.cu" || exit 1
rm -f "$dir/g"
nvcc -O3 -std=c++17 -lineinfo $target -DTYPE_FROM_MAKE -DF16_IN_F32_OUT -DMNK_FROM_MAKE -DTRANSPOSE_A=0 \
    -DTRANSPOSE_B=1 -DUSE_CUBLAS=1 -o "$dir/g" "$dir/gemm.cu" -lcublas || exit 1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
    --format=csv -lms 20 > "$OUT/wgmma-spread-smi.csv" 2>&1 &
smi=$!
{
    for i in 1 2 3; do
        echo "== run $i: 50 launches, events"
        "$dir/g" 8192 8192 8192 --kernel=wgmma --verify=off --warmup 5 --repeat 50 --csv
    done
    kill $smi 2>/dev/null
    for clocks in none base; do
        echo "== Nsight Compute, --clock-control $clocks: 20 launches of the kernel"
        timeout 200 ncu --clock-control $clocks -k gemm_wgmma -c 20 \
            --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__cycles_active.avg \
            "$dir/g" 8192 8192 8192 --kernel=wgmma --verify=off --cublas=off --warmup 5 --repeat 15 2>&1 |
            grep -E "gpu__time_duration|sm__cycles_elapsed|smsp__cycles_active"
    done
} 2>&1 | tee "$OUT/wgmma-spread.txt"
kill $smi 2>/dev/null
exit 0
