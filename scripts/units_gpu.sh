#!/usr/bin/env bash
# Did the Hopper kernel's units of work (the roles' loop over units, 176b2a8) slow it or its
# copies? gemm.md as it was at step H7 (0ec7bbb) against gemm.md now, taking turns in one run
# (compare_gpu.py, TN, 8192^3 and 3000^3): the whole kernel, then the copies-only measurement
# build (worklog/hopper-copies-only.md of each, unverified since its results are wrong).
#
#   git show 0ec7bbb:gemm.md > build/h7/gemm.md
#   git show 0ec7bbb:worklog/hopper-copies-only.md > build/h7/copies.md
#   bash scripts/units_gpu.sh build/h7          (on the GPU machine, build/h7 carried)
#
# Results go to $OUT (default build/units).
set -u
cd "$(dirname "$0")/.."
old=${1:?usage: bash scripts/units_gpu.sh FOLDER (with gemm.md and copies.md of step H7)}
OUT=${OUT:-build/units}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 scripts/compare_gpu.py --base "$old/gemm.md" --sizes 8192,3000 --layouts TN --rounds 3 --repeat 20 \
    --timeout 120 --out "$OUT/kernel.csv" 2>&1 | tee "$OUT/kernel.txt"
first=${PIPESTATUS[0]}
python3 scripts/compare_gpu.py --base "$old/gemm.md" --base-change "$old/copies.md" --new-change hopper-copies-only \
    --base-args=--verify=off --new-args=--verify=off --sizes 8192 --layouts TN --rounds 3 --repeat 20 \
    --timeout 120 --out "$OUT/copies.csv" 2>&1 | tee "$OUT/copies.txt"
[ "$first" = 0 ] && [ "${PIPESTATUS[0]}" = 0 ]
