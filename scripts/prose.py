#!/usr/bin/env python3
"""The measured numbers in the post's prose, each one filled from results/ (a library of
post_tables.py, which runs it):

    python3 scripts/post_tables.py --into gemm.md     fill every marked number, and the tables
    python3 scripts/post_tables.py --check gemm.md    exit 1, naming them, if any value is stale
    python3 scripts/post_tables.py --numbers          each marker's value and expression

In gemm.md a measured number stands between two HTML comments, which the rendered page does
not show:

    the tiled one at <!--n S(F16, TN, tiled)-->394<!--/n--> eTOPS

The first comment holds an expression over the CSVs of results/ (the names below); its value,
rounded as the post rounds, replaces what stands before the closing comment. A derived number
(a share, a ratio, a range) is an expression of the same rows, so it is the one a reader
computes from the tables: the speeds it starts from are rounded as the tables show them.

Formatting: a number is written with three significant figures (as the tables write it,
sweep.fmt3), unless the expression says otherwise: pct(r) a ratio as a whole per cent,
pcts(r1, r2, ...) a range of them ("91–92"), span(values) their least and greatest ("1.06 to
1.23"), more(r) how many per cent r is above 1 (at_least(r) rounded down), sp1(r) a change
as a signed per cent with a decimal ("+0.7"), d0(x), d1(x), d2(x) a fixed number of decimals.
A string is written as it is.

The sources, each reading files that post_tables.py names (one place for each session):
sweeps S (the results chapter's), L (the pairs after it), A (before the Hopper kernel), HS (the
16-bit pairs with it), CAP (99 KiB); the tiled kernel's worklog W1 (W1x unrounded), its rerun
(reruns) and W2 (the later session); the Hopper kernel's worklogs HW; its floors H9, H9_cell and
worst_cells; compare_gpu.py's runs taking turns (gains, own_gains, turn_share); CUTLASS beside
the kernels (vs_cutlass); the rounds of exploration X, Nsight Compute's counters (counter), and
single runs of other files (R, csv_runs, settings_speed, printed, long_k, T192, cublas_spread).
Standard library only.
"""

import argparse
import collections
import csv
import gzip
import math
import re
import statistics
import sys
from functools import lru_cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import post_tables  # noqa: E402  (the sessions the tables are made from: one place for each)
import sweep  # noqa: E402
import worklog  # noqa: E402

REPO = sweep.REPO
SIXTEEN = ("F16_IN_F32_OUT", "F16_IN_OUT", "BF16_IN_F32_OUT")   # the 16-bit pairs the Hopper steps measure
MARKER = re.compile(r"<!--n (.*?)-->(.*?)<!--/n-->", re.S)


# ---- formatting: the post's rounding, one place ----

def s3(x):
    return sweep.fmt3(x)


def signed(text):
    """A figure as the post writes it: a minus sign, never "-0"."""
    return "0" if text.strip("-0.") == "" else text.replace("-", "−")


def pct(r):
    return signed(f"{100 * r:.0f}")


def flat(values):
    """Numbers, or lists of them, as one list."""
    out = []
    for v in values:
        out += list(v) if isinstance(v, (list, tuple)) else [v]
    return out


def pcts(*ratios):
    """A range of ratios (numbers, or lists of them) as whole per cents, "91–92", or one
    figure where they round alike."""
    ratios = flat(ratios)
    low, high = pct(min(ratios)), pct(max(ratios))
    return low if low == high else f"{low}–{high}"


def span(values, form=None, between=" to "):
    """The least and the greatest of values, "1.06 to 1.23" (with d2 unless another form), or
    one figure where both are written alike."""
    values = flat([values])
    form = form or d2
    low, high = form(min(values)), form(max(values))
    return low if low == high else f"{low}{between}{high}"


def sp1(r):
    """A change as a signed per cent with one decimal: "+0.7", "−1.1"."""
    return signed(f"{100 * r:+.1f}")


def more(r):
    return signed(f"{100 * (r - 1):.0f}")


def at_least(r):
    """How many per cent r is above 1, rounded down: what "by N % or more" may say."""
    return f"{math.floor(100 * (r - 1) + 1e-9):.0f}"


def d0(x):
    return f"{x:.0f}"


def d1(x):
    return f"{x:.1f}"


def d2(x):
    return f"{x:.2f}"


def written(value):
    if isinstance(value, str):
        return value
    return s3(value)


# ---- the sources: each a CSV of results/ that post_tables.py or worklog.py names ----

@lru_cache(maxsize=None)
def cells(path, size):
    """{(type, transpose_b, impl): eTOPS as the tables show it} at size^3 of a sweep CSV."""
    return {k: worklog.shown(v) for k, v in post_tables.sweep_cells(path, size).items()}


def sweep_source(path, what):
    """A source of one sweep CSV: source(pair, layout, impl, size=8192) is a kernel's speed (or
    cuBLAS's) at size^3 as the tables show it; source.path is the file."""
    def source(pair, layout, impl, size=8192):
        return cells(path, size)[(pair, layout, impl)]
    source.__doc__, source.path = what, path
    return source


S = sweep_source(post_tables.SESSION, "The results chapter's session.")
L = sweep_source(post_tables.LATER, "The sweep of the pairs that session left out.")
A = sweep_source(post_tables.SWEEP, "The sweep of the tiled kernel before the Hopper kernel (Appendix G's).")
CAP = sweep_source(post_tables.SMEM99, "The 16-bit pairs with at most 99 KiB of shared memory per block.")
HS = sweep_source(post_tables.HOPPER_SWEEP, "The sweep of the 16-bit pairs with the Hopper kernel (Appendix G).")


@lru_cache(maxsize=None)
def tile_rows(path, size):
    _, rows = sweep.read_csv(REPO / path)
    return {(r["type"], r["tile"]): worklog.shown(r["etops"]) for r in rows
            if r["M"] == size and r["impl"] == "tiled" and r["result"] != "FAIL"}


def T192(pair, tile):
    """3000^3 with each tile, the 128 x 192 one among them (an experiment, not kept)."""
    return tile_rows(post_tables.TILE192, 3000)[(pair, tile)]


@lru_cache(maxsize=None)
def cubes(path):
    _, rows = sweep.read_csv(REPO / path)
    return tuple(sorted({r["M"] for r in rows if r["M"] == r["N"] == r["K"]}))


def sizes(source, least=0, most=1 << 40):
    """The cube sizes a sweep (S or L) measured, from least to most."""
    return [n for n in cubes(source.path) if least <= n <= most]


def shares(source, pairs, layouts, at, impl, base="cublas"):
    """impl's speed over base's, for every pair, layout and size given, where both ran."""
    found = []
    for p in pairs:
        for b in layouts:
            for n in at:
                try:
                    found.append(source(p, b, impl, n) / source(p, b, base, n))
                except KeyError:
                    pass
    if not found:
        raise KeyError(f"no run of {impl} and {base} among those")
    return found


@lru_cache(maxsize=None)
def peer_speeds(path):
    import peerlib
    return {k: worklog.shown(v) for k, v in peerlib.best(sweep.read_csv(REPO / path)[1]).items()}


def vs_cutlass(path, impl, kind):
    """impl's speed over the fastest CUTLASS configuration of a kind ("sm80", "sm90"), in each
    cell (pair, layout, problem) of a peers session where impl ran, as its table shows them."""
    import peerlib
    speeds = peer_speeds(path)
    found = []
    for cell in sorted({k[:3] for k in speeds}):
        if (*cell, impl) in speeds:
            best = max(v for k, v in speeds.items() if k[:3] == cell and peerlib.kind_of(k[3]) == kind)
            found.append(speeds[(*cell, impl)] / best)
    return found


@lru_cache(maxsize=None)
def h9_cells():
    """{(pair, layout, problem): {impl: eTOPS}} of the Hopper kernel's floors in every layout."""
    import floors
    rows = []
    for path in post_tables.H9_FLOORS:
        rows += sweep.read_csv(REPO / path)[1]
    return floors.cells(rows)


def H9(impl, base, least=0, below=1 << 40):
    """impl's speed over base's in each cell of those floors whose smallest side is at least
    `least` and below `below`, where both ran."""
    return [c[impl] / c[base] for (_, _, p), c in sorted(h9_cells().items())
            if least <= min(p) < below and impl in c and base in c]


def H9_cell(pair, layout, problem, impl="wgmma", base="cublas"):
    """One cell of those floors: impl's speed over base's (a problem: N for N^3, or (M, N, K))."""
    problem = (problem,) * 3 if isinstance(problem, int) else tuple(problem)
    c = h9_cells()[(pair, layout, problem)]
    return c[impl] / c[base]


def worst_cells(pair, layout, problem):
    """The runs again of one of the floors' lowest cells: its per cents, as the file gives them."""
    text = (REPO / post_tables.WORST_CELLS).read_text(encoding="utf-8")
    found = re.search(rf"^{pair} {layout} {problem}: own \d+% \(([\d, ]+)\)", text, re.M)
    if not found:
        raise KeyError(f"{pair} {layout} {problem} in {post_tables.WORST_CELLS}")
    values = [int(x) for x in found[1].split(", ")]
    return f"{min(values)}–{max(values)}"


def cublas_spread(document=None):
    """cuBLAS's speeds in the running example (f16→f32, B transposed, 8192^3) in every session
    the post's tables come from: the sweeps post_tables.py names and the worklogs the post names."""
    document = document if document is not None else (REPO / "gemm.md").read_text(encoding="utf-8")
    files = {post_tables.SESSION, post_tables.SWEEP, post_tables.JETSON_DAY_SWEEP, post_tables.TILES,
             post_tables.HOPPER_SWEEP}
    files |= set(re.findall(r"worklog.py table` from `(results/[^`]+\.csv)`", document))
    return [r["etops"] for f in sorted(files) for r in sweep.read_csv(REPO / f)[1]
            if r["type"] == "F16_IN_F32_OUT" and r["impl"] == "cublas" and r["transpose_b"] == 1
            and r["M"] == r["N"] == r["K"] == 8192 and r.get("result") != "FAIL"]


@lru_cache(maxsize=None)
def worklog_rows(path):
    _, rows = worklog.read_worklog(REPO / path)
    return {(r["step"], r["kind"], r["impl"], r["type"]): r["etops"] for r in rows
            if r.get("result") != "FAIL" and r["M"] in (8192, 0)}   # (the ceiling's row has no size)


def W1(step, pair, impl="tiled", kind="step"):
    """The tiled kernel's worklog as first measured, step by step, at 8192^3 (as its table
    shows it): a step's speed, or with impl "cublas", "simple" or "ceiling" (kind "step", step
    "simple") the yardsticks, or with kind "part" the halves."""
    return worklog.shown(worklog_rows(post_tables.WORKLOG)[(step, kind, impl, pair)])


def W1x(step, pair, impl="tiled", kind="step"):
    """W1 to one more digit than the tables (where a per cent must follow from a small number)."""
    return worklog_rows(post_tables.WORKLOG)[(step, kind, impl, pair)]


def reruns(step=None):
    """Each step of the tiled kernel's worklog rebuilt and measured the next day, against its
    first measurement (unrounded), less 1: one step's pairs, or every step's."""
    first, again = worklog_rows(post_tables.WORKLOG), worklog_rows(post_tables.WORKLOG_AGAIN)
    return [again[k] / first[k] - 1 for k in sorted(again) if k in first and k[1:3] == ("step", "tiled")
            and (step is None or k[0] == step)]


def W2(step, pair, impl="tiled", kind="step"):
    """The same, from the later session of every step (step 13 too)."""
    return worklog.shown(worklog_rows(post_tables.WORKLOG_2)[(step, kind, impl, pair)])


def WX(step, pair, impl="tiled", kind="step"):
    """The same, from the running example's session (the 16-bit pairs; no halves)."""
    return worklog.shown(worklog_rows(post_tables.EXAMPLE)[(step, kind, impl, pair)])


def worklog_drift(pair, impl="tiled"):
    """How far the running example's session's steps (impl "tiled"), or its cuBLAS (impl
    "cublas"), lie from the earlier run of every pair's steps, as the tables show them: the
    largest ratio of the two, less 1, over what both measured, for one pair."""
    now, then = worklog_rows(post_tables.EXAMPLE), worklog_rows(post_tables.WORKLOG_2)
    keys = [k for k in now if k in then and k[1] == "step" and k[2] == impl and k[3] == pair]
    shown = [(worklog.shown(now[k]), worklog.shown(then[k])) for k in keys]
    return max(max(a / b, b / a) - 1 for a, b in shown)


def HW(step, pair, size=8192, impl="wgmma", run=None):
    """The Hopper kernel's nine steps and parts, from the session's worklog, which its tables show,
    at 8192^3; at other sizes from the run of the nine steps at three sizes (or from another run
    of its worklog, `run`): a step's speed (or cuBLAS's, impl "cublas") at size^3."""
    run = run or (post_tables.EXAMPLE if size == 8192 else post_tables.HOPPER_SIZES_RUN)
    return worklog.shown(hopper_rows(run)[(step, impl, pair, size)])


@lru_cache(maxsize=None)
def hopper_rows(path):
    _, rows = worklog.read_worklog(REPO / path)
    return {(r["step"], r["impl"], r["type"], r["M"]): r["etops"] for r in rows if r.get("result") != "FAIL"}


def problem_key(problem):
    """A problem as compare_gpu.py's rows name it: "MxNxK", from N (a cube) or "MxNxK"."""
    return problem if "x" in str(problem) else f"{problem}x{problem}x{problem}"


@lru_cache(maxsize=None)
def compare_rows(path):
    """The rows of a compare_gpu.py CSV (its comment lines left out), as dicts of strings."""
    with open(REPO / path, encoding="utf-8") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def turn_share(path, pair, problem, build="new"):
    """A build's median share of cuBLAS in a compare_gpu.py CSV, for a pair and problem."""
    return turns(path, shares=True)[(pair, problem_key(problem))][build]


@lru_cache(maxsize=None)
def turns(path, shares=False, impl="wgmma", by_layout=False):
    """{(pair, "MxNxK"): the new build's median share of cuBLAS over the base build's} of a
    compare_gpu.py CSV of a kernel (the Hopper kernel's unless `impl` says): per process, its
    speed over cuBLAS's; the medians' ratio (with shares, each build's median share instead, as
    {"base": ..., "new": ...}). With by_layout, each layout apart: (pair, "MxNxK", layout)."""
    rows = [r for r in compare_rows(path) if r["compared"] in ("base", "new")]   # not --also's runs
    rows = post_tables.gemmlib.in_compared_mode(rows)   # as compare_gpu.py reads them
    key_of = lambda r: (r["type"], f'{r["M"]}x{r["N"]}x{r["K"]}') + ((r["layout"],) if by_layout else ())
    found = {}
    for key in {key_of(r) for r in rows}:
        runs = [r for r in rows if key_of(r) == key]
        def share(build):
            picked = [r for r in runs if r["compared"] == build]
            kernel = [r for r in picked if r["impl"] == impl]
            cublas = [r for r in picked if r["impl"] == "cublas"]
            return statistics.median(float(k["etops"]) / float(c["etops"]) for k, c in zip(kernel, cublas))
        found[key] = {b: share(b) for b in ("base", "new")} if shares else share("new") / share("base")
    return found


def layout_gains(path, pair, problem, what="speed", impl="wgmma"):
    """The new build's gain over the base build, less 1, in each layout of a compare_gpu.py CSV
    (in the order of its rows) for a pair and problem: of its median share of cuBLAS (turns), or,
    with what "energy", of its own median energy per GEMM."""
    rows = [r for r in compare_rows(path) if r["compared"] in ("base", "new") and r["type"] == pair
            and f'{r["M"]}x{r["N"]}x{r["K"]}' == problem_key(problem)]
    rows = post_tables.gemmlib.in_compared_mode(rows)   # as compare_gpu.py reads them
    layouts = list(dict.fromkeys(r["layout"] for r in rows))
    if what == "speed":
        found = turns(path, impl=impl, by_layout=True)
        return [found[(pair, problem_key(problem), layout)] - 1 for layout in layouts]
    median = lambda build, layout: statistics.median(float(r["energy_j"]) for r in rows if r["impl"] == impl
                                                     and r["compared"] == build and r["layout"] == layout)
    return [median("new", layout) / median("base", layout) - 1 for layout in layouts]


def energy_vs_cublas(path, build="new", impl="wgmma"):
    """{(pair, "MxNxK", layout): a build's median energy per GEMM over cuBLAS's in the same
    process} of a compare_gpu.py CSV (each kernel line and the cuBLAS line after it, of the
    mode compare_gpu.py compares)."""
    rows = [r for r in compare_rows(path) if r["compared"] == build]
    rows = post_tables.gemmlib.in_compared_mode(rows)   # as compare_gpu.py reads them
    key_of = lambda r: (r["type"], f'{r["M"]}x{r["N"]}x{r["K"]}', r["layout"])
    found = {}
    for i, r in enumerate(rows):
        if r["impl"] == impl:
            c = next(c for c in rows[i + 1:] if c["impl"] == "cublas" and key_of(c) == key_of(r))
            found.setdefault(key_of(r), []).append(post_tables.gemmlib.rows_against_cublas(r, c)[1])
    return {k: statistics.median(v) for k, v in found.items()}


def own_choice(path, cells):
    """Of a choices_gpu.py CSV: for each (pair, "MxNxK") of `cells`, the Hopper kernel's median
    speed with its own choice of tile over the best median of the choices forced in turn that
    pad the problem as its own does (a wider padding changes cuBLAS's work and the kernel's)."""
    rows = [r for r in compare_rows(path) if r["impl"] == "wgmma" and r["result"] == "PASS"]
    found = []
    for pair, problem in cells:
        here = [r for r in rows if r["type"] == pair and f'{r["M"]}x{r["N"]}x{r["K"]}' == problem_key(problem)]
        padding = {r["Np"] for r in here if r["choice"] == "own"}
        speed = lambda choice: statistics.median(float(r["etops"]) for r in here if r["choice"] == choice)
        choices = {r["choice"] for r in here if r["Np"] in padding}
        found.append(speed("own") / max(speed(c) for c in choices))
    return found


def own_gains(path, pairs, problems, impl="wgmma"):
    """The new build's own speed over the base build's, less 1 (the median of each build's
    runs; not shares of cuBLAS: for runs whose options change cuBLAS's work too), of a
    compare_gpu.py CSV, for each pair and cube size given."""
    rows = compare_rows(path)
    median = lambda build, p, n: statistics.median(float(r["etops"]) for r in rows if r["impl"] == impl
                                                   and r["type"] == p and r["M"] == str(n) and r["compared"] == build)
    return [median("new", p, n) / median("base", p, n) - 1 for p in pairs for n in problems]


def gains_by_m(path, sides, keep=True):
    """The new build's gains of a compare_gpu.py CSV at the problems whose M is one of `sides`
    (with keep False: at every other problem), for every pair it ran."""
    return [r - 1 for (p, problem), r in sorted(turns(path).items()) if (int(problem.split("x")[0]) in sides) == keep]


def gains(path, pairs, problems, impl="wgmma"):
    """The new build's gain over the base build (a share above 1, less 1) of a compare_gpu.py
    CSV, for each pair and problem given ("2048", or "MxNxK"), where it ran."""
    found = turns(path, impl=impl)
    keys = [(p, problem_key(n)) for p in pairs for n in problems]
    return [found[k] - 1 for k in keys if k in found]


def long_k(pairs=None):
    """The long-K table's split runs (post_tables.long_k_runs) as shares of cuBLAS, one per pair
    and problem it shows."""
    runs = post_tables.long_k_runs()
    return [round(split) / round(cublas) for (p, size), (_, _, split, _, cublas) in sorted(runs.items())
            if size in post_tables.LONG_K_SIZES and p in (pairs or post_tables.LONG_K_PAIRS)]


def R(path, size, impl, tile=None, pair=None):
    """The speed of the one run of a CSV of results/ (with a header) at size^3 of impl, and of a
    tile and a pair where given, as its table would show it."""
    _, rows = sweep.read_csv(REPO / path)
    found = [r["etops"] for r in rows if r["M"] == r["N"] == r["K"] == size and r["impl"] == impl
             and (tile is None or r["tile"] == tile) and (pair is None or r["type"] == pair)
             and r.get("result") != "FAIL"]
    if len(found) != 1:
        raise KeyError(f"{len(found)} runs of {impl} {tile or ''} at {size}^3 in {path}")
    return worklog.shown(found[0])


@lru_cache(maxsize=None)
def tile_shares(path, pair, kernel):
    """post_tables.tile_shares, each file, pair and kernel read once."""
    return post_tables.tile_shares(path, pair, kernel)


def tile_share(tile, size, pair=post_tables.TILES_PAIR, kernel="tiled", path=post_tables.TILES):
    """A tile's speed at size^3, in per cent of cuBLAS's, in a run of every tile forced (by
    default the tiles' table's: its pair, the tiled kernel)."""
    return tile_shares(path, pair, kernel)[(tile, size)]


@lru_cache(maxsize=None)
def explore_rows(name):
    rows = sweep.read_csv(REPO / f"results/nvidia-h100-80gb-hbm3-2026-11-22-{name}.csv")[1]
    return {(r["step"], r["type"]): r["etops"] for r in rows if r["impl"] == "tiled"}


def X(name, step, pair):
    """A variant of the tiled kernel in one of the worklog's rounds of exploration
    (results/...-2026-11-22-explore-N.csv), as its table would show it."""
    return worklog.shown(explore_rows(name)[(step, pair)])


def counter(profile, metric):
    """A counter of an Nsight Compute profile in results/profiles/, as a number."""
    text = (REPO / "results" / "profiles" / profile).read_text(encoding="utf-8")
    match = re.search(rf"{re.escape(metric)}\s+\S+\s+([\d,.]+)", text)
    if not match:
        raise KeyError(f"{metric} in results/profiles/{profile}")
    return float(match[1].replace(",", ""))


@lru_cache(maxsize=None)
def profile_runs(n):
    """The Hopper kernel's and cuBLAS's profiles at n^3 (scripts/profile_gpu.sh, three runs, the
    last with cuBLAS first): [(the kernel's {metric: value}, cuBLAS's)], in the runs' order."""
    runs = []
    for tail in ("", "-again", "-cublas-first"):
        found = []
        path = REPO / f"results/nvidia-h100-80gb-hbm3-2026-11-25-profile-{n}{tail}.txt"
        for line in path.open(encoding="utf-8"):
            if re.match(r"  (void gemm_wgmma|nvjet|sm90_xmma|cutlass)", line):
                found.append(("wgmma" if "gemm_wgmma" in line else "cublas", {}))
            metric = re.match(r"    (SM Frequency|Elapsed Cycles|Issued Ipc Active|L2 Cache Throughput|"
                              r"DRAM Throughput)\s+\S+\s+([\d,.]+)$", line.rstrip())
            if metric and found:
                found[-1][1].setdefault(metric[1], float(metric[2].replace(",", "")))
        kinds = dict(found)
        runs.append((kinds["wgmma"], kinds["cublas"]))
    return runs


def profiled(n, metric, who="wgmma"):
    """A metric of Nsight Compute's profiles at n^3 (the Hopper kernel's, or with who "cublas"
    cuBLAS's), one value per run: "SM Frequency", "Elapsed Cycles", "Issued Ipc Active", "L2
    Cache Throughput", "DRAM Throughput"."""
    return [run[0 if who == "wgmma" else 1][metric] for run in profile_runs(n)]


def profiled_ratio(n, metric):
    """The Hopper kernel's metric over cuBLAS's in each run of the profiles at n^3."""
    return [ours[metric] / theirs[metric] for ours, theirs in profile_runs(n)]


@lru_cache(maxsize=None)
def that_day():
    """The Hopper kernel's share of cuBLAS at 8192^3 in every run of it as shipped on 2026-11-23,
    each the median of its launches, per 16-bit pair: the worklog's, the sweep's, the GROUP_M=8
    builds', the three runs of 50 launches (f16->f32), and the runs beside the variant that
    prefetches C. {pair: [share, ...]}"""
    pairs = SIXTEEN
    day = {p: [] for p in pairs}
    r23 = lambda name: REPO / f"results/nvidia-h100-80gb-hbm3-2026-11-23-{name}"
    _, groups = sweep.read_csv(r23("wgmma-groups-2.csv"))
    for i, r in enumerate(groups):
        if r["impl"] == "wgmma" and "-DGROUP_M=8" in r["build"]:
            day[r["type"]].append(r["etops"] / groups[i + 1]["etops"])
    with open(r23("wgmma-prefetch-speed.csv"), encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for i, r in enumerate(rows):
        if r["impl"] == "wgmma" and r["variant"] == "shipped" and r["M"] == "8192":
            day[r["type"]].append(float(r["etops"]) / float(rows[i + 1]["etops"]))
    for p in pairs:
        day[p] += [HS(p, b, "wgmma") / HS(p, b, "cublas") for b in (0, 1)]
    _, runs = worklog.read_worklog(r23("hopper-worklog.csv"))
    batched = {(r["impl"], r["type"]): r["etops"] for r in runs if r["step"] == "h-batched"}
    for p in pairs:
        day[p].append(batched[("wgmma", p)] / batched[("cublas", p)])
    lines = [next(csv.reader([x])) for x in r23("wgmma-spread.txt").read_text(encoding="utf-8").splitlines()
             if x.startswith('"NVIDIA')]
    day["F16_IN_F32_OUT"] += [float(lines[i][19]) / float(lines[i + 1][19]) for i in (0, 2, 4)]
    return day


def prototype(grouped, clustered):
    """The standalone prototype's shares of cuBLAS (its summary, 2026-11-24), of its runs with
    block rows grouped by more than one (or not) and in clusters of two (or not)."""
    runs = found("results/hopper-proto-2/hopper-summary.txt",
                 r"ratio wgmma / cuBLAS = ([\d.]+) .*group (\d+), cluster (\d+)\)")
    return [float(r) for r, g, c in runs if (g != "1") == grouped and (c == "2") == clustered]


def prototype_clusters():
    """The prototype's clusters of two against its blocks alone, pair by pair of runs, less 1."""
    runs = found("results/hopper-proto-3/cluster.txt",
                 r"\[time\] wgmma\s+median [\d.]+ ms .*?([\d.]+) TFLOP/s.*?group 8, cluster (\d)\)", dotall=True)
    return [float(runs[i + 1][0]) / float(runs[i][0]) - 1 for i in range(0, len(runs), 2)]


def prefetch_variants():
    """The variants that ask L2 for C early against the kernel then shipped, run by run, less 1."""
    with open(REPO / "results/nvidia-h100-80gb-hbm3-2026-11-23-wgmma-prefetch-speed.csv", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["impl"] == "wgmma"]
    etops = {}
    for r in rows:
        etops.setdefault((r["variant"], r["type"], r["M"]), []).append(float(r["etops"]))
    return [a / b - 1 for (v, t, m), vals in sorted(etops.items()) if v != "shipped"
            for a, b in zip(vals, etops[("shipped", t, m)])]


def launches_profiled(metric):
    """The 20 launches (f16->f32, 8192^3) that Nsight Compute profiled with the clocks left to
    the GPU (results/...-2026-11-23-wgmma-spread.txt): a metric of each, "ms" or "cycles"."""
    text = (REPO / "results/nvidia-h100-80gb-hbm3-2026-11-23-wgmma-spread.txt").read_text(encoding="utf-8")
    part = text.split("--clock-control none")[1].split("--clock-control base")[0]
    pattern = {"ms": r"gpu__time_duration.sum\s+ms\s+([\d.]+)", "cycles": r"sm__cycles_elapsed.max\s+cycle\s+([\d,]+)"}
    return [float(x.replace(",", "")) for x in re.findall(pattern[metric], part)]


def clocks_sampled():
    """The SM clocks (MHz) nvidia-smi sampled while those GEMMs ran, the GPU busy."""
    with open(REPO / "results/nvidia-h100-80gb-hbm3-2026-11-23-wgmma-spread-smi.csv", encoding="utf-8") as f:
        rows = list(csv.reader(f))[1:]
    return [int(r[1].split()[0]) for r in rows if len(r) == 5 and r[4].strip() != "0x0000000000000001"]


@lru_cache(maxsize=None)
def _steady():
    import floors   # the tables' own reading of a floors run: one place for what a run measured
    return floors.conditions(floors.sweep.read_csv(REPO / post_tables.ENERGY)[1])


def steady(measure):
    """One measure of the Hopper kernel against cuBLAS back to back at the power cap (--sustain),
    for every pair and layout of the run behind "Run to run"'s energy table: "per_clock" (a
    share of cuBLAS's speed per clock), "clock" and "cublas_clock" (MHz), "energy" (a share)."""
    return [m[measure] for (_, _, _, mode), m in sorted(_steady().items()) if mode == "sustained"]


def ncu_us(path, size, kernel):
    """The durations (µs) Nsight Compute gave a kernel in the "== SIZE^3, ncu" part of a log of
    results/ (the Hopper worklog's runs at small sizes)."""
    text = (REPO / path).read_text(encoding="utf-8")
    part = text.split(f"== {size}^3, ncu")[1].split("\n== ")[0]
    return [float(x) for x in re.findall(rf"^  (?:void )?{kernel}\b.*\n\s+gpu__time_duration\.sum\s+us\s+([\d.]+)",
                                         part, re.M)]


def ncu_counter(path, kernel, metric):
    """A counter Nsight Compute gave the kernel whose name begins with `kernel` ("gemm_wgmma",
    or cuBLAS's "nvjet") in a log of results/ of its --metrics passes, as a number."""
    text = (REPO / path).read_text(encoding="utf-8")
    for part in text.split('==PROF== Profiling "')[1:]:
        match = re.search(rf"^\s+{re.escape(metric)}\s+\S+\s+([\d,.]+)$", part, re.M)
        if part.startswith(kernel) and match:
            return float(match[1].replace(",", ""))
    raise KeyError(f"{metric} of {kernel} in {path}")


def sass_share(path, opcodes, per=None):
    """What the machine instructions whose opcodes are in `opcodes` ("HGMMA", "LOP3", ...) count
    of a kernel's instructions executed, in a gzipped CSV of Nsight Compute's source page
    (profile_gpu.sh --source): a share of all of them, or, with `per`, per instruction of that
    opcode."""
    with gzip.open(REPO / path, "rt", encoding="utf-8") as f:
        lines = f.read().splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith('"Address"'))
    rows = list(csv.reader(lines[head:]))
    executed = rows[0].index("Instructions Executed")
    counts = collections.Counter()
    for row in rows[1:]:
        words = row[1].split()
        if words:
            counts[(words[1] if words[0].startswith("@") else words[0]).split(".")[0]] += int(row[executed] or 0)
    return sum(counts[o] for o in opcodes) / (counts[per] if per else sum(counts.values()))


def probe_speed(path, build, size, impl="mma"):
    """The median speed (eTOPS) of one build of a tile probe (gpu_session.sh probe) at size^3,
    its first tile forced (not the runs of every tile), the runs that passed."""
    with open(REPO / path, encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["probe"].endswith(build) and r["forced_tile"] != "all"]
    return statistics.median(float(r["etops"]) for r in rows
                             if r["M"] == str(size) and r["impl"] == impl and r["result"] == "PASS")


def runs(source, what="runs"):
    """A sweep's count (source: S, L, ...): "runs", one per pair, layout and size, every kernel
    and cuBLAS in one process; "lines", its timed lines; "failed", the lines that did not pass."""
    rows = sweep.read_csv(REPO / source.path)[1]
    return {"runs": len({(r["type"], r["transpose_b"], r["M"]) for r in rows}), "lines": len(rows),
            "failed": sum(r["result"] != "PASS" for r in rows)}[what]


def dated(source):
    """The date a sweep (S, L, ...) or a results file was measured on, from its "# date:" line."""
    path = getattr(source, "path", source)
    return re.search(r"^# date: (\S+)", (REPO / path).read_text(encoding="utf-8"), re.M)[1]


def found(path, pattern, dotall=False):
    """Every match of a regular expression in a text file of results/: its groups (strings)."""
    return re.findall(pattern, (REPO / path).read_text(encoding="utf-8"), re.S if dotall else 0)


def csv_runs(path, impl, tile):
    """The speeds, in the file's order, of a kernel with a tile in a file of ./gemm --csv lines
    without a header (the columns of ./gemm --describe), the runs that passed."""
    names = post_tables.gemmlib.registry()["csv_columns"]
    with open(REPO / path, encoding="utf-8") as f:
        rows = [dict(zip(names, r)) for r in csv.reader(f)]
    return [float(r["etops"]) for r in rows if r["impl"] == impl and r["tile"] == tile and r["result"] == "PASS"]


def settings_speed(path, settings):
    """The speed of one build in a file of "SETTINGS,eTOPS,RESULT,..." lines (a sweep of the
    first tile's settings): the line whose settings are these words."""
    for line in (REPO / path).read_text(encoding="utf-8").splitlines():
        fields = line.split(",")
        if fields[0].split() == settings.split() and fields[2] == "PASS":
            return float(fields[1])
    raise KeyError(f"{settings} in {path}")


def printed(path, heading, column):
    """A column of the table compare_gpu.py printed, in a log of results/: the rows after the
    first line that holds `heading`, up to the next comment; per cents as ratios."""
    lines = (REPO / path).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if heading in line)
    values = []
    for line in lines[start + 1:]:
        if line.startswith("#") and values:
            break
        words = line.split()
        if len(words) > column and not line.startswith("#") and words[column].endswith("%"):
            values.append(float(words[column].rstrip("%")) / 100)
    if not values:
        raise KeyError(f"no rows after {heading!r} in {path}")
    return values


@lru_cache(maxsize=None)
def _code():
    """gemm.md, read once: its code's constants are read from it."""
    return (REPO / "gemm.md").read_text(encoding="utf-8")


def setting(name):
    """A constant of gemm.md's code, `constexpr ... NAME = value;`, as a number."""
    return float(re.search(rf"constexpr \w+ {name} = ([\d.]+);", _code())[1])


def wmma_per_clock():
    """Operations per clock and multiprocessor at the WMMA ceiling (the running example's
    session's, f16->f32, the figure the main text quotes): its share of the datasheet's 989
    TFLOP/s, which is 4,096 per clock on each multiprocessor."""
    return WX("simple", "F16_IN_F32_OUT", impl="ceiling") / 989 * 4096


def hopper_tiles():
    """HOPPER_WIDTHS of gemm.md, in its order: [(width, speed, consumers)] (a row that names no
    consumers has HopperWidth's default); the first row is the running example's tile."""
    code = _code()
    widths = re.search(r"HOPPER_WIDTHS\[\] = \{(.*?)\};", code)[1]
    default = int(re.search(r"struct HopperWidth \{[^}]*int consumers = (\d+);", code)[1])
    return [(int(n), float(v), int(c) if c else default)
            for n, v, c in re.findall(r"\{(\d+), ([\d.]+)(?:, (\d+)(?:, \d+)?)?\}", widths)]


def hopper_widths():
    """The widths of the running example's 128-row tiles, in HOPPER_WIDTHS's order: [(width,
    speed)], the widest first."""
    tiles = hopper_tiles()
    return [(n, v) for n, v, c in tiles if c == tiles[0][2]]


def width_speed(n):
    """The speed of the Hopper kernel's 128-row tile n wide, as HOPPER_WIDTHS in gemm.md gives it."""
    return dict(hopper_widths())[n]


def sms(gpu="h100"):
    """The multiprocessors of a GPU that ./gemm --describe knows."""
    return next(g["sms"] for g in post_tables.gemmlib.registry()["gpus"] if g["name"] == gpu)


def hopper_blocks(side, width):
    """The Hopper kernel's blocks for side^3, padded to whole tiles of the widest width (the
    first row's 128 rows), `width` wide."""
    widest, _, consumers = hopper_tiles()[0]
    padded = -(-side // widest) * widest
    return padded // (64 * consumers) * (padded // width)


def waves(blocks, gpu="h100"):
    """Whole waves of blocks, one block to a multiprocessor."""
    return -(-blocks // sms(gpu))


def narrow_speeds(width):
    """The first split rule's runs with the tile width forced (...-last-wave-variant-runs.csv):
    per 16-bit pair, the speed of the tile `width` wide over the 256-wide one's."""
    with open(REPO / "results/nvidia-h100-80gb-hbm3-2026-11-25-last-wave-variant-runs.csv", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["impl"] == "wgmma" and "--hopper-width" in r["options"]]
    speed = {(r["type"], r["options"].rsplit("=", 1)[1]): float(r["etops"]) for r in rows}
    return [speed[(p, str(width))] / speed[(p, "256")] for p in sorted({p for p, _ in speed})]


def split_wave_costs():
    """The in-kernel sum's split wave at 3000^3 (...-sum-inside.csv), per 16-bit pair, in steps of
    the 256-wide tile beyond its slices' share: unsplit, three waves of 47 steps of the 192-wide
    tile at its speed; split, two whole waves and 10 steps of the last."""
    rows = compare_rows("results/nvidia-h100-80gb-hbm3-2026-11-25-sum-inside.csv")
    steps, tiles = -(-3000 // 64), hopper_blocks(3000, 256)
    slices = min(sms() // (tiles % sms()), steps // 4, 16)   # hopper_split's, for the last wave's tiles
    unsplit = waves(hopper_blocks(3000, 192)) * steps * (192 / 256) / width_speed(192)
    split = tiles // sms() * steps + -(-steps // slices)
    costs = []
    for p in SIXTEEN:
        ms = {b: statistics.median(float(r["median_ms"]) for r in rows if r["type"] == p and r["M"] == "3000"
                                   and r["impl"] == "wgmma" and r["compared"] == b) for b in ("base", "new")}
        costs.append(ms["new"] / ms["base"] * unsplit - split)
    return costs


def checks_passed(*paths):
    """The runs a GPU check passed, over its logs in results/ ("N passed, 0 failed" at the end)."""
    return sum(int(re.search(r"^(\d+) passed, 0 failed$", (REPO / p).read_text(encoding="utf-8"), re.M)[1])
               for p in paths)


def kernel_names(form="`--kernel={}`"):
    """The kernels of ./gemm --describe, in the table's order, as a list in words: "a, b or c"."""
    names = [form.format(k["name"]) if i == 0 else f"`{k['name']}`"
             for i, k in enumerate(post_tables.gemmlib.registry()["kernels"])]
    return ", ".join(names[:-1]) + " or " + names[-1]


def namespace():
    """The names an expression may use: the sources, the formats, and short names of the
    pairs, layouts (B plain 0, B transposed 1) and kernels."""
    names = dict(S=S, L=L, A=A, CAP=CAP, HS=HS)
    names.update({f.__name__: f for f in (
        s3, pct, pcts, span, more, at_least, sp1, d0, d1, d2, sizes, shares, vs_cutlass, H9, H9_cell, worst_cells,
        cublas_spread, W1, W1x, W2, WX, worklog_drift, reruns, HW, turns, gains, gains_by_m, own_gains, turn_share, csv_runs, settings_speed,
        printed, T192, long_k, R, tile_share, X, counter, profiled, profiled_ratio, that_day, found, prototype,
        prototype_clusters, prefetch_variants, launches_profiled, clocks_sampled, steady, ncu_us, ncu_counter,
        probe_speed, sass_share, runs, dated, setting, width_speed, sms, hopper_blocks, waves, narrow_speeds,
        split_wave_costs, checks_passed, kernel_names, wmma_per_clock, layout_gains, energy_vs_cublas, own_choice, hopper_tiles)})
    names.update(EXAMPLE=post_tables.EXAMPLE, ENERGY=post_tables.ENERGY, H9_FLOOR=post_tables.H9_FLOORS[0], HOPPER_SIZES_RUN=post_tables.HOPPER_SIZES_RUN, HOPPER_FIRST=post_tables.HOPPER_FIRST, HOPPER_STEP7=post_tables.HOPPER_STEP7,
                 RES=lambda name: f"results/{name}", H100="nvidia-h100-80gb-hbm3-",
                 SMALL="results/hopper-worklog-1/wgmma-small.txt",
                 SHIPPED_NCU="results/h100-2026-11-27-profile-clusters-shipped-metrics.txt",
                 H11_NCU="results/h100-2026-11-28-profile-counters-shipped.txt",
                 QUIET_NCU="results/h100-2026-11-28-profile-counters-quiet-waits.txt",
                 H11_SASS="results/h100-2026-11-28-source-hopper.csv.gz",
                 CLUSTERS_NCU="results/h100-2026-11-27-profile-clusters-variant-metrics.txt",
                 INT8_NCU="results/h100-2026-11-27-profile-int8-mma-cutlass.txt",
                 INT8_NCU_2="results/h100-2026-11-27-profile-int8-mma-cutlass-2.txt",
                 INT8_PROBE="results/h100-2026-11-27-int8-mma-probe-2.csv",
                 INT8_PROBE_TILED="results/h100-2026-11-27-int8-mma-probe-2-tiled.csv",
                 THREE="results/h100-2026-11-27-three-consumers.csv",
                 GAP_CHOICES="results/h100-2026-11-27-choices-peer-gaps.csv",
                 TALLER="results/h100-2026-11-27-taller.csv", TALLER_HELD="results/h100-2026-11-27-taller-sustained.csv",
                 SQUARE_HELD="results/h100-2026-11-27-square-sustained.csv",
                 SQUARE_SHAPES="results/h100-2026-11-27-square-shapes-sustained.csv",
                 SQUARE_BURST="results/h100-2026-11-27-square-burst.csv",
                 GROUP16_HELD="results/h100-2026-11-27-group16-sustained.csv",
                 GROUP16_SHAPES="results/h100-2026-11-27-group16-shapes-sustained.csv",
                 SKEW_NCU="results/h100-2026-11-27-mma-scratch-skew-profile.txt",
                 EPILOGUE=post_tables.HOPPER_EPILOGUE.format,
                 TURNS=post_tables.HOPPER_TURNS.format, LAST_WAVE=post_tables.LAST_WAVE,
                 FIRST_RULE=post_tables.FIRST_RULE)
    names.update(SIXTEEN=SIXTEEN, H9_TURNS=post_tables.H9_TURNS,
                 E4M3=("E4M3_IN_F32_OUT", "E4M3_IN_BF16_OUT", "E4M3_IN_F16_OUT"))
    names.update(PEERS=post_tables.PEERS, PEERS_INT8=post_tables.PEERS_INT8, MMA_TILES=post_tables.MMA_TILES,
                 median=statistics.median)
    names.update(F16="F16_IN_F32_OUT", F16F16="F16_IN_OUT", BF16="BF16_IN_F32_OUT", TF32="TF32_IN_F32_OUT",
                 F64="F64_IN_OUT", I8="I8_IN_I32_OUT", U8="U8_IN_I32_OUT", BF16BF16="BF16_IN_BF16_OUT",
                 F16C16="F16_IN_F16_OUT", NN=0, TN=1,
                 simple="simple", tiled="tiled", mma="mma", dmma="dmma", hopper="wgmma", cublas="cublas")
    return names


def evaluate(expression):
    """The text an expression fills in; ValueError naming it where it cannot be evaluated."""
    try:
        return written(eval(expression, namespace()))   # the post's own expressions, no one else's
    except Exception as error:   # a missing row, a misspelt name: say which marker
        raise ValueError(f"<!--n {expression}-->: {type(error).__name__}: {error}") from None


def markers(document):
    """Every marker as (expression, value written, value computed, offset)."""
    return [(m[1], m[2], evaluate(m[1]), m.start()) for m in MARKER.finditer(document)]


def fill(document):
    return MARKER.sub(lambda m: f"<!--n {m[1]}-->{evaluate(m[1])}<!--/n-->", document)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--into", help="fill the markers of this file")
    parser.add_argument("--check", help="exit 1 if a marker of this file holds a stale value")
    args = parser.parse_args(argv)
    path = Path(args.into or args.check or REPO / "gemm.md")
    try:
        document = path.read_text(encoding="utf-8")
        found = markers(document)
    except (OSError, ValueError) as error:
        print(f"post_tables.py: error: {getattr(error, 'strerror', None) or error}", file=sys.stderr)
        return 1
    if args.check:
        stale = [(e, w, c, document.count("\n", 0, at) + 1) for e, w, c, at in found if w != c]
        for expression, was, now, line in stale:
            print(f"{path}:{line}: <!--n {expression}--> says {was}, results/ give {now}", file=sys.stderr)
        return 1 if stale else 0
    if args.into:
        path.write_text(fill(document), encoding="utf-8")
        print(f"post_tables.py: {len(found)} numbers of the prose filled in {path}")
        return 0
    for expression, _, value, _ in found:
        print(f"{value:>10}  {expression}")
    return 0
