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
#                                         the Hopper kernel against its floors (floors.py run);
#                                         with --peers, the kernels beside CUTLASS's GEMMs (without
#                                         the package index, PIP_FIND_LINKS names the folder of
#                                         CUTLASS's wheel); with --change FILE, gemm.md with a
#                                         change file of worklog/, an experiment beside them
#   bash scripts/gpu_session.sh compare ARGS
#                                         a build against another, taking turns (compare_gpu.py)
#   bash scripts/gpu_session.sh probe KERNEL SIZES ROUNDS [PREFIX]
#                                         the builds in build/probe (made where nvcc is, each with
#                                         the first tile set otherwise: make gemm ARCH=sm_90a
#                                         NVFLAGS="-O3 -std=c++20 -DSTAGES=4" && cp gemm
#                                         build/probe/PAIR-LAYOUT-NAME), carried to the GPU, each
#                                         with its first tile forced (a build named *-as-is also
#                                         with --tile=all), taking turns, cuBLAS in each process
#   bash scripts/gpu_session.sh conditions [M N K]
#                                         clock, power and energy: the default pair (NN and TN)
#                                         at 8192^3 in a burst, on other input values and
#                                         sustained, and the energy window's checks at odd sizes
#
# Each piece first prints the GPU, its clocks and the commit, so that the
# logs say where and on what they were measured. The scripts it runs find the
# GPU, and say so in one line when there is none.
set -u
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bash scripts/gpu_session.sh check|worklog|parts|sweep|choices|floors|compare|probe|conditions [ARGS]" >&2; exit 2; }
piece=$1
shift
case $piece in
    check|worklog|parts|sweep|choices|floors|compare|probe|conditions) ;;
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

# The conditions piece: each run's report on the terminal (and in the log), its command first.
conditions() {
    local size=("${@:-8192 8192 8192}") layout tb status=0
    size=(${size[*]})
    for layout in NN TN; do
        tb=$([ $layout = TN ] && echo 1 || echo 0)
        make -s gemm TRANSPOSE_B=$tb >/dev/null || return 3
        cp gemm "build/gemm-conditions-$layout"
    done
    step() { echo; echo "\$ ./gemm $*"; "./build/gemm-conditions-$layout" "$@" || status=1; }
    for layout in NN TN; do
        step "${size[@]}" --verify=sample --kernel=wgmma
        step "${size[@]}" --verify=sample --kernel=wgmma --inputs=few-bits
        step "${size[@]}" --verify=sample --kernel=wgmma --inputs=zeros
    done
    layout=TN
    step "${size[@]}" --verify=sample --kernel=wgmma --sustain=30
    step 300 520 77 --verify=full --energy-ms=50 --inputs=few-bits
    step 37 41 300 --verify=full --energy-ms=50 --inputs=zeros --split-k=3
    step 2048 2048 2048 --verify=sample --sustain=8 --csv --csv-header
    return $status
}
# The probe piece: every build of build/probe whose name begins with PREFIX, at each size, its
# first tile forced by name (the first tile of that name), ROUNDS times taking turns; every CSV
# row to $OUT/probe[-PREFIX].csv, then each build's median share of cuBLAS per tile and size.
probe() {
    [ $# -eq 3 ] || [ $# -eq 4 ] || { echo "usage: gpu_session.sh probe KERNEL SIZES ROUNDS [PREFIX]" >&2; return 2; }
    local kernel=$1 sizes=$2 rounds=$3 prefix=${4:-} out exe size round t tiles status=0
    out=$OUT/probe${prefix:+-$prefix}.csv
    local builds=(build/probe/"$prefix"*)
    [ -x "${builds[0]}" ] || { echo "gpu_session: no build in build/probe begins with '$prefix'" >&2; return 2; }
    echo "probe,forced_tile,$("${builds[0]}" --csv-header | grep -v '^#')" > "$out"
    for size in ${sizes//,/ }; do
        for round in $(seq "$rounds"); do
            for exe in "${builds[@]}"; do
                tiles=$("$exe" --describe | python3 -c 'import json, sys; print(json.load(sys.stdin)["tiles"][0]["name"])')
                case $exe in *-as-is) tiles="$tiles all" ;; esac
                for t in $tiles; do
                    "$exe" "$size" "$size" "$size" --kernel="$kernel" --tile="$t" --csv --repeat 20 |
                        grep -v -e '^#' -e '^device' | sed "s|^|$(basename "$exe"),$t,|" >> "$out" ||
                        { echo "FAILED: $exe $size --tile=$t" >&2; status=1; }
                done
            done
        done
    done
    python3 - "$out" <<'SUMMARY'
import csv, statistics, sys
from collections import defaultdict
speeds = defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    if r["result"] != "PASS":
        print("FAILED:", r["probe"], r["M"], r["impl"], r["tile"], r["result"])
    tile = "" if r["impl"] == "cublas" else r["tile"]
    speeds[(r["probe"], r["forced_tile"], r["M"], r["impl"], tile)].append(float(r["etops"]))
for (build, forced, m, impl, tile), v in sorted(speeds.items()):
    cublas = speeds.get((build, forced, m, "cublas", ""))
    if impl != "cublas" and cublas:
        print(f"{build:36} --tile={forced:3} {m:>5}^3 {impl:6} {tile:22} {statistics.median(v):8.1f} eTOPS "
              f"{100 * statistics.median(v) / statistics.median(cublas):6.1f} % of cuBLAS")
SUMMARY
    return $status
}
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
    probe)   cmd=(probe "$@") ;;
    conditions) cmd=(conditions "$@") ;;
esac
"${cmd[@]}" 2>&1 | tee "$OUT/$log.txt"
exit "${PIPESTATUS[0]}"
