#!/usr/bin/env bash
# The Hopper kernel's split of a part-full last wave, on a Hopper GPU in one call: gemm.md
# against an earlier step (by default step H7, gemm.md with worklog/hopper-c-from-global.md
# and hopper-whole-waves.md, which never splits; each --base-change FILE names the earlier
# step's change files instead), the two taking turns
# in one run (compare_gpu.py, TN); then, with gemm.md's build, the split's share (--split-k=1
# against the choice) and every kernel at each problem (--kernel=all, whose report names the
# fastest); and a problem whose last wave is split, verified in full for each 16-bit pair.
# Every run is cut off after 120 s.
#
#   bash scripts/last_wave_gpu.sh [--base-change FILE...] [SIZES]    SIZES: N or MxNxK, comma-separated
#
# Results go to $OUT (default build/last-wave).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/last-wave}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
base=()
while [ "${1:-}" = "--base-change" ]; do
    [ $# -ge 2 ] || { echo "usage: bash scripts/last_wave_gpu.sh [--base-change FILE...] [SIZES]" >&2; exit 2; }
    base+=(--base-change "$2")
    shift 2
done
[ ${#base[@]} -gt 0 ] || base=(--base-change hopper-c-from-global --base-change hopper-whole-waves)
sizes=${1:-512,768,1024,256x256x8192,4096x11008x4096}
pairs=$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import gemmlib
print(" ".join(gemmlib.hopper_pairs(native=True)))') || exit 1
python3 scripts/compare_gpu.py "${base[@]}" --sizes "$sizes" --layouts TN --timeout 120 \
    --rounds 3 --out "$OUT/compare.csv" 2>&1 | tee "$OUT/compare.txt"
compared=${PIPESTATUS[0]}
failed=0
first=$(echo $pairs | cut -d' ' -f1)
{ echo -n "options,"; build/compare/new-$first-TN --csv-header; } > "$OUT/runs.csv"
run() {   # run PAIR OPTIONS SIZE...: one CSV run of the new build, its options in the first column
    local pair=$1 options=$2
    shift 2
    timeout 120 build/compare/new-$pair-TN "$@" $options --csv > "$OUT/run.tmp" 2> "$OUT/run.err" || {
        failed=1; echo "FAIL $pair $* $options: $(tail -n 2 "$OUT/run.err")"; }
    sed "s/^/\"$options\",/" "$OUT/run.tmp" >> "$OUT/runs.csv"
}
for pair in $pairs; do
    # 1 of its 133 tiles 256 wide in 8 slices, the other 132 whole
    run "$pair" "--kernel=wgmma --verify=full --cublas=off --repeat 1" 769 4751 2100
    for size in ${sizes//,/ }; do
        dims=${size//x/ }
        [ "$size" = "${size/x/}" ] && dims="$size $size $size"
        run "$pair" "--kernel=wgmma --split-k=1 --repeat 20" $dims
        run "$pair" "--kernel=all --repeat 20" $dims
    done
done
rm -f "$OUT/run.tmp" "$OUT/run.err"
echo "runs: $(($(wc -l < "$OUT/runs.csv") - 1)) lines in $OUT/runs.csv"
[ "$compared" = 0 ] && [ "$failed" = 0 ]
