#!/usr/bin/env python3
"""Is a change to gemm.md slower? Time one kernel as built from two documents, in one run.

    python3 scripts/compare_gpu.py --base OLD.md [--new NEW.md] [--kernel wgmma] [--sizes 8192,4096,3000]
                                   [--layouts NN,TN] [--pairs P1,P2] [--rounds 3] [--out FILE.csv]
    python3 scripts/compare_gpu.py --base-args="--beta 3" --new-args="--beta 0" ...
    python3 scripts/compare_gpu.py --new-change hopper-spread-c ...     gemm.md with a change file
    python3 scripts/compare_gpu.py --base-change hopper-batched-stores --sizes 4096,3000
    python3 scripts/compare_gpu.py --new-flags=-DGROUP_M=16 ...          a setting changed at build time
    python3 scripts/compare_gpu.py --base OLD.md --sass [--layouts NN,TN,NT,TT] [--pairs P1,P2]
                                   is the device code the same? (no GPU needed)
    python3 scripts/compare_gpu.py --loop 0 --kernel mma --pairs I8_IN_I32_OUT --layouts TN --new-change X
                                   where the main loop of tile 0 puts its fragment loads (no GPU)
    python3 scripts/compare_gpu.py ... --also="--kernel=all --repeat 20" --also="769x4751x2100 --verify=full"

Builds OLD.md and NEW.md (gemm.md unless given) (through gemmlib, for the GPU present) for every type pair
that has the kernel (./gemm --describe), then runs both, alternately, `--rounds` times
for each pair, layout and size, with cuBLAS in the same process: what is compared is
each build's speed as a share of cuBLAS's (in --sustain's steady state where both builds'
arguments ask for it), and the new build's median against the old one's. cuBLAS computes the
padded problem, so where the builds pad a size differently the table says so under its row.
Prints one table; writes every --csv row, with the build it came from, to --out.
Exit status 1 if a run fails its check. With --base-args and --new-args the two builds run
with those options of ./gemm, and with --new-change the new build is the document with that
change file of worklog/, and with --base-change the base build is the document with that one (an
earlier step, rebuilt); --base-flags and --new-flags add nvcc options (a setting, -DNAME=VALUE) to
one build. The base document is the new one unless given. A size is N (N x N x N)
or MxNxK.

With --loop TILE nothing runs: for the tiled or mma.sync kernel (--kernel tiled or mma) of that row
of the pair's tiles, both builds' machine code for sm_90a (nvcc's cubin, read by nvdisasm: the CUDA
toolkit's, NVDISASM, or `pip install -r scripts/requirements-sass.txt`) gives its main loop (the
backward branch around the most multiplies): its instructions by opcode, then each fragment load
(LDSM), copy and barrier in order, a load with the instructions that pass before a multiply reads
it. A load close to its multiply makes the tensor cores wait (a short scoreboard, in Nsight
Compute's words); one the compiler could not move above the copies comes after all of them.

Each --also ARGS is one more run of the new build after the comparison, for each pair and
layout: ./gemm with ARGS and --csv at each size, or, where ARGS begin with a size, at that one
only (the split of a part-full last wave: --also="--kernel=wgmma --split-k=1 --repeat 20" against
the choice, --also="--kernel=all --repeat 20" for every kernel at each size). Its rows go to
--out too, `compared` being "new ARGS"; a run that fails its check counts as a failure.
"""

import argparse
import collections
import os
import re
import shutil
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gemmlib  # noqa: E402


def build(tag, pair, layout, gpu, folder, layouts, flags=()):
    ta, tb = layouts[layout]
    cu = folder / f"{tag}.cu"
    exe = folder / f"{tag}-{pair}-{layout}"
    result = gemmlib.nvcc(cu, exe, gemmlib.defines(pair, None, ta, tb, cublas=True) + list(flags), gpu=gpu)
    if result.returncode != 0:
        sys.exit(f"compare_gpu: {tag} did not build for {pair} {layout}:\n{result.stderr[-3000:]}")
    return exe


# The C++ name of each kernel's warp instruction in gemm_tiled's template (mangled as NNName).
INSTRUCTIONS = {"mma": "Mma16", "tiled": "WmmaOf"}
MULTIPLIES = ("HMMA", "IMMA", "DMMA")


def nvdisasm():
    """The nvdisasm to run: NVDISASM, PATH, or the one the pip package puts beside Python."""
    if os.environ.get("NVDISASM"):
        return os.environ["NVDISASM"]
    if shutil.which("nvdisasm"):
        return "nvdisasm"
    for site in map(Path, sys.path):
        for found in sorted(site.glob("nvidia/cu*/bin/nvdisasm")):
            return str(found)
    sys.exit("compare_gpu: --loop needs nvdisasm (the CUDA toolkit's, or `pip install -r "
             "scripts/requirements-sass.txt`, or NVDISASM=/path/to/nvdisasm)")


def functions(text):
    """nvdisasm -c's text as {mangled name: [(label or None, instruction)]}."""
    found, body = {}, None
    for line in text.splitlines():
        name = re.match(r"^\.text\.(\S+):$", line)
        if name:
            body = found.setdefault(name[1], [])
            continue
        label = re.match(r"^\s*(\.L_x_\d+):", line)
        if body is not None and label:
            body.append((label[1], None))
            continue
        instruction = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", line)
        if body is not None and instruction:
            body.append((None, instruction[1]))
    return found


def opcode(instruction):
    """'@!P0 LDGSTS.E.BYPASS [R1], ...' -> 'LDGSTS'."""
    return re.sub(r"^@!?U?P\w+\s+", "", instruction).split()[0].split(".")[0]


def main_loop(body):
    """The instructions of the loop (a backward branch) with the most multiplies."""
    labels, instructions = {}, []
    for label, instruction in body:
        if label:
            labels[label] = len(instructions)
        else:
            instructions.append(instruction)
    best = []
    for end, instruction in enumerate(instructions):
        target = re.search(r"BRA\s+`?\(?(\.L_x_\d+)", instruction)
        if target and labels.get(target[1], end + 1) <= end:
            loop = instructions[labels[target[1]]:end + 1]
            if sum(opcode(i) in MULTIPLIES for i in loop) > sum(opcode(i) in MULTIPLIES for i in best):
                best = loop
    return best


def first_use(loop, at):
    """How many instructions after loop[at] (an LDSM) the first multiply reads a register it
    wrote, or None: within this iteration only."""
    written = re.match(r"(?:@!?U?P\w+\s+)?LDSM\S*\s+(R\d+)", loop[at])
    if not written:
        return None
    first, matrices = int(written[1][1:]), re.search(r"LDSM\S*?\.(\d)\s", loop[at])
    registers = {f"R{first + k}" for k in range(int(matrices[1]) if matrices else 1)}
    for later in range(at + 1, len(loop)):
        sources = re.sub(r"^@!?U?P\w+\s+", "", loop[later]).split(",")[1:]   # after the destination
        if opcode(loop[later]) in MULTIPLIES and registers & set(re.findall(r"\bR\d+\b", ",".join(sources))):
            return later - at
    return None


def report(loop):
    """The lines printed for a loop."""
    counts = collections.Counter(opcode(i) for i in loop)
    lines = [f"{len(loop)} instructions: " + ", ".join(f"{n} {op}" for op, n in counts.most_common())]
    for at, instruction in enumerate(loop):
        op = opcode(instruction)
        if op == "LDSM":
            distance = first_use(loop, at)
            lines.append(f"{at:4} LDSM   " + (f"read {distance} instructions later" if distance else
                                               "read in the next iteration"))
        elif op in ("LDGSTS", "BAR", "DEPBAR", "LDGDEPBAR"):
            lines.append(f"{at:4} {op}")
    return lines


def build_cubin(tag, pair, layout, folder, layouts, flags=()):
    """The sm_90a cubin of folder/TAG.cu for one pair and layout (no GPU needed), its path; exits
    with nvcc's message if it does not build."""
    cubin = folder / f"{tag}-{pair}-{layout}.cubin"
    result = gemmlib.nvcc(folder / f"{tag}.cu", cubin, gemmlib.defines(pair, None, *layouts[layout]) + list(flags),
                          gpu="sm_90a", mode="cubin")
    if result.returncode != 0:
        sys.exit(f"compare_gpu: {tag} did not build for {pair} {layout}:\n{result.stderr[-3000:]}")
    return cubin


def loop_report(args):
    """--loop TILE: each build's main loop of that tile of the tiled or mma.sync kernel, for
    every pair and layout given, its loads placed (no GPU). 0, or exit with one line."""
    if args.kernel not in INSTRUCTIONS:
        sys.exit(f"compare_gpu: --loop reads the loop of --kernel {' or '.join(sorted(INSTRUCTIONS))}, "
                 f"not {args.kernel}")
    described = gemmlib.registry()
    layouts = {n: tuple(v) for n, v in described["layouts"].items()}
    pairs = args.pairs.split(",") if args.pairs else [described["build"]["type"]]
    unknown = [p for p in pairs if p not in gemmlib.pairs(described)] + \
        [l for l in args.layouts.split(",") if l not in layouts]
    if unknown:
        sys.exit(f"compare_gpu: no pair or layout {', '.join(unknown)}")
    tool = nvdisasm()
    folder = gemmlib.REPO / "build" / "compare-loop"
    builds = [("base", args.base or args.new, args.base_change, args.base_flags),
              ("new", args.new, args.new_change, args.new_flags)]
    if (args.base or args.new) == args.new and not (args.base_change or args.new_change or args.base_flags
                                                     or args.new_flags):
        builds = builds[1:]   # one document as it is: one build
    prefix = f"_Z10gemm_tiledILi{args.loop}E{len(INSTRUCTIONS[args.kernel])}{INSTRUCTIONS[args.kernel]}"
    for tag, document, changes, flags in builds:
        gemmlib.tangle(folder / f"{tag}.cu", changes=changes, document=document)
        for pair in pairs:
            for layout in args.layouts.split(","):
                cubin = build_cubin(tag, pair, layout, folder, layouts, flags.split())
                text = subprocess.run([tool, "-c", str(cubin)], capture_output=True, text=True, check=True).stdout
                found = {n: body for n, body in functions(text).items() if n.startswith(prefix)}
                loop = main_loop(next(iter(found.values()))) if len(found) == 1 else []
                if not loop:
                    sys.exit(f"compare_gpu: no main loop of the {args.kernel} kernel's tile {args.loop} for "
                             f"{pair} {layout} (a tile it has not, or a kernel the pair has not)")
                print(f"{tag}: {pair} {layout}, the {args.kernel} kernel's tile {args.loop}"
                      + "".join(f" with {c}" for c in changes))
                print("\n".join(report(loop)) + "\n")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--base", type=Path, help="the document to compare with (default: --new)")
    parser.add_argument("--new", type=Path, default=gemmlib.REPO / "gemm.md",
                        help="the document compared (default gemm.md)")
    parser.add_argument("--kernel", default="wgmma")
    parser.add_argument("--sizes", default="8192,4096,3000,2048")
    parser.add_argument("--layouts", default="NN,TN")
    parser.add_argument("--pairs", default="", help="comma-separated type pairs (default: every pair "
                        "that has the kernel)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--timeout", type=int, default=600, help="seconds a run may take before it fails")
    parser.add_argument("--out", type=Path, default=Path("build/compare.csv"))
    parser.add_argument("--base-args", default="", help="options of ./gemm for the base build's runs")
    parser.add_argument("--new-args", default="", help="options of ./gemm for the new build's runs")
    parser.add_argument("--base-flags", default="", help="nvcc options added to the base build's")
    parser.add_argument("--new-flags", default="", help="nvcc options added to the new build's")
    parser.add_argument("--new-change", action="append", default=[], metavar="FILE",
                        help="a change file (a path, or a name in worklog/) for the new build")
    parser.add_argument("--base-change", action="append", default=[], metavar="FILE",
                        help="a change file for the base build: an earlier step, rebuilt")
    parser.add_argument("--also", action="append", default=[], metavar="ARGS",
                        help="one more run of the new build, ./gemm with ARGS, at each size or a size "
                             "ARGS begin with")
    parser.add_argument("--sass", action="store_true",
                        help="compare the two documents' machine code for sm_90a instead of timing them")
    parser.add_argument("--loop", type=int, metavar="TILE",
                        help="instead of timing, where the main loop of the tiled or mma.sync kernel's "
                             "tile TILE (its row of the pair's tiles) puts its fragment loads, in each build")
    args = parser.parse_args(argv)
    if args.loop is not None:
        return loop_report(args)
    if args.sass:
        if args.base is None:
            parser.error("--sass compares two documents: give --base")
        return compare_sass(args)
    if args.base is None and not (args.base_args or args.new_args or args.new_change or args.base_change
                                  or args.base_flags or args.new_flags):
        parser.error("give --base, --new-change, --base-change, --base-flags or --new-flags, or "
                     "--base-args and --new-args to compare one document run two ways")
    args.base = args.base or args.new
    extra = {"base": args.base_args.split(), "new": args.new_args.split()}
    flags = {"base": args.base_flags.split(), "new": args.new_flags.split()}

    name, gpu, _ = gemmlib.find_gpu("compare_gpu")
    described = gemmlib.registry()
    pairs = [p for p, entry in gemmlib.pairs(described).items() if args.kernel in entry["kernels"]
             and (not args.pairs or p in args.pairs.split(","))]
    if not pairs:
        sys.exit(f"compare_gpu: no type pair{' of --pairs' if args.pairs else ''} has the kernel '{args.kernel}'")
    layouts = {n: tuple(v) for n, v in described["layouts"].items()}
    folder = gemmlib.REPO / "build" / "compare"
    folder.mkdir(parents=True, exist_ok=True)
    chosen = args.layouts.split(",")
    documents = (("base", args.base), ("new", args.new))
    for tag, document in documents:
        gemmlib.tangle(folder / f"{tag}.cu", changes=args.new_change if tag == "new" else args.base_change,
                       document=document)
    keys = [(tag, p, l) for tag, _ in documents for p in pairs for l in chosen]
    with ThreadPoolExecutor(max_workers=max(1, (os.cpu_count() or 2) // 2)) as pool:
        made = pool.map(lambda key: build(key[0], key[1], key[2], gpu, folder, layouts, flags[key[0]]), keys)
        builds = dict(zip(keys, made))

    # each build's own CSV header: an older document may have fewer columns
    headers = {key: gemmlib.run(exe, ["--csv-header"]).stdout.strip() for key, exe in builds.items()}
    rows, failed = [], False
    print(f"{name}: --kernel={args.kernel}, {args.rounds} rounds of --repeat {args.repeat}", flush=True)
    print(f"{'pair':16} {'layout':6} {'size':>14} {'base/cuBLAS':>12} {'new/cuBLAS':>11} {'new/base':>9}"
          f"   per clock: {'base':>6} {'new':>6}   energy/cuBLAS's: {'base':>6} {'new':>6}")
    for pair in pairs:
        for layout in chosen:
            for size in args.sizes.split(","):
                share = {"base": [], "new": []}
                clock, energy = {"base": [], "new": []}, {"base": [], "new": []}
                padded = {"base": set(), "new": set()}   # cuBLAS runs on the padded sizes
                for _ in range(args.rounds):
                    for tag in share:
                        found, ratio, code, said = gemmlib.versus_cublas(
                            builds[(tag, pair, layout)], [*(size.split("x") if "x" in size else [size] * 3),
                                                          f"--kernel={args.kernel}", "--csv", "--repeat",
                                                          str(args.repeat)] + extra[tag],
                            headers[(tag, pair, layout)], args.kernel, args.timeout)
                        failed |= code != 0
                        if ratio is None:
                            print(f"  {tag} {pair} {layout} {size}: {said}")
                            continue
                        for r in found:
                            rows.append(dict(r, compared=tag))
                            padded[tag].add("x".join(str(r.get(c, "?")) for c in ("Mp", "Np", "Kp")))
                        share[tag].append(ratio)
                        per_clock, joules = gemmlib.against_cublas(found, args.kernel)
                        clock[tag] += [per_clock] if per_clock is not None else []
                        energy[tag] += [joules] if joules is not None else []
                if share["base"] and share["new"]:
                    b, n = statistics.median(share["base"]), statistics.median(share["new"])
                    medians = [f"{100 * statistics.median(x[tag]):5.1f}%" if x[tag] else "     -"
                               for x in (clock, energy) for tag in ("base", "new")]
                    print(f"{pair:16} {layout:6} {size:>14} {100 * b:11.1f}% {100 * n:10.1f}% "
                          f"{100 * n / b:8.1f}%   {'':10} {medians[0]} {medians[1]}   {'':16} "
                          f"{medians[2]} {medians[3]}", flush=True)
                if padded["base"] != padded["new"]:
                    print(f"  note: the builds pad {size} differently (base {', '.join(sorted(padded['base']))}, "
                          f"new {', '.join(sorted(padded['new']))}), and cuBLAS computes the padded problem: "
                          f"compare the kernels' own speeds, not their shares of cuBLAS", flush=True)
    for pair, layout, also in [(p, l, a) for p in pairs for l in chosen for a in args.also]:
        for size, words in also_runs(also, args.sizes):
            found, failure = run_also(builds[("new", pair, layout)], size, words, headers[("new", pair, layout)],
                                      args.timeout)
            rows += [dict(r, compared=f"new {also}") for r in found]
            failed |= failure is not None
            print(f"{'FAIL' if failure else 'done'} new {pair} {layout} {size} {also}"
                  + (f": {failure}" if failure else f", {len(found)} rows"), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if rows:
        columns = ["compared"] + list(dict.fromkeys(c for r in rows for c in r if c != "compared"))
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(f"# compare_gpu.py on {name}: base {args.base.name} {args.base_args}"
                    f"{' with ' + ', '.join(args.base_change) if args.base_change else ''} against "
                    f"{args.new.name} {args.new_args}{' with ' + ', '.join(args.new_change) if args.new_change else ''}\n")
            f.write(",".join(columns) + "\n")
            for r in rows:
                values = [str(r.get(c, "")) for c in columns]
                f.write(",".join('"' + v + '"' if "," in v or " " in v else v for v in values) + "\n")
    return 1 if failed else 0


def sass_functions(text):
    """cuobjdump -sass's text of a cubin as a sorted list of its functions' bodies: the
    instructions without addresses, encodings or the names of functions and symbols."""
    bodies, body = [], None
    for line in text.splitlines():
        if line.strip().startswith("Function :"):
            if body is not None:
                bodies.append("\n".join(body))
            body = []
            continue
        match = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;", line)
        if body is not None and match:
            # A relocation names its symbol (a mangled kernel, a label): keep only that there is one.
            body.append(re.sub(r"[.$]?\b[A-Za-z_$][\w$.]*(?=@)|\b_Z[\w$.]*", "SYMBOL", match.group(1)))
    if body is not None:
        bodies.append("\n".join(body))
    return sorted(bodies)


def compare_sass(args):
    """--sass: every pair's device code from both documents, compared. 0 if all the same."""
    if shutil.which("cuobjdump") is None:
        sys.exit("compare_gpu: --sass reads machine code with cuobjdump, which is not on PATH "
                 "(it comes with the CUDA toolkit's binary utilities)")
    described = gemmlib.registry()
    layouts = {n: tuple(v) for n, v in described["layouts"].items()}
    chosen = args.layouts.split(",")
    unknown = [l for l in chosen if l not in layouts]
    if unknown:
        sys.exit(f"compare_gpu: no layout {', '.join(unknown)} (there are {', '.join(layouts)})")
    pairs = [p for p in gemmlib.pairs(described) if not args.pairs or p in args.pairs.split(",")]
    folder = gemmlib.REPO / "build" / "compare-sass"
    folder.mkdir(parents=True, exist_ok=True)
    for tag, document, changes in (("base", args.base, args.base_change), ("new", args.new, args.new_change)):
        gemmlib.tangle(folder / f"{tag}.cu", changes=changes, document=document)
    keys = [(tag, p, l) for tag in ("base", "new") for p in pairs for l in chosen]

    def compile_(key):
        tag, pair, layout = key
        cubin = build_cubin(tag, pair, layout, folder, layouts, args.__dict__[f"{tag}_flags"].split())
        return sass_functions(subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True,
                                             text=True, check=True).stdout)

    print(f"compiling {len(keys)} configurations for sm_90a...", flush=True)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        code = dict(zip(keys, pool.map(compile_, keys)))
    differ = 0
    for pair in pairs:
        for layout in chosen:
            base, new = code[("base", pair, layout)], code[("new", pair, layout)]
            changed = len(set(base) ^ set(new)) if base != new else 0
            differ += base != new
            print(f"{pair:16} {layout:3} {len(new):3} functions: "
                  + ("same" if base == new else f"DIFFER ({changed} bodies not in both; "
                     f"{len(base)} functions before)"), flush=True)
    print(f"{len(pairs) * len(chosen) - differ} configurations the same, {differ} different")
    return 1 if differ else 0


def also_runs(extra, sizes):
    """[(size, ./gemm's other arguments)] of one --also: at each of `sizes`, or at the size
    the arguments begin with."""
    words = extra.split()
    if words and re.fullmatch(r"\d+(x\d+x\d+)?", words[0]):
        return [(words[0], words[1:])]
    return [(size, words) for size in sizes.split(",")]


def run_also(exe, size, words, header, timeout):
    """One --also run: (its CSV rows, why it failed or None)."""
    try:
        result = gemmlib.run(exe, [*(size.split("x") if "x" in size else [size] * 3), *words, "--csv"],
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return [], f"no answer in {timeout} s"
    found = gemmlib.parse_csv(result.stdout, header) if result.returncode in (0, 1) else []
    return found, (None if result.returncode == 0 else
                   f"exit {result.returncode}: {result.stderr.strip()[-300:]}")


if __name__ == "__main__":
    sys.exit(main())
