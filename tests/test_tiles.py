"""The tiles of the tiled kernel and the choice among them (gemm.md, "A tile for every GPU
and every size"): what --plan chooses for a described GPU and problem, that the choice
agrees with the measurements in results/, that the padding follows the chosen tile, the
options' errors, and that every architecture compiles with the tiles that fit it.

No GPU is needed: --plan=NAME describes a GPU by its published figures.
"""

import csv
import re
import statistics
import subprocess
from pathlib import Path

import pytest

import conftest
from conftest import GPUS, PAIRS as REGISTRY_PAIRS, TYPES
import gemmlib
import post_tables

HOPPER_WIDTHS = gemmlib.registry()["hopper_widths"]   # the Hopper kernel's widths, as --describe lists them

REPO = Path(__file__).resolve().parent.parent
TILES_CSV = REPO / "results/nvidia-h100-80gb-hbm3-2026-11-23-tiles.csv"
# The 16-bit pairs' tiles, measured again once their 64 x 128 tile had four stages (a probe's
# runs: those with --tile=all count).
TILES_16BIT_CSV = REPO / post_tables.TILES
F64_TILES_CSV = REPO / "results/nvidia-h100-80gb-hbm3-2026-11-26-f64-tiles.csv"   # double's, later
LONG_K_CSV = REPO / post_tables.LONG_K
# The pairs that have tiles: those a tiled kernel takes (all but FP8).
PAIRS = [t for t in TYPES if REGISTRY_PAIRS[t]["tiles"]]
# The pairs that share one list of tiles and its speeds (./gemm --describe), in gemm.md's order.
FAMILIES = [[p for p in PAIRS if tuple(REGISTRY_PAIRS[p]["tiles"]) == tiles]
            for tiles in dict.fromkeys(tuple(REGISTRY_PAIRS[p]["tiles"]) for p in PAIRS)]
# The GPUs --plan knows, and the architecture of each.
ARCH_OF = {name: f"sm_{g['cc']}" for name, g in GPUS.items()}


@pytest.fixture(scope="module")
def tn(executable, parallel):
    """Every pair built in the layout TN (as the measurements were), without cuBLAS: the
    session's compiles of those configurations, which other tests share."""
    return parallel(lambda pair: executable(pair, 0, 1), PAIRS)


def run(binary, *args):
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=60)


def plan(binary, m, n, k, gpu="h100", *extra):
    """(chosen tile, padded sizes, {tile: (fits, speed, slices)}) from --plan=gpu."""
    result = run(binary, m, n, k, f"--plan={gpu}", *extra)
    assert result.returncode == 0, result.stderr
    rows = {}
    for line in result.stdout.splitlines():
        fields = line.split()
        if fields and re.fullmatch(r"\d+x\d+x\d+", fields[0]):
            fits = "does not fit" not in line
            rows[fields[0]] = (fits, float(fields[7]) if fits else None, int(fields[5]) if fits else None)
    chosen = re.search(r"Chosen: (\S+); the problem is padded to (\d+) x (\d+) x (\d+)\.", result.stdout)
    assert chosen, result.stdout
    return chosen[1], tuple(int(x) for x in chosen.group(2, 3, 4)), rows


def measured():
    """{(pair, size): {tile: eTOPS}} of every tile, each forced, on the H100: the tiled kernel's,
    and for double, whose tiles are chosen for the double kernel, that kernel's (its file also
    has a tile measured and left out of double's list, which is not counted); the 16-bit pairs'
    from their later run, once their 64 x 128 tile had four stages."""
    table = {}
    for path, impl in ((TILES_CSV, "tiled"), (F64_TILES_CSV, "dmma"), (TILES_16BIT_CSV, "tiled")):
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
        again = {r["type"] for r in rows} if path == TILES_16BIT_CSV else set()
        for key in [k for k in table if k[0] in again]:   # measured again: the later run replaces
            del table[key]
        for r in rows:
            if (r["impl"] == impl and (r["type"] == "F64_IN_OUT") == (impl == "dmma")
                    and (impl == "tiled" or r["tile"] in REGISTRY_PAIRS["F64_IN_OUT"]["tiles"])
                    and r.get("forced_tile", "all") == "all"):
                assert r["result"] == "PASS", r
                table.setdefault((r["type"], int(r["M"])), {})[r["tile"]] = float(r["etops"])
    return table


def tile_dims(name):
    return tuple(int(x) for x in name.split("x"))


def test_the_choice_is_within_5_percent_of_the_fastest_tile_measured(tn):
    """Every pair's tiles were measured at 8 sizes, or the pair takes the tiles of pairs that
    were (the 16-bit pairs with a 16-bit C from float sums take those of the 16-bit pairs)."""
    table = measured()
    done = {pair for pair, _ in table}
    assert all(len([k for k in table if k[0] == pair]) == 8 for pair in done)
    assert all(set(family) & done for family in FAMILIES), "a family of tiles with no pair measured"
    for (pair, size), speeds in sorted(table.items()):
        chosen, _, rows = plan(tn[pair], size, size, size)
        assert set(rows) == set(speeds), (pair, "the measured tiles are the program's tiles")
        assert speeds[chosen] >= 0.95 * max(speeds.values()), (pair, size, chosen, speeds)


def test_tile_speed_is_the_measured_ratio_at_8192(tn):
    table = measured()
    for family in FAMILIES:
        _, _, rows = plan(tn[family[0]], 8192, 8192, 8192)
        first = next(iter(rows))
        for tile, (_, speed, _) in rows.items():
            ratio = statistics.median(table[(p, 8192)][tile] / table[(p, 8192)][first]
                                      for p in family if (p, 8192) in table)
            assert speed == pytest.approx(round(ratio, 2), abs=0.005), (family, tile)


@pytest.mark.parametrize("sizes", [(1, 1, 1), (37, 41, 29), (3000, 3000, 3000), (8192, 8192, 8192),
                                   (129, 4000, 65)])
def test_the_padding_follows_the_chosen_tile(tn, sizes):
    for pair in PAIRS:
        chosen, padded, _ = plan(tn[pair], *sizes)
        for size, side, got in zip(sizes, tile_dims(chosen), padded):
            step = max(side, 16)
            assert got == (size + step - 1) // step * step, (pair, sizes, chosen, padded)
    chosen, padded, _ = plan(tn["F16_IN_F32_OUT"], 1, 1, 1)
    assert (chosen, padded) == ("64x64x64", (64, 64, 64)), "1 x 1 x 1 is not padded to a large tile"


@pytest.mark.parametrize("gpu, cap, size, expected", [
    ("h100", None, 512, "64x64x64"),         # small problems: the most blocks
    ("h100", None, 1024, "64x128x64"),       # one block to a multiprocessor, four stages
    ("h100", None, 2048, "128x256x64"),      # large ones: the worklog's tile
    ("h100", None, 8192, "128x256x64"),
    ("h100", 99, 8192, "128x256x32"),        # capped like a GeForce card
    ("rtx4090", None, 8192, "128x256x32"),   # 99 KiB per block
    ("rtx5090", None, 8192, "128x256x32"),
    ("a100", None, 8192, "128x256x64"),      # 163 KiB per block
    ("orin", None, 8192, "128x256x64"),
    ("t4", None, 8192, "64x64x64"),          # 64 KiB: only the smallest fits
])
def test_which_tile_wins(tn, gpu, cap, size, expected):
    extra = [f"--smem-cap={cap}"] if cap else []
    chosen, _, rows = plan(tn["F16_IN_F32_OUT"], size, size, size, gpu, *extra)
    assert chosen == expected
    assert rows[chosen][0]


def test_int8_at_3000_takes_the_tile_with_the_fuller_last_wave(tn):
    chosen, _, _ = plan(tn["I8_IN_I32_OUT"], 3000, 3000, 3000)
    assert chosen == "64x128x128"


def slicing(binary, m, n, k, gpu="h100", *extra):
    """(slices, slice length, blocks) that --plan reports, or None where K is not split."""
    result = run(binary, m, n, k, f"--plan={gpu}", *extra)
    assert result.returncode == 0, result.stderr
    found = re.search(r"K is split into (\d+) slices of (\d+)(?: \(--split-k\))?: (\d+) blocks in all\.",
                      result.stdout)
    return tuple(int(x) for x in found.groups()) if found else None


def test_a_narrow_long_problem_splits_k_to_fill_the_gpu(tn):
    # 8 blocks of 128 x 256 for 132 multiprocessors: 132 // 8 = 16 slices (the most) of 16
    # steps of 64, 128 blocks; the smaller tiles' slices are no shorter and run slower.
    assert slicing(tn["F16_IN_F32_OUT"], 512, 512, 16384) == (16, 16 * 64, 128)
    # 32 blocks: 4 slices of 64 steps, where 64 x 64 tiles would fill the GPU unsplit.
    assert slicing(tn["F16_IN_F32_OUT"], 1024, 1024, 16384) == (4, 64 * 64, 128)
    # The slices are whole steps and cover K without an empty one.
    slices, length, _ = slicing(tn["F64_IN_OUT"], 300, 200, 50000)
    assert length % 16 == 0 and (slices - 1) * length < 50000 <= slices * length


def long_k():
    """{(pair, M, N, K): {tile: (slices, eTOPS)}} of every tile forced, each split as the
    rule splits it, on the H100."""
    with open(LONG_K_CSV, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    table = {}
    for r in rows:
        if r["impl"] == "tiled" and r["tile_choice"] == "forced":
            assert r["result"] == "PASS", r
            key = (r["type"], int(r["M"]), int(r["N"]), int(r["K"]))
            table.setdefault(key, {})[r["tile"]] = (int(r["slices"]), float(r["etops"]))
    return table


def test_the_choice_with_split_k_agrees_with_the_measured_long_problems(tn):
    table = long_k()
    assert len(table) == 4 * 4
    for (pair, m, n, k), measured in sorted(table.items()):
        chosen, _, rows = plan(tn[pair], m, n, k)
        assert set(rows) == set(measured), (pair, "the measured tiles are the program's tiles")
        for tile, (slices, _) in measured.items():
            assert rows[tile][2] == slices, (pair, m, n, k, tile, "the estimate splits as the run did")
        best = max(v for _, v in measured.values())
        # Within 6 %: at 256 x 256 x 65536 F16_IN_OUT's choice is 5.0 % off the best.
        assert measured[chosen][1] >= 0.94 * best, (pair, m, n, k, chosen, measured)


def test_k_is_not_split_where_the_gpu_is_full_or_k_is_short(tn):
    for pair in PAIRS:
        for size in (256, 512, 1000, 1024, 2048, 3000, 8192, 16384):   # the sweep's sizes
            assert slicing(tn[pair], size, size, size) is None, (pair, size)
    assert slicing(tn["F16_IN_F32_OUT"], 512, 512, 1024) is None        # K 1024: one slice
    assert slicing(tn["F16_IN_F32_OUT"], 4096, 4096, 65536) is None     # a full GPU


def test_split_k_can_be_forced(tn):
    assert slicing(tn["F16_IN_F32_OUT"], 4096, 4096, 4096, "h100", "--split-k=4") == (4, 1024, 2048)
    # More slices than steps: as many as there are steps (the 32-deep tile, whose 4 steps
    # then make the shortest slices, is chosen).
    assert slicing(tn["F16_IN_F32_OUT"], 1, 1, 100, "h100", "--split-k=16") == (4, 32, 4)
    # K = 1: the Hopper kernel, which runs too, pads K to 64, two steps of the 32-deep tile.
    assert slicing(tn["F16_IN_F32_OUT"], 1, 1, 1, "h100", "--split-k=16") == (2, 32, 2)
    assert slicing(tn["F16_IN_F32_OUT"], 1, 1, 1, "h100", "--split-k=16", "--kernel=tiled") is None


def test_tiles_that_do_not_fit_are_never_chosen(tn):
    for gpu in ARCH_OF:
        for pair in PAIRS:
            chosen, _, rows = plan(tn[pair], 5000, 300, 700, gpu)
            assert rows[chosen][0], (gpu, pair)
    _, _, rows = plan(tn["F16_IN_F32_OUT"], 64, 64, 64, "h100", "--smem-cap=60")
    assert [t for t, (fits, _, _) in rows.items() if fits] == ["64x64x64"]


@pytest.mark.parametrize("args, words", [
    (["--tile=9x9x9"], ["no such tile", "128x256x64", "64x64x64"]),
    (["--tile=64x64x64", "--kernel=simple"], ["--kernel=simple"]),
    (["--plan=gtx480"], ["no such GPU", "rtx4090"]),
    (["--smem-cap=0"], ["--smem-cap"]),
    (["--smem-cap=abc"], ["--smem-cap"]),
    (["--split-k=0"], ["--split-k", "1", "16"]),
    (["--split-k=17"], ["--split-k", "1", "16"]),
    (["--split-k=2", "--kernel=simple"], ["--split-k", "--kernel=simple"]),
    (["--hopper-width=100"], ["--hopper-width=100"] + [str(w) for w in HOPPER_WIDTHS]),
    (["--hopper-width=abc"], ["--hopper-width"]),
    (["--hopper-width=192", "--kernel=tiled"], ["--hopper-width", "--kernel"]),
    (["--hopper-width=128", "--cpu-only"], ["--hopper-width", "--cpu-only"]),
])
def test_bad_tile_options_get_one_clear_message(tn, args, words):
    result = run(tn["F16_IN_F32_OUT"], *args)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and all(w in lines[0] for w in words), result.stderr


def test_help_lists_the_tiles_and_the_gpus(tn):
    text = run(tn["I8_IN_I32_OUT"], "--help").stdout
    for name in ["128x128x128", "64x128x128", "64x64x128", "--tile=NAME", "--smem-cap", "--plan",
                 "--split-k=N"]:
        assert name in text
    for gpu in ARCH_OF:
        assert gpu in text


def arch_pairs(arch):
    return ["F16_IN_F32_OUT", "I8_IN_I32_OUT"] if arch == "sm_75" else ["F16_IN_F32_OUT"]


@pytest.fixture(scope="module")
def arch_builds(gemm_cu, nvcc, defines, parallel, compiles, tmp_path_factory):
    """(pair, arch) -> (CompletedProcess, cubin) of the pairs each architecture's test checks,
    compiled two at a time; sm_90's is the session's compile of that configuration."""
    folder = tmp_path_factory.mktemp("archs")

    def build(key):
        pair, arch = key
        if arch == "sm_90":
            result, _, cubin = compiles((pair, conftest.default_shape(pair), 0, 1))
            return result, cubin
        cubin = folder / f"{pair}-{arch}.cubin"   # the test reads its PTX alone: no ptxas
        return nvcc(gemm_cu, cubin.with_suffix(".ptx"), defines(pair, None, 0, 1), mode="ptx", arch=arch), cubin

    return parallel(build, [(pair, arch) for arch in sorted(set(ARCH_OF.values())) for pair in arch_pairs(arch)])


@pytest.mark.parametrize("gpu", sorted(ARCH_OF, key=ARCH_OF.get))
def test_each_architecture_compiles_the_tiles_that_fit_it(arch_builds, tn, gpu):
    """The kernel of a tile that fits the architecture's shared memory has its WMMA code;
    one that does not is compiled as an empty kernel that traps, and the choice for that GPU
    never takes it. (The smallest tile fitting every GPU is a static_assert in gemm.md.)"""
    arch = ARCH_OF[gpu]
    for pair in arch_pairs(arch):
        result, cubin = arch_builds[(pair, arch)]
        assert result.returncode == 0, result.stderr
        parts = re.split(r"(?m)^(?:\.visible\s+)?\.entry\s+", cubin.with_suffix(".ptx").read_text())
        entries = {re.match(r"[\w$]+", part)[0]: part for part in parts[1:]}
        _, _, rows = plan(tn[pair], 4096, 4096, 4096, gpu)
        for t, (tile, (fits, _, _)) in enumerate(rows.items()):
            [body] = [text for name, text in entries.items()
                      if f"gemm_tiledILi{t}E" in name and "Mma16" not in name]
            assert ("wmma.mma.sync" in body) == fits, (gpu, pair, tile)
            assert ("trap" in body) == (not fits), (gpu, pair, tile)


@pytest.mark.parametrize("pair", ["I8_IN_I32_OUT", "U8_IN_I32_OUT"])
def test_the_mma_sync_kernels_8bit_tiles_spill_nothing(compiles, pair):
    """The mma.sync kernel runs an 8-bit row of TILES in k-tiles of 64 bytes (Mma16::tile),
    since the row's 128 bytes in two stages spilled: ptxas's report of the session's TN build
    (sm_90), one kernel for each of the pair's tiles, none of them spilling."""
    result, _, _ = compiles((pair, conftest.default_shape(pair), 0, 1))
    assert result.returncode == 0, result.stderr
    spills = re.findall(r"Compiling entry function '(_Z10gemm_tiled\w*Mma16\w*)' for 'sm_90'.*?"
                        r"(\d+) bytes spill stores, (\d+) bytes spill loads", result.stderr, re.S)
    assert len(spills) == len(REGISTRY_PAIRS[pair]["tiles"]), result.stderr[-3000:]
    assert all(stores == loads == "0" for _, stores, loads in spills), spills
