#!/usr/bin/env python3
"""Is the Hopper kernel's own choice of tile width and split the best one for a problem?

    python3 scripts/choices_gpu.py [--sizes 1024] [--only F16_IN_F32_OUT:NT,BF16_IN_F32_OUT:NT]
                                   [--splits 1,2,4] [--widths 64,128|none] [--rounds 3]
                                   [--change FILE ...] [--out build/choices.csv]

For each pair and layout given (default: every pair that has the Hopper kernel, in layout TN),
builds gemm.md (with the change files of worklog/ given, such as a variant that gives the
kernel more pairs) and runs the Hopper kernel (verified on a sample) at each size with its own
choice (no option) and with every tile width (./gemm --describe's hopper_widths) combined
with every --split-k given, taking turns, `--rounds` times, with cuBLAS in the same process.
Prints each choice's median share of cuBLAS, the kernel's own choice first; writes every
--csv row, with the choice it came from, to --out as it goes. A choice ./gemm refuses for a problem (a
width that does not divide it) is left out. Exit status 1 if a run fails its check.
"""

import argparse
import csv
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gemmlib  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--sizes", default="1024", help="N (N x N x N) or MxNxK, comma-separated")
    parser.add_argument("--only", help="PAIR:LAYOUT,... (default: every Hopper pair, TN)")
    parser.add_argument("--splits", default="1,2,4")
    parser.add_argument("--widths", help="the widths tried besides the kernel's own choice (default: "
                        "every one; 'none': only the own choice, as a second measurement of it)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--change", action="append", default=[], metavar="FILE",
                        help="a change file (a path, or a name in worklog/) applied to gemm.md")
    parser.add_argument("--out", type=Path, default=Path("build/choices.csv"))
    args = parser.parse_args()

    described = gemmlib.registry(changes=args.change)
    layouts = {n: tuple(v) for n, v in described["layouts"].items()}
    hopper = gemmlib.hopper_pairs(described)
    wanted = [item.split(":") for item in args.only.split(",")] if args.only else [[p, "TN"] for p in hopper]
    for item in wanted:
        if len(item) != 2 or item[1] not in layouts or item[0] not in hopper:
            parser.error(f"--only takes PAIR:LAYOUT, a layout of {', '.join(layouts)} and a pair the Hopper "
                         f"kernel takes in it; got {':'.join(item)}")
    splits = [int(s) for s in args.splits.split(",")]
    widths = described["hopper_widths"] if args.widths is None else \
        [] if args.widths == "none" else [int(w) for w in args.widths.split(",")]
    choices = [("own", [])] + [(f"{w}/{s}", [f"--hopper-width={w}", f"--split-k={s}"])
                               for w in widths for s in splits]

    name, gpu, _ = gemmlib.find_gpu("choices_gpu")
    folder = gemmlib.REPO / "build" / "choices"
    source = gemmlib.tangle(folder / "gemm.cu", args.change)
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
            shape = size.split("x") if "x" in size else [size] * 3
            share = {c: [] for c, _ in choices}
            refused = set()
            for _ in range(args.rounds):
                for choice, options in choices:
                    if choice in refused:
                        continue
                    found, ratio, code, said = gemmlib.versus_cublas(
                        exe, [*shape, "--kernel=wgmma", "--csv", "--verify=sample",
                              "--repeat", str(args.repeat), *options], header, timeout=300)
                    if code == 2 and options:   # a width the padded problem does not take
                        print(f"  {pair} {layout} {size} {choice}: not possible: {said}")
                        refused.add(choice)
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
            own = statistics.median(share["own"]) if share["own"] else float("nan")
            rounds = lambda v: ", ".join(f"{100 * x:.0f}" for x in v)
            line = ", ".join(f"{c} {100 * statistics.median(v):.0f}% ({rounds(v)})" for c, v in share.items() if v)
            best = max((c for c in share if share[c]), key=lambda c: statistics.median(share[c]))
            print(f"{pair} {layout} {size}: {line}; best {best} "
                  f"({100 * statistics.median(share[best]) / own:.1f}% of own)", flush=True)
    sink.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
