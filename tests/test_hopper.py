"""The Hopper kernel (gemm.md, "Beyond WMMA"), checked without a GPU: that sm_90a builds of the
16-bit pairs hold the wgmma, TMA and setmaxnreg instructions the chapter describes, with no
spills and nothing serialised; that other targets and pairs have no such code and say so;
and that the Makefile spells the sm_90a target so that those instructions are allowed.
"""

import re
import subprocess
import sys

import pytest

import gemmlib
from conftest import config_defines

HOPPER = "sm_90a"
# (pair, transpose A, transpose B): the dtypes of wgmma, and the TMA boxes of a step
# (one for an operand stored along K; two for A and four for B stored along M or N).
CASES = [("F16_IN_F32_OUT", 0, 1, ".f32.f16.f16", 2), ("F16_IN_F32_OUT", 0, 0, ".f32.f16.f16", 5),
         ("F16_IN_OUT", 1, 0, ".f16.f16.f16", 6), ("BF16_IN_F32_OUT", 1, 1, ".f32.bf16.bf16", 3)]


_COMPILED = {}   # (source, defines, target) -> (PTX, ptxas's report): one compile for the tests that share one
_VARIANTS = {}   # (change files, pair, transpose A, transpose B) -> the PTX of gemm.md with them


def ptx_and_report(gemm_cu, tmp_path, defines, target):
    """One compile: the cubin, its PTX beside it (k.ptx) and ptxas's report of each kernel."""
    ptx = tmp_path / "k.ptx"
    key = (str(gemm_cu), tuple(defines), target)
    if key not in _COMPILED:
        cubin = gemmlib.nvcc(gemm_cu, tmp_path / "k.cubin", defines + ["-Xptxas", "-v"], gpu=target,
                             mode="cubin")
        assert cubin.returncode == 0, cubin.stderr
        _COMPILED[key] = ptx.read_text(), cubin.stderr
    ptx.write_text(_COMPILED[key][0])
    return widest_kernel(ptx), _COMPILED[key][1]


def widest_kernel(ptx_path):
    """The PTX of the widest tile's Hopper kernel (the one the earlier steps had), or None."""
    widths = kernels_by_width(ptx_path)
    return widths[max(widths)] if widths else None


def hopper_spills(report):
    """[(kernel, bytes of spill stores, of spill loads)] of the Hopper kernels in ptxas -v's report."""
    return re.findall(r"Compiling entry function '(_Z10gemm_wgmma\w+)'.*?(\d+) bytes spill stores, "
                      r"(\d+) bytes spill loads", report, re.S)


def kernels_by_tile(ptx_path):
    """{(rows, width): PTX of the Hopper kernel of that tile} in a PTX file (gemm_wgmma<P, width,
    consumers>, 64 rows a consumer)."""
    entries = re.split(r"(?m)^(?:\.visible\s+)?\.entry\s+", ptx_path.read_text())
    tiles = {}
    for e in entries[1:]:
        if e.startswith("_Z10gemm_wgmma"):
            width, consumers = re.match(r"\w*?Li(\d+)ELi(\d+)E", e).groups()
            tiles[(64 * int(consumers), int(width))] = e
    return tiles


def kernels_by_width(ptx_path):
    """{width: PTX of the Hopper kernel of that width} of the 128-row tiles in a PTX file."""
    return {width: e for (rows, width), e in kernels_by_tile(ptx_path).items() if rows == 128}


def variant_kernels(tmp_path, changes, pair="F16_IN_F32_OUT", ta=0, tb=1):
    """{width: PTX of the Hopper kernel of that width} of gemm.md with the change files
    `changes` of worklog/, for `pair` in the layout given (B transposed unless told); one
    kernel for every width, or none."""
    ptx = tmp_path / f"variant-{pair}-{ta}{tb}.ptx"
    key = (tuple(changes), pair, ta, tb)
    if key not in _VARIANTS:   # one compile for the tests that share one
        cu = gemmlib.tangle(tmp_path / "variant.cu", changes=changes)
        built = gemmlib.nvcc(cu, ptx, config_defines(pair, None, ta, tb), gpu=HOPPER, mode="ptx")
        assert built.returncode == 0, built.stderr
        _VARIANTS[key] = ptx.read_text()
    ptx.write_text(_VARIANTS[key])
    widths = kernels_by_width(ptx)
    assert sorted(widths) in ([], sorted(gemmlib.registry()["hopper_widths"]))
    return widths


def test_every_tile_width_has_its_own_wgmma_and_no_spills(gemm_cu, tmp_path):
    """The kernel of each width of HOPPER_WIDTHS multiplies with m64nWk16, four per stage, and
    ptxas gives each the registers it needs without spilling. Each is persistent: its consumers
    give back every stage, each tile's last one included, since the producer waits for it
    before it copies the block's next tile there."""
    _, report = ptx_and_report(gemm_cu, tmp_path, config_defines("F16_IN_F32_OUT", None, 0, 1), HOPPER)
    widths = kernels_by_width(tmp_path / "k.ptx")
    assert sorted(widths) == sorted(gemmlib.registry()["hopper_widths"]), sorted(widths)
    for width, kernel in widths.items():
        shapes = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16", kernel)
        assert shapes == [str(width)] * 4, (width, shapes)
        # a stage given back in the loop over K and after it, and a stage of C in the epilogue's
        # loop over boxes and after it
        assert kernel.count("mbarrier.arrive.shared::cta.b64") >= 4, width
        assert "setmaxnreg.dec.sync.aligned.u32 40" in kernel and "setmaxnreg.inc.sync.aligned.u32 232" in kernel
    assert "C7508" not in report and "C7510" not in report, report
    # Split K's second kernel, one per width: it sums a split tile's slices from the workspace.
    sums = re.findall(r"(?m)^\.visible \.entry _Z\d+sum_hopper_slicesILi(\d+)E", (tmp_path / "k.ptx").read_text())
    assert sorted(map(int, sums)) == sorted(widths), sums
    functions = hopper_spills(report)
    assert len(functions) == len(widths) and all(st == ld == "0" for _, st, ld in functions), functions


@pytest.mark.parametrize("pair, ta, tb, dtype, boxes", CASES)
def test_the_sm90a_build_has_the_hopper_instructions(gemm_cu, tmp_path, pair, ta, tb, dtype, boxes):
    kernel, report = ptx_and_report(gemm_cu, tmp_path, config_defines(pair, None, ta, tb), HOPPER)
    assert kernel is not None
    # Four wgmmas of 64 x 256 x 16 per stage of 64 along K, A and B flagged as stored.
    calls = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n256k16(\S+) .*?p, 1, 1, (\d), (\d);", kernel)
    assert len(calls) == 4 and all(c == (dtype, str(ta), str(1 - tb)) for c in calls), calls
    # A step's boxes of A and B, then C's boxes of the tile, copied into the stages after its
    # steps of K, which the consumers read pair by pair.
    copies = kernel.count("cp.async.bulk.tensor.2d.shared::cluster.global")
    assert copies > boxes, copies
    assert kernel.count("ld.shared.v2.f32" if dtype.startswith(".f32") else "ld.shared.v2.u16") >= 256 // 4, dtype
    # The epilogue: C goes out through shared memory in boxes of 64 rows by 128 bytes, each
    # stored by the TMA, a buffer written again only once its last store has read it.
    stores = kernel.count("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group")
    assert stores == 256 * (2 if dtype.startswith(".f16") else 4) // 128, stores
    assert "cp.async.bulk.wait_group.read 1" in kernel and "fence.proxy.async.shared::cta" in kernel
    assert "setmaxnreg.dec.sync.aligned.u32 40" in kernel and "setmaxnreg.inc.sync.aligned.u32 232" in kernel
    assert "wgmma.wait_group.sync.aligned 1" in kernel and "mbarrier.try_wait.parity" in kernel
    # ptxas: no spills in the Hopper kernel, setmaxnreg honoured (C7508), wgmma not serialised (C7510).
    part = report[report.index("gemm_wgmma"):]
    part = part[:part.index("Compile time")]
    assert "0 bytes spill stores, 0 bytes spill loads" in part, part
    assert "C7508" not in report and "C7510" not in report, report


def test_other_targets_and_pairs_have_no_hopper_code(executable, tmp_path):
    """The sm_90 build (the tests' ./gemm of the pair, whose PTX is kept) has the Hopper kernel
    as an empty shell; an sm_90a build of double has none."""
    kernel = widest_kernel(executable("F16_IN_F32_OUT", 0, 1).with_suffix(".ptx"))
    assert kernel is not None and "wgmma." not in kernel and "cp.async.bulk" not in kernel
    assert variant_kernels(tmp_path, (), "F64_IN_OUT", 0, 1) == {}


def test_a_hopper_pair_the_kernel_has_no_form_for_is_refused(gemm_cu, tmp_path):
    """A pair whose traits say hopper = true but whose types no wgmma form of the kernel
    takes stops the build with one message, instead of running the f16 instruction on it."""
    source = gemm_cu.read_text(encoding="utf-8")
    start = source.index("struct F64_IN_OUT_pair")
    end = source.index("\n};\n", start)
    struct = source[start:end]
    assert struct.count("hopper = false") == 1
    changed = tmp_path / "f64-hopper.cu"
    changed.write_text(source[:start] + struct.replace("hopper = false", "hopper = true") + source[end:])
    result = gemmlib.nvcc(changed, tmp_path / "k.ptx", config_defines("F64_IN_OUT"), gpu=HOPPER, mode="ptx")
    assert result.returncode != 0
    assert "the Hopper kernel has no wgmma form for this pair's types" in result.stderr, result.stderr


@pytest.fixture(scope="module")
def binaries(executable):
    return {pair: executable(pair, 0, 1) for pair in ("F16_IN_F32_OUT", "F64_IN_OUT")}


@pytest.mark.parametrize("pair, args, words", [
    ("F64_IN_OUT", ["--kernel=wgmma"], ["--kernel=wgmma", "16-bit, tf32, 8-bit and FP8 pairs", "F64_IN_OUT"]),
    ("F16_IN_F32_OUT", ["--kernel=wgmma", "--tile=64x64x64"], ["--tile", "--kernel=wgmma"]),
    ("F16_IN_F32_OUT", ["--kernel=simple", "--split-k=2"], ["--split-k", "--kernel=simple"]),
    ("F16_IN_F32_OUT", ["--kernel=dmma"], ["--kernel=dmma", "for double", "F16_IN_F32_OUT"]),
    ("F16_IN_F32_OUT", ["--hopper-rows=192"], ["--hopper-rows=192", "F16_IN_F32_OUT", "128 rows"]),
    ("F16_IN_F32_OUT", ["--hopper-rows=128", "--kernel=tiled"], ["--hopper-rows", "--kernel"]),
])
def test_the_hopper_kernel_options_say_what_is_wrong(binaries, pair, args, words):
    result = subprocess.run([str(binaries[pair]), *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and all(w in lines[0] for w in words), result.stderr


def test_a_forced_width_pads_n_to_its_multiple(binaries):
    """--hopper-width=192 on the running example's N, 769, which the padding to whole 256-wide
    tiles makes 1024: N is padded further, to a multiple of both, and the plan keeps the
    width asked for; a width that divides N already pads nothing more."""
    exe = str(binaries["F16_IN_F32_OUT"])
    plan = subprocess.run([exe, "1531", "769", "1283", "--hopper-width=192", "--plan=h100"],
                          capture_output=True, text=True, timeout=60)
    assert plan.returncode == 0, plan.stderr
    assert re.search(r"The Hopper kernel, where it runs too, pads it to 1536 x 1536 x \d+\.", plan.stdout), plan.stdout
    assert "The Hopper kernel's tile: 128 x 192;" in plan.stdout, plan.stdout
    plan = subprocess.run([exe, "1531", "769", "1283", "--hopper-width=128", "--plan=h100"],
                          capture_output=True, text=True, timeout=60)
    assert plan.returncode == 0, plan.stderr
    assert re.search(r"pads it to 1536 x 1024 x \d+\.", plan.stdout), plan.stdout
    assert "The Hopper kernel's tile: 128 x 128;" in plan.stdout, plan.stdout


def test_the_taller_tile_is_f16_to_f16s_alone(gemm_cu, tmp_path, executable):
    """Step H10: a tile of 192 rows, three consumer groups of 64, for f16->f16 alone, whose
    accumulators are halves: 512 threads leave ptxas 128 registers a thread, and 128 float
    accumulators would not fit. Its kernel has four m64n256k16 a stage, the consumers' registers
    (152) and no spills; the choice takes it where its waves are shorter (8192^3, and the layer
    shapes of large language models) where its tiles fill four waves or more, not at 4096^3 or
    3072^3, and --hopper-rows forces either."""
    # (the compiles of CASES, A transposed for f16->f16, both for bf16->f32: made once, for both tests)
    _, report = ptx_and_report(gemm_cu, tmp_path, config_defines("F16_IN_OUT", None, 1, 0), HOPPER)
    tiles = kernels_by_tile(tmp_path / "k.ptx")
    assert sorted(tiles) == [(128, 64), (128, 128), (128, 192), (128, 256), (192, 256)], sorted(tiles)
    tall = tiles[(192, 256)]
    assert ".maxntid 512, 1, 1" in tall
    assert re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.f16", tall) == ["256"] * 4
    assert "setmaxnreg.dec.sync.aligned.u32 40" in tall and "setmaxnreg.inc.sync.aligned.u32 152" in tall
    functions = hopper_spills(report)
    assert len(functions) == 5 and all(st == ld == "0" for _, st, ld in functions), functions
    assert "C7507" not in report and "C7508" not in report and "C7510" not in report
    _, report = ptx_and_report(gemm_cu, tmp_path, config_defines("BF16_IN_F32_OUT", None, 1, 1), HOPPER)
    assert sorted(kernels_by_tile(tmp_path / "k.ptx")) == [(128, 64), (128, 128), (128, 192), (128, 256)]
    exe = str(executable("F16_IN_OUT", 0, 1))
    # (3072^3 fills 1.5 waves of 192-row tiles: too few, min_waves, though the waves' time would take it)
    for size, options, words in [("8192", [], "192 x 256;"), ("4096", [], "128 x 256;"), ("3072", [], "128 x 192;"),
                                 ("3072", ["--hopper-rows=192"], "192 x 256;"),
                                 ("8192x28672x8192", [], "192 x 256;"), ("8192", ["--hopper-rows=128"], "128 x 256;"),
                                 ("4096", ["--hopper-rows=192"], "192 x 256;"),
                                 ("1000", ["--hopper-rows=192", "--hopper-width=256"], "192 x 256;")]:
        m, n, k = (size.split("x") * 3)[:3] if "x" not in size else size.split("x")
        plan = subprocess.run([exe, m, n, k, "--plan=h100", *options], capture_output=True, text=True, timeout=60)
        assert plan.returncode == 0 and f"The Hopper kernel's tile: {words}" in plan.stdout, (size, options, plan)
    wrong = subprocess.run([exe, "--hopper-rows=192", "--hopper-width=128"], capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2 and "no such tile for F16_IN_OUT" in wrong.stderr, wrong.stderr


def test_help_names_the_hopper_kernel(binaries):
    text = subprocess.run([str(binaries["F16_IN_F32_OUT"]), "--help"], capture_output=True, text=True).stdout
    assert "wgmma (Hopper)" in text


def step_source(tmp_path, key):
    """The Hopper step `key` of scripts/worklog.py, tangled with its change files."""
    import worklog
    from conftest import REPO
    settings = dict((k, s) for k, _, s in worklog.hopper_steps())[key]
    cu = tmp_path / f"{key}.cu"
    changes = [a for f in worklog.changes(settings) for a in ("--change", f)]
    result = subprocess.run([sys.executable, REPO / "tangle.py", REPO / "gemm.md", *changes, "-o", cu],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    defines = [f"-D{k}={v}" for k, v in settings.items() if k != "changes"]
    return cu, defines


# The builds of whole programs for sm_90a that the tests below read (ptxas's report, the PTX
# kept beside the executable, --plan=h100): made together, two at a time, when the first of
# them is asked for, so that the machine's second core is not left idle. name -> (worklog change
# files, or the Hopper step whose source it is, nvcc options beyond the pair's, and the target:
# sm_90a, or PTX alone for a build whose --plan is all a test reads).
AHEAD = {
    "h7": ((), "h-tma-store", [], "compute_90"),
    "pp": (("hopper-c-from-global", "hopper-ping-pong"), None, ["-Xptxas", "-v"], HOPPER),
    "sum": (("hopper-two-consumers", "hopper-c-from-global", "hopper-sum-inside"), None, ["-Xptxas", "-v"], HOPPER),
    "cl": (("hopper-two-consumers", "hopper-clusters"), None, ["-Xptxas", "-v"], HOPPER),
}


@pytest.fixture(scope="module")
def ahead(tmp_path_factory, parallel):
    """name -> (source, executable, nvcc's CompletedProcess) of each build of AHEAD, for
    F16_IN_F32_OUT with B transposed; the PTX beside each executable."""
    folder = tmp_path_factory.mktemp("hopper-builds")

    def build(name):
        changes, step, options, gpu = AHEAD[name]
        cu, defines = step_source(folder, step) if step else (gemmlib.tangle(folder / f"{name}.cu", changes=changes), [])
        exe = folder / name
        built = gemmlib.nvcc(cu, exe, config_defines("F16_IN_F32_OUT", None, 0, 1) + defines + options,
                             gpu=gpu, keep="-v" in options)
        return cu, exe, built
    return parallel(build, AHEAD)


def test_no_build_loses_its_setmaxnreg(ahead, gemm_cu, tmp_path):
    """ptxas ignores setmaxnreg where the code around it needs more registers than it would
    leave (its note C7507, "setmaxnreg ignored"): every role then runs in the launch's 168
    registers, as the cluster variant did while its first cluster barrier came after them.
    Neither the shipped kernel nor a variant built here may."""
    reports = {name: built.stderr for name, (_, _, built) in ahead.items() if built.returncode == 0}
    assert sorted(reports) == sorted(ahead), [built.stderr for _, _, built in ahead.values()]
    reports["shipped"] = ptx_and_report(gemm_cu, tmp_path, config_defines("F16_IN_F32_OUT", None, 0, 1), HOPPER)[1]
    for name, report in reports.items():
        assert "C7507" not in report and "setmaxnreg' ignored" not in report, (name, report)


def test_the_first_hopper_step_builds_without_a_producer(tmp_path):
    """Hopper step 1 (worklog/hopper-one-role.md with the steps' others): two consumer warp
    groups of 256 threads, two stages, thread 0 copying between its multiplies, a block per
    tile; no setmaxnreg, no spills."""
    cu, defines = step_source(tmp_path, "h-one-role")
    kernel, report = ptx_and_report(cu, tmp_path, config_defines("F16_IN_F32_OUT", None, 0, 1) + defines, HOPPER)
    assert kernel is not None and ".maxntid 256, 1, 1" in kernel
    assert len(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n256k16", kernel)) == 4
    assert kernel.count("cp.async.bulk.tensor.2d") == 2 * 2       # copies before and in the loop
    assert "setmaxnreg" not in kernel and "wgmma.wait_group.sync.aligned 0" in kernel
    assert len(kernels_by_width(tmp_path / "k.ptx")) == 1         # one width before step 5
    part = report[report.index("gemm_wgmma"):]
    part = part[:part.index("Compile time")]
    assert "0 bytes spill stores, 0 bytes spill loads" in part, part


def test_the_steps_before_persistence_take_a_tile_per_block(tmp_path):
    """Hopper steps 1 to 5 launch a block per tile (worklog/hopper-one-tile.md); the shipped
    kernel, step 6, a block per multiprocessor that loops over tiles, counting its steps on."""
    from conftest import REPO
    cu, _ = step_source(tmp_path, "h-widths")
    text = cu.read_text()
    document = (REPO / "gemm.md").read_text(encoding="utf-8")
    for persistent in ("return (unsigned)(blocks < h->sms ? blocks : h->sms);", "t += gridDim.x) {"):
        assert persistent in document and persistent not in text
    assert "return (unsigned)blocks;" in text and "hopper_tile<HOPPER_BN>(blockIdx.x, Mp, Np)" in text


def test_the_64_wide_tile_and_the_split_last_wave(ahead, gemm_cu, tmp_path, executable):
    """Step H8, as shipped: a kernel 64 wide (four m64n64k16 per stage, no spills) that the
    waves choose where tiles are few, and the tiles of a part-full last wave split along K
    where that shortens the wave (--plan on an H100's 132 multiprocessors); step H7 never
    splits. (The shipped kernel's sm_90a compile is the other tests'; its --plan any build's.)"""
    _, report = ptx_and_report(gemm_cu, tmp_path, config_defines("F16_IN_F32_OUT", None, 0, 1), HOPPER)
    widths = kernels_by_width(tmp_path / "k.ptx")
    assert 64 in widths, sorted(widths)
    assert re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16", widths[64]) == ["64"] * 4
    functions = hopper_spills(report)
    assert len(functions) == len(widths) and all(st == ld == "0" for _, st, ld in functions), functions
    frames = re.findall(r"Compiling entry function '_Z10gemm_wgmma\w+'.*?(\d+) bytes stack frame", report, re.S)
    assert frames == ["0"] * len(widths) and "C7514" not in report, frames   # accumulators in registers
    exe = executable("F16_IN_F32_OUT", 0, 1)
    plans = [((4096, 4096, 4096), "128 x 256; K in 1 slice."),             # 256 tiles: 124 of 132 last
             ((2047, 2049, 1023), "128 x 192; K in 1 slice."),             # 16 steps: too few to split
             ((512, 512, 512), "128 x 64; K in 1 slice."),                 # 32 tiles of 8 steps
             ((4096, 11008, 4096), "128 x 256; K in 2 slices for the last 56 of its 1376 tiles."),
             # the GPU check's problem with a split last wave, fully verified there
             ((769, 4751, 2100), "128 x 256; K in 8 slices for the last 1 of its 133 tiles.")]
    for size, words in plans:
        plan = subprocess.run([str(exe), "--plan=h100", *map(str, size)], capture_output=True, text=True)
        assert plan.returncode == 0, plan.stderr
        assert f"The Hopper kernel's tile: {words}" in plan.stdout, (size, plan.stdout)
    # Step H7: the same kernels less the 64-wide one, K whole unless --split-k says otherwise.
    cu, exe, built = ahead["h7"]
    assert built.returncode == 0, built.stderr
    for size, words in [((256, 256, 8192), "128 x 128; K in 1 slice."), ((1024, 1024, 1024), "128 x 128; K in 1 slice."),
                        ((769, 4751, 2100), "128 x 128; K in 1 slice.")]:
        plan = subprocess.run([str(exe), "--plan=h100", *map(str, size)], capture_output=True, text=True)
        assert f"The Hopper kernel's tile: {words}" in plan.stdout, (size, plan.stdout)


def test_the_ping_pong_variant_takes_turns_without_spills(ahead):
    """worklog/hopper-ping-pong.md, the experiment: each consumer group a whole tile of 128
    rows (two m64 accumulators, at most 128 columns), the groups' main loops ordered by two
    named barriers of 256 threads, a stage freed by one group's four warps; no spills in any
    layout's build, and the waves choose among its widths only."""
    cu, exe, built = ahead["pp"]
    text = cu.read_text()
    assert "constexpr int HOPPER_EMPTY_ARRIVALS = 4;" in text and "constexpr int HOPPER_STAGES = 6" in text
    assert built.returncode == 0, built.stderr
    widths = kernels_by_width(exe.with_suffix(".ptx"))
    assert sorted(widths) == [64, 128], sorted(widths)
    for kernel in widths.values():
        assert re.search(r"bar\.sync\s+%r\d+, 256;", kernel) and re.search(r"bar\.arrive\s+%r\d+, 256;", kernel)
        assert len(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k16", kernel)) == 2 * 4   # two halves
    functions = re.findall(r"Compiling entry function '(_Z10gemm_wgmma\w+)'.*?(\d+) bytes spill stores, "
                           r"(\d+) bytes spill loads", built.stderr, re.S)
    assert len(functions) == 2 and all(st == ld == "0" for _, st, ld in functions), functions
    # the accumulators stay in registers: no stack, and no wgmma serialised for their sake
    frames = re.findall(r"Compiling entry function '_Z10gemm_wgmma\w+'.*?(\d+) bytes stack frame", built.stderr, re.S)
    assert frames == ["0", "0"], frames
    assert "C7514" not in built.stderr and "serialized" not in built.stderr
    for kernel in widths.values():
        assert "st.local" not in kernel and "ld.local" not in kernel
    plan = subprocess.run([str(exe), "--plan=h100", "8192", "8192", "8192"], capture_output=True, text=True)
    # 4096 tiles: the last 4 split, HOPPER_SPLIT_COST counting in steps of this widest tile
    assert "The Hopper kernel's tile: 128 x 128; K in 16 slices for the last 4 of its 4096 tiles." \
        in plan.stdout, plan.stdout


def test_the_variant_that_adds_the_slices_inside_the_kernel(ahead):
    """worklog/hopper-sum-inside.md, the experiment measured against step H8: no second kernel;
    each kernel's slice publishes its rows of the workspace (the TMA's writes made visible to
    plain loads, a counter raised twice: in, and past the wait) and waits with an acquiring
    load. With its split's cost of 6 steps, 3000^3 splits where gemm.md takes 192 columns."""
    cu, exe, built = ahead["sum"]
    assert built.returncode == 0, built.stderr
    ptx = exe.with_suffix(".ptx")
    widths = kernels_by_width(ptx)
    assert sorted(widths) == sorted(gemmlib.registry()["hopper_widths"]), sorted(widths)
    for width, kernel in widths.items():
        assert "fence.proxy.async.global" in kernel and "ld.acquire.gpu.global.b32" in kernel, width
        assert kernel.count("atom.global.add.u32") == 2, width
    assert "sum_hopper_slices" not in ptx.read_text()
    functions = re.findall(r"Compiling entry function '(_Z10gemm_wgmma\w+)'.*?(\d+) bytes spill stores, "
                           r"(\d+) bytes spill loads", built.stderr, re.S)
    assert len(functions) == len(widths) and all(st == ld == "0" for _, st, ld in functions), functions
    plan = subprocess.run([str(exe), "--plan=h100", "3000", "3000", "3000"], capture_output=True, text=True)
    assert "The Hopper kernel's tile: 128 x 256; K in 5 slices for the last 24 of its 288 tiles." \
        in plan.stdout, plan.stdout


def c_function(source, head):
    """The text of the C++ function (or struct) of `source` that starts with `head` (a regex),
    up to its closing brace; its template line, if it has one, included."""
    start = re.search(r"(?m)^(?:template <[^\n]*>\n)?" + head, source)
    assert start, head
    depth, at = 0, source.index("{", start.end())
    for k in range(at, len(source)):
        depth += {"{": 1, "}": -1}.get(source[k], 0)
        if depth == 0:
            return source[start.start():k + 1] + (";" if head.startswith("struct") else "") + "\n"
    raise AssertionError(head)


# The work tiles of each block of a grid, by the variant's own for_each_work_tile, compiled for the
# host: one line per work tile, "block i first k_tiles whole row col at.x at.y".
UNITS_HARNESS = r"""
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#define __device__
#define __host__
struct int2 { int x, y; };
static int2 make_int2(int x, int y) { return int2{x, y}; }
static struct { unsigned x; } blockIdx, gridDim;
constexpr int GROUP_M = %(group_m)d, HOPPER_BM = 128, HOPPER_CLUSTER = 2;
%(code)s
int main(int argc, char **argv)
{
    const int64_t Mp = atoll(argv[1]), Np = atoll(argv[2]), steps = atoi(argv[3]), width = atoi(argv[4]);
    HopperShare share = {atoi(argv[5]), atoi(argv[6]), atoi(argv[7])};
    gridDim.x = atoi(argv[8]);
    for (blockIdx.x = 0; blockIdx.x < gridDim.x; blockIdx.x++) {
        auto print = [](WorkTile u) {
            printf("%%u %%d %%d %%d %%d %%d %%d %%d %%d\n", blockIdx.x, u.i, u.first, u.k_tiles, (int)u.whole, u.row,
                   u.col, u.at.x, u.at.y);
        };
        if (width == 256) for_each_work_tile<256>(Mp, Np, (int)steps, share, print);
        else if (width == 192) for_each_work_tile<192>(Mp, Np, (int)steps, share, print);
        else if (width == 128) for_each_work_tile<128>(Mp, Np, (int)steps, share, print);
        else for_each_work_tile<64>(Mp, Np, (int)steps, share, print);
    }
}
"""


def test_the_cluster_variant_pairs_its_blocks_step_for_step(tmp_path, ahead):
    """worklog/hopper-clusters.md, the experiment: the two blocks of a cluster multicast halves
    of one band of B into each other's stages, so they must take the same steps of K in the
    same stages, on tiles one above the other in the same columns. Its for_each_work_tile, compiled
    for the host with gemm.md's grouped_tile and the kernel's types, shares every unit out once
    and keeps the two blocks of each cluster in step, whole tiles and split ones, at widths
    that fill the waves and widths that do not; the build has the multicast, the remote
    arrivals and the cluster barriers, and no spills."""
    cu, variant, variant_built = ahead["cl"]
    source = cu.read_text()
    assert "constexpr int HOPPER_EMPTY_ARRIVALS = 4 * HOPPER_CONSUMERS * HOPPER_CLUSTER;" in source
    assert source.count("tma_copy(&map_c, smem.c_slot(") == 1, "the producer copies C as gemm.md's does"
    code = "".join(c_function(source, head) for head in (
        r"static __device__ inline void grouped_tile", r"static __host__ __device__ inline int64_t hopper_tile_rows",
        r"static __device__ inline int2 hopper_tile",
        r"static __host__ __device__ inline int64_t hopper_tiles", r"struct HopperShare",
        r"static __host__ __device__ inline int64_t hopper_work_tiles", r"struct WorkTile",
        r"static __device__ inline void for_each_work_tile"))
    harness = tmp_path / "units.cpp"
    harness.write_text(UNITS_HARNESS % {"group_m": 8, "code": code})
    exe = tmp_path / "units"
    built = subprocess.run(["g++", "-std=c++17", "-O1", "-o", str(exe), str(harness)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    # (Mp, Np, steps of K, width, whole tiles, slices, C steps, blocks)
    for Mp, Np, steps, width, whole, slices, c_steps, blocks in [
            (8192, 8192, 128, 256, 2048, 1, 3, 132), (3072, 3072, 47, 192, 384, 1, 3, 132),
            (3072, 3072, 47, 256, 264, 5, 3, 132), (1024, 1024, 16, 64, 0, 8, 0, 130),
            (256, 256, 128, 64, 0, 16, 2, 8), (4096, 11008, 64, 256, 1320, 2, 3, 128),
            (2048, 2048, 16, 128, 132 * 2, 3, 3, 132)]:
        tiles = Mp // 128 * (Np // width)
        whole = min(whole, tiles)
        out = subprocess.run([str(exe), *map(str, (Mp, Np, steps, width, whole, slices, c_steps, blocks))],
                             capture_output=True, text=True, check=True).stdout
        units = [tuple(map(int, line.split())) for line in out.splitlines()]
        assert len(units) == whole + (tiles - whole) * slices, (Mp, Np, width)
        # every whole tile once; every split tile's slices once each, covering K
        assert len({(u[7], u[8]) for u in units if u[4]}) == whole
        split = {}
        for u in units:
            if not u[4]:
                split.setdefault((u[7], u[8]), []).append((u[2], u[3], u[5]))
        assert len(split) == tiles - whole
        for parts in split.values():
            assert sorted((f, s) for f, s, _ in parts)[0][0] == 0
            assert sum(s for _, s, _ in parts) == steps and len(parts) == slices
        assert len({u[5] for u in units if not u[4]}) == (tiles - whole) * slices   # own workspace rows
        # the two blocks of a cluster: the same steps in the same stages, tiles one above the other
        by_block = {}
        for u in units:
            by_block.setdefault(u[0], []).append(u)
        for b in range(0, blocks, 2):
            first, second = by_block.get(b, []), by_block.get(b + 1, [])
            assert len(first) == len(second), b
            for x, y in zip(first, second):
                assert x[1:5] == y[1:5], (x, y)                          # i, first, steps, whole
                assert y[7] == x[7] + 128 and y[8] == x[8], (x, y)      # one above the other
    # the build: B multicast into both blocks, stages given back to both, cluster barriers
    assert variant_built.returncode == 0, variant_built.stderr
    widths = kernels_by_width(variant.with_suffix(".ptx"))
    assert sorted(widths) == sorted(gemmlib.registry()["hopper_widths"]), sorted(widths)
    for width, kernel in widths.items():
        assert ".multicast::cluster" in kernel and "mapa.shared::cluster" in kernel, width
        assert "mbarrier.arrive.shared::cluster.b64" in kernel, width
        assert kernel.count("barrier.cluster.arrive") == 2 and kernel.count("barrier.cluster.wait") == 2, width
    functions = re.findall(r"Compiling entry function '(_Z10gemm_wgmma\w+)'.*?(\d+) bytes spill stores, "
                           r"(\d+) bytes spill loads", variant_built.stderr, re.S)
    assert len(functions) == len(widths) and all(st == ld == "0" for _, st, ld in functions), functions
    # M is padded to whole pairs of tiles; GROUP_M must be even
    plan = subprocess.run([str(variant), "--plan=h100", "300", "200", "100"], capture_output=True, text=True)
    assert "The Hopper kernel, where it runs too, pads it to 512 x 256 x 128." in plan.stdout, plan.stdout
    odd = gemmlib.nvcc(cu, tmp_path / "odd", config_defines("F16_IN_F32_OUT", None, 0, 1) + ["-DGROUP_M=3"],
                       gpu=HOPPER, mode="ptx")
    assert odd.returncode != 0 and "GROUP_M is even" in odd.stderr


def test_the_variant_that_fetches_the_tensor_maps_first(tmp_path):
    """worklog/hopper-prefetch-maps.md, the experiment: the thread that sets up the barriers
    first asks for the four tensor maps, so each width's kernel prefetches four maps before
    its first barrier is initialised, and gemm.md's kernel none."""
    for changes, count in (((), 0), (("hopper-prefetch-maps",), 4)):
        for width, kernel in variant_kernels(tmp_path, changes).items():
            assert kernel.count("prefetch.tensormap") == count, (changes, width)
            if count:
                assert kernel.index("prefetch.tensormap") < kernel.index("mbarrier.init"), width


def test_the_variant_with_lean_steps_makes_each_descriptor_once(tmp_path):
    """worklog/hopper-lean-steps.md, the experiment: a step makes each operand's descriptor once
    (one mask of the 18-bit shared-memory address per operand, not one per wgmma) and adds the
    next 16 elements of K to it, in each width's kernel."""
    masks = {}
    for changes in ((), ("hopper-lean-steps",)):
        widths = variant_kernels(tmp_path, changes)
        # the descriptor's mask of a 1024-byte-aligned address, 0x3FC00, with the offset of
        # the wgmma's 16 elements of K folded in: one constant for each of the four in
        # gemm.md's step, one alone in the variant's
        masks[changes] = {w: {int(v) for v in re.findall(r"and\.b32\s+%r\d+, %r\d+, (\d+);", k)
                              if 0x3FC00 <= int(v) < 0x3FC80} for w, k in widths.items()}
    for width, lean in masks[("hopper-lean-steps",)].items():
        assert masks[()][width] == {0x3FC00, 0x3FC20, 0x3FC40, 0x3FC60} and lean == {0x3FC00}, (width, lean)


@pytest.mark.parametrize("pair, form", [("I8_IN_I32_OUT", "k32.s32.s8.s8"), ("U8_IN_I32_OUT", "k32.s32.u8.u8"),
                                        ("TF32_IN_F32_OUT", "k8.f32.tf32.tf32"),
                                        ("E4M3_IN_F32_OUT", "k32.f32.e4m3.e4m3"),
                                        ("E5M2_IN_F32_OUT", "k32.f32.e5m2.e5m2")])
def test_the_8bit_and_tf32_pairs_have_their_own_wgmma(gemm_cu, tmp_path, pair, form):
    """Each width's kernel multiplies with the pair's own form of wgmma, four per step of 128
    bytes, and ptxas gives each the registers it needs without spilling. In TN, where both
    operands are stored along K, nothing is copied; in NN, where B is not, the same kernels
    read B's K-major copy, made by the transposing kernel, which TN's build does not have."""
    _, report = ptx_and_report(gemm_cu, tmp_path, config_defines(pair, None, 0, 1), HOPPER)
    assert "_Z9transpose" not in (tmp_path / "k.ptx").read_text()
    widths = kernels_by_width(tmp_path / "k.ptx")
    assert sorted(widths) == sorted(gemmlib.registry()["hopper_widths"])
    for width, kernel in widths.items():
        found = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)(k\d+\.\w+\.\w+\.\w+)", kernel)
        assert found == [(str(width), form)] * 4, (width, found[:2])
    if pair == "I8_IN_I32_OUT":   # one pair in NN is enough: the K-major copy is the same for all
        nn = variant_kernels(tmp_path, (), pair, 0, 0)
        assert {w: k.count("wgmma.mma_async") for w, k in nn.items()} == {w: 4 for w in widths}
        assert re.search(r"\.entry _Z9transposeI\w+EvPKT_PS0_ll", (tmp_path / f"variant-{pair}-00.ptx").read_text())
    functions = hopper_spills(report)
    assert len(functions) == len(widths) and all(st == ld == "0" for _, st, ld in functions), functions


@pytest.mark.parametrize("pair, c", [("E4M3_IN_F32_OUT", None), ("E4M3_IN_BF16_OUT", "bf16"),
                                     ("E4M3_IN_F16_OUT", "f16")])
def test_a_16bit_c_is_rounded_from_float_sums(gemm_cu, tmp_path, pair, c):
    """Where C's type is not the accumulator's (FP8 into bf16 or half), each width's kernel
    reads C as 16-bit values and rounds its float sums into them, while a slice of K goes into
    the workspace in float; split K's second kernel rounds the sum of the slices the same way.
    With a float C nothing is rounded. All three multiply with E4M3's wgmma, without spills."""
    _, report = ptx_and_report(gemm_cu, tmp_path, config_defines(pair, None, 0, 1), HOPPER)
    ptx = tmp_path / "k.ptx"
    sums = re.split(r"(?m)^(?:\.visible\s+)?\.entry\s+", ptx.read_text())
    sums = [e for e in sums if re.match(r"_Z\d+sum_hopper_slices", e)]
    widths = kernels_by_width(ptx)
    assert sums and sorted(widths) == sorted(gemmlib.registry()["hopper_widths"])
    functions = hopper_spills(report)   # and, like E4M3's (the test above), no spills
    assert len(functions) == len(widths) and all(st == ld == "0" for _, st, ld in functions), functions
    for kernel in widths.values():   # E4M3's form of wgmma, four per step of 128 bytes
        assert re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+(k32\.f32\.e4m3\.e4m3)", kernel) == \
            ["k32.f32.e4m3.e4m3"] * 4
    for kernel in list(widths.values()) + sums:
        rounded = re.findall(r"cvt\.rn\.(bf16|f16)(?:x2)?\.f32", kernel)
        widened = re.findall(r"cvt\.f32\.(bf16|f16)\b", kernel)
        if c is None:
            assert not rounded and not widened
        else:
            assert rounded and set(rounded) == {c} and set(widened) == {c}
