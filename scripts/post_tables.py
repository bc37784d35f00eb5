#!/usr/bin/env python3
"""The post's tables of measured numbers that come from the sweep, made from results/.

    python3 scripts/post_tables.py [--into gemm.md]

Two tables, each between its markers in the post:

- <!-- at8192:begin --> ... <!-- at8192:end -->: both kernels and cuBLAS at
  8192^3 for every type pair, B plain / B transposed, from the sweep CSV;
- <!-- jetson:begin --> ... <!-- jetson:end -->: the kernel of GEMM on Jetson
  beside this post's simple kernel, from results/gemm-on-jetson-*.csv and the
  sweep of the same day.

Without --into the tables are printed. The worklog's tables (steps, ceiling,
parts) are made by scripts/worklog.py table. Standard library only.
"""

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep  # noqa: E402
import worklog  # noqa: E402

REPO = sweep.REPO
SWEEP = "results/nvidia-h100-80gb-hbm3-2026-11-23.csv"          # the results chapter
JETSON_DAY_SWEEP = "results/nvidia-h100-80gb-hbm3-2026-11-22.csv"  # the day GEMM on Jetson was run
JETSON = "results/gemm-on-jetson-h100-2026-11-22.csv"
SIZE = 8192


def sweep_cells(path=SWEEP, size=SIZE):
    """{(type, transpose_b, impl): etops} at size^3, from the sweep CSV."""
    _, rows = sweep.read_csv(REPO / path)
    return {(r["type"], r["transpose_b"], r["impl"]): r["etops"] for r in rows
            if r["M"] == r["N"] == r["K"] == size and r["result"] != "FAIL"}


def jetson_cells(path=JETSON):
    with open(REPO / path, newline="", encoding="utf-8") as f:
        lines = [line for line in f if not line.startswith("#")]
    return {(r["type"], int(r["transpose_b"])): float(r["etops"]) for r in csv.DictReader(lines)}


def pair(cells, t, impl=None, fmt=sweep.fmt3):
    keys = [(t, b, impl) if impl else (t, b) for b in (0, 1)]
    return " / ".join(fmt(cells.get(k)) for k in keys)


def at_size_table(cells):
    lines = ["| pair | simple | tiled | cuBLAS | tiled / cuBLAS |", "|---|---:|---:|---:|---:|"]
    for t in sweep.TYPES:
        shares = [worklog.percent(cells.get((t, b, "tiled")), cells.get((t, b, "cublas"))).replace(" %", "")
                  for b in (0, 1)]
        lines.append(f"| {worklog.SHORT_NAMES[t]} | {pair(cells, t, 'simple')} | {pair(cells, t, 'tiled')} | "
                     f"{pair(cells, t, 'cublas')} | {' / '.join(shares)} % |")
    return "\n".join(lines) + "\n"


def jetson_table(jetson, cells):
    lines = ["| pair | its kernel | our simple kernel |", "|---|---:|---:|"]
    for t in sweep.TYPES:
        lines.append(f"| {worklog.SHORT_NAMES[t]} | {pair(jetson, t, fmt=lambda x: f'{x:g}')} | "
                     f"{pair(cells, t, 'simple')} |")
    return "\n".join(lines) + "\n"


def tables():
    return {"at8192": at_size_table(sweep_cells()),
            "jetson": jetson_table(jetson_cells(), sweep_cells(JETSON_DAY_SWEEP))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--into", help="replace the tables between their markers in this file")
    args = parser.parse_args(argv)
    try:
        made = tables()
    except (OSError, ValueError, KeyError) as error:
        print(f"post_tables.py: error: {getattr(error, 'strerror', None) or error}", file=sys.stderr)
        return 1
    return worklog.fill_markers("post_tables.py", made, args.into)

if __name__ == "__main__":
    sys.exit(main())
