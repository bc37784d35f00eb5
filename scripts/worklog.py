#!/usr/bin/env python3
"""The tiled kernel's worklog: every optimisation step of gemm.md, measured.

    python3 scripts/worklog.py run [--types T1,T2] [--size 8192] [--explore T1,T2|all] [--parts T1,T2|all]
                                   [--hopper] [--no-steps] [--layout TN] [--out results]
    python3 scripts/worklog.py table results/X-worklog.csv [--into gemm.md]
    python3 scripts/worklog.py excerpts [--into gemm.md]

`run` needs an NVIDIA GPU and the CUDA toolkit. For each type pair it builds
one binary per step below, all in the layout TN (A plain, B transposed: the one
cuBLAS's int8 GEMM is fast in), and times each at 8192^3 with ./gemm
--kernel=tiled, verified on a sample. One more run per pair gives the simple
kernel and cuBLAS side by side, and ./gemm --ceiling the WMMA ceiling. Every
line of ./gemm's CSV is kept, prefixed with the step, in
results/<gpu>-<date>-worklog.csv; it is written as the runs finish, so an
interrupted run keeps what it measured. --explore also times, for the type
pairs it names, variants that are not steps (other block tiles, steps along K, skews, groupings), to choose
the settings by. --parts times, for the pairs it names, the shipped kernel
built twice more with half of its work left out (worklog/copies-only.md and
worklog/math-only.md): its results are wrong, so those runs are not verified.
--hopper also times the Hopper kernel's steps (hopper_steps()), variants and
parts for the 16-bit pairs with ./gemm --kernel=wgmma; it needs a Hopper GPU,
for which every build is compiled as sm_90a.

A step is gemm.md with some settings on the compiler's command line and, where
the step's code differs from the shipped kernel's, the change files of
worklog/ that hold its code (tangle.py --change): the shipped kernel carries
no switch for its own history. In a step's settings the key "changes" lists
those files.
--layout builds everything for another layout than TN.

`table` turns such a CSV into the Markdown table of the post (eTOPS per step
and type pair, with cuBLAS and the ceiling) and with --into replaces the
table between the markers <!-- worklog:begin --> and <!-- worklog:end --> of
that file. It uses only the standard library.

`excerpts` shows the steps' code changes in the post as diffs made from the
code itself. Each step whose code changed has its code kept whole: the
earlier version in a change file of worklog/, the later one in gemm.md or in
the next change file. For each entry of EXCERPTS it takes the named fragment
from both places and writes a unified diff of the two between the markers
<!-- excerpt:NAME:begin --> and <!-- excerpt:NAME:end --> of the post (with
--into; else it prints them), so the excerpts are never typed by hand and
always show the code that builds. Standard library only.
"""

import argparse
import datetime
import difflib
import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
import gemmlib  # noqa: E402  (builds and runs; the lists of pairs and layouts)
import tangle  # noqa: E402  (the fragments that `excerpts` compares)
import sweep  # noqa: E402  (the same GPU detection, CSV reading and number format)

REPO = sweep.REPO
BUILD = Path("build/worklog")
RUN_TIMEOUT = 300   # seconds for one ./gemm run; at 8192^3 one takes a few
BEGIN, END = "<!-- worklog:begin -->", "<!-- worklog:end -->"
PAIRS = gemmlib.pairs()     # ./gemm --describe's type pairs: names, element types, kernels
# cuBLAS's names of the layouts (the report's), as (TRANSPOSE_A, TRANSPOSE_B) of gemm.md.
LAYOUTS = {name: tuple(t) for name, t in gemmlib.registry()["layouts"].items()}
KERNELS = [k["name"] for k in gemmlib.registry()["kernels"]]   # the CSV's impl of each kernel
SHORT_NAMES = {t: p["short"] for t, p in PAIRS.items()}
# The pairs the steps are measured with: those the tiled kernel takes (all but FP8).
TILED_TYPES = [t for t in sweep.TYPES if "tiled" in PAIRS[t]["kernels"]]

# The steps, in the order of the post. Each names the settings it builds with;
# anything not named keeps gemm.md's default, so the last step is the kernel
# exactly as gemm.md ships it. "simple" is not a build of the tiled kernel.
# The first steps use the first block tile tried: 128 x 256 with 2 x 4 warps
# (double: 128 x 128, 4 x 2 warps), a step of 64 bytes along K, the
# compiler's own choice of wmma.load, and the loop that loads a step's
# fragments and then multiplies them.
STEP_TITLES = {"simple": "simple kernel",
               "tile": "1. block tile in shared memory",
               "skew": "2. rows skewed by 16 bytes",
               "stages2": "3. cp.async, 2 stages",
               "stages3": "4. 3 stages",
               "stages4": "4b. 4 stages (not kept)",
               "epilogue": "5. epilogue via shared memory",
               "grouped": "6. blocks grouped by 8 rows",
               "ptxload": "7. shared form of wmma.load",
               "k128": "8. steps of 128 bytes along K",
               "block": "9. block tile per type pair",
               "skew32": "10. skew of 32 bytes for tf32 and 8-bit",
               "prefetch": "11. fragments loaded a step ahead",
               "spread": "12. copies spread (16-bit); tf32 not ahead",
               "shipped": "13. eight loads of C in flight: as shipped"}
STEPS = [(key, title, None) for key, title in STEP_TITLES.items()]
# What each step was expected to do for the running example (the default pair), in a few
# words, for the main path's table; Appendix F's "Each step, predicted and measured" gives
# the reasoning, and a test finds each number of these there.
EXPECTED = {"simple": "27, from memory", "tile": "about 200", "skew": "+20 % or more",
            "stages2": "up to twice", "stages3": "small, if any", "stages4": "small, if any",
            "epilogue": "none", "grouped": "none", "ptxload": "none for `half`",
            "k128": "per-step costs halved", "block": "a trade-off", "skew32": "none for `half`",
            "prefetch": "+10 to 20 %", "spread": "a few % at most", "shipped": "+5 to 10 %"}
NOT_KEPT = {"stages4"}   # a step measured but not built on: the next step compares with the one before
PTX_LOADED = {t for t, p in PAIRS.items() if p["ptx_load"]}   # where the ptxload step changes anything
CHANGES = Path("worklog")   # the change files, one per piece of code that an earlier step had
# The change files of the measurement builds, for the settings that name them.
LEAVE_OUT = {"LEAVE_OUT_MATH": "copies-only", "LEAVE_OUT_COPIES": "math-only"}


def first_tile(type_pair):
    """The block tile the first steps used: 64 bytes along K; 128 x 256 with 2 x 4 warps,
    and for double (whose fragments take twice the registers) 128 x 128 with 4 x 2."""
    k64 = {"BLOCK_K": 64 // PAIRS[type_pair]["in_bytes"]}
    if PAIRS[type_pair]["in"] == "double":
        return dict(k64, BLOCK_M=128, BLOCK_N=128, BLOCK_WARPS_M=4, BLOCK_WARPS_N=2)
    return dict(k64, BLOCK_M=128, BLOCK_N=256, BLOCK_WARPS_M=2, BLOCK_WARPS_N=4)


def steps_for(type_pair):
    """[(key, title, settings or None)] for one type pair, in the order of STEPS."""
    first = dict(first_tile(type_pair), PREFETCH_FRAGMENTS=0, SPREAD_COPIES=0)
    one_load = ("one-load-epilogue",)             # steps 1 to 12: one load of C at a time
    compilers = ("compilers-load",) + one_load   # steps 1 to 6: the compiler's wmma.load
    direct = ("direct-epilogue",) + compilers    # steps 1 to 4: the epilogue from fragments
    base = dict(first, STAGES=1, SKEW_BYTES=0, GROUP_M=1, changes=("one-stage",) + direct)
    then = ("loads-then-multiplies",)             # steps 3 to 10: the loop before step 11
    loop = then + one_load
    pipelined = dict(base, SKEW_BYTES=16, changes=then + direct)
    settings = {
        "simple": None,
        "tile": base,
        "skew": dict(base, SKEW_BYTES=16),
        "stages2": dict(pipelined, STAGES=2),
        "stages3": dict(pipelined, STAGES=3),
        "stages4": dict(pipelined, STAGES=4),
        "epilogue": dict(first, STAGES=3, GROUP_M=1, changes=then + compilers),
        "grouped": dict(first, STAGES=3, changes=then + compilers),
        "ptxload": dict(first, STAGES=3, changes=loop),
        "k128": dict({k: v for k, v in first.items() if k != "BLOCK_K"}, STAGES=3, changes=loop),
        "block": {"SKEW_BYTES": 16, "PREFETCH_FRAGMENTS": 0, "SPREAD_COPIES": 0, "changes": loop},
        "skew32": {"PREFETCH_FRAGMENTS": 0, "SPREAD_COPIES": 0, "changes": loop},
        "prefetch": {"PREFETCH_FRAGMENTS": 1, "SPREAD_COPIES": 0, "changes": one_load},
        "spread": {"changes": one_load},
        "shipped": {},
    }
    return [(key, title, settings[key]) for key, title, _ in STEPS]


def explore_variants(type_pair):
    """Variants around the shipped settings, for choosing the next ones; not steps of the post.

    A variant that leaves out part of the kernel (LEAVE_OUT_*) is timed
    without verification. (The variants of earlier rounds are recorded, with
    their settings, in the explore CSVs under results/.)
    """
    variants = [("p0", "fragments loaded, then multiplied (step 10)",
                 {"PREFETCH_FRAGMENTS": 0, "SPREAD_COPIES": 0}),
                ("shipped", "as shipped", {})]
    if PAIRS[type_pair]["in_bytes"] == 2:
        variants.append(("nospread", "copies not spread (step 11)", {"SPREAD_COPIES": 0}))
    if PAIRS[type_pair]["in"] == "float (as tf32)":
        variants.append(("p1", "fragments loaded a step ahead", {"PREFETCH_FRAGMENTS": 1}))
    if type_pair == "F16_IN_OUT":   # half accumulators take half the registers: wider warp tiles
        square = {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_WARPS_M": 4, "BLOCK_WARPS_N": 2}
        variants += [
            ("w64x128-s2", "block 256 x 256, 4 x 2 warps of 64 x 128, 2 stages", dict(square, STAGES=2)),
            ("w64x128-s3", "the same, 3 stages", dict(square, STAGES=3)),
            ("w64x128-s2-p0", "the same, 2 stages, not ahead", dict(square, STAGES=2, PREFETCH_FRAGMENTS=0,
                                                                     SPREAD_COPIES=0)),
            ("w64x128-s3-p0", "the same, 3 stages, not ahead", dict(square, STAGES=3, PREFETCH_FRAGMENTS=0,
                                                                     SPREAD_COPIES=0)),
            ("w64x128-s3-ns", "the same, 3 stages, copies not spread", dict(square, STAGES=3, SPREAD_COPIES=0)),
            ("b128x512-s2", "block 128 x 512, 2 x 4 warps of 64 x 128, 2 stages",
             {"BLOCK_N": 512, "STAGES": 2}),
            ("copies-w64x128-s3", "copies only, 256 x 256, 3 stages", dict(square, STAGES=3, LEAVE_OUT_MATH=1)),
            ("math-w64x128-s3", "math only, 256 x 256, 3 stages", dict(square, STAGES=3, LEAVE_OUT_COPIES=1)),
        ]
    return variants


# The Hopper kernel's steps (`run --hopper`), for the 16-bit pairs, timed with --kernel=wgmma:
# the first as a change file, then the shipped block with its blocks in plain row order, then
# grouped, all three with the epilogue of one element at a time; then the batched epilogue,
# the width chosen by the waves, the persistent blocks, the epilogue through shared memory
# and the TMA, the 64-wide tile and split last wave, the producer's copies of C into the
# stages; last the shipped kernel, which has a tile of 192 rows too.
HOPPER_STEP_TITLES = {"h-one-role": "H1. TMA and wgmma, no producer, 2 stages",
                      "h-roles": "H2. a producer warp group, setmaxnreg, 4 stages",
                      "h-grouped": "H3. blocks grouped by 8 rows",
                      "h-batched": "H4. the epilogue's loads in batches",
                      "h-widths": "H5. the tile's width chosen by the waves",
                      "h-persistent": "H6. a block per multiprocessor, tile after tile",
                      "h-tma-store": "H7. C stored by the TMA from shared memory",
                      "h-last-wave": "H8. a 64-wide tile; the last wave's K split",
                      "h-c-pipeline": "H9. C copied in through the pipeline",
                      "h-taller": "H10. a 192-row tile for f16→f16 on large problems",
                      "h-square-waves": "H11. a wave's tiles as tall as wide: as shipped"}
# What each was expected to do, as EXPECTED for the tiled kernel (Appendix F reasons it out).
HOPPER_EXPECTED = {"h-one-role": "half to three quarters of full speed",
                   "h-roles": "most of H1's stops gone", "h-grouped": "a prototype's 82–102 % of cuBLAS",
                   "h-batched": "up to +20 %", "h-widths": "nothing at 8192³; 1.17× at 3000³",
                   "h-persistent": "a few per cent",
                   "h-tma-store": "up to the +10–13 % the epilogue costs",
                   "h-last-wave": "1.3× at 1024³, none at 8192³",
                   "h-c-pipeline": "up to what reading C costs",
                   "h-taller": "f16→f16 only: +4–5 % at 8192³, sustained",
                   "h-square-waves": "about +1 % at 8192³, sustained"}
HOPPER_TYPES = tuple(gemmlib.hopper_pairs(native=True))   # the 16-bit pairs


def hopper_steps():
    """[(key, title, settings)] of the Hopper kernel's steps, in order."""
    global_c = ("hopper-c-from-global",)   # before H9, the consumers read C themselves
    whole = ("hopper-whole-waves",) + global_c   # before H8, the host never splits K either
    direct = whole + ("hopper-direct-epilogue", "hopper-one-width", "hopper-one-tile")
    batched = whole + ("hopper-batched-stores", "hopper-one-width", "hopper-one-tile")
    settings = {"h-one-role": {"GROUP_M": 1, "changes": ("hopper-one-role",) + direct},
                "h-roles": {"GROUP_M": 1, "changes": direct},
                "h-grouped": {"changes": direct},
                "h-batched": {"changes": batched},
                "h-widths": {"changes": whole + ("hopper-batched-stores", "hopper-one-tile")},
                "h-persistent": {"changes": whole + ("hopper-batched-stores",)},
                "h-tma-store": {"changes": whole},
                "h-last-wave": {"changes": global_c},
                "h-c-pipeline": {}}
    # Before H10 every tile has two consumer groups: that change file first, so that a later
    # one's own table of tiles (one width, whole waves) stands.
    settings = {k: dict(s, changes=TWO_CONSUMERS + s.get("changes", ())) for k, s in settings.items()}
    settings["h-taller"] = {"changes": BEFORE_H11}
    settings["h-square-waves"] = {}
    return [(key, title, settings[key]) for key, title in HOPPER_STEP_TITLES.items()]


# Before step H11 (and in the variants measured before it) the Hopper kernel's tiles went in
# groups of GROUP_M rows, as the other kernels' do: a change file puts that back.
BEFORE_H11 = ("hopper-group-m",)
# Before step H10 (and in the variants measured before it) every Hopper tile had two consumer
# groups: a change file takes the 192-row tile out of the table.
TWO_CONSUMERS = BEFORE_H11 + ("hopper-two-consumers",)

# Variants of the Hopper kernel that are not steps (`run --hopper` times them too, as kind
# "hopper-explore"): experiments that a measurement may promote.
# Each was measured on the kernel of its time, step H8 or earlier, whose consumers read C,
# except h-clusters, h-prefetch-maps and h-lean-steps, which are built on step H9,
# h-one-barrier, built on step H10, and h-quiet-waits, built on step H11.
HOPPER_VARIANTS = [("h-prefetch", "C prefetched into L2 eight steps before the end of K",
                    {"changes": TWO_CONSUMERS + ("hopper-c-from-global", "hopper-prefetch-c")}),
                   ("h-spread", "C prefetched into L2 a few rows a step over the last 32 steps",
                    {"changes": TWO_CONSUMERS + ("hopper-c-from-global", "hopper-spread-c")}),
                   ("h-spread-all", "C prefetched into L2 a row a step over the whole of K",
                    {"HOPPER_SPREAD_C": 0, "changes": TWO_CONSUMERS + ("hopper-c-from-global", "hopper-spread-c")}),
                   ("h-ping-pong", "two consumer groups taking turns, a tile of 128 rows each",
                    {"changes": BEFORE_H11 + ("hopper-c-from-global", "hopper-ping-pong")}),
                   ("h-sum-inside", "a split tile's slices added inside the kernel",
                    {"changes": TWO_CONSUMERS + ("hopper-c-from-global", "hopper-sum-inside")}),
                   ("h-clusters", "clusters of two blocks, B multicast into both",
                    {"changes": TWO_CONSUMERS + ("hopper-clusters",)}),
                   ("h-prefetch-maps", "the tensor maps fetched at the kernel's start",
                    {"changes": TWO_CONSUMERS + ("hopper-prefetch-maps",)}),
                   ("h-lean-steps", "a step of K in fewer instructions",
                    {"changes": TWO_CONSUMERS + ("hopper-lean-steps",)}),
                   ("h-one-barrier", "one barrier of the consumer group per box of C, not two",
                    {"changes": BEFORE_H11 + ("hopper-one-barrier-epilogue",)}),
                   ("h-quiet-waits", "barrier waits that sleep until the phase completes",
                    {"changes": ("hopper-quiet-waits",)})]

# Experiments on the tiled and mma.sync kernels, not kept (compare_gpu.py --new-change NAME
# --kernel mma rebuilds each beside the shipped kernel; each file says what it measured).
TILED_VARIANTS = [("interleaved-loads", "fragment loads spread among the multiplies",
                   {"changes": ("interleaved-loads",)}),
                  ("one-block-loop", "the main loop's barrier and next loads not conditional",
                   {"changes": ("one-block-loop",)}),
                  ("serpentine-multiplies", "every other row of multiplies right to left",
                   {"changes": ("serpentine-multiplies",)})]

# Experiments on the Hopper kernel not yet checked on a GPU: compare_gpu.py --new-change builds
# them; `run --hopper` leaves them out until a check and a timing promote them to the variants.
HOPPER_UNCHECKED = [("h-cluster-arrivals", "the clusters, each consumer group telling the other block once",
                     {"changes": ("hopper-clusters", "hopper-cluster-arrivals")})]

# The Hopper kernel with part of its work left out (kind "hopper-part", timed without
# verification): the ceiling of its wgmmas, its copies alone, and its cost without the epilogue
# (which, since step H9, includes the copies of C into the stages).
HOPPER_PARTS = [("h-math", "wgmma alone: no copies, no barriers, no epilogue",
                 {"changes": TWO_CONSUMERS + ("hopper-c-from-global", "hopper-math-only", "hopper-no-epilogue")}),
                ("h-copies", "copies and barriers only, no wgmma",
                 {"changes": TWO_CONSUMERS + ("hopper-copies-only",)}),
                ("h-no-epilogue", "step H9 without its epilogue",
                 {"changes": TWO_CONSUMERS + ("hopper-c-from-global", "hopper-no-epilogue")})]


# The shipped kernel with half of its work left out (wrong results, so not
# verified): how long the copies take without the arithmetic, and the
# arithmetic, out of shared memory, without the copies.
PARTS = [("copies", "copies and barriers only", {"changes": ("copies-only",)}),
         ("math", "fragment loads and mma_sync only", {"changes": ("math-only",)})]


# ---------------------------------------------------------------- the table

def step_titles():
    return {key: title for key, title, _ in STEPS}


def read_worklog(path):
    """(meta, rows) of a worklog CSV: sweep's CSV rows with a 'step' column."""
    meta, rows = sweep.read_csv(path)
    if not rows:
        raise ValueError(f"{path}: no rows of measurements")
    for row in rows:
        if "step" not in row:
            raise ValueError(f"{path}: not a worklog CSV (no 'step' column)")
    return meta, rows


def step_cells(rows):
    """{(row, pair): eTOPS} of the worklog's steps: a step's key for the tiled kernel's builds,
    "simple", "cublas" and "ceiling"; a repeated measurement keeps its last."""
    cell = {}
    for r in rows:
        if r.get("result") == "FAIL" or r.get("kind", "step") != "step":
            continue
        if r["impl"] in ("cublas", "ceiling"):
            cell[(r["impl"], r["type"])] = r["etops"]
        elif r["step"] == "simple" and r["impl"] == "simple":
            cell[("simple", r["type"])] = r["etops"]
        elif r["impl"] == "tiled":
            cell[(r["step"], r["type"])] = r["etops"]
    return cell


def make_table(rows):
    """The Markdown table: one row per step, one column per type pair, eTOPS.

    A step's cell is its kernel's median eTOPS; the row "simple kernel" is the
    simple kernel's, and two more rows give cuBLAS (in the same runs as the
    simple kernel) and the WMMA ceiling. The last row gives the shipped
    kernel's share of cuBLAS's speed. A repeated measurement keeps its last row.
    """
    types = sorted({r["type"] for r in rows}, key=sweep.type_order)
    cell = step_cells(rows)
    titles = step_titles()
    header = ["step"] + [SHORT_NAMES.get(t, t) for t in types]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(["---"] + ["---:"] * len(types)) + "|"]
    for key, _, _ in STEPS:
        if any((key, t) in cell for t in types):
            lines.append("| " + " | ".join([titles[key]] + [sweep.fmt3(cell.get((key, t)))
                                                              for t in types]) + " |")
    last = STEPS[-1][0]
    for key, title in (("cublas", "cuBLAS"), ("ceiling", "WMMA ceiling")):
        if any((key, t) in cell for t in types):
            lines.append("| " + " | ".join([title] + [sweep.fmt3(cell.get((key, t))) for t in types]) + " |")
    shares = [percent(cell.get((last, t)), cell.get(("cublas", t))) for t in types]
    if any(s != sweep.MISSING for s in shares):
        lines.append("| " + " | ".join(["shipped / cuBLAS"] + shares) + " |")
    return "\n".join(lines) + "\n"


# The dense tensor-core peaks of NVIDIA's H100 SXM datasheet, without sparsity, in TFLOP/s
# (TOPS for int8), by input type: the ceiling table's yardstick.
PEAK_BY_INPUT = {"half": 989, "bfloat16": 989, "float (as tf32)": 495, "double": 67,
                 "signed char": 1979, "unsigned char": 1979}
DATASHEET_PEAK = {t: PEAK_BY_INPUT.get(p["in"]) for t, p in PAIRS.items()}


def last_cells(rows, kind, impl, step=None, size=None):
    """{type: etops} of the last passing row of that kind, implementation and step (and M, if
    given)."""
    cells = {}
    for r in rows:
        if r.get("result") == "FAIL" or r.get("kind", "step") != kind or r["impl"] != impl:
            continue
        if size is not None and int(r["M"]) != size:
            continue
        if step is None or r["step"] == step:
            cells[r["type"]] = r["etops"]
    return cells


def shown(x):
    """x as a table shows it (three significant figures), so that a ratio or a change computed
    from it is the one a reader computes from the table."""
    return float(sweep.fmt3(x))


def percent(a, b):
    return f"{100 * shown(a) / shown(b):.0f} %" if a and b else sweep.MISSING


def change(before, after):
    """The change from one row's figure to the next, as the table shows them: "×4.4" or "+39 %"."""
    if not before or not after:
        return sweep.MISSING
    r = shown(after) / shown(before)
    if r >= 2:
        return f"×{r:.1f}"
    p = round(100 * (r - 1))
    return f"{p:+d} %".replace("-", "−") if p else "0 %"


def make_example_table(rows):
    """The main path's table: the running example's pair alone, each step with what it was
    expected to do, its eTOPS and the change from the step it built on; then cuBLAS, the WMMA
    ceiling and the shipped kernel's share of cuBLAS."""
    pair = gemmlib.registry()["build"]["type"]
    cell = {key: v for (key, t), v in step_cells(rows).items() if t == pair}
    lines = [f"| step | expected | {SHORT_NAMES.get(pair, pair)} | change |", "|---|---|---:|---:|"]
    before = None
    for key, title, _ in STEPS:
        if key in cell:
            lines.append(f"| {title} | {EXPECTED[key]} | {sweep.fmt3(cell[key])} | "
                         f"{change(cell.get(before), cell[key]) if before else ''} |")
            before = before if key in NOT_KEPT else key
    for key, title in (("cublas", "cuBLAS"), ("ceiling", "WMMA ceiling")):
        if key in cell:
            lines.append(f"| {title} | | {sweep.fmt3(cell[key])} | |")
    if STEPS[-1][0] in cell and "cublas" in cell:
        lines.append(f"| shipped / cuBLAS | | {percent(cell[STEPS[-1][0]], cell['cublas'])} | |")
    return "\n".join(lines) + "\n"


def make_ceiling_table(rows):
    """The WMMA ceiling per pair beside cuBLAS at 8192^3 and the datasheet peak.

    The same rows as the worklog table's last two lines, so the two tables agree.
    """
    ceiling, cublas = last_cells(rows, "step", "ceiling"), last_cells(rows, "step", "cublas")
    types = sorted(ceiling, key=sweep.type_order)
    lines = ["| pair | ceiling | cuBLAS | peak | ceiling / peak | ceiling / cuBLAS |",
             "|---|---:|---:|---:|---:|---:|"]
    for t in types:
        c, b, p = ceiling.get(t), cublas.get(t), DATASHEET_PEAK.get(t)
        lines.append(f"| {SHORT_NAMES.get(t, t)} | {sweep.fmt3(c)} | {sweep.fmt3(b)} | {p} | "
                     f"{percent(c, p)} | {percent(c, b)} |")
    return "\n".join(lines) + "\n"


def make_parts_table(rows):
    """The shipped kernel against its two halves (copies only, math only), eTOPS."""
    copies, math = last_cells(rows, "part", "tiled", "copies"), last_cells(rows, "part", "tiled", "math")
    whole = last_cells(rows, "step", "tiled", STEPS[-1][0])
    types = sorted(set(copies) | set(math), key=sweep.type_order)
    lines = ["| pair | copies only | math only | whole kernel | kernel / slower half |",
             "|---|---:|---:|---:|---:|"]
    for t in types:
        c, m, w = copies.get(t), math.get(t), whole.get(t)
        slower = min(c, m) if c and m else None
        lines.append(f"| {SHORT_NAMES.get(t, t)} | {sweep.fmt3(c)} | {sweep.fmt3(m)} | {sweep.fmt3(w)} | "
                     f"{percent(w, slower)} |")
    return "\n".join(lines) + "\n"


# The targets set before the tiled kernel was written: a share of cuBLAS (85 % for double,
# 45 % for 8-bit integers, 50 % for the others), and ten times the simple kernel for every pair.
TARGETS = {t: 85 if p["in"] == "double" else 45 if p["integer"] else 50 for t, p in PAIRS.items()}


def make_targets_table(rows):
    """The shipped kernel against cuBLAS (with its target), the simple kernel and the ceiling."""
    whole = last_cells(rows, "step", "tiled", STEPS[-1][0])
    cublas, simple = last_cells(rows, "step", "cublas"), last_cells(rows, "step", "simple")
    ceiling = last_cells(rows, "step", "ceiling")
    lines = ["| pair | tiled / cuBLAS | target | tiled / simple | tiled / ceiling |",
             "|---|---:|---:|---:|---:|"]
    for t in sorted(whole, key=sweep.type_order):
        w, s = whole[t], simple.get(t)
        lines.append(f"| {SHORT_NAMES.get(t, t)} | {percent(w, cublas.get(t))} | {TARGETS.get(t, '?')} % | "
                     f"{f'{w / s:.1f}×' if s else sweep.MISSING} | {percent(w, ceiling.get(t))} |")
    return "\n".join(lines) + "\n"


def hopper_sizes(rows):
    """The sizes (M) of the Hopper steps' runs, largest first."""
    return sorted({int(r["M"]) for r in rows if r.get("kind") == "hopper"}, reverse=True)


def latest_hopper_step(rows):
    """The latest of the Hopper kernel's steps that the rows have a passing run of at their
    largest size, whose every pair both tables show (the first step where they have none): the
    kernel both Hopper tables compare with cuBLAS."""
    size = (hopper_sizes(rows) or [None])[0]
    have = [key for key, _, _ in hopper_steps() if last_cells(rows, "hopper", "wgmma", key, size)]
    return have[-1] if have else hopper_steps()[0][0]


def make_hopper_table(rows):
    """The Hopper kernel's steps (rows of kind "hopper"), eTOPS per 16-bit pair at the largest
    size, and for the first pair at each smaller size, with cuBLAS from the last step's runs and
    the shipped kernel's share of it."""
    types = sorted({r["type"] for r in rows if r.get("kind") == "hopper"}, key=sweep.type_order)
    sizes = hopper_sizes(rows)
    if not sizes:
        raise ValueError("the worklog has no runs of the Hopper kernel's steps (worklog.py run --hopper)")
    columns = [(sizes[0], t) for t in types] + [(size, types[0]) for size in sizes[1:]]
    names = [SHORT_NAMES.get(t, t) + ("" if size == sizes[0] else f", {size}³") for size, t in columns]

    def row(impl, key=None):
        return [last_cells(rows, "hopper", impl, key, size).get(t) for size, t in columns]
    steps = hopper_steps()
    cells = [(key, title, HOPPER_EXPECTED[key], row("wgmma", key)) for key, title, _ in steps]
    cells = [c for c in cells if any(x is not None for x in c[3])]   # the steps the runs have
    cublas = row("cublas")
    lines = ["| step | expected | " + " | ".join(names) + " |",
             "|" + "|".join(["---", "---"] + ["---:"] * len(columns)) + "|"]
    for _, title, expected, cell in cells + [(None, "cuBLAS", "", cublas)]:
        lines.append("| " + " | ".join([title, expected] + [sweep.fmt3(c) for c in cell]) + " |")
    key, title, _, last = next(c for c in cells if c[0] == latest_hopper_step(rows))
    name = "shipped" if key == steps[-1][0] else title.split(".")[0]
    lines.append("| " + " | ".join([f"{name} / cuBLAS", ""] + [percent(a, b) for a, b in zip(last, cublas)])
                 + " |")
    return "\n".join(lines) + "\n"


def make_hopper_parts_table(rows):
    """The Hopper kernel (the latest step the rows have) against its parts (kind "hopper-part")
    and cuBLAS, eTOPS per 16-bit pair at the largest size, with the kernel's share of its
    wgmmas' ceiling."""
    last = latest_hopper_step(rows)
    size = (hopper_sizes(rows) or [None])[0]
    whole, cublas = (last_cells(rows, "hopper", impl, key, size) for impl, key in (("wgmma", last), ("cublas", None)))
    parts = {key: last_cells(rows, "hopper-part", "wgmma", key, size) for key, _, _ in HOPPER_PARTS}
    types = sorted(set(whole) | {t for cells in parts.values() for t in cells}, key=sweep.type_order)
    lines = ["| pair | wgmma alone | copies and epilogue | without epilogue | kernel | cuBLAS "
             "| kernel / wgmma alone |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for t in types:
        cells = [parts[key].get(t) for key, _, _ in HOPPER_PARTS] + [whole.get(t), cublas.get(t)]
        lines.append(f"| {SHORT_NAMES.get(t, t)} | " + " | ".join(sweep.fmt3(c) for c in cells) +
                     f" | {percent(whole.get(t), parts['h-math'].get(t))} |")
    return "\n".join(lines) + "\n"


# The tables `table --into` writes: the markers around each, and how it is made.
TABLES = {"worklog": make_table, "worklog-example": make_example_table, "ceiling": make_ceiling_table, "parts": make_parts_table,
          "targets": make_targets_table, "hopper-worklog": make_hopper_table,
          "hopper-parts": make_hopper_parts_table}


def describe(meta, rows, kinds=("step",)):
    """One sentence under the table of the rows of those kinds: where and when they were
    measured, and how."""
    gpu = meta.get("gpu") or (rows[0]["device"] if rows else "an unknown GPU")
    date = meta.get("date", "an unknown date")
    kernels = [r for r in rows if r.get("kind", "step") in kinds and r["impl"] in KERNELS]
    sizes = sorted({int(r["M"]) for r in kernels}, reverse=True) or ["?"]
    size = f"{sizes[0]}³" + (f" (the last column{'s' if len(sizes) > 2 else ''} {', '.join(f'{s}³' for s in sizes[1:])})"
                              if len(sizes) > 1 else "")
    verified = kernels and all(r.get("verify") not in ("off", None) and r.get("result") == "PASS"
                               for r in kernels)
    beside = "the last step" if "hopper" in kinds else "the simple kernel"
    return (f"Median eTOPS of {rows[0]['repeat'] if rows else '?'} timed launches at "
            f"{size}, layout {rows[0]['layout'] if rows else 'TN'}, on {gpu}, {date}, cuBLAS "
            f"beside {beside}; {'every run verified' if verified else 'not every run verified'}."
            f"^[Made by `python3 scripts/worklog.py table` from `{meta.get('file', 'the worklog CSV')}`.]\n")


def insert_table(document, table, name="worklog"):
    """document with the text between the markers of `name` replaced by table; ValueError without them."""
    opening, closing = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    begin, end = document.find(opening), document.find(closing)
    if begin < 0 or end < begin:
        raise ValueError(f"the markers {opening} and {closing} are missing or out of order")
    return document[:begin + len(opening)] + "\n" + table + document[end:]


def fill_markers(prog, made, into, what="tables"):
    """The command-line end of a script that makes parts of the post: print `made` ({name: text}),
    or, with `into`, put each between its markers in that file. Returns the exit status."""
    try:
        if not into:
            for name, text in made.items():
                sys.stdout.write(f"{name}:\n{text}\n")
            return 0
        path = Path(into)
        document = path.read_text(encoding="utf-8")
        for name, text in made.items():
            document = insert_table(document, text, name)
        path.write_text(document, encoding="utf-8")
    except (OSError, ValueError, KeyError) as error:
        print(f"{prog}: error: {getattr(error, 'strerror', None) or error}", file=sys.stderr)
        return 1
    print(f"{prog}: {what} written into {into}")
    return 0


def table(args):
    meta, rows = read_worklog(args.csv)
    meta.setdefault("file", os.path.relpath(args.csv, REPO) if Path(args.csv).is_absolute()
                    else str(args.csv))
    text = make_table(rows) + "\n" + describe(meta, rows)
    hopper_only = all(r.get("kind", "step").startswith("hopper") for r in rows)
    if args.into:
        # The tables named (--tables); by default the worklog table, and the ceiling and parts
        # tables wherever their markers are, or from a file of Hopper runs alone the Hopper tables.
        path = Path(args.into)
        document = path.read_text(encoding="utf-8")
        named = getattr(args, "tables", None)
        for name, make in TABLES.items():
            if (name not in named) if named else (name.startswith("hopper-") != hopper_only):
                continue
            if name == "worklog":
                document = insert_table(document, text)
            elif name == "worklog-example" and f"<!-- {name}:begin -->" in document:
                document = insert_table(document, make(rows) + "\n" + describe(meta, rows), name)
            elif name == "hopper-worklog":
                document = insert_table(document, make(rows) + "\n" + describe(meta, rows, ("hopper",)), name)
            elif f"<!-- {name}:begin -->" in document:
                document = insert_table(document, make(rows), name)
        path.write_text(document, encoding="utf-8")
        print(f"worklog.py: tables written into {path}")
    else:
        sys.stdout.write(make_hopper_table(rows) + "\n" + describe(meta, rows, ("hopper",)) if hopper_only else text)
    return 0


# ---------------------------------------------------------------- measuring

def defines(settings):
    """-D flags for the settings; "changes" are not macros, and LEAVE_OUT_* name change files."""
    return [f"-D{k}={v}" for k, v in sorted(settings.items()) if k != "changes" and k not in LEAVE_OUT]


def changes(settings):
    """The change files a build needs, in order: its own, then the measurement builds'."""
    names = list((settings or {}).get("changes", ()))
    names += [LEAVE_OUT[k] for k in sorted(settings or {}) if k in LEAVE_OUT and settings[k]]
    return [str(CHANGES / f"{name}.md") for name in names]


def source(out, settings):
    """The source a build compiles: gemm.md tangled, with the build's change files if any."""
    files = changes(settings)
    if not files:
        return BUILD / "gemm.cu", None
    try:
        return gemmlib.tangle(REPO / f"{out}.cu", files), None
    except SystemExit as e:
        return Path(f"{out}.cu"), str(e)[-2000:]


def build(cc, type_pair, key, settings, layout="TN"):
    out = BUILD / (f"{type_pair}-{key}" if layout == "TN" else f"{type_pair}-{key}-{layout}")
    cu, error = source(out, settings)
    if error:
        return out, error
    transpose_a, transpose_b = LAYOUTS[layout]
    flags = gemmlib.defines(type_pair, None, transpose_a, transpose_b, cublas=True) + defines(settings or {})
    result = gemmlib.nvcc(REPO / cu, REPO / out, flags, gpu=cc)
    return out, (None if result.returncode == 0 else shlex.join(result.args) + "\n" + result.stderr[-2000:])


def plan(types, args):
    """[(type, key, settings, kind)]: what `run` builds and times, in order.

    kind is "step" for the steps of the post, "explore" for other variants,
    "part" for builds that leave out part of the kernel (LEAVE_OUT_*),
    which are timed without verification, "hopper" for the Hopper kernel's
    steps, "hopper-explore" for its other variants and "hopper-part" for its builds that
    leave out part of it.
    """
    jobs = []
    for t in types:
        for key, _, settings in ([] if args.no_steps else steps_for(t)):
            if args.steps and key not in args.steps.split(","):
                continue
            jobs.append((t, key, settings, "step"))
        if t in args.explore:
            for key, _, settings in explore_variants(t):
                left_out = any(k in LEAVE_OUT for k in settings) or \
                    any(c in LEAVE_OUT.values() for c in settings.get("changes", ()))
                jobs.append((t, key, settings, "part" if left_out else "explore"))
        if t in args.parts:
            for key, _, settings in PARTS:
                jobs.append((t, key, settings, "part"))
        if getattr(args, "hopper", False) and t in HOPPER_TYPES:
            for kind, entries in (("hopper", hopper_steps()), ("hopper-explore", HOPPER_VARIANTS),
                                  ("hopper-part", HOPPER_PARTS)):
                jobs += [(t, key, settings, kind) for key, _, settings in entries
                         if not args.steps or key in args.steps.split(",")]
    return jobs


def worklog_tile(binary):
    """The name of the tile a step's settings define: the binary's first (row 0 of TILES, as
    --describe lists them), so that a step is measured with its own tile whatever the choice
    would take."""
    return gemmlib.describe(binary)["tiles"][0]["name"]


def run(args):
    gpu, cc, driver = sweep.find_gpu("worklog.py", "table")
    types = sweep.parse_types(args.types) if args.types else TILED_TYPES
    (REPO / BUILD).mkdir(parents=True, exist_ok=True)
    gemmlib.tangle(REPO / BUILD / "gemm.cu")
    jobs = plan(types, args)
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        built = list(pool.map(lambda j: build(cc, j[0], j[1], j[2], args.layout), jobs))
    print(f"worklog.py: built {len(jobs)} binaries in {time.monotonic() - start:.0f} s", flush=True)

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    date = datetime.date.today().isoformat()
    path = out_dir / f"{sweep.slug(gpu)}-{date}-worklog.csv"
    header = ",".join(gemmlib.registry()["csv_columns"])
    failed = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"# gpu: {gpu} (sm_{cc}, driver {driver})\n# date: {date}\n"
                f"# command: python3 scripts/worklog.py run {' '.join(sys.argv[2:])}\n")
        f.write("step,kind,settings," + header + "\n")
        for (t, key, settings, kind), (binary, error) in zip(jobs, built):
            label = " ".join(f"{k}={'+'.join(v) if k == 'changes' else v}"
                             for k, v in sorted((settings or {}).items())) or "defaults"
            if error:
                print(f"BUILD FAILED {t} {key}:\n{error}", flush=True)
                f.write(f"# failed: build {t} {key}\n")
                failed += 1
                continue
            verify = "--verify=off" if kind in ("part", "hopper-part") else "--verify=sample"
            runs = []
            for size in args.size:
                common = ["--csv", "--warmup", "3", "--repeat", "10"] + [str(size)] * 3
                if kind.startswith("hopper"):   # cuBLAS beside the last step
                    cublas = "--cublas=on" if key == hopper_steps()[-1][0] else "--cublas=off"
                    runs += [["--kernel=wgmma", cublas, verify] + common]
                elif key == "simple":
                    runs += [["--kernel=simple", verify] + common] + ([["--ceiling", "--csv"]] if not runs else [])
                else:
                    runs += [["--kernel=tiled", f"--tile={worklog_tile(REPO / binary)}", "--cublas=off",
                              verify] + common]
            for extra in runs:
                began = time.monotonic()
                try:   # a step that hangs (a barrier nobody arrives at) fails alone
                    result = gemmlib.run(REPO / binary, extra, timeout=RUN_TIMEOUT)
                except subprocess.TimeoutExpired:
                    result = subprocess.CompletedProcess(extra, 124, "", f"timed out after {RUN_TIMEOUT} s")
                lines = [line for line in result.stdout.splitlines() if line.startswith('"')]
                for line in lines:
                    f.write(f"{key},{kind},\"{label}\",{line}\n")
                f.flush()
                if result.returncode != 0 or not lines:
                    failed += 1
                    f.write(f"# failed: {t} {key} {' '.join(extra)} (exit {result.returncode})\n")
                    print(f"FAILED {t} {key} (exit {result.returncode}): {result.stderr.strip()[-500:]}",
                          flush=True)
                else:
                    shown = gemmlib.parse_csv("\n".join(lines), header)
                    speeds = ", ".join(f"{r['impl']} {float(r['etops']):.1f}" for r in shown)
                    print(f"{t:16} {key:9} {speeds}  ({time.monotonic() - began:.1f} s)", flush=True)
    print(f"worklog.py: wrote {path}; {failed} failed")
    meta, rows = read_worklog(path)
    meta["file"] = str(path)
    if any(r.get("kind", "step") == "step" for r in rows):
        sys.stdout.write(make_table(rows))
    if any(r.get("kind") == "hopper" for r in rows):
        sys.stdout.write(make_hopper_table(rows))
    return 1 if failed else 0


# The post's diffs (`excerpts`), name: (fragment, where it was before, where it is after). A
# place is gemm.md or a change file.
EXCERPTS = {
    "step3": ("The main loop", "worklog/one-stage.md", "worklog/loads-then-multiplies.md"),
    "step3-copy": ("Copying 16 bytes", "worklog/one-stage.md", "gemm.md"),
    "step5": ("Applying the epilogue", "worklog/direct-epilogue.md", "gemm.md"),
    "step7": ("Loading a fragment from shared memory", "worklog/compilers-load.md", "gemm.md"),
    "step11": ("The main loop", "worklog/loads-then-multiplies.md", "gemm.md"),
}


def fragment(path, name):
    """The lines of the named fragment in a Markdown file, its continuations joined."""
    problems = []
    pieces = tangle.read_chunks((REPO / path).read_text(encoding="utf-8"), path, problems)
    lines = [line for chunk, _, _, body in pieces if chunk == name for line in body]
    if not lines:
        raise ValueError(f"{path} has no fragment <<{name}>>")
    expanded = []   # a reference to another fragment of the same file, in its place and indent
    for line in lines:
        inner = re.fullmatch(r"(\s*)<<(.+)>>\s*", line)
        expanded += ([inner[1] + l if l and not l.startswith("#") else l for l in fragment(path, inner[2])]
                     if inner else [line])
    return expanded


def excerpt(name):
    """The diff of one entry of EXCERPTS, as a fenced block."""
    chunk, before, after = EXCERPTS[name]
    diff = difflib.unified_diff(fragment(before, chunk), fragment(after, chunk),
                                f"{before}: <<{chunk}>>", f"{after}: <<{chunk}>>", n=2, lineterm="")
    return "```diff\n" + "\n".join(diff) + "\n```\n"


def excerpts(args):
    try:
        made = {f"excerpt:{name}": excerpt(name) for name in EXCERPTS}
    except (OSError, ValueError) as error:
        print(f"worklog.py: error: {getattr(error, 'strerror', None) or error}", file=sys.stderr)
        return 1
    return fill_markers("worklog.py", made, args.into, "excerpts")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="build and time every step on the GPU present")
    r.add_argument("--types", help="type pairs, comma-separated (default: all)")
    r.add_argument("--size", type=lambda text: [int(x) for x in text.split(",")], default=[8192],
                   help="M = N = K, or several, comma-separated (default 8192)")
    r.add_argument("--layout", choices=sorted(LAYOUTS), default="TN",
                   help="the layout to build for (default TN, the layout of the post's steps)")
    r.add_argument("--explore", type=lambda text: sweep.parse_types(text) if text != "all" else TILED_TYPES,
                   default=[], help="type pairs (comma-separated, or all) for which to time also "
                   "the variants that are not steps")
    r.add_argument("--parts", type=lambda text: sweep.parse_types(text) if text != "all" else TILED_TYPES,
                   default=[], help="type pairs (comma-separated, or all) for which to time the shipped "
                   "kernel with its copies, and then its arithmetic, left out")
    r.add_argument("--hopper", action="store_true", help="also time the Hopper kernel's steps for the "
                   "16-bit pairs (a Hopper GPU only)")
    r.add_argument("--no-steps", action="store_true", help="time only the --explore, --parts and --hopper "
                   "variants")
    r.add_argument("--steps", help="time only these steps, variants and parts (comma-separated keys)")
    r.add_argument("--out", default="results", help="folder for the CSV (default results)")
    t = sub.add_parser("table", help="the Markdown table of a worklog CSV")
    t.add_argument("csv", type=Path)
    t.add_argument("--into", help="replace the table between the worklog markers of this file")
    t.add_argument("--tables", type=lambda text: text.split(","), default=None,
                   help=f"with --into, only these tables (comma-separated: {', '.join(TABLES)})")
    e = sub.add_parser("excerpts", help="the diffs of the steps' code, made from the code")
    e.add_argument("--into", help="replace the excerpts between their markers in this file")
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(args)
    if args.command == "excerpts":
        return excerpts(args)
    try:
        return table(args)
    except (OSError, ValueError, KeyError) as error:
        reason = getattr(error, "strerror", None) or error
        print(f"worklog.py: error: {args.csv}: {reason}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
