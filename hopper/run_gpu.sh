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
#   6. steps (block order --group, 2-CTA clusters --cluster 2), folded into the
#      files above (at most 7 files go to $OUT; this script writes 6):
#      0. one --cluster 2 smoke run; if it hangs, traps or errors (anything but
#         a numerical mismatch), every later --cluster 2 run is skipped and
#         reported "FAILED: ... (skipped: cluster smoke run failed)"  -> hopper-check.txt
#      a. correctness of --cluster 2 --group 8, 3 pairs x 4 layouts x sizes
#         "128 256 64", "129 264 72", "300 520 77", "1000 1000 1000" (--check),
#         plus a partial last group (--group 3 / --group 6 --cluster 2)  -> hopper-check.txt
#      b. --diag b with --cluster 2, tb=1 and tb=0, at 256 512 128      -> hopper-diag.txt
#      c. speed at 8192^3 (--repeat 20, --check) for F16_IN_F32_OUT 0:1,
#         BF16_IN_F32_OUT 0:0 and F16_IN_OUT 0:1: (group 1, cluster 1),
#         (group 8 / 16, cluster 1), (group 8 / 16, cluster 2)          -> hopper-speed.txt
#      d. memcheck of --cluster 2 at 129 257 72                         -> hopper-memcheck.txt
#   and every "FAILED: ..." line again, then every ratio line           -> hopper-summary.txt
# Every run is under `timeout`; a failing run prints "FAILED: <what> (exit N)".
# Expected total: about 2.5-4 minutes on an H100 (sections 1-5 took 60 s; the
# steps add ~50 short checks and 15 runs at 8192^3 of a few seconds each).  If
# the whole script passes BUDGET seconds (default 380), the remaining runs are
# skipped and reported as FAILED (so that it ends well inside a 600 s limit).
#   OUT=dir bash hopper/run_gpu.sh
set -u
cd "$(dirname "$0")" || exit 1
OUT=${OUT:-.}
mkdir -p "$OUT"
BUDGET=${BUDGET:-380}

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
    return $rc
}

# crun: run, unless the cluster smoke run (step 0) failed other than numerically.
CLUSTER_SKIP=""
crun() {
    if [ -n "$CLUSTER_SKIP" ]; then
        echo "== $2"
        echo "FAILED: $2 (skipped: cluster smoke run failed with exit $CLUSTER_SKIP)"
        return
    fi
    run "$@"
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

# ---------------------------------- steps ----------------------------------
# 0. smoke run of the cluster path (an even pair count, a clamped B half)
run 30 "cluster smoke: cluster 2 group 8 F16_IN_F32_OUT ta=0 tb=1 129 264 72" ./wgmma_proto \
    129 264 72 --cluster 2 --group 8 --check --repeat 0 2>&1 | tee -a "$OUT/hopper-check.txt"
smoke_rc=${PIPESTATUS[0]}
if [ "$smoke_rc" -ne 0 ] && [ "$smoke_rc" -ne 1 ]; then CLUSTER_SKIP=$smoke_rc; fi

# a. correctness with clusters + grouped order.  "128 256 64" and "300 520 77"
#    have an odd number of block rows (the pair's second block lies past M and
#    must load/release but not store); "129 264 72" and "300 520 77" have a
#    last N block whose second B half starts past N (clamped load); K = 1000
#    runs 16 k-tiles = 4 rounds of the 4 stages (barrier parity wraps).
for t in $TYPES; do
    for l in $LAYOUTS; do
        ta=${l%:*}; tb=${l#*:}
        for mnk in "128 256 64" "129 264 72" "300 520 77" "1000 1000 1000"; do
            crun 30 "cluster 2 group 8 $t ta=$ta tb=$tb $mnk" ./wgmma_proto $mnk --type "$t" \
                --ta "$ta" --tb "$tb" --cluster 2 --group 8 --check --repeat 0
        done
    done
done 2>&1 | tee -a "$OUT/hopper-check.txt"
{
    # partial last group: 8 block rows in groups of 3 (3+3+2); 4 cluster rows
    # in groups of 3 (3+1)
    for l in "0:1" "1:0"; do
        ta=${l%:*}; tb=${l#*:}
        run 30 "group 3 cluster 1 F16_IN_F32_OUT ta=$ta tb=$tb 1000 1000 1000" ./wgmma_proto \
            1000 1000 1000 --ta "$ta" --tb "$tb" --group 3 --check --repeat 0
        crun 30 "group 6 cluster 2 F16_IN_F32_OUT ta=$ta tb=$tb 1000 1000 1000" ./wgmma_proto \
            1000 1000 1000 --ta "$ta" --tb "$tb" --group 6 --cluster 2 --check --repeat 0
    done
} 2>&1 | tee -a "$OUT/hopper-check.txt"

# b. layout decoder with clusters: shows which B element each D element got
#    (a wrong half offset / box would show up as dn = +-128 or +-64).
for tb in 1 0; do
    crun 30 "diag b cluster 2 F16_IN_F32_OUT ta=0 tb=$tb 256 512 128" \
        ./wgmma_proto 256 512 128 --type F16_IN_F32_OUT --ta 0 --tb "$tb" --cluster 2 --diag b
done 2>&1 | tee -a "$OUT/hopper-diag.txt"

# c. speed steps at 8192^3, each beside its own cuBLAS timing (ratio line).
for v in "F16_IN_F32_OUT 0 1" "BF16_IN_F32_OUT 0 0" "F16_IN_OUT 0 1"; do
    set -- $v
    for gc in "1 1" "8 1" "16 1" "8 2" "16 2"; do
        g=${gc% *}; c=${gc#* }
        r=run; [ "$c" -gt 1 ] && r=crun
        $r 120 "step group $g cluster $c $1 ta=$2 tb=$3 8192 8192 8192" \
            ./wgmma_proto 8192 8192 8192 --type "$1" --ta "$2" --tb "$3" --group "$g" \
            --cluster "$c" --check --repeat 20
    done
done 2>&1 | tee -a "$OUT/hopper-speed.txt"

# d. memcheck of the cluster path (remote arrives, multicast, exit barrier).
{
    SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
    if [ -z "$SAN" ]; then
        echo "FAILED: memcheck cluster 2 (compute-sanitizer not found)"
    else
        crun 180 "memcheck cluster 2 group 8 F16_IN_F32_OUT ta=0 tb=1 129 257 72" \
            "$SAN" --tool memcheck --error-exitcode 9 ./wgmma_proto 129 257 72 \
            --type F16_IN_F32_OUT --ta 0 --tb 1 --cluster 2 --group 8 --repeat 0
    fi
} 2>&1 | tee -a "$OUT/hopper-memcheck.txt"

{
    echo "elapsed ${SECONDS} s"
    cat "$OUT"/hopper-build.txt "$OUT"/hopper-check.txt "$OUT"/hopper-diag.txt \
        "$OUT"/hopper-speed.txt "$OUT"/hopper-memcheck.txt | grep -E "FAILED|BUILD WARNING" || echo "no FAILED lines"
    grep -h "^\[time\] ratio" "$OUT"/hopper-speed.txt
    grep -h -m1 "clusters of 2 resident" "$OUT"/hopper-speed.txt
} | tee "$OUT/hopper-summary.txt"
