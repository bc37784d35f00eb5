"""Shared fixtures for the tests of gemm.md: the tangled source and a way to compile it.

The tests never build through `make` (which rebuilds one ./gemm in place).
They tangle gemm.md once per session into a temporary folder and call nvcc
on that copy directly, with the same -D options the Makefile would pass.
"""

import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import gemmlib  # noqa: E402  (the one way to build gemm.md; its lists come from --describe)

# What ./gemm --describe says: the type pairs, shapes, layouts, kernels, tiles, GPUs and CSV
# columns every test takes its parameters from. A PTX-only build of gemm.md, done once.
REGISTRY = gemmlib.registry()
PAIRS = gemmlib.pairs(REGISTRY)                 # {name: entry}, in gemm.md's order
TYPES = list(PAIRS)
SHAPES = REGISTRY["shapes"]
LAYOUTS = {name: tuple(t) for name, t in REGISTRY["layouts"].items()}
GPUS = {g["name"]: g for g in REGISTRY["gpus"]}
CSV_COLUMNS = REGISTRY["csv_columns"]


def default_shape(pair):
    """The shape a build of `pair` takes when none is given: the pair's first."""
    return PAIRS[pair]["shapes"][0]


def config_defines(type_pair=None, shape=None, ta=None, tb=None):
    """The -D options for one configuration, spelled as the Makefile spells them, cuBLAS off
    (these builds neither need nor link it, whatever gemm.md does with USE_CUBLAS)."""
    return gemmlib.defines(type_pair, shape, ta, tb, cublas=False)


# Every valid configuration (pair, shape, transpose A, transpose B); and those whose ./gemm
# test_gemm.py runs: every pair with every transpose at its default shape, and four
# non-default shapes (which change the padding and the tiles that --plant=tile moves).
VALID = [(t, s, ta, tb) for t in TYPES for s in PAIRS[t]["shapes"] for ta in (0, 1) for tb in (0, 1)]
EXECUTABLES = [(t, default_shape(t), ta, tb) for t in TYPES for ta in (0, 1) for tb in (0, 1)]
EXECUTABLES += [("U8_IN_I32_OUT", "32x8x16", 1, 0), ("BF16_IN_F32_OUT", "8x32x16", 0, 1),
                ("F16_IN_OUT", "32x8x16", 0, 0), ("I8_IN_I32_OUT", "8x32x16", 1, 1)]


def config_name(config):
    return "-".join(str(part) for part in config)


@pytest.fixture(scope="session")
def builds(gemm_cu, tmp_path_factory):
    """Every valid configuration compiled once for sm_90, two at a time: those in EXECUTABLES
    as ./gemm (the default shape left to the document, as a plain `make` does), with the cubin
    and PTX of that same compile kept beside it, the rest as device code alone.
    config -> (CompletedProcess, executable or None, cubin); the PTX is the cubin's path with
    the suffix .ptx. (One compile serves the tests of the device code and of the host's.)"""
    folder = tmp_path_factory.mktemp("builds")

    def build(config):
        pair, shape, ta, tb = config
        out = folder / ("gemm-" + config_name(config))
        if config in EXECUTABLES:
            shape_option = None if shape == default_shape(pair) else shape
            result = gemmlib.nvcc(gemm_cu, out, config_defines(pair, shape_option, ta, tb),
                                  gpu="sm_90", keep=True)
            return result, out, Path(f"{out}.cubin")
        cubin = Path(f"{out}.cubin")
        return gemmlib.nvcc(gemm_cu, cubin, config_defines(*config), gpu="sm_90", mode="cubin"), None, cubin

    assert set(EXECUTABLES) <= set(VALID)
    return in_parallel(build, VALID)


def in_parallel(function, items):
    """Map `function` over `items` on two threads (the CI machine has two cores).

    Returns a dict from item to result. nvcc runs as a separate process, so two
    threads really do compile two things at once.
    """
    items = list(items)
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(items, pool.map(function, items)))


def machine_has_gpu():
    """True when nvidia-smi reports a GPU, as the Makefile's own probe would see it."""
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.strip() != ""


@pytest.fixture(scope="session")
def gemm_cu(tmp_path_factory):
    """gemm.md tangled by tangle.py into a private folder; the path of the .cu file."""
    out = gemmlib.tangle(tmp_path_factory.mktemp("tangled") / "gemm.cu")
    assert out.stat().st_size > 0
    return out


@pytest.fixture(scope="session")
def nvcc():
    """nvcc(source, out, defines, mode="exe"|"cubin"|"ptx", arch="sm_90"): gemmlib.nvcc, the
    CompletedProcess. A cubin's PTX is kept beside it (out with the suffix .ptx)."""
    if shutil.which(gemmlib.NVCC) is None:
        pytest.fail(f"{gemmlib.NVCC} is not on PATH; these tests need the CUDA toolkit")

    def compile_(source, out, defines, mode="exe", arch="sm_90"):
        return gemmlib.nvcc(source, out, defines, gpu=arch, mode=mode)

    return compile_


@pytest.fixture(scope="session")
def gpu_present():
    """Whether this machine has a GPU that nvidia-smi can see (CI has none)."""
    return machine_has_gpu()


@pytest.fixture(scope="session")
def parallel():
    """in_parallel(function, items): map on two threads; a dict from item to result."""
    return in_parallel


@pytest.fixture(scope="session")
def defines():
    """config_defines(type_pair, shape, ta, tb): the -D options of one configuration."""
    return config_defines
