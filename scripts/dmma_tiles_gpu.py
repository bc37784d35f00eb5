#!/usr/bin/env python3
"""The double kernel's block tile on a Hopper GPU: each candidate is built as double's first
tile (its settings and layout as -D flags, by gemmlib) and timed at 8192^3 with every kernel
and cuBLAS, every tile in turn; one line per candidate: its settings, the double kernel's
eTOPS on that tile and its result, the WMMA tiled kernel's eTOPS on it, and cuBLAS's.

    python3 scripts/dmma_tiles_gpu.py [--out DIR]      (writes DIR/dmma-tiles.csv)

How double's tile list was chosen (results/README.md); a new candidate is a line below.
"""

import argparse
import csv
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gemmlib  # noqa: E402

SETTINGS = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "BLOCK_WARPS_M", "BLOCK_WARPS_N", "STAGES",
            "PREFETCH_FRAGMENTS", "SPREAD_COPIES", "SKEW_BYTES"]
# The settings above in order, then TRANSPOSE_A and TRANSPOSE_B.
CANDIDATES = [
    "128 64 16 2 2 3 1 1 32 0 1", "128 64 16 2 2 3 1 1 32 0 0",
    "128 64 16 2 2 3 1 0 32 0 1", "128 64 16 2 2 3 1 0 32 0 0",
    "128 64 16 2 2 3 0 1 32 0 1", "128 64 16 2 2 3 0 1 32 0 0",
    "64 128 16 2 2 3 1 0 32 0 1", "128 64 16 4 1 3 1 1 32 0 1",
    "128 64 32 4 1 2 1 1 32 0 1", "128 64 16 2 2 3 1 0 32 1 0",
    "128 64 16 2 2 3 1 0 32 1 1",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=gemmlib.REPO / "build" / "dmma-out")
    args = parser.parse_args()
    _, cc, _ = gemmlib.find_gpu("dmma_tiles_gpu")
    if int(cc) < 90:
        sys.exit(f"dmma_tiles_gpu: the double kernel needs sm_90 or later; this GPU is sm_{cc}")
    folder = gemmlib.REPO / "build" / "dmma"
    folder.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    source = gemmlib.tangle(folder / "tiles.cu")

    def build(i):
        values = CANDIDATES[i].split()
        settings = dict(zip(SETTINGS, values))
        flags = gemmlib.defines("F64_IN_OUT", None, int(values[9]), int(values[10]), cublas=True,
                                settings=settings)
        return gemmlib.nvcc(source, folder / f"tiles-{i}", flags, gpu=cc)

    with ThreadPoolExecutor() as pool:
        built = list(pool.map(build, range(len(CANDIDATES))))
    columns = gemmlib.registry()["csv_columns"]
    with open(args.out / "dmma-tiles.csv", "a", encoding="utf-8") as out:
        for i, result in enumerate(built):
            if result.returncode != 0:
                print(f"{CANDIDATES[i]}: no build\n{result.stderr[-2000:]}", flush=True)
                continue
            run = subprocess.run([str(folder / f"tiles-{i}"), "8192", "8192", "8192", "--tile=all",
                                  "--verify=sample", "--csv"], capture_output=True, text=True)
            rows = [dict(zip(columns, r)) for r in csv.reader(run.stdout.splitlines())]
            first = lambda impl: next((r for r in rows if r["impl"] == impl), None)
            dmma, tiled, cublas = first("dmma"), first("tiled"), first("cublas")
            if run.returncode != 0 or not (dmma and tiled and cublas):
                print(f"{CANDIDATES[i]}: run failed (exit {run.returncode})\n{run.stderr[-2000:]}", flush=True)
                continue
            line = f"{CANDIDATES[i]},{dmma['etops']},{dmma['result']},{tiled['etops']},{cublas['etops']}"
            print(line, flush=True)
            out.write(line + "\n")


if __name__ == "__main__":
    main()
