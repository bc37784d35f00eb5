"""README.md against what it cites: the sample report is a recorded run's, the speeds relative
to cuBLAS are the cited sweep's, and the oldest GPU a build can target is this nvcc's."""

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")


def section(title):
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end if end >= 0 else len(README)]


def test_the_sample_report_is_a_recorded_run_named_with_its_date_and_command():
    text = section("What it prints")
    cited = re.search(r"A real report, `(results/[^`]+)`", text)
    assert cited, text
    recorded = (REPO / cited[1]).read_text(encoding="utf-8").splitlines()
    sample = [line[4:] for line in text.splitlines() if line.startswith("    ")]
    assert len(sample) >= 10 and sample[0].startswith("Built with")
    # Line for line the file's, in its order, blank lines aside.
    assert sample == [line for line in recorded if line][:len(sample)]
    date = re.search(r"-(\d{4}-\d\d-\d\d)-", cited[1])[1]
    flat = re.sub(r"\s+", " ", text)
    assert f"on {date}" in flat and "`./gemm " in flat and "`make " in flat


def test_the_speeds_relative_to_cublas_are_the_cited_sweeps():
    flat = re.sub(r"\s+", " ", section("What it prints"))
    cited = re.search(r"in the sweep of `(results/[^`]+\.md)`", flat)
    assert cited, flat
    quoted = re.search(r"at (\d+)³ for `(\w+)` the Hopper kernel runs at ([\d.]+) % of cuBLAS's speed "
                       r"with B plain and ([\d.]+) % with B transposed, the tiled kernel at ([\d.]+) % "
                       r"and ([\d.]+) %, the simple kernel at ([\d.]+) % and ([\d.]+) %", flat)
    assert quoted, flat
    size, pair, *shares = quoted.groups()
    rows = [line.split("|")[1:-1] for line in (REPO / cited[1]).read_text(encoding="utf-8").splitlines()
            if line.startswith("|")]
    header = [cell.strip() for cell in rows[0]]
    row = next([c.strip() for c in r] for r in rows[2:] if r[0].strip() == pair and r[1].strip() == size)
    columns = [f"{kernel}/cuBLAS, B {layout}" for kernel in ["Hopper kernel", "Tiled kernel", "Simple kernel"]
               for layout in ["plain", "transposed"]]
    assert [row[header.index(c)] for c in columns] == [f"{share} %" for share in shares]


def test_the_oldest_target_named_is_this_nvccs():
    """README and Appendix A of gemm.md say which GPUs this CUDA builds for; a plain make without
    a GPU leaves Turing out, and the README says how to build for it."""
    version = re.search(r"release (\d+)\.", subprocess.run(["nvcc", "--version"], capture_output=True,
                                                           text=True).stdout)[1]
    archs = subprocess.run(["nvcc", "--list-gpu-arch"], capture_output=True, text=True).stdout
    oldest = min(int(x) for x in re.findall(r"compute_(\d+)", archs))
    appendix = (REPO / "gemm.md").read_text(encoding="utf-8")
    appendix = appendix[appendix.index("# Appendix A:"):appendix.index("# Appendix B:")]
    for text in [README, appendix]:
        said = re.findall(r"CUDA (\d+) builds for sm_(\d+) and newer", re.sub(r"\s+", " ", text))
        assert said and all(int(sm) == oldest for v, sm in said if v == version), said
    assert f"make ARCH=sm_{oldest}`" in re.sub(r"\s+", " ", section("Build and run"))
