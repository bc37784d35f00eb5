"""Shared fixtures for the tests of gemm.md: the tangled source and a way to compile it.

The tests never build through `make` (which rebuilds one ./gemm in place).
They tangle gemm.md once per session into a temporary folder and call nvcc
on that copy directly, with the same -D options the Makefile would pass.
"""

import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import gemmlib  # noqa: E402  (the one way to build gemm.md; its lists come from --describe)

# gemmlib.nvcc as imported, for the compiles in the background: a test that replaces
# gemmlib.nvcc with a fake (monkeypatch) must not hand its fake to the background's threads,
# which would then "compile" every configuration left, in an instant, into the fake's output.
NVCC = gemmlib.nvcc

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


# Those whose ./gemm test_gemm.py runs: the document's own pair in every layout, every other
# pair at its default shape in TN, the layout the measurements use (the host's transposes are
# the same code for every pair; the other layouts are built as device code); and four
# non-default shapes in other layouts, two of them with A transposed (they change the padding
# and the tiles that --plant=tile moves).
DOCUMENT_PAIR = REGISTRY["build"]["type"]
EXECUTABLES = [(t, default_shape(t), ta, tb) for t in TYPES for ta in (0, 1) for tb in (0, 1)
               if t == DOCUMENT_PAIR or (ta, tb) == (0, 1)]
# Those of them whose machine code is made (ptxas, a third of a compile) and kept: every pair
# once, in TN. The others carry PTX alone (target compute_90): run without a GPU, as the tests
# run them, ./gemm never reaches its device code.
WITH_SASS = [(t, default_shape(t), 0, 1) for t in TYPES]
EXECUTABLES += [("U8_IN_I32_OUT", "32x8x16", 1, 0), ("BF16_IN_F32_OUT", "8x32x16", 0, 1),
                ("F16_IN_OUT", "32x8x16", 0, 0), ("I8_IN_I32_OUT", "8x32x16", 1, 1)]
def earlier_twin(pair, same, differs):
    """The first pair before this one in TYPES that --describe gives the same `same` facts and
    another `differs`, if any."""
    twin = lambda t: PAIRS[t][differs] != PAIRS[pair][differs] and all(PAIRS[t][k] == PAIRS[pair][k] for k in same)
    return next((t for t in TYPES[:TYPES.index(pair)] if twin(t)), None)


def input_twin(pair):
    """An earlier pair that reads the same inputs into the same sums in the same shapes, if any
    (the pairs with a 16-bit C from float sums have one): only C's type tells them apart."""
    return earlier_twin(pair, ("in", "acc", "shapes"), "c")


def format_twin(pair):
    """An earlier pair that differs from this one only in how its input bytes are read (int8 and
    uint8, the two FP8 formats): the same sizes, sums, C, shapes, kernels, tiles and loads, so the
    same code but for the instruction's type, if any."""
    return earlier_twin(pair, ("in_bytes", "acc", "c", "integer", "ptx_load", "k_major", "shapes", "kernels",
                               "tiles"), "in")


# The configurations compiled (pair, shape, transpose A, transpose B): every pair at its default
# shape in NN, TT and TN (its ./gemm), and its other shapes in NN and TT, which between them load
# each operand both ways (a fragment's load, and its copy into shared memory, depend on its own
# operand's layout alone, and so do the Hopper kernel's K-major copies): the fourth layout, A
# transposed and B not, adds no code of its own, and only the document's pair compiles it (as
# a ./gemm). A pair with an input twin, whose loads and copies are its twin's, compiles only
# what its ./gemm runs and its other shapes in NN (its C's path depends on the shape, not the
# layout); a pair with a format twin, whose code is its twin's but for the instruction's type,
# only what its ./gemm runs. The GPU check builds every one.
VALID = [(t, s, ta, tb) for t in TYPES for s in PAIRS[t]["shapes"] for ta in (0, 1) for tb in (0, 1)
         if (t, s, ta, tb) in EXECUTABLES
         or (not input_twin(t) and not format_twin(t) and (ta, tb) != (1, 0) and (s == default_shape(t) or ta == tb))
         or (input_twin(t) and s != default_shape(t) and ta == tb == 0)]


BACKGROUND_NICENESS = 10   # the priority the background's compiles give up (nice(1))


def config_name(config):
    return "-".join(str(part) for part in config)


class Compiles:
    """The configurations of gemm.md compiled for sm_90, each once in the session whichever
    test asks for it first: those in EXECUTABLES as ./gemm (the default shape left to the
    document, as a plain `make` does), with the PTX of that same compile kept beside it, and
    the cubin too for those in WITH_SASS; the rest as PTX alone. compiles(config)
    -> (CompletedProcess, executable or None, cubin, which exists only beside those of WITH_SASS);
    the PTX is the cubin's path with the suffix .ptx. Safe to call from threads."""

    def __init__(self, source, folder):
        self.source, self.folder = source, folder
        self.lock = threading.Lock()
        self.done = {}      # config -> Future of its compile, made by whoever asked first
        self.pool, self.queued = None, {}

    def __call__(self, config):
        with self.lock:
            future = self.done.get(config)
            mine = future is None
            if mine:
                future = self.done[config] = Future()
        if mine:
            try:
                future.set_result(self.compile(config))
            except BaseException as e:
                future.set_exception(e)
        return future.result()

    def compile(self, config):
        pair, shape, ta, tb = config
        out = self.folder / ("gemm-" + config_name(config))
        cubin = Path(f"{out}.cubin")
        # The background's compiles give way to the tests' own, so that these run at full speed
        # and the background's last compiles still keep the second core busy at the end.
        niceness = BACKGROUND_NICENESS if threading.current_thread().name.startswith("background") else 0
        if config in EXECUTABLES:
            shape_option = None if shape == default_shape(pair) else shape
            sass = config in WITH_SASS   # with ptxas's report of each kernel (registers, spills)
            result = NVCC(self.source, out, config_defines(pair, shape_option, ta, tb)
                          + (["-Xptxas", "-v"] if sass else []),
                          gpu="sm_90" if sass else "compute_90", keep=True, niceness=niceness)
            return result, out, cubin
        return NVCC(self.source, cubin.with_suffix(".ptx"), config_defines(*config), gpu="sm_90",
                    mode="ptx", niceness=niceness), None, cubin

    def ahead(self, configs):
        """Compile `configs` on two threads of their own (the machine has two cores), started
        once; {config: Future of its compile}."""
        with self.lock:
            if self.pool is None:
                self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="background")
                self.queued = {config: self.pool.submit(self, config) for config in configs}
            return self.queued

    def close(self):
        """Stop what has not started (after a test run cut short); wait for what has."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def pytest_collection_modifyitems(items):
    """The tests that need every configuration compiled (`builds`) run last, each file's in
    their order: the others run first, while compile_ahead compiles in the background."""
    items.sort(key=lambda item: "builds" in item.fixturenames)


def say(config, line):
    """Write a line on the terminal at once, even while pytest captures the tests' output."""
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if terminal is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            terminal.write_line(line)


# The compiles begun in the background, for the progress lines: pytest's config, the Compiles,
# how many were done when a line last said so, and when they began.
AHEAD_STATE = {}


def pytest_runtest_logfinish():
    """After each test, while the background compiles go on, a line for every 8 more done."""
    if not AHEAD_STATE or AHEAD_STATE["said"] == len(VALID):
        return
    done = sum(future.done() for future in AHEAD_STATE["compiles"].queued.values())
    if done >= AHEAD_STATE["said"] + 8 or done == len(VALID):
        AHEAD_STATE["said"] = done
        say(AHEAD_STATE["config"], f"\ncompiling gemm.md in the background: {done}/{len(VALID)} "
                                   f"configurations done ({time.monotonic() - AHEAD_STATE['start']:.0f} s)")


@pytest.fixture(scope="session")
def compiles(gemm_cu, tmp_path_factory, request):
    """compiles(config): one configuration of VALID, compiled once in the session (Compiles)."""
    made = Compiles(gemm_cu, tmp_path_factory.mktemp("builds"))
    request.addfinalizer(made.close)
    return made


# Longest first, so that the two threads end together: the executables, then device code alone.
AHEAD = sorted(VALID, key=lambda config: config not in EXECUTABLES)


@pytest.fixture(scope="session", autouse=True)
def compile_ahead(request):
    """Where some test of the session needs every configuration (`builds`), start compiling
    them all in the background at once (minutes of work), so that the tests that need none,
    run first, have the other core's time."""
    if any("builds" in item.fixturenames for item in request.session.items):
        compiles = request.getfixturevalue("compiles")
        compiles.ahead(AHEAD)
        AHEAD_STATE.update(config=request.config, compiles=compiles, said=0, start=time.monotonic())
        say(request.config, f"\ncompiling gemm.md in the background: {len(VALID)} configurations for sm_90, "
                            f"{len(EXECUTABLES)} of them as ./gemm; the tests that need them run last")


@pytest.fixture(scope="session")
def executable(compiles):
    """executable(pair, ta, tb): ./gemm of the pair at its default shape in that layout, compiled
    once in the session (shared with `builds`); fails the test if it did not build."""
    def get(pair, ta=0, tb=1):
        result, exe, _ = compiles((pair, default_shape(pair), ta, tb))
        assert result.returncode == 0, result.stderr
        return exe
    return get


@pytest.fixture(scope="session")
def builds(compiles, request):
    """Every valid configuration compiled (`compiles`, begun by compile_ahead); while some are
    still compiling, a line every few configurations says how far it has got.
    config -> (CompletedProcess, executable or None, cubin)."""
    assert set(EXECUTABLES) <= set(VALID)
    futures = compiles.ahead(AHEAD)
    left = [config for config in VALID if not futures[config].done()]
    if left:
        start = time.monotonic()
        say(request.config, f"\ncompiling gemm.md: {len(VALID) - len(left)}/{len(VALID)} configurations done")
        for n, _ in enumerate(as_completed(futures[config] for config in left), 1):
            if n % 8 == 0 or n == len(left):
                say(request.config, f"compiling gemm.md: {len(VALID) - len(left) + n}/{len(VALID)} configurations "
                                    f"done ({time.monotonic() - start:.0f} s)")
    if AHEAD_STATE:
        AHEAD_STATE["said"] = len(VALID)     # all said: no more lines after the tests
    return {config: futures[config].result() for config in VALID}


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
