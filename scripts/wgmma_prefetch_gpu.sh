#!/usr/bin/env bash
# The Hopper kernel with C prefetched into L2 (worklog/hopper-prefetch-c.md) beside the
# shipped one: first its check (the three 16-bit pairs, all four layouts, the GPU check's
# awkward sizes with full verification and 8192^3 sampled, --kernel=wgmma), then its speed
# at 8192^3 and 4096^3 in the layout TN, prefetching 8 or 24 steps ahead, against the shipped
# kernel, runs alternating, cuBLAS in each. Needs a Hopper GPU; about two minutes.
# Writes $OUT/prefetch-check.txt and $OUT/prefetch-speed.csv.
#   OUT=dir bash scripts/wgmma_prefetch_gpu.sh
set -u
cd "$(dirname "$0")/.."
. scripts/gpu_env.sh wgmma_prefetch_gpu hopper
OUT=${OUT:-build/wgmma-prefetch}
dir=build/wgmma-prefetch
rm -rf "$dir" && mkdir -p "$OUT" "$dir"
python3 tangle.py gemm.md -o "$dir/shipped.cu" || exit 1
python3 tangle.py gemm.md --change worklog/hopper-prefetch-c.md -o "$dir/prefetch.cu" || exit 1
PAIRS="F16_IN_F32_OUT F16_IN_OUT BF16_IN_F32_OUT"
{
    for t in $PAIRS; do
        for l in 00 01 10 11; do
            echo "nvcc -O3 -std=c++17 $target -DTYPE_FROM_MAKE -D$t -DMNK_FROM_MAKE -DTRANSPOSE_A=${l:0:1} -DTRANSPOSE_B=${l:1:1} -DUSE_CUBLAS=1 -o $dir/p8-$t-$l $dir/prefetch.cu -lcublas"
        done
        echo "nvcc -O3 -std=c++17 $target -DTYPE_FROM_MAKE -D$t -DMNK_FROM_MAKE -DTRANSPOSE_A=0 -DTRANSPOSE_B=1 -DUSE_CUBLAS=1 -DHOPPER_PREFETCH_C=24 -o $dir/p24-$t-01 $dir/prefetch.cu -lcublas"
        echo "nvcc -O3 -std=c++17 $target -DTYPE_FROM_MAKE -D$t -DMNK_FROM_MAKE -DTRANSPOSE_A=0 -DTRANSPOSE_B=1 -DUSE_CUBLAS=1 -o $dir/shipped-$t-01 $dir/shipped.cu -lcublas"
    done
} | xargs -P 16 -I{} sh -c "{} || echo BUILD FAILED: {}"
check="$OUT/prefetch-check.txt"
: > "$check"
one() {   # one BINARY M N K: a verified run of the Hopper kernel alone
    local b=$1; shift
    if timeout 120 "$b" "$@" --kernel=wgmma --warmup 1 --repeat 2 > "$b.$1x$2x$3.log" 2>&1; then
        echo "PASS $(basename "$b") $1x$2x$3"
    else
        echo "FAIL $(basename "$b") $1x$2x$3 (exit $?)"; tail -n 5 "$b.$1x$2x$3.log"
    fi
}
export -f one
for t in $PAIRS; do for l in 00 01 10 11; do
    for mnk in "1 1 1" "7 5 3" "17 33 65" "300 200 100" "2047 2049 1023" "1 4096 1" "4096 1 4096" "8192 8192 8192"; do
        echo "$dir/p8-$t-$l $mnk"
    done
done; done | xargs -P 8 -L 1 bash -c 'one "$@"' _ >> "$check"
echo "check: $(grep -c '^PASS' "$check") passed, $(grep -c '^FAIL' "$check") failed"
csv="$OUT/prefetch-speed.csv"
"$dir/shipped-F16_IN_F32_OUT-01" --csv-header | sed 's/^/variant,/' > "$csv"
for n in 8192 4096; do
    for round in 1 2; do
        [ "$n" = 4096 ] && [ "$round" = 2 ] && continue
        for t in $PAIRS; do for v in shipped p8 p24; do
            timeout 60 "$dir/$v-$t-01" $n $n $n --kernel=wgmma --verify=sample --csv --warmup 5 --repeat 20 \
                | grep '^"' | sed "s/^/$v,/" >> "$csv" || echo "FAILED: $v $t $n"
        done; done
    done
done
python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    if r["impl"] == "wgmma":
        c = next(x for x in rows[rows.index(r):] if x["impl"] == "cublas")
        print(f'{r["variant"]:8} {r["type"]:16} {r["M"]:>5}^3 {float(r["etops"]):6.0f} eTOPS, cuBLAS {float(c["etops"]):6.0f}: '
              f'{100 * float(r["etops"]) / float(c["etops"]):5.1f} %  {r["result"]}')
PY
