#!/usr/bin/env bash
# The GPU check: builds every valid configuration of gemm.md for the GPU in this
# machine, runs each (both kernels, the tiled one with every tile in turn, and cuBLAS
# beside them) with full verification at awkward sizes and, with the tile the program
# chooses, sampled verification at 8192^3, runs compute-sanitizer's
# memcheck and racecheck on a few of them, and ends
# with one line "N passed, N failed".
#
#   sh scripts/check_gpu.sh            (or: make check-gpu)
#   JOBS=8 QUICK=1 sh scripts/check_gpu.sh    fewer sizes, for a first look
#   ONLY="I8_IN_I32_OUT TF32_IN_F32_OUT" sh scripts/check_gpu.sh    only those type pairs
#
# Logs go to build/check/ (and to $OUT/ when that is set).
set -u
cd "$(dirname "$0")/.."

JOBS=${JOBS:-$(nproc)}
NVCC=${NVCC:-nvcc}
CUBLAS=${CUBLAS:-1}
dir=build/check

. scripts/gpu_env.sh check_gpu
rm -rf "$dir" && mkdir -p "$dir"
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)
echo "GPU: $gpu, sm_$cc; $(date -u '+%Y-%m-%d %H:%M UTC'); $($NVCC --version | tail -n 1)"

python3 tangle.py gemm.md -o "$dir/gemm.cu" || exit 1

configs=""
for t in F16_IN_F32_OUT F16_IN_OUT U8_IN_I32_OUT I8_IN_I32_OUT BF16_IN_F32_OUT; do
    for s in 16x16x16 32x8x16 8x32x16; do configs="$configs $t:$s"; done
done
configs="$configs TF32_IN_F32_OUT:16x16x8 F64_IN_OUT:8x8x4"
# ONLY="T1 T2" checks only those type pairs.
if [ -n "${ONLY:-}" ]; then
    kept=""
    for c in $configs; do case " $ONLY " in *" ${c%%:*} "*) kept="$kept $c";; esac; done
    configs=$kept
fi

libs=""; [ "$CUBLAS" = 1 ] && libs="-lcublas"
build() {   # build TYPE SHAPE TA TB
    name="$1-$2-$3$4"
    $NVCC -O3 -std=c++17 -lineinfo $target -DTYPE_FROM_MAKE -D"$1" -DMNK_FROM_MAKE -DMNK_"$2" \
        -DTRANSPOSE_A="$3" -DTRANSPOSE_B="$4" -DUSE_CUBLAS="$CUBLAS" \
        -o "$dir/$name" "$dir/gemm.cu" $libs > "$dir/$name.build.log" 2>&1 \
        || echo "BUILD FAILED $name" >> "$dir/build-failures"
}
export -f build; export NVCC cc target CUBLAS dir libs

list=""
for c in $configs; do
    for ta in 0 1; do for tb in 0 1; do list="$list ${c%%:*} ${c##*:} $ta $tb"; done; done
done
echo "building $(echo $list | wc -w | awk '{print $1/4}') configurations with $JOBS jobs..."
start=$(date +%s)
echo $list | xargs -n 4 -P "$JOBS" bash -c 'build "$@"' _
echo "built in $(( $(date +%s) - start )) s"
[ -f "$dir/build-failures" ] && cat "$dir/build-failures"

if [ "${QUICK:-0}" = 1 ]; then
    sizes="1x1x1 7x5x3 17x33x65 300x200x100"
    big=""
else
    sizes="1x1x1 7x5x3 17x33x65 300x200x100 2047x2049x1023 1x4096x1 4096x1x4096"
    big="8192x8192x8192"
fi

# One configuration's runs, one result line each: "PASS|FAIL name size mode".
one() {   # one NAME SIZE MODE WARMUP REPEAT [OPTIONS...]
    name=$1 size=$2 mode=$3 warmup=$4 repeat=$5; shift 5
    if "$dir/$name" ${size//x/ } --verify="$mode" --warmup "$warmup" --repeat "$repeat" "$@" \
            > "$dir/$name.$size.log" 2>&1; then
        echo "PASS $name $size $mode $*"
    else
        echo "FAIL $name $size $mode $* (exit $?)"
    fi
}
runs() {   # runs NAME
    [ -x "$dir/$1" ] || { echo "FAIL $1 build"; return; }
    # Every tile in turn at the awkward sizes; the largest, whose CPU check is long, with the
    # tile the program chooses.
    for sz in $sizes; do
        case $sz in 2047x*) one "$1" "$sz" full 0 1 ;; *) one "$1" "$sz" full 0 1 --tile=all ;; esac
    done
    for sz in $big; do one "$1" "$sz" sample 1 2; done
    # K split across blocks: forced for every tile, and where the choice splits it (16 slices).
    one "$1" 17x33x1000 full 0 1 --tile=all --split-k=3
    [ "${QUICK:-0}" = 1 ] || one "$1" 64x64x16384 full 0 1 --kernel=tiled
}
export -f one runs; export sizes big

names=""
for c in $configs; do
    for ta in 0 1; do for tb in 0 1; do names="$names ${c%%:*}-${c##*:}-$ta$tb"; done; done
done
start=$(date +%s)
# The 8192^3 runs need up to 4 GiB each: at most 16 at a time share the GPU.
echo $names | xargs -n 1 -P 16 bash -c 'runs "$1"' _ | sort > "$dir/results.txt"
echo "ran in $(( $(date +%s) - start )) s"

# Sanitizers: a few configurations at odd sizes. memcheck checks every access of
# both kernels; racecheck the tiled kernel's shared memory (the simple kernel
# has none). K = 300 is ten steps of the tiled kernel, more than its stages.
sanitize() {   # sanitize TOOL NAME SIZE ARGS...
    tool=$1; n=$2; sz=$3; shift 3
    log="$dir/$n.$tool.$sz$(printf '%s' "$*" | tr -c 'a-z0-9=' '_').log"
    if timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 9 "$dir/$n" ${sz//x/ } \
            --warmup 0 --repeat 1 "$@" > "$log" 2>&1; then
        echo "PASS $n $tool $sz $*" >> "$dir/results.txt"
    else
        echo "FAIL $n $tool $sz $*" >> "$dir/results.txt"
    fi
}
if command -v compute-sanitizer > /dev/null 2>&1; then
    san_list="F16_IN_F32_OUT-16x16x16-00 F16_IN_OUT-8x32x16-11 U8_IN_I32_OUT-32x8x16-00
              I8_IN_I32_OUT-8x32x16-10 BF16_IN_F32_OUT-32x8x16-01 TF32_IN_F32_OUT-16x16x8-11
              F64_IN_OUT-8x8x4-01"
    [ "${QUICK:-0}" = 1 ] && san_list="F16_IN_F32_OUT-16x16x16-00 F64_IN_OUT-8x8x4-01"
    if [ -n "${ONLY:-}" ]; then
        kept=""
        for n in $san_list; do case " $ONLY " in *" ${n%%-*} "*) kept="$kept $n";; esac; done
        san_list=$kept
    fi
    for n in $san_list; do
        sanitize memcheck "$n" 37x41x300 --tile=all
        sanitize memcheck "$n" 37x41x300 --kernel=tiled --split-k=3 --cublas=off
        sanitize racecheck "$n" 37x41x300 --kernel=tiled --tile=all --cublas=off
    done
    for n in F16_IN_F32_OUT-16x16x16-01 F64_IN_OUT-8x8x4-10 I8_IN_I32_OUT-16x16x16-01; do
        [ -x "$dir/$n" ] && sanitize racecheck "$n" 300x520x77 --kernel=tiled --tile=all --cublas=off
    done
    # The Hopper kernel: memcheck counts; what racecheck, synccheck and initcheck make of
    # TMA copies and mbarriers is recorded in sanitizer-notes.txt, not counted.
    if [ "$cc" = 90 ]; then
        for n in F16_IN_F32_OUT-16x16x16-00 F16_IN_OUT-8x32x16-11 BF16_IN_F32_OUT-32x8x16-10; do
            [ -x "$dir/$n" ] || continue
            sanitize memcheck "$n" 37x41x300 --kernel=wgmma --cublas=off
            sanitize memcheck "$n" 300x520x77 --kernel=wgmma --cublas=off
        done
        n=F16_IN_F32_OUT-16x16x16-00
        if [ -x "$dir/$n" ]; then
            for tool in racecheck synccheck initcheck; do
                log="$dir/$n.$tool.wgmma.log"
                timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 9 "$dir/$n" 37 41 300 \
                    --warmup 0 --repeat 1 --kernel=wgmma --cublas=off > "$log" 2>&1
                echo "$tool on the Hopper kernel: exit $?; $(grep -E 'ERROR SUMMARY|not supported|unsupported' "$log" | head -n 3 | tr '\n' ' ')"
            done > "$dir/sanitizer-notes.txt"
            cat "$dir/sanitizer-notes.txt"
        fi
    fi
else
    echo "FAIL compute-sanitizer not found" >> "$dir/results.txt"
fi

grep '^FAIL' "$dir/results.txt" | head -n 40
# How close the floating-point results came to their error bounds (largest ratios last).
grep -H "Worst error" "$dir"/*.log 2>/dev/null | grep "of its bound" \
    | sed 's/.*check\///; s/Worst error *: //' | sort -t'(' -k2 -g | tail -n 6
for f in $(grep '^FAIL' "$dir/results.txt" | head -n 5 | awk '{print $2"."$3".log"}'); do
    [ -f "$dir/$f" ] && { echo "--- $f"; tail -n 8 "$dir/$f"; }
done
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    cp "$dir/results.txt" "$OUT/check-results.txt"
    [ -f "$dir/sanitizer-notes.txt" ] && cp "$dir/sanitizer-notes.txt" "$OUT/sanitizer-notes.txt"
    # The logs of failed runs and of the sanitizers (all of them would pass the 16 MiB that
    # one file may take back from a lent machine).
    (cd "$dir" && { grep '^FAIL' results.txt | awk '{print $2"."$3".log"}'; ls *.memcheck.* *.racecheck.* *.synccheck.* *.initcheck.* 2>/dev/null; } \
        | sort -u | xargs -r ls 2>/dev/null | tar czf "$OUT/check-logs.tgz" -T - 2>/dev/null)
fi
pass=$(grep -c '^PASS' "$dir/results.txt")
fail=$(grep -c '^FAIL' "$dir/results.txt")
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
