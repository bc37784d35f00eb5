#!/usr/bin/env bash
# Where the Hopper kernel's time goes, beside cuBLAS's: Nsight Compute (ncu) on one launch of
# each at every size given (default 8192 and 3000, cubes), F16_IN_F32_OUT in the layout TN,
# each in a run of its own after a warm-up launch, with the clocks left alone (--clock-control
# none), the Hopper kernel first (with --cublas-first, cuBLAS first: an H100 under a GEMM
# lowers its clock to stay within its power limit, so the order shows whether the first one
# profiled ran cooler). The report of each kernel is the speed of light, the compute and memory workload, the
# warps' stalls and the schedulers' issue rate. With change files of worklog/, a variant; with
# --counters, the instruction mix and the counter passes that --tiled-against adds (below);
# with --source, each kernel's machine code with, for every instruction, the times it ran and
# the warps' stalls sampled at it (Nsight Compute's source page, CSV), in
# source-KERNEL-SIZE.csv.gz.
#
#   bash scripts/profile_gpu.sh [--cublas-first] [--counters] [--source] [--change FILE ...] [SIZE ...]
#   bash scripts/profile_gpu.sh --tiled-against CONFIG [--type PAIR] [--kernel tiled|mma] [--counters]
#                               [--source] [SIZE ...]
#
# With --tiled-against, the tiled kernel (or the mma.sync kernel) and the CUTLASS configuration
# CONFIG of peers/cutlass.h (such as cutlass80_128x256_s3) instead, for PAIR if given (by default
# F16_IN_F32_OUT), from gemm-cutlass (peerlib.py), with the shared memory's bank conflicts and
# the instruction mix besides, and then, in a pass of their own for each group (a name this ncu
# lacks fails that pass only), L2's sectors by where they come from and go to, DRAM's bytes,
# and the share of issue slots lost to each stall.
#
# Results go to $OUT (default build/profile): profile-SIZE.txt for each size.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/profile}
mkdir -p "$OUT"
# Each profiled kernel: the regular expression of its name, and the --kernel of ./gemm's run.
changes= kernels=(gemm_wgmma 'nvjet|sm90_xmma|cutlass') runs=(wgmma wgmma) peer= more=() pair=F16_IN_F32_OUT counters=
if [ "${1:-}" = "--cublas-first" ]; then
    kernels=('nvjet|sm90_xmma|cutlass' gemm_wgmma)
    shift
elif [ "${1:-}" = "--tiled-against" ] && [ $# -ge 2 ]; then
    peer=$2 kernels=(gemm_tiled '^Kernel') runs=(tiled "$2")
    more=(--section MemoryWorkloadAnalysis_Tables --section InstructionStats) counters=1
    shift 2
    # another pair, or the mma.sync kernel (whose kernels are gemm_tiled too), where asked
    while [ "${1:-}" = "--type" ] || [ "${1:-}" = "--kernel" ]; do
        [ $# -ge 2 ] || { echo "usage: bash scripts/profile_gpu.sh --tiled-against CONFIG [--type PAIR] [--kernel tiled|mma] [SIZE ...]" >&2; exit 2; }
        case $1 in --type) pair=$2 ;; --kernel) runs[0]=$2 ;; esac
        shift 2
    done
fi
sources=
while [ "${1:-}" = "--counters" ] || [ "${1:-}" = "--source" ] || [ "${1:-}" = "--change" ]; do
    case $1 in
        --counters) [ -n "$peer" ] || more=(--section InstructionStats); counters=1; shift ;;
        --source) sources=1; shift ;;
        --change)
            [ $# -ge 2 ] || { echo "usage: bash scripts/profile_gpu.sh [--cublas-first] [--counters] [--source] [--change FILE ...] [SIZE ...]" >&2; exit 2; }
            changes="$changes,${2%.md}"
            shift 2 ;;
    esac
done
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(8192 3000)
if [ -z "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)" ]; then
    echo "profile_gpu: no GPU (nvidia-smi lists none): run it on a machine with one" >&2
    exit 1
fi
command -v ncu > /dev/null || { echo "profile_gpu: no ncu (Nsight Compute) on this machine" >&2; exit 3; }
build=build/profile-gemm
if [ -n "$peer" ]; then
    mkdir -p "$build" && python3 scripts/peerlib.py build --type "$pair" --transpose-a 0 --transpose-b 1 -o "$build/gemm" || exit 1
else
python3 - "$build" "$changes" <<'PY' || exit 1
import sys
sys.path.insert(0, "scripts")
import gemmlib
build, changes = sys.argv[1], [c for c in sys.argv[2].split(",") if c]
name, cc, _ = gemmlib.find_gpu("profile_gpu")
if not gemmlib.runs_on("wgmma", cc):
    raise SystemExit(f"profile_gpu: the Hopper kernel does not run on {name} (compute capability {cc})")
source = gemmlib.tangle(f"{build}/gemm.cu", changes=changes)
built = gemmlib.nvcc(source, f"{build}/gemm", gemmlib.defines("F16_IN_F32_OUT", None, 0, 1, cublas=True),
                     gpu=cc)
if built.returncode:
    raise SystemExit(f"profile_gpu: the build failed:\n{built.stderr[-2000:]}")
PY
fi
status=0
for n in "${sizes[@]}"; do
    # The Hopper kernel, then cuBLAS's GEMM (whose kernels are named nvjet, sm90_xmma or
    # cutlass): the second launch of each, the first being its warm-up.
    : > "$OUT/profile-$n.txt"
    for i in "${!kernels[@]}"; do
        ncu --clock-control none --launch-skip 1 --launch-count 1 --kernel-name regex:"${kernels[$i]}" \
            --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
            --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy \
            "${more[@]}" "$build/gemm" "$n" "$n" "$n" --kernel="${runs[$i]}" --warmup 1 --repeat 1 \
            --verify=off --energy-ms=0 ${peer:+--cublas=off} \
            >> "$OUT/profile-$n.txt" 2>&1 || status=1   # each kernel's failure counts
    done
    if [ -n "$sources" ]; then
        for i in "${!kernels[@]}"; do
            ncu --clock-control none --launch-skip 1 --launch-count 1 --kernel-name regex:"${kernels[$i]}" \
                --section SourceCounters --page source --print-source sass --csv \
                "$build/gemm" "$n" "$n" "$n" --kernel="${runs[$i]}" --warmup 1 --repeat 1 --verify=off \
                --energy-ms=0 ${peer:+--cublas=off} 2>&1 | gzip > "$OUT/source-$i-${runs[$i]}-$n.csv.gz" || status=1
        done
    fi
    if [ -n "$counters" ]; then
        # Counters the sections leave out, one group a pass: L2's traffic by source, unit and
        # operation (the fabric is the link between the H100's two halves of L2), and the stalls.
        groups=("lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex_lookup_hit.sum,lts__t_sectors_srcunit_tex_lookup_miss.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_elapsed.avg,smsp__inst_executed.sum"
                "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio")
        for i in "${!kernels[@]}"; do
            for g in "${groups[@]}"; do
                ncu --clock-control none --launch-skip 1 --launch-count 1 --kernel-name regex:"${kernels[$i]}" \
                    --metrics "$g" "$build/gemm" "$n" "$n" "$n" --kernel="${runs[$i]}" --warmup 1 --repeat 1 \
                    --verify=off --energy-ms=0 ${peer:+--cublas=off} >> "$OUT/profile-$n.txt" 2>&1 || status=1
            done
        done
    fi
    grep -E "^  [a-zA-Z_].*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|DRAM Throughput|SM Frequency|Elapsed Cycles|Issued Ipc|No Eligible|Warp Cycles Per Issued" \
        "$OUT/profile-$n.txt" | head -n 60
done
exit $status
