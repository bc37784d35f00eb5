#!/usr/bin/env bash
# One call on the GPU machine: worklog runs with the arguments given (default:
# the explore variants and the parts of every pair, without the steps), then,
# with PROFILE=1, an Nsight Compute profile of the shipped half kernel at 4096^3.
# Results go to $OUT (default results/explore).
#
#   OUT=DIR bash scripts/explore_gpu.sh [worklog.py run arguments]
set -u
OUT=${OUT:-results/explore}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpu.txt"
if [ $# -eq 0 ]; then
    set -- --no-steps --explore all --parts all
fi
python3 scripts/worklog.py run "$@" --out "$OUT"
if [ "${PROFILE:-0}" = 1 ] && command -v ncu >/dev/null; then
    make -s TYPE=F16_IN_F32_OUT TRANSPOSE_A=0 TRANSPOSE_B=1 ARCH=sm_90
    timeout 120 ncu -k regex:gemm_tiled -c 1 --section SpeedOfLight --section WarpStateStats \
        --section MemoryWorkloadAnalysis \
        --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum.per_second,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum \
        ./gemm 4096 4096 4096 --kernel=tiled --cublas=off --verify=off --warmup 0 --repeat 1 \
        > "$OUT/ncu-F16_IN_F32_OUT.txt" 2>&1
fi
