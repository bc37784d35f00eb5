#!/usr/bin/env python3
"""A change to the Hopper kernel, or new type pairs, tried on a GPU in one call.

    python3 scripts/candidate_gpu.py --change FILE [--change FILE ...] [compare_gpu.py options]
    python3 scripts/candidate_gpu.py --base BASE.md [compare_gpu.py options]
    python3 scripts/candidate_gpu.py --new-pairs PAIR,... [--yardstick PAIR]
    python3 scripts/candidate_gpu.py --smoke PAIR [--layout TN] [--change FILE ...]

Every form begins with the smoke run: the Hopper kernel at 512^3 and 4096^3, each cut off
after 60 s, so that a change that hangs (a barrier that never completes) costs a minute, not
the check's 300 s for each of its runs; a pair that fails it goes no further.

A change (--change, the change files of worklog/ applied to gemm.md: a variant such as
hopper-ping-pong, built on step H8, takes --change hopper-c-from-global --change
hopper-ping-pong; or --base, gemm.md against an earlier document): the smoke run of the first
pair the candidate's Hopper kernel takes (./gemm --describe), the quick GPU check of all of
them (check_gpu.py --quick --only), then the candidate against the base taking turns in one
run (compare_gpu.py at 8192^3, 4096^3 and 3000^3, TN, three rounds, 120 s a run; the options
not named here go to compare_gpu.py and win over those).

New pairs (--new-pairs): for each, the smoke run, then ./gemm built as a user builds it (make) at
8192^3 in TN and NN with --verify=sample --repeat 20, cuBLAS in the same run (the --yardstick
pair's TN first, as the call's measure), then the GPU check of all of them (check_gpu.py
--only: every layout, awkward sizes, split K, beta 0, memcheck).

Results go to $OUT (default build/candidate): the logs of each part, compare.csv, and the
check's files. The exit status is 1 if any part failed, 2 for a bad command line.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gemmlib  # noqa: E402

SMOKE_SIZES = ("512", "4096")
SMOKE_TIMEOUT = 60
# What a change is compared at, unless compare_gpu.py options given after these say otherwise.
COMPARE = ["--sizes", "8192,4096,3000", "--layouts", "TN", "--rounds", "3", "--timeout", "120"]
BIG_TIMEOUT = 300


def parse(argv=None):
    """The options; those it does not know are compare_gpu.py's (a change's comparison), whole
    words only, so that compare_gpu.py's --new or --pairs is never taken for one of these."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--change", action="append", default=[], metavar="FILE",
                        help="a change file of worklog/ (a name or a path): the candidate is gemm.md with it")
    parser.add_argument("--base", type=Path, help="the document the candidate (gemm.md) is compared with")
    parser.add_argument("--new-pairs", help="new type pairs, comma-separated: smoke, 8192^3 and the GPU check")
    parser.add_argument("--yardstick", metavar="PAIR", help="with --new-pairs: a pair run at 8192^3 (TN) first")
    parser.add_argument("--smoke", metavar="PAIR", help="the smoke run of this pair alone")
    parser.add_argument("--layout", default="TN", help="the smoke run's layout (default TN)")
    # A bad command line is one line, as a missing GPU is.
    parser.error = lambda message: parser.exit(2, f"candidate_gpu: {message} (--help says more)\n")
    args, rest = parser.parse_known_args(argv)
    modes = [m for m in ("new_pairs", "smoke") if getattr(args, m)]
    if len(modes) > 1 or (modes and (args.base or rest)) or (args.new_pairs and args.change):
        parser.error("give one of --change/--base, --new-pairs or --smoke; compare_gpu.py's options go "
                     "with --change or --base only")
    if not modes and not (args.change or args.base):
        parser.error("give --change FILE, --base BASE.md, --new-pairs PAIR,... or --smoke PAIR")
    if args.yardstick and not args.new_pairs:
        parser.error("--yardstick goes with --new-pairs")
    args.compare = rest
    return args


def plan(args, described):
    """[(part, what)] that `main` runs in order: ("smoke", pair), ("check", check_gpu.py options),
    ("compare", compare_gpu.py options) or ("big", (pair, TRANSPOSE_B))."""
    if args.smoke:
        return [("smoke", args.smoke)]
    out = os.environ.get("OUT", "build/candidate")
    if args.new_pairs:
        pairs = args.new_pairs.split(",")
        steps = [("big", (args.yardstick, 1))] if args.yardstick else []
        for pair in pairs:
            steps += [("smoke", pair), ("big", (pair, 1)), ("big", (pair, 0))]
        return steps + [("check", ["--only", args.new_pairs, "--out", out])]
    changes = [a for c in args.change for a in ("--change", c)]
    hopper = ",".join(gemmlib.hopper_pairs(described))
    base = ["--base", str(args.base)] if args.base else ["--base", str(gemmlib.REPO / "gemm.md")]
    return [("smoke", hopper.split(",")[0]),
            ("check", ["--quick", "--only", hopper, *changes, "--out", out]),
            ("compare", [*base, *[a for c in args.change for a in ("--new-change", c)], *COMPARE,
                         "--out", f"{out}/compare.csv", *args.compare])]


def known(pairs, described, layout="TN"):
    """SystemExit with one line unless every pair and the layout are --describe's, the Hopper
    kernel taking each pair."""
    hopper = gemmlib.hopper_pairs(described)
    wrong = [p for p in pairs if p not in hopper]
    if wrong:
        sys.exit(f"candidate_gpu: the Hopper kernel takes no pair called {', '.join(wrong)}; "
                 f"./gemm --describe lists {', '.join(hopper)}")
    if layout not in described["layouts"]:
        sys.exit(f"candidate_gpu: no layout called {layout}; ./gemm --describe lists "
                 f"{', '.join(described['layouts'])}")


def smoke(pair, layout, changes, described, gpu, build, log=None):
    """The smoke run of one pair, what it says kept in `log` too; True when both sizes ran and passed."""
    said = []

    def say(text):
        print(text, flush=True)
        said.append(text)
    try:
        return smoke_runs(pair, layout, changes, described, gpu, build, say)
    finally:
        if log:
            Path(log).write_text("\n".join(said) + "\n", encoding="utf-8")


def smoke_runs(pair, layout, changes, described, gpu, build, say):
    ta, tb = described["layouts"][layout]
    source = gemmlib.tangle(build / "gemm.cu", changes)
    built = gemmlib.nvcc(source, build / "gemm", gemmlib.defines(pair, ta=ta, tb=tb), gpu=gpu)
    if built.returncode != 0:
        say(f"smoke: the candidate does not build for {pair}:\n{built.stderr[-3000:]}")
        return False
    for size in SMOKE_SIZES:
        try:
            run = gemmlib.run(build / "gemm", [size, size, size, "--kernel=wgmma", "--repeat", "3"],
                              timeout=SMOKE_TIMEOUT)
        except subprocess.TimeoutExpired:
            say(f"smoke: {pair} at {size}^3 gave no answer in {SMOKE_TIMEOUT} s (a hang?)")
            return False
        say(run.stdout[-600:] + run.stderr[-600:])
        if run.returncode != 0:
            say(f"smoke: {pair} at {size}^3 failed ({run.returncode})")
            return False
    say(f"smoke: {pair} ({layout}) passed at {' and '.join(s + '^3' for s in SMOKE_SIZES)}")
    return True


def big(pair, tb, out):
    """./gemm at 8192^3, built with make as a user builds it, its report kept; True if it passed."""
    made = subprocess.run(["make", "-s", f"TYPE={pair}", "TRANSPOSE_A=0", f"TRANSPOSE_B={tb}"],
                          cwd=gemmlib.REPO)
    if made.returncode != 0:
        return False
    log = out / f"{pair}-0{tb}-8192.txt"
    try:
        run = gemmlib.run(gemmlib.REPO / "gemm", ["8192"] * 3 + ["--verify=sample", "--repeat", "20"],
                          timeout=BIG_TIMEOUT)
        said, code = run.stdout + run.stderr, run.returncode
    except subprocess.TimeoutExpired:
        said, code = f"no answer in {BIG_TIMEOUT} s", "timeout"
    log.write_text(said, encoding="utf-8")
    print("\n".join(said.splitlines()[-25:]), flush=True)
    return code == 0


def script(name, options, log):
    """Another script of scripts/, its output shown and kept in `log`; True if it exited 0."""
    with open(log, "w", encoding="utf-8") as kept:
        child = subprocess.Popen([sys.executable, str(gemmlib.REPO / "scripts" / name), *options],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 env=dict(os.environ, PYTHONUNBUFFERED="1"))
        for line in child.stdout:
            sys.stdout.write(line)
            kept.write(line)
    return child.wait() == 0


def main(argv=None):
    args = parse(argv)
    os.chdir(gemmlib.REPO)    # paths given are the repository's, as make's and the logs' are
    name, gpu, _ = gemmlib.find_gpu("candidate_gpu")
    described = gemmlib.registry(changes=args.change)
    if not gemmlib.runs_on("wgmma", gpu, described):
        sys.exit(f"candidate_gpu: the Hopper kernel does not run on {name} (compute capability {gpu})")
    pairs = [args.smoke] if args.smoke else ([args.yardstick] if args.yardstick else []) + \
        (args.new_pairs.split(",") if args.new_pairs else [])
    known(pairs, described, args.layout)
    out = Path(os.environ.get("OUT", "build/candidate"))
    out.mkdir(parents=True, exist_ok=True)
    header = subprocess.run(["bash", "-c", ". scripts/gpu_header.sh && gpu_header"], cwd=gemmlib.REPO,
                            capture_output=True, text=True).stdout
    (out / "gpu.txt").write_text(header, encoding="utf-8")
    print(header, end="", flush=True)
    failed, smoked = False, set()
    for part, what in plan(args, described):
        if part == "smoke":
            ok = smoke(what, args.layout, args.change, described, gpu, gemmlib.REPO / "build" / f"smoke-{what}",
                       out / f"smoke-{what}.txt")
            if ok:
                smoked.add(what)
            elif not args.new_pairs:
                return 1          # a change that fails its smoke run goes no further
        elif part == "big":
            pair, tb = what
            if pair == args.yardstick or pair in smoked:
                ok = big(pair, tb, out)
            else:
                ok = True         # the failed smoke run has counted already
                print(f"candidate_gpu: {pair} failed its smoke run; its 8192^3 run is skipped", flush=True)
        else:
            if args.new_pairs and failed:
                print("candidate_gpu: the GPU check is skipped after a failure", flush=True)
                break
            ok = script(f"{part}_gpu.py", what, out / f"{part}.txt")
        failed |= not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
