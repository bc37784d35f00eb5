#!/usr/bin/env bash
# The Hopper kernel's epilogue experiments on a lent H100 (one call): the kernel as shipped and
# as step H5 before it (a block per tile), C prefetched into L2 a few rows at a time, and the
# kernel without its epilogue, for the three 16-bit pairs at 8192^3, 4096^3 and 3000^3
# (worklog.py, kernel and cuBLAS in the same process), into $OUT. (Its run of 2026-11-25,
# results/README.md, was of gemm.md at 072347d, whose shipped kernel was H5.)
set -u
cd "$(dirname "$0")/.."
exec bash scripts/gpu_session.sh worklog --hopper --no-steps \
    --steps "${KEYS:-h-widths,h-persistent,h-spread,h-spread-all,h-no-epilogue}" \
    --types F16_IN_F32_OUT,F16_IN_OUT,BF16_IN_F32_OUT --size "${SIZES:-8192,4096,3000}"
