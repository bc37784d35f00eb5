#!/usr/bin/env bash
# The prototype's first runs on a Hopper GPU: build for sm_90a, then tiny, odd and large
# sizes with every element compared with cuBLAS (and samples with a CPU reference), the
# speed at 4096^3 and 8192^3 beside cuBLAS, and memcheck at an odd size.
#   OUT=dir bash hopper/run_gpu.sh
set -u
cd "$(dirname "$0")"
OUT=${OUT:-.}
sh build.sh || exit 1
for mnk in "128 256 64" "128 256 128" "256 512 512" "129 257 72" "1 1 8" "1000 999 1000"; do
    echo "== $mnk"
    timeout 60 ./wgmma_proto $mnk --check --repeat 0 || echo "FAILED: $mnk (exit $?)"
done 2>&1 | tee "$OUT/hopper-check.txt"
for mnk in "4096 4096 4096" "8192 8192 8192"; do
    echo "== $mnk"
    timeout 120 ./wgmma_proto $mnk --check --repeat 20 || echo "FAILED: $mnk (exit $?)"
done 2>&1 | tee "$OUT/hopper-speed.txt"
command -v compute-sanitizer >/dev/null &&
    timeout 300 compute-sanitizer --tool memcheck ./wgmma_proto 129 257 72 --repeat 0 2>&1 |
    tail -n 20 | tee "$OUT/hopper-memcheck.txt"
