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
#   bash scripts/gpu_session.sh choices [ARGS]
#                                         the Hopper kernel's widths and splits (choices_gpu.py)
#   bash scripts/gpu_session.sh floors --part I/N
#                                         the Hopper kernel against its floors (floors.py run)
#   bash scripts/gpu_session.sh compare ARGS
#                                         a build against another, taking turns (compare_gpu.py)
#
# Each piece first prints the GPU, its clocks and the commit, so that the
# logs say where and on what they were measured. The scripts it runs find the
# GPU, and say so in one line when there is none.
set -u
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bash scripts/gpu_session.sh check|worklog|parts|sweep|choices|floors|compare [ARGS]" >&2; exit 2; }
piece=$1
shift
case $piece in
    check|worklog|parts|sweep|choices|floors|compare) ;;
    *) echo "gpu_session: no piece called '$piece'" >&2; exit 2 ;;
esac
OUT=${OUT:-build/session}
mkdir -p "$OUT"
log=$piece   # with --part I/N, the logs of piece-I, so that several parts in one call keep theirs
args=" $* "
case $args in
    *" --part "*) part=${args#* --part }; log=$piece-${part%%/*} ;;
esac
export PYTHONUNBUFFERED=1
. scripts/gpu_header.sh
gpu_header > "$OUT/gpu-$log.txt"
cat "$OUT/gpu-$log.txt"
case $piece in
    check)   cmd=(python3 scripts/check_gpu.py --out "$OUT" "$@") ;;
    worklog) cmd=(python3 scripts/worklog.py run "$@" --out "$OUT") ;;
    parts)   cmd=(python3 scripts/worklog.py run --no-steps --parts all --out "$OUT") ;;
    sweep)   cmd=(python3 scripts/sweep.py run "$@" --out "$OUT") ;;
    choices) cmd=(python3 scripts/choices_gpu.py "$@" --out "$OUT/choices.csv") ;;
    floors)  cmd=(python3 scripts/floors.py run "$@" --out "$OUT") ;;
    compare) cmd=(python3 scripts/compare_gpu.py "$@" --out "$OUT/compare.csv") ;;
esac
"${cmd[@]}" 2>&1 | tee "$OUT/$log.txt"
exit "${PIPESTATUS[0]}"
