"""Shared fixtures for the tests of gemm.md: the tangled source and a way to compile it.

The tests never build through `make` (which rebuilds one ./gemm in place).
They tangle gemm.md once per session into a temporary folder and call nvcc
on that copy directly, with the same -D options the Makefile would pass.
"""

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NVCC = os.environ.get("NVCC", "nvcc")
# The Makefile's optimisation and language flags; -lineinfo and -Wall do not matter here.
BASE_FLAGS = ["-O3", "-std=c++17"]
COMPILE_TIMEOUT = 600


def config_defines(type_pair=None, shape=None, ta=None, tb=None):
    """The -D options for one configuration, spelled as the Makefile spells them.

    cuBLAS is switched off explicitly, so that these builds neither need nor
    link it, whatever gemm.md does with USE_CUBLAS.
    """
    flags = []
    if type_pair is not None:
        flags += ["-DTYPE_FROM_MAKE", f"-D{type_pair}", "-DMNK_FROM_MAKE"]
    if shape is not None:
        flags += ["-DMNK_FROM_MAKE", f"-DMNK_{shape}"]
    if ta is not None:
        flags.append(f"-DTRANSPOSE_A={ta}")
    if tb is not None:
        flags.append(f"-DTRANSPOSE_B={tb}")
    flags.append("-DUSE_CUBLAS=0")
    return flags


def run_command(cmd, cwd=None, timeout=COMPILE_TIMEOUT):
    """Run `cmd`; return the CompletedProcess (text mode, output captured)."""
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


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
    folder = tmp_path_factory.mktemp("tangled")
    out = folder / "gemm.cu"
    result = run_command([sys.executable, REPO / "tangle.py", REPO / "gemm.md", "-o", out])
    assert result.returncode == 0, f"tangle.py failed:\n{result.stderr}"
    assert out.stat().st_size > 0
    return out


@pytest.fixture(scope="session")
def nvcc():
    """Helper that compiles a tangled source in one of three ways.

    nvcc(source, out, defines, mode=..., arch=...) returns the CompletedProcess:
      mode="exe"        a whole executable (host and device code) at `out`;
      mode="cubin"      device code only, the cubin at `out`, with the PTX kept
                        beside it (out with the suffix .ptx);
      mode="preprocess" only the preprocessor (host and device passes), which is
                        where every #error of the configuration checks fires.
    """
    if shutil.which(NVCC) is None:
        pytest.fail(f"{NVCC} is not on PATH; these tests need the CUDA toolkit")

    def compile_(source, out, defines, mode="exe", arch="sm_90"):
        cmd = [NVCC, *BASE_FLAGS, f"-arch={arch}", *defines]
        if mode == "exe":
            cmd += ["-o", out, source]
        elif mode == "cubin":
            keep = Path(str(out) + ".keep")
            keep.mkdir(parents=True, exist_ok=True)
            cmd += ["-cubin", "-keep", "-keep-dir", keep, "-o", out, source]
        elif mode == "preprocess":
            cmd += ["-E", "-o", os.devnull, source]
        else:
            raise ValueError(mode)
        result = run_command(cmd)
        if mode == "cubin":
            keep = Path(str(out) + ".keep")
            ptx = sorted(keep.glob("*.ptx"))
            if result.returncode == 0 and ptx:
                shutil.copy(ptx[0], Path(out).with_suffix(".ptx"))
            shutil.rmtree(keep, ignore_errors=True)   # megabytes of intermediate files
        return result

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


def macro_expansions(source, defines, names):
    """What the macros `names` expand to at the end of `source`, configured by `defines`.

    The host preprocessor runs on the tangled source with its #include lines
    dropped (the configuration needs none of the headers), and one line naming
    the macros is appended. Returns a dict from name to the expanded text, such
    as '(128 / (int)sizeof(in_t))'. A macro that is not defined comes back as
    its own name.
    """
    compiler = shutil.which("g++") or shutil.which("cpp")
    if compiler is None:
        pytest.skip("no host C++ preprocessor")
    text = re.sub(r"(?m)^\s*#\s*include\b.*$", "", Path(source).read_text())
    probe = "@@macros@@ " + " @@ ".join(names)
    result = subprocess.run([compiler, "-E", "-x", "c++", "-P", *defines, "-"],
                            input=text + "\n" + probe + "\n", capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    line = [l for l in result.stdout.splitlines() if l.startswith("@@macros@@")]
    assert len(line) == 1, result.stdout[-2000:]
    values = [v.strip() for v in line[0][len("@@macros@@"):].split("@@")]
    return dict(zip(names, values))


def evaluate_integer(expression, sizes=None):
    """The value of a C integer expression made of numbers, + - * / % and parentheses.

    `sizes` maps type names to their sizeof; casts to int are dropped. Division
    truncates as in C (the operands here are positive).
    """
    for name, size in (sizes or {}).items():
        expression = re.sub(rf"sizeof\s*\(\s*{re.escape(name)}\s*\)", str(size), expression)
    expression = re.sub(r"\(\s*(?:int|long|unsigned|int64_t|size_t)\s*\)", "", expression)
    if not re.fullmatch(r"[0-9\s()+\-*/%]+", expression):
        raise ValueError(f"not a plain integer expression: {expression!r}")
    return int(eval(expression.replace("/", "//"), {"__builtins__": {}}))


@pytest.fixture(scope="session")
def macros():
    """macro_expansions(source, defines, names): the expansions of gemm.md's macros."""
    return macro_expansions


@pytest.fixture(scope="session")
def evaluate():
    """evaluate_integer(expression, sizes): a macro's expansion as a number."""
    return evaluate_integer
