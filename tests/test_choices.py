"""scripts/choices_gpu.py without a GPU: a stand-in for ./gemm answers as the real one does
(a CSV line for the Hopper kernel and one for cuBLAS, one for the tiled kernel with
--kernel=all, exit status 2 for a width it refuses), so that what the script measures, leaves
out, checks, prints and writes can be checked."""

import csv
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import choices_gpu  # noqa: E402
import gemmlib  # noqa: E402

HEADER = "type,M,N,K,impl,etops,result,tile,slices"

# The stand-in: its speed is the width's (the kernel's own choice runs as width 64), halved when
# K is split; cuBLAS runs at 100; width 192 is refused, as ./gemm refuses a width that does not
# divide the padded N.
STAND_IN = f'''#!{sys.executable}
import sys
args = sys.argv[1:]
if args == ["--csv-header"]:
    print("{HEADER}")
    sys.exit(0)
if args == ["--describe"]:   # gemm.md's tiles, and for f16->f16 a taller one, as its build has
    print('{{"hopper_tiles": TILES' + (', [192, 256]' if "PAIR" == "F16_IN_OUT" else '') + ']}}')
    sys.exit(0)
width, split = 64, 1
for a in args:
    if a.startswith("--hopper-width="):
        width = int(a.split("=")[1])
    if a.startswith("--split-k="):
        split = int(a.split("=")[1])
if width == 192:
    print("gemm: --hopper-width=192: the padded N is not a multiple of it", file=sys.stderr)
    sys.exit(2)
speed = {{64: 80, 128: 70, 256: 50}}[width] / split
m, n, k = args[:3]
print(f"PAIR,{{m}},{{n}},{{k}},wgmma,{{speed}},PASS,128x{{width}}x64,{{split}}")
if "--kernel=all" in args:
    print(f"PAIR,{{m}},{{n}},{{k}},tiled,60,PASS,128x256x64,1")
print(f"PAIR,{{m}},{{n}},{{k}},cublas,100,PASS,,")
'''


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    nvcc = gemmlib.nvcc

    def build(source, exe, flags, gpu, **options):
        pairs = [f[2:] for f in flags if f.startswith("-D") and f[2:] in gemmlib.pairs()]
        if not pairs:      # the build behind --describe, which the stand-in does not replace
            return nvcc(source, exe, flags, gpu, **options)
        pair = pairs[0]
        tiles = str(gemmlib.registry()["hopper_tiles"])[:-1]   # the closing bracket comes with the pair's
        Path(exe).write_text(STAND_IN.replace("PAIR", pair).replace("TILES", tiles))
        Path(exe).chmod(0o755)
        return type("Built", (), {"returncode": 0, "stderr": ""})()
    monkeypatch.setattr(gemmlib, "find_gpu", lambda prog: ("Test GPU", "90", "1"))
    monkeypatch.setattr(gemmlib, "nvcc", build)
    # compute-sanitizer that runs the program it is given, and notes each run
    sanitizer = tmp_path / "bin" / "compute-sanitizer"
    sanitizer.parent.mkdir()
    sanitizer.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/sanitized\nshift 4\nexec "$@"\n')
    sanitizer.chmod(0o755)
    monkeypatch.setenv("PATH", f"{sanitizer.parent}:{os.environ['PATH']}")
    return tmp_path


def test_every_width_and_split_against_the_own_choice(stand_in, capsys):
    out = stand_in / "choices.csv"
    sys.argv = ["choices_gpu.py", "--sizes", "1024", "--only", "F16_IN_F32_OUT:NT", "--splits", "1,2",
                "--rounds", "2", "--out", str(out)]
    assert choices_gpu.main() == 0
    printed = capsys.readouterr().out
    assert "F16_IN_F32_OUT NT 1024 192/1: not possible" in printed
    assert "192/2: not possible" in printed and printed.count("not possible") == 2   # once each, not per round
    line = [l for l in printed.splitlines() if l.startswith("F16_IN_F32_OUT NT 1024:")][0]
    assert line.startswith("F16_IN_F32_OUT NT 1024: own 80% (80, 80), 256/1 50% (50, 50), 256/2 25% (25, 25)")
    assert "; best own (100.0% of own)" in line
    rows = list(csv.DictReader(out.open()))
    widths = sorted(w for w in gemmlib.registry()["hopper_widths"] if w != 192)
    assert len(rows) == 2 * 2 * (1 + 2 * len(widths))        # two rows a run, two rounds
    assert {r["choice"] for r in rows} == {"own"} | {f"{w}/{s}" for w in widths for s in (1, 2)}


def test_only_the_own_choice_measured_again(stand_in, capsys):
    out = stand_in / "again.csv"
    sys.argv = ["choices_gpu.py", "--widths", "none", "--sizes", "16384,8192x28672x8192",
                "--only", "BF16_IN_F32_OUT:NT", "--rounds", "3", "--out", str(out)]
    assert choices_gpu.main() == 0
    printed = capsys.readouterr().out
    assert "BF16_IN_F32_OUT NT 16384: own 80% (80, 80, 80); best own" in printed
    assert "BF16_IN_F32_OUT NT 8192x28672x8192: own 80%" in printed
    rows = list(csv.DictReader(out.open()))
    assert {r["choice"] for r in rows} == {"own"} and len(rows) == 2 * 2 * 3
    assert {(r["M"], r["N"], r["K"]) for r in rows} == {("16384",) * 3, ("8192", "28672", "8192")}


@pytest.mark.parametrize("only", ["F16_IN_F32_OUT:XY", "F64_IN_OUT:TN", "F16_IN_F32_OUT"])
def test_a_wrong_pair_or_layout_is_refused(stand_in, capsys, only):
    sys.argv = ["choices_gpu.py", "--only", only]
    with pytest.raises(SystemExit) as stop:
        choices_gpu.main()
    assert stop.value.code == 2 and "--only takes PAIR:LAYOUT" in capsys.readouterr().err


def test_a_pair_whose_operands_are_turned(stand_in, capsys):
    """The pairs --only may name are those the kernel takes: int8 in TN, and in NN, where its B
    is turned on the way in."""
    for layout in ("TN", "NN"):
        sys.argv = ["choices_gpu.py", "--widths", "none", "--sizes", "512", "--only", f"I8_IN_I32_OUT:{layout}",
                    "--rounds", "1", "--out", str(stand_in / f"{layout}.csv")]
        assert choices_gpu.main() == 0
        assert f"I8_IN_I32_OUT {layout} 512: own 80% (80)" in capsys.readouterr().out


def test_the_widths_against_each_other_with_every_kernel(stand_in, capsys):
    """--splits own forces the width alone; --all-kernels runs the own choice with every kernel,
    the tiled kernel's share printed beside it."""
    out = stand_in / "widths.csv"
    sys.argv = ["choices_gpu.py", "--splits", "own", "--widths", "128,256", "--all-kernels", "--sizes",
                "4096x11008x4096", "--only", "F16_IN_OUT:TN", "--rounds", "1", "--out", str(out)]
    assert choices_gpu.main() == 0
    line = [l for l in capsys.readouterr().out.splitlines() if l.startswith("F16_IN_OUT TN 4096x11008x4096:")][0]
    assert line.startswith("F16_IN_OUT TN 4096x11008x4096: own 80% (80), 128/own 70% (70), 256/own 50% (50)")
    assert line.endswith("; tiled kernel 60%")
    rows = list(csv.DictReader(out.open()))
    assert [(r["choice"], r["impl"]) for r in rows] == [
        ("own", "wgmma"), ("own", "tiled"), ("own", "cublas"),
        ("128/own", "wgmma"), ("128/own", "cublas"), ("256/own", "wgmma"), ("256/own", "cublas")]
    assert {r["slices"] for r in rows if r["impl"] == "wgmma"} == {"1"}    # no --split-k forced


def test_the_check_of_every_width(stand_in, capsys):
    """--check times nothing: each tile its build describes at the awkward sizes, K whole and
    split, fully verified, and memcheck at the last size the tile takes; a width ./gemm refuses
    is left out. f16->f16's build has a 192-row tile too."""
    sys.argv = ["choices_gpu.py", "--check", "--only", "BF16_IN_F32_OUT:NN,F16_IN_OUT:TN"]
    assert choices_gpu.main() == 0
    printed = capsys.readouterr().out.splitlines()
    widths = [w for w in gemmlib.registry()["hopper_widths"] if w != 192]
    runs = len(choices_gpu.CHECK_SIZES) * 2 + 1   # K whole, K split, and memcheck
    passed = [l for l in printed if l.startswith("PASS BF16_IN_F32_OUT NN tile 128x")]
    assert len(passed) == len(widths) * runs and printed[-1] == "0 failed"
    assert not any(" tile 128x192 " in l for l in printed)
    assert sum(" --split-k=3" in l for l in passed) == len(widths) * len(choices_gpu.CHECK_SIZES)
    taller = [l for l in printed if l.startswith("PASS F16_IN_OUT TN tile 192x256")]
    assert len(taller) == runs and not any(l.startswith("PASS BF16_IN_F32_OUT NN tile 192x") for l in printed)
    sanitized = (stand_in / "sanitized").read_text().splitlines()
    assert len(sanitized) == 2 * len(widths) + 1
    assert all(l.startswith("--tool memcheck") and "300 3000 200" in l and "--verify=full" in l and
               "--split-k" not in l for l in sanitized)


def test_the_check_by_default_takes_the_16_bit_pairs_in_every_layout(stand_in, monkeypatch, capsys):
    built, nvcc = [], gemmlib.nvcc
    monkeypatch.setattr(gemmlib, "nvcc", lambda source, exe, flags, gpu, **options:
                        built.append(Path(exe).name) or nvcc(source, exe, flags, gpu, **options))
    sys.argv = ["choices_gpu.py", "--check"]
    assert choices_gpu.main() == 0
    assert capsys.readouterr().out.endswith("0 failed\n")
    layouts = gemmlib.registry()["layouts"]
    assert built == [f"check-{p}-{l}" for p in gemmlib.hopper_pairs(native=True) for l in layouts]


def test_a_gpu_without_the_hopper_kernel_is_refused(stand_in, monkeypatch):
    """Which GPU runs the Hopper kernel is --describe's word (its cc), not the script's."""
    monkeypatch.setattr(gemmlib, "find_gpu", lambda prog: ("Older GPU", "80", "1"))
    sys.argv = ["choices_gpu.py", "--only", "F16_IN_F32_OUT:TN"]
    with pytest.raises(SystemExit) as stop:
        choices_gpu.main()
    assert "the Hopper kernel does not run on Older GPU" in str(stop.value.code)
