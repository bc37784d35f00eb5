#!/usr/bin/env python3
"""The worklog's code changes, shown in the post as diffs made from the code itself.

    python3 scripts/excerpts.py [--into gemm.md]

Each step of the worklog whose code changed has its code kept whole: the
earlier version in a change file of worklog/, the later one in gemm.md or in
the next change file. This script takes the named fragment each step
changed from both places and writes a unified diff of the two between the
markers <!-- excerpt:NAME:begin --> and <!-- excerpt:NAME:end --> of the
post, so the excerpts are never typed by hand and always show the code that
builds. Without --into the diffs are printed. Standard library only.
"""

import argparse
import difflib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))
import tangle  # noqa: E402
import worklog  # noqa: E402

# name: (fragment, where it was before, where it is after). A place is gemm.md or a change file.
EXCERPTS = {
    "step3": ("The main loop", "worklog/one-stage.md", "worklog/loads-then-multiplies.md"),
    "step3-copy": ("Copying 16 bytes", "worklog/one-stage.md", "gemm.md"),
    "step5": ("Applying the epilogue", "worklog/direct-epilogue.md", "gemm.md"),
    "step7": ("Loading a fragment from shared memory", "worklog/compilers-load.md", "gemm.md"),
    "step11": ("The main loop", "worklog/loads-then-multiplies.md", "gemm.md"),
}


def fragment(path, name):
    """The lines of the named fragment in a Markdown file, its continuations joined."""
    problems = []
    pieces = tangle.read_chunks((REPO / path).read_text(encoding="utf-8"), path, problems)
    lines = [line for chunk, _, _, body in pieces if chunk == name for line in body]
    if not lines:
        raise ValueError(f"{path} has no fragment <<{name}>>")
    return lines


def excerpt(name):
    chunk, before, after = EXCERPTS[name]
    diff = difflib.unified_diff(fragment(before, chunk), fragment(after, chunk),
                                f"{before}: <<{chunk}>>", f"{after}: <<{chunk}>>", n=2, lineterm="")
    return "```diff\n" + "\n".join(diff) + "\n```\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--into", help="replace the excerpts between their markers in this file")
    args = parser.parse_args(argv)
    try:
        made = {f"excerpt:{name}": excerpt(name) for name in EXCERPTS}
    except (OSError, ValueError) as error:
        print(f"excerpts.py: error: {getattr(error, 'strerror', None) or error}", file=sys.stderr)
        return 1
    return worklog.fill_markers("excerpts.py", made, args.into, "excerpts")

if __name__ == "__main__":
    sys.exit(main())
