#!/usr/bin/env bash
# The double kernel (--kernel=dmma) on a Hopper GPU: each K of its mma.sync form (DMMA_K),
# checked in every layout at an awkward size and timed at 8192^3 in the layout TN beside the
# WMMA tiled kernel and cuBLAS, every tile in turn. Builds go to build/dmma/, results to $OUT.
#
#   OUT=build/dmma-out bash scripts/dmma_gpu.sh [K ...]      (default: 4 8)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/dmma-out}
mkdir -p "$OUT" build/dmma
ks=${*:-4 8}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
[ -f COMMIT ] && cat COMMIT
build() {   # K TRANSPOSE_A TRANSPOSE_B
    local src=build/dmma/gemm-$1-$2$3.cu
    python3 tangle.py gemm.md -o "$src" &&
    nvcc -O3 -std=c++17 -lineinfo -gencode arch=compute_90a,code=sm_90a -DTYPE_FROM_MAKE \
        -DF64_IN_OUT -DTRANSPOSE_A=$2 -DTRANSPOSE_B=$3 -DUSE_CUBLAS=1 -DDMMA_K=$1 \
        -o build/dmma/gemm-$1-$2$3 "$src" -lcublas
}
for k in $ks; do for ta in 0 1; do for tb in 0 1; do build $k $ta $tb & done; done; done
wait
status=0
for k in $ks; do
    for ta in 0 1; do for tb in 0 1; do
        g=build/dmma/gemm-$k-$ta$tb
        [ -x $g ] || { echo "K=$k A^T=$ta B^T=$tb: no build"; status=1; continue; }
        for size in "2047 2049 1023" "1 1 1" "17 33 65"; do
            $g $size --kernel=dmma --tile=all --verify=full --csv >> "$OUT/dmma-check.csv" ||
                { echo "FAILED: K=$k A^T=$ta B^T=$tb $size"; status=1; }
        done
        $g 2047 2049 1023 --kernel=dmma --split-k=3 --verify=full --csv >> "$OUT/dmma-check.csv" ||
            { echo "FAILED: K=$k A^T=$ta B^T=$tb split"; status=1; }
    done; done
    build/dmma/gemm-$k-01 8192 8192 8192 --tile=all --kernel=all --verify=sample --csv --repeat 10 \
        | tee -a "$OUT/dmma-8192.csv" | cut -d, -f13,17,20,23,27
done
echo "check lines: $(wc -l < "$OUT/dmma-check.csv"), failed: $(grep -c ',fail' "$OUT/dmma-check.csv")"
exit $status
