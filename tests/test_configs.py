"""Compile-time configuration of gemm.md: type pairs, WMMA shapes, transposes, the Makefile.

No GPU is needed. Valid configurations are compiled once, by conftest's `builds`: most for
the device only, as PTX; those whose ./gemm test_gemm.py runs as executables, each pair's
first in TN with its machine code (ptxas) kept; invalid ones only
as far as PTX, which is where gemm.md's static_asserts fire. The pairs, shapes and tiles come
from ./gemm --describe (conftest.REGISTRY).
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PAIRS, REGISTRY, SHAPES, TYPES, VALID, WITH_SASS

REPO = Path(__file__).resolve().parent.parent

# Type pairs with shapes they do not take: each pair with one, and each shape with one pair (the
# check is one static_assert for all of them).
MISMATCHED = [(t, s) for t in TYPES for s in SHAPES if s not in PAIRS[t]["shapes"]]
INVALID = sorted({next(m for m in MISMATCHED if m[0] == t) for t in TYPES}
                 | {next(m for m in MISMATCHED if m[1] == s) for s in SHAPES if any(m[1] == s for m in MISMATCHED)})

# PTX's names of the C++ element types --describe gives for a pair's inputs and accumulator.
PTX_TYPE = {"half": "f16", "bfloat16": "bf16", "unsigned char": "u8", "signed char": "s8",
            "float (as tf32)": "tf32", "float": "f32", "double": "f64", "int": "s32"}


def ptx_mma_types(pair):
    """How the WMMA multiply of `pair` is spelled in PTX after the layouts and the shape: the
    accumulator types, and for inputs other than f16 the input types between them."""
    a, c = PTX_TYPE[PAIRS[pair]["in"]], PTX_TYPE[PAIRS[pair]["acc"]]
    return f"{c}.{c}" if a == "f16" else f"{c}.{a}.{a}.{c}"


NEWER_GPU = "needs a newer GPU"

# The kernels of gemm.md: the simple one, the tiled one and the WMMA ceiling.
KERNELS = ["gemm_simple", "gemm_tiled", "wmma_ceiling"]


def test_the_posts_table_of_type_pairs_is_the_programs():
    """The table of type pairs in gemm.md's text states the shapes and the oldest GPU of each
    pair as the program has them (./gemm --describe)."""
    text = (REPO / "gemm.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+_IN_\w+)` +\|[^|]+\|[^|]+\| ([^|]+)\| sm_(\d+) +\|$", text, re.M)
    assert [t for t, _, _ in rows] == TYPES, rows
    for type_pair, shapes, cc in rows:
        assert [s.strip().replace("×", "x") for s in shapes.split(",")] == PAIRS[type_pair]["shapes"]
        assert int(cc) == PAIRS[type_pair]["min_cc"]


def test_a_type_pair_is_named_only_by_its_traits_and_the_list_of_pairs(gemm_cu):
    """Adding a type pair touches its traits struct and PAIRS, nothing else in gemm.cu: with
    those taken out, no pair's name is left; and the preprocessor is at most 3 % of the lines
    (the kernels ask the traits with if constexpr, not #if on the pairs' names)."""
    source = gemm_cu.read_text(encoding="utf-8")
    rest = re.sub(r"(?ms)^struct (\w+)_pair\b.*?^\};$", "", source)
    rest = re.sub(r"(?s)typedef List<[^;]*> PAIRS;", "", rest)
    assert rest.count("_pair {") == 0 and "PAIRS;" not in rest      # the patterns matched
    assert source.count("_pair {") == len(TYPES)
    # The default's #define (the line that selects a pair) and messages' examples may name one.
    rest = re.sub(r"#ifndef TYPE_FROM_MAKE\n#define \w+\n#endif", "", rest)
    rest = re.sub(r'"(\\.|[^"\\\n])*"', '""', rest)
    left = [name for name in TYPES if re.search(rf"\b{name}(_pair)?\b", rest)]
    assert left == [], left
    lines = source.splitlines()
    directives = [l for l in lines if re.match(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif|define)\b", l)]
    assert len(directives) <= 0.03 * len(lines), len(directives)


def config_id(config):
    return "-".join(str(part) for part in config)


def error_lines(stderr):
    """The compiler's error messages (not its count of them at the end)."""
    return [line for line in stderr.splitlines() if re.search(r"\berror\b", line)
            and not re.search(r"\d+ errors? detected", line)]


# ---------------------------------------------------------------- valid configurations

@pytest.fixture(scope="module")
def device_builds(builds):
    """Every valid configuration's device code (conftest's builds); config -> (result, cubin)."""
    return {config: (result, cubin) for config, (result, _, cubin) in builds.items()}


@pytest.mark.parametrize("config", VALID, ids=config_id)
def test_valid_configuration_compiles_its_kernel(device_builds, config):
    type_pair, shape, ta, tb = config
    result, cubin = device_builds[config]
    assert result.returncode == 0, f"{config} does not compile:\n{result.stderr}"
    # The machine code, where the session built it (beside an executable): every kernel has code.
    data = cubin.read_bytes() if cubin.exists() else None
    assert data is None or data[:4] == b"\x7fELF", "the cubin is not an ELF file"
    assert data is not None or config not in WITH_SASS
    ptx = cubin.with_suffix(".ptx").read_text()
    if "tiled" not in PAIRS[type_pair]["kernels"]:
        # A pair with no WMMA shape (FP8): none of the WMMA kernels is compiled, and no WMMA.
        for kernel in KERNELS:
            assert data is None or not re.search(rb"\.text\.\w*" + kernel.encode(), data), kernel
            assert not re.search(r"(?m)^\.visible \.entry \w*" + kernel, ptx), kernel
        assert "wmma." not in ptx and shape == "none"
        return
    for kernel in KERNELS:
        assert data is None or re.search(rb"\.text\.\w*" + kernel.encode(), data), \
            f"the kernel {kernel} has no code in the cubin"

    # The PTX shows that the kernels were compiled for this very configuration:
    # one WMMA multiply, with the shape, the layouts and the types asked for.
    entries = ptx_entries(ptx)
    for kernel in KERNELS:
        body = [text for name, text in entries.items()
                if kernel in name and "Dmma" not in name and "Mma16" not in name]
        # One simple kernel; one tiled kernel per tile, every one of which fits sm_90, and where
        # C is narrower than the sums, a second per tile, which writes split-K slices' sums.
        narrower = PAIRS[type_pair]["c_bytes"] < PAIRS[type_pair]["acc_bytes"]
        tiled = len(PAIRS[type_pair]["tiles"]) * (2 if narrower else 1)
        assert len(body) == (tiled if kernel == "gemm_tiled" else 1), \
            f"{kernel}: {len(body)} entries in the PTX"
        for text in body:
            assert "wmma.mma.sync" in text, f"{kernel} has no WMMA multiply"
    # The double kernel: for double only, one per tile, with mma.sync's 16 x 8 x 4 form for
    # f64 in the layouts it is given (A rows, B columns) and no WMMA.
    dmma = [text for name, text in entries.items() if "gemm_tiled" in name and "Dmma" in name]
    if "dmma" in PAIRS[type_pair]["kernels"]:
        assert len(dmma) == len(PAIRS[type_pair]["tiles"])
        for text in dmma:
            assert "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64" in text and "wmma" not in text
    else:
        assert dmma == []
    # The mma.sync kernel: for the 16-bit pairs, one per tile, with ldmatrix (transposing
    # where the operand is stored along M or N, four 8 x 8 tiles at a time) and mma.sync's
    # 16 x 8 x 16 form, no WMMA; for the 8-bit integers the 16 x 8 x 32 form, in the layout TN
    # only (ldmatrix transposes 16-bit elements, not bytes), and none in the other layouts.
    mma16 = [text for name, text in entries.items() if "gemm_tiled" in name and "Mma16" in name]
    pair = PAIRS[type_pair]
    if "mma" in pair["kernels"] and (pair["in_bytes"] == 2 or (ta, tb) == (0, 1)):
        # (two per tile where C is narrower than the sums, as for the tiled kernel)
        narrower = pair["c_bytes"] < pair["acc_bytes"]
        assert len(mma16) == len(pair["tiles"]) * (2 if narrower else 1)
        form = "m16n8k16.row.col" if pair["in_bytes"] == 2 else "m16n8k32.row.col.s32." + "su"[pair["in"] == "unsigned char"]
        for text in mma16:
            assert "mma.sync.aligned." + form in text and "wmma" not in text, form
            assert "ldmatrix.sync.aligned.m8n8.x4" + (".trans" if ta else "") + ".shared.b16" in text
            assert "ldmatrix.sync.aligned.m8n8.x4" + ("" if tb else ".trans") + ".shared.b16" in text
    else:
        assert mma16 == []
    mmas = set(re.findall(r"wmma\.mma\.sync\.aligned\.([a-z0-9.]+)", ptx))
    assert mmas, "no WMMA multiply in the PTX"
    m, n, k = shape.split("x")
    layout_a = "col" if ta else "row"
    layout_b = "col" if tb else "row"
    expected = f"{layout_a}.{layout_b}.m{m}n{n}k{k}.{ptx_mma_types(type_pair)}"
    assert {re.sub(r"\.rn$", "", mma) for mma in mmas} == {expected}

    # tf32 inputs are rounded to nearest, ties away (cvt.rna), before the multiply.
    rounds = "cvt.rna.tf32.f32" in ptx
    assert rounds == (PAIRS[type_pair]["in"] == "float (as tf32)")


def ptx_entries(ptx):
    """{mangled kernel name: its PTX text up to the next entry} of a PTX file."""
    parts = re.split(r"(?m)^(?:\.visible\s+)?\.entry\s+", ptx)[1:]
    # without the comment that names the next entry, which is not this one's text
    return {re.match(r"[\w$]+", part).group(0): re.sub(r"(?m)^\s*// \.globl.*$", "", part)
            for part in parts}


def tiled_ptx(built, tile=0):
    """The PTX of gemm_tiled for one tile (the first: the worklog's) in a build of the nvcc
    fixture: its PTX, or a cubin's, kept beside it."""
    entries = ptx_entries(built.with_suffix(".ptx").read_text())
    tiled = [text for name, text in entries.items() if f"gemm_tiledILi{tile}E6WmmaOf" in name]
    assert len(tiled) == 1
    return tiled[0]


def tangle_with(tmp_path, *changes):
    """gemm.md tangled with change files of worklog/ (names without .md); the .cu path."""
    out = tmp_path / ("-".join(changes) + ".cu")
    args = [a for name in changes for a in ("--change", str(REPO / "worklog" / f"{name}.md"))]
    result = subprocess.run([sys.executable, str(REPO / "tangle.py"), str(REPO / "gemm.md"), *args,
                             "-o", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out


def test_the_shipped_kernel_copies_with_cp_async(device_builds):
    result, cubin = device_builds[("F16_IN_F32_OUT", "16x16x16", 0, 1)]
    assert result.returncode == 0, result.stderr
    tiled = tiled_ptx(cubin)
    assert "cp.async.cg" in tiled and "cp.async.wait_group" in tiled


def test_the_shipped_kernel_refuses_one_stage(gemm_cu, nvcc, defines, tmp_path):
    """One stage is an earlier step's loop, kept in worklog/one-stage.md, not a setting of gemm.md."""
    result = nvcc(gemm_cu, tmp_path / "one.cubin", defines("F16_IN_F32_OUT", "16x16x16", 0, 1)
                  + ["-DSTAGES=1"], mode="cubin")
    assert result.returncode != 0 and "at least two stages" in result.stderr


def test_the_first_steps_rebuild_from_their_change_files(nvcc, defines, tmp_path):
    """Steps 1 and 2: one buffer, copies through registers, the epilogue from fragments, and the
    compiler's wmma.load (generic for bfloat16)."""
    source = tangle_with(tmp_path, "one-stage", "direct-epilogue", "compilers-load")
    ptx = tmp_path / "step1.ptx"   # (PTX alone: what is checked, without ptxas's time)
    result = nvcc(source, ptx, defines("BF16_IN_F32_OUT", "16x16x16", 0, 1) + ["-DSTAGES=1"],
                  mode="ptx")
    assert result.returncode == 0, result.stderr
    tiled = tiled_ptx(ptx)
    assert "cp.async" not in tiled and "wmma.mma.sync" in tiled
    assert "wmma.load.a.sync.aligned.row.m16n16k16.bf16" in tiled      # generic: no .shared
    assert "wmma.load.c.sync" in tiled                                  # C read as a fragment
    shipped = tmp_path / "shipped.ptx"
    assert nvcc(tangle_with(tmp_path), shipped, defines("BF16_IN_F32_OUT", "16x16x16", 0, 1),
                mode="ptx").returncode == 0
    shipped_ptx = tiled_ptx(shipped)
    assert "wmma.load.a.sync.aligned.row.m16n16k16.shared.bf16" in shipped_ptx
    assert "wmma.load.c.sync" not in shipped_ptx


@pytest.mark.parametrize("config, settings", [
    (("F16_IN_F32_OUT", "16x16x16", 0, 1), ["-DSTAGES=2", "-DSPREAD_COPIES=1"]),
    (("BF16_IN_F32_OUT", "16x16x16", 1, 0), ["-DPREFETCH_FRAGMENTS=0", "-DSPREAD_COPIES=0"]),
    (("TF32_IN_F32_OUT", "16x16x8", 0, 1), ["-DPREFETCH_FRAGMENTS=1"]),
    (("I8_IN_I32_OUT", "16x16x16", 0, 0), ["-DSPREAD_COPIES=1"]),
    (("F64_IN_OUT", "8x8x4", 1, 1), ["-DPREFETCH_FRAGMENTS=0", "-DSTAGES=3"]),
], ids=lambda v: "-".join(map(str, v)) if isinstance(v, tuple) else " ".join(v))
def test_both_loops_build_for_every_family(gemm_cu, nvcc, defines, tmp_path, config, settings):
    """The two main loops (fragments loaded ahead or not) and spread copies build, with WMMA in them."""
    ptx = tmp_path / "loop.ptx"   # (PTX alone: what is checked)
    result = nvcc(gemm_cu, ptx, defines(*config) + settings, mode="ptx")
    assert result.returncode == 0, result.stderr
    ptx = tiled_ptx(ptx)
    assert "wmma.mma.sync" in ptx and "cp.async.wait_group" in ptx and "bar.sync" in ptx


def test_fragments_ahead_need_an_even_number_of_wk_steps(gemm_cu, nvcc, defines, tmp_path):
    """BLOCK_K of three WK steps is refused with a message when fragments are loaded ahead, not otherwise."""
    flags = defines("F16_IN_F32_OUT", "16x16x16", 0, 1) + ["-DBLOCK_K=48"]
    refused = nvcc(gemm_cu, tmp_path / "odd.cubin", flags, mode="cubin")
    assert refused.returncode != 0
    assert "PREFETCH_FRAGMENTS needs an even number of WK steps" in refused.stderr
    # (the copies are spread only in the loop that loads ahead: without it, SPREAD_COPIES is refused)
    spread = nvcc(gemm_cu, tmp_path / "odd1.ptx", flags + ["-DPREFETCH_FRAGMENTS=0"], mode="ptx")
    assert spread.returncode != 0
    assert "SPREAD_COPIES spreads the copies of the loop with PREFETCH_FRAGMENTS only" in spread.stderr
    accepted = nvcc(gemm_cu, tmp_path / "odd0.ptx", flags + ["-DPREFETCH_FRAGMENTS=0", "-DSPREAD_COPIES=0"],
                    mode="ptx")
    assert accepted.returncode == 0, accepted.stderr


@pytest.mark.parametrize("left_out", ["copies-only", "math-only"])
def test_measurement_builds_leave_out_what_they_say(nvcc, defines, tmp_path, left_out):
    """Without the math the tiled kernel has no WMMA multiply; without the copies, no cp.async.

    Either way the compiler warns that the build is for measuring only, and
    the simple kernel keeps its multiply.
    """
    built = tmp_path / "part.ptx"   # (PTX alone: what is checked)
    result = nvcc(tangle_with(tmp_path, left_out), built, defines("F16_IN_F32_OUT", "16x16x16", 0, 1),
                  mode="ptx")
    assert result.returncode == 0, result.stderr
    assert "a measurement build" in result.stderr
    ptx = tiled_ptx(built)
    if left_out == "copies-only":
        assert "wmma.mma.sync" not in ptx and "wmma.load" not in ptx
        assert "cp.async.cg" in ptx
    else:
        assert "cp.async.cg" not in ptx
        assert "wmma.mma.sync" in ptx
    simple = [t for n, t in ptx_entries(built.read_text()).items() if "gemm_simple" in n]
    assert len(simple) == 1 and "wmma.mma.sync" in simple[0]


# ---------------------------------------------------------------- invalid configurations

def refused(result, message):
    """The build failed, its first error is `message`, and the error points into gemm.md
    (tangle.py's #line directives)."""
    assert result.returncode != 0, "the build was accepted"
    errors = error_lines(result.stderr)
    assert errors and message in errors[0], result.stderr
    assert re.search(r"gemm\.md\(\d+\): error", errors[0]), errors[0]
    return errors


@pytest.fixture(scope="module")
def invalid_builds(gemm_cu, nvcc, tmp_path_factory, defines, parallel):
    folder = tmp_path_factory.mktemp("invalid")

    def build(pair):
        type_pair, shape = pair
        return nvcc(gemm_cu, folder / f"{config_id(pair)}.ptx", defines(type_pair, shape), mode="ptx")

    return parallel(build, INVALID)


@pytest.mark.parametrize("pair", INVALID, ids=config_id)
def test_mismatched_type_and_shape_is_refused_naming_both(invalid_builds, pair):
    """One error, whose note names the pair and the shape."""
    type_pair, shape = pair
    result = invalid_builds[pair]
    errors = refused(result, "the type pair and the WMMA shape do not go together")
    assert len(errors) == 1, result.stderr
    assert f"ShapeFor<P, S> [with P={type_pair}_pair, S=MNK_{shape}_shape]" in result.stderr


def test_a_valid_configuration_builds_cleanly(gemm_cu, nvcc, tmp_path, defines):
    """The control for the tests around it: without a mistake, the same build succeeds."""
    result = nvcc(gemm_cu, tmp_path / "ok.ptx", defines("F16_IN_F32_OUT", "32x8x16", 1, 0), mode="ptx")
    assert result.returncode == 0, result.stderr
    assert not error_lines(result.stderr)


def test_a_pair_alone_takes_its_first_shape(gemm_cu, nvcc, tmp_path, defines):
    """`#define F64_IN_OUT` (or make TYPE=F64_IN_OUT) with no shape builds with 8x8x4."""
    result = nvcc(gemm_cu, tmp_path / "f64.ptx", defines("F64_IN_OUT"), mode="ptx")
    assert result.returncode == 0, result.stderr
    assert re.search(r"wmma\.mma\.sync\.aligned\.row\.row\.m8n8k4\.f64", (tmp_path / "f64.ptx").read_text())


def listed_pairs(stderr):
    """The type pairs the note of "no type pair is defined" lists, without their _pair."""
    listed = re.search(r"T=<([^>]*)>", stderr)
    assert listed, stderr
    return [name.strip().removesuffix("_pair") for name in listed[1].split(",")]


def test_no_type_pair_lists_the_pairs(gemm_cu, nvcc, tmp_path):
    result = nvcc(gemm_cu, tmp_path / "none.ptx", ["-DTYPE_FROM_MAKE", "-DUSE_CUBLAS=0"], mode="ptx")
    errors = refused(result, "no type pair is defined")
    assert len(errors) == 1, result.stderr
    assert listed_pairs(result.stderr) == TYPES


def test_two_type_pairs_are_named_both(gemm_cu, nvcc, tmp_path):
    flags = ["-DTYPE_FROM_MAKE", "-DF16_IN_OUT", "-DF64_IN_OUT", "-DUSE_CUBLAS=0"]
    result = nvcc(gemm_cu, tmp_path / "two.ptx", flags, mode="ptx")
    errors = refused(result, "more than one type pair")
    assert len(errors) == 1, result.stderr
    assert "OnlyOne<A, B> [with A=F16_IN_OUT_pair, B=F64_IN_OUT_pair]" in result.stderr


def test_two_shapes_are_named_both(gemm_cu, nvcc, tmp_path, defines):
    flags = defines("F16_IN_F32_OUT", "16x16x16") + ["-DMNK_32x8x16"]
    result = nvcc(gemm_cu, tmp_path / "two.ptx", flags, mode="ptx")
    errors = refused(result, "(or WMMA shape)")
    assert len(errors) == 1, result.stderr
    assert "OnlyOne<A, B> [with A=MNK_16x16x16_shape, B=MNK_32x8x16_shape]" in result.stderr


def test_a_shape_from_make_that_names_none_is_refused(gemm_cu, nvcc, tmp_path, defines):
    flags = defines("F16_IN_F32_OUT", "3x3x3")
    errors = refused(nvcc(gemm_cu, tmp_path / "bad.ptx", flags, mode="ptx"), "make's MNK names no WMMA shape")
    assert len(errors) == 1


@pytest.mark.parametrize("which", ["A", "B"])
@pytest.mark.parametrize("value", ["2", "-1"])
def test_transpose_must_be_0_or_1(gemm_cu, nvcc, tmp_path, which, value, defines):
    flags = defines("F16_IN_F32_OUT") + [f"-DTRANSPOSE_{which}={value}"]
    errors = refused(nvcc(gemm_cu, tmp_path / "t.ptx", flags, mode="ptx"), f"TRANSPOSE_{which} must be 0 or 1")
    assert len(errors) == 1


# ---------------------------------------------------------------- the target GPU

def nvcc_archs():
    """The compute capabilities (times ten) this nvcc can compile for."""
    out = subprocess.run(["nvcc", "--list-gpu-arch"], capture_output=True, text=True).stdout
    return sorted(int(x) for x in re.findall(r"compute_(\d+)", out))


@pytest.fixture(scope="module")
def oldest_builds(gemm_cu, nvcc, tmp_path_factory, defines, parallel):
    """Every pair built for the oldest GPU this nvcc targets (CUDA 13: sm_75)."""
    folder = tmp_path_factory.mktemp("oldest")
    oldest = nvcc_archs()[0]

    def build(pair):
        return nvcc(gemm_cu, folder / f"{pair}.ptx", defines(pair), mode="ptx", arch=f"sm_{oldest}")

    return oldest, parallel(build, TYPES)


@pytest.mark.parametrize("type_pair", TYPES)
def test_a_pair_is_refused_for_a_gpu_older_than_its_oldest(oldest_builds, type_pair):
    """A pair whose oldest GPU is newer than the target stops at one clear error, the only
    one (the code for that GPU is compiled with the first pair instead, which it has, so
    that mma.h adds none of its own about WMMA types missing there); the others build. CUDA 13 targets nothing older than sm_75, so the check of the
    8-bit pairs against Volta (sm_70) is the same comparison, not a build."""
    oldest, builds = oldest_builds
    result = builds[type_pair]
    if PAIRS[type_pair]["min_cc"] > oldest:
        assert len(refused(result, NEWER_GPU)) == 1, result.stderr
    else:
        assert result.returncode == 0, result.stderr


def test_a_build_with_no_kernel_for_a_gpu_says_so(gemm_cu, nvcc, tmp_path, defines):
    """A pair with no WMMA shape (FP8) has only the Hopper kernel: its build for sm_80 compiles,
    with a warning that ./gemm would run nothing on that GPU."""
    pair = next(t for t in TYPES if set(PAIRS[t]["kernels"]) == {"wgmma"})
    result = nvcc(gemm_cu, tmp_path / "none.ptx", defines(pair), mode="ptx", arch="sm_80")
    assert result.returncode == 0, result.stderr
    warnings = [l for l in result.stderr.splitlines() if re.search(r": warning\b", l)]
    assert len(warnings) == 1 and "has no kernel for the type pair" in warnings[0], result.stderr
    assert "make ARCH=sm_90a" in warnings[0]


def test_the_newer_pairs_build_for_sm80(gemm_cu, nvcc, tmp_path, defines):
    newest = max(TYPES, key=lambda t: PAIRS[t]["min_cc"])
    assert PAIRS[newest]["min_cc"] == 80
    result = nvcc(gemm_cu, tmp_path / "a.ptx", defines(newest), mode="ptx", arch="sm_80")
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------- the Makefile

# Variables that must not leak into the make runs below from whoever runs the tests
# (an outer `make test ARCH=...` passes its command-line variables in MAKEFLAGS).
LEAKY = ["MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "GNUMAKEFLAGS",
         "TYPE", "MNK", "TRANSPOSE_A", "TRANSPOSE_B", "ARCH", "CUBLAS", "NVFLAGS", "NVCC"]


@pytest.fixture(scope="module")
def make_dir(tmp_path_factory):
    """A copy of what the Makefile needs, so that make never touches the real tree."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    folder = tmp_path_factory.mktemp("make")
    for name in ["gemm.md", "tangle.py", "Makefile"]:
        shutil.copy(REPO / name, folder / name)
    if (REPO / "post").is_dir():
        shutil.copytree(REPO / "post", folder / "post")
    return folder


def run_make(folder, *arguments, timeout=120, path=None):
    """make in `folder`; `path`: a folder put first on PATH (a stand-in nvidia-smi)."""
    env = {k: v for k, v in os.environ.items() if k not in LEAKY}
    env["PYTHON"] = sys.executable
    if path:
        env["PATH"] = f"{path}{os.pathsep}{env['PATH']}"
    return subprocess.run(["make", *arguments], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=timeout)


def make_n(folder, *variables):
    return run_make(folder, "-n", *variables)


def nvcc_line(result):
    lines = [line for line in result.stdout.splitlines() if "-o gemm gemm.cu" in line]
    assert len(lines) == 1, result.stdout + result.stderr
    return lines[0]


@pytest.mark.parametrize("setting,allowed", [
    ("TRANSPOSE_B=2", ["0 or 1"]),
    ("TRANSPOSE_A=yes", ["0 or 1"]),
    ("CUBLAS=2", ["0 or 1"]),
])
def test_make_refuses_a_bad_setting_naming_the_choices(make_dir, setting, allowed):
    result = make_n(make_dir, setting)
    assert result.returncode != 0
    assert setting in result.stderr
    for choice in allowed:
        assert choice in result.stderr
    assert "nvcc" not in result.stdout


@pytest.mark.parametrize("setting,message", [
    ("TYPE=BOGUS", "no type pair is defined"),
    ("MNK=3x3x3", "make's MNK names no WMMA shape"),
    ("TYPE=F64_IN_OUT MNK=16x16x16", "the type pair and the WMMA shape do not go together"),
])
def test_make_with_a_pair_or_shape_that_gemm_md_lacks_stops_with_one_message(make_dir, setting, message):
    """The Makefile keeps no list of pairs or shapes: gemm.md's static_asserts refuse them."""
    result = run_make(make_dir, "ARCH=sm_90", *setting.split(), timeout=300)
    assert result.returncode != 0
    errors = error_lines(result.stderr)
    assert errors and message in errors[0], result.stderr


@pytest.mark.parametrize("setting", ["TYPE=BOGUS", "TYPE=f16_in_f32_out"])
def test_make_with_a_type_pair_gemm_md_lacks_lists_the_pairs(make_dir, setting):
    """A misspelt pair, or one in lower case, is answered with the names, from gemm.md's list."""
    result = run_make(make_dir, "ARCH=sm_90", setting, timeout=300)
    assert result.returncode != 0
    assert len(error_lines(result.stderr)) == 1, result.stderr
    assert listed_pairs(result.stderr) == TYPES


def test_make_for_a_gpu_older_than_the_pair_stops_at_one_short_message(make_dir):
    newer = next(t for t in TYPES if PAIRS[t]["min_cc"] > nvcc_archs()[0] and "tiled" in PAIRS[t]["kernels"])
    result = run_make(make_dir, f"ARCH=sm_{nvcc_archs()[0]}", f"TYPE={newer}", timeout=300)
    assert result.returncode != 0
    errors = error_lines(result.stderr)
    assert len(errors) == 1 and NEWER_GPU in errors[0], result.stderr
    assert len(result.stderr) < 2000, result.stderr


@pytest.fixture
def two_gpus(tmp_path):
    """A folder with a stand-in nvidia-smi for a machine whose GPU 0 is an A100 and GPU 1 an
    H100, answering --query-gpu=compute_cap with -i N as the real one does."""
    folder = tmp_path / "bin"
    folder.mkdir()
    smi = folder / "nvidia-smi"
    smi.write_text('#!/bin/sh\ncase " $* " in\n'
                   '  *" -i 0 "*) echo 8.0 ;;\n  *" -i 1 "*) echo 9.0 ;;\n'
                   '  *" -i "*) echo "No devices were found" >&2; exit 6 ;;\n'
                   '  *) echo 8.0; echo 9.0 ;;\nesac\n')
    smi.chmod(0o755)
    return folder


def test_make_device_builds_for_that_gpu_of_the_machine(make_dir, two_gpus):
    assert "-arch=sm_80" in nvcc_line(run_make(make_dir, "-n", path=two_gpus)).split()
    assert "-arch=sm_80" in nvcc_line(run_make(make_dir, "-n", "DEVICE=0", path=two_gpus)).split()
    line = nvcc_line(run_make(make_dir, "-n", "DEVICE=1", path=two_gpus))
    assert "arch=compute_90a,code=sm_90a" in line.split() and "sm_80" not in line
    for bad, message in [("DEVICE=2", "no such GPU"), ("DEVICE=0 ARCH=sm_90", "give one")]:
        result = run_make(make_dir, "-n", *bad.split(), path=two_gpus)
        assert result.returncode != 0 and message in result.stderr and "nvcc" not in result.stdout


def test_make_records_its_flags_for_the_report_as_a_shell_word(make_dir):
    """build/built_with.h holds NVFLAGS as a C string whose text, put between the double quotes of
    the report's NVFLAGS="...", gives the shell back NVFLAGS as make had it, quotes and all."""
    import ast
    import shlex
    nvflags = '-O3 -std=c++17 -DNOTE="a b" -Dpath=c:\\d'
    result = run_make(make_dir, "-n", "ARCH=sm_86", f"NVFLAGS={nvflags}")
    assert result.returncode == 0, result.stderr
    header = dict(re.findall(r'(?m)^#define (BUILT_\w+) (".*")$', (make_dir / "build" / "built_with.h").read_text()))
    assert ast.literal_eval(header["BUILT_ARCH"]) == "sm_86"
    shell_text = ast.literal_eval(header["BUILT_NVFLAGS"])
    assert shlex.split(f'NVFLAGS="{shell_text}"') == [f"NVFLAGS={nvflags}"]


def test_make_records_the_commit_of_gemm_md_for_version(tmp_path):
    """--version names the commit that last changed gemm.md, as make writes it into
    build/built_with.h; it says so where gemm.md has changed since, and names none outside git."""
    if shutil.which("make") is None or shutil.which("git") is None:
        pytest.skip("make or git is not installed")
    for name in ["gemm.md", "tangle.py", "Makefile"]:
        shutil.copy(REPO / name, tmp_path / name)

    def recorded():
        assert run_make(tmp_path, "-n", "ARCH=sm_90").returncode == 0
        return re.findall(r'(?m)^#define GEMM_COMMIT "(.*)"$', (tmp_path / "build" / "built_with.h").read_text())

    assert recorded() == []
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    for step in (["init", "-q"], ["add", "gemm.md", "tangle.py", "Makefile"], ["commit", "-q", "-m", "m"]):
        subprocess.run(git + step, check=True, capture_output=True)
    head = subprocess.run(git + ["log", "-1", "--format=%h"], capture_output=True, text=True).stdout.strip()
    assert recorded() == [f"gemm.md at {head}"]
    with open(tmp_path / "gemm.md", "a", encoding="utf-8") as f:
        f.write("\nA line more.\n")
    assert recorded() == [f"gemm.md at {head}, with changes not committed"]


def test_make_passes_the_type_pair(make_dir):
    line = nvcc_line(make_n(make_dir, "TYPE=F64_IN_OUT"))
    flags = line.split()
    for flag in ["-DTYPE_FROM_MAKE", "-DF64_IN_OUT"]:
        assert flag in flags
    for other in set(TYPES) - {"F64_IN_OUT"}:
        assert f"-D{other}" not in flags
    assert not any(flag.startswith("-DMNK_") for flag in flags)


def test_make_passes_the_same_defines_as_these_tests(make_dir, defines):
    """The direct nvcc builds of the tests configure gemm.md exactly as make would."""
    config = ("U8_IN_I32_OUT", "32x8x16", 1, 0)
    line = nvcc_line(make_n(make_dir, f"TYPE={config[0]}", f"MNK={config[1]}",
                            f"TRANSPOSE_A={config[2]}", f"TRANSPOSE_B={config[3]}", "ARCH=sm_90"))
    make_flags = {flag for flag in line.split() if flag.startswith("-D") and "CUBLAS" not in flag}
    ours = {flag for flag in defines(*config) if "CUBLAS" not in flag}
    assert make_flags == ours


def test_make_without_settings_leaves_the_document_defaults(make_dir):
    flags = nvcc_line(make_n(make_dir, "ARCH=sm_90")).split()
    assert not any(flag.endswith("_FROM_MAKE") or flag.startswith("-DTRANSPOSE") for flag in flags)


def test_make_arch(make_dir):
    flags = nvcc_line(make_n(make_dir, "ARCH=sm_90")).split()
    assert "-arch=sm_90" in flags
    assert "-gencode" not in flags


def test_make_without_arch_and_gpu_covers_a100_orin_and_hopper(make_dir, gpu_present):
    if gpu_present:
        pytest.skip("this machine has a GPU; the Makefile builds for it alone")
    line = nvcc_line(make_n(make_dir))
    for sm in ["sm_80", "sm_87", "sm_90a"]:   # Hopper with its own instructions (wgmma)
        assert re.search(rf"code=\[?{sm}\b", line), line
    assert "arch=compute_90,code=compute_90" in line, "PTX for newer GPUs"


def test_make_spells_sm90a_with_gencode(make_dir):
    """-arch=sm_90a would also run a plain sm_90 pass, which rejects wgmma and setmaxnreg."""
    flags = nvcc_line(make_n(make_dir, "ARCH=sm_90a")).split()
    assert "arch=compute_90a,code=sm_90a" in flags and not any(f.startswith("-arch") for f in flags)


def test_make_refuses_a_setting_of_several_words(make_dir):
    result = make_n(make_dir, "TYPE=F16_IN_OUT BOGUS")
    assert result.returncode != 0


def fake_python(make_dir, folder, version):
    """A stand-in for python3 that answers --version with `version` and fails anything else,
    saying what it was asked; and the requirements that `make test` needs beside the Makefile."""
    path = folder / f"fake-python{version}"
    path.write_text(f'#!/bin/sh\n[ "$1" = --version ] && echo "Python {version}" && exit 0\n'
                    f'echo "asked: $*"; exit 3\n')
    path.chmod(0o755)
    for requirements in ["tests/requirements.txt", "scripts/requirements-sweep.txt"]:
        (make_dir / requirements).parent.mkdir(exist_ok=True)
        shutil.copy(REPO / requirements, make_dir / requirements)
    return path


@pytest.mark.parametrize("version", ["3.10.12", "2.7.18", "3.9.2"])
def test_make_test_stops_on_an_old_python_before_making_the_environment(make_dir, tmp_path, version):
    venv = tmp_path / "venv"
    result = run_make(make_dir, "test", f"PYTHON={fake_python(make_dir, tmp_path, version)}", f"VENV={venv}")
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if not line.startswith("make: ")]
    assert errors == [f"{venv}, the environment of make test and make sweep, needs Python 3.11 or newer; "
                      f"{tmp_path}/fake-python{version} is Python {version} (give another with PYTHON=...)"], \
        result.stderr
    assert "asked" not in result.stdout and not venv.exists()


@pytest.mark.parametrize("version", ["3.11.0", "3.12.1", "3.20.0"])
def test_make_test_goes_on_to_the_environment_with_python_3_11_or_newer(make_dir, tmp_path, version):
    venv = tmp_path / "venv"
    result = run_make(make_dir, "test", f"PYTHON={fake_python(make_dir, tmp_path, version)}", f"VENV={venv}")
    assert f"asked: -m venv {venv}" in result.stdout, result.stdout + result.stderr
    assert "needs Python" not in result.stderr


# ---------------------------------------------------------------- the document's own defaults

@pytest.fixture(scope="module")
def default_builds(nvcc, tmp_path_factory, parallel):
    """gemm.md as it is, and with its default pair edited to F64_IN_OUT (and nothing else),
    built without any configuration options, as `make` with no settings would."""
    folder = tmp_path_factory.mktemp("defaults")
    text = (REPO / "gemm.md").read_text()
    assert text.count("\n#define F16_IN_F32_OUT\n") == 1
    documents = {"original": text,
                 "edited": text.replace("\n#define F16_IN_F32_OUT\n", "\n#define F64_IN_OUT\n")}

    def build(name):
        sub = folder / name
        sub.mkdir()
        (sub / "gemm.md").write_text(documents[name])
        tangled = subprocess.run([sys.executable, str(REPO / "tangle.py"), "gemm.md",
                                  "-o", "gemm.cu"], cwd=sub, capture_output=True, text=True)
        assert tangled.returncode == 0, tangled.stderr
        result = nvcc(sub / "gemm.cu", sub / "gemm", ["-DUSE_CUBLAS=0"], arch="compute_90")   # run without a GPU
        return result, sub / "gemm"

    return parallel(build, list(documents))


def report_field(stdout, label):
    for line in stdout.splitlines():
        if line.split(":")[0].strip() == label:
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"no {label!r} in the report:\n{stdout}")


@pytest.mark.parametrize("document,type_pair,shape", [
    ("original", "F16_IN_F32_OUT", "16x16x16"),
    ("edited", "F64_IN_OUT", "8x8x4"),
])
def test_the_configuration_block_sets_the_default(default_builds, document, type_pair, shape):
    result, exe = default_builds[document]
    assert result.returncode == 0, result.stderr
    run = subprocess.run([str(exe), "--cpu-only", "3", "5", "7"], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert report_field(run.stdout, "Type pair").split()[0] == type_pair
    assert report_field(run.stdout, "WMMA shape") == shape
    assert report_field(run.stdout, "Transposed") == "A no, B no"
    assert report_field(run.stdout, "Result") == "PASS"


# ---------------------------------------------------------------- building with and without cuBLAS

def make_real(folder, *variables):
    """A real make (not -n) in a copy of the tree; ARCH=sm_90 keeps it to one target."""
    return run_make(folder, "ARCH=sm_90", *variables, timeout=600)


def linked_libraries(exe):
    ldd = subprocess.run(["ldd", str(exe)], capture_output=True, text=True)
    assert ldd.returncode == 0, ldd.stderr
    return ldd.stdout


@pytest.mark.parametrize("cublas", ["0", "1"])
def test_make_builds_with_and_without_cublas(tmp_path, cublas):
    if shutil.which("make") is None or shutil.which("ldd") is None:
        pytest.skip("make or ldd is not installed")
    for name in ["gemm.md", "tangle.py", "Makefile"]:
        shutil.copy(REPO / name, tmp_path / name)
    built = make_real(tmp_path, f"CUBLAS={cublas}")
    assert built.returncode == 0, built.stdout + built.stderr
    # Warning-free with or without cuBLAS (nvcc once warned that CUBLAS=0 left a variable unused).
    assert "warning" not in (built.stdout + built.stderr).lower(), built.stdout + built.stderr
    exe = tmp_path / "gemm"
    assert ("libcublas" in linked_libraries(exe)) == (cublas == "1")

    # The report's first line is the make command, with the flags nvcc was given before the target.
    nvflags = nvcc_line(built).split(" -arch=sm_90 ")[0].split(" ", 1)[1]
    run = subprocess.run([str(exe), "--cpu-only", "5", "7", "3"], capture_output=True, text=True, timeout=60)
    built_with = [l.split(":", 1)[1].strip() for l in run.stdout.splitlines() if l.startswith("Built with")]
    assert built_with and built_with[0].startswith("make TYPE=") and built_with[0].endswith('"'), run.stdout
    assert f' CUBLAS={cublas} ARCH=sm_90 NVFLAGS="{nvflags} -DBLOCK_M=' in built_with[0]
    assert "-lineinfo -Xcompiler -Wall" in nvflags

    # The option is read and the report says what became of cuBLAS.
    def cublas_line(*args):
        run = subprocess.run([str(exe), "--cpu-only", *args, "5", "7", "3"],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        return [l for l in run.stdout.splitlines() if l.startswith("cuBLAS ")]

    if cublas == "1":
        assert cublas_line() == ["cuBLAS                : not run (--cpu-only)"]
        assert cublas_line("--cublas=off") == ["cuBLAS                : off (--cublas=off)"]
        assert cublas_line("--cublas", "on") == ["cuBLAS                : not run (--cpu-only)"]
    else:
        assert cublas_line() == ["cuBLAS                : not built in (make CUBLAS=0)"]
        refused = subprocess.run([str(exe), "--cublas=on", "5", "7", "3"],
                                 capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2
        assert "built without cuBLAS" in refused.stderr
    bad = subprocess.run([str(exe), "--cpu-only", "--cublas=maybe", "1", "1", "1"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--cublas" in bad.stderr
    assert "--cublas=on|off" in subprocess.run([str(exe), "--help"], capture_output=True,
                                               text=True).stdout


def test_wmma_alignment_rules_the_post_relies_on(gemm_cu, nvcc, defines, tmp_path):
    """The post's section "A rule we bend": ldm a multiple of 16 bytes is enforced at compile
    time, and the GPU check runs memcheck on an 8-bit configuration with an 8-wide shape (the
    one whose fragments lie 8 bytes apart), which is the evidence the section cites."""
    flags = defines("F16_IN_F32_OUT", "16x16x16", 0, 1)
    refused = nvcc(gemm_cu, tmp_path / "skew8.cubin", flags + ["-DSKEW_BYTES=8"], mode="cubin")
    assert refused.returncode != 0 and "multiple of 16" in refused.stderr
    refused = nvcc(gemm_cu, tmp_path / "k8.cubin", defines("I8_IN_I32_OUT", "16x16x16", 1, 0)
                   + ["-DBLOCK_M=72"], mode="cubin")
    assert refused.returncode != 0
    import check_gpu
    configs = check_gpu.configurations(REGISTRY)
    memchecked = {(c[0], c[1]) for tool, c, _, _ in check_gpu.sanitizer_runs(REGISTRY, configs, "80", False)
                  if tool == "memcheck"}
    assert memchecked == {(t, s) for t in TYPES for s in PAIRS[t]["shapes"]}
    assert ("I8_IN_I32_OUT", "8x32x16") in memchecked
    post = (REPO / "gemm.md").read_text(encoding="utf-8")
    assert "<summary>A rule we bend, and why it holds</summary>" in post


def test_the_plan_and_its_figure_agree_on_the_k_tile():
    """The figure of the block tile shows the shipped BLOCK_K for half, and the text counts bytes
    and operations with the same tile and k-tile."""
    text = (REPO / "gemm.md").read_text(encoding="utf-8")
    assert REGISTRY["build"]["type"] == "F16_IN_F32_OUT"     # gemm.md's default pair: half
    tile = REGISTRY["tiles"][0]
    shipped, m, n = tile["block_k"], tile["block_m"], tile["block_n"]
    flat = re.sub(r"\s+", " ", text)
    assert f"in the running example {m} × {n} elements" in flat
    assert f"k-tile, now `BLOCK_K` = {shipped} elements ({2 * shipped} bytes) deep, the block copies" in flat
    assert f"One k-tile brings $({m} + {n}) \\cdot {shipped}$" in flat
    kib, millions = (m + n) * shipped * 2 // 1024, 2 * m * n * shipped / 1e6
    assert f"elements, {kib} KiB," in flat and f"= {millions:.1f} million operations" in flat
    wm, wn = m // tile["warps_m"], n // tile["warps_n"]
    assert (f"here, {tile['warps_m']} × {tile['warps_n']} warps (`BLOCK_WARPS_M`, `BLOCK_WARPS_N`) of "
            f"{wm} × {wn} (`WARP_M`, `WARP_N`), each {wm // 16} × {wn // 16} fragments") in flat
    caption = re.search(r"!\[The running example's ([^\]]*)\]\(post/figures/block-tile.svg\)", text)
    assert caption and f"{m} × {shipped} slice of A and a {shipped} × {n} slice of B" in caption[1]


def test_the_gpu_check_memchecks_the_hopper_kernel_for_each_pair_it_takes():
    """The Hopper kernel's memcheck runs on a Hopper GPU for each pair it takes, none other (by
    default every pair --describe lists it for, double not); and where one layout is checked
    (--layouts TN), every shape of the pair still gets its runs, in that layout."""
    import check_gpu
    configs = check_gpu.configurations(REGISTRY)
    hopper_runs = lambda configs, cc, quick, *pairs: [
        c for tool, c, _, options in check_gpu.sanitizer_runs(REGISTRY, configs, cc, quick, *pairs)
        if "--kernel=wgmma" in options]
    runs = hopper_runs(configs, "90", True, {"I8_IN_I32_OUT"})
    assert runs and {c[0] for c in runs} == {"I8_IN_I32_OUT"} and all(c in configs for c in runs)
    assert not hopper_runs(configs, "80", True, {"I8_IN_I32_OUT"})
    default = {c[0] for c in hopper_runs(configs, "90", True)}
    assert default == {p for p in TYPES if "wgmma" in PAIRS[p]["kernels"]} and "F64_IN_OUT" not in default
    tn = check_gpu.configurations(REGISTRY, ["I8_IN_I32_OUT"], ["TN"])
    runs = hopper_runs(tn, "90", False, {"I8_IN_I32_OUT"})
    assert {c[1] for c in runs} == set(PAIRS["I8_IN_I32_OUT"]["shapes"]) and {tuple(c[2:]) for c in runs} == {(0, 1)}


def test_the_gpu_check_runs_the_sanitizers_on_the_mma_kernel_where_it_runs():
    """memcheck (K split) and racecheck of the mma.sync kernel from sm_80 on, for each pair it
    takes; the 8-bit pairs in the layout TN, the only one it takes them in."""
    import check_gpu
    configs = check_gpu.configurations(REGISTRY)
    runs = lambda cc: [(tool, c) for tool, c, _, options in
                       check_gpu.sanitizer_runs(REGISTRY, configs, cc, True) if "--kernel=mma" in options]
    takes = {p for p in TYPES if "mma" in PAIRS[p]["kernels"]}
    assert {(tool, c[0]) for tool, c in runs("90")} == {(t, p) for t in ("memcheck", "racecheck") for p in takes}
    assert {"I8_IN_I32_OUT", "U8_IN_I32_OUT"} <= takes and "TF32_IN_F32_OUT" not in takes
    assert all(tuple(c[2:]) == (0, 1) for _, c in runs("90") if PAIRS[c[0]]["k_major"])
    assert runs("80") == runs("90") and runs("75") == []


def test_the_gpu_check_runs_the_sanitizers_on_the_double_kernel_where_it_runs():
    """memcheck (K split) and racecheck of the double kernel, on sm_90 only, for double only."""
    import check_gpu
    configs = check_gpu.configurations(REGISTRY)
    runs = lambda cc: {(tool, c[0]) for tool, c, _, options in
                       check_gpu.sanitizer_runs(REGISTRY, configs, cc, True) if "--kernel=dmma" in options}
    assert runs("90") == {("memcheck", "F64_IN_OUT"), ("racecheck", "F64_IN_OUT")}
    assert runs("100") == runs("90") and runs("80") == set() and runs("87") == set()
