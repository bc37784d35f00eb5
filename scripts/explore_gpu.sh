#!/usr/bin/env bash
# One call on the GPU machine: the GPU's name and clocks, then scripts/worklog.py run
# with the arguments given (default: the explore variants and the parts of every
# pair, without the steps). Results go to $OUT (default results/explore).
#
#   OUT=DIR bash scripts/explore_gpu.sh [worklog.py run arguments]
#
# For a profile to go with it: bash scripts/profile_gpu.sh TYPE NAME [-DSETTING=V ...]
set -u
cd "$(dirname "$0")/.."
. scripts/gpu_env.sh explore_gpu
OUT=${OUT:-results/explore}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpu.txt"
if [ $# -eq 0 ]; then
    set -- --no-steps --explore all --parts all
fi
python3 scripts/worklog.py run "$@" --out "$OUT"
