"""FP8 (the pairs whose inputs are E4M3 or E5M2): no WMMA shape. Only the Hopper kernel takes
them, with wgmma's k32 FP8 forms (test_hopper checks those on sm_90a); the WMMA kernels are not
compiled for them, older targets have no FP8 multiply at all, and a run asks only what it can do:
a GPU without the Hopper kernel is told so, and the options that need WMMA are refused. That
the CPU reference reads FP8 inputs exactly is test_gemm's, with every other pair's."""

import re
import subprocess

import pytest

import gemmlib
from conftest import PAIRS, REGISTRY, REPO, config_defines

FP8 = [t for t, p in PAIRS.items() if p["in"].startswith("fp8")]


def test_the_fp8_pairs_have_only_the_hopper_kernel():
    assert [PAIRS[t]["in"] for t in FP8] == ["fp8 e4m3", "fp8 e5m2", "fp8 e4m3", "fp8 e4m3"]
    for t in FP8:
        facts = PAIRS[t]
        assert (facts["kernels"], facts["shapes"], facts["tiles"]) == (["wgmma"], ["none"], []), t
        assert facts["acc"] == "float" and facts["in_bytes"] == 1 and facts["k_major"], t
    # Two sum in float and round into a 16-bit C: C's type is not the accumulator's.
    assert [(PAIRS[t]["c"], PAIRS[t]["c_bytes"]) for t in FP8] == \
        [("float", 4), ("float", 4), ("bfloat16", 2), ("half", 2)]
    assert REGISTRY["shape_sides"]["none"] == [16, 16, 16]


@pytest.mark.parametrize("pair", FP8)
def test_older_targets_have_no_fp8_multiply(gemm_cu, tmp_path, pair):
    """Built for sm_80 (which the Makefile's default targets include), an FP8 pair compiles,
    with no WMMA and no FP8 multiply."""
    ptx = tmp_path / "a.ptx"
    result = gemmlib.nvcc(gemm_cu, ptx, config_defines(pair, None, 0, 1), gpu="sm_80", mode="ptx")
    assert result.returncode == 0, result.stderr
    text = ptx.read_text()
    assert "wmma." not in text and "wgmma.mma_async" not in text and not re.search(r"\.e[45]m[23]\b", text)


def run(exe, *args):
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("pair", FP8)
def test_the_plan_and_the_options_say_what_fp8_cannot_do(builds, pair):
    result, exe, _ = builds[(pair, "none", 0, 1)]
    assert result.returncode == 0, result.stderr
    for gpu in ("a100", "orin", "rtx4090", "t4"):   # no tile table: no kernel with tiles takes FP8
        plan = run(exe, 4096, 4096, 4096, f"--plan={gpu}")
        assert plan.returncode == 0 and "The Hopper kernel does not run on" in plan.stdout, gpu
        assert "Chosen:" not in plan.stdout and "tile          shared" not in plan.stdout, gpu
    plan = run(exe, 1, 1, 1, "--plan=h100").stdout
    assert "does not run on" not in plan and "The Hopper kernel's tile:" in plan
    assert re.search(r"^Padded to 16 x 16 x 16\.$", plan, re.M)
    for kernel in ("simple", "tiled", "dmma", "mma"):
        refused = run(exe, 64, 64, 64, f"--kernel={kernel}")
        assert refused.returncode == 2 and pair in refused.stderr, kernel
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    refused = run(exe, "--ceiling")
    assert refused.returncode == 2 and "has no WMMA shape" in refused.stderr, refused.stderr
    assert "one of: none (no kernel with tiles takes this pair)" in run(exe, "--help").stdout
    for tile in ("all", "64x64x128"):   # no kernel with tiles takes FP8: --tile has nothing to set
        refused = run(exe, 64, 64, 64, f"--tile={tile}")
        assert refused.returncode == 2 and "no kernel with tiles takes" in refused.stderr, tile


def test_the_error_bound_paragraph_is_its_numbers():
    """Appendix B's FP8 paragraph: gamma at K = 8192 from the formula with u = 2^-13 and the
    none shape's W_K, the worst ratio of the FP8 GPU check, and the bit-for-bit agreement with
    cuBLAS of the 8192^3 run in TN."""
    text = " ".join((REPO / "gemm.md").read_text(encoding="utf-8").split())
    wk = REGISTRY["shape_sides"]["none"][2]
    gamma = (2 * -(-8192 // wk) + 3) * 2.0**-13 + 8194 * 2.0**-53
    assert f"per step of $W_K = {wk}$ (the `none` shape's, FP8's stand-in" in text
    assert "Kept by truncation, 14 bits lose up to one unit of the 14th, $2^{-13}$ relative" in text
    assert f"At $K = 8192$ that makes $\\gamma$ about {gamma:.2f}:" in text
    check = (REPO / "results/h100-2026-11-26-check-fp8.txt").read_text()
    worst = max(float(x) for x in re.findall(r"\(([\d.e-]+) of its bound\)", check))
    assert f"the worst error was {worst:.2f} of its bound" in text
    run = (REPO / "results/h100-2026-11-26-fp8-E4M3_IN_F32_OUT-01-8192.txt").read_text()
    assert "0 outside the bound; worst difference 0 (0 of its bound)" in run
    assert "the kernel's result equals cuBLAS's (with its fast accumulation, Appendix C) bit for bit" in text
    # FP8 into a 16-bit C: its own check's worst ratio, where, and the 8192^3 runs in TN
    check = (REPO / "results/h100-2026-11-26-check-fp8-c16.txt").read_text()
    ratios = [(float(r), size) for size, r in re.findall(r"-\d\d\.(\w+)\.full\S*: \S+ \(([\d.e-]+) of its bound\)", check)]
    worst, where = max(ratios)
    size = " \\times ".join(where.split("x"))
    assert f"the worst error was {worst:.2f} of its bound, at ${size}$" in text
    for pair in ("E4M3_IN_BF16_OUT", "E4M3_IN_F16_OUT"):
        run = (REPO / f"results/h100-2026-11-26-fp8-c16-{pair}-01-8192.txt").read_text()
        assert "0 outside the bound; worst difference 0 (0 of its bound)" in run, pair
    assert "At $8192^3$ both equal cuBLAS's results bit for bit too." in text


def test_the_gpu_check_gives_fp8_no_tile_options():
    """The GPU check runs FP8 without --tile (which ./gemm refuses for it) and without the
    tiled kernel's sanitizer runs, and keeps both for the other pairs."""
    import check_gpu
    configs = check_gpu.configurations(REGISTRY)
    planned = check_gpu.sanitizer_runs(REGISTRY, configs, "90", False)
    fp8 = [options for _, c, _, options in planned if c[0] in FP8]
    assert fp8 and not any(o.startswith("--tile") or o == "--kernel=tiled" for options in fp8 for o in options)
    assert any("--kernel=tiled" in options for _, c, _, options in planned if c[0] not in FP8)
    assert check_gpu.untiled(["--tile=all", "--beta", "0"], PAIRS[FP8[0]]) == ["--beta", "0"]
    assert check_gpu.untiled(["--tile=all"], PAIRS["F16_IN_F32_OUT"]) == ["--tile=all"]
