"""Tests for tangle.py, which turns gemm.md into gemm.cu.

Each test writes a small Markdown document into a temporary folder and runs
tangle.py on it as the Makefile does, as a separate process.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TANGLE = REPO / "tangle.py"
LINE_DIRECTIVE = re.compile(r'^#line (\d+) "(.*)"$')


def run_tangle(folder, *args):
    """Run tangle.py in `folder` with `args`; return the CompletedProcess."""
    return subprocess.run([sys.executable, str(TANGLE), *args], cwd=folder,
                          capture_output=True, text=True)


def tangle_text(folder, markdown, *options, name="doc.md"):
    """Write `markdown` to `name` in `folder`, tangle it to stdout and return the output."""
    (folder / name).write_text(markdown)
    result = run_tangle(folder, name, *options)
    assert result.returncode == 0, result.stderr
    return result.stdout


def code_lines(output):
    """The lines of tangled output, without the header comment, #line directives and blanks."""
    lines = output.splitlines()[1:]
    return [line for line in lines if line and not LINE_DIRECTIVE.match(line)]


# A document with one block of every kind the tangler has to tell apart.
MIXED = """\
# A literate program

Some prose, then the first block.

```cpp
int first = 1;
```

A shell session that is shown but not compiled:

```sh
make && ./gemm
```

<details>
<summary>The boring part</summary>

```cpp
int second = 2;
```

</details>

```text
some output, not code
int not_code = 0;
```

~~~cpp
int third = 3;
~~~

````cpp
int fourth = 4;
// a fence of three backticks inside a fence of four is only code:
```
int still_fourth = 4;
````

```{.cpp}
int fifth = 5;
```

``` {.cpp .numberLines}
int sixth = 6;
```

```{.cpp #setup}
int seventh = 7;
```

```python
print("not code either")
```

The end.
"""

EXPECTED = [
    "int first = 1;",
    "int second = 2;",
    "int third = 3;",
    "int fourth = 4;",
    "// a fence of three backticks inside a fence of four is only code:",
    "```",
    "int still_fourth = 4;",
    "int fifth = 5;",
    "int sixth = 6;",
    "int seventh = 7;",
]


def test_cpp_blocks_in_document_order_and_others_skipped(tmp_path):
    output = tangle_text(tmp_path, MIXED)
    assert code_lines(output) == EXPECTED


def test_header_says_generated_and_blocks_separated_by_one_blank_line(tmp_path):
    lines = tangle_text(tmp_path, MIXED, "--no-line").split("\n")
    assert lines[0].startswith("//")
    assert "doc.md" in lines[0] and "tangle.py" in lines[0]
    assert "Do not edit" in lines[0]
    assert lines[1] == ""
    assert lines[2:5] == ["int first = 1;", "", "int second = 2;"]
    assert lines[-1] == ""  # the output ends with a newline
    # One blank after the header and six between seven blocks, plus the empty
    # string after the final newline; none inside the four-line block.
    assert lines.count("") == 1 + 6 + 1
    fourth = lines.index("int fourth = 4;")
    assert lines[fourth:fourth + 5] == EXPECTED[3:7] + [""]


def test_output_file_matches_stdout(tmp_path):
    (tmp_path / "doc.md").write_text(MIXED)
    assert run_tangle(tmp_path, "doc.md", "-o", "doc.cu").returncode == 0
    assert (tmp_path / "doc.cu").read_text() == tangle_text(tmp_path, MIXED)


def test_line_directives_name_the_first_code_line(tmp_path):
    markdown_lines = MIXED.split("\n")
    output = tangle_text(tmp_path, MIXED).split("\n")
    directives = [(i, LINE_DIRECTIVE.match(line)) for i, line in enumerate(output)]
    directives = [(i, match) for i, match in directives if match]
    assert len(directives) == 7
    for i, match in directives:
        number, name = int(match[1]), match[2]
        assert name == "doc.md"
        # The line after the directive is line `number` of the Markdown file.
        assert output[i + 1] == markdown_lines[number - 1]
        # ... and the line before that in the Markdown file is the opening fence.
        assert re.match(r"^(```|~~~)", markdown_lines[number - 2])
    # Every code line of a block keeps its place: line k after the directive is
    # Markdown line number + k, up to the blank line that separates blocks.
    for i, match in directives:
        k = 0
        while output[i + 1 + k] != "":
            assert output[i + 1 + k] == markdown_lines[int(match[1]) - 1 + k]
            k += 1


def test_line_directive_names_the_path_as_given_and_escapes_it(tmp_path):
    folder = tmp_path / 'sub dir'
    folder.mkdir()
    (folder / 'a"b\\c.md').write_text("```cpp\nint x;\n```\n")
    result = run_tangle(tmp_path, 'sub dir/a"b\\c.md')
    assert result.returncode == 0, result.stderr
    assert '#line 2 "sub dir/a\\"b\\\\c.md"' in result.stdout.split("\n")


def test_no_line_emits_no_directives(tmp_path):
    output = tangle_text(tmp_path, MIXED, "--no-line")
    assert "#line" not in output
    assert code_lines(output) == EXPECTED


def test_indented_fence_removes_its_indentation(tmp_path):
    output = tangle_text(tmp_path, "  ```cpp\n  int a;\n    int b;\n int c;\n  ```\n", "--no-line")
    assert code_lines(output) == ["int a;", "  int b;", "int c;"]


def test_four_space_indent_is_not_a_fence(tmp_path):
    # An indented code block showing a fence is not a fence itself.
    markdown = "    ```python\n\n```cpp\nint a;\n```\n"
    assert code_lines(tangle_text(tmp_path, markdown)) == ["int a;"]


def test_closing_fence_rules(tmp_path):
    # Inside a backtick fence, a tilde line, a shorter fence and a fence with
    # text after it are all code; a longer fence with trailing spaces closes it.
    markdown = "````cpp\n~~~~\n```\n```` x\nint a;\n`````  \nint outside;\n"
    output = tangle_text(tmp_path, markdown, "--no-line")
    assert code_lines(output) == ["~~~~", "```", "```` x", "int a;"]


def test_inline_code_at_start_of_line_is_not_a_fence(tmp_path):
    markdown = "```a``` is inline code in a paragraph.\n\n```cpp\nint a;\n```\n"
    assert code_lines(tangle_text(tmp_path, markdown)) == ["int a;"]


def test_every_skipped_language_is_skipped(tmp_path):
    languages = ["sh", "bash", "console", "shell", "text", "txt", "python", "make", "makefile",
                 "csv", "json", "diff", "cuda-ptx", "ptx", "math", "output"]
    markdown = "".join(f"```{lang}\n{lang} stuff\n```\n\n" for lang in languages)
    markdown += "```{.python}\npandoc form\n```\n\n```cpp\nint a;\n```\n"
    assert code_lines(tangle_text(tmp_path, markdown)) == ["int a;"]


# ---- the real check: the compiler points into the Markdown file ----

PROGRAM = """\
# A tiny program

The kernel:

```cpp
__global__ void scale(float *x, float factor) {
    x[threadIdx.x] *= factor;
}
```

Some prose between the blocks,
over a few lines.

```cpp
int main() {
    float *x = nullptr;
    scale<<<1, 32>>>(x, 2.0f);
    return undeclared_identifier;
}
```
"""


def test_compiler_errors_point_into_the_markdown(tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    (tmp_path / "doc.md").write_text(PROGRAM)
    planted = PROGRAM.split("\n").index("    return undeclared_identifier;") + 1
    assert planted == 18
    result = run_tangle(tmp_path, "doc.md", "-o", "doc.cu")
    assert result.returncode == 0, result.stderr

    compiled = subprocess.run([nvcc, "-std=c++17", "-arch=sm_90", "-c", "doc.cu", "-o", "doc.o"],
                              cwd=tmp_path, capture_output=True, text=True)
    assert compiled.returncode != 0
    messages = compiled.stdout + compiled.stderr
    assert "undeclared_identifier" in messages
    # nvcc's front end writes `doc.md(18): error: ...`; a host compiler would
    # write `doc.md:18:...`. Accept either, but it must be exactly this line.
    places = re.findall(r'(\S*doc\.(?:md|cu))[(:](\d+)', messages)
    assert places, messages
    assert all(name.endswith("doc.md") for name, _ in places), messages
    assert {int(line) for _, line in places} == {planted}, messages


def test_compiles_cleanly_without_the_planted_error(tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    (tmp_path / "doc.md").write_text(PROGRAM.replace("undeclared_identifier", "0"))
    assert run_tangle(tmp_path, "doc.md", "-o", "doc.cu").returncode == 0
    compiled = subprocess.run([nvcc, "-std=c++17", "-arch=sm_90", "-c", "doc.cu", "-o", "doc.o"],
                              cwd=tmp_path, capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    assert (tmp_path / "doc.o").stat().st_size > 0


# ---- errors ----

def expect_error(folder, markdown, line, words):
    """Tangle `markdown` into doc.cu; check it fails at `line` and writes nothing."""
    (folder / "doc.md").write_text(markdown)
    result = run_tangle(folder, "doc.md", "-o", "doc.cu")
    assert result.returncode == 1
    assert result.stdout == ""
    assert f"doc.md:{line}: error:" in result.stderr
    assert words in result.stderr
    assert not (folder / "doc.cu").exists()
    return result


def test_unterminated_fence(tmp_path):
    markdown = "```cpp\nint a;\n```\n\ntext\n\n```cpp\nint b;\n``\n"
    expect_error(tmp_path, markdown, 7, "unterminated")


def test_unterminated_fence_closed_by_the_wrong_character(tmp_path):
    expect_error(tmp_path, "```cpp\nint a;\n```\n\n~~~sh\nls\n```\n", 5, "unterminated")


def test_unterminated_fence_closed_too_short(tmp_path):
    expect_error(tmp_path, "text\n````cpp\nint a;\n```\n", 2, "unterminated")


def test_fence_without_language(tmp_path):
    markdown = "```cpp\nint a;\n```\n\n```\nforgot the tag\n```\n"
    expect_error(tmp_path, markdown, 5, "cannot classify")


def test_pandoc_fence_without_class(tmp_path):
    markdown = "```cpp\nint a;\n```\n\n```{#id}\nno class\n```\n"
    expect_error(tmp_path, markdown, 5, "cannot classify")


@pytest.mark.parametrize("tag", ["cuda", "c++", "CPP", "{.cuda}"])
def test_fence_with_unknown_language(tmp_path, tag):
    markdown = f"```cpp\nint a;\n```\n\nprose\n\n```{tag}\nint b;\n```\n"
    result = expect_error(tmp_path, markdown, 7, "cannot classify")
    assert tag.strip("{.}") in result.stderr


def test_every_problem_is_reported(tmp_path):
    markdown = "```\na\n```\n\n```cpp\nint a;\n```\n\n```rust\nb\n```\n\n```cpp\nint b;\n"
    result = expect_error(tmp_path, markdown, 1, "cannot classify")
    assert "doc.md:9: error: cannot classify" in result.stderr
    assert "doc.md:13: error: unterminated" in result.stderr


def test_no_cpp_block(tmp_path):
    expect_error(tmp_path, "# Nothing\n\n```sh\nls\n```\n", 1, "no ```cpp code block")


def test_failure_leaves_an_existing_output_untouched(tmp_path):
    (tmp_path / "doc.cu").write_text("old contents\n")
    (tmp_path / "doc.md").write_text("```cpp\nint a;\n```\n\n```cuda\nint b;\n```\n")
    result = run_tangle(tmp_path, "doc.md", "-o", "doc.cu")
    assert result.returncode == 1
    assert (tmp_path / "doc.cu").read_text() == "old contents\n"
    # ... and leaves no temporary file behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.cu", "doc.md"]


def test_success_replaces_output_and_leaves_no_temporary_file(tmp_path):
    (tmp_path / "doc.cu").write_text("old contents\n")
    (tmp_path / "doc.md").write_text("```cpp\nint a;\n```\n")
    assert run_tangle(tmp_path, "doc.md", "-o", "doc.cu").returncode == 0
    assert code_lines((tmp_path / "doc.cu").read_text()) == ["int a;"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.cu", "doc.md"]


def test_missing_input_file(tmp_path):
    result = run_tangle(tmp_path, "absent.md", "-o", "doc.cu")
    assert result.returncode == 1
    assert "absent.md" in result.stderr
    assert "error" in result.stderr
    assert not (tmp_path / "doc.cu").exists()


def test_help(tmp_path):
    result = run_tangle(tmp_path, "--help")
    assert result.returncode == 0
    assert "--no-line" in result.stdout and "-o" in result.stdout


# ---- determinism and line endings ----

def test_two_runs_give_identical_bytes(tmp_path):
    (tmp_path / "doc.md").write_text(MIXED)
    assert run_tangle(tmp_path, "doc.md", "-o", "one.cu").returncode == 0
    assert run_tangle(tmp_path, "doc.md", "-o", "two.cu").returncode == 0
    assert (tmp_path / "one.cu").read_bytes() == (tmp_path / "two.cu").read_bytes()


def test_crlf_input_gives_the_same_output_as_lf(tmp_path):
    (tmp_path / "doc.md").write_bytes(MIXED.encode())
    (tmp_path / "crlf").mkdir()
    (tmp_path / "crlf" / "doc.md").write_bytes(MIXED.replace("\n", "\r\n").encode())
    assert run_tangle(tmp_path, "doc.md", "-o", "doc.cu").returncode == 0
    assert run_tangle(tmp_path / "crlf", "doc.md", "-o", "doc.cu").returncode == 0
    lf = (tmp_path / "doc.cu").read_bytes()
    assert b"\r" not in lf
    assert (tmp_path / "crlf" / "doc.cu").read_bytes() == lf


def test_input_without_final_newline(tmp_path):
    output = tangle_text(tmp_path, "```cpp\nint a;\n```", "--no-line")
    assert output.endswith("int a;\n")


# ---------------------------------------------------------------- named fragments

NAMED = """\
# Reader's order

The kernel first, though the compiler needs the settings before it:

```cpp
<<Settings>>
int kernel(void)
{
    <<The loop>>
    return total;
}
```

The loop, explained:

```{.cpp chunk="The loop"}
int total = 0;
for (int i = 0; i < N; i++)
    <<The body>>
```

```{.cpp chunk="The body"}
total += i;
```

And, at last, the settings:

```{.cpp chunk="Settings"}
#define N 4
```

More settings, further down, continue the first definition:

```{.cpp chunk="Settings"}
#define M 5
```
"""


def source_map(output):
    """[(text, file, line)] of each output line, as a compiler reads the #line directives."""
    mapped, file, line = [], None, None
    for text in output.split("\n")[:-1]:
        match = LINE_DIRECTIVE.match(text)
        if match:
            line, file = int(match[1]), match[2]
            continue
        mapped.append((text, file, line))
        line = line + 1 if line is not None else None
    return mapped


def test_named_fragments_are_assembled_in_the_compilers_order(tmp_path):
    output = tangle_text(tmp_path, NAMED, "--no-line")
    assert code_lines(output) == [
        "#define N 4", "#define M 5",
        "int kernel(void)", "{",
        "    int total = 0;", "    for (int i = 0; i < N; i++)", "        total += i;",
        "    return total;", "}"]


def test_every_line_carries_its_line_in_the_markdown(tmp_path):
    markdown = NAMED.split("\n")
    output = tangle_text(tmp_path, NAMED)
    mapped = [m for m in source_map(output) if m[0].strip()]
    assert mapped and all(f == "doc.md" for _, f, _ in mapped[1:])
    for text, _, line in mapped[1:]:   # the first is the header comment
        # Each line is its Markdown line, with the indentation of the reference added.
        assert text.strip() == markdown[line - 1].strip(), (text, line)


def test_a_named_fragment_compiles_with_errors_pointing_into_the_markdown(tmp_path):
    doc = NAMED.replace("total += i;", "total += undefined_name;") + \
        "\n```cpp\nint main(void) { return kernel(); }\n```\n"
    (tmp_path / "doc.md").write_text(doc)
    assert run_tangle(tmp_path, "doc.md", "-o", "doc.cpp").returncode == 0
    result = subprocess.run(["g++", "-c", "doc.cpp", "-o", "doc.o"], cwd=tmp_path,
                            capture_output=True, text=True)
    wrong = doc.split("\n").index("total += undefined_name;") + 1
    assert result.returncode != 0
    assert f"doc.md:{wrong}:" in result.stderr


FRAGMENT_ERRORS = {
    "undefined": ("```cpp\nint a;\n<<Missing piece>>\n```\n", 3, "undefined fragment <<Missing piece>>"),
    "unused": ("```cpp\nint a;\n```\n\n```{.cpp chunk=\"Orphan\"}\nint b;\n```\n", 5,
               "fragment <<Orphan>> is never used"),
    "recursive": ("```cpp\n<<A>>\n```\n\n```{.cpp chunk=\"A\"}\n<<B>>\n```\n\n"
                  "```{.cpp chunk=\"B\"}\nint b;\n<<A>>\n```\n", 11, "includes itself (A -> B -> A)"),
    "includes itself": ("```cpp\n<<A>>\n```\n\n```{.cpp chunk=\"A\"}\nint a;\n<<A>>\n```\n", 7,
                        "includes itself (A -> A)"),
    "unterminated": ("```cpp\n<<A>>\n```\n\n```{.cpp chunk=\"A\"}\nint a;\n", 5, "unterminated code fence"),
    "empty name": ("```cpp\nint a;\n```\n\n```{.cpp chunk=\"  \"}\nint b;\n```\n", 5, "empty fragment name"),
}


@pytest.mark.parametrize("case", FRAGMENT_ERRORS)
def test_fragment_errors_name_their_line(tmp_path, case):
    doc, line, words = FRAGMENT_ERRORS[case]
    expect_error(tmp_path, doc, line, words)


def test_a_fragment_used_twice_is_expanded_twice(tmp_path):
    doc = "```cpp\n<<X>>\n<<X>>\n```\n\n```{.cpp chunk=X}\nint x;\n```\n"
    assert code_lines(tangle_text(tmp_path, doc, "--no-line")) == ["int x;", "int x;"]


def test_change_file_replaces_a_fragment_and_its_continuations(tmp_path):
    (tmp_path / "step.md").write_text(
        "# An earlier step\n\n```{.cpp chunk=\"The loop\"}\nint total = N * M;\n```\n")
    (tmp_path / "doc.md").write_text(NAMED)
    result = run_tangle(tmp_path, "doc.md", "--change", "step.md")
    assert result.returncode == 0, result.stderr
    assert code_lines(result.stdout) == [
        "#define N 4", "#define M 5", "int kernel(void)", "{",
        "    int total = N * M;", "    return total;", "}"]
    # The replaced line points into the change file, the rest into the document.
    mapped = {text.strip(): (f, n) for text, f, n in source_map(result.stdout)}
    assert mapped["int total = N * M;"] == ("step.md", 4)
    assert mapped["return total;"][0] == "doc.md"
    # <<The body>>, now unused, is not an error: the change file left it behind.


def test_change_file_errors(tmp_path):
    (tmp_path / "doc.md").write_text(NAMED)
    (tmp_path / "bad.md").write_text("```cpp\nint unnamed;\n```\n")
    result = run_tangle(tmp_path, "doc.md", "--change", "bad.md")
    assert result.returncode == 1 and "bad.md:1: error: a block of a change file must name" in result.stderr
    (tmp_path / "typo.md").write_text("```{.cpp chunk=\"The lop\"}\nint x;\n```\n")
    result = run_tangle(tmp_path, "doc.md", "--change", "typo.md")
    assert result.returncode == 1 and "typo.md:1: error: fragment <<The lop>> is never used" in result.stderr
    result = run_tangle(tmp_path, "doc.md", "--change", "missing.md")
    assert result.returncode == 1 and "cannot read missing.md" in result.stderr


def test_only_tangles_the_named_fragments_in_the_order_given(tmp_path):
    output = tangle_text(tmp_path, NAMED, "--no-line", "--only", "Settings", "--only", "The body")
    assert code_lines(output) == ["#define N 4", "#define M 5", "total += i;"]
    # The fragments left out are no error; a name that is not there is.
    (tmp_path / "doc.md").write_text(NAMED)
    result = run_tangle(tmp_path, "doc.md", "--only", "The bdy")
    assert result.returncode == 1 and "undefined fragment <<The bdy>>" in result.stderr


def test_a_shift_operator_is_not_a_reference(tmp_path):
    doc = "```cpp\nint a = 1 << 3;\nint b = a >> 1;\n```\n"
    assert code_lines(tangle_text(tmp_path, doc, "--no-line")) == ["int a = 1 << 3;", "int b = a >> 1;"]
