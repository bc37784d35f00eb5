"""The double kernel (--kernel=dmma): the tiled kernel with mma.sync's 16 x 8 x 4 form for f64,
which needs sm_90. On sm_90 each of double's tiles has it, in every layout, without spills;
on older targets the kernel is an empty one that traps, and no other pair has it at all."""

import re
import subprocess

import pytest

import gemmlib
from conftest import PAIRS, config_defines

HOPPER = "sm_90a"
F64_MMA = "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64"


def dmma_kernels(gemm_cu, tmp_path, ta, tb, target, verbose=False):
    """({mangled name: PTX} of the double kernels, ptxas's report) of the double build."""
    ptx = tmp_path / f"f64-{ta}{tb}-{target}.ptx"
    defines = config_defines("F64_IN_OUT", None, ta, tb)
    report = ""
    if verbose:   # one compile: the cubin, with its PTX kept beside it
        result = gemmlib.nvcc(gemm_cu, ptx.with_suffix(".cubin"), defines + ["-Xptxas", "-v"],
                              gpu=target, mode="cubin")
        report = result.stderr
    else:
        result = gemmlib.nvcc(gemm_cu, ptx, defines, gpu=target, mode="ptx")
    assert result.returncode == 0, result.stderr
    parts = re.split(r"(?m)^(?:\.visible\s+)?\.entry\s+", ptx.read_text())[1:]
    parts = [re.sub(r"(?m)^\s*// \.globl.*$", "", p) for p in parts]   # the next entry's name
    kernels = {re.match(r"\w+", p)[0]: p for p in parts if re.match(r"_Z\w*gemm_tiled\w*Dmma", p)}
    return kernels, report


@pytest.mark.parametrize("ta, tb", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_every_double_tile_has_the_f64_mma_and_no_spills(gemm_cu, tmp_path, ta, tb):
    kernels, report = dmma_kernels(gemm_cu, tmp_path, ta, tb, HOPPER, verbose=True)
    assert len(kernels) == len(PAIRS["F64_IN_OUT"]["tiles"])
    for name, text in kernels.items():
        assert F64_MMA in text and "wmma" not in text and "trap" not in text, name
    spills = re.findall(r"Compiling entry function '(_Z10gemm_tiled\w*Dmma\w*)'.*?(\d+) bytes spill "
                        r"stores, (\d+) bytes spill loads", report, re.S)
    assert len(spills) == len(kernels), report
    assert all(stores == loads == "0" for _, stores, loads in spills), spills


def test_older_targets_compile_the_double_kernel_as_a_trap(gemm_cu, tmp_path):
    kernels, _ = dmma_kernels(gemm_cu, tmp_path, 0, 1, "sm_80")
    assert len(kernels) == len(PAIRS["F64_IN_OUT"]["tiles"])
    for name, text in kernels.items():
        assert "mma.sync" not in text and "trap" in text, name


def test_only_double_has_the_double_kernel():
    assert [p for p, facts in PAIRS.items() if "dmma" in facts["kernels"]] == ["F64_IN_OUT"]


def test_the_plan_says_which_gpus_cannot_run_the_double_kernel(builds):
    """--plan=GPU names the kernels of the pair that GPU cannot run: the double kernel before
    sm_90, the Hopper kernel off sm_90; a GPU that runs them gets no such line."""
    result, exe, _ = builds[("F64_IN_OUT", "8x8x4", 0, 1)]
    assert result.returncode == 0, result.stderr
    plan = lambda gpu: subprocess.run([str(exe), "4096", "4096", "4096", f"--plan={gpu}"],
                                      capture_output=True, text=True, timeout=60).stdout
    for gpu in ("a100", "orin", "rtx4090", "t4"):
        assert "The double kernel does not run on" in plan(gpu), gpu
    for gpu in ("h100", "rtx5090"):
        assert "does not run on" not in plan(gpu), gpu
    result, exe, _ = builds[("F16_IN_F32_OUT", "16x16x16", 0, 1)]
    assert "The Hopper kernel does not run on" in subprocess.run(
        [str(exe), "--plan=a100"], capture_output=True, text=True, timeout=60).stdout
