#!/usr/bin/env python3
"""The GPU check: every valid configuration of gemm.md, built for the GPU in this machine and
verified on it.

Each configuration (every type pair with each of its WMMA shapes, in each of the four
layouts) runs every kernel, the tiled one with every tile in turn, and cuBLAS beside them,
fully verified at awkward sizes, with split K forced, and sampled at 8192^3 with the tile
the program chooses. compute-sanitizer's memcheck and racecheck then run on each pair with
each of its shapes (the layouts taken in turn), and memcheck on the Hopper kernel where it
runs. The last line is "N passed, N failed"; the exit status is 1 when anything failed.

    python3 scripts/check_gpu.py             (or: make check-gpu)
    python3 scripts/check_gpu.py --quick     fewer sizes and sanitizer runs, for a first look
    python3 scripts/check_gpu.py --only I8_IN_I32_OUT,TF32_IN_F32_OUT
    python3 scripts/check_gpu.py --only I8_IN_I32_OUT --layouts TN     one layout
    python3 scripts/check_gpu.py --only F16_IN_F32_OUT,F16_IN_OUT,BF16_IN_F32_OUT --part 1/2
    python3 scripts/check_gpu.py --change worklog/hopper-spread-c.md      a variant, before keeping it

The pairs, shapes and layouts come from ./gemm --describe. Logs go to build/check/, and with
--out DIR (or $OUT) the results, the sanitizer notes and the logs of failures go there too.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gemmlib  # noqa: E402

BUILD = gemmlib.REPO / "build" / "check"
SIZES = ["1x1x1", "7x5x3", "17x33x65", "300x200x100", "2047x2049x1023", "1x4096x1", "4096x1x4096"]
QUICK_SIZES = SIZES[:4]
BIG = "8192x8192x8192"
ODD = "37x41x300"          # K = 300: more k-tiles of the tiled kernel than it has stages
WIDE = "300x520x77"
SANITIZER_TIMEOUT = 300
# A run's limit: the slowest, a full CPU check of 769 x 4751 x 2100 beside 15 other runs, takes
# well under a minute, so a run still going after this is stuck (a kernel waiting for ever),
# and is reported as a failure instead of holding up the whole check.
RUN_TIMEOUT = 300
RUN_WORKERS = 16           # the 8192^3 runs need up to 4 GiB each: 16 share an 80 GB GPU


def name(config):
    pair, shape, ta, tb = config
    return f"{pair}-{shape}-{ta}{tb}"


def configurations(described, only=(), layouts=()):
    """Every valid configuration: (pair, shape, transpose A, transpose B), of the pairs in
    `only` and the layouts (names) in `layouts` where given."""
    chosen = [v for n, v in described["layouts"].items() if not layouts or n in layouts]
    return [(p["name"], s, ta, tb) for p in described["pairs"] if not only or p["name"] in only
            for s in p["shapes"] for ta, tb in chosen]


def runs(quick):
    """One configuration's runs: (size, verification, warm-up, repeats, options)."""
    plan = [(size, "full", 0, 1, [] if size.startswith("2047x") else ["--tile=all"])
            for size in (QUICK_SIZES if quick else SIZES)]
    if not quick:
        plan.append((BIG, "sample", 1, 2, []))
    # K split across blocks: forced for every tile, and where the choice splits it (16 split-K slices).
    plan.append(("17x33x1000", "full", 0, 1, ["--tile=all", "--split-k=3"]))
    # more work tiles of split K than blocks: the Hopper kernel's 40 tiles in 200 slices, whose
    # blocks take several in turn and wait for the tiles' other slices
    plan.append(("640x2000x512", "sample", 0, 1, ["--split-k=5"]))
    # beta 0, where no kernel reads C
    plan.append((WIDE, "full", 0, 1, ["--tile=all", "--beta", "0"]))
    # the other input values, with the energy windows after the checks (the other runs measure
    # no energy: it would add a fraction of a second to each implementation of each run)
    plan.append((WIDE, "full", 1, 2, ["--inputs=few-bits", "--energy-ms=20"]))
    plan.append((ODD, "full", 1, 2, ["--inputs=zeros", "--energy-ms=20", "--split-k=3"]))
    # the implementations taking turns after the checks (their results are not checked again,
    # but they must run: every kernel and tile, with the run's workspaces and the Hopper maps)
    plan.append((ODD, "sample", 0, 1, ["--tile=all", "--split-k=3", "--energy-ms=20", "--sustain=1"]))
    if not quick:   # few tiles and a long K: the tiled kernel splits it by its choice
        plan.append(("64x64x16384", "full", 0, 1, []))
        # the Hopper kernel's choice: 1 of its 133 tiles in 8 split-K slices, the others whole
        plan.append(("769x4751x2100", "full", 0, 1, []))
    return plan


def sanitizer_runs(described, configs, cc, quick, hopper=None):
    """(tool, configuration, size, options) of the sanitizer runs, counted like the others.

    memcheck checks every access of every kernel, racecheck the tiled kernel's shared
    memory (and the double and mma.sync kernels', the same loop with mma.sync, where the GPU
    runs them: --describe's cc and min_cc say; the mma.sync kernel takes 8-bit pairs, whose
    operands it reads along K, in the layout TN only) where the pair has them. Each
    pair runs with each of its shapes (with --quick its first only), the layouts taken in turn,
    so that every shape, 8 elements wide ones included, is checked in some layout; and the Hopper kernel, where the GPU runs it, with memcheck, for each pair it takes
    (`hopper`, by default those --describe lists it for), in the turn's layout where that is
    checked, else in the first checked layout (with --layouts, the turn's may not be)."""
    layouts = list(described["layouts"].values())
    if hopper is None:
        hopper = gemmlib.hopper_pairs(described)
    plan, turn = [], 0
    for pair in described["pairs"]:
        for i, shape in enumerate(pair["shapes"]):
            config = (pair["name"], shape, *layouts[turn % len(layouts)])
            turn += 1
            if quick and i > 0:
                continue
            if config in configs:
                plan.append(("memcheck", config, ODD, untiled(["--tile=all"], pair)))
            if config in configs and "tiled" in pair["kernels"]:   # FP8 has no WMMA kernels
                plan += [("memcheck", config, ODD, ["--kernel=tiled", "--split-k=3", "--cublas=off"]),
                         ("racecheck", config, ODD, ["--kernel=tiled", "--tile=all", "--cublas=off"])]
                if not quick and i == 0:
                    plan.append(("racecheck", config, WIDE, ["--kernel=tiled", "--tile=all", "--cublas=off"]))
                if "dmma" in pair["kernels"] and gemmlib.runs_on("dmma", cc, described):
                    plan += [("memcheck", config, ODD, ["--kernel=dmma", "--split-k=3", "--cublas=off"]),
                             ("racecheck", config, ODD, ["--kernel=dmma", "--tile=all", "--cublas=off"])]
            if "mma" in pair["kernels"] and gemmlib.runs_on("mma", cc, described):
                at = (pair["name"], shape, *described["layouts"]["TN"]) if pair["k_major"] else config
                if at in configs:
                    plan += [("memcheck", at, ODD, ["--kernel=mma", "--split-k=3", "--cublas=off"]),
                             ("racecheck", at, ODD, ["--kernel=mma", "--tile=all", "--cublas=off"])]
            checked = [c for c in configs if c[:2] == config[:2]]
            if pair["name"] in hopper and checked and gemmlib.runs_on("wgmma", cc, described):
                at = config if config in checked else checked[0]
                plan += [("memcheck", at, size, ["--kernel=wgmma", "--cublas=off"]) for size in (ODD, WIDE)]
                plan.append(("memcheck", at, ODD, ["--kernel=wgmma", "--split-k=3", "--cublas=off"]))
    return plan


def untiled(options, pair):
    """A run's options for `pair` (its entry of --describe), without --tile where no kernel with
    tiles takes it (FP8): ./gemm refuses the option there."""
    return options if pair["tiles"] else [o for o in options if not o.startswith("--tile")]


def log_name(config, size, *words):
    tail = re.sub(r"[^a-z0-9=]", "_", " ".join(words))
    return BUILD / f"{name(config)}.{size}{'.' + tail if tail else ''}.log"


def one_run(config, size, mode, warmup, repeat, options):
    """Run one configuration once; its result line, "PASS|FAIL name size mode options"."""
    exe = BUILD / name(config)
    words = f"{name(config)} {size} {mode} {' '.join(options)}".strip()
    if not exe.is_file():
        return f"FAIL {words} (not built)"
    args = [*size.split("x"), f"--verify={mode}", "--warmup", warmup, "--repeat", repeat, *options]
    if not any(o.startswith("--energy-ms") for o in options):
        args.append("--energy-ms=0")
    try:
        result = gemmlib.run(exe, args, timeout=RUN_TIMEOUT)
        output, code = result.stdout + result.stderr, result.returncode
    except subprocess.TimeoutExpired:
        output, code = f"no answer in {RUN_TIMEOUT} s", "timeout"
    log_name(config, size, mode, *options).write_text(output, encoding="utf-8")
    if code == 0 and len(re.findall(r"^Kernel\s+:", output, re.M)) > 1 and \
            not re.search(r"^Fastest kernel\s+: \w+", output, re.M):
        return f"FAIL {words} (several kernels ran, and the report does not say which was fastest)"
    return f"PASS {words}" if code == 0 else f"FAIL {words} (exit {code})"


def run_sanitizer(tool, config, size, options, log):
    """compute-sanitizer's `tool` on one configuration at one size; (exit status, output), the
    output also written to `log`."""
    cmd = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "9", str(BUILD / name(config)),
           *size.split("x"), "--warmup", "0", "--repeat", "1", *options]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=SANITIZER_TIMEOUT)
        output, code = result.stdout + result.stderr, result.returncode
    except subprocess.TimeoutExpired:
        output, code = f"no answer in {SANITIZER_TIMEOUT} s", "timeout"
    log.write_text(output, encoding="utf-8")
    return code, output


def sanitize(tool, config, size, options):
    """One counted sanitizer run: its result line, as one_run's."""
    words = f"{name(config)} {tool} {size} {' '.join(options)}".strip()
    if not (BUILD / name(config)).is_file():
        return f"FAIL {words} (not built)"
    code, _ = run_sanitizer(tool, config, size, options, log_name(config, size, tool, *options))
    return f"PASS {words}" if code == 0 else f"FAIL {words} (exit {code})"


def hopper_notes(config):
    """What racecheck, synccheck and initcheck make of the Hopper kernel's TMA copies and
    mbarriers: recorded, not counted (they do not model them all)."""
    notes = []
    for tool in ("racecheck", "synccheck", "initcheck"):
        code, output = run_sanitizer(tool, config, ODD, ["--kernel=wgmma", "--cublas=off"],
                                     BUILD / f"{name(config)}.{tool}.wgmma.log")
        said = [l for l in output.splitlines() if re.search(r"ERROR SUMMARY|not supported|unsupported", l)]
        notes.append(f"{tool} on the Hopper kernel: exit {code}; {' '.join(said[:3])}")
    return notes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and sanitizer runs")
    parser.add_argument("--only", default="", help="comma-separated type pairs to check")
    parser.add_argument("--layouts", default="", help="comma-separated layouts to check (NN, NT, TN, TT)")
    parser.add_argument("--part", default="1/1", metavar="I/N",
                        help="check the I-th of N parts of the configurations (every N-th from the I-th), "
                             "so that each part fits one call of a lent GPU")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 4, help="builds at once")
    parser.add_argument("--out", default=os.environ.get("OUT", ""), help="copy results here")
    parser.add_argument("--change", action="append", default=[], metavar="FILE",
                        help="check gemm.md with this change file (a path, or a name in worklog/)")
    args = parser.parse_args(argv)
    try:
        part = gemmlib.parse_part(args.part)
    except ValueError:
        sys.exit(f"check_gpu: --part {args.part}: give I/N with 1 <= I <= N")

    gpu, cc, driver = gemmlib.find_gpu("check_gpu")
    described = gemmlib.registry()
    only = [t for t in args.only.split(",") if t]
    unknown = sorted(set(only) - set(gemmlib.pairs(described)))
    if unknown:
        sys.exit(f"check_gpu: no type pair called {', '.join(unknown)}; ./gemm --describe lists them")
    layouts = [l for l in args.layouts.split(",") if l]
    if set(layouts) - set(described["layouts"]):
        sys.exit(f"check_gpu: --layouts takes {', '.join(described['layouts'])}")
    cublas = os.environ.get("CUBLAS", "1") == "1"    # CUBLAS=0: builds without cuBLAS
    shutil.rmtree(BUILD, ignore_errors=True)
    cu = gemmlib.tangle(BUILD / "gemm.cu", changes=args.change)
    release = subprocess.run([gemmlib.NVCC, "--version"], capture_output=True, text=True).stdout
    print(f"GPU: {gpu}, driver {driver}, sm_{cc}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"{release.strip().splitlines()[-1] if release.strip() else ''}", flush=True)
    if args.change:
        print(f"gemm.md with {', '.join(args.change)}", flush=True)

    configs = gemmlib.share_of(configurations(described, only, layouts), part)
    hopper = gemmlib.hopper_pairs(gemmlib.registry(changes=args.change))   # a variant's, where given
    if part[1] > 1:
        print(f"part {part[0]} of {part[1]}", flush=True)
    print(f"building {len(configs)} configurations with {args.jobs} jobs...", flush=True)
    start = time.monotonic()

    def build(config):
        pair, shape, ta, tb = config
        result = gemmlib.nvcc(cu, BUILD / name(config), gemmlib.defines(pair, shape, ta, tb, cublas), gpu=cc)
        (BUILD / f"{name(config)}.build.log").write_text(result.stdout + result.stderr, encoding="utf-8")
        return None if result.returncode == 0 else f"BUILD FAILED {name(config)}"

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for failure in pool.map(build, configs):
            if failure:
                print(failure, flush=True)
    print(f"built in {time.monotonic() - start:.0f} s", flush=True)

    start = time.monotonic()
    plan = runs(args.quick)

    entries = gemmlib.pairs(described)

    def check(config):
        return [one_run(config, *run[:4], untiled(run[4], entries[config[0]])) for run in plan]

    results = []
    with ThreadPoolExecutor(max_workers=RUN_WORKERS) as pool:
        for done, lines in enumerate(pool.map(check, configs), 1):
            results += lines
            if done % 6 == 0 or done == len(configs):
                print(f"  {done} of {len(configs)} configurations run ({time.monotonic() - start:.0f} s)",
                      flush=True)
    print(f"ran in {time.monotonic() - start:.0f} s", flush=True)

    notes = []
    if shutil.which("compute-sanitizer") is None:
        results.append("FAIL compute-sanitizer not found")
    else:
        start = time.monotonic()
        with ThreadPoolExecutor(max_workers=4) as pool:
            results += pool.map(lambda r: sanitize(*r),
                                sanitizer_runs(described, configs, cc, args.quick, hopper))
        taken = [c for c in configs if c[0] in hopper]
        if taken and gemmlib.runs_on("wgmma", cc, described):
            notes = hopper_notes(taken[0])
            (BUILD / "sanitizer-notes.txt").write_text("\n".join(notes) + "\n", encoding="utf-8")
            print("\n".join(notes))
        print(f"sanitizers ran in {time.monotonic() - start:.0f} s", flush=True)

    results.sort()
    (BUILD / "results.txt").write_text("\n".join(results) + "\n", encoding="utf-8")
    failed = [r for r in results if r.startswith("FAIL")]
    print("\n".join(failed[:40]))
    # How close the floating-point results came to their error bounds (largest ratios last).
    worst = []
    for log in BUILD.glob("*.log"):
        found = [(float(m[2]), f"{log.name}: {m[1]}") for m in
                 re.finditer(r"Worst error *: (\S+ \((\S+) of its bound\))",
                             log.read_text(encoding="utf-8", errors="replace"))]
        if found:
            worst.append(max(found))      # the log's worst kernel
    for _, line in sorted(worst)[-6:]:
        print(line)
    for line in failed[:5]:
        words = line.split()
        for log in sorted(BUILD.glob(f"{words[1]}.{words[2]}*.log"))[:1]:
            print(f"--- {log.name}")
            print("\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-8:]))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(BUILD / "results.txt", out / "check-results.txt")
        if notes:
            shutil.copy(BUILD / "sanitizer-notes.txt", out / "sanitizer-notes.txt")
        kept = {p for line in failed for p in BUILD.glob(f"{line.split()[1]}.*.log")}
        kept |= {p for tool in ("memcheck", "racecheck", "synccheck", "initcheck")
                 for p in BUILD.glob(f"*{tool}*.log")}
        with tarfile.open(out / "check-logs.tgz", "w:gz") as tar:
            for path in sorted(kept):
                tar.add(path, arcname=path.name)
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
