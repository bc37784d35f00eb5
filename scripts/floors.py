#!/usr/bin/env python3
"""The Hopper kernel against its floors, on a Hopper GPU: every pair it takes and every layout.

    python3 scripts/floors.py run [--part 1/2] [--types F16_IN_F32_OUT,...] [--out results]
    python3 scripts/floors.py run --problems 8192 --layouts TN,NN --rounds 3 --sustain 10
    python3 scripts/floors.py report results/X-floors-1.csv [results/X-floors-2.csv ...] [--into gemm.md]
    python3 scripts/floors.py run --peers [--types ...] [--layouts TN] [--problems ...] [--rounds 3]
    python3 scripts/floors.py report results/X-peers-1.csv --table peers [--into gemm.md]

`run` builds the shipped gemm.md for every pair that has the Hopper kernel (./gemm
--describe) in each of its layouts, and runs each at every problem of PROBLEMS: the Hopper
kernel and cuBLAS in one process (--kernel=wgmma), and below 2048, where the tiled kernel is
the floor, every kernel (--kernel=all); three warm-ups, ten timed launches, five from 16384^3
of work up, verified on a sample. With --part I/N it runs the I-th of N
shares of those runs, so that each share fits in one call of a lent GPU; each share writes
its own CSV, results/<gpu>-<date>-floors-I.csv, with the device, date, command and commit.

With --problems (N for N^3, or MxNxK) and --layouts it runs those alone, and with --rounds R
each R times, the runs of a round taking turns with those of the others (so that each
implementation meets the GPU in the same states); --sustain S adds ./gemm's --sustain=S to
each run, for the steady state beside the burst.

With --peers it builds gemm-cutlass instead (peerlib.py: ./gemm with CUTLASS's GEMMs as more
kernels) and runs every kernel, every CUTLASS configuration and cuBLAS in one process, by
default the 16-bit pairs in the layout TN at 8192^3, 4096^3, 2048^3 and 1024^3, three rounds,
without energy windows (a dozen implementations would take seconds of them each); the
floors then are CUTLASS's best sm80 GEMM for the tiled kernel and its best Hopper GEMM for the
Hopper kernel, which `report --table peers` tabulates (results/X-peers-I.csv).

`report` works anywhere: from one or more such CSVs it writes, beside the first, a table
(.md) of the Hopper kernel's share of cuBLAS for each pair, problem and layout, each cell
marked where it misses its floor, and a plot (.svg; it needs matplotlib). The floors:

- from 2048 up (every side of the problem at least 2048): at least cuBLAS's speed;
- below: at least the tiled kernel's speed, and at 1024^3 at least 80 % of cuBLAS's.
"""

import argparse
import datetime
import math
import os
import shlex
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gemmlib  # noqa: E402
import peerlib  # noqa: E402  (gemm-cutlass: ./gemm with CUTLASS's GEMMs beside the kernels)
import sweep  # noqa: E402  (the CSV reader, the layer shapes, the number format)

# Cubes, a narrow problem with a long K, and the shapes of language models' layers (with an
# odd neighbour): (M, N, K).
PROBLEMS = ([(n, n, n) for n in (256, 512, 1024, 2048, 3000, 4096, 8192, 16384)] +
            [(256, 256, 8192)] + sweep.LAYER_SHAPES)
PEER_PROBLEMS = [(n, n, n) for n in (8192, 4096, 2048, 1024)]   # the floors against CUTLASS
LARGE_FLOOR = 1.00       # share of cuBLAS from 2048 up
SMALL_FLOOR_1024 = 0.80  # share of cuBLAS at 1024^3
BUILD = gemmlib.REPO / "build" / "floors"
RUN_TIMEOUT = 300        # seconds: a run that hangs fails alone


def parse_problems(text):
    """'8192,4096x11008x4096' -> [(8192, 8192, 8192), (4096, 11008, 4096)]."""
    problems = []
    for word in text.split(","):
        sides = [int(x) for x in word.split("x")]
        if len(sides) not in (1, 3) or min(sides) < 1:
            raise ValueError(f"{word}: give N or MxNxK")
        problems.append(tuple(sides * 3 if len(sides) == 1 else sides))
    return problems


def floor_of(problem):
    """(what the Hopper kernel is held to, the share of cuBLAS it needs or None): 'cublas' from
    2048 up, else 'tiled' (and 80 % of cuBLAS at 1024^3)."""
    m, n, k = problem
    if min(m, n, k) >= 2048:
        return "cublas", LARGE_FLOOR
    return "tiled", SMALL_FLOOR_1024 if problem == (1024, 1024, 1024) else None


def kernels_for(problem):
    """The kernels a run needs: the Hopper kernel and cuBLAS (which every run has), and below
    2048, where the tiled kernel is the floor, every kernel."""
    return "--kernel=all" if floor_of(problem)[0] == "tiled" else "--kernel=wgmma"


def cells(rows):
    """{(pair, layout, problem): {impl: eTOPS}} of the passed runs (the burst lines; where
    rounds repeat a run, the median of each implementation's speeds)."""
    found = {}
    for r in rows:
        if r.get("result") == "FAIL" or r.get("mode", "burst") != "burst":
            continue
        key = (r["type"], r["layout"], (r["M"], r["N"], r["K"]))
        found.setdefault(key, {}).setdefault(r["impl"], []).append(r["etops"])
    return {key: {impl: statistics.median(v) for impl, v in speeds.items()} for key, speeds in found.items()}


def conditions(rows):
    """{(pair, layout, problem, mode): {measure: median over the runs}} of the Hopper kernel
    against cuBLAS in one process, where NVML measured: its share of cuBLAS's speed, per clock
    (cycles back to back) and of its energy per GEMM, and the clocks and powers of both."""
    runs = {}
    for r in rows:
        if r.get("result") == "FAIL" or "mode" not in r:
            continue
        key = (r["type"], r["layout"], (r["M"], r["N"], r["K"]), r["mode"])
        runs.setdefault(key, {}).setdefault(r["impl"], []).append(r)
    found = {}
    for key, by_impl in runs.items():
        pairs = list(zip(by_impl.get("wgmma", []), by_impl.get("cublas", [])))
        measures = {}
        for k, c in pairs:   # the rows of one run: its kernel line, then its cuBLAS line
            per_clock, energy = gemmlib.rows_against_cublas(k, c)
            values = {"speed": k["etops"] / c["etops"], "per_clock": per_clock, "energy": energy,
                      "clock": k.get("window_clock_mhz") or None, "cublas_clock": c.get("window_clock_mhz") or None,
                      "power": k.get("power_w") or None, "cublas_power": c.get("power_w") or None}
            for name, value in values.items():
                if value not in (None, ""):
                    measures.setdefault(name, []).append(float(value))
        if measures:
            found[key] = {name: statistics.median(v) for name, v in measures.items()}
    return found


def percent(share):
    return f"{100 * share:.1f} %" if share is not None else sweep.MISSING


def ghz(mhz):
    return f"{mhz / 1000:.2f}" if mhz is not None else sweep.MISSING


def watts(power):
    return f"{power:.0f}" if power is not None else sweep.MISSING


CONDITIONS_NOTE = ("The Hopper kernel against cuBLAS in the same process, the median of the runs: its speed "
                   "in the timed burst or in --sustain's steady state; per clock, energy, clocks and powers "
                   "back to back (the energy windows, or the steady state).")


def conditions_table(rows):
    """Markdown: for each pair, layout and problem, the Hopper kernel against cuBLAS in the
    burst and in the steady state (where measured): speed, speed per clock, energy per GEMM,
    and the clock and power of each back to back; empty where nothing was measured."""
    found = conditions(rows)
    if not found:
        return ""
    lines = ["| pair | layout | problem | mode | speed | per clock | energy per GEMM | clock (GHz) | "
             "cuBLAS's clock | power (W) | cuBLAS's power |", "|---|---|---|---|" + "---:|" * 7]
    for (pair, layout, problem, mode), m in sorted(found.items(), key=lambda i: (sweep.type_order(i[0][0]), i[0][1:])):
        lines.append(f"| {pair} | {layout} | {problem_label(problem)} | {mode} | {percent(m.get('speed'))} | "
                     f"{percent(m.get('per_clock'))} | {percent(m.get('energy'))} | {ghz(m.get('clock'))} | "
                     f"{ghz(m.get('cublas_clock'))} | {watts(m.get('power'))} | {watts(m.get('cublas_power'))} |")
    return "\n".join(lines) + "\n"


def judge(speeds, problem):
    """(share of cuBLAS, met) of the Hopper kernel at one problem, or None where it or cuBLAS
    did not run; met is False where it misses its floor."""
    hopper, cublas = speeds.get("wgmma"), speeds.get("cublas")
    if hopper is None or not cublas:
        return None
    kind, share = floor_of(problem)
    met = share is None or hopper / cublas >= share
    if kind == "tiled" and speeds.get("tiled") is not None:
        met = met and hopper >= speeds["tiled"]
    return hopper / cublas, met


def problem_label(problem):
    m, n, k = problem
    return f"{m}³" if m == n == k else f"{m} × {n} × {k}"


def make_table(meta, rows):
    """Markdown: for each pair, a row per problem and a column per layout, the Hopper kernel's
    share of cuBLAS, marked ✗ where it misses its floor; then how many cells met theirs."""
    found = cells(rows)
    lines = [f"{meta.get('gpu', 'GPU')}, {meta.get('date', '')}: the Hopper kernel's share of "
             f"cuBLAS (✗: below its floor: cuBLAS from 2048 up, the tiled kernel below, "
             f"{SMALL_FLOOR_1024:.0%} of cuBLAS at 1024³).", ""]
    met = total = 0
    for pair in sorted({t for t, _, _ in found}, key=sweep.type_order):
        layouts = sorted({l for t, l, _ in found if t == pair})
        problems = sorted({p for t, _, p in found if t == pair}, key=lambda p: (min(p) >= 2048, math.prod(p)))
        lines += [f"| {pair} | " + " | ".join(layouts) + " |", "|---|" + "---:|" * len(layouts)]
        for problem in problems:
            row = []
            for layout in layouts:
                judged = judge(found.get((pair, layout, problem), {}), problem)
                if judged is None:
                    row.append(sweep.MISSING)
                    continue
                share, ok = judged
                met, total = met + ok, total + 1
                row.append(f"{100 * share:.0f} %" + ("" if ok else " ✗"))
            lines.append(f"| {problem_label(problem)} | " + " | ".join(row) + " |")
        lines.append("")
    lines.append(f"{met} of {total} met their floor.")
    return "\n".join(lines) + "\n"


def make_plot(meta, rows, path):
    """The Hopper kernel's share of cuBLAS against the problem's work, a panel per pair, a
    marker per layout, the floor of 100 % drawn from 2048 up."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    found = cells(rows)
    pairs = sorted({t for t, _, _ in found}, key=sweep.type_order)
    figure, axes = plt.subplots(1, len(pairs), figsize=(4.2 * len(pairs), 3.6), sharey=True,
                                squeeze=False)
    markers = "osD^"
    for axis, pair in zip(axes[0], pairs):
        layouts = sorted({l for t, l, _ in found if t == pair})
        for marker, layout in zip(markers, layouts):
            judged = [(math.prod(p) ** (1 / 3), judge(s, p)) for (t, l, p), s in found.items()
                      if t == pair and l == layout]
            points = sorted((x, j[0]) for x, j in judged if j is not None)
            axis.plot([x for x, _ in points], [100 * y for _, y in points], marker, fillstyle="none",
                      label=layout)
        axis.axhline(100, color="grey", linewidth=0.8)
        axis.axvline(2048, color="grey", linewidth=0.8, linestyle=":")
        axis.set_xscale("log", base=2)
        axis.set_title(pair, fontsize=10)
        axis.set_xlabel("(M N K)^(1/3)")
    axes[0][0].set_ylabel("Hopper kernel / cuBLAS (%)")
    axes[0][-1].legend(fontsize=8)
    figure.suptitle(f"{meta.get('gpu', '')}, {meta.get('date', '')}", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, format="svg", metadata={"Date": None})
    plt.close(figure)


def post_table(meta, rows, paths):
    """The table for gemm.md's results chapter: make_table with the pairs' short names, and a
    line that says where and how it was measured."""
    table = make_table(meta, rows)
    for pair, entry in gemmlib.pairs().items():
        table = table.replace(f"| {pair} |", f"| {entry['short']} |")
    body = table.split("\n", 2)[2]   # without the first line, which the line below replaces
    files = ", ".join(f"`{Path(p).name}`" for p in paths)
    every = any(r["impl"] == "tiled" and floor_of((int(r["M"]), int(r["N"]), int(r["K"])))[0] == "cublas"
                for r in rows)   # so did the sweeps made before it ran only where it is the floor
    kernels = "every kernel" if every else "the Hopper kernel (every kernel below 2048)"
    return (body + f"\nMeasured on {meta.get('gpu', 'a GPU')}, {meta.get('date', 'an unknown date')}, by "
            f"`bash scripts/gpu_session.sh floors --part I/N`: {kernels} and cuBLAS in one process, "
            f"the median of ten launches (five where M·N·K is 16384³ or more) after three warm-ups, each "
            f"run verified on a sample.^[Made by `python3 scripts/floors.py report --into gemm.md` "
            f"from {files} in `results/`.]\n")


def post_energy_table(meta, rows, paths):
    """The table of gemm.md's "Run to run": for each pair and layout, the Hopper kernel against
    cuBLAS in the burst and sustained, and back to back (sustained) per clock, in energy per GEMM
    and in clock; a line that says where and how it was measured."""
    found = conditions(rows)
    short = {pair: entry["short"] for pair, entry in gemmlib.pairs().items()}
    lines = ["| pair | layout | speed, burst | speed, sustained | per clock | energy per GEMM | clock (GHz) "
             "| cuBLAS's clock |", "|---|---|" + "---:|" * 6]
    cells = sorted({key[:3] for key in found}, key=lambda k: (sweep.type_order(k[0]), k[1], k[2]))
    for pair, layout, problem in cells:
        burst, steady = found.get((pair, layout, problem, "burst"), {}), found.get((pair, layout, problem, "sustained"), {})
        lines.append(f"| {short.get(pair, pair)} | {layout} | {percent(burst.get('speed'))} | "
                     f"{percent(steady.get('speed'))} | {percent(steady.get('per_clock'))} | "
                     f"{percent(steady.get('energy'))} | {ghz(steady.get('clock'))} | {ghz(steady.get('cublas_clock'))} |")
    problems = sorted({problem_label(k[2]) for k in cells})
    files = ", ".join(f"`{Path(p).name}`" for p in paths)
    return ("\n".join(lines) + f"\n\nThe Hopper kernel against cuBLAS at {', '.join(problems)}, measured on "
            f"{meta.get('gpu', 'a GPU')}, {meta.get('date', 'an unknown date')}, by `{sweep_command(meta)}`: "
            f"each pair and layout in one process with cuBLAS, in rounds in which the processes of every "
            f"pair and layout take turns; the median of the rounds. The burst is the "
            f"usual timed launches; the rest is the steady state of `--sustain`, launched back to back: "
            f"the speed, the speed per clock (cuBLAS's cycles per GEMM over the kernel's), the energy "
            f"per GEMM (the kernel's over cuBLAS's) and the mean SM clocks.^[Made by `python3 "
            f"scripts/floors.py report --into gemm.md --table energy` from {files} in `results/`.]\n")


def sweep_command(meta):
    """The command of a run, as a user types it: the gpu_session.sh piece that ran floors.py."""
    command = meta.get("command", "")
    args = command.split(" run ", 1)[1].rsplit(" --out ", 1)[0] if " run " in command else ""
    return f"bash scripts/gpu_session.sh floors {args}".strip()


def report(paths, into=None, table_name="floors"):
    meta, rows = {}, []
    for path in paths:
        m, r = sweep.read_csv(path)
        meta = meta or m
        rows += r
    if not rows:
        raise SystemExit(f"floors.py: no rows in {', '.join(map(str, paths))}")
    first = Path(paths[0])
    stem = first.with_name(first.stem.rsplit("-", 1)[0] if first.stem[-1].isdigit() else first.stem)
    table = stem.with_suffix(".md")
    import worklog   # its fill_markers writes a table between the post's markers

    def into_post(text):
        return worklog.fill_markers("floors.py", {table_name: text}, into, f"the {table_name} table")

    if table_name == "peers":   # CUTLASS beside the kernels: peerlib's tables alone
        made = peerlib.make_table(meta, rows, paths)
        table.write_text(made, encoding="utf-8")
        print(table)
        return into_post(made) if into else 0
    energy = conditions_table(rows)
    table.write_text(make_table(meta, rows) + (f"\n{CONDITIONS_NOTE}\n\n{energy}" if energy else ""),
                     encoding="utf-8")
    print(table)
    if sweep.have_matplotlib():
        make_plot(meta, rows, stem.with_suffix(".svg"))
        print(stem.with_suffix(".svg"))
    if into:   # the results chapter's table, between its markers
        made = post_table if table_name == "floors" else post_energy_table
        return into_post(made(meta, rows, paths))
    return 0


def run(args):
    gpu, cc, driver = gemmlib.find_gpu("floors.py")
    described = gemmlib.registry()
    if not gemmlib.runs_on("wgmma", cc, described):
        raise SystemExit(f"floors.py: the Hopper kernel does not run on {gpu} (compute capability {cc})")
    layouts = described["layouts"]
    BUILD.mkdir(parents=True, exist_ok=True)
    source = gemmlib.tangle(BUILD / "gemm.cu", args.change)
    chosen = args.layouts.split(",") if args.layouts else ["TN"] if args.peers else list(layouts)
    if set(chosen) - set(layouts):
        raise SystemExit(f"floors.py: --layouts takes {', '.join(layouts)}")
    jobs = [(pair, layout) for pair in args.types.split(",") for layout in chosen]

    def build(job):
        pair, layout = job
        exe = BUILD / f"{pair}-{layout}"
        result = gemmlib.nvcc(source, exe, gemmlib.defines(pair, None, *layouts[layout], cublas=True), gpu=cc)
        return exe if result.returncode == 0 else SystemExit(f"{pair} {layout} did not build:\n{result.stderr[-2000:]}")

    if args.peers:   # each build compiles its CUTLASS objects in parallel, and keeps them
        built = {(pair, layout): peerlib.build(pair, *layouts[layout], gpu=cc, out=BUILD / f"cutlass-{pair}-{layout}",
                                               changes=args.change)
                 for pair, layout in jobs}
    else:
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            built = dict(zip(jobs, pool.map(build, jobs)))
    for exe in built.values():
        if isinstance(exe, SystemExit):
            raise exe
    problems = args.problems or (PEER_PROBLEMS if args.peers else PROBLEMS)
    runs = gemmlib.share_of([(job, p) for _ in range(args.rounds) for p in problems for job in jobs], args.part)
    extra = [f"--sustain={args.sustain}"] if args.sustain else []
    extra += ["--energy-ms=0"] if args.peers else []
    date = datetime.date.today().isoformat()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{sweep.slug(gpu)}-{date}-{'peers' if args.peers else 'floors'}-{args.part[0]}.csv"
    header = gemmlib.run(built[jobs[0]], ["--csv-header"]).stdout.strip()
    failed, start = 0, time.monotonic()
    with open(path, "w", encoding="utf-8") as out:
        out.write(f"# gpu: {gpu}\n# compute capability: {cc[:-1]}.{cc[-1]}\n# driver: {driver}\n"
                  f"# date: {date}\n# command: {shlex.join([sys.executable] + sys.argv)}\n"
                  f"# source: gemm.md at {sweep.source_revision()}"
                  f"{''.join(f' with {c}' for c in args.change)}\n"
                  f"{f'# cutlass: {peerlib.pinned()}' + chr(10) if args.peers else ''}{header}\n")
        for n, ((pair, layout), problem) in enumerate(runs, 1):
            repeat = sweep.REPEAT_LARGE if math.prod(problem) >= sweep.LARGE ** 3 else sweep.REPEAT
            kernels = "--kernel=all" if args.peers else kernels_for(problem)
            try:
                result = gemmlib.run(built[(pair, layout)], [*map(str, problem), kernels, "--csv",
                                     "--verify=sample", "--warmup", str(sweep.WARMUP), "--repeat", str(repeat),
                                     *extra],
                                     timeout=RUN_TIMEOUT)
                stdout, code = result.stdout, result.returncode
            except subprocess.TimeoutExpired:
                stdout, code = "", f"no answer in {RUN_TIMEOUT} s"
            out.write(stdout)
            if code != 0:
                failed += 1
                out.write(f"# failed: {pair} {layout} {'x'.join(map(str, problem))}, exit {code}\n")
            out.flush()
            print(f"[{n}/{len(runs)}] {pair} {layout} {'x'.join(map(str, problem))}: exit {code}, "
                  f"{sweep.format_duration(time.monotonic() - start)}", flush=True)
    print(path)
    return 1 if failed else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p_run = commands.add_parser("run", help="time the problems on this Hopper GPU")
    hopper = gemmlib.hopper_pairs(native=True)   # the 16-bit pairs
    p_run.add_argument("--types", default=",".join(hopper))
    p_run.add_argument("--part", type=sweep.argument(gemmlib.parse_part), default=(1, 1), metavar="I/N")
    p_run.add_argument("--out", type=Path, default=gemmlib.REPO / "results")
    p_run.add_argument("--problems", type=sweep.argument(parse_problems), default=None,
                       help="comma-separated N (N^3) or MxNxK; default: every problem of the floors")
    p_run.add_argument("--layouts", default="", help="comma-separated layouts (default: all four)")
    p_run.add_argument("--rounds", type=int, default=1, help="runs of each, taking turns")
    p_run.add_argument("--sustain", type=int, default=0, metavar="S", help="also ./gemm --sustain=S")
    p_run.add_argument("--change", action="append", default=[], metavar="FILE",
                       help="build gemm.md with this change file of worklog/ (a name or a path; "
                            "repeatable): an experiment against the floors, or beside CUTLASS")
    p_run.add_argument("--peers", action="store_true",
                       help="gemm-cutlass, every kernel beside CUTLASS's GEMMs (by default the layout TN "
                            "at 8192^3 to 1024^3)")
    p_report = commands.add_parser("report", help="the table and plot of floors CSVs")
    p_report.add_argument("csv", type=Path, nargs="+")
    p_report.add_argument("--into", type=Path, help="also write the table between the floors markers of this file")
    p_report.add_argument("--table", choices=("floors", "energy", "peers"), default="floors",
                          help="which table --into writes: the floors, the kernel against cuBLAS in "
                               "speed, per clock and in energy (between the energy markers), or, of a run "
                               "with --peers, the kernels against CUTLASS (between the peers markers)")
    args = parser.parse_args(argv)
    return run(args) if args.command == "run" else report(args.csv, args.into, args.table)


if __name__ == "__main__":
    sys.exit(main())
