#!/usr/bin/env bash
# The prototype's first runs on a Hopper GPU (one call, one build):
#   1. build for sm_90a with the ptxas register/spill report       -> hopper-build.txt
#   2. correctness: 3 type pairs x 4 layouts x sizes "128 256 64", "129 264 72",
#      "1000 1000 1000"; every element compared with cuBLAS, ~1000 sampled
#      elements with a CPU double reference (--check)                  -> hopper-check.txt
#   3. layout decoders (--diag a|b) for the 4 layouts at 128 256 64   -> hopper-diag.txt
#   4. speed at 8192^3 (--repeat 20) for the 3 pairs, ta=0 tb=1 and
#      ta=0 tb=0, beside cuBLAS                                        -> hopper-speed.txt
#   5. compute-sanitizer memcheck at 129 257 72 for two variants       -> hopper-memcheck.txt
#   and every "FAILED: ..." line again                                  -> hopper-summary.txt
# Every run is under `timeout`; a failing run prints "FAILED: <what> (exit N)".
# Expected total: about 3-5 minutes (build ~40 s, 36 checks ~1-2 s each, 6 speed
# runs ~5 s each, memcheck <= 1-2 min).  If the whole script passes BUDGET
# seconds (default 480), the remaining runs are skipped and reported as FAILED.
#   OUT=dir bash hopper/run_gpu.sh
set -u
cd "$(dirname "$0")" || exit 1
OUT=${OUT:-.}
mkdir -p "$OUT"
BUDGET=${BUDGET:-480}

# run <timeout-seconds> <label> command...
run() {
    local t=$1 label=$2
    shift 2
    echo "== $label"
    if (( SECONDS > BUDGET )); then
        echo "FAILED: $label (skipped: the script's ${BUDGET} s budget is used up)"
        return
    fi
    timeout "$t" "$@"
    local rc=$?
    if [ "$rc" -ne 0 ]; then
        local why=""
        [ "$rc" -eq 124 ] && why=", timed out after ${t} s"
        [ "$rc" -eq 1 ] && why=", numerical check failed"
        [ "$rc" -eq 2 ] && why=", usage/CUDA/cuBLAS error"
        [ "$rc" -eq 3 ] && why=", not a Hopper GPU"
        [ "$rc" -eq 9 ] && why=", memcheck reported errors"
        echo "FAILED: $label (exit $rc$why)"
    fi
}

rm -f wgmma_proto
sh build.sh -v 2>&1 | tee "$OUT/hopper-build.txt"
if [ ! -x ./wgmma_proto ]; then
    echo "FAILED: build" | tee "$OUT/hopper-summary.txt"
    exit 1
fi

TYPES="F16_IN_F32_OUT BF16_IN_F32_OUT F16_IN_OUT"
LAYOUTS="0:1 0:0 1:1 1:0"          # ta:tb; 0:1 is the original (A K-major, B K-major)

for t in $TYPES; do
    for l in $LAYOUTS; do
        ta=${l%:*}; tb=${l#*:}
        for mnk in "128 256 64" "129 264 72" "1000 1000 1000"; do
            run 30 "$t ta=$ta tb=$tb $mnk" ./wgmma_proto $mnk --type "$t" --ta "$ta" --tb "$tb" --check --repeat 0
        done
    done
done 2>&1 | tee "$OUT/hopper-check.txt"

for l in $LAYOUTS; do
    ta=${l%:*}; tb=${l#*:}
    for d in a b; do
        run 30 "diag $d F16_IN_F32_OUT ta=$ta tb=$tb 128 256 64" \
            ./wgmma_proto 128 256 64 --type F16_IN_F32_OUT --ta "$ta" --tb "$tb" --diag "$d"
    done
done 2>&1 | tee "$OUT/hopper-diag.txt"

for l in "0:1" "0:0"; do
    ta=${l%:*}; tb=${l#*:}
    for t in $TYPES; do
        run 120 "speed $t ta=$ta tb=$tb 8192 8192 8192" \
            ./wgmma_proto 8192 8192 8192 --type "$t" --ta "$ta" --tb "$tb" --check --repeat 20
    done
done 2>&1 | tee "$OUT/hopper-speed.txt"

{
    SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
    if [ -z "$SAN" ]; then
        echo "FAILED: memcheck (compute-sanitizer not found)"
    else
        for v in "F16_IN_OUT 1 0" "BF16_IN_F32_OUT 0 0"; do
            set -- $v
            run 200 "memcheck $1 ta=$2 tb=$3 129 257 72" \
                "$SAN" --tool memcheck --error-exitcode 9 ./wgmma_proto 129 257 72 --type "$1" \
                --ta "$2" --tb "$3" --repeat 0
        done
    fi
} 2>&1 | tee "$OUT/hopper-memcheck.txt"

{
    echo "elapsed ${SECONDS} s"
    cat "$OUT"/hopper-build.txt "$OUT"/hopper-check.txt "$OUT"/hopper-diag.txt \
        "$OUT"/hopper-speed.txt "$OUT"/hopper-memcheck.txt | grep -E "FAILED|BUILD WARNING" || echo "no FAILED lines"
    grep -h "^\[time\] ratio" "$OUT"/hopper-speed.txt
} | tee "$OUT/hopper-summary.txt"
