#!/usr/bin/env python3
"""Tangle a literate Markdown file into the source it describes.

The document is written in the order a reader needs; this script puts the
code in the order the compiler needs, the way Knuth's WEB and the pbrt book
do it with named fragments:

- A fenced block tagged `cpp` with no name belongs to the root: the root's
  blocks, in document order, are the program.
- A block may carry a name, `{.cpp chunk="The main loop"}`. It is then not
  part of the root by itself; it appears where a line of another block says
  `<<The main loop>>`, with that line's indentation. A name defined again
  further down continues the first definition.
- Every line of the output is preceded, where needed, by a `#line` directive
  that names its line in the Markdown file, so that compiler errors,
  __FILE__/__LINE__ and debuggers point back into the document.

A *change file* (`--change FILE`, after WEB's change files) redefines named
fragments of the document without touching it: each name it defines replaces
the document's definition of that name (all of its continuations). The
optimisation steps of gemm.md's worklog are change files.

Errors, each with its file and line: an unterminated fence, a fence with no
language or an unknown one (a forgotten or misspelt `cpp` tag would otherwise
drop code without a word), a reference to a name never defined, a name never
used, a fragment that includes itself, and an unnamed block in a change file.

    python3 tangle.py gemm.md -o gemm.cu
    python3 tangle.py gemm.md --no-line                (to stdout, for reading)
    python3 tangle.py gemm.md --change steps/x.md -o x.cu
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
# A line that is nothing but a reference to a fragment.
REFERENCE = re.compile(r"^(\s*)<<(.+?)>>\s*$")
# key="value" or key=value inside pandoc's {...} attributes.
ATTRIBUTE = re.compile(r'([A-Za-z_][\w-]*)=(?:"([^"]*)"|(\S+))')


def parse_info(info):
    """(language, chunk name or None) of a fence's info string.

    Two forms: a bare word (```cpp) and pandoc's attributes
    (```{.cpp chunk="Name"}), where the language is the first class.
    """
    info = info.strip()
    if info.startswith("{"):
        end = info.find("}")
        if end < 0:
            return None, None
        inside = info[1:end]
        attributes = {m[1]: m[2] if m[2] is not None else m[3] for m in ATTRIBUTE.finditer(inside)}
        classes = [w[1:] for w in ATTRIBUTE.sub("", inside).split() if w.startswith(".") and len(w) > 1]
        return (classes[0] if classes else None), attributes.get("chunk")
    words = info.split()
    return (words[0] if words else None), None


def language(info):
    return parse_info(info)[0]


def code_blocks(lines):
    """Yield (info, fence line, code lines, closed) for each fenced block.

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
        yield info, fence_line, body, i < len(lines)
        i += 1


def split_lines(text):
    # Split on \n only, the way the compiler counts lines, and drop the \r of
    # \r\n endings; str.splitlines would also split on form feeds and others.
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_chunks(text, name, problems, change=False):
    """[(chunk name or None for the root, file, fence line, body)] of one document."""
    pieces = []
    for info, fence_line, body, closed in code_blocks(split_lines(text)):
        lang, chunk = parse_info(info)
        if not closed:
            problems.append((name, fence_line, "unterminated code fence: the file ends inside this block"))
        elif lang == TANGLED:
            if chunk is not None and not chunk.strip():
                problems.append((name, fence_line, "empty fragment name"))
            elif change and chunk is None:
                problems.append((name, fence_line, "a block of a change file must name the "
                                 "fragment it replaces: {.cpp chunk=\"...\"}"))
            else:
                pieces.append((chunk.strip() if chunk else None, name, fence_line, body))
        elif lang is None:
            problems.append((name, fence_line, f"cannot classify code block: the fence has no language; {hint()}"))
        elif lang not in SKIPPED:
            problems.append((name, fence_line, f"cannot classify code block: unknown language '{lang}'; {hint()}"))
    return pieces


def definitions(pieces):
    """{name: [(file, fence line, body)]} and the root's pieces, in order."""
    named, root = {}, []
    for chunk, file, line, body in pieces:
        (root if chunk is None else named.setdefault(chunk, [])).append((file, line, body))
    return named, root


def expand(root, named, problems):
    """The root with every reference replaced: [(text, file, line)], and the names used.

    A line of text is None for the blank line that separates two blocks.
    """
    out, used, reported = [], set(), set()

    def walk(pieces, indent, stack):
        for n, (file, fence_line, body) in enumerate(pieces):
            if n:   # one blank line between two blocks of the root, or of one fragment
                out.append((None, None, None))
            for k, line in enumerate(body):
                where = (file, fence_line + 1 + k)
                ref = REFERENCE.match(line)
                if not ref:
                    out.append((indent + line if line else line, *where))
                    continue
                target = ref[2].strip()
                used.add(target)
                if target in stack:
                    if where not in reported:
                        reported.add(where)
                        problems.append((*where, f"fragment <<{target}>> includes itself "
                                         f"({' -> '.join(stack[stack.index(target):] + [target])})"))
                elif target not in named:
                    if where not in reported:
                        reported.add(where)
                        problems.append((*where, f"undefined fragment <<{target}>>"))
                else:
                    walk(named[target], indent + ref[1], stack + [target])

    walk(root, "", [])
    return out, used


def reachable(root, named):
    """The names a root reaches, directly or not (cycles and undefined names ignored)."""
    seen, todo = set(), [root]
    while todo:
        for _, _, body in todo.pop():
            for line in body:
                ref = REFERENCE.match(line)
                if ref and ref[2].strip() in named and ref[2].strip() not in seen:
                    seen.add(ref[2].strip())
                    todo.append(named[ref[2].strip()])
    return seen


def tangle(text, name, line_directives=True, changes=(), only=()):
    """Tangle Markdown `text`, read from the file `name`, with change files [(text, name)].
    With `only` (fragment names), those fragments in that order stand in for the root, and
    fragments they leave out are no error.

    Returns (source, problems), where problems is a list of (file, line, message);
    the source is only meaningful when there are no problems.
    """
    problems = []
    named, root = definitions(read_chunks(text, name, problems))
    if only:
        root = [(name, 0, [f"<<{chunk}>>" for chunk in only])]
    master_reach = reachable(root, named) if not only else set(named)
    unused = [(pieces[0][0], pieces[0][1], chunk) for chunk, pieces in named.items()
              if chunk not in master_reach]
    replaced = {}
    for change_text, change_name in changes:
        for chunk, pieces in definitions(read_chunks(change_text, change_name, problems, True))[0].items():
            named[chunk] = pieces
            replaced[chunk] = pieces
    if not root and not problems:
        problems.append((name, 1, f"no ```{TANGLED} code block of the root (a block with no chunk name): nothing is tangled"))
    expanded, _ = expand(root, named, problems)
    if replaced:
        reach = reachable(root, named)
        unused += [(p[0][0], p[0][1], c) for c, p in replaced.items() if c not in reach]
    for file, line, chunk in unused:
        problems.append((file, line, f"fragment <<{chunk}>> is never used"))

    quoted = lambda f: f.replace("\\", "\\\\").replace('"', '\\"')
    header = f"// Generated from {name} by tangle.py. Do not edit: edit {name} instead.\n"
    lines, expect = [header], None
    for code, file, line in expanded:
        if code is None:
            lines.append("\n")
            expect = (expect[0], expect[1] + 1) if expect else None
            continue
        if line_directives and expect != (file, line):
            lines.append(f'#line {line} "{quoted(file)}"\n')
        lines.append(code + "\n")
        expect = (file, line + 1)
    if len(lines) > 1:
        lines.insert(1, "\n")
    return "".join(lines), sorted(problems, key=lambda p: (p[0] != name, p[0], p[1]))


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


def read_text(path):
    try:
        with open(path, encoding="utf-8-sig", newline="") as file:
            return file.read()
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        print(f"tangle.py: error: cannot read {path}: {reason}", file=sys.stderr)
        return None


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Write the ```cpp code blocks of a Markdown file out as one source file, "
                    "named fragments expanded where they are used.")
    parser.add_argument("markdown", help="the Markdown file to read")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="the file to write (default: standard output); "
                             "left untouched if there is an error")
    parser.add_argument("--change", metavar="FILE", action="append", default=[],
                        help="a Markdown file whose named fragments replace the document's "
                             "fragments of the same names (may be given more than once)")
    parser.add_argument("--only", metavar="NAME", action="append", default=[],
                        help="tangle this named fragment instead of the root (may be given more "
                             "than once: they follow in that order), for a program that needs "
                             "part of the document")
    parser.add_argument("--no-line", action="store_true",
                        help="leave out the #line directives, for reading the output")
    args = parser.parse_args(argv)

    text = read_text(args.markdown)
    changes = [(read_text(path), path) for path in args.change]
    if text is None or any(t is None for t, _ in changes):
        return 1
    source, problems = tangle(text, args.markdown, not args.no_line, changes, args.only)
    for file, line, message in problems:
        print(f"{file}:{line}: error: {message}", file=sys.stderr)
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
