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
shapes=${SHAPES:-$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import sweep
print(" ".join("x".join(map(str, s)) for s in sweep.LAYER_SHAPES))')}
first=1
shipped=$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import worklog
print(list(worklog.HOPPER_STEP_TITLES)[-1])') || exit 1   # the last Hopper step is the shipped kernel
binaries=$(ls build/worklog/*-"$shipped" 2>/dev/null)
[ -n "$binaries" ] || { echo "layer_shapes_gpu: no build/worklog/*-$shipped: run worklog.py run --hopper first" >&2; exit 1; }
for binary in $binaries; do
    if [ $first = 1 ]; then "$binary" --csv-header > "$csv"; first=0; fi
    for shape in $shapes; do
        "$binary" ${shape//x/ } --kernel=all --csv --warmup 3 --repeat 10 --verify=sample >> "$csv" \
            2>> "$OUT/layer-shapes-err.txt" || echo "FAILED $binary $shape"
    done
done
echo "layer_shapes_gpu: $(($(wc -l < "$csv") - 1)) rows in $csv"
