"""scripts/floors.py without a GPU: the floors each problem is held to, the shares of the runs,
the table and plot of a CSV, and `run` refusing where there is no GPU."""

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import floors  # noqa: E402

HEADER = "type,layout,impl,etops,result,M,N,K"


def csv_text(lines):
    return "# gpu: Test GPU\n# date: 2026-11-25\n" + HEADER + "\n" + "\n".join(lines) + "\n"


def runs(pair, layout, m, n, k, **speeds):
    return [f"{pair},{layout},{impl},{etops},{'FAIL' if impl == 'bad' else 'PASS'},{m},{n},{k}"
            for impl, etops in speeds.items()]


def test_the_floors_follow_the_problems_sides():
    assert floors.floor_of((2048, 2048, 2048)) == ("cublas", 1.0)
    assert floors.floor_of((4096, 11008, 4096)) == ("cublas", 1.0)
    assert floors.floor_of((256, 256, 8192)) == ("tiled", None)      # narrow: a side below 2048
    assert floors.floor_of((1024, 1024, 1024)) == ("tiled", 0.8)
    assert floors.floor_of((512, 512, 512)) == ("tiled", None)


def test_judging_a_problem():
    assert floors.judge({"wgmma": 99, "cublas": 100, "tiled": 50}, (4096, 4096, 4096)) == (0.99, False)
    assert floors.judge({"wgmma": 100, "cublas": 100}, (4096, 4096, 4096)) == (1.0, True)
    assert floors.judge({"wgmma": 50, "cublas": 100, "tiled": 60}, (512, 512, 512)) == (0.5, False)
    assert floors.judge({"wgmma": 70, "cublas": 100, "tiled": 60}, (512, 512, 512)) == (0.7, True)
    assert floors.judge({"wgmma": 70, "cublas": 100, "tiled": 60}, (1024, 1024, 1024)) == (0.7, False)
    assert floors.judge({"tiled": 60, "cublas": 100}, (512, 512, 512)) is None   # no Hopper kernel


def test_the_parts_share_out_every_run_once():
    every = list(range(29))
    shares = [floors.gemmlib.share_of(every, (i, 3)) for i in (1, 2, 3)]
    assert sorted(x for s in shares for x in s) == every and max(map(len, shares)) - min(map(len, shares)) <= 1
    assert floors.gemmlib.parse_part("2/3") == (2, 3)
    for bad in ("0/2", "3/2", "x", "1/"):
        with pytest.raises(ValueError):
            floors.gemmlib.parse_part(bad)


def test_every_problem_is_listed_once_and_the_floors_cover_both_sides():
    assert len(set(floors.PROBLEMS)) == len(floors.PROBLEMS)
    kinds = {floors.floor_of(p)[0] for p in floors.PROBLEMS}
    assert kinds == {"cublas", "tiled"} and (1024, 1024, 1024) in floors.PROBLEMS


def test_the_table_marks_the_cells_below_their_floor(tmp_path):
    lines = (runs("F16_IN_F32_OUT", "TN", 8192, 8192, 8192, wgmma=700, cublas=720, tiled=500) +
             runs("F16_IN_F32_OUT", "NN", 8192, 8192, 8192, wgmma=750, cublas=720, tiled=500) +
             runs("F16_IN_F32_OUT", "TN", 512, 512, 512, wgmma=100, cublas=200, tiled=90) +
             runs("F16_IN_F32_OUT", "NN", 512, 512, 512, bad=1, cublas=200, tiled=90) +
             runs("BF16_IN_F32_OUT", "TN", 8192, 8192, 8192, wgmma=800, cublas=720, tiled=500))
    path = tmp_path / "gpu-2026-11-25-floors-1.csv"
    path.write_text(csv_text(lines))
    meta, rows = floors.sweep.read_csv(path)
    table = floors.make_table(meta, rows)
    assert "| F16_IN_F32_OUT | NN | TN |" in table
    assert "| 8192³ | 104 % | 97 % ✗ |" in table          # below cuBLAS from 2048 up
    assert "| 512³ | — | 50 % |" in table                 # the failed run is no measurement
    assert "| BF16_IN_F32_OUT | TN |" in table and "| 8192³ | 111 % |" in table
    assert table.index("512³") < table.index("8192³")
    assert table.rstrip().endswith("3 of 4 met their floor.")


def test_report_writes_the_table_and_the_plot_beside_the_csvs(tmp_path):
    first, second = tmp_path / "gpu-2026-11-25-floors-1.csv", tmp_path / "gpu-2026-11-25-floors-2.csv"
    first.write_text(csv_text(runs("F16_IN_OUT", "TT", 4096, 4096, 4096, wgmma=600, cublas=590, tiled=400)))
    second.write_text(csv_text(runs("F16_IN_OUT", "TT", 1024, 1024, 1024, wgmma=300, cublas=400, tiled=250)))
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "floors.py"), "report", str(first),
                             str(second)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    table = (tmp_path / "gpu-2026-11-25-floors.md").read_text()
    assert "| 1024³ | 75 % ✗ |" in table and "| 4096³ | 102 % |" in table
    svg = tmp_path / "gpu-2026-11-25-floors.svg"
    assert svg.is_file() and ET.parse(svg).getroot().tag.endswith("svg")


def test_run_refuses_at_once_without_a_gpu():
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "floors.py"), "run", "--part", "1/3"],
                            capture_output=True, text=True, timeout=120,
                            env={"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": ""})
    assert result.returncode != 0 and "GPU" in result.stderr, result.stderr


def test_a_run_takes_the_tiled_kernel_only_where_it_is_the_floor(tmp_path):
    """From 2048 up only the Hopper kernel and cuBLAS run (--kernel=wgmma); below, every kernel.
    The post's line says which, from the rows: sweeps made before ran every kernel everywhere."""
    assert floors.kernels_for((4096, 11008, 4096)) == "--kernel=wgmma"
    assert floors.kernels_for((256, 256, 8192)) == "--kernel=all"
    assert floors.kernels_for((1024, 1024, 1024)) == "--kernel=all"
    small = runs("F16_IN_F32_OUT", "TN", 512, 512, 512, wgmma=100, cublas=200, tiled=90)
    for large, said in ((runs("F16_IN_F32_OUT", "TN", 4096, 4096, 4096, wgmma=600, cublas=590),
                         "the Hopper kernel (every kernel below 2048) and cuBLAS in one process"),
                        (runs("F16_IN_F32_OUT", "TN", 4096, 4096, 4096, wgmma=600, cublas=590, tiled=400),
                         "every kernel and cuBLAS in one process")):
        path = tmp_path / "gpu-2026-11-25-floors-1.csv"
        path.write_text(csv_text(small + large))
        meta, rows = floors.sweep.read_csv(path)
        assert said in floors.post_table(meta, rows, [path])
