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
