#!/usr/bin/env python3
"""The post's tables of measured numbers that come from the sweep, made from results/.

    python3 scripts/post_tables.py [--into gemm.md]

The tables, each between its markers in the post:

- <!-- session:begin --> ... <!-- session:end -->: the results chapter: every
  kernel and cuBLAS at 8192^3 for every type pair, B plain / B transposed,
  from the sweep of one session (SESSION);
- <!-- session-fp8:begin --> ... <!-- session-fp8:end -->: the same session's FP8 pairs,
  which only the Hopper kernel takes;
- <!-- later:begin --> ... <!-- later:end -->: the same for the pairs that session
  left out, from a sweep of their own (LATER);
- <!-- at8192:begin --> ... <!-- at8192:end -->: both kernels and cuBLAS at
  8192^3 for every type pair, B plain / B transposed, from the sweep CSV;
- <!-- jetson:begin --> ... <!-- jetson:end -->: the kernel of GEMM on Jetson
  beside this post's simple kernel, from results/gemm-on-jetson-*.csv and the
  sweep of the same day;
- <!-- tiles:begin --> ... <!-- tiles:end -->: every tile of the half / float
  pair, each forced, as a share of cuBLAS at a few sizes, from the measurement
  of every tile (results/README.md says how it was made);
- <!-- hopper:begin --> ... <!-- hopper:end -->: the Hopper kernel beside the
  tiled kernel and cuBLAS for the 16-bit pairs at a few sizes, B plain / B
  transposed, from the sweep of the 16-bit pairs with it;
- <!-- longk:begin --> ... <!-- longk:end -->: narrow, long problems with the tile
  the program chooses, K split as it chooses and unsplit, beside cuBLAS
  (results/README.md says how it was made).

The prose's measured numbers, each between <!--n EXPRESSION--> and <!--/n-->,
are filled by scripts/prose.py from the same files (--into fills them too;
--check names a stale one; --numbers lists them).

Without --into the tables are printed. The worklog's tables (steps, ceiling,
parts) are made by scripts/worklog.py table. Standard library only.
"""

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gemmlib  # noqa: E402
import sweep  # noqa: E402
import worklog  # noqa: E402

REPO = sweep.REPO
SESSION = "results/nvidia-h100-80gb-hbm3-2026-11-27-2.csv"         # the results chapter: one session
EXAMPLE = "results/nvidia-h100-80gb-hbm3-2026-11-27-worklog-2.csv"   # its worklog: the running example's steps
LATER = "results/nvidia-h100-80gb-hbm3-2026-11-27.csv"            # the pairs that session left out
PEERS = "results/nvidia-h100-80gb-hbm3-2026-11-27-peers.csv"      # "Beside CUTLASS"
PEERS_INT8 = "results/nvidia-h100-80gb-hbm3-2026-11-27-peers-int8.csv"   # int8 on the mma.sync kernel
ENERGY = "results/nvidia-h100-80gb-hbm3-2026-11-28-energy-floors-1.csv"   # "Run to run": clock and energy
H9_FLOORS = [f"results/nvidia-h100-80gb-hbm3-2026-11-25-h9-floors-{i}.csv" for i in (1, 2, 3)]   # every layout
WORST_CELLS = "results/nvidia-h100-80gb-hbm3-2026-11-25-worst-cells.txt"   # three of them, run again
WORKLOG = "results/nvidia-h100-80gb-hbm3-2026-11-22-worklog.csv"         # the tiled kernel's steps as measured
WORKLOG_2 = "results/nvidia-h100-80gb-hbm3-2026-11-27-worklog.csv"       # all of them again, step 13 too
WORKLOG_AGAIN = "results/nvidia-h100-80gb-hbm3-2026-11-23-worklog.csv"   # every row rebuilt the next day
HOPPER_SIZES_RUN = "results/nvidia-h100-80gb-hbm3-2026-11-25-hopper-worklog-4.csv"   # the nine steps at 3000^3 and 1024^3 too
H9_TURNS = "results/nvidia-h100-80gb-hbm3-2026-11-25-c-pipeline.csv"     # H9 against H8, taking turns
HOPPER_FIRST = "results/nvidia-h100-80gb-hbm3-2026-11-25-hopper-worklog.csv"   # steps 1-6 as measured
HOPPER_STEP7 = "results/nvidia-h100-80gb-hbm3-2026-11-25-hopper-worklog-2.csv"  # step 7 against step 6
HOPPER_TURNS = "results/h100-2026-11-25-compare-{}.csv"               # a step against the one before, in turns
LAST_WAVE = "results/nvidia-h100-80gb-hbm3-2026-11-25-last-wave-h8.csv"        # H8 against H7, in turns
HOPPER_EPILOGUE = "results/nvidia-h100-80gb-hbm3-2026-11-25-hopper-epilogue-{}.csv"   # at 8192, 4096, 3000
FIRST_RULE = "results/nvidia-h100-80gb-hbm3-2026-11-25-last-wave-variant.csv"  # H8's first rule, in turns
TILE192 = "results/nvidia-h100-80gb-hbm3-2026-11-23-tile192.csv"        # 3000^3 with a 128 x 192 tile
SMEM99 = "results/nvidia-h100-80gb-hbm3-2026-11-23-smem99.csv"          # the 16-bit pairs in 99 KiB
SWEEP = "results/nvidia-h100-80gb-hbm3-2026-11-23-2.csv"          # the sweep before the Hopper kernel
JETSON_DAY_SWEEP = "results/nvidia-h100-80gb-hbm3-2026-11-22.csv"  # the day GEMM on Jetson was run
JETSON = "results/gemm-on-jetson-h100-2026-11-22.csv"
SIZE = 8192
TILES = "results/nvidia-h100-80gb-hbm3-2026-11-27-tiles-16bit.csv"   # every tile, each forced
TILES_PAIR = "F16_IN_F32_OUT"
MMA_TILES = "results/nvidia-h100-80gb-hbm3-2026-11-27-tiles-16bit-mma.csv"   # the same, the mma.sync kernel
TILES_SIZES = [256, 1024, 2048, 3000, 8192]
HOPPER_SWEEP = "results/nvidia-h100-80gb-hbm3-2026-11-23-wgmma-sweep-2.csv"   # the 16-bit pairs
HOPPER_SIZES = [256, 512, 1024, 2048, 3000, 4096, 8192, 16384]
ACROSS_SIZES = [2048, 3000, 4096]   # the sizes "Across sizes" names, from the session's sweep
LONG_K = "results/nvidia-h100-80gb-hbm3-2026-11-23-long-k.csv"    # narrow, long problems
LONG_K_PAIRS = ["F16_IN_F32_OUT", "I8_IN_I32_OUT"]
LONG_K_SIZES = [(512, 512, 16384), (256, 256, 65536), (1024, 1024, 16384)]


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


def measured(cells):
    """The pairs that the cells have any number for, in the registry's order (a table made from
    a file older than a pair has no row for it)."""
    return [t for t in sweep.TYPES if any(key[0] == t for key in cells)]


def at_size_table(cells):
    lines = ["| pair | simple | tiled | cuBLAS | tiled / cuBLAS |", "|---|---:|---:|---:|---:|"]
    for t in measured(cells):
        shares = [worklog.percent(cells.get((t, b, "tiled")), cells.get((t, b, "cublas"))).replace(" %", "")
                  for b in (0, 1)]
        lines.append(f"| {worklog.SHORT_NAMES[t]} | {pair(cells, t, 'simple')} | {pair(cells, t, 'tiled')} | "
                     f"{pair(cells, t, 'cublas')} | {' / '.join(shares)} % |")
    return "\n".join(lines) + "\n"


def share_cell(shares):
    """"a / b %", or a dash where cuBLAS ran in neither layout."""
    return sweep.MISSING if all(x == sweep.MISSING for x in shares) else f"{' / '.join(shares)} %"


def fp8(pair):
    """Whether a pair's inputs are 8-bit floats (as ./gemm --describe gives the pair)."""
    found = next(p for p in gemmlib.registry()["pairs"] if p["name"] == pair)
    return found["in_bytes"] == 1 and not found["integer"]


def session_table(cells, pairs=None):
    """Every kernel the session measured (a column each, titled as ./gemm --describe names it)
    and cuBLAS, and the fastest kernel's share of cuBLAS, per pair and layout; only the pairs
    that pairs(name) keeps, where given, and the kernels that ran them."""
    kept = {t for t in {key[0] for key in cells} if pairs is None or pairs(t)}   # each pair asked once
    cells = {key: v for key, v in cells.items() if key[0] in kept}
    kernels = [(k["name"], k["title"].replace(" kernel", "")) for k in gemmlib.registry()["kernels"]
               if any(key[2] == k["name"] for key in cells)]
    lines = ["| pair | " + " | ".join(title for _, title in kernels) + " | cuBLAS | fastest / cuBLAS |",
             "|---|" + "---:|" * (len(kernels) + 2)]
    for t in measured(cells):
        shares = []
        for b in (0, 1):
            speeds = [cells.get((t, b, k)) for k, _ in kernels]
            best = max((k for k in speeds if k is not None), default=None)
            shares.append(worklog.percent(best, cells.get((t, b, "cublas"))).replace(" %", ""))
        runs = [pair(cells, t, k) if any((t, b, k) in cells for b in (0, 1)) else "—" for k, _ in kernels]
        lines.append(f"| {worklog.SHORT_NAMES[t]} | " + " | ".join(runs) +
                     f" | {pair(cells, t, 'cublas')} | {share_cell(shares)} |")
    return "\n".join(lines) + "\n"


def jetson_table(jetson, cells):
    lines = ["| pair | its kernel | our simple kernel |", "|---|---:|---:|"]
    for t in measured(jetson):
        lines.append(f"| {worklog.SHORT_NAMES[t]} | {pair(jetson, t, fmt=lambda x: f'{x:g}')} | "
                     f"{pair(cells, t, 'simple')} |")
    return "\n".join(lines) + "\n"


def tile_shares(path=TILES, type_pair=TILES_PAIR, kernel="tiled"):
    """{(tile, size): the kernel / cuBLAS in per cent, and ("simple", size)} for one pair."""
    _, rows = sweep.read_csv(REPO / path)
    rows = [r for r in rows if r.get("forced_tile", "all") == "all"]   # a probe's own runs of --tile=all
    cublas = {r["M"]: r["etops"] for r in rows if r["type"] == type_pair and r["impl"] == "cublas"}
    return {(r["tile"] or r["impl"], r["M"]): 100 * r["etops"] / cublas[r["M"]] for r in rows
            if r["type"] == type_pair and r["impl"] in (kernel, "simple")}


def tiles_table(shares):
    names = list(dict.fromkeys(t for t, _ in shares if t != "simple"))
    lines = ["| tile | " + " | ".join(f"{n}³" for n in TILES_SIZES) + " |",
             "|---|" + "---:|" * len(TILES_SIZES)]
    best = {n: max(v for (t, m), v in shares.items() if m == n and t != "simple") for n in TILES_SIZES}
    for name in names + (["simple"] if any(t == "simple" for t, _ in shares) else []):
        cells = []
        for n in TILES_SIZES:
            v = shares.get((name, n))
            cells.append(sweep.MISSING if v is None else f"**{v:.0f}**" if v == best[n] else f"{v:.0f}")
        label = "simple kernel" if name == "simple" else f"`{name}`"
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def hopper_table(path=HOPPER_SWEEP, sizes=HOPPER_SIZES, types=worklog.HOPPER_TYPES):
    """Per pair and size: the tiled kernel, the Hopper kernel, cuBLAS, and Hopper / cuBLAS."""
    lines = ["| pair | size | tiled | Hopper | cuBLAS | Hopper / cuBLAS |", "|---|---:|---:|---:|---:|---:|"]
    at = {n: sweep_cells(path, n) for n in sizes}   # the CSV read once per size, not per pair
    for t in [t for t in types if any(key[0] == t for n in sizes for key in at[n])]:
        for n in sizes:
            cells = at[n]
            shares = [worklog.percent(cells.get((t, b, "wgmma")), cells.get((t, b, "cublas"))).replace(" %", "")
                      for b in (0, 1)]
            lines.append(f"| {worklog.SHORT_NAMES[t]} | {n}³ | {pair(cells, t, 'tiled')} | "
                         f"{pair(cells, t, 'wgmma')} | {pair(cells, t, 'cublas')} | {' / '.join(shares)} % |")
    return "\n".join(lines) + "\n"


def long_k_runs(path=LONG_K):
    """{(pair, (M, N, K)): (tile, slices, split eTOPS, unsplit eTOPS, cuBLAS eTOPS)} from the
    runs with the chosen tile: first as chosen, then with --split-k=1, each followed by the
    cuBLAS line of its own run (the split run's is the one shown)."""
    _, rows = sweep.read_csv(REPO / path)
    runs = {}
    for i, r in enumerate(rows):
        if r["impl"] == "tiled" and r["tile_choice"] == "chosen":
            assert rows[i + 1]["impl"] == "cublas", "each run's cuBLAS line follows its kernel's"
            runs.setdefault((r["type"], (r["M"], r["N"], r["K"])), []).append((r, rows[i + 1]))
    table = {}
    for key, found in runs.items():
        (split, cublas), (unsplit, _) = found
        assert int(unsplit["slices"]) == 1, key
        table[key] = (split["tile"], int(split["slices"]), split["etops"], unsplit["etops"], cublas["etops"])
    return table


def long_k_table(runs):
    lines = ["| problem | pair | split: tile, slices | unsplit | split | cuBLAS | split / cuBLAS |",
             "|---|---|---|---:|---:|---:|---:|"]
    for m, n, k in LONG_K_SIZES:
        for pair in LONG_K_PAIRS:
            tile, slices, split, unsplit, cublas = runs[(pair, (m, n, k))]
            lines.append(f"| {m} × {n} × {k} | {worklog.SHORT_NAMES[pair]} "
                         f"| `{tile}`, {slices} | {unsplit:.0f} | {split:.0f} | {cublas:.0f} "
                         f"| {100 * round(split) / round(cublas):.0f} % |")   # of the numbers shown
    return "\n".join(lines) + "\n"


def tables():
    return {"session": session_table(sweep_cells(SESSION), lambda t: not fp8(t)),
            "session-fp8": session_table(sweep_cells(SESSION), fp8), "later": session_table(sweep_cells(LATER)),
            "at8192": at_size_table(sweep_cells()), "tiles": tiles_table(tile_shares()),
            "longk": long_k_table(long_k_runs()), "hopper": hopper_table(),
            "across": hopper_table(SESSION, ACROSS_SIZES, worklog.HOPPER_TYPES + ("I8_IN_I32_OUT",)),
            "jetson": jetson_table(jetson_cells(), sweep_cells(JETSON_DAY_SWEEP))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--into", help="replace the tables between their markers in this file, and fill "
                                       "its prose's numbers")
    parser.add_argument("--check", help="exit 1, naming them, if any of this file's prose numbers is stale")
    parser.add_argument("--numbers", action="store_true", help="list the prose's numbers and their expressions")
    args = parser.parse_args(argv)
    import prose   # (which reads this module's names of the sessions)
    if args.check or args.numbers:
        return prose.main(["--check", args.check] if args.check else [])
    try:
        made = tables()
    except (OSError, ValueError, KeyError) as error:
        print(f"post_tables.py: error: {getattr(error, 'strerror', None) or error}", file=sys.stderr)
        return 1
    status = worklog.fill_markers("post_tables.py", made, args.into)
    if status or not args.into:
        return status
    return prose.main(["--into", args.into])

if __name__ == "__main__":
    sys.exit(main())
