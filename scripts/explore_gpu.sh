#!/usr/bin/env bash
# One call on the GPU machine: a round of worklog variants and the kernel with
# half of its work left out, then an Nsight Compute profile of the shipped half
# kernel. Results go to $OUT (default results/explore).
#
#   OUT=DIR TYPES=T1,T2 bash scripts/explore_gpu.sh
set -u
OUT=${OUT:-results/explore}
TYPES=${TYPES:-F16_IN_F32_OUT,F16_IN_OUT,BF16_IN_F32_OUT,TF32_IN_F32_OUT,F64_IN_OUT,I8_IN_I32_OUT}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpu.txt"
python3 scripts/worklog.py run --no-steps --types "$TYPES" --explore all --parts all --out "$OUT"
if command -v ncu >/dev/null && [ -x build/worklog/F16_IN_F32_OUT-p1 ]; then
    timeout 120 ncu -k regex:gemm_tiled -c 1 --section SpeedOfLight --section WarpStateStats \
        --section MemoryWorkloadAnalysis \
        --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum.per_second,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio \
        build/worklog/F16_IN_F32_OUT-p1 4096 4096 4096 --kernel=tiled --cublas=off --verify=off \
        --warmup 0 --repeat 1 > "$OUT/ncu-F16_IN_F32_OUT-p1.txt" 2>&1
fi
