#!/usr/bin/env python3
"""A first run of a change before its long checks: the pair's Hopper kernel at 512^3 and
4096^3, each with 60 s, so that a change that hangs (a barrier that never completes) costs a
minute, not the check's 300 s for each of its runs. Exit 0 when both ran and passed.

    python3 scripts/smoke_gpu.py PAIR [--layout TN] [--change FILE ...] [--build DIR]
"""

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gemmlib  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pair")
    parser.add_argument("--layout", default="TN")
    parser.add_argument("--change", action="append", default=[], metavar="FILE")
    parser.add_argument("--build", default=str(gemmlib.REPO / "build" / "smoke"))
    args = parser.parse_args(argv)
    layouts = gemmlib.registry()["layouts"]
    if args.layout not in layouts:
        sys.exit(f"smoke: no layout called {args.layout}; ./gemm --describe lists {', '.join(layouts)}")
    ta, tb = layouts[args.layout]
    source = gemmlib.tangle(Path(args.build) / "gemm.cu", args.change)
    built = gemmlib.nvcc(source, Path(args.build) / "gemm", gemmlib.defines(args.pair, ta=ta, tb=tb))
    if built.returncode != 0:
        sys.exit(f"smoke: the candidate does not build:\n{built.stderr}")
    for size in ("512", "4096"):
        try:
            run = subprocess.run([f"{args.build}/gemm", size, size, size, "--kernel=wgmma", "--repeat", "3"],
                                 capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            sys.exit(f"smoke: {args.pair} at {size}^3 gave no answer in 60 s (a hang?)")
        print(run.stdout[-600:], run.stderr[-600:])
        if run.returncode != 0:
            sys.exit(f"smoke: {args.pair} at {size}^3 failed ({run.returncode})")
    print(f"smoke: {args.pair} ({args.layout}) passed at 512^3 and 4096^3")
    return 0


if __name__ == "__main__":
    sys.exit(main())
