#!/usr/bin/env bash
# The shapes of language models' layers (and odd sizes beside them), every kernel against
# cuBLAS, for the binaries a worklog run left in build/worklog (the shipped kernel of each
# 16-bit pair, layout TN): ./gemm --kernel=all, ten launches after three warm-ups, verified on
# a sample. Rows of ./gemm's CSV go to $OUT/layer-shapes.csv. Run after
# `scripts/worklog.py run --hopper`, which builds those binaries.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/session}
mkdir -p "$OUT"
csv="$OUT/layer-shapes.csv"
shapes=${SHAPES:-"4096x11008x4096 4096x4096x11008 16384x4096x4096 8192x28672x8192 4095x11007x4097"}
first=1
for binary in build/worklog/*-h-persistent; do
    [ -x "$binary" ] || continue
    if [ $first = 1 ]; then "$binary" --csv-header > "$csv"; first=0; fi
    for shape in $shapes; do
        "$binary" ${shape//x/ } --kernel=all --csv --warmup 3 --repeat 10 --verify=sample >> "$csv" \
            2>> "$OUT/layer-shapes-err.txt" || echo "FAILED $binary $shape"
    done
done
echo "layer_shapes_gpu: $(($(wc -l < "$csv") - 1)) rows in $csv"
