"""scripts/candidate_gpu.py and compare_gpu.py's --also without a GPU: the plan of each form of
the command line, the smoke run against a stand-in for ./gemm, and which kernel runs where, as
gemmlib reads it from ./gemm --describe."""

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import candidate_gpu  # noqa: E402
import compare_gpu  # noqa: E402
import gemmlib  # noqa: E402

REGISTRY = gemmlib.registry()
HOPPER = gemmlib.hopper_pairs(REGISTRY)


def plan(*argv):
    return candidate_gpu.plan(candidate_gpu.parse(list(argv)), REGISTRY)


def test_a_change_is_smoked_checked_quickly_then_compared(monkeypatch):
    monkeypatch.setenv("OUT", "out")
    steps = plan("--change", "hopper-c-from-global", "--change", "hopper-ping-pong", "--sizes", "2048")
    assert [part for part, _ in steps] == ["smoke", "check", "compare"]
    assert steps[0][1] == HOPPER[0]
    assert steps[1][1] == ["--quick", "--only", ",".join(HOPPER), "--change", "hopper-c-from-global",
                           "--change", "hopper-ping-pong", "--out", "out"]
    compare = steps[2][1]
    assert compare[:6] == ["--base", str(REPO / "gemm.md"), "--new-change", "hopper-c-from-global",
                           "--new-change", "hopper-ping-pong"]
    # the options it does not know are compare_gpu.py's, after its own, so that they win
    assert compare[-2:] == ["--sizes", "2048"] and compare.index("--sizes") < len(compare) - 2
    assert "--out" in compare and compare[compare.index("--out") + 1] == "out/compare.csv"


def test_compare_gpu_options_pass_through_whole():
    """compare_gpu.py's --pairs and --new are not taken for --new-pairs."""
    compare = plan("--change", "hopper-clusters", "--pairs", "E4M3_IN_F32_OUT", "--new", "other.md")[2][1]
    assert compare[-4:] == ["--pairs", "E4M3_IN_F32_OUT", "--new", "other.md"]


def test_a_document_against_gemm_md():
    steps = plan("--base", "build/base.md")
    assert steps[2][1][:2] == ["--base", "build/base.md"] and "--new-change" not in steps[2][1]
    assert "--change" not in steps[1][1]


def test_new_pairs_are_smoked_run_at_8192_then_checked_in_full(monkeypatch):
    monkeypatch.setenv("OUT", "out")
    steps = plan("--new-pairs", "E4M3_IN_BF16_OUT,E4M3_IN_F16_OUT", "--yardstick", "E4M3_IN_F32_OUT")
    assert steps == [("big", ("E4M3_IN_F32_OUT", 1)),
                     ("smoke", "E4M3_IN_BF16_OUT"), ("big", ("E4M3_IN_BF16_OUT", 1)), ("big", ("E4M3_IN_BF16_OUT", 0)),
                     ("smoke", "E4M3_IN_F16_OUT"), ("big", ("E4M3_IN_F16_OUT", 1)), ("big", ("E4M3_IN_F16_OUT", 0)),
                     ("check", ["--only", "E4M3_IN_BF16_OUT,E4M3_IN_F16_OUT", "--out", "out"])]
    assert plan("--smoke", "F16_IN_OUT") == [("smoke", "F16_IN_OUT")]


@pytest.mark.parametrize("argv, words", [
    ([], "give --change FILE"),
    (["--new-pairs", "F16_IN_OUT", "--change", "hopper-ping-pong"], "give one of"),
    (["--smoke", "F16_IN_OUT", "--sizes", "512"], "give one of"),
    (["--base", "x.md", "--yardstick", "F16_IN_OUT"], "--yardstick goes with --new-pairs"),
    (["--change"], "expected one argument"),
])
def test_a_bad_command_line_is_one_line(argv, words, capsys):
    with pytest.raises(SystemExit) as stop:
        candidate_gpu.parse(argv)
    said = capsys.readouterr().err
    assert stop.value.code == 2 and said.startswith("candidate_gpu: ") and words in said
    assert len(said.strip().splitlines()) == 1


def test_a_pair_the_hopper_kernel_does_not_take_is_refused():
    with pytest.raises(SystemExit) as stop:
        candidate_gpu.known(["F64_IN_OUT"], REGISTRY)
    assert "the Hopper kernel takes no pair called F64_IN_OUT" in stop.value.code
    with pytest.raises(SystemExit) as stop:
        candidate_gpu.known(["F16_IN_OUT"], REGISTRY, "XY")
    assert "no layout called XY" in stop.value.code


@pytest.mark.parametrize("answer, passed, said", [
    ("print('ok')", True, "passed at 512^3 and 4096^3"),
    ("import sys; sys.exit(1)", False, "at 512^3 failed (1)"),
    ("import sys, time; time.sleep(5 if '4096' in sys.argv else 0)", False, "4096^3 gave no answer"),
])
def test_the_smoke_run(tmp_path, monkeypatch, capsys, answer, passed, said):
    """Both sizes with the Hopper kernel, each cut off: a hang fails it without holding up the call."""
    def build(source, exe, flags, gpu, **options):
        Path(exe).write_text(f"#!{sys.executable}\n{answer}\n")
        Path(exe).chmod(0o755)
        return type("Built", (), {"returncode": 0, "stderr": ""})()
    monkeypatch.setattr(gemmlib, "nvcc", build)
    monkeypatch.setattr(candidate_gpu, "SMOKE_TIMEOUT", 2)
    log = tmp_path / "smoke.txt"
    assert candidate_gpu.smoke("F16_IN_OUT", "TN", [], REGISTRY, "90", tmp_path, log) is passed
    assert said in capsys.readouterr().out and said in log.read_text()


def test_compare_also_runs_at_each_size_or_its_own():
    assert compare_gpu.also_runs("--kernel=all --repeat 20", "512,256x256x8192") == [
        ("512", ["--kernel=all", "--repeat", "20"]), ("256x256x8192", ["--kernel=all", "--repeat", "20"])]
    assert compare_gpu.also_runs("769x4751x2100 --verify=full", "512,1024") == [("769x4751x2100", ["--verify=full"])]
    assert compare_gpu.also_runs("2048 --kernel=wgmma", "512") == [("2048", ["--kernel=wgmma"])]


def test_which_kernel_runs_where_comes_from_describe():
    kernels = {k["name"]: k for k in REGISTRY["kernels"]}
    assert all("cc" in k and "min_cc" in k for k in kernels.values())
    for name, k in kernels.items():
        for cc in (70, 80, 87, 89, 90, 100, 120):
            assert gemmlib.runs_on(name, cc, REGISTRY) == (cc == k["cc"] if k["cc"] else cc >= k["min_cc"])
    assert gemmlib.runs_on("wgmma", "9.0") and not gemmlib.runs_on("wgmma", "100")
    assert gemmlib.runs_on("dmma", "90") and not gemmlib.runs_on("dmma", "89")
    assert gemmlib.target("90") == ["-gencode", "arch=compute_90a,code=sm_90a"]
    assert gemmlib.target("80") == ["-arch=sm_80"] and gemmlib.target("100") == ["-arch=sm_100"]
    with pytest.raises(SystemExit):
        gemmlib.kernel("nosuch", REGISTRY)


SASS = """
        code for sm_90a
                Function : %(name)s
        .headerflags    @"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                          /* 0x00000a00ff017b82 */
        /*0010*/                   MOV R4, 32@lo((%(name)s + .L_x_3@srel)) ;     /* 0x0000000000047802 */
        /*0020*/                   %(op)s R2, R1, 0x1 ;                          /* 0x0000000101027836 */
        ..........
"""


def test_compare_sass_ignores_names_and_addresses_but_not_instructions():
    """compare_gpu.py --sass: a kernel renamed (its mangled name, the relocations that name it)
    is the same code; one instruction changed is not."""
    import compare_gpu
    before = compare_gpu.sass_functions(SASS % {"name": "_Z10gemm_wgmmaI11HopperShareEvv", "op": "IADD3"})
    renamed = compare_gpu.sass_functions(SASS % {"name": "_Z10gemm_wgmmaI9WorkTilesEvv", "op": "IADD3"})
    changed = compare_gpu.sass_functions(SASS % {"name": "_Z10gemm_wgmmaI11HopperShareEvv", "op": "IMAD"})
    assert len(before) == 1 and "LDC R1, c[0x0][0x28]" in before[0]
    assert before == renamed
    assert before != changed


@pytest.mark.parametrize("new_mp, noted", [(8256, True), (8192, False)])
def test_compare_says_when_the_builds_pad_differently(tmp_path, monkeypatch, capsys, new_mp, noted):
    """cuBLAS runs on the padded sizes: where the two builds pad one problem differently, their
    shares of cuBLAS are not on one yardstick, and compare_gpu.py says so under the row."""
    monkeypatch.setattr(gemmlib, "find_gpu", lambda prog: ("a GPU", "90", None))
    monkeypatch.setattr(gemmlib, "tangle", lambda *a, **k: None)
    monkeypatch.setattr(compare_gpu, "build", lambda tag, *a, **k: tag)
    monkeypatch.setattr(gemmlib, "run", lambda exe, args, **k: type("Ran", (), {"stdout": "header"})())

    def versus(exe, args, header, kernel, timeout):
        mp = new_mp if exe == "new" else 8192
        rows = [{"impl": impl, "etops": "700", "Mp": str(mp), "Np": "8192", "Kp": "8192"}
                for impl in (kernel, "cublas")]
        return rows, 1.0, 0, ""
    monkeypatch.setattr(gemmlib, "versus_cublas", versus)
    monkeypatch.setattr(gemmlib, "against_cublas", lambda found, kernel: (None, None))
    code = compare_gpu.main(["--new-change", "x", "--pairs", "F16_IN_OUT", "--layouts", "TN", "--sizes", "8192",
                             "--rounds", "1", "--out", str(tmp_path / "out.csv")])
    out = capsys.readouterr().out
    assert code == 0 and "F16_IN_OUT" in out
    assert ("pad 8192 differently (base 8192x8192x8192, new 8256x8192x8192)" in out) is noted


def test_a_comparison_reads_the_steady_state_where_the_run_has_one():
    """With --sustain a run has a burst line and a steady-state line for each implementation:
    compare_gpu.py (gemmlib.versus_cublas, against_cublas) and the post's figures of its CSVs
    (prose.turns) read the steady state; a run without one, its burst."""
    import prose
    row = lambda impl, mode, etops: {"impl": impl, "mode": mode, "etops": str(etops)}
    both = [row("wgmma", "burst", 700), row("cublas", "burst", 720), row("wgmma", "sustained", 650),
            row("cublas", "sustained", 640)]
    assert [r["etops"] for r in gemmlib.timed_rows(both, "wgmma")] == ["650"]
    assert [r["etops"] for r in gemmlib.timed_rows(both[:2], "cublas")] == ["720"]
    assert gemmlib.compared_mode(both) == "sustained" and gemmlib.compared_mode(both[:2]) == "burst"
    assert prose.post_tables.gemmlib is gemmlib   # the post's figures read the runs by the same rule
