#!/usr/bin/env bash
# Other settings of a tiled kernel's first tile, timed against cuBLAS: an exploration, not a
# measurement the post quotes. Build here, where the GPU is not, and run where it is:
#
#   bash scripts/tile_probe.sh build PAIR LAYOUT NAME "FLAGS" [NAME "FLAGS" ...]
#        builds build/probe/PAIR-LAYOUT-NAME for sm_90a, gemm.md with nvcc options FLAGS added
#        (the first tile's settings, -DBLOCK_M=64 ...); NAME "" builds it as it is
#   bash scripts/tile_probe.sh run KERNEL SIZES ROUNDS [PREFIX]
#        runs every build of build/probe (whose name begins with PREFIX) at each size (comma-separated) with --kernel=KERNEL,
#        its first tile forced (--tile=its name; the build "as-is" also with --tile=all), ROUNDS times
#        taking turns, cuBLAS in each process; prints each one's median share of cuBLAS and
#        writes every CSV row to $OUT/probe-PREFIX.csv (OUT defaults to build)
set -u
cd "$(dirname "$0")/.."
mode=${1:-}
shift || true
case $mode in
build)
    [ $# -ge 4 ] || { echo "usage: tile_probe.sh build PAIR LAYOUT NAME FLAGS [NAME FLAGS ...]" >&2; exit 2; }
    pair=$1 layout=$2
    shift 2
    case $layout in NN) ta=0 tb=0 ;; TN) ta=0 tb=1 ;; NT) ta=1 tb=0 ;; TT) ta=1 tb=1 ;;
        *) echo "tile_probe: layout $layout is none of NN, TN, NT, TT" >&2; exit 2 ;; esac
    mkdir -p build/probe
    while [ $# -ge 2 ]; do
        name=$1 flags=$2
        shift 2
        make -s gemm ARCH=sm_90a TYPE="$pair" TRANSPOSE_A=$ta TRANSPOSE_B=$tb \
            NVFLAGS="-O3 -std=c++20 -lineinfo $flags" >/dev/null || { echo "tile_probe: $name did not build" >&2; exit 1; }
        cp gemm "build/probe/$pair-$layout-${name:-as-is}"
        echo "built build/probe/$pair-$layout-${name:-as-is}"
    done ;;
run)
    [ $# -eq 3 ] || [ $# -eq 4 ] || { echo "usage: tile_probe.sh run KERNEL SIZES ROUNDS [PREFIX]" >&2; exit 2; }
    kernel=$1 sizes=$2 rounds=$3 prefix=${4:-}
    out=${OUT:-build}/probe${prefix:+-$prefix}.csv
    mkdir -p "$(dirname "$out")"
    builds=(build/probe/"$prefix"*)
    [ -x "${builds[0]}" ] || { echo "tile_probe: no build in build/probe begins with '$prefix'" >&2; exit 2; }
    first=${builds[0]}
    echo "probe,forced_tile,$("$first" --csv-header | grep -v '^#')" > "$out"
    for size in ${sizes//,/ }; do
        for round in $(seq "$rounds"); do
            for exe in "${builds[@]}"; do
                # --tile names a tile; the first of that name is the first tile
                tiles=$("$exe" --describe | python3 -c 'import json, sys; print(json.load(sys.stdin)["tiles"][0]["name"])')
                case $exe in *-as-is) tiles="$tiles all" ;; esac
                for t in $tiles; do
                    "$exe" $size $size $size --kernel=$kernel --tile=$t --csv --repeat 20 |
                        grep -v '^#' | grep -v '^device' | sed "s|^|$(basename "$exe"),$t,|" >> "$out" ||
                        echo "FAILED: $exe $size --tile=$t" >&2
                done
            done
        done
    done
    # per build, size and tile: the median over rounds of (speed / cuBLAS's in the same process)
    python3 - "$out" <<'EOF'
import csv, statistics, sys
from collections import defaultdict
share = defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    if r["result"] != "PASS":
        print("FAILED:", r["probe"], r["M"], r["impl"], r["tile"], r["result"])
    tile = "" if r["impl"] == "cublas" else r["tile"]
    share[(r["probe"], r["forced_tile"], r["M"], r["impl"], tile)].append(float(r["etops"]))
for (build, forced, m, impl, tile), v in sorted(share.items()):
    cublas = share.get((build, forced, m, "cublas", ""))
    if impl != "cublas" and cublas:
        print(f"{build:36} --tile={forced:3} {m:>5}^3 {impl:6} {tile:22} {statistics.median(v):8.1f} eTOPS "
              f"{100 * statistics.median(v) / statistics.median(cublas):6.1f} % of cuBLAS")
EOF
    ;;
*) echo "usage: tile_probe.sh build|run ..." >&2; exit 2 ;;
esac
