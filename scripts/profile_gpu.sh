#!/usr/bin/env bash
# An Nsight Compute profile of one launch of the tiled kernel at 4096^3, layout TN:
#
#   bash scripts/profile_gpu.sh TYPE NAME [-DSETTING=VALUE ...] [worklog/CHANGE.md ...]
#
# builds gemm.md for TYPE with the settings given (and the change files of
# worklog/ named, e.g. worklog/math-only.md for the kernel without its copies), profiles it and writes
# ${OUT:-results/profiles}/ncu-NAME-TYPE.txt. The counters are the ones the post
# quotes: tensor pipe, shared-memory loads and their wavefronts, bank conflicts,
# the memory system's throughput, and why warps stall.
set -eu
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
    echo "usage: bash scripts/profile_gpu.sh TYPE NAME [-DSETTING=VALUE ...]" >&2
    exit 2
fi
type=$1 name=$2
shift 2
case $type in
    F16_IN_F32_OUT|F16_IN_OUT|BF16_IN_F32_OUT|TF32_IN_F32_OUT|F64_IN_OUT|I8_IN_I32_OUT|U8_IN_I32_OUT) ;;
    *) echo "profile_gpu: '$type' is not a type pair of gemm.md" >&2; exit 2 ;;
esac
. scripts/gpu_env.sh profile_gpu
if ! command -v ncu >/dev/null 2>&1; then
    echo "profile_gpu: ncu (Nsight Compute) is not on PATH" >&2
    exit 3
fi
out=${OUT:-results/profiles}
mkdir -p "$out" build/profile
flags=() changes=()
for a in "$@"; do
    case $a in *.md) changes+=(--change "$a") ;; *) flags+=("$a") ;; esac
done
bin=build/profile/$type-$name
python3 tangle.py gemm.md "${changes[@]}" -o "$bin.cu"
nvcc -O3 -std=c++17 -lineinfo -arch=sm_$cc -DTYPE_FROM_MAKE -D"$type" -DMNK_FROM_MAKE \
    -DTRANSPOSE_A=0 -DTRANSPOSE_B=1 -DUSE_CUBLAS=1 "${flags[@]}" -o "$bin" "$bin.cu" -lcublas
metrics=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
metrics=$metrics,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_ldsm.sum
metrics=$metrics,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
metrics=$metrics,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
metrics=$metrics,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed
metrics=$metrics,smsp__average_warp_latency_issue_stalled_mio_throttle.ratio
metrics=$metrics,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio
metrics=$metrics,smsp__average_warp_latency_issue_stalled_barrier.ratio
metrics=$metrics,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio
{
    echo "# bash scripts/profile_gpu.sh $type $name $*"
    ncu -k regex:gemm_tiled -c 1 --section SpeedOfLight --section WarpStateStats --section Occupancy \
        --metrics "$metrics" "$bin" 4096 4096 4096 --kernel=tiled --cublas=off --verify=off \
        --warmup 0 --repeat 1
} > "$out/ncu-$name-$type.txt" 2>&1
echo "profile_gpu: wrote $out/ncu-$name-$type.txt"
