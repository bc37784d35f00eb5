"""Tests of scripts/worklog.py that need no GPU: the table of a worklog CSV, putting
it into a document between markers, the `table` command, and the table in gemm.md.

The fixture tests/fixtures/worklog-sample.csv holds rows of a real worklog
measured on an H100 (results/nvidia-h100-80gb-hbm3-2026-11-22-explore-*.csv),
written out of the order of the steps, with 'explore' rows (variants that are
not steps) and two FAIL rows added by hand. Expectations are worked out here
from the CSV read with the csv module, not with worklog.py's reader.
"""

import csv
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "worklog.py"
FIXTURE = REPO / "tests" / "fixtures" / "worklog-sample.csv"
FIXTURE_NAME = str(FIXTURE.relative_to(REPO))

spec = importlib.util.spec_from_file_location("worklog", SCRIPT)
worklog = importlib.util.module_from_spec(spec)
spec.loader.exec_module(worklog)
sweep = worklog.sweep
MISSING = sweep.MISSING


def raw_rows(path=FIXTURE):
    """The fixture's data rows as plain dicts of strings, read independently of worklog.py."""
    with open(path, newline="", encoding="utf-8") as f:
        lines = [line for line in f if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(lines))


def step_keys():
    return [key for key, _, _ in worklog.STEPS]


def titles():
    return {key: title for key, title, _ in worklog.STEPS}


def expected_cells(raw):
    """{(row key, type): eTOPS} as the table should show them.

    Row keys are the step keys, 'cublas' and 'ceiling'. FAIL rows and explore
    rows never count; of repeated measurements the last one does.
    """
    cells = {}
    for row in raw:
        if row["result"] == "FAIL" or row["kind"] != "step":
            continue
        if row["impl"] in ("cublas", "ceiling"):
            key = row["impl"]
        elif row["impl"] == ("simple" if row["step"] == "simple" else "tiled"):
            key = row["step"]
        else:
            continue
        cells[(key, row["type"])] = float(row["etops"])
    return cells


def parse_table(table):
    """(column titles, [[cells of one row]]) of a Markdown table; every row as wide as the header."""
    lines = [line for line in table.splitlines() if line.startswith("|")]
    assert len(lines) >= 2 and re.fullmatch(r"\|(-+:?\|)+", lines[1].replace(" ", "")), table
    split = lambda line: [c.strip() for c in line.strip().strip("|").split("|")]
    header, body = split(lines[0]), [split(line) for line in lines[2:]]
    for cells in body:
        assert len(cells) == len(header), cells
    return header, body


def fixture_table():
    meta, rows = worklog.read_worklog(FIXTURE)
    return rows, worklog.make_table(rows)


def types_of(raw):
    return sorted({row["type"] for row in raw}, key=sweep.type_order)


def column_of(header, raw):
    """{type pair: column index}, checking that the columns come in sweep's order of types."""
    types = types_of(raw)
    assert len(header) == 1 + len(types)
    for type_pair, title in zip(types, header[1:]):
        assert title == worklog.SHORT_NAMES[type_pair], (type_pair, title)
    return {t: i + 1 for i, t in enumerate(types)}


# ---------------------------------------------------------------- the fixture itself

def test_the_fixture_has_the_live_csv_header():
    """worklog.py's columns, then ./gemm's as the binary writes them today (--describe)."""
    from conftest import CSV_COLUMNS
    header = next(line for line in FIXTURE.read_text().splitlines() if not line.startswith("#"))
    assert header.split(",") == ["step", "kind", "settings"] + CSV_COLUMNS


def test_the_fixtures_steps_are_worklogs_steps():
    """The fixture names only steps worklog.py plans today, with the header of worklog.py."""
    raw = raw_rows()
    unknown = {row["step"] for row in raw if row["kind"] == "step"} - set(step_keys())
    assert not unknown, f"steps no longer in worklog.STEPS, update the fixture: {unknown}"


def test_read_worklog_refuses_a_csv_without_steps():
    with pytest.raises(ValueError, match="not a worklog CSV"):
        worklog.read_worklog(REPO / "tests" / "fixtures" / "sweep-sample.csv")


# ---------------------------------------------------------------- make_table

def test_step_rows_come_in_the_order_of_steps():
    raw = raw_rows()
    _, table = fixture_table()
    _, body = parse_table(table)
    cells = expected_cells(raw)
    present = [key for key in step_keys() if any((key, t) in cells for t in types_of(raw))]
    written = [step_keys().index(r["step"]) for r in raw if r["kind"] == "step" and r["impl"] == "tiled"]
    assert written != sorted(written), "the CSV must be out of order for the sort to show"
    assert [cells_[0] for cells_ in body[:len(present)]] == [titles()[k] for k in present]
    # A step measured for no type pair (or only in a FAIL row) has no row.
    absent = set(step_keys()) - set(present)
    assert absent and not {titles()[k] for k in absent} & {cells_[0] for cells_ in body}


def test_cells_are_fmt3_of_the_last_passing_measurement():
    raw = raw_rows()
    _, table = fixture_table()
    header, body = parse_table(table)
    column = column_of(header, raw)
    by_title = {cells_[0]: cells_ for cells_ in body}
    want = expected_cells(raw)
    checked = 0
    for key in step_keys():
        if titles()[key] not in by_title:
            continue
        for type_pair, i in column.items():
            value = want.get((key, type_pair))
            assert by_title[titles()[key]][i] == (MISSING if value is None else sweep.fmt3(value)), \
                (key, type_pair)
            checked += value is not None
    assert checked >= 10
    # Two values read off the fixture by eye, so that the test does not only agree with itself.
    assert by_title[titles()["simple"]][column["F16_IN_F32_OUT"]] == "30.8"
    assert by_title[titles()["tile"]][column["I8_IN_I32_OUT"]] == "258"


def table_parts():
    """The fixture's table body, its columns by type pair and the cells it should have."""
    raw = raw_rows()
    header, body = parse_table(fixture_table()[1])
    return body, column_of(header, raw), expected_cells(raw)


def test_cublas_and_ceiling_rows():
    body, column, want = table_parts()
    for key, prefix in [("cublas", "cuBLAS"), ("ceiling", "WMMA ceiling")]:
        rows = [cells_ for cells_ in body if cells_[0].startswith(prefix)]
        assert len(rows) == 1, prefix
        for type_pair, i in column.items():
            assert rows[0][i] == sweep.fmt3(want[(key, type_pair)]), (key, type_pair)
    by_title = {cells_[0]: cells_ for cells_ in body}
    # After the steps, in this order, then the share.
    names = [cells_[0] for cells_ in body]
    cublas = next(i for i, n in enumerate(names) if n.startswith("cuBLAS"))
    assert all(n in titles().values() for n in names[:cublas])
    assert names[cublas + 1].startswith("WMMA ceiling") and cublas + 3 == len(names)
    assert by_title[names[cublas]][column["F16_IN_F32_OUT"]] == "711"


def test_share_row_is_the_shipped_kernel_against_cublas():
    body, column, want = table_parts()
    last = step_keys()[-1]
    share = body[-1]
    assert "cuBLAS" in share[0] and share[0] not in titles().values()
    seen = 0
    for type_pair, i in column.items():
        kernel, cublas = want.get((last, type_pair)), want.get(("cublas", type_pair))
        if kernel is None or cublas is None:
            assert share[i] == MISSING, type_pair
            continue
        match = re.fullmatch(r"(\d+(?:\.\d+)?) ?%", share[i])
        assert match, share[i]
        assert abs(float(match.group(1)) - 100 * kernel / cublas) <= 0.5, (type_pair, share[i])
        seen += 1
    assert seen >= 2
    # 331.5846 / 711.0122 for F16_IN_F32_OUT.
    assert share[column["F16_IN_F32_OUT"]].startswith("47")


def test_share_row_left_out_when_the_shipped_kernel_was_not_measured():
    rows, table = fixture_table()
    last = step_keys()[-1]
    without = worklog.make_table([r for r in rows if r["step"] != last or r["impl"] != "tiled"])
    _, body = parse_table(without)
    _, full = parse_table(table)
    assert len(body) == len(full) - 2      # the shipped step's row and the share row
    assert not any(c.endswith("%") for cells_ in body for c in cells_)


def assert_rows_change_nothing(rows, table, ignored):
    """The table is the same without the rows `ignored`, and none of their values is in it."""
    assert ignored
    assert worklog.make_table([r for r in rows if r not in ignored]) == table
    _, body = parse_table(table)
    values = {c for cells_ in body for c in cells_[1:]}
    for row in ignored:
        assert sweep.fmt3(row["etops"]) not in values, row["step"]


def test_explore_rows_are_ignored():
    rows, table = fixture_table()
    explore = [r for r in rows if r["kind"] == "explore"]
    assert any(r["step"] not in step_keys() for r in explore), "no explore row to ignore"
    assert_rows_change_nothing(rows, table, explore)
    _, body = parse_table(table)
    for row in explore:
        assert row["step"] not in {cells_[0] for cells_ in body}


def test_explore_row_named_like_a_step_is_ignored():
    rows, table = fixture_table()
    keys = step_keys()
    missing = [k for k in keys if k != "simple" and not any(r["step"] == k for r in rows)]
    assert missing, "every step is in the fixture; nothing to collide with"
    template = next(r for r in rows if r["kind"] == "explore")
    impostor = dict(template, step=missing[0])
    assert worklog.make_table(rows + [impostor]) == table


def test_fail_rows_are_ignored():
    rows, table = fixture_table()
    fails = [r for r in rows if r["result"] == "FAIL"]
    # One of them failed after a PASS of the same step, pair and kernel: the PASS still counts.
    assert any(any(p["result"] == "PASS" and (p["step"], p["type"], p["impl"]) ==
                   (f["step"], f["type"], f["impl"]) for p in rows) for f in fails)
    assert_rows_change_nothing(rows, table, fails)


def test_a_repeated_measurement_keeps_its_last_row():
    rows, table = fixture_table()
    again = dict(next(r for r in rows if r["step"] == "tile" and r["type"] == "F64_IN_OUT"),
                 etops=17.777)
    _, body = parse_table(worklog.make_table(rows + [again]))
    tile_row = next(cells_ for cells_ in body if cells_[0] == titles()["tile"])
    assert "17.8" in tile_row and "16.4" not in tile_row


# ---------------------------------------------------------------- insert_table

DOCUMENT = ("# A post\n\nSome text.\n\n" + worklog.BEGIN + "\n| old | table |\n|---|---|\n"
            + worklog.END + "\n\nMore text.\n")


def test_insert_table_round_trip():
    _, table = fixture_table()
    once = worklog.insert_table(DOCUMENT, table)
    assert "| old | table |" not in once
    assert table in once
    before, rest = once.split(worklog.BEGIN)
    inside, after = rest.split(worklog.END)
    assert before == DOCUMENT.split(worklog.BEGIN)[0]
    assert after == DOCUMENT.split(worklog.END)[1]
    assert inside.strip("\n") == table.strip("\n")
    # Inserting again replaces, it does not add; another table replaces this one.
    assert worklog.insert_table(once, table) == once
    other = worklog.insert_table(once, "| x |\n|---|\n")
    assert table not in other and "| x |" in other
    assert worklog.insert_table(other, table) == once


@pytest.mark.parametrize("document", [
    "no markers at all\n",
    worklog.BEGIN + "\nonly the first\n",
    "only the second\n" + worklog.END + "\n",
    worklog.END + "\nout of order\n" + worklog.BEGIN + "\n",
], ids=["none", "begin only", "end only", "reversed"])
def test_insert_table_without_markers_is_an_error(document):
    with pytest.raises(ValueError):
        worklog.insert_table(document, "| x |\n")


# ---------------------------------------------------------------- the table command

def run_script(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=60)


def test_table_command_prints_the_table_and_where_it_came_from():
    result = run_script("table", FIXTURE_NAME)
    assert result.returncode == 0, result.stderr
    _, table = fixture_table()
    assert result.stdout.startswith(table)
    sentence = result.stdout[len(table):].strip()
    assert f"`{FIXTURE_NAME}`" in sentence
    assert "NVIDIA H100 80GB HBM3" in sentence and "2026-11-22" in sentence
    assert "8192" in sentence


def test_table_command_into_a_file(tmp_path):
    document = tmp_path / "post.md"
    document.write_text(DOCUMENT)
    result = run_script("table", FIXTURE_NAME, "--into", document)
    assert result.returncode == 0, result.stderr
    printed = run_script("table", FIXTURE_NAME).stdout
    assert document.read_text() == worklog.insert_table(DOCUMENT, printed)


def test_table_command_refuses_what_it_cannot_do(tmp_path):
    result = run_script("table", "tests/fixtures/sweep-sample.csv")
    assert result.returncode != 0 and "not a worklog CSV" in result.stderr
    document = tmp_path / "post.md"
    document.write_text("no markers here\n")
    result = run_script("table", FIXTURE_NAME, "--into", document)
    assert result.returncode != 0 and "markers" in result.stderr
    assert document.read_text() == "no markers here\n"


# ---------------------------------------------------------------- the table in gemm.md

def named_csv(document, table="worklog"):
    """The CSV that the sentence under a table (by default the worklog table) names, or None."""
    begin, end = document.find(f"<!-- {table}:begin -->"), document.find(f"<!-- {table}:end -->")
    if begin < 0 or end < begin:
        return None
    match = re.search(r"from `([^`]+\.csv)`", document[begin:end])
    return match.group(1) if match else None


def regenerated(document):
    """document with its tables made afresh by `worklog.py table --into`: the worklog, ceiling
    and parts tables from the CSV the worklog table names, and the running example's table
    (where there is one) from the CSV it names itself."""
    import tempfile
    name = named_csv(document)
    assert (REPO / name).is_file(), f"the worklog table names {name}, which does not exist"
    example = named_csv(document, "worklog-example")
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "post.md"
        copy.write_text(document, encoding="utf-8")
        result = run_script("table", name, "--into", copy, *(["--tables", "worklog,ceiling,parts"] if example else []))
        assert result.returncode == 0, result.stderr
        if example:
            assert (REPO / example).is_file(), f"the running example's table names {example}, which does not exist"
            result = run_script("table", example, "--into", copy, "--tables", "worklog-example")
            assert result.returncode == 0, result.stderr
        return copy.read_text(encoding="utf-8")


def test_the_ceiling_and_parts_tables_in_gemm_md_are_generated():
    document = (REPO / "gemm.md").read_text(encoding="utf-8")
    for name in ("ceiling", "parts"):
        assert f"<!-- {name}:begin -->" in document
        edited = re.sub(r"(<!-- %s:begin -->\n\|[^\n]*\n\|[^\n]*\n\| \S+ \| )([\d.]+)" % name,
                        lambda m: m[1] + "1234", document)
        assert edited != document
        assert regenerated(edited) == document, name


def test_regenerated_catches_a_table_edited_by_hand(tmp_path):
    """The check below, tried on a document made from the fixture: it agrees, then an
    edited cell makes it disagree."""
    document = tmp_path / "post.md"
    document.write_text(DOCUMENT)
    assert run_script("table", FIXTURE_NAME, "--into", document).returncode == 0
    text = document.read_text()
    assert named_csv(text) == FIXTURE_NAME
    assert regenerated(text) == text
    edited = text.replace("| 711 |", "| 712 |")
    assert edited != text and regenerated(edited) != edited


def test_the_table_in_gemm_md_is_the_one_its_csv_gives():
    document = (REPO / "gemm.md").read_text(encoding="utf-8")
    assert worklog.BEGIN in document and worklog.END in document, "a worklog marker is missing"
    name = named_csv(document)
    assert name is not None, "the worklog table in gemm.md names no CSV"
    assert regenerated(document) == document, (
        f"the worklog table in gemm.md is not what {name} gives; run "
        f"python3 scripts/worklog.py table {name} --into gemm.md")


# ---------------------------------------------------------------- steps, parts and plans

def test_part_rows_are_ignored():
    """A build that leaves out half of the kernel never shows in the table, even named like a step."""
    rows, table = fixture_table()
    template = next(r for r in rows if r["kind"] == "explore")
    parts = [dict(template, kind="part", step=key, etops="9999") for key in ("shipped", "copies", "math")]
    assert worklog.make_table(rows + parts) == table


def test_only_the_last_steps_change_the_main_loop():
    """Every step before 11 builds the loop that loads, then multiplies, without spread copies;
    step 11 loads ahead, step 12 spreads the copies, every step before 13 loads C one piece at
    a time, and the last step is gemm.md's defaults."""
    for type_pair in sweep.TYPES:
        steps = {key: settings for key, _, settings in worklog.steps_for(type_pair)}
        keys = list(steps)
        assert keys[-4:] == ["skew32", "prefetch", "spread", "shipped"]
        for key in keys[1:-3]:
            assert steps[key]["PREFETCH_FRAGMENTS"] == 0, (type_pair, key)
            assert steps[key]["SPREAD_COPIES"] == 0, (type_pair, key)
        for key in keys[1:-1]:
            assert "one-load-epilogue" in steps[key]["changes"], (type_pair, key)
        assert steps["prefetch"] == {"PREFETCH_FRAGMENTS": 1, "SPREAD_COPIES": 0,
                                     "changes": ("one-load-epilogue",)}
        assert steps["spread"] == {"changes": ("one-load-epilogue",)}
        assert steps["shipped"] == {}
        assert steps["simple"] is None


class Args:
    def __init__(self, **kw):
        self.no_steps, self.steps, self.explore, self.parts = False, None, [], []
        self.__dict__.update(kw)


def test_plan_of_steps_parts_and_variants():
    types = ["F16_IN_F32_OUT", "TF32_IN_F32_OUT"]
    jobs = worklog.plan(types, Args(steps="simple,shipped", parts=["TF32_IN_F32_OUT"],
                                    explore=["F16_IN_F32_OUT"]))
    assert [(t, k, kind) for t, k, _, kind in jobs if kind == "step"] == [
        ("F16_IN_F32_OUT", "simple", "step"), ("F16_IN_F32_OUT", "shipped", "step"),
        ("TF32_IN_F32_OUT", "simple", "step"), ("TF32_IN_F32_OUT", "shipped", "step")]
    parts = [(t, k, s) for t, k, s, kind in jobs if kind == "part"]
    assert parts == [("TF32_IN_F32_OUT", "copies", {"changes": ("copies-only",)}),
                     ("TF32_IN_F32_OUT", "math", {"changes": ("math-only",)})]
    explored = [(t, k) for t, k, _, kind in jobs if kind == "explore"]
    assert explored and {t for t, _ in explored} == {"F16_IN_F32_OUT"}
    assert len(worklog.plan(types, Args(no_steps=True))) == 0


def test_a_variant_that_leaves_out_work_is_planned_as_a_part(monkeypatch):
    monkeypatch.setattr(worklog, "explore_variants", lambda t: [
        ("v", "a variant", {"STAGES": 2}), ("m", "math only", {"LEAVE_OUT_COPIES": 1})])
    jobs = worklog.plan(["I8_IN_I32_OUT"], Args(no_steps=True, explore=["I8_IN_I32_OUT"]))
    assert [(k, kind) for _, k, _, kind in jobs] == [("v", "explore"), ("m", "part")]


def test_layouts_are_named_as_the_report_names_them():
    """TN is A plain and B transposed (cuBLAS's names for gemm.md's row-major problem)."""
    assert worklog.LAYOUTS["TN"] == (0, 1) and worklog.LAYOUTS["NN"] == (0, 0)
    assert sorted(worklog.LAYOUTS.values()) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    document = (REPO / "gemm.md").read_text(encoding="utf-8")
    table = re.search(r'LAYOUT_NAMES\[2\]\[2\]\[3\] = \{\{"(\w\w)", "(\w\w)"\}, \{"(\w\w)", "(\w\w)"\}\};', document)
    assert table and "return LAYOUT_NAMES[TRANSPOSE_B][TRANSPOSE_A];" in document
    b0a0, b0a1, b1a0, b1a1 = table.groups()
    assert worklog.LAYOUTS == {b0a0: (0, 0), b0a1: (1, 0), b1a0: (0, 1), b1a1: (1, 1)}


def test_every_step_and_part_tangles_from_its_change_files(tmp_path):
    """Each earlier step's code lives whole in worklog/; every combination a step uses tangles."""
    combos = {tuple(worklog.changes(settings)) for t in sweep.TYPES
              for _, _, settings in worklog.steps_for(t) if settings}
    combos |= {tuple(worklog.changes(settings)) for _, _, settings in worklog.PARTS}
    combos |= {tuple(worklog.changes(settings)) for _, _, settings in worklog.hopper_steps() if settings}
    combos |= {tuple(worklog.changes(settings)) for _, _, settings in worklog.HOPPER_VARIANTS}
    combos |= {tuple(worklog.changes(settings)) for _, _, settings in worklog.HOPPER_PARTS}
    combos |= {tuple(worklog.changes(settings)) for _, _, settings in worklog.TILED_VARIANTS}
    combos |= {tuple(worklog.changes(settings)) for _, _, settings in worklog.HOPPER_UNCHECKED}
    combos.discard(())
    assert ("worklog/one-stage.md", "worklog/direct-epilogue.md", "worklog/loads-then-multiplies.md") \
        not in combos  # one stage has its own loop, not the pipeline's
    used = {name for combo in combos for name in combo}
    assert used == {f"worklog/{p.name}" for p in (REPO / "worklog").glob("*.md")}, "unused change file"
    for combo in combos:
        args = [a for name in combo for a in ("--change", name)]
        result = subprocess.run([sys.executable, "tangle.py", "gemm.md", *args, "-o",
                                 str(tmp_path / "step.cu")], cwd=REPO, capture_output=True, text=True)
        assert result.returncode == 0, (combo, result.stderr)
    # The last step is the shipped kernel: gemm.md alone, no change file.
    for t in sweep.TYPES:
        assert worklog.changes(worklog.steps_for(t)[-1][2]) == []


@pytest.mark.parametrize("given", ["missing.csv", "README.md", "tests/fixtures/sweep-sample.csv"])
def test_table_of_a_missing_or_wrong_csv_is_one_line_not_a_traceback(given):
    result = run_script("table", given)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("worklog.py: error: ") and len(result.stderr.splitlines()) == 1


def fake_gpu_path(tmp_path):
    """A PATH whose nvidia-smi answers nothing, as on a machine without a GPU."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'No devices were found' >&2\nexit 6\n")
    fake.chmod(0o755)
    import os
    return dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")


def test_worklog_run_without_a_gpu_names_itself(tmp_path):
    result = subprocess.run([sys.executable, "scripts/worklog.py", "run"], cwd=REPO,
                            capture_output=True, text=True, env=fake_gpu_path(tmp_path))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert result.stderr.startswith("worklog.py: no GPU") and "sweep.py" not in result.stderr


# Every script of scripts/ that needs a GPU, run where there is none or with a bad command line.
GPU_COMMANDS = [
    (["python3", "scripts/check_gpu.py"], 1, "check_gpu: no GPU"),
    (["python3", "scripts/check_gpu.py", "--part", "3/2"], 1, "check_gpu: --part 3/2: give I/N"),
    (["bash", "scripts/gpu_session.sh"], 2, "usage"),
    (["bash", "scripts/gpu_session.sh", "tiles"], 2, "no piece called 'tiles'"),
    (["python3", "scripts/candidate_gpu.py"], 2, "candidate_gpu: give --change FILE"),
    (["python3", "scripts/candidate_gpu.py", "--new-pairs", "F16_IN_OUT", "--base", "x.md"], 2,
     "candidate_gpu: give one of"),
    (["python3", "scripts/candidate_gpu.py", "--new-pairs", "E4M3_IN_BF16_OUT"], 1, "candidate_gpu: no GPU"),
    (["python3", "scripts/candidate_gpu.py", "--change", "hopper-ping-pong"], 1, "candidate_gpu: no GPU"),
    (["python3", "scripts/compare_gpu.py", "--base", "gemm.md"], 1, "compare_gpu: no GPU"),
    (["python3", "scripts/choices_gpu.py"], 1, "choices_gpu: no GPU"),
    (["python3", "scripts/choices_gpu.py", "--check"], 1, "choices_gpu: no GPU"),
    (["python3", "scripts/floors.py", "run"], 1, "floors.py: no GPU"),
    (["python3", "scripts/sweep.py", "run"], 1, "sweep.py: no GPU"),
    (["python3", "scripts/worklog.py", "run"], 1, "worklog.py: no GPU"),
    (["bash", "scripts/profile_gpu.sh"], 1, "profile_gpu: no GPU"),
]
# Sourced or imported by the others, never run.
LIBRARIES = {"gemmlib.py", "peerlib.py", "gpu_header.sh", "prose.py"}


@pytest.mark.parametrize("command, status, words", GPU_COMMANDS)
def test_gpu_scripts_without_a_gpu_or_arguments_say_so(tmp_path, command, status, words):
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True,
                            env=fake_gpu_path(tmp_path), timeout=120)
    assert result.returncode == status, result.stdout + result.stderr
    assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_few_entry_points_each_gpu_one_tested_above():
    """scripts/ keeps at most ten commands a user or contributor runs; each that needs a GPU
    is in GPU_COMMANDS (post_tables.py works from results/ alone)."""
    entry = {p.name for p in (REPO / "scripts").iterdir() if p.suffix in (".py", ".sh")} - LIBRARIES
    assert len(entry) <= 10, sorted(entry)
    tested = {Path(c[1]).name for c, _, _ in GPU_COMMANDS}
    assert entry - {"post_tables.py"} == tested, sorted(entry ^ tested)


def test_gpu_session_without_a_gpu_fails_with_the_scripts_message(tmp_path):
    result = subprocess.run(["bash", "scripts/gpu_session.sh", "check"], cwd=REPO, capture_output=True,
                            text=True, env=dict(fake_gpu_path(tmp_path), OUT=str(tmp_path / "out")),
                            timeout=60)
    assert result.returncode != 0
    assert "check_gpu: no GPU" in result.stdout + result.stderr


def test_make_sweep_runs_in_the_test_environment():
    """The sweep plots with the pinned matplotlib of .venv, not whatever python3 has."""
    result = subprocess.run(["make", "-n", "sweep"], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    command = [l for l in result.stdout.splitlines() if "sweep.py run" in l]
    assert command and command[-1].startswith(".venv/bin/python "), result.stdout


def test_the_code_excerpts_of_the_steps_are_made_from_the_code():
    """Each diff in the post is what `scripts/worklog.py excerpts` makes from gemm.md and worklog/ now."""
    import tempfile
    document = (REPO / "gemm.md").read_text(encoding="utf-8")
    assert document.count("<!-- excerpt:") == 2 * 5
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "post.md"
        copy.write_text(document.replace("+        load_fragments(f, stage, p", "+        load(f, stage, p"),
                        encoding="utf-8")
        result = subprocess.run([sys.executable, "scripts/worklog.py", "excerpts", "--into", str(copy)], cwd=REPO,
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        assert copy.read_text(encoding="utf-8") == document


def test_a_step_is_measured_with_its_own_tile(gemm_cu, nvcc, defines, tmp_path):
    """worklog.py run forces row 0 of TILES, the tile the step's settings define: the int8
    pairs' early steps use 128 x 256, which the run-time choice would not take for them."""
    binary = tmp_path / "i8-step"
    settings = ["-DBLOCK_M=128", "-DBLOCK_N=256", "-DBLOCK_K=64", "-DBLOCK_WARPS_M=2", "-DBLOCK_WARPS_N=4"]
    result = nvcc(gemm_cu, binary, defines("I8_IN_I32_OUT", None, 0, 1) + settings, arch="compute_90")
    assert result.returncode == 0, result.stderr
    assert worklog.worklog_tile(binary) == "128x256x64"
    tiles = subprocess.run([str(binary), "--help"], capture_output=True, text=True).stdout
    assert "64x64x128" in tiles, "the other tiles are still there; the step's is the first"


def test_plan_of_the_hopper_steps():
    types = ["F16_IN_F32_OUT", "I8_IN_I32_OUT", "BF16_IN_F32_OUT"]
    jobs = worklog.plan(types, Args(no_steps=True, hopper=True))
    assert [(t, k) for t, k, _, kind in jobs if kind == "hopper"] == [
        (t, k) for t in ("F16_IN_F32_OUT", "BF16_IN_F32_OUT")
        for k in ("h-one-role", "h-roles", "h-grouped", "h-batched", "h-widths", "h-persistent", "h-tma-store",
                  "h-last-wave", "h-c-pipeline", "h-taller", "h-square-waves")]
    variants = ("h-prefetch", "h-spread", "h-spread-all", "h-ping-pong", "h-sum-inside", "h-clusters",
                "h-prefetch-maps", "h-lean-steps", "h-one-barrier", "h-quiet-waits")
    assert [(t, k) for t, k, _, kind in jobs if kind == "hopper-explore"] == [
        ("F16_IN_F32_OUT", k) for k in variants] + [
        ("BF16_IN_F32_OUT", k) for k in variants]
    assert [(t, k) for t, k, _, kind in jobs if kind == "hopper-part"] == [
        (t, k) for t in ("F16_IN_F32_OUT", "BF16_IN_F32_OUT") for k in ("h-math", "h-copies", "h-no-epilogue")]
    assert all(kind.startswith("hopper") for *_, kind in jobs)
    steps = {k: s for k, _, s in worklog.hopper_steps()}
    assert steps["h-square-waves"] == {}, "the last step is the shipped kernel"
    group = ("hopper-group-m",)   # before H11, the tiles go in groups of GROUP_M rows
    assert steps["h-taller"] == {"changes": group}
    two = group + ("hopper-two-consumers",)   # before H10, every tile has two consumer groups
    assert steps["h-c-pipeline"] == {"changes": two}
    assert steps["h-last-wave"] == {"changes": two + ("hopper-c-from-global",)}   # before H9, C read by the consumers
    # the variants and parts measured before H11 have its tile order; those measured before H10
    # its table of tiles too (the ping-pong its own), and the one measured on H10 has H10's;
    # the one measured on H11 changes the shipped kernel alone
    assert all(worklog.changes(s)[0] == "worklog/hopper-group-m.md" for k, _, s in
               worklog.HOPPER_VARIANTS + worklog.HOPPER_PARTS if k != "h-quiet-waits")
    assert dict((k, s) for k, _, s in worklog.HOPPER_VARIANTS)["h-quiet-waits"] == {
        "changes": ("hopper-quiet-waits",)}
    assert all(worklog.changes(s)[1] == "worklog/hopper-two-consumers.md" for k, _, s in
               worklog.HOPPER_VARIANTS + worklog.HOPPER_PARTS if k not in ("h-ping-pong", "h-one-barrier", "h-quiet-waits"))
    assert dict((k, s) for k, _, s in worklog.HOPPER_VARIANTS)["h-one-barrier"] == {
        "changes": group + ("hopper-one-barrier-epilogue",)}
    whole = two + ("hopper-whole-waves", "hopper-c-from-global")   # before H8, the host never splits K
    assert steps["h-tma-store"] == {"changes": whole}
    before = whole + ("hopper-direct-epilogue", "hopper-one-width", "hopper-one-tile")
    assert steps["h-roles"] == {"GROUP_M": 1, "changes": before}
    assert steps["h-grouped"] == {"changes": before}
    batched = whole + ("hopper-batched-stores", "hopper-one-width", "hopper-one-tile")
    assert steps["h-batched"] == {"changes": batched}
    assert steps["h-widths"] == {"changes": whole + ("hopper-batched-stores", "hopper-one-tile")}
    assert steps["h-persistent"] == {"changes": whole + ("hopper-batched-stores",)}
    # --steps picks steps, variants and parts by their keys.
    picked = worklog.plan(types, Args(no_steps=True, hopper=True, steps="h-persistent,h-math"))
    assert [(k, kind) for _, k, _, kind in picked] == [("h-persistent", "hopper"), ("h-math", "hopper-part")] * 2
    assert all((REPO / f) .is_file() for f in worklog.changes(steps["h-one-role"]))
    assert len(worklog.plan(types, Args(no_steps=True))) == 0


def test_the_hopper_table_of_a_worklog_csv(tmp_path):
    header = "step,kind,settings,type,impl,etops,result,M,repeat,layout\n"
    lines = [line + ",10,TN" for line in [
        "h-one-role,hopper,x,F16_IN_F32_OUT,wgmma,300,PASS,8192",
        "h-roles,hopper,x,F16_IN_F32_OUT,wgmma,450,PASS,8192",
        "h-grouped,hopper,x,F16_IN_F32_OUT,wgmma,550,PASS,8192",
        "h-batched,hopper,x,F16_IN_F32_OUT,wgmma,580,PASS,8192",
        "h-widths,hopper,x,F16_IN_F32_OUT,wgmma,590,PASS,8192",
        "h-persistent,hopper,x,F16_IN_F32_OUT,wgmma,595,PASS,8192",
        "h-tma-store,hopper,x,F16_IN_F32_OUT,wgmma,598,PASS,8192",
        "h-last-wave,hopper,x,F16_IN_F32_OUT,wgmma,600,PASS,8192",
        "h-last-wave,hopper,x,F16_IN_F32_OUT,cublas,750,PASS,8192",
        "h-roles,hopper,x,BF16_IN_F32_OUT,wgmma,440,FAIL,8192",
        "h-math,hopper-part,x,F16_IN_F32_OUT,wgmma,700,,8192",
        "h-math,hopper-part,x,F16_IN_F32_OUT,wgmma,333,,3000",
        "h-batched,hopper,x,F16_IN_F32_OUT,wgmma,410,PASS,3000",
        "h-last-wave,hopper,x,F16_IN_F32_OUT,wgmma,500,PASS,3000",
        "h-last-wave,hopper,x,F16_IN_F32_OUT,cublas,555,PASS,3000",
        "h-prefetch,hopper-explore,x,F16_IN_F32_OUT,wgmma,650,PASS,8192"]]
    path = tmp_path / "w.csv"
    path.write_text("# gpu: test\n" + header + "\n".join(lines) + "\n")
    _, rows = worklog.read_worklog(path)
    table = worklog.make_hopper_table(rows)
    expected = worklog.HOPPER_EXPECTED["h-one-role"]
    assert f"| H1. TMA and wgmma, no producer, 2 stages | {expected} | 300 |" in table
    assert "| cuBLAS |  | 750 | — | 555 |" in table and "| H8 / cuBLAS |  | 80 % | — | 90 % |" in table
    assert "H9." not in table   # a step the runs do not have has no row
    h9 = worklog.make_hopper_table(rows + [dict(rows[0], step="h-c-pipeline", etops=690.0)])
    assert "| H9 / cuBLAS |  | 92 % |" in h9   # no longer the last step
    shipped = worklog.make_hopper_table(rows + [dict(rows[0], step="h-square-waves", etops=690.0)])
    assert "| shipped / cuBLAS |  | 92 % |" in shipped
    assert "| step | expected | f16→f32 | bf16→f32 | f16→f32, 3000³ |" in table   # the smaller size: one pair
    assert "| 580 | — | 410 |" in table and "440" not in table   # a failed run is not a measurement
    # `table --into` from a file of Hopper steps alone fills only the Hopper table.
    document = tmp_path / "post.md"
    document.write_text("<!-- worklog:begin -->\nold\n<!-- worklog:end -->\n"
                        "<!-- hopper-worklog:begin -->\n<!-- hopper-worklog:end -->\n")
    assert worklog.main(["table", str(path), "--into", str(document)]) == 0
    text = document.read_text()
    assert "old" in text and "| cuBLAS |  | 750 |" in text
    assert "at 8192³ (the last column 3000³), layout TN" in text
    # The parts table: the kernel beside its wgmmas alone (the ceiling), at the largest size.
    parts = worklog.make_hopper_parts_table(rows)
    row = next(line for line in parts.splitlines() if line.startswith("| f16→f32 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "700" and cells[4:6] == ["600", "750"] and cells[6] == "86 %"
    # A step whose runs all failed is no step of either table: both compare H8 with cuBLAS.
    failed = rows + [dict(rows[0], step="h-c-pipeline", etops=690.0, result="FAIL")]
    assert "| H8 / cuBLAS |" in worklog.make_hopper_table(failed) and "H9." not in worklog.make_hopper_table(failed)
    assert "| f16→f32 | 700 | — | — | 600 | 750 | 86 % |" in worklog.make_hopper_parts_table(failed)
