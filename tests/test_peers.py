"""gemm-cutlass, ./gemm with CUTLASS's GEMMs as more kernels (scripts/peerlib.py), without a GPU:
the lists of configurations, the seam in gemm.md's kernel table, one configuration compiled
with CUTLASS's headers against what gemm.cu's rows ask of it, and the report's table."""

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, in_parallel

sys.path.insert(0, str(REPO / "scripts"))
import gemmlib  # noqa: E402
import peerlib as peers  # noqa: E402


def test_the_configurations_are_read_from_the_one_list():
    found = peers.configurations()
    assert set(found) == {"sm80", "sm90"} and found["sm80"] and found["sm90"]
    names = found["sm80"] + found["sm90"]
    assert len(set(names)) == len(names)
    assert all(peers.kind_of(n) == kind for kind in found for n in found[kind])
    assert peers.kind_of("wgmma") is None and peers.kind_of("cublas") is None
    # The minimum: the Hopper GEMM cooperative and ping-pong, in clusters of 1 and 2.
    for schedule in ("cooperative", "pingpong"):
        assert {n[-2:] for n in found["sm90"] if schedule in n} == {"c1", "c2"}


def test_without_the_headers_the_build_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.setattr(peers, "INCLUDE", tmp_path / "nothing")
    with pytest.raises(SystemExit, match="make peers"):
        peers.headers(install=False)


def test_make_peers_passes_makes_settings(tmp_path):
    result = subprocess.run(["make", "-n", "peers", "TYPE=BF16_IN_F32_OUT", "TRANSPOSE_B=1", "ARCH=sm_80"],
                            cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    line = " ".join(result.stdout.replace("\\\n", " ").split())
    assert "scripts/peerlib.py build --type BF16_IN_F32_OUT --transpose-b 1 --arch sm_80" in line


def symbols(obj, undefined):
    """The demangled functions an object defines (or, with undefined, needs) named cutlass..."""
    result = subprocess.run(["nm", "-C", "--undefined-only" if undefined else "--defined-only", str(obj)],
                            capture_output=True, text=True, check=True)
    return {line.split(None, 2 if not undefined else 1)[-1] for line in result.stdout.splitlines()
            if "cutlass8" in line or "cutlass9" in line}


def test_the_rows_and_a_configuration_compile_and_meet(tmp_path):
    """gemm.cu with the peer's rows (no CUTLASS there) compiles, and names, for each
    configuration, a function of its pair and layout; one configuration, compiled with CUTLASS's
    headers from the pinned wheel, defines the very function the rows need."""
    include, util = peers.headers()
    source = gemmlib.tangle(tmp_path / "gemm.cu")
    pair_h = gemmlib.tangle(tmp_path / "pair" / "pair.h", only=peers.PAIR_FRAGMENTS)
    flags = gemmlib.defines("F16_IN_F32_OUT", None, 0, 1, cublas=True)
    first = peers.configurations()["sm80"][0]
    jobs = {
        "rows": (source, tmp_path / "rows.o",
                 [*flags, "-I", str(peers.PEERS), '-DPEER_KERNELS="cutlass_rows.h"', "-DPEER_SM90=1"]),
        "config": (peers.PEERS / "cutlass_config.cu", tmp_path / "config.o",
                   [*flags, *peers.CUTLASS_FLAGS, "-I", str(include), "-I", str(util), "-I", str(pair_h.parent),
                    "-I", str(peers.PEERS), f"-DPEER_CONFIG={first}"]),
    }
    # (their device code as PTX alone: what is checked here is the host's symbols, and a ptxas pass
    # of every kernel would double the time; the GPU's builds run it)
    done = in_parallel(lambda job: gemmlib.nvcc(*jobs[job], gpu="compute_90a", mode="obj"), jobs)
    for job, result in done.items():
        assert result.returncode == 0, f"{job}:\n{result.stderr[-3000:]}"
    needed = symbols(tmp_path / "rows.o", undefined=True)
    names = peers.configurations()
    assert len(needed) == len(names["sm80"]) + len(names["sm90"])
    assert all("PeerCall<__half, float, float, 0, 1>" in n for n in needed), needed
    defined = symbols(tmp_path / "config.o", undefined=False)
    assert any(f" {first}<0>(" in n for n in defined)
    assert defined & needed, (defined, needed)


def row(impl, etops, problem=(4096, 4096, 4096), pair="F16_IN_F32_OUT", layout="TN", result="PASS"):
    return {"type": pair, "layout": layout, "M": problem[0], "N": problem[1], "K": problem[2],
            "impl": impl, "etops": etops, "result": result, "mode": "burst"}


def test_the_table_takes_each_kinds_best_configuration_by_its_median():
    rows = []   # three rounds
    for tiled, c1, c2, w, h1, h2, cublas in ((350, 390, 399, 660, 580, 600, 630),
                                               (352, 395, 380, 668, 585, 590, 628),
                                               (349, 398, 381, 667, 586, 595, 627)):
        rows += [row("tiled", tiled), row("cutlass80_128x256_s3", c1), row("cutlass80_128x128_s5", c2),
                 row("wgmma", w), row("cutlass90_cooperative_128x256_c1", h1),
                 row("cutlass90_pingpong_128x128_c2", h2), row("cublas", cublas)]
    rows.append(row("cutlass80_128x128_s5", 999, result="FAIL"))   # a wrong answer counts for nothing
    table = peers.make_table({"gpu": "H100", "date": "2026-11-26", "command": "x"}, rows)
    sm80, sm90 = [next(l for l in part.splitlines() if l.startswith("| f16→f32"))
                  for part in table.split("\n\n")[:2]]
    cells = lambda line: [c.strip() for c in line.strip("|").split("|")]
    # medians: tiled 350, 128x256 395, 128x128 381; wgmma 667, coop 585, pingpong 595; cuBLAS 628
    assert cells(sm80) == ["f16→f32", "4096³", "350", "395", "128x256 s3", f"{100 * 350 / 395:.0f} %"]
    assert cells(sm90) == ["f16→f32", "4096³", "667", "595", "ping 128x128 c2", f"{100 * 667 / 595:.0f} %", "628"]
    assert "layout TN" in table
