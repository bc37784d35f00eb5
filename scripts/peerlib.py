#!/usr/bin/env python3
"""CUTLASS beside the kernels: build gemm-cutlass, and tabulate what it measured.

    python3 scripts/peerlib.py build [--type T] [--transpose-a 0|1] [--transpose-b 0|1] [--arch sm_90a]

gemm-cutlass is ./gemm with CUTLASS's GEMMs as more rows of its kernel table (the
configurations of peers/cutlass.h): every one is timed, verified against the CPU reference
and cuBLAS, and reported exactly as the kernels are, on the same input values, in the same
process. `make peers` runs `build` for make's configuration; `floors.py run --peers` builds
it for each pair and layout and times it, and `floors.py report --table peers` makes the
table of `make_table` from such a run.

CUTLASS's headers come from the pinned wheel of peers/requirements.txt, installed (without
its Python dependencies, which only its Python generator needs) into build/cutlass/ the first
time; where the package index cannot be reached, PIP_FIND_LINKS=DIR PIP_NO_INDEX=1 installs it
from the wheel in DIR. Each configuration is one object, compiled in parallel and kept in
build/peers/ under a hash of everything it is built from, so a second build links only.
"""

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gemmlib  # noqa: E402
import sweep  # noqa: E402

REPO = gemmlib.REPO
PEERS = REPO / "peers"
REQUIREMENTS = PEERS / "requirements.txt"
INSTALLED = REPO / "build" / "cutlass"          # pip install --target
INCLUDE = INSTALLED / "cutlass_library" / "source" / "include"
UTIL_INCLUDE = INSTALLED / "cutlass_library" / "source" / "tools" / "util" / "include"
BUILD = REPO / "build" / "peers"
# CUTLASS's own build settings; 2908 is a warning in its Blackwell headers about C++20.
CUTLASS_FLAGS = ["--expt-relaxed-constexpr", "-DNDEBUG", "-diag-suppress=2908"]
# The two fragments of the document that a configuration needs: the settings and the pairs.
PAIR_FRAGMENTS = ("Configuration", "Types and compile-time checks")


def pinned():
    """The requirement line of the wheel, from peers/requirements.txt."""
    lines = [l.split("#")[0].strip() for l in REQUIREMENTS.read_text(encoding="utf-8").splitlines()]
    return next(l for l in lines if l)


def headers(install=True):
    """The folders of CUTLASS's headers, installing the pinned wheel into build/cutlass/ first
    where they are missing. SystemExit that says what is missing where it cannot."""
    if (INCLUDE / "cutlass" / "cutlass.h").exists():
        return INCLUDE, UTIL_INCLUDE
    wanted = pinned()
    if not install:
        raise SystemExit(f"peerlib.py: CUTLASS's headers are not in {INSTALLED}: run `make peers`")
    print(f"peerlib.py: installing CUTLASS's headers ({wanted}, 6.4 MB) into {INSTALLED.relative_to(REPO)}/",
          flush=True)
    result = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                             "--target", str(INSTALLED), "-r", str(REQUIREMENTS)],
                            capture_output=True, text=True)
    if result.returncode != 0 or not (INCLUDE / "cutlass" / "cutlass.h").exists():
        shutil.rmtree(INSTALLED, ignore_errors=True)
        raise SystemExit(
            f"peerlib.py: CUTLASS's headers are missing, and pip could not install {wanted}:\n"
            f"{(result.stderr or result.stdout).strip()[-1500:]}\n"
            f"Without the package index, download the wheel elsewhere (python3 -m pip download "
            f"--no-deps {wanted}) and run again with PIP_FIND_LINKS=<its folder> PIP_NO_INDEX=1.")
    return INCLUDE, UTIL_INCLUDE


def configurations():
    """{"sm80": [names], "sm90": [names]}: the lists of peers/cutlass.h, read by the preprocessor."""
    text = ('#include "cutlass.h"\n#define NAME(name, ...) name\n'
            'sm80: CUTLASS_SM80(NAME)\nsm90: CUTLASS_SM90(NAME)\n')
    result = subprocess.run(["cpp", "-P", "-I", str(PEERS), "-"], input=text,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"peerlib.py: the preprocessor could not read peers/cutlass.h:\n{result.stderr}")
    found = {}
    for line in result.stdout.splitlines():
        kind, sep, names = line.partition(":")
        if sep and kind in ("sm80", "sm90"):
            found[kind] = names.split()
    return found


def hopper(gpu):
    return "".join(gemmlib.target(gpu)).endswith("sm_90a")


def build(pair=None, ta=None, tb=None, gpu="90", out=None, shape=None, changes=()):
    """gemm-cutlass for one pair and layout (None: gemm.md's own), for `gpu` (a compute
    capability or a target, as gemmlib.target takes it), gemm.md with the change files `changes`
    of worklog/ where given. Returns its path."""
    include, util = headers()
    flags = gemmlib.defines(pair, shape, ta, tb, cublas=True)
    sm90 = hopper(gpu)
    names = configurations()
    wanted = names["sm80"] + (names["sm90"] if sm90 else [])
    BUILD.mkdir(parents=True, exist_ok=True)
    source = gemmlib.tangle(BUILD / "gemm.cu", changes)
    # without #line directives, so that an edit elsewhere in gemm.md keeps the objects
    pair_h = gemmlib.tangle(BUILD / "pair.h.new", only=PAIR_FRAGMENTS, lines=False)
    # Everything an object is built from, so that a change to any of it rebuilds it.
    stamp = hashlib.sha256()
    for part in (pair_h.read_bytes(), (PEERS / "cutlass.h").read_bytes(),
                 (PEERS / "cutlass_config.cu").read_bytes(), REQUIREMENTS.read_bytes(),
                 " ".join(flags + gemmlib.target(gpu) + CUTLASS_FLAGS).encode()):
        stamp.update(part)
    folder = BUILD / stamp.hexdigest()[:16]
    folder.mkdir(exist_ok=True)
    pair_h.replace(folder / "pair.h")
    common = [*flags, *CUTLASS_FLAGS, "-I", str(include), "-I", str(util), "-I", str(folder), "-I", str(PEERS)]

    objects = {name: folder / f"{name}.o" for name in wanted}

    def compile_one(name):   # None, or why not
        t0 = time.monotonic()
        result = gemmlib.nvcc(PEERS / "cutlass_config.cu", folder / f"{name}.tmp.o",
                              [*common, f"-DPEER_CONFIG={name}"], gpu=gpu, mode="obj")
        if result.returncode != 0:
            return f"{name} did not compile:\n{result.stderr[-3000:]}"
        (folder / f"{name}.tmp.o").replace(objects[name])
        print(f"peerlib.py: {name} compiled in {time.monotonic() - t0:.0f} s", flush=True)
        return None

    todo = [name for name, obj in objects.items() if not obj.exists()]
    if todo:
        print(f"peerlib.py: compiling {len(todo)} CUTLASS configuration{'s' if len(todo) != 1 else ''} "
              f"on {os.cpu_count()} cores (tens of seconds each)", flush=True)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        problems = [why for why in pool.map(compile_one, todo) if why]
    if problems:
        raise SystemExit("peerlib.py: " + "\n".join(problems))
    out = Path(out or REPO / "gemm-cutlass")
    out.parent.mkdir(parents=True, exist_ok=True)
    main_flags = [*flags, "-I", str(PEERS), '-DPEER_KERNELS="cutlass_rows.h"', f"-DPEER_SM90={int(sm90)}",
                  *map(str, objects.values())]
    stamp.update(source.read_bytes() + (PEERS / "cutlass_rows.h").read_bytes() + " ".join(main_flags).encode())
    linked = folder / f"gemm-cutlass-{stamp.hexdigest()[:16]}"
    if not linked.exists():
        result = gemmlib.nvcc(source, f"{linked}.tmp", main_flags, gpu=gpu)
        if result.returncode != 0:
            raise SystemExit(f"peerlib.py: gemm-cutlass did not build:\n{result.stderr[-3000:]}")
        Path(f"{linked}.tmp").replace(linked)
    shutil.copy2(linked, out)
    return out


def kind_of(impl):
    """"sm80" or "sm90" for a CUTLASS row's impl, else None."""
    match = re.fullmatch(r"cutlass(80|90)_.*", impl)
    return f"sm{match[1]}" if match else None


def best(rows):
    """Per (pair, layout, problem, impl): the median of its rounds' speeds (eTOPS)."""
    speeds = {}
    for row in rows:
        if row.get("mode", "burst") != "burst" or row["result"] != "PASS":
            continue
        key = (row["type"], row["layout"], (row["M"], row["N"], row["K"]), row["impl"])
        speeds.setdefault(key, []).append(row["etops"])
    return {key: sorted(v)[len(v) // 2] for key, v in speeds.items()}


def short_name(impl):
    """A configuration as the table names it: cutlass90_cooperative_128x256_c2 -> coop 128x256 c2."""
    words = impl.split("_")[1:]
    return " ".join({"cooperative": "coop", "pingpong": "ping"}.get(w, w) for w in words)


def shown_share(a, b):
    """a's per cent of b as a table shows them (each to three figures), so that the per cent
    follows from the table; None where either is missing."""
    return round(100 * float(sweep.fmt3(a)) / float(sweep.fmt3(b))) if a and b else None


def make_table(meta, rows, paths=()):
    """Markdown: two tables, for each pair, layout and problem, the tiled kernel (and the mma.sync
    kernel, where the session measured it) against the best CUTLASS sm80 configuration, and the
    Hopper kernel against the best sm90 one beside cuBLAS; then what they were measured on, how,
    and from which CSV."""
    import floors
    speeds = best(rows)
    short = {name: entry["short"] for name, entry in gemmlib.pairs().items()}
    groups = sorted({k[:3] for k in speeds},
                    key=lambda g: (sweep.type_order(g[0]), g[1], -g[2][0] * g[2][1] * g[2][2]))
    layouts = sorted({g[1] for g in groups})

    def cell(value):
        return sweep.fmt3(value) if value else "—"

    def share(a, b):
        percent = shown_share(a, b)
        return "—" if percent is None else f"{percent} %"

    def row(cells):
        return "| " + " | ".join(cells) + " |"

    # The kernels of each table, beside CUTLASS's best of its kind: the mma.sync kernel where it ran.
    kernels = {"sm80": [("tiled", "tiled")] + ([("mma", "mma.sync")] if any(k[3] == "mma" for k in speeds)
                                               else []),
               "sm90": [("wgmma", "Hopper")]}
    tables = {kind: [row(["pair", "problem", *(t for _, t in ks), f"best CUTLASS {kind}", "configuration",
                          *(f"{t} / CUTLASS" for _, t in ks)] + (["cuBLAS"] if kind == "sm90" else [])),
                     "|" + "|".join(["---", "---", *("---:" for _ in ks), "---:", "---", *("---:" for _ in ks)]
                                    + (["---:"] if kind == "sm90" else [])) + "|"]
              for kind, ks in kernels.items()}
    for pair, layout, problem in groups:
        here = {k[3]: v for k, v in speeds.items() if k[:3] == (pair, layout, problem)}
        name = short.get(pair, pair) + (f" {layout}" if len(layouts) > 1 else "")
        label = "x".join(map(str, problem)) if len(set(problem)) > 1 else f"{problem[0]}³"
        for kind, ks in kernels.items():
            found = [(v, impl) for impl, v in here.items() if kind_of(impl) == kind]
            top, impl = max(found) if found else (None, None)
            tables[kind].append(row([name, label, *(cell(here.get(k)) for k, _ in ks), cell(top),
                                     short_name(impl) if impl else "—", *(share(here.get(k), top) for k, _ in ks)]
                                    + ([cell(here.get("cublas"))] if kind == "sm90" else [])))
    made = "".join(f"`{Path(p).name}`" for p in paths[:1])
    layout_words = {"TN": "B transposed", "NN": "A and B as they are", "NT": "A transposed",
                    "TT": "A and B transposed"}
    only = (f"layout {layouts[0]} ({layout_words.get(layouts[0], layouts[0])}), "
            if len(layouts) == 1 else "")
    caption = (f"eTOPS on {meta.get('gpu', 'the GPU')}, {meta.get('date', '')}, {only}by "
               f"`{floors.sweep_command(meta)}` ({meta.get('cutlass', 'CUTLASS')}): a session of its own, "
               f"so compare within a row; each pair in one process, every kernel, every CUTLASS "
               f"configuration and cuBLAS on the same inputs, in rounds taking turns; the median of the "
               f"rounds, every result verified. The best of each kind is the fastest of CUTLASS's "
               f"configurations of that kind at that size, named by its block tile (rows × columns of C) "
               f"and its stages (s), or for Hopper by its schedule (coop: cooperative, ping: ping-pong), "
               f"its block tile and its blocks per cluster (c).^[Made by `python3 scripts/floors.py report "
               f"--table peers --into gemm.md`{f' from {made} in `results/`' if made else ''}.]")
    return "\n".join(tables["sm80"] + [""] + tables["sm90"] + ["", caption]) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p_build = commands.add_parser("build", help="build gemm-cutlass for one configuration")
    p_build.add_argument("--type", default=None, help="a type pair (default: gemm.md's)")
    p_build.add_argument("--shape", default=None, help="a WMMA shape, such as 16x16x16 (default: gemm.md's)")
    p_build.add_argument("--transpose-a", type=int, choices=(0, 1), default=None)
    p_build.add_argument("--transpose-b", type=int, choices=(0, 1), default=None)
    p_build.add_argument("--arch", default=None, help="a target such as sm_80 or sm_90a "
                         "(default: the GPU in this machine, else sm_90a)")
    p_build.add_argument("-o", "--output", type=Path, default=REPO / "gemm-cutlass")
    args = parser.parse_args(argv)
    if args.command == "build":
        gpu = args.arch
        if gpu is None:   # the GPU in this machine, else Hopper
            try:
                gpu = gemmlib.find_gpu("peerlib.py")[1]
            except SystemExit:
                gpu = "sm_90a"
        print(build(args.type, args.transpose_a, args.transpose_b, gpu, args.output, shape=args.shape))
    return 0


if __name__ == "__main__":
    sys.exit(main())
