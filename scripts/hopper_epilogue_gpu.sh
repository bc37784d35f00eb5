#!/usr/bin/env bash
# The Hopper kernel's epilogue experiments on a lent H100 (one call): the shipped kernel, its
# persistent variant, C prefetched into L2 a few rows at a time, both together, and the kernel
# without its epilogue, for the three 16-bit pairs at 8192^3, 4096^3 and 3000^3 (worklog.py,
# kernel and cuBLAS in the same process). Everything lands in $OUT/epilogue.tgz.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/session}
mkdir -p "$OUT/epilogue"
keys=${KEYS:-h-batched,h-persistent,h-spread,h-spread-all,h-persistent-spread,h-no-epilogue}
for size in ${SIZES:-8192 4096 3000}; do
    OUT="$OUT/epilogue/$size" bash scripts/gpu_session.sh worklog --hopper --no-steps --steps "$keys" \
        --types F16_IN_F32_OUT,F16_IN_OUT,BF16_IN_F32_OUT --size "$size" > "$OUT/epilogue/log-$size.txt" 2>&1
    echo "size $size: exit $?"; wc -l "$OUT/epilogue/$size"/*.csv
done
tar czf "$OUT/epilogue.tgz" -C "$OUT" epilogue && rm -rf "$OUT/epilogue"
