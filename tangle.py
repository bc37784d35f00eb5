#!/usr/bin/env python3
"""Tangle a literate Markdown file into the source it describes.

Every fenced code block tagged `cpp` is written out, in document order, with
a `#line` directive in front of it, so that compiler errors, __FILE__/__LINE__
and debuggers point back into the Markdown file rather than the generated one.

Every other fence must carry a language from a known list of blocks that are
shown but not compiled (shell sessions, output, PTX, ...). A fence with no
language or an unknown one is an error: a forgotten or misspelt `cpp` tag
would otherwise drop code from the program without a word.

    python3 tangle.py gemm.md -o gemm.cu
    python3 tangle.py gemm.md --no-line     (to stdout, for reading)
"""

import argparse
import os
import re
import sys
import tempfile

# The one language that is tangled. `cuda`, `c++` and the like are errors on
# purpose, so that there is exactly one spelling to search for.
TANGLED = "cpp"

# Blocks that appear in the post but are not part of the program.
SKIPPED = {
    "sh", "bash", "console", "shell", "text", "txt", "python", "make",
    "makefile", "csv", "json", "yaml", "diff", "cuda-ptx", "ptx", "math",
    "output", "html", "markdown",
}

# CommonMark: up to three spaces, then three or more backticks or tildes.
# Four spaces would make an indented code block instead, so they do not count.
OPENING = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
CLOSING = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")


def language(info):
    """The language named by a fence's info string, or None if it names none.

    Two forms: a bare word (```cpp) and pandoc's attributes (```{.cpp .numberLines}),
    where the language is the first class.
    """
    info = info.strip()
    if info.startswith("{"):
        end = info.find("}")
        if end < 0:
            return None
        for attribute in info[1:end].split():
            if attribute.startswith(".") and len(attribute) > 1:
                return attribute[1:]
        return None
    words = info.split()
    return words[0] if words else None


def code_blocks(lines):
    """Yield (language, fence line, code lines, closed) for each fenced block.

    Line numbers are 1-based. `closed` is False for a block that runs off the
    end of the file, which CommonMark allows but which here is always a mistake.
    """
    i = 0
    while i < len(lines):
        opening = OPENING.match(lines[i])
        # A backtick fence's info string may not contain a backtick: such a
        # line is inline code in a paragraph, not a fence.
        if not opening or (opening[2][0] == "`" and "`" in opening[3]):
            i += 1
            continue
        indent, fence, info = len(opening[1]), opening[2], opening[3]
        fence_line = i + 1
        body = []
        i += 1
        while i < len(lines):
            closing = CLOSING.match(lines[i])
            if closing and closing[1][0] == fence[0] and len(closing[1]) >= len(fence):
                break
            # CommonMark removes as much indentation as the opening fence had.
            line = lines[i]
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))):])
            i += 1
        yield language(info), fence_line, body, i < len(lines)
        i += 1


def tangle(text, name, line_directives=True):
    """Tangle Markdown `text`, read from the file `name`.

    Returns (source, problems), where problems is a list of (line, message);
    the source is only meaningful when there are no problems.
    """
    # Split on \n only, the way the compiler counts lines, and drop the \r of
    # \r\n endings; str.splitlines would also split on form feeds and others.
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]

    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    chunks = [f"// Generated from {name} by tangle.py. Do not edit: edit {name} instead.\n"]
    problems = []
    for lang, fence_line, body, closed in code_blocks(lines):
        if not closed:
            problems.append((fence_line, "unterminated code fence: the file ends inside this block"))
        elif lang == TANGLED:
            # The block's first code line is the one after the fence.
            directive = [f'#line {fence_line + 1} "{quoted}"'] if line_directives else []
            chunks.append("".join(line + "\n" for line in directive + body))
        elif lang is None:
            problems.append((fence_line, f"cannot classify code block: the fence has no language; {hint()}"))
        elif lang not in SKIPPED:
            problems.append((fence_line, f"cannot classify code block: unknown language '{lang}'; {hint()}"))
    if len(chunks) == 1 and not problems:
        problems.append((1, f"no ```{TANGLED} code block found"))
    return "\n".join(chunks), problems


def hint():
    return f"tag it {TANGLED} to tangle it, or one of {', '.join(sorted(SKIPPED))} to leave it out"


def write_atomically(path, data):
    """Replace `path` by `data` all at once, so a failure never leaves a partial file."""
    directory = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=".tangle-", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        # mkstemp makes the file private (0600); give it the usual permissions.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Write the ```cpp code blocks of a Markdown file out as one source file.")
    parser.add_argument("markdown", help="the Markdown file to read")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="the file to write (default: standard output); "
                             "left untouched if there is an error")
    parser.add_argument("--no-line", action="store_true",
                        help="leave out the #line directives, for reading the output")
    args = parser.parse_args(argv)

    try:
        with open(args.markdown, encoding="utf-8-sig", newline="") as file:
            text = file.read()
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        print(f"tangle.py: error: cannot read {args.markdown}: {reason}", file=sys.stderr)
        return 1

    source, problems = tangle(text, args.markdown, line_directives=not args.no_line)
    for line, message in problems:
        print(f"{args.markdown}:{line}: error: {message}", file=sys.stderr)
    if problems:
        return 1

    data = source.encode("utf-8")
    if args.output is None:
        sys.stdout.buffer.write(data)
        return 0
    try:
        write_atomically(args.output, data)
    except OSError as error:
        print(f"tangle.py: error: cannot write {args.output}: {error.strerror or error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
