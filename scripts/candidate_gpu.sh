#!/usr/bin/env bash
# A change to the Hopper kernel, tried on a GPU in one call: the quick GPU check of every pair
# the kernel takes (./gemm --describe), then the kernel as gemm.md builds it against BASE.md,
# taking turns in one run (compare_gpu.py, at 8192^3, 4096^3 and 3000^3, TN, unless told).
#
#   bash scripts/candidate_gpu.sh BASE.md [compare_gpu.py options]
#
# Results go to $OUT (default build/candidate).
set -u
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bash scripts/candidate_gpu.sh BASE.md [compare_gpu.py options]" >&2; exit 2; }
base=$1
shift
OUT=${OUT:-build/candidate}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
pairs=$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import gemmlib
print(",".join(p for p, e in gemmlib.pairs().items() if "wgmma" in e["kernels"]))') || exit 1
python3 scripts/check_gpu.py --quick --only "$pairs" --out "$OUT" > "$OUT/check.txt" 2>&1
checked=$?
tail -n 4 "$OUT/check.txt"
python3 scripts/compare_gpu.py --base "$base" --sizes 8192,4096,3000 --layouts TN --rounds 3 \
    --out "$OUT/compare.csv" "$@" 2>&1 | tee "$OUT/compare.txt"
compared=${PIPESTATUS[0]}
[ "$checked" = 0 ] && [ "$compared" = 0 ]
