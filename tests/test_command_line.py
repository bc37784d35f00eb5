"""What a first run of ./gemm meets at the command line, without a GPU: the defaults of
--cpu-only, the messages for a missing GPU and for a wrong command line, the options that
cannot go together, and the wording of the report and of --plan.

One build (F16_IN_F32_OUT, the default pair) serves every test here.
"""

import csv
import ctypes
import json
import re
import subprocess

import pytest

from conftest import GPUS, default_shape

PAIR = "F16_IN_F32_OUT"


@pytest.fixture(scope="module")
def gemm(compiles):
    """gemm(*args): the CompletedProcess of one ./gemm of the default pair and layout (the
    session's compile of it)."""
    built, exe, _ = compiles((PAIR, default_shape(PAIR), 0, 0))
    assert built.returncode == 0, built.stderr

    def run(*args, timeout=120):
        return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True,
                              timeout=timeout)
    return run


def usage_error(result, *patterns):
    """One line on the standard error, exit status 2, and each pattern in the message."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert result.stdout == ""
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and message.startswith("gemm: "), message
    for pattern in patterns:
        assert re.search(pattern, message), f"{pattern!r} not in {message!r}"
    return message


def report(stdout):
    return dict(re.match(r"^(\S.*?)\s+: (.*)$", line).groups()
                for line in stdout.splitlines() if re.match(r"^\S.*?\s+: ", line))


def test_cpu_only_without_sizes_takes_a_size_of_its_own(gemm):
    """The GPU's default, 8190^3, would keep the CPU busy for half an hour."""
    defaults = json.loads(gemm("--describe").stdout)["defaults"]
    side = defaults["cpu_only_side"]
    assert side < defaults["M"]
    assert f"(with --cpu-only, {side} {side} {side})" in gemm("--help").stdout
    result = gemm("--cpu-only", "--verify=sample")
    assert result.returncode == 0, result.stderr
    size = report(result.stdout)["Size M x N x K"]
    assert size.startswith(f"{side} x {side} x {side} (--cpu-only's default"), size


def test_without_a_gpu_the_message_says_what_is_missing(gemm, gpu_present):
    if gpu_present:
        pytest.skip("this machine has a GPU")
    run = gemm(7, 5, 3)
    assert run.returncode == 3 and run.stdout == ""
    message = run.stderr.strip()
    assert len(message.splitlines()) == 1
    assert re.search(r"no NVIDIA driver was found|the NVIDIA driver finds no GPU|"
                     r"the NVIDIA driver is older than", message), message
    assert "--cpu-only" in message
    # --plan without a GPU points to the GPUs it knows, not to --cpu-only.
    plan = gemm("--plan", 7, 5, 3)
    assert plan.returncode == 3 and "--cpu-only" not in plan.stderr
    assert all(name in plan.stderr for name in GPUS), plan.stderr
    assert "--plan=GPU" in plan.stderr
    # And what each message suggests works without a GPU.
    assert gemm("--cpu-only", 7, 5, 3).returncode == 0
    assert gemm(f"--plan={next(iter(GPUS))}", 7, 5, 3).returncode == 0


def test_plant_needs_a_check(gemm):
    usage_error(gemm("--cpu-only", "--plant=element", "--verify=off", 7, 5, 3),
                r"--plant", r"--verify=off")


@pytest.mark.parametrize("args,pattern", [(["--alpha", "1e38"], r"could overflow the result"),
                                          (["--alpha", "-1e38"], r"could overflow the result"),
                                          (["--alpha", "1e39"], r"--alpha 1e\+39 is too large")],
                         ids=lambda a: " ".join(a) if isinstance(a, list) else "")
def test_scalars_that_would_overflow_the_result_are_refused(gemm, args, pattern):
    """Before: the kernels' result and the reference both overflowed, and the check failed."""
    usage_error(gemm("--cpu-only", *args, 16, 16, 256), pattern)


def test_csv_with_its_header(gemm):
    result = gemm("--cpu-only", "--csv", "--csv-header", 7, 5, 3)
    assert result.returncode == 0, result.stderr
    rows = list(csv.reader(result.stdout.splitlines()))
    assert len(rows) == 2
    assert rows[0] == json.loads(gemm("--describe").stdout)["csv_columns"]
    line = dict(zip(*rows))
    assert line["impl"] == "cpu" and line["mode"] == "burst" and line["inputs"] == "uniform"
    # the CPU runs no timing, so NVML's columns are empty
    measured = ("sm_clock_mhz", "window_ms", "window_clock_mhz", "power_w", "energy_j", "throttle")
    assert [line[c] for c in measured] == [""] * len(measured)
    alone = gemm("--csv-header", 7, 5, 3)   # without --csv, the header alone
    assert alone.returncode == 0 and alone.stdout.splitlines() == [",".join(rows[0])]


def plan_slices(stdout):
    """The chosen (or forced) tile's slices in --plan's table, and in its text."""
    row = re.search(r"(?m)^  \S+\s+\d+ KiB\s+\d+\s+\d+\s+(\d+)\s+.*<- (?:chosen|forced)", stdout)
    split = re.search(r"K is split into (\d+) slices", stdout)
    made = re.search(r"which makes? (\d+) slices?", stdout)
    text = int(made.group(1)) if made else int(split.group(1)) if split else 1
    return int(row.group(1)), text


@pytest.mark.parametrize("sizes,split", [((16, 16, 16), 16), ((16, 16, 100), 4),
                                         ((512, 512, 16384), 0), ((64, 64, 40), 3)])
@pytest.mark.parametrize("kernel", [[], ["--kernel=tiled"]], ids=["all", "tiled"])
def test_plan_table_and_text_agree_on_the_slices(gemm, sizes, split, kernel):
    args = ["--plan=h100", *kernel, *sizes] + ([f"--split-k={split}"] if split else [])
    result = gemm(*args)
    assert result.returncode == 0, result.stderr
    table, text = plan_slices(result.stdout)
    assert table == text, result.stdout


def test_one_is_singular(gemm):
    words = r"\b1 (elements|runs|steps|slices|k-tiles|GPUs|sizes)\b"
    result = gemm("--cpu-only", 1, 1, 1)
    assert result.returncode == 0, result.stderr
    assert report(result.stdout)["Verification"].startswith("full: 1 element ")
    plan = gemm("--plan=h100", "--kernel=tiled", "--split-k=2", 16, 16, 16)
    assert plan.returncode == 0, plan.stderr
    assert "1 k-tile of" in plan.stdout and "makes 1 slice " in plan.stdout, plan.stdout
    for text in (result.stdout, plan.stdout):
        assert not re.search(words, text), re.search(words, text)


BAD = [
    (["", "1", "1"], [r"argument 1 is empty"]),
    (["1", "1", "1", ""], [r"argument 4 is empty"]),
    (["7", "5", "3", "2"], [r"too many sizes", r"'2'"]),
    (["--alpha", "16", "16", "16"], [r"only 2 sizes", r"--alpha took the 16"]),
    (["--seed", "7", "5", "3"], [r"--seed took the 7"]),
    (["--alpha", "--beta", "2", "7", "5", "3"], [r"--alpha needs a value", r"--beta"]),
    (["--device", "-1", "7", "5", "3"], [r"--device"]),
    (["--device=1", "--cpu-only", "7", "5", "3"], [r"--device", r"--cpu-only"]),
    (["--device=0", "--plan=h100", "7", "5", "3"], [r"--device", r"--plan=GPU"]),
    (["--inputs=gaussian", "7", "5", "3"], [r"'gaussian'", r"--inputs"]),
    (["--sustain=5", "--cpu-only", "7", "5", "3"], [r"--sustain", r"--cpu-only"]),
    (["--sustain=0", "7", "5", "3"], [r"--sustain must be between 1 and"]),
    (["--energy-ms=-3", "7", "5", "3"], [r"--energy-ms must be between 0 and"]),
]


@pytest.mark.parametrize("args,patterns", BAD, ids=[" ".join(map(repr, a)) for a, _ in BAD])
def test_messages_name_the_real_problem(gemm, args, patterns):
    usage_error(gemm(*args), *patterns)


def test_device_without_a_gpu(gemm, gpu_present):
    if gpu_present:
        pytest.skip("this machine has a GPU")
    result = gemm("--device=1", 7, 5, 3)
    assert result.returncode == 3 and "no usable CUDA GPU" in result.stderr


def test_version_and_help(gemm):
    result = gemm("--version")
    assert result.returncode == 0 and result.stderr == ""
    assert "gemm.md" in result.stdout
    assert re.search(r"CUDA.* \d+\.\d+", result.stdout), result.stdout
    assert f"TYPE={PAIR}" in result.stdout
    help_text = gemm("--help").stdout
    for option in ["--device=N", "--version", "--inputs=VALUES", "--energy-ms=MS", "--sustain=SECONDS"]:
        assert re.search(rf"(?m)^  {option}\s", help_text), option


def nvml_loads():
    """Whether this machine's dynamic loader finds the driver's NVML, as ./gemm asks it."""
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        return True
    except OSError:
        return False


def test_version_says_whether_clock_and_energy_are_measured(gemm):
    """Where the driver's NVML is missing (CI: no driver at all), ./gemm still runs and says
    that clock and energy are not measured; where it loads, that they are."""
    result = gemm("--version")
    line = re.search(r"(?m)^clock and energy: (.*)$", result.stdout)
    assert line, result.stdout
    if nvml_loads():
        assert line.group(1).startswith(("measured through NVML", "not measured: NVML did not answer"))
    else:
        assert line.group(1).startswith("not measured: no NVML here"), line.group(1)
        assert "libnvidia-ml.so.1" in line.group(1)
