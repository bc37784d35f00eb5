#!/usr/bin/env bash
# New type pairs' first call on a GPU: for each pair, the smoke run of its Hopper kernel (512^3
# and 4096^3, 60 s each, so that a hang costs a minute), then ./gemm at 8192^3 in TN and NN
# (--verify=sample --repeat 20, cuBLAS in the same run), then the GPU check of all of them
# (check_gpu.py --only: every layout, awkward sizes, split K, beta 0, memcheck). With --base
# PAIR, that pair runs at 8192^3 in TN first, as the yardstick of the same call.
#
#   bash scripts/new_pairs_gpu.sh [--base PAIR] PAIR [PAIR...]
#
# Results go to $OUT (default build/new-pairs): smoke-PAIR.txt, PAIR-01-8192.txt (TN) and
# PAIR-00-8192.txt (NN), and the check's files. The exit status is the first failure's.
set -u
cd "$(dirname "$0")/.."
usage="usage: bash scripts/new_pairs_gpu.sh [--base PAIR] PAIR [PAIR...]"
base=
if [ "${1:-}" = "--base" ]; then
    [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
    base=$2
    shift 2
fi
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
if [ -z "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)" ]; then
    echo "new_pairs: no GPU (nvidia-smi lists none): run it on a machine with one" >&2
    exit 1
fi
OUT=${OUT:-build/new-pairs}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
. scripts/gpu_header.sh
gpu_header | tee "$OUT/gpu-new-pairs.txt"
status=0

at_8192() {   # PAIR TRANSPOSE_B: built as a user builds it (make), run, its report kept
    local pair=$1 tb=$2
    make -s TYPE="$pair" TRANSPOSE_A=0 TRANSPOSE_B="$tb" || return 1
    timeout 300 ./gemm 8192 8192 8192 --verify=sample --repeat 20 > "$OUT/$pair-0$tb-8192.txt" 2>&1
    local rc=$?
    tail -n 25 "$OUT/$pair-0$tb-8192.txt"
    return $rc
}

if [ -n "$base" ]; then
    at_8192 "$base" 1 || status=$?
fi
for pair in "$@"; do
    python3 scripts/smoke_gpu.py "$pair" --build "build/smoke-$pair" > "$OUT/smoke-$pair.txt" 2>&1
    rc=$?
    cat "$OUT/smoke-$pair.txt"
    if [ $rc -ne 0 ]; then
        echo "new_pairs: $pair failed its smoke run; its other runs are skipped" >&2
        [ $status -eq 0 ] && status=$rc
        continue
    fi
    for tb in 1 0; do
        at_8192 "$pair" $tb || { rc=$?; [ $status -eq 0 ] && status=$rc; }
    done
done
[ $status -eq 0 ] || exit $status
pairs=$(IFS=,; echo "$*")
{ cat "$OUT/gpu-new-pairs.txt"; python3 scripts/check_gpu.py --only "$pairs" --out "$OUT" 2>&1; } |
    tee "$OUT/check.txt"
exit "${PIPESTATUS[0]}"
