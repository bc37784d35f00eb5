#!/usr/bin/env bash
# A change to the Hopper kernel, tried on a GPU in one call: the quick GPU check of every pair
# the kernel takes (./gemm --describe), then the kernel as gemm.md builds it against BASE.md,
# taking turns in one run (compare_gpu.py, at 8192^3, 4096^3 and 3000^3, TN, unless told).
# With --change FILE (as often as needed), the candidate is gemm.md with those change files of
# worklog/ (a variant such as hopper-ping-pong, which was built on step H8: --change
# hopper-c-from-global --change hopper-ping-pong), checked and timed against gemm.md.
#
#   bash scripts/candidate_gpu.sh BASE.md [compare_gpu.py options]
#   bash scripts/candidate_gpu.sh --change FILE [--change FILE...] [compare_gpu.py options]
#
# Before both, the candidate runs once at 512^3 and once at 4096^3 for the first of those pairs,
# with 60 s each: a change that hangs (a barrier that never completes) stops the script there,
# not after 300 s for each run of the check.
#
# Results go to $OUT (default build/candidate).
set -u
cd "$(dirname "$0")/.."
usage="usage: bash scripts/candidate_gpu.sh BASE.md|--change FILE [--change FILE...] [compare_gpu.py options]"
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
checked_change=() new_change=() base=
while [ "${1:-}" = "--change" ]; do
    [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
    checked_change+=(--change "$2") new_change+=(--new-change "$2") base=gemm.md
    shift 2
done
if [ -z "$base" ]; then
    base=$1
    shift
fi
OUT=${OUT:-build/candidate}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
pairs=$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import gemmlib
print(",".join(gemmlib.hopper_pairs()))') || exit 1
smoke=${pairs%%,*}
python3 scripts/smoke_gpu.py "$smoke" "${checked_change[@]}" 2>&1 | tee "$OUT/smoke.txt"
[ "${PIPESTATUS[0]}" = 0 ] || exit 1
python3 scripts/check_gpu.py --quick --only "$pairs" "${checked_change[@]}" --out "$OUT" > "$OUT/check.txt" 2>&1
checked=$?
tail -n 4 "$OUT/check.txt"
python3 scripts/compare_gpu.py --base "$base" "${new_change[@]}" --sizes 8192,4096,3000 --layouts TN --rounds 3 \
    --timeout 120 --out "$OUT/compare.csv" "$@" 2>&1 | tee "$OUT/compare.txt"
compared=${PIPESTATUS[0]}
[ "$checked" = 0 ] && [ "$compared" = 0 ]
