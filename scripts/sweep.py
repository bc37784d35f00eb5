#!/usr/bin/env python3
"""Sweep ./gemm over type pairs, layouts and sizes; tabulate and plot the result.

    python3 scripts/sweep.py run [--sizes 256,512,...] [--types T1,T2] [--quick] [--out results]
                                 [--build-dir build/sweep] [--smem-cap KIB]
    python3 scripts/sweep.py report results/X.csv

`run` needs a machine with an NVIDIA GPU and the CUDA toolkit. It tangles
gemm.md once into build/sweep/, builds every type pair (its first WMMA shape)
with B plain and B transposed for the GPU present, times each binary at every
size, kernel and cuBLAS, and writes results/<gpu>-<date>.csv. It uses only
the standard library.

`report` works on any machine. Next to X.csv it writes X.md, a Markdown table,
and X.svg, the plot. The plot needs matplotlib; install the pinned versions with

    python3 -m pip install -r scripts/requirements-sweep.txt
"""

import argparse
import csv
import datetime
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gemmlib  # noqa: E402  (builds, runs and lists: the one place that knows how)

REPO = gemmlib.REPO
BUILD = Path("build/sweep")          # relative to REPO, where every command runs; --build-dir changes it

# The type pairs in the order the table and the plot show them: gemm.md's order (./gemm
# --describe), floating-point pairs first.
TYPES = [p["name"] for p in sorted(gemmlib.registry()["pairs"], key=lambda p: p["integer"])]

# Powers of two, plus sizes that are not multiples of any tile, so that the
# padding shows up in the curves.
DEFAULT_SIZES = sorted([256, 512, 1024, 2048, 4096, 8192, 16384, 1000, 3000, 10000])
QUICK_SIZES = [256, 1024, 4096]
# The shapes (M, N, K) of language models' layers, and an odd neighbour of the first: what
# floors.py times among its problems.
LAYER_SHAPES = [(4096, 11008, 4096), (4096, 4096, 11008), (16384, 4096, 4096), (8192, 28672, 8192),
                (4095, 11007, 4097)]

WARMUP = 3
REPEAT = 10
REPEAT_LARGE = 5                     # for sizes of LARGE and up, where one run is long
LARGE = 16384
RUN_TIMEOUT = 1800                   # seconds; a hung run must not stall the sweep
ENERGY_AT = [8192]                   # the sizes whose runs measure energy (see energy_note)

# Columns of ./gemm's CSV that hold numbers; everything else stays text.
INT_COLUMNS = {"cc", "transpose_a", "transpose_b", "M", "N", "K", "Mp", "Np", "Kp",
               "warmup", "repeat"}
FLOAT_COLUMNS = {"median_ms", "min_ms", "max_ms", "etops", "tflops", "worst_err", "worst_ratio"}

LAYOUT_WORDS = {0: "B plain", 1: "B transposed"}
MISSING = "\u2014"                   # an em dash marks a value that was not measured

ETOPS_SENTENCE = (
    "eTOPS is effective tera-operations per second, the project's yardstick: "
    "a GEMM of M×K by K×N counts MK + (2K−1)MN + 2MN operations (the scaling "
    "by α and β included), more than the 2MNK that TFLOP/s figures count by "
    "a fraction (1/N + 1/K)/2: under half a percent from size 256 up.")


# ---------------------------------------------------------------- small helpers

def parse_sizes(text):
    """'256,1000,256' -> [256, 1000]: sorted, without repeats; ValueError if malformed."""
    sizes = set()
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) <= 0:
            raise ValueError(f"sizes must be positive whole numbers separated by commas, not {text!r}")
        sizes.add(int(part))
    return sorted(sizes)


def parse_types(text):
    """'U8_IN_I32_OUT,F16_IN_OUT' -> the named type pairs, in the table's order."""
    names = {part.strip() for part in text.split(",") if part.strip()}
    unknown = sorted(names - set(TYPES))
    if unknown or not names:
        raise ValueError(f"unknown type pair(s) {', '.join(unknown) or text!r}; "
                         f"choose from {', '.join(TYPES)}")
    return [t for t in TYPES if t in names]


def energy_note(sizes):
    """The CSV's line on the energy windows. Each implementation's three windows of ./gemm's
    --energy-ms take five to fifteen seconds a run (more the larger the problem), as long as the
    rest of a large run and ten times a small one; a run at another size measures none (its
    energy columns empty), and a sweep takes half the time. `sizes` None: every size."""
    if sizes is None:
        return "# energy: measured at every size (./gemm's --energy-ms)"
    return (f"# energy: measured at {', '.join(map(str, sizes)) or 'no size'} (./gemm's --energy-ms); "
            f"at the other sizes --energy-ms=0")


def repeats_for(size):
    """How many timed repetitions a size gets: fewer for the longest runs."""
    return REPEAT_LARGE if size >= LARGE else REPEAT


def slug(name):
    """'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3', for file names."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "gpu"


def format_duration(seconds):
    """62 -> '1m02s', 5 -> '5s', 3725 -> '1h02m': short enough for a progress line."""
    seconds = int(round(max(seconds, 0)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def estimate_left(done, todo):
    """Seconds the runs still to do will take, or None before any has finished.

    done: (size, seconds) of the finished runs; todo: the sizes still to run.
    A run costs a fixed part (starting the process, CUDA and cuBLAS, making the
    inputs) plus a part that grows as size^3 (the timed GEMMs), so a straight
    line is fitted to seconds against size^3 by least squares. Until two sizes
    have been seen there is no slope to fit, and every run is taken to cost the
    mean so far.
    """
    if not done:
        return None
    cubes = [(size / 1024) ** 3 for size, _ in done]    # scaled, to keep the sums modest
    times = [seconds for _, seconds in done]
    mean_cube, mean_time = sum(cubes) / len(cubes), sum(times) / len(times)
    spread = sum((c - mean_cube) ** 2 for c in cubes)
    fixed, per_cube = mean_time, 0.0
    if spread > 0:
        per_cube = sum((c - mean_cube) * (t - mean_time) for c, t in zip(cubes, times)) / spread
        fixed = mean_time - per_cube * mean_cube
        if per_cube < 0:            # noise: bigger was faster; fall back to the mean
            fixed, per_cube = mean_time, 0.0
        elif fixed < 0:             # a negative fixed cost means none: a line through zero
            fixed = 0.0
            per_cube = sum(c * t for c, t in zip(cubes, times)) / sum(c * c for c in cubes)
    return sum(fixed + per_cube * (size / 1024) ** 3 for size in todo)


def fmt3(x):
    """A number with three significant figures, never in exponent form: 29.5, 1070, 0.0123."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return MISSING
    if x == 0:
        return "0"
    decimals = 2 - math.floor(math.log10(abs(x)))
    rounded = round(x, decimals)
    if rounded != 0:                     # 99.96 rounds to 100.0: count its digits again
        decimals = 2 - math.floor(math.log10(abs(rounded)))
        rounded = round(x, decimals)
    if decimals <= 0:
        return str(int(round(rounded)))
    return f"{rounded:.{decimals}f}"


def type_title(type_pair):
    """The name shown for a type pair; U8's cuBLAS numbers are cuBLAS's signed int8 GEMM."""
    return type_pair + " (cuBLAS: s8)" if type_pair.startswith("U8_") else type_pair


# ---------------------------------------------------------------- reading a CSV

def read_csv(path):
    """Read a sweep CSV: returns (meta, rows).

    meta holds the '# key: value' comment lines (keys in lower case; a key that
    comes more than once, like 'failed', keeps every value, joined by '; ').
    rows are dicts keyed by the header's names, with the numeric columns as
    int or float. A header line repeated further down (CSVs concatenated) is
    skipped. A CSV from before the 'layout' column gets one, named from the
    transposes the way ./gemm names it.
    """
    meta, lines = {}, []
    with open(path, newline="", encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                key, sep, value = line[1:].partition(":")
                if sep:
                    key, value = key.strip().lower(), value.strip()
                    meta[key] = f"{meta[key]}; {value}" if key in meta else value
            elif line.strip():
                lines.append(line)
    records = list(csv.reader(lines))
    if not records:
        return meta, []
    header, rows = records[0], []
    for record in records[1:]:
        if record == header:
            continue
        if len(record) != len(header):
            raise ValueError(f"{path}: a line has {len(record)} fields, the header {len(header)}: {record}")
        row = {}
        for name, text in zip(header, record):
            if name in INT_COLUMNS:
                row[name] = int(text)
            elif name in FLOAT_COLUMNS:
                row[name] = float(text)
            else:
                row[name] = text
        if "layout" not in row:
            row["layout"] = ("T" if row.get("transpose_b") else "N") + ("T" if row.get("transpose_a") else "N")
        rows.append(row)
    return meta, rows


def size_of(row):
    """The size a row is filed under: M when the problem is a cube, else its geometric mean."""
    if row["M"] == row["N"] == row["K"]:
        return row["M"]
    return round((row["M"] * row["N"] * row["K"]) ** (1 / 3))


def size_label(row):
    return str(row["M"]) if row["M"] == row["N"] == row["K"] else f"{row['M']}x{row['N']}x{row['K']}"


def type_order(type_pair):
    return (TYPES.index(type_pair), "") if type_pair in TYPES else (len(TYPES), type_pair)


def kernel_impls(rows):
    """The hand-written kernels present (every impl but cuBLAS), in the order first seen."""
    found = []
    for row in rows:
        if row["impl"] != "cublas" and row["impl"] not in found:
            found.append(row["impl"])
    return found or ["simple"]


def legend_entries(impls, present, kernels):
    """The plot's legend: (implementation, its label) for each implementation plotted, then
    (layout, its words) for each layout plotted; present holds the (impl, layout) pairs."""
    return ([(impl, impl_label(impl, kernels)) for impl in impls if any((impl, tb) in present for tb in (0, 1))]
            + [(tb, LAYOUT_WORDS[tb]) for tb in (0, 1) if any((impl, tb) in present for impl in impls)])


def impl_label(impl, kernels):
    """"cuBLAS", "Kernel" where a sweep has one, else the kernel's title in ./gemm --describe
    ("Hopper kernel"), or its name where this ./gemm has no such kernel."""
    if impl == "cublas":
        return "cuBLAS"
    if len(kernels) == 1:
        return "Kernel"
    titles = {k["name"]: k["title"] for k in gemmlib.registry()["kernels"]}
    return titles[impl][0].upper() + titles[impl][1:] if impl in titles else f"Kernel ({impl})"


def table_columns(rows):
    """The eTOPS columns of the table, as (title, impl, transpose_b): kernels first, then cuBLAS."""
    kernels = kernel_impls(rows)
    return [(f"{impl_label(impl, kernels)} eTOPS, {LAYOUT_WORDS[tb]}", impl, tb)
            for impl in kernels + ["cublas"] for tb in (0, 1)]


def ratio_columns(rows):
    """The kernel/cuBLAS columns, as (title, impl, transpose_b)."""
    kernels = kernel_impls(rows)
    return [(f"{impl_label(impl, kernels)}/cuBLAS, {LAYOUT_WORDS[tb]}", impl, tb)
            for impl in kernels for tb in (0, 1)]


def index_rows(rows):
    """{(type, size label, size, impl, transpose_b): row}; a repeated run keeps its last row.

    Only transpose_a = 0 is kept: the sweep never transposes A, and a CSV that
    did would otherwise put two layouts in one cell.
    """
    index = {}
    for row in rows:
        if row.get("transpose_a", 0) == 0:
            index[(row["type"], size_label(row), size_of(row), row["impl"], row["transpose_b"])] = row
    return index


def gpu_of(meta, rows):
    if meta.get("gpu"):
        return meta["gpu"]
    devices = sorted({row["device"] for row in rows if row.get("device")})
    return ", ".join(devices) or "unknown GPU"


# ---------------------------------------------------------------- the table

def etops_cell(row):
    """A measured speed, marked when the run's check failed: a wrong answer's speed means little."""
    if row is None:
        return MISSING
    cell = fmt3(row["etops"])
    return cell + " (FAIL)" if row.get("result") == "FAIL" else cell


def ratio_cell(kernel, cublas):
    if kernel is None or cublas is None or not cublas["etops"]:
        return MISSING
    return fmt3(100.0 * kernel["etops"] / cublas["etops"]) + " %"


def make_table(meta, rows):
    """The Markdown page: a line of provenance, what eTOPS means, one table row per (type, size)."""
    index = index_rows(rows)
    speeds, ratios = table_columns(rows), ratio_columns(rows)
    facts = [f"**GPU:** {gpu_of(meta, rows)}"]
    for key, label in (("driver", "driver"), ("cuda", "CUDA")):
        if meta.get(key):
            facts.append(f"**{label}:** {meta[key]}")
    facts.append(f"**date:** {meta.get('date', 'not recorded')}")
    command = meta.get("command")
    facts.append(f"**command:** `{command}`" if command else "**command:** not recorded")

    out = ["# GEMM sweep", "", " · ".join(facts), "", ETOPS_SENTENCE + (
        " B plain is cuBLAS's NN layout and B transposed its TN layout (A is never "
        "transposed); TN is the fast layout of cuBLAS's int8 GEMM. The last columns give "
        "the kernel's speed as a percentage of cuBLAS's in the same layout."), ""]
    if any(t.startswith("U8_") for t, *_ in index):
        out += ["cuBLAS has no unsigned 8-bit GEMM, so the cuBLAS columns of U8_IN_I32_OUT "
                "(marked “cuBLAS: s8”) time its signed int8 GEMM on the same bytes: the "
                "inputs lie in 0..63, which mean the same in either type.", ""]
    if any(row.get("result") == "FAIL" for row in index.values()):
        out += ["A speed marked (FAIL) is from a run whose result was wrong: on a kernel cell "
                "the kernel failed its check, on a cuBLAS cell the kernel and cuBLAS disagreed.", ""]
    if meta.get("failed"):
        out += [f"**Runs that failed** (a crash leaves its cells empty): {meta['failed']}.", ""]

    titles = ["Type pair", "Size"] + [c[0] for c in speeds] + [c[0] for c in ratios]
    out.append("| " + " | ".join(titles) + " |")
    out.append("|" + "|".join([" --- ", " ---: "] + [" ---: "] * (len(titles) - 2)) + "|")
    keys = sorted({(t, label, size) for t, label, size, _, _ in index},
                  key=lambda k: (type_order(k[0]), k[2], k[1]))
    for type_pair, label, size in keys:
        def cell_row(impl, tb):
            return index.get((type_pair, label, size, impl, tb))
        cells = [type_title(type_pair), label]
        cells += [etops_cell(cell_row(impl, tb)) for _, impl, tb in speeds]
        cells += [ratio_cell(cell_row(impl, tb), cell_row("cublas", tb)) for _, impl, tb in ratios]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- the plot

def tick_sizes(sizes):
    """The sizes that get a tick label: every power of two, and other sizes only
    where they stand at least 0.6 octave from every labelled one (1000 would
    print over 1024, 3000 next to 4096). The rest get an unlabelled tick."""
    labelled = [s for s in sizes if s & (s - 1) == 0]
    for s in sizes:
        if s not in labelled and all(abs(math.log2(s / t)) >= 0.6 for t in labelled):
            labelled.append(s)
    return sorted(labelled)


def leading_digit(value):
    """3 for 0.3, 30 and 3000: the first digit of a positive number."""
    return int(round(value / 10 ** math.floor(math.log10(value) + 1e-9)))


def make_plot(meta, rows, path):
    """Write the SVG: one panel per type pair, eTOPS against size, both axes logarithmic."""
    import matplotlib
    from matplotlib.figure import Figure      # no pyplot: no GUI backend, no global figures
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, NullFormatter

    index = index_rows(rows)
    types = sorted({key[0] for key in index}, key=type_order)
    all_sizes = sorted({key[2] for key in index})
    kernels = kernel_impls(rows)
    impls = kernels + ["cublas"]
    # One colour per layout, one line style per implementation, the same in every panel.
    colours = {0: "#1f77b4", 1: "#d62728"}
    kernel_styles = ["-", "-.", ":", (0, (6, 1.5, 1, 1.5, 1, 1.5)), (0, (9, 2.5))]   # dash, dot, dot; long dashes
    style = {impl: ("--" if impl == "cublas" else kernel_styles[i % len(kernel_styles)])
             for i, impl in enumerate(impls)}
    marker = {impl: ("s" if impl == "cublas" else "o") for impl in impls}

    settings = {
        "svg.fonttype": "path",     # text as outlines: looks the same with no fonts installed
        "svg.hashsalt": "gemm-sweep",  # fixed ids, so the same data gives the same bytes
        "font.size": 9,
    }
    with matplotlib.rc_context(settings):
        ncols = 2
        nrows = max(1, math.ceil(len(types) / ncols))
        fig = Figure(figsize=(10, 2.9 * nrows + 0.9), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
        present = set()
        for i, (ax, type_pair) in enumerate(zip(axes, types)):
            sizes = sorted({key[2] for key in index if key[0] == type_pair})
            values = []
            for impl in impls:
                for tb in (0, 1):
                    points = sorted((key[2], row["etops"]) for key, row in index.items()
                                    if key[0] == type_pair and key[3] == impl and key[4] == tb
                                    and row["etops"] > 0)
                    if not points:
                        continue
                    present.add((impl, tb))
                    values += [p[1] for p in points]
                    ax.plot([p[0] for p in points], [p[1] for p in points], color=colours[tb],
                            linestyle=style[impl], marker=marker[impl], markersize=4, linewidth=1.4)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            shown = tick_sizes(sizes)
            ax.set_xticks(shown, [str(s) for s in shown])
            ax.set_xticks([s for s in sizes if s not in shown], minor=True)
            ax.xaxis.set_minor_formatter(NullFormatter())
            if sizes:
                ax.set_xlim(sizes[0] / 1.4, sizes[-1] * 1.4)
            if values:
                # At least a decade of height, so that 29 against 31 eTOPS looks
                # as close as it is instead of filling the panel.
                low, high = min(values) / 1.3, max(values) * 1.3
                if high / low < 10:
                    middle = math.sqrt(low * high)
                    low, high = middle / math.sqrt(10), middle * math.sqrt(10)
                ax.set_ylim(low, high)
            # Plain numbers (20, not 2×10^1), at 1, 2 and 5 times a power of ten:
            # enough to read a value off, few enough not to overlap.
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if leading_digit(v) in (2, 5) else ""))
            ax.grid(True, which="major", linewidth=0.5, alpha=0.6)
            ax.grid(True, which="minor", axis="x", linewidth=0.4, alpha=0.4)
            ax.set_title(type_title(type_pair), fontsize=10).set_gid(f"title-{type_pair}")
            if i % ncols == 0:
                ax.set_ylabel("eTOPS")
            if i + ncols >= len(types):             # the lowest panel of its column
                unlabelled = [s for s in all_sizes if s not in tick_sizes(all_sizes)]
                ax.set_xlabel("M = N = K" + (f" (unlabelled ticks: {', '.join(map(str, unlabelled))})"
                                             if unlabelled else ""))
        for ax in axes[len(types):]:
            ax.set_visible(False)

        # One entry per implementation (its line style, in grey) and one per layout (its
        # colour), so that the legend stays narrower than the figure however many kernels ran.
        entries = legend_entries(impls, present, kernels)
        handles = [Line2D([], [], color="0.35", linestyle=style[key], marker=marker[key], markersize=4,
                          linewidth=1.4) if key in style else Line2D([], [], color=colours[key], linewidth=3)
                   for key, _ in entries]
        labels = [label for _, label in entries]
        if handles:
            # One row for a few entries; two rows when there are more, so the legend fits.
            columns = len(handles) if len(handles) <= 5 else math.ceil(len(handles) / 2)
            fig.legend(handles, labels, loc="outside lower center", ncols=columns, frameon=False)
        fig.suptitle(f"{gpu_of(meta, rows)}, {meta.get('date', 'date not recorded')}: "
                     "eTOPS against size (log-log)")
        # No metadata block at all: no date (re-running gives identical bytes) and no
        # creator or type URLs (the file points nowhere outside itself).
        fig.savefig(path, format="svg",
                    metadata={"Date": None, "Creator": None, "Type": None, "Format": None})


# ---------------------------------------------------------------- report

def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def report(csv_path):
    """Write X.md (and X.svg when matplotlib is here) next to X.csv; True when both were written."""
    csv_path = Path(csv_path)
    meta, rows = read_csv(csv_path)
    if not rows:
        raise ValueError(f"{csv_path} has no rows")
    md = csv_path.with_suffix(".md")
    md.write_text(make_table(meta, rows), encoding="utf-8")
    print(md)
    if not have_matplotlib():
        print("matplotlib is not installed, so there is no plot; install it with\n"
              "    python3 -m pip install -r scripts/requirements-sweep.txt\n"
              f"then run: python3 scripts/sweep.py report {csv_path}", file=sys.stderr)
        return False
    svg = csv_path.with_suffix(".svg")
    make_plot(meta, rows, svg)
    print(svg)
    return True


# ---------------------------------------------------------------- run

def source_revision():
    """The commit the run is of: the COMMIT file of an exported copy (`git archive` leaves no
    repository, and a checkout around it would answer for itself), else `git describe`."""
    stamp = REPO / "COMMIT"
    if stamp.is_file():
        match = re.search(r"gemm\.md at (\S+)", stamp.read_text(encoding="utf-8"))
        if match:
            return match[1]
    return command_output(["git", "-C", str(REPO), "describe", "--always", "--dirty"])


def command_output(cmd):
    """stdout of cmd, stripped, or None when it cannot run or fails."""
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def find_gpu(prog="sweep.py", anywhere="report"):
    """(name, compute capability digits like '90', driver) of the first GPU; SystemExit without one.

    This is the first thing `run` does, so that a machine without a GPU hears
    so at once, before minutes of building.
    """
    try:
        return gemmlib.find_gpu(prog)
    except SystemExit as e:
        raise SystemExit(f"{e}. `run` needs a machine with an NVIDIA GPU; `{anywhere}` works anywhere.")


def build_one(build, cc, type_pair, tb):
    """Build one binary; returns (type, tb, seconds, error text or None)."""
    out = build / f"{type_pair}-{tb}"
    flags = gemmlib.defines(type_pair, None, 0, tb, cublas=True)
    start = time.monotonic()
    result = gemmlib.nvcc(build / "gemm.cu", out, flags, gpu=cc)
    error = None if result.returncode == 0 else (shlex.join(result.args) + "\n" + result.stderr)
    return type_pair, tb, time.monotonic() - start, error


def tail(text, lines=15):
    return "\n".join("    " + line for line in text.strip().splitlines()[-lines:])


def csv_path_for(out_dir, gpu, date, smem_cap=None):
    """results/<gpu-slug>-<date>[-smemK].csv, or -2, -3, ... so that an earlier sweep that day survives."""
    stem = f"{slug(gpu)}-{date}" + (f"-smem{smem_cap}" if smem_cap else "")
    path = out_dir / f"{stem}.csv"
    n = 2
    while path.exists():
        path = out_dir / f"{stem}-{n}.csv"
        n += 1
    return path


def run(args):
    gpu, cc, driver = find_gpu()
    if shutil.which("nvcc") is None:
        sys.exit("sweep.py: nvcc is not on PATH; `run` needs the CUDA toolkit.")
    sizes = QUICK_SIZES if args.quick else args.sizes
    types = gemmlib.share_of(args.types, args.part)   # every n-th pair: each call some long ones
    build = args.build_dir
    os.chdir(REPO)
    failed = []

    # Tangle once, build every binary at once: nvcc is single-threaded per file.
    build.mkdir(parents=True, exist_ok=True)
    gemmlib.tangle(build / "gemm.cu")
    jobs = [(t, tb) for t in types for tb in (0, 1)]
    print(f"building {len(jobs)} binaries for sm_{cc} in {build}/ ...", file=sys.stderr)
    start = time.monotonic()
    built = set()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for type_pair, tb, seconds, error in pool.map(lambda job: build_one(build, cc, *job), jobs):
            if error:
                print(f"  FAILED to build {type_pair} tb={tb}:\n{tail(error, 30)}", file=sys.stderr)
                failed.append(f"build of {type_pair} tb={tb}")
            else:
                print(f"  built {type_pair} tb={tb} ({format_duration(seconds)})", file=sys.stderr)
                built.add((type_pair, tb))
    print(f"built {len(built)} of {len(jobs)} in {format_duration(time.monotonic() - start)}",
          file=sys.stderr)
    if not built:
        sys.exit("sweep.py: nothing built; no sweep.")

    first = build / "{}-{}".format(*sorted(built, key=lambda j: jobs.index(j))[0])
    header = command_output([str(first), "--csv-header"])
    if not header or not {"etops", "impl", "result"} <= set(header.split(",")):
        sys.exit(f"sweep.py: {first} --csv-header printed {header!r}, not the CSV header this script reads")
    columns = next(csv.reader([header]))
    width = len(columns)

    nvcc_version = command_output(["nvcc", "--version"]) or ""
    release = [line for line in nvcc_version.splitlines() if "release" in line]
    revision = source_revision()
    date = datetime.date.today().isoformat()
    args.out.mkdir(parents=True, exist_ok=True)
    out_path = csv_path_for(args.out, gpu, date, args.smem_cap)
    command = shlex.join(getattr(sys, "orig_argv", [sys.executable] + sys.argv))

    # Rows are written as they come, so that a sweep cut short still leaves its data.
    with open(out_path, "w", encoding="utf-8", newline="") as out:
        out.write(f"# gpu: {gpu}\n# compute capability: {cc[:-1]}.{cc[-1]}\n# driver: {driver}\n")
        out.write(f"# cuda: {release[0].strip() if release else 'unknown'}\n")
        out.write(f"# date: {date}\n# command: {command}\n")
        if args.smem_cap:
            out.write(f"# smem cap: {args.smem_cap} KiB of shared memory per block (--smem-cap)\n")
        out.write(energy_note(args.energy_at) + "\n")
        if revision:
            out.write(f"# source: gemm.md at {revision}\n")
        out.write(header + "\n")
        out.flush()

        runs = [(t, tb, s) for t, tb in jobs if (t, tb) in built for s in sizes]
        done = []
        start = time.monotonic()
        try:
            for n, (type_pair, tb, size) in enumerate(runs, 1):
                cmd = [str(build / f"{type_pair}-{tb}"), str(size), str(size), str(size), "--csv",
                       "--verify=sample", "--warmup", str(WARMUP), "--repeat", str(repeats_for(size))]
                if args.smem_cap:
                    cmd.append(f"--smem-cap={args.smem_cap}")
                if args.energy_at is not None and size not in args.energy_at:
                    cmd.append("--energy-ms=0")
                began = time.monotonic()
                try:
                    result = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT)
                    code, stdout, stderr = result.returncode, result.stdout, result.stderr
                except subprocess.TimeoutExpired as e:
                    code, stdout, stderr = "timeout", e.stdout or "", f"no answer in {RUN_TIMEOUT} s"
                    stdout = stdout.decode() if isinstance(stdout, bytes) else stdout
                done.append((size, time.monotonic() - began))

                # Keep every CSV line it printed, even from a failed run: a wrong
                # answer is printed with result FAIL and is worth keeping.
                speeds = {}
                for line in stdout.splitlines():
                    record = next(csv.reader([line]), [])
                    if len(record) == width and record != columns:
                        out.write(line.strip() + "\n")      # as ./gemm printed it
                        row = dict(zip(columns, record))
                        speeds[row["impl"]] = row
                out.flush()

                what = f"[{n}/{len(runs)}] {type_pair} tb={tb} {size}^3:"
                for impl, row in speeds.items():
                    if impl != "cublas":
                        name = "" if impl == "simple" else f" ({impl})"
                        what += f" {float(row['etops']):.1f} eTOPS{name}"
                        what += " (FAIL)" if row.get("result") == "FAIL" else ""
                if "cublas" in speeds:
                    what += f" (cuBLAS {float(speeds['cublas']['etops']):.1f})"
                if code != 0:
                    what += f" FAILED (exit {code})"
                    failed.append(f"{type_pair} tb={tb} {size}^3 (exit {code})")
                    out.write(f"# failed: {type_pair} tb={tb} {size}^3, exit {code}\n")
                left = estimate_left(done, [s for _, _, s in runs[n:]])
                print(f"{what} elapsed {format_duration(time.monotonic() - start)}, "
                      f"about {format_duration(left)} left", file=sys.stderr)
                if code != 0 and stderr.strip():
                    print(tail(stderr), file=sys.stderr)
        except KeyboardInterrupt:
            print(f"\ninterrupted; the rows so far are in {out_path}", file=sys.stderr)
            return 130

    print(f"wrote {out_path}", file=sys.stderr)
    if have_matplotlib():
        report(out_path)
    else:
        md = out_path.with_suffix(".md")
        meta, rows = read_csv(out_path)
        if rows:
            md.write_text(make_table(meta, rows), encoding="utf-8")
            print(md)
        print("matplotlib is not installed here, so there is no plot yet. Elsewhere, or after\n"
              "    python3 -m pip install -r scripts/requirements-sweep.txt\n"
              f"make the table and the plot with: python3 scripts/sweep.py report {out_path}",
              file=sys.stderr)
    if failed:
        print(f"{len(failed)} failed: " + "; ".join(failed), file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------- command line

def argument(parse):
    """An argparse type from a parser that raises ValueError, keeping the parser's message."""
    def convert(text):
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return convert


def merge(out, parts):
    """One sweep CSV from the CSVs of one session's calls (each a `sweep.py run --types ...` of
    its own): the first's comment lines, a command line naming each call's command, and every
    row. The calls must agree on the GPU, driver, CUDA, date, source and columns, and measure
    different pairs."""
    kept = ("gpu", "compute capability", "driver", "cuda", "date", "source", "energy")
    metas, header, rows, pairs = [], None, [], set()
    for path in parts:
        meta, found = read_csv(path)
        with open(path, encoding="utf-8") as f:
            data = [line for line in f if not line.startswith("#") and line.strip()]
        first = data[0].rstrip("\n") if data else ""
        if header is not None and first != header:
            raise ValueError(f"{path}: its columns are not those of {parts[0]}")
        for key in kept:
            if metas and meta.get(key) != metas[0].get(key):
                raise ValueError(f"{path}: its {key} ({meta.get(key)}) is not that of {parts[0]} ({metas[0].get(key)})")
        if pairs & {r["type"] for r in found}:
            raise ValueError(f"{path}: measures a pair that another part measures too")
        pairs |= {r["type"] for r in found}
        header = first
        metas.append(meta)
        rows += [line for line in data if line.rstrip("\n") != header]
    lines = [f"# {key}: {metas[0][key]}" for key in kept[:5] if key in metas[0]]
    lines.append("# command: " + "; then ".join(m.get("command", "?") for m in metas)
                 + f" ({len(parts)} calls of one session, merged by sweep.py merge)")
    lines += [f"# {key}: {metas[0][key]}" for key in kept[5:] if key in metas[0]]
    Path(out).write_text("\n".join(lines + [header]) + "\n" + "".join(rows), encoding="utf-8")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Time ./gemm (kernel and cuBLAS) over type pairs, layouts and sizes, "
                    "and tabulate and plot the results.")
    sub = parser.add_subparsers(dest="command", required=True)

    p_run = sub.add_parser("run", help="build and time on this machine's GPU, then report")
    which = p_run.add_mutually_exclusive_group()
    which.add_argument("--sizes", type=argument(parse_sizes), default=DEFAULT_SIZES,
                       help="comma-separated sizes, M = N = K (default: "
                            + ",".join(map(str, DEFAULT_SIZES)) + ")")
    which.add_argument("--quick", action="store_true",
                       help="only " + ",".join(map(str, QUICK_SIZES)))
    p_run.add_argument("--types", type=argument(parse_types), default=TYPES,
                       help="comma-separated type pairs (default: all)")
    p_run.add_argument("--out", type=Path, default=REPO / "results",
                       help="folder for the CSV, table and plot (default: results/ of this repository)")
    p_run.add_argument("--smem-cap", type=int, default=None, metavar="KIB",
                       help="let ./gemm's choice of tile use at most KIB KiB of shared memory per "
                            "block (99: what GeForce cards offer)")
    p_run.add_argument("--part", type=argument(gemmlib.parse_part), default=(1, 1), metavar="I/N",
                       help="only the I-th of N shares of the pairs (every N-th from the I-th), for a "
                            "sweep in N calls of a lent GPU; `merge` makes their CSVs one")
    p_run.add_argument("--energy-at", type=argument(lambda text: None if text == "all" else parse_sizes(text)),
                       default=ENERGY_AT, metavar="SIZES",
                       help=f"measure the energy per GEMM only at these sizes (default "
                            f"{','.join(map(str, ENERGY_AT))}; 'all': every size): its windows take five "
                            f"to fifteen seconds a run")
    p_run.add_argument("--build-dir", type=Path, default=BUILD,
                       help=f"folder for the tangled source and the binaries (default: {BUILD})")

    p_report = sub.add_parser("report", help="write X.md and X.svg next to X.csv")
    p_report.add_argument("csv", type=Path)

    p_merge = sub.add_parser("merge", help="one CSV from a session's calls, each of other pairs")
    p_merge.add_argument("out", type=Path)
    p_merge.add_argument("parts", type=Path, nargs="+")

    args = parser.parse_args(argv)
    if args.command == "merge":
        try:
            print(merge(args.out, args.parts))
            return 0
        except (OSError, ValueError) as e:
            print(f"sweep.py: {e}", file=sys.stderr)
            return 1
    if args.command == "run":
        args.out = args.out.resolve()       # before run() moves to the repository root
        args.build_dir = args.build_dir if args.build_dir == BUILD else args.build_dir.resolve()
        return run(args)
    try:
        return 0 if report(args.csv) else 1
    except (OSError, ValueError) as e:
        print(f"sweep.py: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
