"""Build and run ./gemm from Python: the one nvcc command line outside the Makefile.

Everything that builds gemm.md for a script or a test goes through here:

    tangle(out, changes)            gemm.md (with worklog/ change files) -> a .cu file
    defines(pair, shape, ta, tb)    the -D options, spelled as the Makefile spells them
    target(gpu)                     nvcc's target for a GPU (Hopper as sm_90a)
    runs_on(kernel, cc)             whether a kernel runs on a GPU, from --describe
    nvcc(source, out, defines, gpu) compile: an executable, an object, a cubin with its PTX, or PTX
    registry()                      what ./gemm --describe says, from a quick PTX-only build
    run(exe, args), parse_csv(text) run ./gemm, read --csv rows by column name
    find_gpu()                      the GPU in this machine, from nvidia-smi

The lists of type pairs, shapes, layouts, kernels (and the GPUs each runs on), tiles, GPUs
and CSV columns come from ./gemm --describe (`registry()`), never from a copy kept here.
"""

import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NVCC = os.environ.get("NVCC", "nvcc")
# The Makefile's flags, less -Wall (warnings are the Makefile's test's business).
FLAGS = ["-O3", "-std=c++20", "-lineinfo"]
TIMEOUT = 900


def target(gpu):
    """nvcc's target options for `gpu`: a compute capability of the GPU to run on ("90", 90,
    "9.0"), or a target named as is ("sm_80", "sm_90", "sm_90a", "compute_90": PTX only).
    A GPU that a kernel runs on alone (its `cc` in --describe: the Hopper kernel's) gets the
    target of that GPU's own features, sm_90a on Hopper, whose code has wgmma and setmaxnreg.
    Such a target is spelled with -gencode, as in the Makefile, because -arch=sm_90a would
    also run a plain sm_90 pass that rejects them."""
    text = str(gpu).replace(".", "")
    if text.isdigit():
        only = {k["cc"] for k in registry()["kernels"] if k["cc"]}
        text = f"sm_{text}a" if int(text) in only else f"sm_{text}"
    if re.fullmatch(r"sm_\d+a", text):
        return ["-gencode", f"arch=compute_{text[3:]},code={text}"]
    if text.startswith("compute_"):
        return ["-gencode", f"arch={text},code={text}"]
    if not re.fullmatch(r"sm_\d+a?", text):
        raise ValueError(f"not a GPU target: {gpu!r}")
    return [f"-arch={text}"]


def defines(pair=None, shape=None, ta=None, tb=None, cublas=False, settings=None):
    """The -D options of one configuration, as `make TYPE=… MNK=… TRANSPOSE_A=… …` passes them,
    then `settings` ({"BLOCK_K": 32, …}) as -DNAME=VALUE."""
    flags = []
    if pair is not None:
        flags += ["-DTYPE_FROM_MAKE", f"-D{pair}"]
    if shape is not None:
        flags += [f"-DMNK_FROM_MAKE={shape}", f"-DMNK_{shape}"]
    if ta is not None:
        flags.append(f"-DTRANSPOSE_A={ta}")
    if tb is not None:
        flags.append(f"-DTRANSPOSE_B={tb}")
    flags.append(f"-DUSE_CUBLAS={int(bool(cublas))}")
    flags += [f"-D{k}={v}" for k, v in sorted((settings or {}).items())]
    return flags


def command(source, out, flags, gpu="90", mode="exe"):
    """The nvcc command line: mode "exe" (linked with cuBLAS when the flags ask for it),
    "obj" (an object file to link), "cubin" (device code only, intermediate files kept in
    out.keep/) or "ptx"."""
    cmd = [NVCC, *FLAGS, *target(gpu), *flags]
    if mode == "exe":
        cmd += ["-o", out, source] + (["-lcublas", "-lcublasLt"] if "-DUSE_CUBLAS=1" in flags else []) + ["-ldl"]
    elif mode == "obj":
        cmd += ["-c", "-o", out, source]
    elif mode == "cubin":
        cmd += ["-cubin", "-keep", "-keep-dir", f"{out}.keep", "-o", out, source]
    elif mode == "ptx":
        cmd += ["-ptx", "-o", out, source]
    else:
        raise ValueError(mode)
    return [str(c) for c in cmd]


def nvcc(source, out, flags, gpu="90", mode="exe", timeout=TIMEOUT, keep=False, niceness=0):
    """Run `command`; the CompletedProcess. A cubin's PTX is kept beside it, as out.ptx; with
    keep, an executable's too, and its device code as out.cubin (one compile for both). With
    niceness, nvcc runs at that lower priority (work in the background that others need later)."""
    if shutil.which(NVCC) is None:
        raise SystemExit(f"{NVCC} is not on PATH: building gemm.md needs the CUDA toolkit")
    keep = mode == "cubin" or (keep and mode == "exe")
    folder = Path(f"{out}.keep")
    cmd = command(source, out, flags, gpu, mode)
    if keep:
        folder.mkdir(parents=True, exist_ok=True)
        if mode == "exe":
            cmd[1:1] = ["-keep", "-keep-dir", str(folder)]
    lower = (lambda: os.nice(niceness)) if niceness else None
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, preexec_fn=lower)
    if keep:
        ptx = sorted(folder.glob("*.ptx"))
        if result.returncode == 0 and ptx:
            shutil.copy(ptx[0], Path(out).with_suffix(".ptx"))
        cubins = [c for c in sorted(folder.glob("*.cubin")) if "dlink" not in c.name]
        if mode == "exe" and result.returncode == 0 and cubins:
            shutil.copy(cubins[0], f"{out}.cubin")
        shutil.rmtree(folder, ignore_errors=True)    # megabytes of intermediate files
    return result


def tangle(out, changes=(), document=None, only=(), lines=True):
    """gemm.md (or `document`), with the change files `changes` (paths, or names in worklog/),
    tangled to `out`; with `only`, those fragments alone (tangle.py --only); without `lines`, no
    #line directives (the code alone, unchanged by edits elsewhere in the document). SystemExit
    with tangle.py's message when it fails."""
    args = [a for name in only for a in ("--only", name)] + ([] if lines else ["--no-line"])
    for change in changes:
        path = Path(change)
        if path.suffix != ".md":
            path = REPO / "worklog" / f"{change}.md"
        args += ["--change", str(path)]
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    result = subprocess.run([sys.executable, str(REPO / "tangle.py"),
                             str(document or REPO / "gemm.md"), *args, "-o", str(out)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"tangle.py failed:\n{result.stderr}")
    return Path(out)


def describe(exe):
    """./gemm --describe of the binary `exe`, as a dict."""
    result = subprocess.run([str(exe), "--describe"], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise SystemExit(f"{exe} --describe failed ({result.returncode}):\n{result.stderr}")
    return json.loads(result.stdout)


_REGISTRY = {}


def registry(folder=None, changes=()):
    """What gemm.md's ./gemm --describe says: of gemm.md with the change files `changes` of
    worklog/ where given. Built once per version of the sources, as PTX only (seconds:
    --describe runs no kernel), and kept in build/registry/."""
    texts = [(REPO / "gemm.md").read_bytes()]
    for change in changes:
        path = Path(change)
        texts.append((path if path.suffix == ".md" else REPO / "worklog" / f"{change}.md").read_bytes())
    key = hashlib.sha256(b"\0".join(texts)).hexdigest()[:16]
    if key in _REGISTRY:
        return _REGISTRY[key]
    folder = Path(folder or REPO / "build" / "registry") / key
    saved = folder / "describe.json"
    if saved.is_file():
        _REGISTRY[key] = json.loads(saved.read_text(encoding="utf-8"))
        return _REGISTRY[key]
    cu = tangle(folder / "gemm.cu", changes)
    exe = folder / "gemm"
    result = nvcc(cu, exe, defines(), gpu="compute_90")
    if result.returncode != 0:
        raise SystemExit(f"building gemm.md for --describe failed:\n{result.stderr[-3000:]}")
    described = describe(exe)
    saved.write_text(json.dumps(described), encoding="utf-8")
    _REGISTRY[key] = described
    return described


def kernel(name, described=None):
    """The entry of --describe for the kernel called `name`."""
    found = [k for k in (described or registry())["kernels"] if k["name"] == name]
    if not found:
        raise SystemExit(f"./gemm --describe lists no kernel called {name}")
    return found[0]


def runs_on(name, cc, described=None):
    """Whether the kernel called `name` runs on a GPU of compute capability `cc` ("90", 90,
    "9.0"), as --describe says: on its one `cc` where it has one, else from its `min_cc` on
    (as gemm.md's runs_on reads them)."""
    k, cc = kernel(name, described), int(str(cc).replace(".", ""))
    return cc == k["cc"] if k["cc"] else cc >= k["min_cc"]


def hopper_pairs(described=None, native=False):
    """The pairs the Hopper kernel takes; with `native`, those whose operands wgmma reads as
    stored in every layout, with no K-major copy (the 16-bit pairs, which the studies of its steps,
    widths and floors measure)."""
    return [p["name"] for p in (described or registry())["pairs"]
            if "wgmma" in p["kernels"] and not (native and p["k_major"])]


def pairs(described=None):
    """{pair name: its entry of --describe}, in the order of gemm.md's PAIRS."""
    return {p["name"]: p for p in (described or registry())["pairs"]}


def parse_csv(text, header=None):
    """The rows of ./gemm --csv output as dicts keyed by column name. `header` is the header
    line (./gemm --csv-header) when `text` does not start with it. Every row must have
    exactly the header's columns."""
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    if header is None:
        if not lines:
            return []
        header, lines = lines[0], lines[1:]
    columns = next(csv.reader([header]))
    rows = []
    for fields in csv.reader(lines):
        if len(fields) != len(columns):
            raise ValueError(f"a CSV line has {len(fields)} fields where the header has "
                             f"{len(columns)}: {','.join(fields)}")
        rows.append(dict(zip(columns, fields)))
    return rows


# --part I/N of the scripts whose GPU work is split over several calls of a lent GPU.
def parse_part(text):
    """'1/2' -> (1, 2); ValueError unless 1 <= I <= N."""
    i, sep, n = text.partition("/")
    if not (sep and i.isdigit() and n.isdigit() and 1 <= int(i) <= int(n)):
        raise ValueError(f"--part is I/N with 1 <= I <= N, not {text!r}")
    return int(i), int(n)


def share_of(runs, part):
    """The part-th of n shares of `runs`: every n-th run from the (i-1)-th, so that each share
    takes some of the long runs."""
    i, n = part
    return runs[i - 1::n]


def run(exe, args, timeout=1800):
    """Run ./gemm (the binary `exe`) with `args`; the CompletedProcess."""
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def compared_mode(rows):
    """The mode a comparison reads of CSV rows: --sustain's steady state ("sustained") where they
    have it, else the timed burst ("burst")."""
    return "sustained" if any(r.get("mode") == "sustained" for r in rows) else "burst"


def in_compared_mode(rows):
    """The rows of compared_mode's mode, of those given."""
    mode = compared_mode(rows)
    return [r for r in rows if r.get("mode", "burst") == mode]


def timed_rows(found, impl):
    """An implementation's rows of one run that a comparison reads (compared_mode)."""
    return in_compared_mode([r for r in found if r["impl"] == impl])


def versus_cublas(exe, args, header, kernel="wgmma", timeout=1800):
    """One run of ./gemm (`args` with --csv), the kernel's speed against cuBLAS's in the same
    process (in the steady state, where `args` ask for --sustain: timed_rows): (its CSV rows,
    the kernel's eTOPS as a share of cuBLAS's or None, its exit status or "timeout", what it
    said where it gave no share)."""
    try:
        result = run(exe, args, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [], None, "timeout", f"no answer in {timeout} s"
    found = parse_csv(result.stdout, header) if result.returncode in (0, 1) else []
    ours, cublas = timed_rows(found, kernel), timed_rows(found, "cublas")
    if not ours or not cublas:
        return found, None, result.returncode, result.stderr.strip()[:300]
    return found, float(ours[0]["etops"]) / float(cublas[0]["etops"]), result.returncode, ""


def against_cublas(found, kernel="wgmma"):
    """From one run's CSV rows: the kernel's line against cuBLAS's (rows_against_cublas), of the
    steady state where the run has one (timed_rows); (None, None) where either is missing."""
    ours, cublas = timed_rows(found, kernel), timed_rows(found, "cublas")
    return rows_against_cublas(ours[0], cublas[0]) if ours and cublas else (None, None)


def rows_against_cublas(k, c):
    """A kernel's CSV row against cuBLAS's of the same run (values as text or as numbers): per
    clock (cuBLAS's cycles per GEMM over the kernel's, back to back in the energy window where
    its clock was sampled, else over the timed launches) and in energy per GEMM (the kernel's
    over cuBLAS's); each None where NVML did not measure it."""
    number = lambda row, column: float(row[column]) if row.get(column) not in (None, "") else None

    def kcycles(row):
        if number(row, "window_ms") and number(row, "window_clock_mhz"):
            return number(row, "window_ms") * number(row, "window_clock_mhz")
        clock = number(row, "sm_clock_mhz")
        return float(row["median_ms"]) * clock if clock else None

    cycles = kcycles(k), kcycles(c)
    energies = number(k, "energy_j"), number(c, "energy_j")
    per_clock = cycles[1] / cycles[0] if None not in cycles else None
    energy = energies[0] / energies[1] if None not in energies else None
    return per_clock, energy


def find_gpu(prog="gemmlib"):
    """(name, compute capability digits such as "90", driver) of the first GPU; SystemExit,
    with one clear line, on a machine without one."""
    if shutil.which("nvidia-smi") is None:
        raise SystemExit(f"{prog}: no GPU: nvidia-smi is not on PATH")
    cmd = ["nvidia-smi", "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SystemExit(f"{prog}: no GPU: nvidia-smi did not answer ({e})")
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    fields = [f.strip() for f in lines[0].split(",")] if lines else []
    if result.returncode != 0 or len(fields) != 3 or not re.fullmatch(r"\d+\.\d+", fields[1]):
        said = (result.stdout + result.stderr).strip().splitlines()
        raise SystemExit(f"{prog}: no GPU: nvidia-smi found none" + (f" ({said[0]})" if said else ""))
    name, cap, driver = fields
    return name, cap.replace(".", ""), driver


if __name__ == "__main__":
    # python3 scripts/gemmlib.py: print the registry (the lists every script reads).
    print(json.dumps(registry(), indent=1))
