#!/usr/bin/env python3
"""Where a tiled kernel's main loop puts its fragment loads, from its machine code (no GPU).

    python3 scripts/sass_loop.py --type I8_IN_I32_OUT [--layout TN] [--kernel mma] [--tile 0]
                                 [--change loads-before-copies]

Builds gemm.md (with the change files given) for sm_90a as a cubin, disassembles it with
nvdisasm, finds the kernel of that tile (--tile: its row of the pair's tiles, as --describe
lists them) and, in it, the main loop: the backward branch around the most multiplies. Prints
the loop's instructions by opcode, then each fragment load (LDSM), copy (LDGSTS) and barrier in
the loop's order, a load with the number of instructions to the first multiply that reads what
it loaded. A load close to its multiply makes the tensor cores wait for it (a short scoreboard,
in Nsight Compute's words); a load that the compiler could not move above the copies says so
by coming after all of them.

nvdisasm comes with the CUDA toolkit (not with every nvcc); where it is not on PATH, NVDISASM
names it, or `pip install -r scripts/requirements-sass.txt` puts NVIDIA's package of it beside
the venv's Python, where this script finds it.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gemmlib  # noqa: E402

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
    sys.exit("sass_loop.py: no nvdisasm (the CUDA toolkit's, or `pip install -r "
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--type", required=True, help="a type pair (./gemm --describe lists them)")
    parser.add_argument("--layout", default="TN")
    parser.add_argument("--kernel", choices=sorted(INSTRUCTIONS), default="mma")
    parser.add_argument("--tile", type=int, default=0, help="the tile's row among the pair's (default 0)")
    parser.add_argument("--change", action="append", default=[], metavar="FILE",
                        help="a change file of worklog/ (repeatable)")
    args = parser.parse_args(argv)
    described = gemmlib.registry()
    if args.type not in gemmlib.pairs(described):
        sys.exit(f"sass_loop.py: no pair {args.type} (there are {', '.join(gemmlib.pairs(described))})")
    layouts = {n: tuple(v) for n, v in described["layouts"].items()}
    if args.layout not in layouts:
        sys.exit(f"sass_loop.py: no layout {args.layout} (there are {', '.join(layouts)})")
    tool = nvdisasm()
    folder = gemmlib.REPO / "build" / "sass-loop"
    source = gemmlib.tangle(folder / "gemm.cu", args.change)
    cubin = folder / f"{args.type}-{args.layout}.cubin"
    result = gemmlib.nvcc(source, cubin, gemmlib.defines(args.type, None, *layouts[args.layout]),
                          gpu="sm_90a", mode="cubin")
    if result.returncode != 0:
        sys.exit(f"sass_loop.py: {args.type} {args.layout} did not build:\n{result.stderr[-3000:]}")
    text = subprocess.run([tool, "-c", str(cubin)], capture_output=True, text=True, check=True).stdout
    prefix = f"_Z10gemm_tiledILi{args.tile}E{len(INSTRUCTIONS[args.kernel])}{INSTRUCTIONS[args.kernel]}"
    names = [n for n in functions(text) if n.startswith(prefix)]
    if len(names) != 1:
        sys.exit(f"sass_loop.py: {len(names)} kernels of the {args.kernel} kernel's tile {args.tile} "
                 f"for {args.type} (a tile it has not, or a kernel the pair has not)")
    loop = main_loop(functions(text)[names[0]])
    if not loop:
        sys.exit(f"sass_loop.py: no loop with multiplies in {names[0]}")
    print(f"{names[0]}, {args.type} {args.layout}" + "".join(f" with {c}" for c in args.change))
    print("\n".join(report(loop)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
