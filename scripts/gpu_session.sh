#!/usr/bin/env bash
# The runs that check and measure gemm.md on a GPU, in pieces that each end
# well inside ten minutes on an H100, so that each fits one call of a lent
# machine. Everything is written to $OUT (default build/session):
#
#   bash scripts/gpu_session.sh check     the GPU check (make check-gpu), its results and logs
#   bash scripts/gpu_session.sh worklog [--types T1,T2]
#                                         every step of the worklog at 8192^3 (worklog.py run)
#   bash scripts/gpu_session.sh parts     the measurement builds of the shipped kernel
#   bash scripts/gpu_session.sh sweep     the sweep's measurements (sweep.py run; report elsewhere)
#   bash scripts/gpu_session.sh tiles     every tile of every pair over the sweep's sizes (tiles_gpu.sh)
#   bash scripts/gpu_session.sh long-k    small M x N with a long K, every tile (long_k_gpu.sh)
#   bash scripts/gpu_session.sh hopper    the Hopper prototype's first runs (hopper/run_gpu.sh)
#   bash scripts/gpu_session.sh wgmma     the Hopper kernel's block order, and the 16-bit sweep (wgmma_gpu.sh)
#   bash scripts/gpu_session.sh wgmma-small  the Hopper kernel's cost at small sizes (wgmma_small_gpu.sh)
#   bash scripts/gpu_session.sh wgmma-spread the spread of its launch times at 8192^3 (wgmma_spread_gpu.sh)
#   bash scripts/gpu_session.sh wgmma-prefetch  the variant that prefetches C into L2 (wgmma_prefetch_gpu.sh)
#
# Each piece first prints the GPU, its clocks and the commit, so that the
# logs say where and on what they were measured.
set -u
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bash scripts/gpu_session.sh check|worklog|parts|sweep|tiles|long-k|hopper|wgmma|wgmma-small|wgmma-spread|wgmma-prefetch [ARGS]" >&2; exit 2; }
piece=$1
shift
. scripts/gpu_env.sh gpu_session
OUT=${OUT:-build/session}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
    nvcc --version | tail -n 1
    date -u '+%Y-%m-%d %H:%M UTC'
    [ -f COMMIT ] && cat COMMIT
} | tee "$OUT/gpu-$piece.txt"
case $piece in
    check)   JOBS=16 bash scripts/check_gpu.sh 2>&1 | tee "$OUT/check.txt" ;;
    worklog) python3 scripts/worklog.py run "$@" --out "$OUT" 2>&1 | tee "$OUT/worklog.txt" ;;
    parts)   python3 scripts/worklog.py run --no-steps --parts all --out "$OUT" 2>&1 | tee "$OUT/parts.txt" ;;
    sweep)   python3 scripts/sweep.py run "$@" --out "$OUT" 2>&1 | tee "$OUT/sweep.txt" ;;
    tiles)   OUT=$OUT bash scripts/tiles_gpu.sh "$@" 2>&1 | tee "$OUT/tiles.txt" ;;
    long-k)  OUT=$OUT bash scripts/long_k_gpu.sh 2>&1 | tee "$OUT/long-k.txt" ;;
    hopper)  OUT=$OUT bash hopper/run_gpu.sh 2>&1 | tee "$OUT/hopper.txt" ;;
    wgmma)   OUT=$OUT bash scripts/wgmma_gpu.sh 2>&1 | tee "$OUT/wgmma.txt" ;;
    wgmma-small) OUT=$OUT bash scripts/wgmma_small_gpu.sh 2>&1 | tee "$OUT/wgmma-small-log.txt" ;;
    wgmma-spread) OUT=$OUT bash scripts/wgmma_spread_gpu.sh 2>&1 | tee "$OUT/wgmma-spread-log.txt" ;;
    wgmma-prefetch) OUT=$OUT bash scripts/wgmma_prefetch_gpu.sh 2>&1 | tee "$OUT/wgmma-prefetch-log.txt" ;;
    *)       echo "gpu_session: no piece called '$piece'" >&2; exit 2 ;;
esac
