#!/usr/bin/env bash
# The Hopper kernel's epilogue experiments on a lent H100 (one call): the kernel as shipped
# (step H7, C stored by the TMA) and step H6 before it (stored from the registers), C
# prefetched into L2 a few rows at a time, and the kernel without its epilogue, for the pairs
# the Hopper kernel takes at 8192^3, 4096^3 and 3000^3 (worklog.py, kernel and cuBLAS in the
# same process), into $OUT. (Its run of 2026-11-25, results/README.md, was of gemm.md at
# 072347d, whose shipped kernel was H5, with the keys h-widths,h-persistent,....)
set -u
cd "$(dirname "$0")/.."
exec bash scripts/gpu_session.sh worklog --hopper --no-steps \
    --steps "${KEYS:-h-persistent,h-tma-store,h-spread,h-spread-all,h-no-epilogue}" \
    --size "${SIZES:-8192,4096,3000}"
