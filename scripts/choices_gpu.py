#!/usr/bin/env python3
"""Is the Hopper kernel's own choice of tile width and split the best one for a problem?

    python3 scripts/choices_gpu.py [--sizes 1024] [--only F16_IN_F32_OUT:NT,BF16_IN_F32_OUT:NT]
                                   [--splits 1,2,4|own] [--widths 64,128|none] [--all-kernels]
                                   [--rounds 3] [--change FILE ...] [--out build/choices.csv]
    python3 scripts/choices_gpu.py --check [--only PAIR:LAYOUT,...] [--change FILE ...]

For each pair and layout given (default: every pair that has the Hopper kernel, in layout TN),
builds gemm.md (with the change files of worklog/ given, such as a variant that gives the
kernel more pairs) and runs the Hopper kernel (verified on a sample) at each size with its own
choice (no option) and with every tile width (./gemm --describe's hopper_widths) combined
with every --split-k given, taking turns, `--rounds` times, with cuBLAS in the same process.
`--splits own` forces the width alone and leaves the split to the program: the widths against
each other. `--all-kernels` runs the own choice with every kernel (--kernel=all), so that the
tiled kernel's share stands beside it. Prints each choice's median share of cuBLAS, the
kernel's own choice first; writes every --csv row, with the choice it came from, to --out as
it goes. A choice ./gemm refuses for a problem (a width that does not divide it) is left out.
Exit status 1 if a run fails its check.

With --check it times nothing: for each pair and layout given (default: the 16-bit pairs in
every layout) it runs each tile (each width, and the 192-row tile where the pair has it) at
awkward sizes, K whole and split, with the whole result checked on the CPU, and
compute-sanitizer's memcheck at the last of those sizes the tile takes; it prints PASS or FAIL
per run and exits 1 if any failed.
"""

import argparse
import csv
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gemmlib  # noqa: E402

# Awkward sizes for --check: one element, odd and prime sides, a padded N that 192 divides.
CHECK_SIZES = ["1x1x1", "129x257x65", "1111x777x333", "300x3000x200"]
CHECK_SLICES = 3   # and each split in three slices of K (a 192-row tile's last row of tiles, past M, too)
MEMCHECK_TIMEOUT = 1200


def shape_of(size):
    """'1024' -> ['1024'] * 3; '4096x11008x4096' -> its three sides."""
    return size.split("x") if "x" in size else [size] * 3


def refused(code, options):
    """Whether ./gemm refused a forced width for the problem (a width the padded N does not take)."""
    return code == 2 and any(o.startswith("--hopper-width=") for o in options)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--sizes", default="1024", help="N (N x N x N) or MxNxK, comma-separated")
    parser.add_argument("--only", help="PAIR:LAYOUT,... (default: every Hopper pair, TN; with --check "
                        "the 16-bit pairs in every layout)")
    parser.add_argument("--splits", default="1,2,4", help="the --split-k values tried with each width, "
                        "or 'own': the width forced alone")
    parser.add_argument("--widths", help="the widths tried besides the kernel's own choice (default: "
                        "every one; 'none': only the own choice, as a second measurement of it)")
    parser.add_argument("--all-kernels", action="store_true",
                        help="run the own choice with every kernel (--kernel=all), the tiled one beside it")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--change", action="append", default=[], metavar="FILE",
                        help="a change file (a path, or a name in worklog/) applied to gemm.md")
    parser.add_argument("--check", action="store_true", help="check every width, fully verified; time nothing")
    parser.add_argument("--out", type=Path, default=Path("build/choices.csv"))
    args = parser.parse_args()

    described = gemmlib.registry(changes=args.change)
    layouts = {n: tuple(v) for n, v in described["layouts"].items()}
    hopper = gemmlib.hopper_pairs(described)
    if args.only:
        wanted = [item.split(":") for item in args.only.split(",")]
    elif args.check:
        wanted = [[p, layout] for p in gemmlib.hopper_pairs(described, native=True) for layout in layouts]
    else:
        wanted = [[p, "TN"] for p in hopper]
    for item in wanted:
        if len(item) != 2 or item[1] not in layouts or item[0] not in hopper:
            parser.error(f"--only takes PAIR:LAYOUT, a layout of {', '.join(layouts)} and a pair the Hopper "
                         f"kernel takes in it; got {':'.join(item)}")
    try:
        splits = [None] if args.splits == "own" else [int(s) for s in args.splits.split(",")]
        widths = described["hopper_widths"] if args.widths is None else \
            [] if args.widths == "none" else [int(w) for w in args.widths.split(",")]
    except ValueError:
        parser.error("--splits and --widths take numbers, comma-separated ('own' and 'none' aside)")
    choices = [("own", [])] + [(f"{w}/{s or 'own'}", [f"--hopper-width={w}"] + ([f"--split-k={s}"] if s else []))
                               for w in widths for s in splits]

    name, gpu, _ = gemmlib.find_gpu("choices_gpu")
    if not gemmlib.runs_on("wgmma", gpu, described):
        sys.exit(f"choices_gpu: the Hopper kernel does not run on {name} (compute capability {gpu})")
    folder = gemmlib.REPO / "build" / "choices"
    source = gemmlib.tangle(folder / "gemm.cu", args.change)
    if args.check:
        return check(described, wanted, layouts, source, folder, gpu)
    failed, writer = False, None
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sink = args.out.open("w", newline="", encoding="utf-8")   # row by row: a cut-off run keeps its rows
    print(f"{name}: --kernel=wgmma, {args.rounds} rounds of --repeat {args.repeat}; "
          f"a choice is WIDTH/SPLITS, 'own' the kernel's", flush=True)
    for pair, layout in wanted:
        exe = folder / f"gemm-{pair}-{layout}"
        ta, tb = layouts[layout]
        built = gemmlib.nvcc(source, exe, gemmlib.defines(pair, None, ta, tb, cublas=True), gpu=gpu)
        if built.returncode != 0:
            sys.exit(f"choices_gpu: {pair} {layout} did not build:\n{built.stderr[-3000:]}")
        header = gemmlib.run(exe, ["--csv-header"]).stdout.strip()
        for size in args.sizes.split(","):
            share = {c: [] for c, _ in choices}
            tiled, left_out = [], set()
            for _ in range(args.rounds):
                for choice, options in choices:
                    if choice in left_out:
                        continue
                    kernel = "--kernel=all" if args.all_kernels and not options else "--kernel=wgmma"
                    found, ratio, code, said = gemmlib.versus_cublas(
                        exe, [*shape_of(size), kernel, "--csv", "--verify=sample",
                              "--repeat", str(args.repeat), *options], header, timeout=300)
                    if refused(code, options):
                        print(f"  {pair} {layout} {size} {choice}: not possible: {said}")
                        left_out.add(choice)
                        continue
                    failed |= code != 0
                    if ratio is None:
                        print(f"  {pair} {layout} {size} {choice}: {said}")
                        continue
                    if writer is None:
                        writer = csv.DictWriter(sink, fieldnames=[*found[0], "choice"])
                        writer.writeheader()
                    writer.writerows(dict(r, choice=choice) for r in found)
                    sink.flush()
                    share[choice].append(ratio)
                    speeds = {r["impl"]: float(r["etops"]) for r in found}
                    if "tiled" in speeds:
                        tiled.append(speeds["tiled"] / speeds["cublas"])
            own = statistics.median(share["own"]) if share["own"] else float("nan")
            rounds = lambda v: ", ".join(f"{100 * x:.0f}" for x in v)
            line = ", ".join(f"{c} {100 * statistics.median(v):.0f}% ({rounds(v)})" for c, v in share.items() if v)
            best = max((c for c in share if share[c]), key=lambda c: statistics.median(share[c]))
            print(f"{pair} {layout} {size}: {line}; best {best} "
                  f"({100 * statistics.median(share[best]) / own:.1f}% of own)"
                  + (f"; tiled kernel {100 * statistics.median(tiled):.0f}%" if tiled else ""), flush=True)
    sink.close()
    return 1 if failed else 0


def check(described, wanted, layouts, source, folder, gpu):
    """Every tile of the Hopper kernel for each pair and layout of `wanted` (its build's
    --describe: hopper_tiles, [rows, width] of those that fit the pair) at CHECK_SIZES, K whole
    and in CHECK_SLICES slices, fully verified, and memcheck; the exit status."""
    failed = 0
    for pair, layout in wanted:
        exe = folder / f"check-{pair}-{layout}"
        built = gemmlib.nvcc(source, exe, gemmlib.defines(pair, None, *layouts[layout]), gpu=gpu)
        if built.returncode:
            print(f"FAIL {pair} {layout}: did not build\n{built.stderr[-2000:]}", flush=True)
            failed += 1
            continue
        tiles = json.loads(gemmlib.run(exe, ["--describe"]).stdout)["hopper_tiles"]
        for rows, width in tiles:
            options = ["--kernel=wgmma", f"--hopper-rows={rows}", f"--hopper-width={width}", "--verify=full"]
            taken = None           # the last size this tile takes: its memcheck's
            for size in CHECK_SIZES:
                for split in ([], [f"--split-k={CHECK_SLICES}"]):
                    result = gemmlib.run(exe, [*shape_of(size), *options, *split])
                    if refused(result.returncode, options):
                        continue
                    ok = said(result, f"{pair} {layout} tile {rows}x{width} {size} {' '.join(split)}".rstrip())
                    failed += not ok
                    taken = size if ok and not split else taken
            if taken:
                memcheck = subprocess.run(["compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "9",
                                           str(exe), *shape_of(taken), *options, "--warmup", "0", "--repeat", "1"],
                                          capture_output=True, text=True, timeout=MEMCHECK_TIMEOUT)
                failed += not said(memcheck, f"{pair} {layout} tile {rows}x{width} {taken} memcheck")
    print(f"{failed} failed")
    return 1 if failed else 0


def said(result, what):
    """Prints PASS or FAIL and what was run, with the end of its output where it failed;
    whether it passed."""
    ok = result.returncode == 0
    print(f"{'PASS' if ok else 'FAIL'} {what}", flush=True)
    if not ok:
        print((result.stdout + result.stderr)[-1500:], flush=True)
    return ok


if __name__ == "__main__":
    sys.exit(main())
