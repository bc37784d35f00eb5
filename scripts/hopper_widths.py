#!/usr/bin/env python3
"""The Hopper kernel's tile widths against each other, on a Hopper GPU.

For each pair (default: the Hopper kernel's pairs, from the registry) built with B transposed,
and each problem, one run of every kernel (`--kernel=all`: the width the program chooses, the
tiled kernel, and which was fastest), then one run of the Hopper kernel alone for each width of
HOPPER_WIDTHS that divides the padded N (`--hopper-width=W`). Every run times cuBLAS beside it
and checks its result. Writes widths.csv: ./gemm's CSV columns after a first column, `forced`,
the width the run forced (empty for the program's choice); and prints a table: per problem and
pair, each width's share of cuBLAS, and the choice's.

    python3 scripts/hopper_widths.py [--types F16_IN_F32_OUT,...] [--out DIR]
    python3 scripts/hopper_widths.py --check [--types ...]

With --check it times nothing: for every layout it runs each width at awkward sizes with the
whole result checked on the CPU, and compute-sanitizer's memcheck on one size per width; it
prints PASS or FAIL per run and exits 1 if any failed.
"""
import argparse
import csv
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gemmlib  # noqa: E402
import sweep  # noqa: E402  (the shapes of language-model layers)

# Awkward sizes for --check: one element, odd and prime sides, a padded N that 192 divides.
CHECK_SIZES = [(1, 1, 1), (129, 257, 65), (1111, 777, 333), (300, 3000, 200)]
# Cubes, then the shapes of two language-model layers (M x N x K).
PROBLEMS = [(n, n, n) for n in (512, 1024, 2048, 3000, 4096, 8192)] + sweep.LAYER_SHAPES[:2]


def main():
    registry = gemmlib.registry()
    hopper = gemmlib.hopper_pairs(registry, native=True)   # the 16-bit pairs
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--types", default=",".join(hopper))
    parser.add_argument("--out", type=Path, default=gemmlib.REPO / "build" / "widths")
    parser.add_argument("--check", action="store_true", help="check every width; time nothing")
    args = parser.parse_args()
    name, cap, _ = gemmlib.find_gpu("hopper_widths.py")
    if cap != "90":
        raise SystemExit(f"hopper_widths.py: {name} is not a Hopper GPU (compute capability {cap})")
    args.out.mkdir(parents=True, exist_ok=True)
    source = gemmlib.tangle(args.out / "gemm.cu")
    if args.check:
        sys.exit(check(registry, args, source, cap))
    header = registry["csv_columns"]
    rows = []
    for pair in args.types.split(","):
        exe = args.out / f"gemm-{pair}"
        built = gemmlib.nvcc(source, exe, gemmlib.defines(pair, None, 0, 1, cublas=True), gpu=cap)
        if built.returncode:
            raise SystemExit(f"hopper_widths.py: {pair} did not build:\n{built.stderr[-2000:]}")
        for m, n, k in PROBLEMS:
            for forced in [None, *registry["hopper_widths"]]:
                extra = ["--kernel=all"] if forced is None else ["--kernel=wgmma", f"--hopper-width={forced}"]
                result = gemmlib.run(exe, [m, n, k, "--csv", *extra])
                if result.returncode == 2 and "not a multiple" in result.stderr:
                    continue          # this width does not divide the padded N
                if result.returncode:
                    print(f"FAIL {pair} {m}x{n}x{k} {' '.join(extra)}: exit {result.returncode}\n"
                          f"{result.stderr[-1000:]}", flush=True)
                for row in gemmlib.parse_csv(result.stdout, ",".join(header)):
                    rows.append({"forced": str(forced or ""), **row})
                print(f"{pair} {m}x{n}x{k} {' '.join(extra)}: done", flush=True)
    with open(args.out / "widths.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, ["forced", *header])
        writer.writeheader()
        writer.writerows(rows)
    print_table(rows, registry["hopper_widths"])


def check(registry, args, source, cap):
    """Every pair, layout and width at CHECK_SIZES, fully verified, and memcheck; exit status."""
    failed = 0
    for pair in args.types.split(","):
        for layout, (ta, tb) in registry["layouts"].items():
            exe = args.out / f"gemm-{pair}-{layout}"
            built = gemmlib.nvcc(source, exe, gemmlib.defines(pair, None, ta, tb), gpu=cap)
            if built.returncode:
                print(f"FAIL {pair} {layout}: did not build\n{built.stderr[-2000:]}", flush=True)
                failed += 1
                continue
            for width in registry["hopper_widths"]:
                for n, size in enumerate(CHECK_SIZES):
                    run = [*size, "--kernel=wgmma", f"--hopper-width={width}", "--verify=full"]
                    result = gemmlib.run(exe, run)
                    if result.returncode == 2 and "not a multiple" in result.stderr:
                        continue
                    words = f"{pair} {layout} width {width} {'x'.join(map(str, size))}"
                    ok = result.returncode == 0
                    if ok and n == len(CHECK_SIZES) - 1 - (width != 192):
                        memcheck = subprocess.run(["compute-sanitizer", "--tool", "memcheck",
                                                   "--error-exitcode", "9", str(exe), *map(str, run),
                                                   "--warmup", "0", "--repeat", "1"],
                                                  capture_output=True, text=True, timeout=1200)
                        ok, words = memcheck.returncode == 0, words + " memcheck"
                    failed += not ok
                    print(f"{'PASS' if ok else 'FAIL'} {words}", flush=True)
                    if not ok:
                        print((result.stdout + result.stderr)[-1500:], flush=True)
    print(f"{failed} failed")
    return 1 if failed else 0


def print_table(rows, widths):
    """Per problem and pair: each forced width's share of cuBLAS in its own run, the program's
    choice (from the --kernel=all run), and the tiled kernel's share."""
    cells = {}
    for r in rows:
        key = (r["type"], f'{r["M"]}x{r["N"]}x{r["K"]}')
        run = (key, r["forced"])
        cells.setdefault(run, {})[r["impl"]] = float(r["etops"]), r["result"]
    keys = sorted({key for key, _ in cells}, key=lambda k: (k[0], [int(x) for x in k[1].split("x")]))
    print("| pair | problem | chosen (all) | tiled | " + " | ".join(str(w) for w in widths) + " |")
    for key in keys:
        def share(forced, impl):
            c = cells.get((key, forced), {})
            if impl not in c or "cublas" not in c:
                return "—"
            return f"{100 * c[impl][0] / c['cublas'][0]:.0f} %" + ("" if c[impl][1] == "PASS" else " FAIL")
        print(f"| {key[0]} | {key[1]} | {share('', 'wgmma')} | {share('', 'tiled')} | "
              + " | ".join(share(str(w), "wgmma") for w in widths) + " |")


if __name__ == "__main__":
    main()
