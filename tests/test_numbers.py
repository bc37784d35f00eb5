"""Measured numbers in the post come from results/: tables and prose numbers are generated.

The tables of measured numbers in gemm.md are made by scripts (worklog.py
table, post_tables.py, floors.py report) from the CSVs in results/, and the
tests here regenerate them and compare. The numbers of the prose are filled by
scripts/prose.py (tests/test_prose.py holds them fresh and finds any typed by
hand); the tests here check what the prose says of those numbers in words
(which is faster, which passed, where a claim stops holding) against the files
they come from, and that those files are whole: every run passed, every file
the post names is in results/.
"""

import csv
import fnmatch
import importlib.util
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def load(name):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(REPO / "scripts"))
    spec.loader.exec_module(module)
    return module


sweep, worklog, numbers, floors, peers, prose = (load("sweep"), load("worklog"), load("post_tables"),
                                              load("floors"), load("peerlib"), load("prose"))
shown = worklog.shown   # a number as the tables show it, so per cents follow from what is written
POST = (REPO / "gemm.md").read_text(encoding="utf-8")
PROSE = re.sub(r"\s+", " ", POST)
# The worklog's first session, whose numbers Appendix F quotes as each step was measured.
W = {(r["step"], r["kind"], r["impl"], r["type"]): r["etops"]
     for r in worklog.read_worklog(REPO / numbers.WORKLOG)[1] if r.get("result") != "FAIL"}
F16, F16F16, BF16, TF32, F64, I8, U8 = ("F16_IN_F32_OUT", "F16_IN_OUT", "BF16_IN_F32_OUT",
                                        "TF32_IN_F32_OUT", "F64_IN_OUT", "I8_IN_I32_OUT", "U8_IN_I32_OUT")
SIXTEEN = [F16, F16F16, BF16]


def step(key, t):
    return W[(key, "step", "tiled", t)]


def test_each_expectation_in_the_table_is_reasoned_in_appendix_f():
    """The main path's table says in a few words what each step was expected to do; every
    number of those words is in that step's item of Appendix F, which gives the reasoning."""
    items = POST[POST.index("## Each step, predicted and measured"):POST.index("## What each step changed")]
    numbered = dict(re.findall(r"\n(\d+)\. (.*?)(?=\n\d+\. |\Z)", items, re.S))
    for key, title in worklog.STEP_TITLES.items():
        number = re.match(r"(\d+)", title)
        if not number or key in worklog.NOT_KEPT:
            continue
        item = re.sub(r"\s+", " ", numbered[number[1]])
        for figure in re.findall(r"\d+", worklog.EXPECTED[key]):
            assert figure in item, f"step {number[1]}: {worklog.EXPECTED[key]!r} is not reasoned in Appendix F"
    hopper = POST[POST.index("## The Hopper kernel's steps"):POST.index("## A skew that should not help")]
    items = dict(re.findall(r"\n(\d+)\. (.*?)(?=\n\d+\. |\Z)", hopper, re.S))
    for n, key in enumerate(worklog.HOPPER_EXPECTED, 1):
        item = re.sub(r"\s+", " ", items[str(n)])
        for figure in re.findall(r"\d+", worklog.HOPPER_EXPECTED[key]):
            assert figure in item, f"H{n}: {worklog.HOPPER_EXPECTED[key]!r} is not reasoned in Appendix F"


def test_the_sweep_tables_in_gemm_md_are_generated():
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "post.md"
        edited = re.sub(r"(<!-- at8192:begin -->\n(?:[^\n]*\n){2}\| f16→f32 \| )[\d.]+", r"\g<1>99.9", POST)
        assert edited != POST
        copy.write_text(edited, encoding="utf-8")
        result = subprocess.run([sys.executable, "scripts/post_tables.py", "--into", str(copy)], cwd=REPO,
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        assert copy.read_text(encoding="utf-8") == POST


def test_numbers_without_markers_is_an_error():
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "post.md"
        copy.write_text("no markers\n")
        result = subprocess.run([sys.executable, "scripts/post_tables.py", "--into", str(copy)], cwd=REPO,
                                capture_output=True, text=True)
        assert result.returncode == 1 and "markers" in result.stderr and "Traceback" not in result.stderr


def test_the_rerun_of_the_worklog_is_described_by_its_numbers():
    _, rows = worklog.read_worklog(REPO / numbers.WORKLOG_AGAIN)
    again = {(r["step"], r["kind"], r["impl"], r["type"]): r["etops"] for r in rows if r.get("result") != "FAIL"}
    devs = {k: 100 * (again[k] / W[k] - 1) for k in again if k in W and k[1:3] == ("step", "tiled")}
    shipped = [d for k, d in devs.items() if k[0] == "spread"]   # step 12, then the kernel as shipped
    assert len(shipped) == 7 and len(devs) == 7 * 13
    # the spans are generated (prose.reruns); the words: step 12 closer than the earlier steps
    assert "the kernel then shipped, step 12, came within" in PROSE
    assert max(map(abs, shipped)) < max(map(abs, devs.values()))


def test_the_counts_of_runs_and_checks_are_the_files():
    rows = sweep.read_csv(REPO / numbers.SWEEP)[1]
    runs = {(r["type"], r["transpose_b"], r["M"]) for r in rows}
    assert len(rows) == 420 and len(runs) == 140 and all(r["result"] == "PASS" for r in rows)
    lines = (REPO / "results/h100-2026-11-23-check-split-results.txt").read_text().splitlines()
    passed = sum(line.startswith("PASS ") for line in lines)
    failed = sum(line.startswith("FAIL ") for line in lines)
    log = (REPO / "results/h100-2026-11-23-check-split.txt").read_text()
    assert (passed, failed) == (704, 0) and log.rstrip().endswith("704 passed, 0 failed")
    assert "gemm.md at 7488395" in log and "gemm.md at 7488395" in PROSE
    assert sum("--tile=all" in line for line in lines) > 400, "every tile was checked"
    assert sum("--split-k=3" in line for line in lines) >= 68, "split K, forced, in every configuration"
    assert sum("64x64x16384" in line for line in lines) == 68, "split K, chosen, in every configuration"
    assert f"`{numbers.SWEEP[:-4]}.*`" in PROSE
    assert f"{numbers.SWEEP[:-4]}.svg" in POST


def test_the_claims_about_split_k_are_its_measurements():
    runs = numbers.long_k_runs()
    assert len(runs) == 4 * 4
    gains = {key: split / unsplit for key, (_, _, split, unsplit, _) in runs.items()}
    shares = {key: split / cublas for key, (_, _, split, _, cublas) in runs.items()}
    long_sizes = numbers.LONG_K_SIZES
    # "doubles the speed or better where the tile leaves most of the GPU idle"
    for pair in numbers.LONG_K_PAIRS:
        for size in long_sizes[:2]:
            assert gains[(pair, size)] >= 2, (pair, size)
        # "gains least at 1024 x 1024 x 16384"
        assert gains[(pair, long_sizes[2])] == min(gains[(pair, s)] for s in long_sizes)
    assert "Splitting doubles the speed or better where the tile leaves most of the GPU" in " ".join(PROSE.split())
    # "about half of cuBLAS": 48 to 59 % in the table
    assert all(0.45 <= shares[(p, s)] <= 0.6 for p in numbers.LONG_K_PAIRS for s in long_sizes)
    # "in 16 slices of 1024, wins again", and the table's pair runs every size
    tile, slices, *_ = runs[("F16_IN_F32_OUT", long_sizes[0])]
    assert (tile, slices) == ("128x256x64", 16)
    assert "picks the worklog's tile again, in 16 slices of 1024; for int8, `64x128x128` in 8" in " ".join(PROSE.split())
    assert runs[("I8_IN_I32_OUT", long_sizes[0])][:2] == ("64x128x128", 8)
    # At 512^3 nothing is split, split or not.
    assert all(runs[(p, (512, 512, 512))][1] == 1 for p in numbers.LONG_K_PAIRS)


def pct_range(values, digits=0):
    """"a–b" of values as per cents, whole or with `digits` decimals, as the prose writes a range
    (a minus sign where one is negative)."""
    form = lambda x: f"{100 * x:.{digits}f}".replace("-", "−")
    return f"{form(min(values))}–{form(max(values))}"


def regenerated_by_floors_report(marker, old, new, csvs, *options):
    """Whether floors.py report, given `csvs` (copied into a temporary folder, where it writes
    its .md and .svg) and `options`, turns the post with `old` changed to `new` after `marker`
    back into the post: that the table there is the report's."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "post.md"
        start = POST.index(marker)
        edited = POST[:start] + POST[start:].replace(old, new, 1)
        assert edited != POST
        copy.write_text(edited, encoding="utf-8")
        for f in csvs:
            shutil.copy(REPO / f, Path(folder) / Path(f).name)
        result = subprocess.run([sys.executable, "scripts/floors.py", "report",
                                 *[str(Path(folder) / Path(f).name) for f in csvs], "--into", str(copy), *options],
                                cwd=REPO, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        return copy.read_text(encoding="utf-8") == POST


def test_the_floors_table_in_gemm_md_is_generated():
    assert regenerated_by_floors_report("<!-- floors:begin -->", "| 256³ |", "| 999³ |", FLOORS)


ENERGY_FLOORS = numbers.ENERGY


def test_the_energy_table_in_gemm_md_is_generated():
    """"Run to run"'s table of the Hopper kernel against cuBLAS in speed, per clock and in energy
    is floors.py's, from one session's CSV; and it says what the Hopper chapter says of it: in
    the steady state the kernel needs fewer cycles (per clock above 100 %) at a lower clock."""
    assert regenerated_by_floors_report("<!-- energy:begin -->", "| f16→f32 | NN |", "| f16→f32 | XX |",
                                        [ENERGY_FLOORS], "--table", "energy")
    found = floors.conditions(sweep.read_csv(REPO / ENERGY_FLOORS)[1])
    steady = [m for key, m in found.items() if key[3] == "sustained"]
    assert len(steady) == 10   # the five 16-bit pairs, two layouts
    assert all(m["per_clock"] > 1 and m["clock"] < m["cublas_clock"] for m in steady)
    # more power per cycle: the kernel's power over its clock above cuBLAS's, in every row
    assert all(m["power"] / m["clock"] > m["cublas_power"] / m["cublas_clock"] for m in steady)
    assert "It needs no more cycles than cuBLAS, but draws more power per cycle, so the GPU, at its power cap, clocks it lower" in PROSE
    assert "of cuBLAS's speed per clock, at" in PROSE


PEERS, PEERS_INT8 = numbers.PEERS, numbers.PEERS_INT8


def test_the_cutlass_table_in_gemm_md_is_generated():
    """"Beside CUTLASS" is floors.py's table (peerlib.make_table) of one session's CSV, and its prose says what the
    table shows: the tiled kernel behind CUTLASS's best sm80 GEMM in every cell, the Hopper
    kernel ahead of its best Hopper GEMM in most cells and a few per cent behind in the rest."""
    assert regenerated_by_floors_report("<!-- peers:begin -->", "| f16→f32 | 8192³ |", "| f16→f32 | 9999³ |",
                                        [PEERS], "--table", "peers")
    speeds = peers.best(sweep.read_csv(REPO / PEERS)[1])
    cells = {key[:3] for key in speeds}
    def top(cell, kind, of=speeds):   # the fastest CUTLASS configuration of a kind, in a session's speeds
        return max(v for k, v in of.items() if k[:3] == cell and peers.kind_of(k[3]) == kind)
    tiled = [speeds[(*c, "tiled")] / top(c, "sm80") for c in cells]
    hopper = [speeds[(*c, "wgmma")] / top(c, "sm90") for c in cells]
    assert max(tiled) < 1
    assert sum(h >= 1 for h in hopper) > len(hopper) / 2 and min(hopper) > 0.95
    assert "The tiled kernel trails CUTLASS's sm80\nGEMMs everywhere" in POST
    assert "a few per cent behind in the others" in POST
    # The mma.sync kernel, where it ran: ahead of the tiled kernel in every cell, level with
    # CUTLASS (a share shown as 100 % or more) from 2048^3 up and behind it at 1024^3, and the
    # ranges of both as the table's per cents (of the speeds as shown).
    mma = [c for c in cells if (*c, "mma") in speeds]
    assert mma and all(speeds[(*c, "tiled")] < speeds[(*c, "mma")] for c in mma)
    m = {c: peers.shown_share(speeds[(*c, "mma")], top(c, "sm80")) for c in mma}
    assert all((m[c] >= 100) == (c[2][0] >= 2048) for c in mma), m
    assert ("ahead of the tiled kernel in every cell, level with CUTLASS or ahead of it from $2048^3$ up, "
            "and behind it at $1024^3$, where CUTLASS's 64 × 128 tile in four stages fills the GPU better."
            ) in " ".join(POST.split())
    assert all(peers.kind_of(k[3]) != "sm80" or k[2][0] != 1024 or "64x128_s4" in k[3] or
               v < speeds[(*k[:3], "cutlass80_64x128_s4")] for k, v in speeds.items()), "64 x 128 s4 the best at 1024^3"
    assert ("faster than the tiled kernel at every size, and for 16-bit pairs level with CUTLASS from $2048^3$ up (CUTLASS's own session, in its fold)."
            in " ".join(POST.split()))
    # int8 on the mma.sync kernel, in a session of its own: ahead of the tiled kernel everywhere
    speeds8 = peers.best(sweep.read_csv(REPO / PEERS_INT8)[1])
    cells8 = {key[:3] for key in speeds8}
    assert {c[0] for c in cells8} == {"I8_IN_I32_OUT"} and {c[2][0] for c in cells8} == {8192, 4096, 2048, 1024}
    assert all(speeds8[(*c, "tiled")] < speeds8[(*c, "mma")] for c in cells8)


def test_the_hopper_worklog_and_parts_tables_in_gemm_md_are_generated():
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "post.md"
        # a cell of each table edited by hand: the first number of the row of step H2, and of
        # the parts' row of f16->f32
        edited = re.sub(r"(\| H2\. [^|]*\|[^|]*\| )[\d.]+ \|", r"\g<1>999 |", POST, count=1)
        assert edited != POST
        parts = edited.index("<!-- hopper-parts:begin -->")
        edited = edited[:parts] + re.sub(r"\| f16→f32 \| [\d.]+ \|", "| f16→f32 | 999 |", edited[parts:], count=1)
        assert edited.count("999 |") == POST.count("999 |") + 2
        copy.write_text(edited, encoding="utf-8")
        for csv_file, table in ((HOPPER_TABLE, "hopper-worklog"), (HOPPER_PARTS, "hopper-parts")):
            result = subprocess.run([sys.executable, "scripts/worklog.py", "table", csv_file, "--into", str(copy),
                                     "--tables", table], cwd=REPO, capture_output=True, text=True)
            assert result.returncode == 0, result.stderr
        assert copy.read_text(encoding="utf-8") == POST


# The files the post's tables and prose are made from: post_tables.py's names, in one place.
HOPPER_WORKLOG = numbers.HOPPER_FIRST        # steps 1-6, Appendix F
HOPPER_TABLE = numbers.EXAMPLE               # all nine, in the running example's session: the steps' table
FLOORS = numbers.H9_FLOORS
HOPPER_PARTS = HOPPER_TABLE                  # the parts' table, step 9's run
HOPPER_STEP7 = numbers.HOPPER_STEP7          # step 7 against step 6
HOPPER_EPILOGUE = numbers.HOPPER_EPILOGUE
HOPPER_COMPARE = "results/h100-2026-11-25-compare-persistent.csv"


def compare_shares(path):
    """{(pair, "MxNxK"): (the base build's median share of cuBLAS, the new build's, new / base)}
    of a compare_gpu.py CSV of the Hopper kernel, as prose.turns reads it."""
    found = prose.turns(str(Path(path).relative_to(REPO)), shares=True)
    return {key: (v["base"], v["new"], v["new"] / v["base"]) for key, v in found.items()}


def compare_gains(path):
    """{size: [the new build's median share of cuBLAS over the base build's, - 1, per 16-bit
    pair]} of a compare_gpu.py CSV of the cubes 8192^3, 4096^3 and 3000^3."""
    shares = compare_shares(path)
    return {n: [shares[(t, f"{n}x{n}x{n}")][2] - 1 for t in SIXTEEN]
            for n in ("8192", "4096", "3000") if (SIXTEEN[0], f"{n}x{n}x{n}") in shares}


def test_the_claims_about_the_hopper_kernel_are_its_measurements():
    text = " ".join(PROSE.split())
    # The worklog of the Hopper kernel: its steps and its parts, at 8192^3 and 3000^3.
    _, hrows = worklog.read_worklog(REPO / HOPPER_WORKLOG)
    assert all(r["result"] == "PASS" for r in hrows if r["kind"] in ("hopper", "hopper-explore"))
    H = {(r["step"], r["impl"], r["type"], int(r["M"])): r["etops"] for r in hrows}
    keys = ("h-one-role", "h-roles", "h-grouped", "h-batched", "h-widths", "h-persistent", "h-math", "h-copies",
            "h-no-epilogue")
    h = {key: [H[(key, "wgmma", t, 8192)] for t in SIXTEEN] for key in keys}
    shown = worklog.shown
    ratio = lambda a, b, g=h: [shown(x) / shown(y) for x, y in zip(g[a], g[b] if isinstance(b, str) else b)]
    # a step of 128 x 256 x 64 at the datasheet's peak per multiprocessor and clock (989 TFLOP/s
    # on 132 multiprocessors at 1.83 GHz); wgmma alone does less per clock
    peak = 989e12 / 132 / 1.83e9
    assert abs(peak - 4096) < 5
    assert min(h["h-math"]) * 1e12 / 132 / 1.98e9 < peak
    # Step 5: the width by the waves (its arithmetic generated from HOPPER_WIDTHS, prose.waves):
    # at 3000^3 both widths take the same number of waves, so the narrower one's speed decides
    assert prose.waves(prose.hopper_blocks(3000, 256)) == prose.waves(prose.hopper_blocks(3000, 192))
    # Step 6: persistent blocks, in the table and taking turns with step 5 (compare_gpu.py).
    # The parts, from the parts table's run, whose kernel is the last step, H9.
    _, prows = worklog.read_worklog(REPO / HOPPER_PARTS)
    assert all(r["result"] == "PASS" for r in prows if r["kind"] == "hopper")
    P = {(r["step"], r["impl"], r["type"], int(r["M"])): r["etops"] for r in prows}
    last = worklog.latest_hopper_step(prows)   # H9, the kernel of that run
    p = {key: [P[(key, "wgmma", t, 8192)] for t in SIXTEEN] for key in ("h-math", "h-copies", "h-no-epilogue", last)}
    pcublas = [P[(last, "cublas", t, 8192)] for t in SIXTEEN]
    # the parts' numbers are generated (prose.HW); what the words claim holds:
    assert all(x > c for x, c in zip(p["h-no-epilogue"], pcublas))
    # Step 7 against step 6: in step 7's worklog run, and taking turns (compare_gpu.py).
    _, trows = worklog.read_worklog(REPO / HOPPER_STEP7)
    assert all(r["result"] == "PASS" for r in trows if r["kind"] == "hopper")
    T = {(r["step"], r["impl"], r["type"], int(r["M"])): r["etops"] for r in trows}
    g = {key: [T[(key, "wgmma", t, 8192)] for t in SIXTEEN] for key in keys + ("h-tma-store",)}
    assert h["h-copies"][1] < h["h-persistent"][1] and "no faster than the whole kernel" in text
    # With H7, beta 0 against beta 3, the kernel's own speed (not its share of cuBLAS).
    rows = list(csv.DictReader(line for line in (REPO / "results/h100-2026-11-25-compare-beta-zero-h7.csv")
                               .open(encoding="utf-8") if not line.startswith("#")))
    def beta_gain(size):
        def median(build, t):
            return statistics.median(float(r["etops"]) for r in rows if r["M"] == size and r["type"] == t
                                     and r["impl"] == "wgmma" and r["compared"] == build)
        return [median("new", t) / median("base", t) - 1 for t in SIXTEEN]
    # two fifths to two thirds of what the epilogue costs at 8192^3 is reading C
    halves = [b / (e - 1) for b, e in zip(beta_gain("8192"), ratio("h-no-epilogue", "h-tma-store", g))]
    assert all(0.38 <= x <= 0.67 for x in halves), halves
    assert "After step H7 reading C is two fifths to two thirds of what is left" in text
    # The paragraph under the table: the table's own run.
    _, rows3 = worklog.read_worklog(REPO / HOPPER_TABLE)
    assert all(r["result"] == "PASS" for r in rows3 if r["kind"] == "hopper")
    T3 = {(r["step"], r["impl"], r["type"], int(r["M"])): r["etops"] for r in rows3}
    assert "H3 grouped the blocks;" in text
    # The second run's steps 1 to 6 beside the first's, which Appendix F quotes.
    shown_cells = [(k, t, 8192) for k in keys[:6] for t in SIXTEEN]
    assert all(abs(T3[(k, "wgmma", t, n)] / H[(k, "wgmma", t, n)] - 1) < 0.05 for k, t, n in shown_cells)
    within = re.search(r"whose cells for steps 1 to 6 lie within <!--n [^>]*-->([\d.]+)<!--/n--> % of the first run's", text)
    assert within and float(within[1]) < 5   # generated, from these cells
    # The epilogue's experiments (Appendix G).
    epilogue = {}
    for size in (8192, 4096, 3000):
        _, erows = worklog.read_worklog(REPO / HOPPER_EPILOGUE.format(size))
        assert all(r["result"] == "PASS" for r in erows if r["step"] != "h-no-epilogue")
        e = {(r["step"], r["type"]): r["etops"] for r in erows if r["impl"] == "wgmma"}
        epilogue[size] = {k: [e[(k, t)] / e[("h-batched", t)] - 1 for t in SIXTEEN]
                          for k in ("h-spread", "h-spread-all", "h-no-epilogue")}
    # (their per cents generated); "a third at 3000^3" is said in words:
    assert all(0.32 <= x <= 0.35 for x in epilogue[3000]["h-no-epilogue"])
    # Reading C, --beta 3 against --beta 0 in turns: its gains are generated (prose.own_gains)
    # The sweep with the Hopper kernel.
    _, rows = sweep.read_csv(REPO / numbers.HOPPER_SWEEP)
    assert rows and all(r["result"] == "PASS" for r in rows)
    speed = {(r["type"], r["transpose_b"], r["M"], r["impl"]): r["etops"] for r in rows}
    keys = {(t, b, m) for t, b, m, _ in speed}
    share = {k: speed[k + ("wgmma",)] / speed[k + ("cublas",)] for k in keys}
    assert [k[:2] for k in sorted(keys) if k[2] == 16384 and share[k] > 1] == [(BF16, 0), (F16F16, 0)]
    assert "and at $16384^3$ for bf16→f32 and f16→f16 with B plain" in text
    at3000 = [share[k] for k in keys if k[2] == 3000 and not (k[0] == F16F16 and k[1] == 1)]
    assert pct_range(at3000) == "76–78" and share[(F16F16, 1, 3000)] > 0.95
    # The runs of that day as shipped, the variants that ask for C early, the launches profiled,
    # nvidia-smi's clocks and the prototype: their numbers are generated (prose.that_day,
    # prefetch_variants, launches_profiled, clocks_sampled, prototype, prototype_clusters); what
    # the words say of them holds.
    assert all(len(v) >= 4 for v in prose.that_day().values())   # (their count generated)
    check = (REPO / "results/nvidia-h100-80gb-hbm3-2026-11-23-wgmma-prefetch-check.txt").read_text().splitlines()
    assert sum(x.startswith("PASS") for x in check) == 96 and not any(x.startswith("FAIL") for x in check)
    assert len(prose.launches_profiled("ms")) == len(prose.launches_profiled("cycles")) == 20
    smi = list(csv.reader((REPO / "results/nvidia-h100-80gb-hbm3-2026-11-23-wgmma-spread-smi.csv").open()))[1:]
    assert any(len(r) == 5 and r[4].strip() == "0x0000000000000004" for r in smi)   # the software power cap
    assert "no FAILED lines" in (REPO / "results/hopper-proto-2/hopper-summary.txt").read_text()
    assert max(prose.prototype(True, True)) < min(prose.prototype(True, False))   # clusters first ran slower
    log = (REPO / "results/hopper-proto-3/cluster.txt").read_text()
    assert "FAILED" not in log and log.count("correctness: PASS") == 31 and "ERROR SUMMARY: 0 errors" in log
    assert len(prose.prototype_clusters()) == 3 and all(g > 0 for g in prose.prototype_clusters())
    # (the prototype's cuBLAS against ./gemm's is generated too)
    # The check with the Hopper kernel as shipped.
    lines = (REPO / "results/h100-2026-11-23-check-batched-results.txt").read_text().splitlines()
    assert sum(x.startswith("PASS ") for x in lines) == 710 and not any(x.startswith("FAIL") for x in lines)
    assert "gemm.md at cc2f104" in (REPO / "results/h100-2026-11-23-check-batched.txt").read_text() or \
        "cc2f104" in text
    notes = (REPO / "results/h100-2026-11-23-check-batched-sanitizers.txt").read_text()
    assert notes.count("exit 0") == 3


def test_the_results_chapter_is_its_session():
    """The results chapter's prose quotes the one session its table is made from."""
    text = " ".join(POST.split())
    rows = sweep.read_csv(REPO / numbers.SESSION)[1]
    assert len(rows) == 750 and all(r["result"] == "PASS" for r in rows)
    assert len({(r["type"], r["transpose_b"], r["M"]) for r in rows}) == 220
    assert {r["impl"] for r in rows} == {"simple", "tiled", "dmma", "mma", "wgmma", "cublas"}
    # the double kernel: double's runs only
    assert {(r["type"], r["transpose_b"]) for r in rows if r["impl"] == "dmma"} == {("F64_IN_OUT", b) for b in (0, 1)}
    # the Hopper kernel: every run but double's, FP8 included
    hopper = {(r["type"], r["transpose_b"]) for r in rows if r["impl"] == "wgmma"}
    # the pairs that came after the session: a sweep of their own, every run passed; with it,
    # every pair the program has is measured once
    later = sweep.read_csv(REPO / numbers.LATER)[1]
    later_types = {r["type"] for r in later}
    assert all(r["result"] == "PASS" for r in later)
    assert len({(r["type"], r["transpose_b"], r["M"]) for r in later}) == 40
    assert {r["type"] for r in rows} | later_types == set(sweep.TYPES)
    assert not {r["type"] for r in rows} & later_types
    assert hopper == {(t, b) for t in sweep.TYPES if t not in ("F64_IN_OUT", *later_types) for b in (0, 1)}
    # the chapter's numbers, and the simple kernel's where the post says why it is slow, are
    # generated from this session (scripts/prose.py; tests/test_prose.py holds them fresh)
    # across sizes: its numbers are generated; what its words claim, that the Hopper kernel
    # passes cuBLAS at 2048^3 and 4096^3 for those pairs and int8 TN at every size, holds
    share = lambda t, b, n: cells_at(t, b, n, "wgmma") / cells_at(t, b, n, "cublas")
    cells_at = lambda t, b, n, k: next(r["etops"] for r in rows if (r["type"], r["transpose_b"], r["M"], r["impl"])
                                       == (t, b, n, k) and r["N"] == r["K"] == n)
    assert all(share(t, b, n) > 1 for t in (F16, BF16) for b in (0, 1) for n in (2048, 4096))
    assert all(share(I8, 1, n) > 1 for n in {r["M"] for r in rows if r["type"] == I8})
    # The floors sweep of step H9, the next section: below 2048 ahead of the tiled kernel in
    # every cell; from 2048 up at worst 13 % short of cuBLAS, at the largest problems. Every
    # cell was reached, so the table has no dashes.
    _, frows = sweep.read_csv(REPO / FLOORS[0])
    for f in FLOORS[1:]:
        frows += sweep.read_csv(REPO / f)[1]
    assert all(r["result"] == "PASS" for r in frows)
    assert "H9" in POST[POST.index("## The Hopper kernel in every layout"):][:200]
    found = floors.cells(frows)
    assert len(found) == 3 * 4 * len(floors.PROBLEMS)
    assert "A dash marks" not in text
    small = [s for (_, _, p), s in found.items() if min(p) < 2048]
    assert all(s["wgmma"] > s["tiled"] for s in small)
    below = [cell for cell, s in found.items() if min(cell[2]) < 2048 and not floors.judge(s, cell[2])[1]]
    assert len(below) == 3 and {cell[2] for cell in below} == {(1024, 1024, 1024)}
    assert ("Below 2048 the Hopper kernel beats the tiled kernel in every cell, by" in text
            and "% or more, though three cells of $1024^3$ miss 80 % of cuBLAS;" in text)
    # the GPU checks the chapter's Correctness fold lists, a row each: the runs passed are its logs'
    fold = POST[POST.index("<summary>The GPU checks, change by change"):POST.index("[^check]:")]
    table = {m[1]: (m[2], m[3], int(m[4])) for m in
             re.finditer(r"^\| (\S+) \| ([^|]+) \| (H100|H200) \| (\d+) \|$", fold, re.M)}
    assert len(table) == 34 and "No run failed." in fold

    def passed(name, commit=None, gpu="H100 80GB HBM3"):
        log = (REPO / f"results/{name}").read_text()
        assert (commit is None or commit in log) and gpu in log, name
        found = re.search(r"^(\d+) passed, (\d+) failed$", log, re.M)
        assert found and found[2] == "0", name
        return int(found[1])

    counts = []
    for part in ("16bit", "others"):
        results = (REPO / f"results/h100-2026-11-25-check-beta0-{part}-results.txt").read_text()
        assert "--beta 0" in results and "FAIL" not in results
        counts.append(passed(f"h100-2026-11-25-check-beta0-{part}.txt", "aca5085"))
    assert table["aca5085"][2] == sum(counts)
    assert table["be24f05"][2] == passed("h100-2026-11-25-check-widths.txt")
    assert table["0ec7bbb"][2] == passed("h100-2026-11-25-check-tma-store.txt")
    assert "hopper-last-wave.md" in (REPO / "results/h100-2026-11-25-check-last-wave.txt").read_text()
    assert table["`hopper-last-wave.md`"][2] == passed("h100-2026-11-25-check-last-wave.txt")
    h9 = [(REPO / f"results/h100-2026-11-25-check-c-pipeline-{i}.txt").read_text() for i in (1, 2)]
    assert all(f"part {i} of 2" in log and "483caeb" in log for i, log in enumerate(h9, 1))
    assert table["483caeb"][2] == sum(passed(f"h100-2026-11-25-check-c-pipeline-{i}.txt") for i in (1, 2))
    assert all("--kernel=wgmma" in (REPO / f"results/h100-2026-11-25-check-8bit-tf32{part}-results.txt").read_text()
               for part in ("", "-memcheck"))
    assert table["9f84e47"][2] == passed("h100-2026-11-25-check-8bit-tf32.txt", "9f84e47")
    assert table["bcf2d28"][2] == passed("h100-2026-11-25-check-8bit-tf32-memcheck.txt", "bcf2d28")
    turned = (REPO / "results/h100-2026-11-25-check-8bit-tf32-turned-results.txt").read_text()
    assert "FAIL" not in turned
    # every shape of the three pairs in NN, NT and TT, the Hopper kernel's memcheck among them
    assert {m[1] for m in re.finditer(r"^PASS \S+-\S+-(\d\d) ", turned, re.M)} == {"00", "10", "11"}
    assert turned.count("--kernel=wgmma") >= 21
    assert table["b930576"][2] == passed("h100-2026-11-25-check-8bit-tf32-turned.txt", "b930576")
    memchecked = (REPO / "results/h100-2026-11-25-check-8bit-tf32-memcheck-results.txt").read_text()
    assert "PASS TF32_IN_F32_OUT-16x16x8-01 memcheck 37x41x300 --kernel=wgmma" in memchecked
    h200 = ["h200-2026-11-26-check-16bit-1.txt", "h200-2026-11-26-check-16bit-2.txt", "h200-2026-11-26-check-f64.txt"]
    assert table["cc9887b"][1:] == ("H200", sum(passed(n, "cc9887b", "NVIDIA H200") for n in h200))
    dmma = (REPO / "results/h100-2026-11-26-check-dmma-2-results.txt").read_text()
    assert "FAIL" not in dmma and {m[1] for m in re.finditer(r"^PASS F64_IN_OUT-\S+-(\d\d) ", dmma, re.M)} == {"00", "01", "10", "11"}
    assert re.search(r"^PASS F64_IN_OUT\S+ memcheck .*--kernel=dmma", dmma, re.M)
    assert re.search(r"^PASS F64_IN_OUT\S+ racecheck .*--kernel=dmma", dmma, re.M)
    assert table["db2003f"][2] == passed("h100-2026-11-26-check-dmma-2.txt", "db2003f")
    def configs_passed(name):   # the (pair, shape, layout) a results file passed, and none failed
        results = (REPO / f"results/{name}").read_text()
        assert "FAIL" not in results, name
        return {(m[1], m[2], m[3]) for m in re.finditer(r"^PASS (\w+)-(\S+)-(\d\d) ", results, re.M)}

    every = {(p["name"], s, f"{ta}{tb}") for p in numbers.gemmlib.registry()["pairs"]
             for s in p["shapes"] for ta in (0, 1) for tb in (0, 1)}
    # the last: FP8 into a 16-bit C, both pairs in every layout; the checks before it had no such pairs
    c16 = configs_passed("h100-2026-11-26-check-fp8-c16-results.txt")
    assert {p for p, _, _ in c16} == {"E4M3_IN_BF16_OUT", "E4M3_IN_F16_OUT"} and len(c16) == 8
    assert table["313f1d1"][2] == passed("h100-2026-11-26-check-fp8-c16.txt", "313f1d1")
    c16_results = (REPO / "results/h100-2026-11-26-check-fp8-c16-results.txt").read_text()
    assert re.search(r"^PASS E4M3_IN_BF16\S+ memcheck .*--kernel=wgmma", c16_results, re.M)
    every -= c16
    # the checks of 2026-11-27, each file named by its commit; the last, of the pairs with a
    # 16-bit C from float sums, every shape and layout of both (no check before it had them)
    for commit in ("9efb8d9", "8709572", "22b18f6", "a4e7faa", "3b3f4eb", "2325ab1"):
        assert table[commit][2] == passed(f"h100-2026-11-27-check-quick-{commit}.txt")
    assert table["1c83d29"][2] == sum(passed(f"h100-2026-11-27-check-quick-1c83d29-{i}.txt", "1c83d29") for i in (1, 2))
    assert table["d89fd5f"][2] == passed("h100-2026-11-27-check-quick-d89fd5f.txt", "d89fd5f")
    assert table["930af84"][2] == passed("h100-2026-11-27-check-quick-930af84.txt", "930af84")
    assert table["e23c329"][2] == passed("h100-2026-11-27-check-int8-e23c329.txt", "e23c329")
    assert table["5dae406"][2] == passed("h100-2026-11-27-check-quick-5dae406.txt", "5dae406")
    assert table["ade8b8a"][2] == passed("h100-2026-11-27-check-quick-ade8b8a.txt", "ade8b8a")
    assert table["c7549bb"][2] == sum(passed(f"h100-2026-11-27-check-quick-c7549bb-{x}.txt", "c7549bb") for x in "ab")
    # step H10: every tile of f16->f16 (choices_gpu.py --check, its PASS lines; then memcheck of the
    # 192-row tile with K split), and the quick check of three pairs in two layouts
    tiles = (REPO / "results/h100-2026-11-27-taller-choices-check-4fe3e59.txt").read_text()
    assert "4fe3e59" in tiles and "FAIL" not in tiles and re.search(r"^0 failed$", tiles, re.M)
    assert len(re.findall(r"^PASS F16_IN_OUT (?:TN|NN|NT|TT) tile 192x256 ", tiles, re.M)) == 4 * 9
    tile_runs = len(re.findall(r"^PASS ", tiles, re.M)) + len(re.findall(r"^memcheck 192x256 .*: rc=0 1$", tiles, re.M))
    assert table["4fe3e59"][2] == tile_runs + passed("h100-2026-11-27-check-quick-4fe3e59.txt", "4fe3e59")
    assert table["e4221e2"][2] == passed("h100-2026-11-27-check-quick-e4221e2.txt", "e4221e2")
    # step H11, the tile order: every tile of two pairs in a layout each (choices_gpu.py --check),
    # and the quick check of three pairs in two layouts
    squares = (REPO / "results/h100-2026-11-27-square-choices-check-7193ba8.txt").read_text()
    assert "7193ba8" in squares and "FAIL" not in squares and re.search(r"^0 failed$", squares, re.M)
    assert {m[1] for m in re.finditer(r"^PASS (\w+ \w\w) tile ", squares, re.M)} == {"F16_IN_OUT TN", "F16_IN_F32_OUT NN"}
    assert table["7193ba8"][2] == len(re.findall(r"^PASS ", squares, re.M)) + passed(
        "h100-2026-11-27-check-quick-7193ba8.txt", "7193ba8")
    assert table["c257e25"][2] == passed("h100-2026-11-27-check-quick-c257e25.txt", "c257e25")
    # and the layouts of step H11's first check left out: f16->f32, f16->f16 and int8 in NT and TT
    assert table["5c42865"][2] == passed("h100-2026-11-28-check-quick-5c42865.txt", "5c42865")
    assert {(p, layout) for p, _, layout in configs_passed("h100-2026-11-28-check-quick-5c42865-results.txt")} == \
        {(p, layout) for p in (F16, "F16_IN_OUT", "I8_IN_I32_OUT") for layout in ("10", "11")}
    # the host's alternating turns and doubled energy windows: each run of the conditions piece
    # (gpu_session.sh conditions) verified, none failed
    conditions = (REPO / "results/h100-2026-11-28-conditions-cdf006a.txt").read_text()
    runs = re.findall(r"^\$ \./gemm ", conditions, re.M)
    assert "cdf006a" in conditions and "H100 80GB HBM3" in conditions and "FAIL" not in conditions
    assert len(re.findall(r"^Result +: PASS$", conditions, re.M)) == 15 and table["cdf006a"][2] == len(runs) == 10
    assert {p for p, _, _ in configs_passed("h100-2026-11-27-check-quick-c257e25-results.txt")} == {
        p for p, _, _ in configs_passed("h100-2026-11-27-check-quick-e4221e2-results.txt")}
    assert {p for p, _, _ in configs_passed("h100-2026-11-27-check-quick-e4221e2-results.txt")} == {
        U8, BF16, "BF16_IN_BF16_OUT", "F16_IN_F16_OUT", TF32, "E4M3_IN_F32_OUT", "E5M2_IN_F32_OUT",
        "E4M3_IN_BF16_OUT", "E4M3_IN_F16_OUT"}
    assert {(p, layout) for x in "ab" for p, _, layout in
            configs_passed(f"h100-2026-11-27-check-quick-c7549bb-{x}-results.txt")} == \
        {(p, "01") for p in (BF16, "F16_IN_F16_OUT", U8)} | {("BF16_IN_BF16_OUT", l) for l in ("00", "10", "11")}
    assert {(p, layout) for p, _, layout in configs_passed("h100-2026-11-27-check-quick-ade8b8a-results.txt")} == \
        {(p, layout) for p in (F16, BF16, "F16_IN_F16_OUT") for layout in ("00", "10", "11")}
    assert {(p, layout) for p, _, layout in configs_passed("h100-2026-11-27-check-quick-5dae406-results.txt")} == \
        {("I8_IN_I32_OUT", "01"), ("F16_IN_F32_OUT", "01"), ("BF16_IN_BF16_OUT", "01")}
    assert {(p, layout) for p, _, layout in configs_passed("h100-2026-11-27-check-int8-e23c329-results.txt")} == \
        {("I8_IN_I32_OUT", "01"), ("U8_IN_I32_OUT", "01")}
    assert {layout for _, _, layout in configs_passed("h100-2026-11-27-check-quick-d89fd5f-results.txt")} == {"00", "10", "11"}
    assert {layout for _, _, layout in configs_passed("h100-2026-11-27-check-quick-1c83d29-2-results.txt")} == {"00", "11"}
    later = configs_passed("h100-2026-11-27-check-quick-3b3f4eb-results.txt")
    assert {p for p, _, _ in later} == {"BF16_IN_BF16_OUT", "F16_IN_F16_OUT"} and len(later) == 24
    every -= later
    final = ["8bit-tf32", "16bit-1", "16bit-2", "f64"]
    covered = set().union(*(configs_passed(f"h100-2026-11-26-check-final-{part}-results.txt") for part in final))
    assert table["23ee083"][2] == sum(passed(f"h100-2026-11-26-check-final-{part}.txt", "23ee083") for part in final)
    # FP8, then: both pairs in every layout, and four pairs' WMMA kernels again, quickly
    fp8 = (REPO / "results/h100-2026-11-26-check-fp8-results.txt").read_text()
    assert re.search(r"^PASS E4M3\S+ memcheck .*--kernel=wgmma", fp8, re.M)
    covered |= configs_passed("h100-2026-11-26-check-fp8-results.txt")
    assert covered == every   # every pair, shape and layout of --describe's
    quick = (REPO / "results/h100-2026-11-26-check-fp8-others-quick-results.txt").read_text()
    assert "FAIL" not in quick and {m[1] for m in re.finditer(r"^PASS (\w+)-", quick, re.M)} == {
        "F16_IN_F32_OUT", "TF32_IN_F32_OUT", "I8_IN_I32_OUT", "F64_IN_OUT"}
    assert table["1ff4432"][2] == (passed("h100-2026-11-26-check-fp8.txt", "1ff4432")
                                   + passed("h100-2026-11-26-check-fp8-others-quick.txt", "1ff4432"))
    # then the WMMA pairs that quick check left out, and FP8 with the check's options for it
    again = (REPO / "results/h100-2026-11-26-check-fp8-others-quick-2-results.txt").read_text()
    assert "FAIL" not in again and {m[1] for m in re.finditer(r"^PASS (\w+)-", again, re.M)} == {
        "F16_IN_OUT", "BF16_IN_F32_OUT", "U8_IN_I32_OUT"}
    fp8 = (REPO / "results/h100-2026-11-26-check-fp8-2-results.txt").read_text()
    assert "FAIL" not in fp8 and "--tile" not in fp8
    assert table["e9c661d"][2] == (passed("h100-2026-11-26-check-fp8-others-quick-2.txt", "e9c661d")
                                   + passed("h100-2026-11-26-check-fp8-2.txt", "e9c661d"))
    # the shipped tree, FP8 included: every pair, shape and layout again, in four calls
    shipped = ["8bit-tf32", "16bit-1", "16bit-2", "f64-fp8"]
    assert set().union(*(configs_passed(f"h100-2026-11-26-check-shipped-{part}-results.txt")
                         for part in shipped)) == every
    assert table["689691d"][2] == sum(passed(f"h100-2026-11-26-check-shipped-{part}.txt", "689691d")
                                      for part in shipped)
    # the running example's session: its sweep and its worklog from one tree, every run verified
    assert "# source: gemm.md at eadbeb8" in (REPO / numbers.SESSION).read_text()
    log = (REPO / numbers.EXAMPLE.replace(".csv", ".txt")).read_text()
    assert "gemm.md at eadbeb8" in log and "; 0 failed" in log
    _, example = worklog.read_worklog(REPO / numbers.EXAMPLE)
    assert all(r["result"] == "PASS" for r in example if r["kind"] in ("step", "hopper") and r["impl"] != "ceiling")
    # bit for bit as cuBLAS: the tf32 run of the variant's check, where the kernel's output
    # failed the bound of rounded inputs
    run = (REPO / "results/h100-2026-11-25-variant-8bit-tf32-tf32-run.log").read_text()
    hopper = run[run.index("Kernel                : wgmma"):]
    assert "worst difference 0 (0 of its bound)" in hopper and "Result                : FAIL" in hopper
    assert "cuBLAS does as this kernel does: in the GPU check their results agree bit for bit." in text

def test_the_spread_of_cublas_across_sessions_is_the_tables_spread():
    """"Run to run" gives the range of cuBLAS's speed in the running example over the sessions
    behind the post's tables (prose.cublas_spread, which fills it): the sweeps the tables are
    made from and the worklogs, seven or more sessions."""
    assert len(prose.cublas_spread(POST)) >= 7
    assert "<!--n d0(min(cublas_spread()))-->" in POST and "<!--n d0(max(cublas_spread()))-->" in POST


def test_step_h8_in_appendix_f_is_its_measurements():
    """Step H8's entry: the first rule's runs (the 64-wide tile's speed, its losses) and the
    shipped step against step 7, taking turns; the split's cost is the code's constant."""
    first = compare_shares(REPO / numbers.FIRST_RULE)
    assert all(round(v[2]) == 3 for (t, size), v in first.items() if size == "256x256x8192")
    runs = list(csv.DictReader((REPO / "results/nvidia-h100-80gb-hbm3-2026-11-25-last-wave-variant-runs.csv")
                               .open(encoding="utf-8")))
    width = {}
    for r in runs:
        if r["impl"] == "wgmma" and "--hopper-width" in r["options"]:
            width.setdefault(r["type"], {})[r["options"].rsplit("=", 1)[1]] = float(r["etops"])
    speeds = [w["64"] / w["256"] for w in width.values()]
    # (generated: prose.narrow_speeds); the code's speed of the 64-wide tile is among them
    assert len(speeds) == 3 and min(speeds) <= prose.width_speed(64) <= max(speeds)
    h8 = compare_shares(REPO / numbers.LAST_WAVE)
    assert {f"{v[2]:.1f}" for (t, size), v in h8.items() if size == "256x256x8192"} == {"3.0"}
    # the split last wave the check verified in full, for each pair
    verified = [r for r in csv.DictReader((REPO / "results/nvidia-h100-80gb-hbm3-2026-11-25-last-wave-h8-runs.csv")
                                          .open(encoding="utf-8")) if "--verify=full" in r["options"]]
    assert len(verified) == 3 and all(r["result"] == "PASS" and r["M"] == "769" for r in verified)


def test_the_variants_that_did_not_pay_are_their_measurements():
    """Appendix G's ping-pong and in-kernel sum of split K, and their change files, against
    the compare_gpu.py runs that measured them (new / base, per 16-bit pair)."""
    text = " ".join(PROSE.split())
    R = REPO / "results"
    pp = compare_shares(R / "nvidia-h100-80gb-hbm3-2026-11-25-ping-pong.csv")
    loss = lambda shares, size: [1 - shares[(t, size)][2] for t in SIXTEEN]
    at8192, small = loss(pp, "8192x8192x8192"), loss(pp, "4096x4096x4096") + loss(pp, "3000x3000x3000")
    note = " ".join((REPO / "worklog" / "hopper-ping-pong.md").read_text(encoding="utf-8").split())
    said = lambda losses: pct_range(losses).replace("–", " to ")   # the change file's own words
    assert (f"ran {said(at8192)} % slower than the shipped kernel (then step H8) at $8192^3$, and "
            f"{said(small)} % slower") in note
    int8 = [1 - r for r in prose.turns("results/h100-2026-11-27-int8-ping-pong.csv").values()]
    assert len(int8) == 3 and f"it ran {said(int8)} % slower" in note
    # the 128-wide tile's speed, as the waves' choice has it
    assert "a 128-wide tile runs at <!--n d2(width_speed(128))-->" in text   # HOPPER_WIDTHS's, generated
    si = compare_shares(R / "nvidia-h100-80gb-hbm3-2026-11-25-sum-inside.csv")
    gain = lambda size: sorted(round(100 * (si[(t, size)][2] - 1), 1) for t in SIXTEEN)
    assert gain("4096x11008x4096")[::2] == [-0.7, 0.8]
    note = " ".join((REPO / "worklog" / "hopper-sum-inside.md").read_text(encoding="utf-8").split())
    assert ("1.7 to 3.2 % faster, at 4096 × 11008 × 4096 (the same split) −0.7 to +0.8 %, but at 3000³ "
            "2.8 to 5.9 % and at 2047 × 2049 × 1023 12 to 15 % slower") in note


def test_what_a_split_wave_costs_with_the_slices_added_inside_the_kernel():
    """The in-kernel sum's split wave at 3000^3 (generated: prose.split_wave_costs) costs no less
    than HOPPER_SPLIT_COST, as the words say: the cost is not the second kernel's."""
    costs = prose.split_wave_costs()
    assert len(costs) == 3 and min(costs) >= prose.setting("HOPPER_SPLIT_COST")
    assert "its split wave still costs <!--n span(split_wave_costs(), d0)-->" in PROSE


def test_step_h9_is_its_measurement():
    """Step H9 (C copied in through the pipeline) against step H8, taking turns: the main path's
    sentence, Appendix F's step 9 and Appendix G's bullet, each number from the CSV."""
    shares = compare_shares(REPO / "results" / "nvidia-h100-80gb-hbm3-2026-11-25-c-pipeline.csv")
    # its gains are generated (prose.gains of this file); what the words say of them holds: a gain
    # at every size but 8192^3, where one noisy cell fell
    gain = {size: [shares[(t, size)][2] - 1 for t in SIXTEEN] for size in {size for _, size in shares}}
    assert all(g > 0 for size, gs in gain.items() if size != "8192x8192x8192" for g in gs)
    assert sum(g < 0 for g in gain["8192x8192x8192"]) == 1
    notes = (REPO / "results" / "nvidia-h100-80gb-hbm3-2026-11-25-c-pipeline.txt").read_text(encoding="utf-8")
    assert "270 passed, 0 failed" in notes   # the quick check before the run; the full one is in the chapter's
    logs = [(REPO / f"results/h100-2026-11-25-check-c-pipeline-{i}.txt").read_text() for i in (1, 2)]
    full = sum(int(re.search(r"^(\d+) passed, 0 failed$", log, re.M)[1]) for log in logs)
    assert full == prose.checks_passed(*[f"results/h100-2026-11-25-check-c-pipeline-{i}.txt" for i in (1, 2)])


def test_appendix_g_the_clock_is_its_profiles():
    """The clock: three profiles of each kernel at 8192^3 and 3000^3 (one with cuBLAS first),
    whose cycles, clocks and throughputs the prose generates (prose.profiled): what its words
    say of them holds; the cluster variant against the shipped kernel, taking turns."""
    text = " ".join(PROSE.split())
    # fewer cycles than cuBLAS at 8192^3, more at 3000^3, a lower clock in every pair of runs
    assert all(r < 1 for r in prose.profiled_ratio(8192, "Elapsed Cycles"))
    assert all(r > 1 for r in prose.profiled_ratio(3000, "Elapsed Cycles"))
    assert all(r < 1 for n in (8192, 3000) for r in prose.profiled_ratio(n, "SM Frequency"))
    assert "*fewer* cycles than cuBLAS" in text and "lower in each pair of runs" in text
    names = {line.split()[0] for n in (8192,) for tail in ("", "-again", "-cublas-first")
             for line in (REPO / f"results/nvidia-h100-80gb-hbm3-2026-11-25-profile-{n}{tail}.txt").open()
             if line.startswith("  nvjet")}
    assert names == {"nvjet_sm90_hss_320x128_64x3_1x2_h_bx_coopB_TNT"}
    assert "`nvjet_sm90_hss_320x128_64x3_1x2…`, has by its name tiles of 320 × 128" in text
    for n in (8192, 3000):
        for path in (REPO / "results").glob(f"nvidia-h100-80gb-hbm3-2026-11-25-profile-{n}*.txt"):
            report = path.read_text()
            cublas = report[report.index("  nvjet"):]
            cublas = cublas[:cublas.index("  void gemm_wgmma")] if "  void gemm_wgmma" in cublas else cublas
            assert re.search(r"Cluster Size\s+2\n", cublas) and re.search(r"Grid Size\s+132\n", cublas), path
    assert "the profile shows its 132 blocks in clusters of two" in text
    assert "power.limit" in (REPO / "results/nvidia-h100-80gb-hbm3-2026-11-25-h9-floors-3.txt").read_text()
    assert "1980 MHz, 700.00 W" in (REPO / "results/nvidia-h100-80gb-hbm3-2026-11-25-h9-floors-3.txt").read_text()
    assert "far below this GPU's 1.98 GHz" in text and "power limit (700 W here;" in text
    # the cluster variant on step H9: slower everywhere (by the per cents the prose generates)
    shares = compare_shares(REPO / "results/nvidia-h100-80gb-hbm3-2026-11-25-clusters.csv")
    assert all(v[2] < 1 for v in shares.values())
    assert "270 passed, 0 failed" in (REPO / "results/nvidia-h100-80gb-hbm3-2026-11-25-clusters.txt").read_text()


def test_appendix_g_the_kernels_own_choice_is_the_best_it_has():
    """At 1024^3 and 3000^3, where the floors are missed, every width and split that the kernel
    could be forced to take ran slower than its own choice (choices_gpu.py): the shares quoted,
    and the choice the prose names."""
    text = " ".join(PROSE.split())
    rows = list(csv.DictReader((REPO / "results/nvidia-h100-80gb-hbm3-2026-11-25-choices.csv").open()))
    ours, theirs = [r for r in rows if r["impl"] == "wgmma"], [r for r in rows if r["impl"] == "cublas"]
    assert len(ours) == len(theirs) > 0 and all(r["result"] == "PASS" for r in rows)
    shares = {}
    for k, c in zip(ours, theirs):
        assert (k["choice"], k["M"], k["type"]) == (c["choice"], c["M"], c["type"])
        shares.setdefault((k["type"], k["M"], k["choice"]), []).append(float(k["etops"]) / float(c["etops"]))
    own = {(t, m): {r["tile"] + "/" + r["slices"] for r in ours if (r["type"], r["M"], r["choice"]) == (t, m, "own")}
           for t, m, _ in shares}
    assert all(v == {{"1024": "128x64x64/1", "3000": "128x192x64/1"}[m]} for (t, m), v in own.items())
    assert {t for t, _ in own} == {F16, "BF16_IN_F32_OUT"} and {m for _, m in own} == {"1024", "3000"}
    same = {"1024": "64/1", "3000": "192/1"}     # the own choice, forced
    worse = [statistics.median(v) / statistics.median(shares[(t, m, "own")])
             for (t, m, choice), v in shares.items() if choice not in ("own", same[m])]
    assert len(worse) >= 20 and f"{max(worse):.2f}" == "0.94"
    assert ("ran at 0.94 of the speed of the kernel's own choice (128 × 64 and 128 × 192, K whole) or less"
            in text)


def test_the_lowest_cells_run_again_are_what_the_fold_says():
    """Three of the floors table's lowest cells, each run three more times: their shares per
    run, as the fold gives them beside the table's."""
    again = (REPO / numbers.WORST_CELLS).read_text()
    found = {(m[1], m[2], m[3]): [int(x) for x in m[4].split(", ")] for m in
             re.finditer(r"^(\w+) (\w\w) (\S+): own \d+% \(([\d, ]+)\)", again, re.M)}
    assert set(found) == {("BF16_IN_F32_OUT", "NT", "16384"), ("BF16_IN_F32_OUT", "TN", "16384"),
                          ("BF16_IN_F32_OUT", "NT", "8192x28672x8192")}
    assert all(len(v) == 3 for v in found.values())
    # their per cents, and the table's beside them, are generated (prose.worst_cells, prose.H9_cell)
    assert all(f'worst_cells(BF16, "{layout}", {size})' in POST for layout, size in
               (("NT", 16384), ("TN", 16384), ("NT", '"8192x28672x8192"')))


def test_the_fp8_section_is_its_measurements():
    """"FP8" and "What is left": E4M3 against cuBLAS in the results chapter's session (cuBLAS
    beside it in TN only), and the shortfall below 2048^3; the four 8192^3 reports that
    Appendix B's bit-for-bit claim rests on pass, with cuBLAS in E4M3's TN only."""
    cells = numbers.sweep_cells(numbers.SESSION)
    # (its shares of cuBLAS are generated); cuBLAS ran E4M3 in TN only, and E5M2 not at all
    assert cells.get(("E4M3_IN_F32_OUT", 0, "cublas")) is None and cells.get(("E5M2_IN_F32_OUT", 1, "cublas")) is None
    _, rows = sweep.read_csv(REPO / numbers.SESSION)
    small = {r["M"] for r in rows if r["type"] == "E4M3_IN_F32_OUT" and r["transpose_b"] == 1 and r["M"] < 2048
             and r["impl"] == "cublas"}
    assert len(small) == 4 and 'shares(S, ("E4M3_IN_F32_OUT",), (TN,), sizes(S, 0, 2047), hopper)' in POST
    for pair in ("E4M3_IN_F32_OUT", "E5M2_IN_F32_OUT"):
        for layout in ("00", "01"):
            report = (REPO / f"results/h100-2026-11-26-fp8-{pair}-{layout}-8192.txt").read_text()
            assert re.search(r"^Result\s+: PASS$", report, re.M), (pair, layout)
            assert ("cuBLAS speed" in report) == (pair == "E4M3_IN_F32_OUT" and layout == "01")
    # FP8 into a 16-bit C: the 8192^3 reports of its own call, TN against cuBLAS, NN without it
    shares = []
    for pair in ("E4M3_IN_BF16_OUT", "E4M3_IN_F16_OUT"):
        for layout in ("00", "01"):
            report = (REPO / f"results/h100-2026-11-26-fp8-c16-{pair}-{layout}-8192.txt").read_text()
            assert re.search(r"^Result\s+: PASS$", report, re.M) and "H100" in report, (pair, layout)
            assert ("cuBLAS speed" in report) == (layout == "01")
        shares.append(re.search(r"^Against cuBLAS\s+: ([\d.]+) % of its speed$", report, re.M)[1])
    assert shares == ["99.8", "96.0"]   # as results/README.md gives them


def test_the_double_kernel_section_is_its_measurements():
    """"Double on Hopper": its share of DGEMM at 8192^3 (the session, both layouts), the two
    H200 runs its fold cites, and the shortfall "What is left" names."""
    cells = numbers.sweep_cells(numbers.SESSION)
    # its share of DGEMM, and the shortfall, are generated; the double kernel ran in both layouts
    assert all(("F64_IN_OUT", b, "dmma") in cells for b in (0, 1))

    # the H200's runs the fold cites: the forms' speeds and the skew's are generated from them
    assert "NVIDIA H200" in (REPO / "results/h200-2026-11-26-dmma-k4-k8.csv").read_text()
    assert 'csv_runs("results/h200-2026-11-26-dmma-k4-k8.csv", dmma, "128x128x16")[3]' in POST


def test_the_tile_left_out_of_doubles_list_is_its_measurement():
    rows = list(csv.DictReader(line for line in (REPO / "results/nvidia-h100-80gb-hbm3-2026-11-26-f64-tiles.csv").open()
                               if not line.startswith("#")))
    at = {r["tile"]: float(r["etops"]) for r in rows if r["impl"] == "dmma" and r["M"] == "1024"}
    assert all(r["result"] == "PASS" for r in rows)
    # the tile left out runs slower at 1024^3 than the 128 x 64 tile that is kept (by the
    # factor the prose generates from this file)
    f64 = next(p for p in numbers.gemmlib.registry()["pairs"] if p["name"] == "F64_IN_OUT")
    assert at["128x64x16"] > at["64x64x16"] and "64x64x16" not in f64["tiles"]


def test_the_mma_sync_kernels_counts_are_its_results():
    """"Whole lines" quotes Nsight Compute's counts of the mma.sync and tiled kernels, and the
    variants' shares, as the files in results/ have them; "nearly twice" is the tiled kernel's
    sectors against CUTLASS's."""
    def counts(path):   # [(sectors read, requests, cycles)] in the order the file profiles them
        text = (REPO / path).read_text(encoding="utf-8")
        found = {name: [float(v.replace(",", "")) for v in re.findall(rf"{name}\s+\w+\s+([\d,.]+)", text)]
                 for name in ("lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_requests_srcunit_tex.sum",
                              "sm__cycles_elapsed.avg")}
        return list(zip(*found.values()))
    (mma, tiled) = counts("results/h200-2026-11-26-mma-probe.txt")
    assert (f"reads {mma[0] / 1e6:.0f} M sectors from L2 where the tiled kernel reads {tiled[0] / 1e6:.0f} M, in\n"
            f"{mma[1] / 1e6:.0f} M requests against {tiled[1] / 1e6:.0f} M, and takes {mma[2] / 1e6:.2f} M cycles "
            f"against {tiled[2] / 1e6:.2f} M.") in POST
    ours, cutlass = counts("results/h200-2026-11-26-profile-tiled-cutlass-l2-8192.txt")
    assert 1.75 < ours[0] / cutlass[0] < 2
    assert "reads nearly twice as many sectors from L2" in " ".join(POST.split())


def test_the_post_is_dated_by_its_newest_results():
    """The front matter's date is the date of the newest measurement the post names."""
    dated = re.findall(r"(?:h100|h200|hbm3)-(20\d\d-\d\d-\d\d)", POST)
    front = re.search(r'(?m)^date: "(20\d\d-\d\d-\d\d)"$', POST[:POST.index("\n---", 4)])
    assert dated and front and front[1] == max(dated), (front and front[1], max(dated))


def test_every_results_file_the_post_and_the_readme_name_is_there():
    """A file named in gemm.md or README.md, whole (`results/NAME`, `h100-…`), by a pattern
    (`…-NAME.*`, `NAME*`) or shortened (`…-NAME.csv`), is in results/: what leaves the tree is
    what nothing names."""
    found = [str(p.relative_to(REPO / "results")) for p in (REPO / "results").rglob("*") if p.is_file()]
    folders = {str(p.relative_to(REPO / "results")) for p in (REPO / "results").rglob("*") if p.is_dir()}

    def there(name):
        name = name.rstrip(".,;:)").removeprefix("results/")
        if name.rstrip("/") in folders:
            return True
        pattern = "*" + name.split("…", 1)[1] if "…" in name else name
        return any(fnmatch.fnmatch(f, pattern) or ("…" in name or "*" in name) and fnmatch.fnmatch(f, pattern + "*")
                   for f in found)

    for doc in ("gemm.md", "README.md"):
        text = (REPO / doc).read_text(encoding="utf-8")
        names = set(re.findall(r"`(?:results/)?((?:…|h100-|h200-|nvidia-h)[^`\s]*)`", text))
        names |= set(re.findall(r"results/([\w.*…/-]+[\w*/])", text))
        assert names and not [n for n in sorted(names) if not there(n)], doc


def citing_patterns(text):
    """The names of results files a text gives by a pattern (`…-NAME.csv`, `NAME*`, an f-string's
    `NAME-{part}.txt`), as regular expressions; only those specific enough to name a few files
    (eight letters or digits at least)."""
    patterns = []
    for found in re.findall(r"[\w.…*{}-]*(?:h100|h200|nvidia-h|…)[\w.…*{}-]*", text):
        if not re.search(r"[{…*]", found) or len(re.sub(r"\{[^}]*\}|\W|_", "", found)) < 8:
            continue
        parts = re.split(r"(\{[^}]*\}|…|\*)", found)
        patterns.append("".join(".*" if p in ("…", "*") or p.startswith("{") else re.escape(p) for p in parts))
    return patterns


def test_results_holds_only_what_is_cited():
    """Every file of results/ (but its index) is named by the post, the README, a test, a script
    or a change file, whole, by its stem or by a pattern, or is a companion of one so named
    (its name begins with that one's stem: a log, a table, a plot of it); what nothing names
    leaves the tree, its row of results/README.md saying "in the history only"."""
    sources = [REPO / "gemm.md", REPO / "README.md", REPO / "Makefile", *(REPO / "tests").glob("*.py"),
               *(REPO / "scripts").glob("*.py"), *(REPO / "scripts").glob("*.sh"), *(REPO / "worklog").glob("*.md")]
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in sources).replace("results/", "")
    patterns = [re.compile(p) for p in citing_patterns(text)]
    files = sorted(str(p.relative_to(REPO / "results")) for p in (REPO / "results").rglob("*")
                   if p.is_file() and p.name != "README.md")

    def named(name):
        stem = re.sub(r"\.[a-z]+$", "", name)
        return (name in text or stem in text or name.split("/")[0] + "/" in text
                or any(p.fullmatch(name) for p in patterns))
    cited = [f for f in files if named(f)]
    stems = [re.sub(r"\.[a-z]+$", "", f) for f in cited]
    orphans = [f for f in files if f not in cited and not any(f.startswith((s + "-", s + ".")) for s in stems)]
    assert cited and not orphans, orphans


def test_the_check_for_uncited_results_finds_a_planted_one():
    assert any(re.compile(p).fullmatch("h100-2026-11-26-check-shipped-f64-fp8.txt")
               for p in citing_patterns('passed(f"h100-2026-11-26-check-shipped-{part}.txt")'))
    assert not citing_patterns("(`…-x.csv`)")   # too little to name a file by


def test_the_main_path_names_one_session():
    """What a reader reads without opening a fold or an appendix takes its measured numbers
    from the running example's session alone: its sweep (S) and its worklog (WX, HW at that
    run), the tables made from them, and the spread of cuBLAS across sessions, which names none.
    Every other run's figures wait in folds. Shown to catch a marker of another run."""
    sys.path.insert(0, str(REPO / "tests"))
    import test_post
    session = {"S", "WX", "HW", "shares", "sizes", "runs", "dated", "cublas_spread", "wmma_per_clock"}
    formats = {"s3", "pct", "pcts", "span", "more", "at_least", "sp1", "d0", "d1", "d2", "median"}
    settings = {"setting", "width_speed", "hopper_blocks", "waves", "sms", "kernel_names"}
    words = {"SIXTEEN", "F16", "F16F16", "BF16", "TF32", "F64", "I8", "U8", "BF16BF16", "F16C16", "E4M3",
             "NN", "TN", "simple", "tiled", "mma", "dmma", "hopper", "cublas"}
    data = set(prose.namespace()) - session - formats - settings - words   # every other run's figures

    def strays(text):
        path = "\n".join(line for line, code in test_post.main_path(text) if not code)
        found = set()
        for expression in re.findall(r"<!--n (.*?)-->", path):
            found |= set(re.findall(r"[A-Za-z_]\w*", expression)) & data
            found |= {"run="} if "run=" in expression else set()
        tables = set(re.findall(r"<!-- ([\w-]+):begin -->", path))
        return found, tables

    found, tables = strays(POST)
    assert not found, f"the main path quotes other runs through {sorted(found)}"
    assert tables == {"worklog-example", "session"}
    assert "dated(S)" in POST and re.findall(r"dated\((\w+)\)", "\n".join(
        line for line, code in test_post.main_path(POST) if not code)) == ["S"]
    # a marker of another run, planted on the main path, is caught
    planted = POST.replace("# What is left\n", '# What is left\n\n<!--n d0(W2("copies", F16, kind="part"))-->447<!--/n-->\n', 1)
    assert strays(planted)[0] == {"W2"}
