"""Tests of scripts/sweep.py that need no GPU: reading a sweep's CSV, the table,
the plot, the `report` command, and `run` refusing at once on a machine with no GPU.

Expectations come from the fixture itself (read here with the csv module, not
with sweep.py's reader), so that the fixture can be swapped for any real
sweep's CSV: one size or many, with or without cuBLAS rows.
"""

import csv
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "sweep.py"
FIXTURE = REPO / "tests" / "fixtures" / "sweep-sample.csv"

spec = importlib.util.spec_from_file_location("sweep", SCRIPT)
sweep = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sweep)

try:
    import matplotlib  # noqa: F401
    HAVE_MATPLOTLIB = True
except ImportError:
    HAVE_MATPLOTLIB = False
needs_matplotlib = pytest.mark.skipif(
    not HAVE_MATPLOTLIB,
    reason="matplotlib is not installed (python3 -m pip install -r scripts/requirements-sweep.txt)")


def raw_rows(path=FIXTURE):
    """The fixture's data rows as plain dicts of strings, read independently of sweep.py."""
    with open(path, newline="") as f:
        lines = [line for line in f if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(lines))


def cube(row):
    return row["M"] == row["N"] == row["K"]


def table_rows(table):
    """{(type cell, size cell): {column title: cell}} from the Markdown table."""
    lines = [line for line in table.splitlines() if line.startswith("|")]
    titles = [c.strip() for c in lines[0].strip("|").split("|")]
    cells = {}
    for line in lines[2:]:
        values = [c.strip() for c in line.strip("|").split("|")]
        assert len(values) == len(titles), line
        cells[(values[0], values[1])] = dict(zip(titles, values))
    return titles, cells


# ---------------------------------------------------------------- the fixture itself

def test_the_fixture_has_the_live_csv_header():
    """The fixture is read as ./gemm writes today: its header is the binary's (--describe's
    csv_columns), so a new column cannot leave the readers tested on an old layout."""
    from conftest import CSV_COLUMNS
    header = next(line for line in FIXTURE.read_text().splitlines() if not line.startswith("#"))
    assert header.split(",") == CSV_COLUMNS

def test_read_csv_rows_and_numbers():
    meta, rows = sweep.read_csv(FIXTURE)
    raw = raw_rows()
    assert len(rows) == len(raw)
    for got, want in zip(rows, raw):
        assert isinstance(got["M"], int) and got["M"] == int(want["M"])
        assert isinstance(got["transpose_b"], int) and got["transpose_b"] == int(want["transpose_b"])
        assert isinstance(got["etops"], float) and got["etops"] == float(want["etops"])
        assert isinstance(got["median_ms"], float)
        assert got["device"] == want["device"] and '"' not in got["device"]
        assert got["type"] == want["type"] and got["impl"] == want["impl"]


def test_read_csv_meta_from_comment_lines():
    meta, _ = sweep.read_csv(FIXTURE)
    for line in FIXTURE.read_text().splitlines():
        if line.startswith("#") and ":" in line:
            key, _, value = line[1:].partition(":")
            assert value.strip() in meta[key.strip().lower()]


def test_read_csv_without_comments_layout_or_repeated_header(tmp_path):
    """An older CSV: no '#' lines, no layout column, a header repeated by concatenation."""
    raw = raw_rows()
    columns = [c for c in raw[0] if c != "layout"]
    path = tmp_path / "old.csv"
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        writer.writerow([raw[0][c] for c in columns])
        writer.writerow(columns)
        for row in raw[1:]:
            writer.writerow([row[c] for c in columns])
    meta, rows = sweep.read_csv(path)
    assert meta == {}
    assert len(rows) == len(raw)
    assert [r["layout"] for r in rows] == [r["layout"] for r in raw]
    table = sweep.make_table(meta, rows)
    assert "not recorded" in table and raw[0]["device"] in table


def test_read_csv_rejects_a_ragged_line(tmp_path):
    text = FIXTURE.read_text().rstrip("\n") + "\n1,2,3\n"
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError):
        sweep.read_csv(path)


# ---------------------------------------------------------------- make_table

def expected_cells(raw):
    """What each (type cell, size cell) row of the table should say, from the raw rows."""
    meta, rows = sweep.read_csv(FIXTURE)
    speeds, ratios = sweep.table_columns(rows), sweep.ratio_columns(rows)
    found = {}
    for row in raw:
        if row["transpose_a"] != "0":
            continue
        size = row["M"] if cube(row) else f"{row['M']}x{row['N']}x{row['K']}"
        found[(row["type"], size, row["impl"], int(row["transpose_b"]))] = row   # last one wins
    want = {}
    for type_pair, size in {(k[0], k[1]) for k in found}:
        cells = {}
        for title, impl, tb in speeds:
            row = found.get((type_pair, size, impl, tb))
            cells[title] = "\u2014" if row is None else (
                sweep.fmt3(float(row["etops"])) + (" (FAIL)" if row["result"] == "FAIL" else ""))
        for title, impl, tb in ratios:
            kernel, cublas = found.get((type_pair, size, impl, tb)), found.get((type_pair, size, "cublas", tb))
            cells[title] = "\u2014" if kernel is None or cublas is None else (
                sweep.fmt3(100 * float(kernel["etops"]) / float(cublas["etops"])) + " %")
        want[(sweep.type_title(type_pair), size)] = cells
    return want


def test_table_has_every_type_and_size_with_its_values():
    meta, rows = sweep.read_csv(FIXTURE)
    titles, cells = table_rows(sweep.make_table(meta, rows))
    want = expected_cells(raw_rows())
    assert set(cells) == set(want)
    for key, columns in want.items():
        for title, value in columns.items():
            assert cells[key][title] == value, (key, title)


def test_table_columns_and_missing_cublas_marked():
    meta, rows = sweep.read_csv(FIXTURE)
    titles, cells = table_rows(sweep.make_table(meta, rows))
    assert titles[:2] == ["Type pair", "Size"]
    # Per layout: an eTOPS column for each kernel and for cuBLAS, and a ratio for each kernel.
    kernels = sweep.kernel_impls(rows)
    assert len(titles) == 2 + 2 * (len(kernels) + 1) + 2 * len(kernels)
    kernel_only = [r for r in rows if r["impl"] != "cublas"]
    _, cells = table_rows(sweep.make_table(meta, kernel_only))
    assert cells
    for columns in cells.values():
        for title, value in columns.items():
            if title.startswith("cuBLAS") or "/cuBLAS" in title:
                assert value == "\u2014"


def test_table_meta_line_and_definitions():
    meta, rows = sweep.read_csv(FIXTURE)
    table = sweep.make_table(meta, rows)
    head = table.split("\n|", 1)[0]
    line = next(l for l in head.splitlines() if l.startswith("**GPU:**"))
    assert sweep.gpu_of(meta, rows) in line
    assert meta.get("date", "not recorded") in line
    assert (meta["command"] if "command" in meta else "not recorded") in line
    assert "eTOPS is effective tera-operations per second" in head
    if any(r["type"].startswith("U8_") for r in rows):
        assert "U8_IN_I32_OUT (cuBLAS: s8)" in table


def test_table_with_cublas_rows_and_several_sizes():
    """Rows made from the fixture's own: a second size and cuBLAS rows, to reach the ratio cells."""
    meta, rows = sweep.read_csv(FIXTURE)
    kernel = [r for r in rows if r["impl"] != "cublas"][0]
    cublas = dict(kernel, impl="cublas", etops=kernel["etops"] * 4)
    bigger = dict(kernel, M=kernel["M"] * 2, N=kernel["N"] * 2, K=kernel["K"] * 2)
    _, cells = table_rows(sweep.make_table(meta, [kernel, cublas, bigger]))
    title = sweep.type_title(kernel["type"])
    layout = sweep.LAYOUT_WORDS[kernel["transpose_b"]]
    row = cells[(title, str(kernel["M"]))]
    assert row[f"Kernel/cuBLAS, {layout}"] == "25.0 %"
    assert row[f"cuBLAS eTOPS, {layout}"] == sweep.fmt3(kernel["etops"] * 4)
    assert cells[(title, str(kernel["M"] * 2))][f"cuBLAS eTOPS, {layout}"] == "\u2014"
    assert list(cells) == [(title, str(kernel["M"])), (title, str(kernel["M"] * 2))]


@pytest.mark.parametrize("value, text", [
    (29.455, "29.5"), (1073.2, "1070"), (8.1232, "8.12"), (0.0123456, "0.0123"),
    (99.96, "100"), (100.0, "100"), (0, "0"), (None, "\u2014"), (float("nan"), "\u2014"),
])
def test_fmt3(value, text):
    assert sweep.fmt3(value) == text


# ---------------------------------------------------------------- make_plot

def svg_facts(path):
    root = ET.parse(path).getroot()
    titles = [g.get("id") for g in root.iter("{http://www.w3.org/2000/svg}g")
              if (g.get("id") or "").startswith("title-")]
    hrefs = [value for element in root.iter() for name, value in element.attrib.items()
             if name.endswith("href")]
    return root, titles, hrefs


@needs_matplotlib
def test_plot_is_a_self_contained_svg(tmp_path):
    meta, rows = sweep.read_csv(FIXTURE)
    path = tmp_path / "plot.svg"
    sweep.make_plot(meta, rows, path)
    root, titles, hrefs = svg_facts(path)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    types = {r["type"] for r in rows}
    assert sorted(titles) == sorted(f"title-{t}" for t in types)
    assert hrefs and all(h.startswith("#") for h in hrefs)
    # 'http' may appear only in the namespace declarations and the DOCTYPE.
    text = path.read_text()
    body = text.split("<svg", 1)[1].split(">", 1)[1]
    assert "http" not in body
    assert "<text" not in body        # text drawn as outlines: no font needed to show it
    assert 1_000 < path.stat().st_size < 300_000


@needs_matplotlib
def test_plot_is_deterministic(tmp_path):
    meta, rows = sweep.read_csv(FIXTURE)
    sweep.make_plot(meta, rows, tmp_path / "a.svg")
    sweep.make_plot(meta, rows, tmp_path / "b.svg")
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()


def test_the_legend_names_each_implementation_and_each_layout_once():
    """However many kernels ran, the legend has one entry per implementation and one per
    layout (its colour), not one per pair of them, so that it stays narrower than the plot."""
    impls = ["simple", "tiled", "mma", "wgmma", "dmma", "cublas"]
    present = {(impl, tb) for impl in impls for tb in (0, 1)} - {("mma", 0)}
    labels = [label for _, label in sweep.legend_entries(impls, present, impls[:-1])]
    assert len(labels) == len(impls) + 2 and labels[-2:] == ["B plain", "B transposed"]
    assert labels[-3] == "cuBLAS" and len(set(labels)) == len(labels)
    only = sweep.legend_entries(impls, {("tiled", 1)}, impls[:-1])
    assert [key for key, _ in only] == ["tiled", 1]


@needs_matplotlib
def test_plot_with_one_type_and_one_point(tmp_path):
    meta, rows = sweep.read_csv(FIXTURE)
    path = tmp_path / "one.svg"
    sweep.make_plot({}, rows[:1], path)
    _, titles, _ = svg_facts(path)
    assert titles == [f"title-{rows[0]['type']}"]


# ---------------------------------------------------------------- the command line

def run_script(*args, env=None, timeout=120):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=REPO)


@needs_matplotlib
def test_report_command_writes_md_and_svg(tmp_path):
    copy = tmp_path / "sweep.csv"
    shutil.copy(FIXTURE, copy)
    result = run_script("report", str(copy))
    assert result.returncode == 0, result.stderr
    md, svg = tmp_path / "sweep.md", tmp_path / "sweep.svg"
    assert result.stdout.split() == [str(md), str(svg)]
    meta, rows = sweep.read_csv(FIXTURE)
    assert md.read_text() == sweep.make_table(meta, rows)
    # Another process, another hash seed: still the same bytes as in this one.
    sweep.make_plot(meta, rows, tmp_path / "here.svg")
    assert svg.read_bytes() == (tmp_path / "here.svg").read_bytes()


def test_report_command_on_a_missing_file(tmp_path):
    result = run_script("report", str(tmp_path / "nothing.csv"))
    assert result.returncode != 0
    assert "nothing.csv" in result.stderr


def no_gpu_env(tmp_path, fake_smi):
    """An environment whose PATH has no real nvidia-smi: none at all, or one that fails
    the way it does on a machine without a working driver."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if fake_smi:
        smi = bin_dir / "nvidia-smi"
        smi.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed because it couldn't communicate "
                       "with the NVIDIA driver.'\nexit 9\n")
        smi.chmod(0o755)
    return dict(os.environ, PATH=str(bin_dir))


@pytest.mark.parametrize("fake_smi", [False, True], ids=["no-nvidia-smi", "failing-nvidia-smi"])
def test_run_without_gpu_fails_at_once(tmp_path, fake_smi):
    tangled = REPO / "build" / "sweep" / "gemm.cu"
    before = tangled.stat().st_mtime_ns if tangled.exists() else None
    start = time.monotonic()
    result = run_script("run", "--quick", "--out", str(tmp_path / "out"),
                        env=no_gpu_env(tmp_path, fake_smi), timeout=60)
    assert result.returncode != 0
    assert "no GPU" in result.stderr
    assert time.monotonic() - start < 30
    # Nothing was tangled, built or written.
    assert (tangled.stat().st_mtime_ns if tangled.exists() else None) == before
    assert not (tmp_path / "out").exists()
    assert "building" not in result.stderr


# Stand-ins for nvcc and ./gemm, so that `run` can be followed from start to end
# without a GPU. @...@ are filled in by fake_gpu_env.
FAKE_NVCC = """#!@PYTHON@
# Logs its arguments; for -o, copies the stand-in ./gemm there.
import json, shutil, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("nvcc: NVIDIA (R) Cuda compiler driver")
    print("Cuda compilation tools, release 12.9, V12.9.0")
    sys.exit(0)
with open(@LOG@, "a") as log:
    log.write(json.dumps(args) + "\\n")
shutil.copy(@GEMM@, args[args.index("-o") + 1])
"""

# Knows its configuration from its name, <TYPE>-<tb>. F64 with B transposed
# dies at 1024; I8's kernel is wrong at 256 with B plain (it prints FAIL and
# exits 1, as ./gemm does); U8 prints no cuBLAS row.
FAKE_GEMM = """#!@PYTHON@
import os, sys
if sys.argv[1:] == ["--csv-header"]:
    print(@HEADER@)
    sys.exit(0)
type_pair, tb = os.path.basename(sys.argv[0]).rsplit("-", 1)
tb, size = int(tb), int(sys.argv[1])
if type_pair == "F64_IN_OUT" and tb == 1 and size == 1024:
    print("gemm: CUDA error: out of fake memory", file=sys.stderr)
    sys.exit(3)
result = "FAIL" if type_pair == "I8_IN_I32_OUT" and tb == 0 and size == 256 else "PASS"
layout = "TN" if tb else "NN"
energy = ["", "", ""] if "--energy-ms=0" in sys.argv else [1500, 690.5, 0.75]
for impl, speed in (("simple", size / 100), ("cublas", size / 10)):
    if impl == "cublas" and type_pair == "U8_IN_I32_OUT":
        continue
    fields = ['"Fake GPU 9000"', 90, type_pair, "16x16x16", 0, tb] + [size] * 6 + [
        impl, layout, 3, 10, 1.0, 1.0, 1.0, speed, speed, "sample", result, 0, 0, "", "", "", 0, 1,
        "uniform", "burst", 1980, 1.1] + energy + ["power-cap"]
    print(",".join(map(str, fields)))
sys.exit(1 if result == "FAIL" else 0)
"""


def fake_gpu_env(tmp_path):
    """PATH with a stand-in nvidia-smi that reports one GPU, and a stand-in nvcc."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    header = next(line for line in FIXTURE.read_text().splitlines() if not line.startswith("#"))
    gemm = tmp_path / "fake_gemm"
    gemm.write_text(FAKE_GEMM.replace("@PYTHON@", sys.executable).replace("@HEADER@", repr(header)))
    nvcc = bin_dir / "nvcc"
    nvcc.write_text(FAKE_NVCC.replace("@PYTHON@", sys.executable)
                    .replace("@LOG@", repr(str(tmp_path / "nvcc.log")))
                    .replace("@GEMM@", repr(str(gemm))))
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'Fake GPU 9000, 9.0, 555.55'\n")
    for tool in (gemm, nvcc, smi):
        tool.chmod(0o755)
    return dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")


def test_run_with_a_stand_in_gpu(tmp_path):
    """The whole of `run`, with nvidia-smi, nvcc and ./gemm replaced by stand-ins."""
    env = fake_gpu_env(tmp_path)
    out_dir, build = tmp_path / "out", tmp_path / "build"
    result = run_script("run", "--sizes", "256,1024", "--types", "F64_IN_OUT,I8_IN_I32_OUT,U8_IN_I32_OUT",
                        "--energy-at", "1024", "--out", str(out_dir), "--build-dir", str(build), env=env,
                        timeout=300)
    # Two runs failed (F64 tb=1 at 1024 crashed, I8 tb=0 at 256 was wrong): non-zero at the end.
    assert result.returncode == 1, result.stderr

    # The exact nvcc command, once per (type, tb), for the reported compute capability.
    builds = [json.loads(line) for line in (tmp_path / "nvcc.log").read_text().splitlines()]
    assert len(builds) == 6
    assert ["-O3", "-std=c++20", "-lineinfo", "-gencode", "arch=compute_90a,code=sm_90a",
            "-DTYPE_FROM_MAKE", "-DF64_IN_OUT",
            "-DTRANSPOSE_A=0", "-DTRANSPOSE_B=1", "-DUSE_CUBLAS=1",
            "-o", str(build / "F64_IN_OUT-1"), str(build / "gemm.cu"), "-lcublas", "-lcublasLt", "-ldl"] in builds
    assert (build / "gemm.cu").stat().st_size > 0

    # One progress line per run, with the speed, cuBLAS's, and the time left.
    progress = [l for l in result.stderr.splitlines() if l.startswith("[")]
    assert len(progress) == 12
    assert progress[0].startswith("[1/12] F64_IN_OUT tb=0 256^3: 2.6 eTOPS (cuBLAS 25.6) elapsed ")
    assert progress[-1].endswith("about 0s left")
    assert any("FAILED (exit 3)" in l for l in progress)
    assert "out of fake memory" in result.stderr

    csv_path = out_dir / f"fake-gpu-9000-{time.strftime('%Y-%m-%d')}.csv"
    assert csv_path.exists(), list(out_dir.iterdir())
    meta, rows = sweep.read_csv(csv_path)
    assert meta["gpu"] == "Fake GPU 9000" and meta["driver"] == "555.55"
    assert "release 12.9" in meta["cuda"]
    assert "--types F64_IN_OUT,I8_IN_I32_OUT,U8_IN_I32_OUT" in meta["command"]
    assert "F64_IN_OUT tb=1 1024" in meta["failed"]
    # 12 runs, one crashed; U8 prints no cuBLAS row: 11 kernel rows, 7 cuBLAS rows.
    assert sum(r["impl"] == "simple" for r in rows) == 11
    assert sum(r["impl"] == "cublas" for r in rows) == 7
    assert [r["result"] for r in rows if r["type"] == "I8_IN_I32_OUT" and r["M"] == 256
            and r["transpose_b"] == 0] == ["FAIL", "FAIL"]
    # The energy windows only at --energy-at's sizes: at the others ./gemm was told --energy-ms=0.
    assert {r["M"] for r in rows if r["energy_j"] != ""} == {1024}
    assert {r["M"] for r in rows if r["energy_j"] == ""} == {256}
    assert meta["energy"] == "measured at 1024 (./gemm's --energy-ms); at the other sizes --energy-ms=0"

    table = csv_path.with_suffix(".md").read_text()
    assert "2.56 (FAIL)" in table and "Runs that failed" in table
    assert csv_path.with_suffix(".svg").exists() == HAVE_MATPLOTLIB


def test_run_does_not_overwrite_an_earlier_sweep(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    first = out / "fake-gpu-2026-01-01.csv"
    first.write_text("x")
    assert sweep.csv_path_for(out, "Fake GPU", "2026-01-01") == out / "fake-gpu-2026-01-01-2.csv"
    assert sweep.csv_path_for(out, "Fake GPU", "2026-01-02") == out / "fake-gpu-2026-01-02.csv"


def test_run_rejects_bad_arguments():
    result = run_script("run", "--sizes", "256,abc")
    assert result.returncode == 2 and "positive whole numbers" in result.stderr
    result = run_script("run", "--types", "F16_IN_F32_OUT,NOPE")
    assert result.returncode == 2 and "NOPE" in result.stderr
    result = run_script("run", "--quick", "--sizes", "256")
    assert result.returncode == 2


# ---------------------------------------------------------------- sizes and progress

def test_parse_sizes():
    assert sweep.parse_sizes("256,1000") == [256, 1000]
    assert sweep.parse_sizes(" 4096, 256,256 ") == [256, 4096]
    for bad in ("", "256,", "0", "-5", "1e3", "abc"):
        with pytest.raises(ValueError):
            sweep.parse_sizes(bad)


def test_default_and_quick_sizes():
    assert sweep.DEFAULT_SIZES == [256, 512, 1000, 1024, 2048, 3000, 4096, 8192, 10000, 16384]
    assert sweep.QUICK_SIZES == [256, 1024, 4096]
    assert [sweep.repeats_for(s) for s in (8192, 10000, 16384, 20000)] == [10, 10, 5, 5]


def test_parse_types_keeps_the_table_order():
    assert sweep.parse_types("U8_IN_I32_OUT,F16_IN_OUT") == ["F16_IN_OUT", "U8_IN_I32_OUT"]
    with pytest.raises(ValueError):
        sweep.parse_types("F16")


def test_slug():
    assert sweep.slug("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"
    assert sweep.slug("  Orin (nvgpu) ") == "orin-nvgpu"


@pytest.mark.parametrize("seconds, text", [
    (0, "0s"), (5.4, "5s"), (59.6, "1m00s"), (62, "1m02s"), (3599, "59m59s"), (3725, "1h02m"),
])
def test_format_duration(seconds, text):
    assert sweep.format_duration(seconds) == text


def test_estimate_left():
    assert sweep.estimate_left([], [256, 512]) is None
    # One size so far: every run left is taken to cost the mean.
    assert sweep.estimate_left([(1024, 2.0), (1024, 4.0)], [1024, 4096]) == pytest.approx(6.0)
    # 1 s fixed plus 1 s per 1024^3 is recovered from two sizes: 4096^3 costs 1 + 64 s.
    done = [(1024, 2.0), (2048, 9.0)]
    assert sweep.estimate_left(done, [4096]) == pytest.approx(65.0)
    assert sweep.estimate_left(done, [4096, 256]) == pytest.approx(65.0 + 1 + 1 / 64)
    assert sweep.estimate_left(done, []) == 0
    # Noise that makes the bigger run faster gives no negative slope.
    assert sweep.estimate_left([(256, 3.0), (512, 1.0)], [4096]) == pytest.approx(2.0)
    # Nor a negative fixed cost: the line goes through zero instead.
    left = sweep.estimate_left([(1024, 0.1), (2048, 8.0)], [4096])
    assert left > 0


def test_tick_sizes_skip_crowded_labels():
    shown = sweep.tick_sizes(sweep.DEFAULT_SIZES)
    assert 1024 in shown and 1000 not in shown
    assert 2048 in shown and 3000 not in shown and 10000 not in shown
    assert sweep.tick_sizes([256, 3000, 16384]) == [256, 3000, 16384]
    assert sweep.tick_sizes([1000]) == [1000]


def test_no_script_shadows_a_standard_module():
    """scripts/ is first on sys.path when a script runs: a file named like a standard module
    (numbers.py once) breaks numpy, and with it the sweep's plot."""
    import sys as _sys
    names = {p.stem for p in (REPO / "scripts").glob("*.py")}
    assert not names & set(_sys.stdlib_module_names), names & set(_sys.stdlib_module_names)


def split_fixture(tmp_path, groups, edit=lambda i, line: line):
    """The fixture cut into one CSV per group of pairs, as a session's calls write them."""
    lines = FIXTURE.read_text().splitlines(keepends=True)
    comments = [line for line in lines if line.startswith("#")]
    header = next(line for line in lines if line.startswith("device,"))
    paths = []
    for i, group in enumerate(groups):
        rows = [line for line in lines if line.split(",")[2:3] and line.split(",")[2] in group]
        path = tmp_path / f"part-{i}.csv"
        path.write_text("".join(edit(i, line) for line in comments + [header] + rows))
        paths.append(path)
    return paths


def test_merge_makes_one_session_of_its_calls(tmp_path):
    parts = split_fixture(tmp_path, [("F16_IN_F32_OUT",), ("TF32_IN_F32_OUT", "U8_IN_I32_OUT")])
    out = tmp_path / "merged.csv"
    assert run_script("merge", str(out), *map(str, parts)).returncode == 0
    meta, rows = sweep.read_csv(out)
    _, expected = sweep.read_csv(FIXTURE)
    assert rows == expected and meta["date"] == "2026-11-22"
    assert meta["command"].count("sweep.py run") == 2 and "2 calls of one session" in meta["command"]


@pytest.mark.parametrize("problem", ["another date", "a pair twice"])
def test_merge_refuses_calls_of_different_sessions_or_the_same_pairs(tmp_path, problem):
    if problem == "another date":
        parts = split_fixture(tmp_path, [("F16_IN_F32_OUT",), ("U8_IN_I32_OUT",)],
                              lambda i, line: line.replace("2026-11-22", "2026-11-23") if i else line)
    else:
        parts = split_fixture(tmp_path, [("F16_IN_F32_OUT",), ("F16_IN_F32_OUT", "U8_IN_I32_OUT")])
    result = run_script("merge", str(tmp_path / "merged.csv"), *map(str, parts))
    assert result.returncode == 1 and "part-1.csv" in result.stderr
    assert not (tmp_path / "merged.csv").exists()


def test_run_in_parts_takes_every_nth_pair(tmp_path):
    """--part I/N: the I-th of N shares of the pairs, so that a sweep fits several short calls."""
    env = fake_gpu_env(tmp_path)
    out_dir = tmp_path / "out"
    result = run_script("run", "--sizes", "512", "--types", "F64_IN_OUT,I8_IN_I32_OUT,U8_IN_I32_OUT",
                        "--part", "2/2", "--out", str(out_dir), "--build-dir", str(tmp_path / "build"),
                        env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    builds = [json.loads(line) for line in (tmp_path / "nvcc.log").read_text().splitlines()]
    assert sorted(b[b.index("-o") + 1].rsplit("/", 1)[1] for b in builds) == ["I8_IN_I32_OUT-0", "I8_IN_I32_OUT-1"]
    _, rows = sweep.read_csv(next(out_dir.glob("*.csv")))
    assert {r["type"] for r in rows} == {"I8_IN_I32_OUT"}
    assert run_script("run", "--part", "3/2").returncode == 2
