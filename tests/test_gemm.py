"""The behaviour of ./gemm without a GPU: the CPU reference, the verifier, the command line.

Every type pair is built with all four transposes (and a few non-default WMMA
shapes, which change the padding and the tiles that --plant=tile moves). Each
binary runs with --cpu-only, which computes the product with the CPU
reference and verifies it like a GPU result. The reference itself is checked
against an independent computation in NumPy from the matrices that --print
writes.
"""

import ast
import csv
import re
import subprocess
import time

import numpy as np
import pytest

from conftest import DOCUMENT_PAIR, EXECUTABLES, PAIRS, REGISTRY, REPO, TYPES, default_shape

DEFAULT_SHAPE = {t: default_shape(t) for t in TYPES}

# How each element type that --describe names is stored, as this file's oracle knows it.
KIND = {"half": "half", "bfloat16": "bf16", "unsigned char": "u8", "signed char": "i8",
        "float (as tf32)": "float", "float": "float", "double": "double", "int": "int",
        "fp8 e4m3": "e4m3", "fp8 e5m2": "e5m2"}
# FP8's fraction bits and its smallest normal exponent.
FP8 = {"e4m3": (3, -6), "e5m2": (2, -14)}
INPUT_KIND = {t: KIND[PAIRS[t]["in"]] for t in TYPES}
OUTPUT_KIND = {t: KIND[PAIRS[t]["c"]] for t in TYPES}
TF32_PAIRS = {t for t in TYPES if PAIRS[t]["in"] == "float (as tf32)"}
# The range gemm.md draws 8-bit inputs from (small enough that K products fit an int).
INT_RANGE = {"u8": (0, 63), "i8": (-32, 31)}
INTEGER_PAIRS = {t for t in TYPES if PAIRS[t]["integer"]}

# Every pair with every transpose at its default shape, and four non-default shapes.
BUILDS = EXECUTABLES
PLAIN = [(t, DEFAULT_SHAPE[t], 0, 1) for t in TYPES]   # one build per pair, in TN
# The builds whose pair a kernel with a choice of block tiles takes (all but FP8): --plan
# lists their tiles.
TILED = [c for c in BUILDS if PAIRS[c[0]]["tiles"]]
F16 = ("F16_IN_F32_OUT", "16x16x16", 0, 0)
I8 = ("I8_IN_I32_OUT", "16x16x16", 0, 1)

SIZES = [(1, 1, 1), (7, 5, 3), (17, 33, 65), (13, 1, 9), (1, 19, 4)]
CRASH_WORDS = ["Segmentation", "core dumped", "terminate", "Aborted", "free()", "double free"]


def build_id(config):
    return "-".join(str(part) for part in config)


def tile(shape):
    """The sides (m, n, k) of a WMMA shape, or of "none", the shape of a pair without one."""
    return tuple(REGISTRY["shape_sides"][shape])


def padded(size, side):
    """gemm.md's rule: round up to whole tiles, and never to less than 16 elements.

    The tile is the tiled kernel's block tile (BLOCK_M x BLOCK_N x BLOCK_K),
    whose sides are whole WMMA tiles; see block_tile.
    """
    step = max(side, 16)
    return (size + step - 1) // step * step


def shape_option(config):
    """The MNK option of a build: None for the pair's default shape, as `binaries` builds it."""
    return None if config[1] == DEFAULT_SHAPE[config[0]] else config[1]


@pytest.fixture(scope="module")
def block_tile(binaries):
    """block_tile(config): (BLOCK_M, BLOCK_N, BLOCK_K) of the worklog's tile of that build,
    the first row of its tiles as --plan lists them."""
    def lookup(config):
        return plan_of(binaries, config, 1, 1, 1)[2][0]
    return lookup


def plan_of(binaries, config, m, n, k):
    """(chosen tile, padded sizes, every tile) from --plan=h100, tiles as (M, N, K) sides."""
    result, exe = binaries[config]
    assert result.returncode == 0, result.stderr
    out = subprocess.run([str(exe), str(m), str(n), str(k), "--plan=h100"], capture_output=True,
                         text=True, timeout=60).stdout
    tiles = [tuple(int(x) for x in t.split("x")) for t in re.findall(r"(?m)^  (\d+x\d+x\d+) ", out)]
    chosen = re.search(r"Chosen: (\d+)x(\d+)x(\d+); the problem is padded to (\d+) x (\d+) x (\d+)", out)
    assert chosen and tiles, out
    numbers = tuple(int(x) for x in chosen.groups())
    return numbers[:3], numbers[3:], tiles


def padded_sizes(stdout):
    """The report's `Padded to` line as a tuple of three ints."""
    text = report(stdout)["Padded to"]
    assert re.fullmatch(r"\d+ x \d+ x \d+", text), text
    return tuple(int(x) for x in text.split(" x "))


def check_padding(sizes, padded_to, config, block):
    """Padded sizes are whole block tiles, hence whole WMMA tiles and 16s, and the least such."""
    for size, got, wmma_side, block_side in zip(sizes, padded_to, tile(config[1]), block):
        assert got >= size
        assert got % wmma_side == 0 and got % 16 == 0, (size, got, wmma_side)
        assert got == padded(size, block_side), (size, got, block_side)


@pytest.fixture(scope="module")
def binaries(builds):
    """Every configuration in BUILDS, compiled for sm_90 (the device code is never run), by
    conftest's builds; config -> (result, executable)."""
    return {config: builds[config][:2] for config in BUILDS}


@pytest.fixture
def gemm(binaries):
    """gemm(config, *args) runs that build of ./gemm and returns the CompletedProcess."""
    def run(config, *args, timeout=60):
        result, exe = binaries[config]
        assert result.returncode == 0, f"{config} did not build:\n{result.stderr}"
        return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True,
                              timeout=timeout)
    return run


def no_crash(result):
    for word in CRASH_WORDS:
        assert word not in result.stderr and word not in result.stdout


# ---------------------------------------------------------------- reading the output

ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*(?:, [A-Za-z_]\w*)*) = (.*)$")


def parse_print(stdout):
    """The Python assignments that --print writes before the report, as a dict.

    `M, N, K = 1, 2, 3` gives three entries; matrices continue on indented lines.
    Parsing stops at the first line that is neither (the report).
    """
    pieces = []
    for line in stdout.splitlines():
        match = ASSIGNMENT.match(line)
        if match:
            pieces.append([match.group(1), match.group(2)])
        elif line.startswith(" ") and pieces:
            pieces[-1][1] += "\n" + line
        else:
            break
    values = {}
    for names, text in pieces:
        value = literal(text.strip())
        names = names.split(", ")
        if len(names) == 1:
            values[names[0]] = value
        else:
            assert len(value) == len(names)
            values.update(zip(names, value))
    return values


def literal(text):
    """ast.literal_eval, except that the nan and inf that printf writes become floats."""
    quoted = re.sub(r"(?<![\w\"])(-?)(nan|inf)\b", r'"\1\2"', text)
    return unquote(ast.literal_eval(quoted))


def unquote(value):
    if isinstance(value, list):
        return [unquote(v) for v in value]
    if isinstance(value, str) and re.fullmatch(r"-?(nan|inf)", value):
        return float(value)
    return value


def report(stdout):
    """The report's `label : value` lines as a dict."""
    fields = {}
    for line in stdout.splitlines():
        match = re.match(r"^(\S.*?)\s+: (.*)$", line)
        if match:
            fields[match.group(1)] = match.group(2)
    return fields


# ---------------------------------------------------------------- an independent reference

def tf32_round(values):
    """Round to tf32 (10 fraction bits), to nearest with ties away from zero, via the bits.

    Adding 2^12 to the bit pattern adds half a unit of the last kept bit to the
    magnitude; a carry out of the fraction correctly bumps the exponent.
    Infinities and NaNs are left alone.
    """
    single = np.asarray(values, dtype=np.float32)
    bits = single.view(np.uint32).copy()
    finite = (bits & np.uint32(0x7F800000)) != np.uint32(0x7F800000)
    bits[finite] = (bits[finite] + np.uint32(0x1000)) & np.uint32(0xFFFFE000)
    return bits.view(np.float32).astype(np.float64)


def math_operands(values):
    """A (M x K), B (K x N), C and D as float64 arrays, undoing the stored transposes."""
    M, N, K = values["M"], values["N"], values["K"]
    A = np.array(values["A"], dtype=np.float64)
    B = np.array(values["B"], dtype=np.float64)
    C = np.array(values["C"], dtype=np.float64)
    D = np.array(values["D"], dtype=np.float64)
    assert A.shape == ((K, M) if values["transpose_a"] else (M, K))
    assert B.shape == ((N, K) if values["transpose_b"] else (K, N))
    assert C.shape == (M, N) and D.shape == (M, N)
    if values["transpose_a"]:
        A = A.T
    if values["transpose_b"]:
        B = B.T
    return A, B, C, D


def expected_result(type_pair, values, A, B, C):
    """alpha*A*B + beta*C in float64, and the sum of magnitudes of its terms."""
    if type_pair in TF32_PAIRS:
        A, B = tf32_round(A), tf32_round(B)
    alpha, beta = values["alpha"], values["beta"]
    want = alpha * (A @ B) + beta * C
    magnitude = abs(alpha) * (np.abs(A) @ np.abs(B)) + abs(beta) * np.abs(C)
    return want, magnitude


def tolerance(type_pair, want, magnitude, K):
    """How far the stored result may be from the exact one.

    The reference sums in double (at most (K + 2) roundings of 2^-53 relative
    to the magnitudes) and then rounds once to the output type.
    """
    summing = 4 * (K + 2) * 2.0**-53 * magnitude
    kind = OUTPUT_KIND[type_pair]
    if kind == "int":
        return np.zeros_like(want)
    if kind == "half":
        return 2.0**-11 * np.abs(want) * (1 + 2.0**-20) + 2.0**-25 + summing
    if kind == "bf16":
        return 2.0**-8 * np.abs(want) * (1 + 2.0**-20) + 2.0**-134 + summing
    if kind == "float":
        return 2.0**-24 * np.abs(want) * (1 + 2.0**-20) + 2.0**-150 + summing
    return summing + 2.0**-1074


def representable(kind, x):
    """True where every element of x is a value of the storage type `kind`."""
    x = np.asarray(x, dtype=np.float64)
    if kind in ("u8", "i8", "int"):
        return bool(np.all(x == np.round(x)))
    if kind == "half":
        return bool(np.all(x.astype(np.float16).astype(np.float64) == x))
    if kind == "bf16":
        single = x.astype(np.float32)
        low = single.view(np.uint32) & np.uint32(0xFFFF)
        return bool(np.all(single.astype(np.float64) == x) and np.all(low == 0))
    if kind == "float":
        return bool(np.all(x.astype(np.float32).astype(np.float64) == x))
    if kind in FP8:   # a whole number of units of the last place of its binade
        bits, lowest = FP8[kind]
        nonzero = np.abs(x[x != 0])
        unit = 2.0 ** (np.maximum(np.floor(np.log2(nonzero)), lowest) - bits)
        return bool(np.all(nonzero / unit == np.round(nonzero / unit)))
    return True


def check_range(kind, x, name):
    x = np.asarray(x, dtype=np.float64)
    if kind in INT_RANGE:
        lo, hi = INT_RANGE[kind]
        assert x.min() >= lo and x.max() <= hi, f"{name} outside [{lo}, {hi}]"
    elif kind in ("half", "bf16", *FP8):
        # Drawn from [-1, 1); rounding to 16 or 8 bits can carry a value just below 1 up to 1.
        assert x.min() >= -1 and x.max() <= 1, f"{name} outside [-1, 1]"
    else:
        assert x.min() >= -1 and x.max() < 1, f"{name} outside [-1, 1)"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("config", BUILDS, ids=build_id)
def test_reference_matches_numpy(gemm, config, size):
    type_pair, shape, ta, tb = config
    result = gemm(config, "--cpu-only", "--print", *size)
    assert result.returncode == 0, result.stderr
    values = parse_print(result.stdout)

    assert values["type"] == type_pair
    assert values["shape"] == shape
    assert (values["transpose_a"], values["transpose_b"]) == (ta, tb)
    assert (values["M"], values["N"], values["K"]) == size
    assert (values["alpha"], values["beta"]) == (2, 3)   # the documented defaults
    assert report(result.stdout)["Result"] == "PASS"

    A, B, C, D = math_operands(values)
    in_kind, out_kind = INPUT_KIND[type_pair], OUTPUT_KIND[type_pair]
    for name, matrix in [("A", A), ("B", B)]:
        assert representable(in_kind, matrix), f"{name} holds values that are not {in_kind}"
        check_range(in_kind, matrix, name)
    assert representable(out_kind, C) and representable(out_kind, D)
    check_range(in_kind if out_kind == "int" else out_kind, C, "C")

    want, magnitude = expected_result(type_pair, values, A, B, C)
    error = np.abs(D - want)
    bound = tolerance(type_pair, want, magnitude, size[2])
    worst = np.unravel_index(np.argmax(error - bound), error.shape)
    assert np.all(error <= bound), (
        f"D{list(worst)} = {D[worst]!r}, NumPy says {want[worst]!r} (tolerance {bound[worst]:.3g})")


@pytest.mark.parametrize("config", BUILDS, ids=build_id)
def test_inputs_are_spread_over_their_range(gemm, config):
    """A larger problem: the pseudo-random inputs really are spread out, not constant."""
    type_pair = config[0]
    values = parse_print(gemm(config, "--cpu-only", "--print", 40, 30, 50).stdout)
    kind = INPUT_KIND[type_pair]
    lo, hi = INT_RANGE.get(kind, (-1, 1))
    for name in "AB":
        x = np.array(values[name], dtype=np.float64)
        width = hi - lo
        assert x.min() < lo + 0.1 * width and x.max() > hi - 0.1 * width, name
        assert len(np.unique(x)) > min(x.size, 64) // 2, name
        assert abs(x.mean() - (lo + hi) / 2) < 0.1 * width, name


def significant_bits(x):
    """The significant bits of each value of x (0 for zero): the fewest b such that x is an
    integer multiple of a power of two below 2^b times that power."""
    x = np.asarray(x, dtype=np.float64).ravel()
    fraction, _ = np.frexp(np.abs(x[x != 0]))          # x = fraction 2^e, 1/2 <= fraction < 1
    bits = np.zeros(fraction.shape, dtype=int)
    for b in range(1, 54):
        scaled = fraction * 2.0 ** b
        bits[(bits == 0) & (scaled == np.floor(scaled))] = b
    return bits


@pytest.mark.parametrize("config", PLAIN, ids=build_id)
def test_inputs_draws_the_values_it_names(gemm, config):
    """--inputs=few-bits keeps the range and cuts each value to 4 significant bits (whole
    numbers: multiples of 8); --inputs=zeros makes A and B zero and leaves C as it was; with
    either, the reference still agrees with NumPy."""
    type_pair = config[0]
    size = (24, 20, 40)
    uniform = parse_print(gemm(config, "--cpu-only", "--print", *size).stdout)
    kind = INPUT_KIND[type_pair]
    lo, hi = INT_RANGE.get(kind, (-1, 1))
    for inputs in ("few-bits", "zeros"):
        result = gemm(config, "--cpu-only", "--print", f"--inputs={inputs}", *size)
        assert result.returncode == 0, result.stderr
        assert report(result.stdout)["Result"] == "PASS"
        values = parse_print(result.stdout)
        A, B, C, D = math_operands(values)
        if inputs == "zeros":
            assert not A.any() and not B.any()
            assert np.array_equal(np.array(values["C"]), np.array(uniform["C"]))
        for name, x in (("A", A), ("B", B), ("C", C)) if inputs == "few-bits" else ():
            if kind in INT_RANGE:
                assert np.all(x % 8 == 0), f"{name} has values that are not multiples of 8"
            else:
                assert significant_bits(x).max() <= 4, f"{name} has values of more than 4 bits"
            assert x.min() < lo + 0.2 * (hi - lo) and x.max() > hi - 0.3 * (hi - lo), name
            assert len(np.unique(x)) > 4, name
        want, magnitude = expected_result(type_pair, values, A, B, C)
        assert np.all(np.abs(D - want) <= tolerance(type_pair, want, magnitude, size[2]))
    few = parse_print(gemm(config, "--cpu-only", "--print", "--inputs=few-bits", *size).stdout)
    if kind not in INT_RANGE and kind not in ("e4m3", "e5m2"):
        assert significant_bits(np.array(uniform["A"])).max() > 4, "uniform values are already short"
        assert not np.array_equal(np.array(few["A"]), np.array(uniform["A"]))


def test_tf32_reference_rounds_its_inputs(gemm):
    """The tf32 reference multiplies the rounded inputs, and that is visible in D."""
    config = ("TF32_IN_F32_OUT", "16x16x8", 0, 1)
    values = parse_print(gemm(config, "--cpu-only", "--print", 17, 33, 65).stdout)
    A, B, C, D = math_operands(values)
    assert not np.array_equal(tf32_round(A), A), "no input needed rounding; the test proves nothing"
    want, magnitude = expected_result("TF32_IN_F32_OUT", values, A, B, C)
    unrounded = values["alpha"] * (A @ B) + values["beta"] * C
    bound = tolerance("TF32_IN_F32_OUT", want, magnitude, 65)
    assert np.all(np.abs(D - want) <= bound)
    assert np.any(np.abs(D - unrounded) > bound)


@pytest.mark.parametrize("config", PLAIN, ids=build_id)
def test_alpha_and_beta_are_applied(gemm, config):
    type_pair = config[0]
    alpha, beta = (-3, 2) if type_pair in INTEGER_PAIRS else (0.5, -1.25)
    result = gemm(config, "--cpu-only", "--print", "--alpha", alpha, "--beta", beta, 9, 6, 11)
    assert result.returncode == 0, result.stderr
    values = parse_print(result.stdout)
    assert (values["alpha"], values["beta"]) == (alpha, beta)
    A, B, C, D = math_operands(values)
    want, magnitude = expected_result(type_pair, values, A, B, C)
    assert np.all(np.abs(D - want) <= tolerance(type_pair, want, magnitude, 11))

    zero = parse_print(gemm(config, "--cpu-only", "--print", "--alpha=0", "--beta=0",
                            9, 6, 11).stdout)
    assert np.all(np.array(zero["D"]) == 0)


def test_scalars_are_held_as_the_accumulator_holds_them(gemm):
    """Problem.alpha is documented as 'as the accumulator type holds them'. GCC 12 at -O3
    once dropped this rounding (see acc_round in gemm.md); this test keeps it honest."""
    values = parse_print(gemm(F16, "--cpu-only", "--print", "--alpha", "0.1", 1, 1, 1).stdout)
    assert values["alpha"] == float(np.float32(0.1))


# ---------------------------------------------------------------- padding to block tiles

@pytest.mark.parametrize("config", TILED, ids=build_id)
def test_padding_is_to_whole_block_tiles(binaries, config):
    """The sides are padded to the chosen tile: 1 x 1 x 1 pads to one whole block tile of it,
    a block tile stays as it is, one more element takes a second one."""
    type_pair = config[0]
    wm, wn, wk = tile(config[1])
    for bm, bn, bk in plan_of(binaries, config, 1, 1, 1)[2]:
        # What gemm.md's static_asserts demand of a block tile.
        assert bm % wm == 0 and bn % wn == 0 and bk % wk == 0, (bm, bn, bk)
        assert bk * PAIRS[type_pair]["in_bytes"] % 16 == 0, bk
    chosen, padded_to, _ = plan_of(binaries, config, 1, 1, 1)
    assert padded_to == tuple(max(side, 16) for side in chosen)
    bm, bn, bk = chosen
    for sizes in [(bm, bn, bk), (bm + 1, bn + 1, bk + 1), (2 * bm - 1, 3, 2 * bk + 5), (3000, 1000, 77)]:
        chosen, padded_to, _ = plan_of(binaries, config, *sizes)
        check_padding(sizes, padded_to, config, chosen)


def test_block_tile_depends_on_the_type_pair_only(block_tile):
    """A type pair has one block tile: neither the transposes nor the WMMA shape change it.
    Its K side is 128 bytes for every pair."""
    by_pair = {}
    for config in TILED:
        type_pair = config[0]
        bm, bn, bk = block_tile(config)
        assert bk * PAIRS[type_pair]["in_bytes"] == 128, (config, bk)
        by_pair.setdefault(type_pair, set()).add((bm, bn, bk))
    assert set(by_pair) == {t for t in TYPES if PAIRS[t]["tiles"]}
    for type_pair, tiles in by_pair.items():
        assert len(tiles) == 1, f"{type_pair} has several block tiles: {tiles}"


@pytest.mark.parametrize("config", [c for c in TILED if c[0] == DOCUMENT_PAIR and c[2:] == (0, 0)], ids=build_id)
def test_padding_is_the_same_for_every_transpose(binaries, config):
    """In every layout built as ./gemm: all four, for the document's pair."""
    layouts = [(ta, tb) for ta in (0, 1) for tb in (0, 1) if (config[0], config[1], ta, tb) in binaries]
    assert len(layouts) == 4
    plans = [plan_of(binaries, (config[0], config[1], ta, tb), 37, 41, 29)[:2] for ta, tb in layouts]
    assert len(set(plans)) == 1


@pytest.mark.parametrize("config", [F16, I8], ids=build_id)
def test_nothing_is_padded_for_the_cpu(gemm, config):
    result = gemm(config, "--cpu-only", "--verify=off", 37, 41, 29)
    assert result.returncode == 0 and "Padded to" not in report(result.stdout)


# ---------------------------------------------------------------- the verifier

@pytest.mark.parametrize("config", BUILDS, ids=build_id)
def test_verifier_passes_a_correct_result(gemm, config, block_tile):
    result = gemm(config, "--cpu-only", 37, 41, 29)
    assert result.returncode == 0, result.stderr
    fields = report(result.stdout)
    assert fields["Result"] == "PASS"
    assert fields["Verification"].startswith("full: all 1517 elements")
    assert fields["Size M x N x K"] == "37 x 41 x 29"
    assert fields["GPU"].startswith("none")
    assert "First failure" not in fields


@pytest.mark.parametrize("config", BUILDS, ids=build_id)
def test_verifier_catches_a_planted_element(gemm, config):
    result = gemm(config, "--cpu-only", "--plant=element", 37, 41, 29)
    assert result.returncode == 1, result.stderr
    fields = report(result.stdout)
    assert fields["Planted error"] == "element"
    assert fields["Result"] == "FAIL"
    # The element in the middle, (M/2, N/2), and only it.
    assert re.match(r"C\[18\]\[20\] = .*; 1 of 1517 wrong$", fields["First failure"]), \
        fields["First failure"]


@pytest.mark.parametrize("config", BUILDS, ids=build_id)
def test_verifier_catches_a_planted_tile(gemm, config):
    wm, wn, _ = tile(config[1])
    # Across the columns: tile 0 is copied over its right-hand neighbour.
    result = gemm(config, "--cpu-only", "--plant=tile", 37, 41, 29)
    assert result.returncode == 1, result.stderr
    fields = report(result.stdout)
    assert fields["Result"] == "FAIL"
    match = re.match(r"C\[(\d+)\]\[(\d+)\] = .*; (\d+) of 1517 wrong$", fields["First failure"])
    assert match, fields["First failure"]
    assert (int(match.group(1)), int(match.group(2))) == (0, wn)
    moved = min(37, wm) * min(41 - wn, wn)
    assert 1 < int(match.group(3)) <= moved

    # Down the rows, when C is only one tile wide.
    result = gemm(config, "--cpu-only", "--plant=tile", wm + 5, 5, 7)
    assert result.returncode == 1, result.stderr
    failure = report(result.stdout)["First failure"]
    assert failure.startswith(f"C[{wm}][0] = "), failure


@pytest.mark.parametrize("config", BUILDS, ids=build_id)
def test_plant_tile_needs_two_tiles(gemm, config):
    wm, wn, _ = tile(config[1])
    refused = gemm(config, "--cpu-only", "--plant=tile", wm, wn, 3)
    assert refused.returncode == 2
    assert "--plant=tile" in refused.stderr
    accepted = gemm(config, "--cpu-only", "--plant=tile", wm + 1, wn, 3)
    assert accepted.returncode == 1, accepted.stderr


@pytest.mark.parametrize("config", PLAIN, ids=build_id)
def test_sampled_verification(gemm, config):
    wm, wn, _ = tile(config[1])
    result = gemm(config, "--cpu-only", "--verify=sample", 100, 100, 10)
    assert result.returncode == 0, result.stderr
    fields = report(result.stdout)
    assert fields["Verification"].startswith("sampled: 4100 elements")
    assert fields["Result"] == "PASS"

    # A misplaced tile is hundreds of wrong elements: a sample cannot miss it.
    result = gemm(config, "--cpu-only", "--verify=sample", "--plant=tile", 100, 100, 10)
    assert result.returncode == 1
    assert report(result.stdout)["Result"] == "FAIL"

    # When the sample would be as large as the matrix, every element is checked.
    fields = report(gemm(config, "--cpu-only", "--verify=sample", 7, 5, 3).stdout)
    assert fields["Verification"].startswith("full: all 35 elements")
    fields = report(gemm(config, "--cpu-only", "--verify=full", 100, 100, 10).stdout)
    assert fields["Verification"].startswith("full: all 10000 elements")


def test_sampled_verification_catches_a_planted_element(gemm):
    result = gemm(F16, "--cpu-only", "--verify=sample", "--plant=element", 100, 100, 10)
    assert result.returncode == 1
    assert report(result.stdout)["Result"] == "FAIL"


@pytest.mark.parametrize("config", [F16, I8], ids=build_id)
def test_verification_off_checks_nothing(gemm, config):
    result = gemm(config, "--cpu-only", "--verify=off", 37, 41, 29)
    # Nothing was checked, so nothing failed: exit 0, and the report claims no result.
    assert result.returncode == 0, result.stderr
    fields = report(result.stdout)
    assert fields["Verification"] == "off"
    assert "Result" not in fields and "PASS" not in result.stdout

    result = gemm(config, "--cpu-only", "--verify=off", "--csv", 37, 41, 29)
    row = next(csv.reader([result.stdout]))
    header = gemm(config, "--csv-header").stdout.strip().split(",")
    line = dict(zip(header, row))
    assert (line["verify"], line["result"]) == ("off", "not checked")


# ---------------------------------------------------------------- CSV

@pytest.mark.parametrize("config", BUILDS, ids=build_id)
def test_csv(gemm, config, block_tile):
    type_pair, shape, ta, tb = config
    header = gemm(config, "--csv-header")
    assert header.returncode == 0
    header_lines = header.stdout.splitlines()
    assert len(header_lines) == 1
    columns = header_lines[0].split(",")
    assert len(columns) == len(set(columns)) > 10
    assert all(re.fullmatch(r"[A-Za-z_]+", c) for c in columns)

    result = gemm(config, "--cpu-only", "--csv", 7, 5, 3)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1, "--csv prints one line and no report"
    rows = list(csv.reader(lines))
    assert len(rows[0]) == len(columns)
    line = dict(zip(columns, rows[0]))
    assert "CPU" in line["device"] and line["cc"] == "0"
    assert (line["type"], line["shape"]) == (type_pair, shape)
    assert (line["transpose_a"], line["transpose_b"]) == (str(ta), str(tb))
    assert (line["M"], line["N"], line["K"]) == ("7", "5", "3")
    assert (line["Mp"], line["Np"], line["Kp"]) == ("7", "5", "3"), "the CPU pads nothing"
    assert line["impl"] == "cpu"
    assert (line["verify"], line["result"]) == ("full", "PASS")
    assert 0 <= float(line["worst_ratio"]) <= 1
    if type_pair in INTEGER_PAIRS:
        assert float(line["worst_err"]) == 0

    failed = gemm(config, "--cpu-only", "--csv", "--plant=element", 7, 5, 3)
    assert failed.returncode == 1
    assert dict(zip(columns, next(csv.reader([failed.stdout]))))["result"] == "FAIL"


# ---------------------------------------------------------------- the command line

BAD = [
    # (arguments, patterns that the one-line message must contain)
    (["1", "0", "1"], [r"\bN\b", r"\b0\b"]),
    (["1", "1", "-5"], [r"\bK\b", r"-5"]),
    (["abc", "1", "1"], [r"abc"]),
    (["12x", "1", "1"], [r"12x"]),
    (["3000000000", "1", "1"], [r"\bM\b", r"3000000000"]),
    (["2000000000", "2000000000", "2000000000"], [r"too large|overflow"]),
    (["7", "5"], [r"three|M N K"]),
    (["7", "5", "3", "2"], [r"too many|three|M N K"]),
    (["--frobnicate", "7", "5", "3"], [r"--frobnicate"]),
    (["--repeat", "0", "7", "5", "3"], [r"--repeat"]),
    (["--repeat", "ten", "7", "5", "3"], [r"--repeat", r"ten"]),
    (["--warmup", "-1", "7", "5", "3"], [r"--warmup"]),
    (["--seed", "-3", "7", "5", "3"], [r"--seed"]),
    (["--verify=maybe", "7", "5", "3"], [r"--verify", r"maybe"]),
    (["--plant=everything", "7", "5", "3"], [r"--plant", r"everything"]),
    (["--alpha", "nan", "7", "5", "3"], [r"--alpha", r"nan"]),
    (["--beta=inf", "7", "5", "3"], [r"--beta", r"inf"]),
    (["--print", "300", "300", "300"], [r"--print"]),
    (["--plant=tile", "1", "1", "1"], [r"--plant=tile|tile"]),
    (["7", "5", "3", "--repeat"], [r"--repeat", r"value"]),
    (["--kernel=bogus", "7", "5", "3"], [r"unknown value 'bogus' for --kernel"]),
    (["--kernel", "Simple", "7", "5", "3"], [r"unknown value 'Simple' for --kernel"]),
    (["--kernel=", "7", "5", "3"], [r"unknown value '' for --kernel"]),
    (["7", "5", "3", "--kernel"], [r"--kernel", r"value"]),
]


def assert_usage_error(result, patterns):
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == ""
    message = result.stderr.strip()
    assert message, "no message on stderr"
    assert len(message.splitlines()) == 1, f"more than one line:\n{message}"
    assert message.startswith("gemm: ")
    for pattern in patterns:
        assert re.search(pattern, message), f"{pattern!r} not in {message!r}"
    no_crash(result)


@pytest.mark.parametrize("args,patterns", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_command_line(gemm, args, patterns):
    assert_usage_error(gemm(F16, "--cpu-only", *args), patterns)


BEFORE_GPU = BAD[:6] + BAD[17:18] + [args for args in BAD if "--kernel=bogus" in args[0]]


@pytest.mark.parametrize("args,patterns", BEFORE_GPU, ids=[" ".join(a) for a, _ in BEFORE_GPU])
def test_bad_command_line_is_reported_before_looking_for_a_gpu(gemm, args, patterns):
    """The command line is checked in full first: usage errors are 2, never 3."""
    assert_usage_error(gemm(F16, *args), patterns)


def test_integer_pairs_need_whole_scalars(gemm):
    assert_usage_error(gemm(I8, "--cpu-only", "--alpha", "1.5", 7, 5, 3), [r"--alpha", r"1\.5"])
    assert_usage_error(gemm(I8, "--cpu-only", "--beta=0.25", 7, 5, 3), [r"--beta"])
    # The same scalar is fine for a floating-point pair.
    assert gemm(F16, "--cpu-only", "--alpha", "1.5", 7, 5, 3).returncode == 0


def test_integer_overflow_is_refused(gemm):
    assert_usage_error(gemm(I8, "--cpu-only", "--alpha", "1000000", 7, 5, 3000),
                       [r"overflow"])


def test_scalar_too_large_for_the_accumulator_is_a_usage_error(gemm):
    result = gemm(("F16_IN_OUT", "16x16x16", 0, 1), "--cpu-only", "--alpha", "70000", 7, 5, 3)
    assert_usage_error(result, [r"--alpha"])


@pytest.mark.parametrize("config", BUILDS, ids=build_id)
def test_help(gemm, config):
    type_pair, shape, ta, tb = config
    result = gemm(config, "--help")
    assert result.returncode == 0
    assert result.stderr == ""
    for option in ["--verify", "--csv", "--csv-header", "--cpu-only", "--print", "--seed",
                   "--warmup", "--repeat", "--alpha", "--beta", "--plant", "--kernel",
                   "--ceiling"]:
        assert option in result.stdout, option
    kernel_line = [line for line in result.stdout.splitlines() if "--kernel" in line]
    assert kernel_line and all(word in kernel_line[0] for word in ["simple", "tiled", "all"])
    assert re.search(rf"{type_pair}\b.*\b{shape}\b.*TRANSPOSE_A={ta}.*TRANSPOSE_B={tb}",
                     result.stdout), "--help does not say what it was built for"
    assert gemm(config, "-h").stdout == result.stdout


KERNEL_CHOICES = [["--kernel=simple"], ["--kernel=tiled"], ["--kernel=all"],
                  ["--kernel", "tiled"], []]


@pytest.mark.parametrize("choice", KERNEL_CHOICES, ids=lambda c: " ".join(c) or "default")
@pytest.mark.parametrize("config", [F16, I8, ("F64_IN_OUT", "8x8x4", 0, 1)], ids=build_id)
def test_kernel_choices_are_accepted(gemm, config, choice):
    """Every --kernel value parses (--plan takes it, without a GPU); --cpu-only takes only the
    default, all, and the CPU reference computes and verifies the result, in one block of the
    report and one CSV line."""
    planned = gemm(config, "--plan=h100", *choice, 37, 41, 29)
    assert planned.returncode == 0, planned.stderr
    if choice not in ([], ["--kernel=all"]):
        return
    result = gemm(config, "--cpu-only", *choice, 37, 41, 29)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    fields = report(result.stdout)
    assert fields["Kernel"] == CPU_KERNEL
    assert fields["Result"] == "PASS"
    assert len([line for line in result.stdout.splitlines() if line.startswith("Kernel ")]) == 1

    line = gemm(config, "--cpu-only", "--csv", *choice, 37, 41, 29)
    assert line.returncode == 0, line.stderr
    rows = list(csv.reader(line.stdout.splitlines()))
    assert len(rows) == 1
    header = gemm(config, "--csv-header").stdout.strip().split(",")
    row = dict(zip(header, rows[0]))
    assert (row["impl"], row["result"]) == ("cpu", "PASS")


@pytest.mark.parametrize("args", [["--ceiling", "--cpu-only"], ["--cpu-only", "--ceiling"],
                                  ["--cpu-only", "--ceiling", "--csv", "7", "5", "3"]],
                         ids=" ".join)
def test_ceiling_with_cpu_only_is_a_usage_error(gemm, args):
    assert_usage_error(gemm(F16, *args), [r"--ceiling", r"--cpu-only"])


@pytest.mark.parametrize("args", [["--ceiling"], ["--ceiling", "--csv"]], ids=" ".join)
def test_ceiling_without_a_gpu_exits_3(gemm, gpu_present, args):
    if gpu_present:
        pytest.skip("this machine has a GPU")
    result = gemm(F16, *args)
    assert result.returncode == 3
    assert "no usable CUDA GPU" in result.stderr
    assert result.stdout == ""
    no_crash(result)


# ---------------------------------------------------------------- the report's blocks

CPU_KERNEL = "none: the CPU reference computed the result (--cpu-only)"
KERNEL_FIELDS = ["Time", "Speed", "Against cuBLAS", "Same as cuBLAS", "Planted error",
                 "Verification", "Result", "Worst error", "First failure"]


def blocks(stdout):
    """The report cut at its blank lines: a list of blocks, each a list of (label, value)."""
    assert not stdout.startswith("\n") and "\n\n\n" not in stdout
    found = []
    for text in stdout.rstrip("\n").split("\n\n"):
        fields = []
        for line in text.split("\n"):
            match = re.match(r"^(\S.*?)\s+: (.*)$", line)
            assert match, f"not a 'label : value' line: {line!r}"
            fields.append((match.group(1), match.group(2)))
        found.append(fields)
    return found


@pytest.mark.parametrize("plant", [[], ["--plant=element"]], ids=["clean", "planted"])
@pytest.mark.parametrize("config", PLAIN, ids=build_id)
def test_cpu_only_report_is_a_header_and_one_kernel_block(gemm, config, plant):
    result = gemm(config, "--cpu-only", *plant, 37, 41, 29)
    assert result.returncode == (1 if plant else 0), result.stderr
    header, *kernels = blocks(result.stdout)
    assert len(kernels) == 1, result.stdout

    labels = [label for label, _ in header]
    for label in ["Type pair", "WMMA shape", "Transposed", "Size M x N x K", "GPU"]:
        assert label in labels, label
    assert labels[-1] == "cuBLAS", "the header ends with the cuBLAS line"
    assert not set(labels) & set(KERNEL_FIELDS + ["Kernel"])

    block = dict(kernels[0])
    assert len(block) == len(kernels[0]), "a label repeated within the block"
    assert kernels[0][0] == ("Kernel", CPU_KERNEL)
    assert set(block) <= set(KERNEL_FIELDS + ["Kernel"]), set(block) - set(KERNEL_FIELDS)
    assert block["Verification"].startswith("full: all 1517 elements")
    assert "Worst error" in block
    if plant:
        assert block["Planted error"] == "element"
        assert block["Result"] == "FAIL" and "First failure" in block
    else:
        assert block["Result"] == "PASS" and "First failure" not in block
    # The order of the fields in a block is the documented one.
    order = [label for label, _ in kernels[0][1:]]
    assert order == [label for label in KERNEL_FIELDS if label in order]


def test_without_a_gpu_exits_3_at_once(gemm, gpu_present):
    if gpu_present:
        pytest.skip("this machine has a GPU")
    start = time.monotonic()
    result = gemm(F16)          # the default 8190^3: 200 million inputs if made first
    elapsed = time.monotonic() - start
    assert result.returncode == 3
    assert "no usable CUDA GPU" in result.stderr
    assert "--cpu-only" in result.stderr
    assert result.stdout == ""
    no_crash(result)
    assert elapsed < 5


def test_gpu_is_checked_before_host_memory_is_taken(gemm, gpu_present):
    """A problem far too large for host memory still fails on the GPU check first."""
    if gpu_present:
        pytest.skip("this machine has a GPU")
    result = gemm(F16, 60000, 60000, 60000, "--csv", timeout=30)
    assert result.returncode == 3
    assert "no usable CUDA GPU" in result.stderr
    assert "host memory" not in result.stderr


# ---------------------------------------------------------------- determinism

@pytest.mark.parametrize("config", [F16, I8, ("F64_IN_OUT", "8x8x4", 0, 1)], ids=build_id)
def test_the_seed_decides_the_inputs(gemm, config):
    def matrices(*seed):
        result = gemm(config, "--cpu-only", "--print", *seed, 6, 4, 5)
        assert result.returncode == 0, result.stderr
        values = parse_print(result.stdout)
        return {name: values[name] for name in "ABCD"}

    five = matrices("--seed", 5)
    assert matrices("--seed=5") == five
    six = matrices("--seed", 6)
    for name in "ABC":
        assert six[name] != five[name], f"{name} does not depend on the seed"
    assert matrices() == matrices("--seed", 1), "the default seed is not 1"
    # A, B and C come from separate streams: they are not copies of one another.
    assert five["A"] != five["B"]


# ---------------------------------------------------------------- defects found in review

@pytest.mark.parametrize("config", [F16, I8], ids=build_id)
def test_a_planted_tile_is_caught_even_when_every_tile_is_equal(gemm, config):
    """With alpha = beta = 0 every element is 0, so copying a tile over another changes
    nothing; the planted error must still be there and be caught."""
    result = gemm(config, "--cpu-only", "--plant=tile", "--alpha", 0, "--beta", 0, 33, 40, 17)
    assert result.returncode == 1, result.stdout + result.stderr
    assert report(result.stdout)["Result"] == "FAIL"


def test_a_planted_element_stays_in_range_of_an_int_result(gemm):
    """The element planted wrong in an int result near its limit must not overflow: it becomes -1 - v."""
    config = ("U8_IN_I32_OUT", "16x16x16", 0, 1)
    large = 0
    for seed in range(1, 40):
        result = gemm(config, "--cpu-only", "--plant=element", "--alpha", 500000, "--beta", 0,
                      "--seed", seed, 5, 5, 1)
        assert result.returncode == 1, result.stderr
        match = re.search(r"C\[2\]\[2\] = (-?\d+), expected (-?\d+)", result.stdout)
        assert match, result.stdout
        got, want = int(match[1]), int(match[2])
        assert got == -1 - want
        large += want > 2**30        # where v + 1 + |v| would not fit in an int
    assert large > 0


def test_a_scalar_that_rounds_to_zero_is_refused(gemm):
    config = ("F16_IN_OUT", "16x16x16", 0, 1)
    for option in ("--alpha", "--beta"):
        result = gemm(config, "--cpu-only", option, "1e-8", 7, 5, 3)
        assert result.returncode == 2, result.stdout
        assert "rounds to 0" in result.stderr and "half" in result.stderr
    # float holds 1e-8: accepted there.
    assert gemm(F16, "--cpu-only", "--alpha", "1e-8", 7, 5, 3).returncode == 0


@pytest.mark.parametrize("text", ["0x10", "inf", "nan", "1e400", "1,5"])
def test_scalars_are_decimal_numbers_like_the_sizes(gemm, text):
    result = gemm(F16, "--cpu-only", "--alpha", text, 7, 5, 3)
    assert result.returncode == 2 and "decimal number" in result.stderr, result.stderr
    assert gemm(F16, "--cpu-only", "0x10", 5, 3).returncode == 2   # as the sizes refuse it


def test_long_cpu_work_says_how_long_and_shows_progress(gemm):
    """A pass of the CPU reference of a few seconds estimates its time and reports progress
    on the standard error; the report on the standard output is unchanged."""
    import os
    # The CPU reference runs on every core: the work grows with them, so that each of the two
    # passes lasts 3 to 5 s on a CI machine (2 cores), well past the 2 s before the first line.
    n = round(960 * max(1, os.cpu_count() or 1) ** (1 / 3))
    result = gemm(F16, "--cpu-only", "--verify=full", n, n, n, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert any(re.fullmatch(r"gemm: computing the product .* about \d+ s in all", l) for l in lines), lines
    assert any(re.fullmatch(r"gemm: checking every element .*: \d+ % done after \d+ s, "
                            r"about \d+ s to go", l) for l in lines), lines
    assert "%" not in result.stdout


def test_a_short_check_is_silent(gemm):
    result = gemm(F16, "--cpu-only", 64, 64, 64)
    assert result.returncode == 0 and result.stderr == ""


def test_the_report_and_csv_name_every_setting_of_the_build(gemm, block_tile):
    """One line of output is enough to rebuild the binary that produced it."""
    config = ("BF16_IN_F32_OUT", "8x32x16", 0, 1)
    built = report(gemm(config, "--cpu-only", 7, 5, 3).stdout)["Built with"]
    assert built.startswith("TYPE=BF16_IN_F32_OUT MNK=8x32x16 TRANSPOSE_A=0 TRANSPOSE_B=1 ")
    for setting in ["BLOCK_M", "BLOCK_N", "BLOCK_K", "BLOCK_WARPS_M", "BLOCK_WARPS_N", "STAGES",
                    "SKEW_BYTES", "PREFETCH_FRAGMENTS", "SPREAD_COPIES", "GROUP_M", "WARPS_M",
                    "WARPS_N"]:
        assert re.search(rf"-D{setting}=\d+\b", built), setting
    bm, bn, bk = block_tile(config)
    assert f"-DBLOCK_M={bm} -DBLOCK_N={bn} -DBLOCK_K={bk}" in built
    header = gemm(config, "--csv-header").stdout.strip().split(",")
    row = dict(zip(header, next(csv.reader([gemm(config, "--cpu-only", "--csv", 7, 5, 3).stdout]))))
    # Built by nvcc alone, as these tests build: make's own builds add its flags (test_configs.py).
    assert built == row["build"] + " (built without make, which alone records nvcc's flags)"


# ---------------------------------------------------------------- what the program describes

def test_describe_is_json_that_names_this_build_and_its_csv_columns(gemm):
    import json
    config = ("I8_IN_I32_OUT", "8x32x16", 1, 1)
    described = json.loads(gemm(config, "--describe").stdout)
    assert described["build"]["type"] == "I8_IN_I32_OUT" and described["build"]["shape"] == "8x32x16"
    assert (described["build"]["transpose_a"], described["build"]["transpose_b"]) == (1, 1)
    assert described["csv_columns"] == gemm(config, "--csv-header").stdout.strip().split(",")
    assert [t["name"] for t in described["tiles"]] == PAIRS["I8_IN_I32_OUT"]["tiles"]
    assert [k["name"] for k in described["kernels"]][:2] == ["simple", "tiled"]


# ---------------------------------------------------------------- options that cannot go together

def test_csv_and_print_together_are_refused(gemm):
    result = gemm(F16, "--cpu-only", "--csv", "--print", 3, 3, 3)
    assert result.returncode == 2 and result.stdout == ""
    assert "--csv and --print" in result.stderr


@pytest.mark.parametrize("option", ["--kernel=simple", "--tile=all", "--split-k=2", "--smem-cap=48"])
def test_cpu_only_refuses_the_options_that_choose_a_kernel(gemm, option):
    result = gemm(F16, "--cpu-only", option, 3, 3, 3)
    assert result.returncode == 2 and result.stdout == ""
    assert "--cpu-only runs no kernel" in result.stderr


def test_cpu_only_csv_names_no_tile(gemm):
    header = gemm(I8, "--csv-header").stdout.strip().split(",")
    row = dict(zip(header, next(csv.reader([gemm(I8, "--cpu-only", "--csv", 5, 6, 7).stdout]))))
    assert row["impl"] == "cpu" and row["tile"] == "" and row["tile_choice"] == ""


def test_host_memory_is_checked_against_what_is_available(gemm, gpu_present):
    """A problem the CPU reference cannot hold is refused with the numbers, not killed."""
    result = gemm(F16, "--cpu-only", 200000, 200000, 1, timeout=30)
    assert result.returncode == 3
    assert re.search(r"needs [\d.]+ GiB of host memory; [\d.]+ GiB are available", result.stderr)


def test_plan_honours_a_forced_tile(gemm):
    forced = gemm(F16, "--plan=h100", "--tile=64x64x64", 100, 100, 100)
    assert forced.returncode == 0, forced.stderr
    assert "Forced: 64x64x64; the problem is padded to 128 x 128 x 128." in forced.stdout
    too_big = gemm(F16, "--plan=t4", "--tile=128x256x64", 64, 64, 64)
    assert too_big.returncode == 2 and "128x256x64" in too_big.stderr


# The Hopper kernel's choices on an H100 (132 multiprocessors), as --plan gives them: the width
# the waves favour, and K whole unless --split-k splits it (as far as K has steps of 64).
HOPPER_PLANS = [((8192, 8192, 8192), 256, 1), ((3000, 3000, 3000), 192, 1),
                ((1024, 1024, 1024), 64, 1), ((256, 256, 8192), 64, 16), ((17, 33, 65), 64, 1)]


@pytest.mark.parametrize("size, width, slices", HOPPER_PLANS)
def test_plan_gives_the_hopper_kernels_width_and_slices(gemm, size, width, slices):
    result = gemm(F16, "--plan=h100", *size)
    assert result.returncode == 0, result.stderr
    assert f"The Hopper kernel's tile: 128 x {width}; K in {slices} slice{'s' if slices > 1 else ''}." \
        in result.stdout, result.stdout
    forced = gemm(F16, "--plan=h100", "--split-k=3", *size)
    assert f"; K in {min(3, -(-size[2] // 64))} slices (--split-k)." in forced.stdout, forced.stdout


def test_plan_says_where_the_hopper_kernel_pads_further(gemm):
    """--plan on a Hopper GPU gives the padding of --kernel=all, which the Hopper kernel widens
    to its 128 x 256 x 64 tile; on other GPUs it says only that the kernel does not run there,
    and with --kernel=tiled, or for double, which it does not take, nothing of it."""
    hopper = gemm(F16, "--plan=h100", 17, 33, 65)
    assert hopper.returncode == 0, hopper.stderr
    assert "Chosen: 64x64x64; the problem is padded to 64 x 64 x 128." in hopper.stdout
    assert "The Hopper kernel, where it runs too, pads it to 128 x 256 x 128." in hopper.stdout
    for args in (["--plan=a100"], ["--plan=h100", "--kernel=tiled"], ["--plan=a100", "--kernel=tiled"]):
        other = gemm(F16, *args, 17, 33, 65)
        assert other.returncode == 0 and "Chosen: 64x64x64" in other.stdout, other.stderr
        said = [line for line in other.stdout.splitlines() if "Hopper kernel" in line]
        assert said == (["The Hopper kernel does not run on a100: it needs compute capability 9.0."]
                        if "--kernel=tiled" not in args else []), said
    double = gemm(("F64_IN_OUT", DEFAULT_SHAPE["F64_IN_OUT"], 0, 1), "--plan=h100", 17, 33, 65)
    assert double.returncode == 0 and "Hopper kernel" not in double.stdout


def test_the_readmes_options_are_the_programs(gemm):
    """The README's table of options has every option of --help, and its lists of kernels and
    of known GPUs are the registry's (./gemm --describe)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([^|]*(?:\\\|[^|]*)*)` \|", readme, re.M)
    table = " ".join(rows)
    usage = gemm(F16, "--help").stdout
    options = set(re.findall(r"^  (--[a-z-]+)", usage, re.M)) - {"--help"}
    assert options and all(o in table for o in options), sorted(o for o in options if o not in table)
    kernel = re.search(r"`--kernel=([\w\\|]+)`", readme).group(1).split("\\|")
    assert kernel == [k["name"] for k in REGISTRY["kernels"]] + ["all"]
    plan = re.search(r"`--plan\[=GPU\]` \|[^|]*\(([^)]*)\)", readme).group(1).split(", ")
    assert plan == [g["name"] for g in REGISTRY["gpus"]]


# ---------------------------------------------------------------- the source

def mutable_statics(source):
    """(gemm.md line, declaration) of each `static` variable in tangled source that the program
    may change: not constexpr, not const, or a pointer that is not itself const. Functions,
    static_assert and casts are left out; so are function-pointer variables, which this
    reading cannot tell from functions."""
    found, md_line = [], 0
    for line in source.splitlines():
        directive = re.match(r'#line (\d+) "[^"]*gemm\.md"', line)
        if directive:
            md_line = int(directive[1]) - 1
            continue
        md_line += 1
        words = re.match(r"\s*static\s+(?!_assert|_cast)([^=;{(]*)(=|;|\{|\()", line)
        if not words or words[2] == "(" or "constexpr" in words[1].split():
            continue
        declared = words[1]
        const = (re.search(r"\*\s*const\b[^*]*$", declared) if "*" in declared
                 else "const" in declared.split())
        if not const:
            found.append((md_line, line.strip()))
    return found


def test_no_mutable_statics(gemm_cu):
    """Text, tables and the Hopper kernel's resources (tensor maps, K-major copies, the
    driver's entry point) live in caller-owned values or in the run's state, not in statics
    that a second call or a second run would overwrite or append to."""
    assert mutable_statics(gemm_cu.read_text(encoding="utf-8")) == []
    assert mutable_statics("static char text[64];\nstatic const char *names[] = {};\n"
                           "static const char *const kept[] = {};\nstatic int f(void);\n") \
        == [(1, "static char text[64];"), (2, "static const char *names[] = {};")]
