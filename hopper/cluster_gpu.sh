#!/usr/bin/env bash
# The prototype's clusters after the change of their remote arrivals (no cluster-scope
# release, which compiles to a GPU-wide memory fence per consumer warp and step): every
# layout of the three pairs with --cluster 2 --group 8 checked at two sizes, memcheck of one,
# and the speed at 8192^3 with --group 8, without and with clusters, beside cuBLAS.
# Needs a Hopper GPU; about a minute. Writes $OUT/cluster.txt and prints its summary.
#   OUT=dir bash hopper/cluster_gpu.sh
set -u
cd "$(dirname "$0")" || exit 1
OUT=${OUT:-.}
mkdir -p "$OUT"
command -v nvidia-smi >/dev/null 2>&1 || { echo "cluster_gpu: no GPU: nvidia-smi is not on PATH" >&2; exit 3; }
rm -f wgmma_proto
sh build.sh > "$OUT/cluster-build.txt" 2>&1
[ -x ./wgmma_proto ] || { cat "$OUT/cluster-build.txt"; echo "FAILED: build"; exit 1; }
log="$OUT/cluster.txt"
: > "$log"
for t in F16_IN_F32_OUT BF16_IN_F32_OUT F16_IN_OUT; do
    for l in 0:1 0:0 1:1 1:0; do
        for mnk in "300 520 77" "1000 1000 1000"; do
            echo "== check cluster 2 group 8 $t $l $mnk" >> "$log"
            timeout 30 ./wgmma_proto $mnk --type "$t" --ta "${l%:*}" --tb "${l#*:}" --cluster 2 \
                --group 8 --check --repeat 0 >> "$log" 2>&1 || echo "FAILED: check $t $l $mnk (exit $?)" >> "$log"
        done
    done
done
echo "== memcheck cluster 2 129 257 72" >> "$log"
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
timeout 120 "$SAN" --tool memcheck --error-exitcode 9 ./wgmma_proto 129 257 72 --cluster 2 \
    --group 8 --repeat 0 >> "$log" 2>&1 || echo "FAILED: memcheck (exit $?)" >> "$log"
for tl in F16_IN_F32_OUT:0:1 BF16_IN_F32_OUT:0:0 F16_IN_OUT:0:1; do
    IFS=: read -r t ta tb <<< "$tl"
    for c in 1 2; do
        echo "== speed $t ta=$ta tb=$tb group 8 cluster $c" >> "$log"
        timeout 60 ./wgmma_proto 8192 8192 8192 --type "$t" --ta "$ta" --tb "$tb" --group 8 --cluster "$c" \
            --check --repeat 20 >> "$log" 2>&1 || echo "FAILED: speed $t $c (exit $?)" >> "$log"
    done
done
grep -c "correctness: PASS" "$log" | sed 's/^/checks passed: /'
grep -E "^FAILED|ERROR SUMMARY|ratio wgmma" "$log"
exit 0
