"""The post as a reader gets it: gemm.md rendered by post/render.sh.

Each check runs on the real gemm.md and on tests/fixtures/sample.md, a small
document that uses every construct the post uses; a failure on the sample
points at the rendering machinery, a failure on gemm.md alone at the post.

Needs pandoc (skipped, with a reason, without it; .ci/run installs Debian's)
and, for the browser checks, Chromium.
"""

import base64
import binascii
import difflib
import html
import importlib.util
import pathlib
import re
import shutil
import subprocess
import sys
import urllib.parse
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
RENDER = ROOT / "post" / "render.sh"
BROWSER_CHECK = ROOT / "post" / "browser_check.py"
FIGURES = ROOT / "post" / "figures"
FIGURE_NAMES = sorted(p.stem for p in (ROOT / "post" / "figures").glob("*.svg"))
DOCUMENTS = {
    "gemm.md": ROOT / "gemm.md",
    "sample.md": ROOT / "tests" / "fixtures" / "sample.md",
}


def _load_browser_check():
    spec = importlib.util.spec_from_file_location("browser_check", BROWSER_CHECK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


browser_check = _load_browser_check()
NO_PANDOC = "pandoc is not installed (Debian: apt-get install pandoc; .ci/run does this)"
NO_BROWSER = ("no Chromium found (tried " + ", ".join(browser_check.BROWSERS) +
              "; Debian: apt-get install chromium; .ci/run does this)")


def render(md, out, cwd=ROOT):
    """Run render.sh as the Makefile does; the CompletedProcess."""
    return subprocess.run(["sh", str(RENDER), str(md), str(out)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


class Rendered:
    def __init__(self, name, md, out, proc):
        self.name = name
        self.md = md
        self.md_text = md.read_text(encoding="utf-8")
        self.out = out
        self.proc = proc
        self.html = out.read_text(encoding="utf-8") if out.is_file() else ""


@pytest.fixture(scope="module", params=sorted(DOCUMENTS), ids=sorted(DOCUMENTS))
def rendered(request, tmp_path_factory):
    name = request.param
    md = DOCUMENTS[name]
    if shutil.which("pandoc") is None:
        pytest.skip(NO_PANDOC)
    if not md.is_file():
        pytest.fail(f"{md.relative_to(ROOT)} does not exist: there is no post to render")
    out = tmp_path_factory.mktemp("post") / (md.stem + ".html")
    result = Rendered(name, md, out, render(md.relative_to(ROOT), out))
    if result.proc.returncode != 0 or not result.html:
        pytest.fail(f"render.sh {name} failed (exit status {result.proc.returncode}):\n"
                    f"{result.proc.stderr}")
    return result


# ---- reading the Markdown and the HTML ----

FENCE_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>.*)$")


def is_cpp(info):
    """Does a fence's info string (`cpp`, `{.cpp .numberLines}`, ...) make it C++?"""
    info = info.strip()
    if info.startswith("{"):
        return "cpp" in re.findall(r"(?:^|\s|\{)\.([^\s.{}]+)", info)
    return info.split(maxsplit=1)[:1] == ["cpp"]


def fenced_blocks(md_text):
    """(line number, info string, text) of every top-level fenced code block."""
    lines = md_text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m or (m["fence"][0] == "`" and "`" in m["info"]):
            i += 1
            continue
        fence, indent, start = m["fence"], len(m["indent"]), i + 1
        closing = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) +
                             r",}[ \t]*$")
        body = []
        i += 1
        while i < len(lines) and not closing.match(lines[i]):
            line = lines[i]
            strip = len(line) - len(line.lstrip(" "))
            body.append(line[min(strip, indent):])
            i += 1
        i += 1                       # the closing fence (or the end of the file)
        blocks.append((start, m["info"].strip(), "\n".join(body)))
    return blocks


def cpp_blocks(md_text):
    return [(line, text) for line, info, text in fenced_blocks(md_text) if is_cpp(info)]


def normalise(code):
    """Line ends only: CRLF and CR to LF, trailing blanks and blank edge lines dropped."""
    lines = [line.rstrip() for line in code.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def pre_texts(page):
    """The text of every <pre> in the page, tags stripped and entities unescaped."""
    return [html.unescape(re.sub(r"<[^>]*>", "", body))
            for body in re.findall(r"<pre\b[^>]*>(.*?)</pre>", page, flags=re.S | re.I)]


class Elements(HTMLParser):
    """Every start tag with its attributes, <style> bodies, and prose text."""

    SKIP_TEXT = {"pre", "code", "math", "script", "style", "svg", "title"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []           # (tag, {attr: value})
        self.styles = []         # text of <style> elements
        self.prose = []          # text outside code, math, scripts and styles
        self._open = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: (v or "") for k, v in attrs}))
        if tag not in browser_check.VOID:
            self._open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, {k: (v or "") for k, v in attrs}))

    def handle_endtag(self, tag):
        if tag in self._open:
            while self._open.pop() != tag:
                pass

    def handle_data(self, data):
        if self._open and self._open[-1] == "style":
            self.styles.append(data)
        elif not self.SKIP_TEXT.intersection(self._open):
            self.prose.append(data)


def elements(page):
    parser = Elements()
    parser.feed(page)
    parser.close()
    return parser


# ---- what a page loads ----

# attributes through which an element makes the page fetch something
LOADING_ATTRS = {
    "img": ("src", "srcset"), "source": ("src", "srcset"), "script": ("src",),
    "iframe": ("src",), "frame": ("src",), "embed": ("src",), "object": ("data",),
    "video": ("src", "poster"), "audio": ("src",), "track": ("src",),
    "input": ("src",), "link": ("href",), "base": ("href",),
    # inside inline SVG
    "image": ("href", "xlink:href"), "use": ("href", "xlink:href"),
    "feimage": ("href", "xlink:href"),
}
CSS_URL = re.compile(r"""url\(\s*(['"]?)(.*?)\1\s*\)""", re.I)
CSS_IMPORT = re.compile(r"""@import\s+(?:url\(\s*)?['"]?([^'")\s;]+)""", re.I)
SVG_REF = re.compile(r"""\b(?:xlink:)?href\s*=\s*(['"])(.*?)\1""", re.I)


def is_remote(url):
    url = url.strip().lower()
    return url.startswith(("http:", "https:", "//", "ftp:", "ws:", "wss:"))


def is_embedded(url):
    url = url.strip().lower()
    return url.startswith(("data:", "#")) or url == ""


def decode_data_uri(uri):
    """(media type, text) of a data: URI, or None."""
    head, sep, payload = uri.partition(",")
    if not sep or not head.lower().startswith("data:"):
        return None
    media = head[5:].split(";")[0].lower()
    try:
        if head.lower().endswith(";base64"):
            raw = base64.b64decode(payload)
        else:
            raw = urllib.parse.unquote_to_bytes(payload)
        return media, raw.decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None


def css_references(css):
    return [m.group(2) for m in CSS_URL.finditer(css)] + CSS_IMPORT.findall(css)


def loaded_resources(page):
    """(where, url) of everything the page would load, data: URIs looked into."""
    found = []

    def from_data(where, uri, depth=0):
        decoded = decode_data_uri(uri)
        if decoded is None or depth > 3:
            return
        media, text = decoded
        if media == "text/css":
            refs = css_references(text)
        elif media == "image/svg+xml":
            refs = ([m.group(2) for m in SVG_REF.finditer(text)] + css_references(text))
        else:
            return
        for ref in refs:
            found.append((f"{where} -> inside {media}", ref))
            from_data(f"{where} -> inside {media}", ref, depth + 1)

    parsed = elements(page)
    for tag, attrs in parsed.tags:
        names = LOADING_ATTRS.get(tag, ())
        if tag == "meta" and attrs.get("http-equiv", "").lower() == "refresh":
            target = attrs.get("content", "").partition("=")[2]
            if target:
                found.append(("<meta refresh>", target))
        for name in names:
            if name not in attrs:
                continue
            values = attrs[name]
            urls = ([part.strip().split()[0] for part in values.split(",") if part.strip()]
                    if name == "srcset" and not values.startswith("data:") else [values])
            for url in urls:
                found.append((f"<{tag} {name}>", url))
                from_data(f"<{tag} {name}>", url)
        if "style" in attrs:
            for url in css_references(attrs["style"]):
                found.append((f"<{tag} style>", url))
                from_data(f"<{tag} style>", url)
    for css in parsed.styles:
        for url in css_references(css):
            found.append(("<style>", url))
            from_data("<style>", url)
    return found


# ---- the checks on each rendered document ----

def test_render_is_clean(rendered):
    """render.sh exits 0 and pandoc printed nothing: no warnings at all."""
    proc = rendered.proc
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", f"pandoc printed on stderr:\n{proc.stderr}"
    assert proc.stdout == ""


def test_every_cpp_block_is_in_the_page(rendered):
    """Each fenced cpp block of the Markdown shows up, verbatim and in order, in a <pre>."""
    blocks = cpp_blocks(rendered.md_text)
    assert blocks, f"{rendered.name} has no fenced cpp blocks"
    pres = [normalise(t) for t in pre_texts(rendered.html)]
    at = 0
    for n, (line, code) in enumerate(blocks, 1):
        # A reference to a fragment is shown as its name in angle brackets, a link.
        want = normalise(re.sub(r"^([ \t]*)<<(.+?)>>[ \t]*$", r"\1⟨\2⟩", code, flags=re.M))
        try:
            at = pres.index(want, at) + 1
            continue
        except ValueError:
            pass
        nearest = max(pres, key=lambda p: difflib.SequenceMatcher(None, p, want).ratio(),
                      default="")
        diff = "\n".join(difflib.unified_diff(want.splitlines(), nearest.splitlines(),
                                              "markdown", "html", lineterm="", n=1))
        pytest.fail(f"cpp block {n} of {len(blocks)} ({rendered.name} line {line}) is not "
                    f"in the page in order; against the nearest <pre>:\n{diff[:3000]}")


def test_no_remote_resources(rendered):
    """Nothing the page loads (scripts, styles, images, frames, CSS url()/@import) is remote."""
    remote = [(where, url) for where, url in loaded_resources(rendered.html) if is_remote(url)]
    assert not remote, f"remote resources: {remote[:10]}"


def test_everything_is_embedded(rendered):
    """Every resource is a data: URI or a #fragment: the page stands alone."""
    outside = [(where, url[:100]) for where, url in loaded_resources(rendered.html)
               if not is_embedded(url)]
    assert not outside, f"resources not embedded: {outside[:10]}"


def test_math_is_mathml(rendered):
    page = rendered.html
    assert "<math" in page, "no MathML in the page"
    parsed = elements(page)
    prose = " ".join(parsed.prose)
    raw_tex = re.findall(r"\$\$.+?\$\$|\$(?=\S)[^$\n]*?(?<=\S)\$(?!\d)", prose, flags=re.S)
    assert not raw_tex, f"TeX left as text: {raw_tex[:5]}"
    # pandoc falls back to <span class="math"> with the TeX in it if MathML fails
    spans = re.findall(r'<span class="math[^"]*">(?!\s*<math)(.{0,80})', page)
    assert not spans, f"math not converted to MathML: {spans[:5]}"


def test_internal_links_resolve(rendered):
    parsed = elements(rendered.html)
    ids = set()
    for _, attrs in parsed.tags:
        if attrs.get("id"):
            ids.add(attrs["id"])
    targets = {attrs["href"] for _, attrs in parsed.tags
               if attrs.get("href", "").startswith("#") and len(attrs["href"]) > 1}
    missing = sorted(t for t in targets
                     if t[1:] not in ids and urllib.parse.unquote(t[1:]) not in ids)
    assert not missing, f"links to ids that do not exist: {missing[:10]}"


def test_figures_referenced_exist(rendered):
    """Every image the Markdown names is a file (render.sh would fail otherwise, but say which)."""
    refs = re.findall(r"!\[[^\]]*\]\(\s*([^)\s]+)", rendered.md_text)
    missing = [r for r in refs if not is_remote(r) and not (ROOT / r).is_file()
               and not (rendered.md.parent / r).is_file()]
    assert not missing, f"images that do not exist: {missing}"


def test_browser_check(rendered):
    """Headless Chromium, offline: title, TOC, figures, <details>, no network requests."""
    if browser_check.find_browser() is None:
        pytest.skip(NO_BROWSER)
    proc = subprocess.run([sys.executable, str(BROWSER_CHECK), str(rendered.out)],
                          capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ---- render.sh itself ----

def test_render_fails_on_pandoc_warning(tmp_path):
    """A warning (here: no title) fails the render and leaves no output behind."""
    if shutil.which("pandoc") is None:
        pytest.skip(NO_PANDOC)
    md = tmp_path / "untitled.md"
    md.write_text("Some text, and no title block.\n", encoding="utf-8")
    out = tmp_path / "untitled.html"
    proc = render(md, out)
    assert proc.returncode != 0
    assert "title" in proc.stderr.lower(), proc.stderr
    assert not out.exists()
    assert not list(tmp_path.glob(".render.*")), "temporary file left behind"


def test_render_fails_on_missing_figure(tmp_path):
    if shutil.which("pandoc") is None:
        pytest.skip(NO_PANDOC)
    md = tmp_path / "missing.md"
    md.write_text("---\ntitle: t\n---\n\n![gone](post/figures/no-such-figure.svg)\n",
                  encoding="utf-8")
    out = tmp_path / "missing.html"
    proc = render(md, out)
    assert proc.returncode != 0
    assert "no-such-figure" in proc.stderr, proc.stderr
    assert not out.exists()


def test_render_works_from_another_directory(tmp_path):
    """Figures are found from the repository root whatever the current directory."""
    if shutil.which("pandoc") is None:
        pytest.skip(NO_PANDOC)
    out = tmp_path / "sample.html"
    proc = render(DOCUMENTS["sample.md"], out, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    page = out.read_text(encoding="utf-8")
    # pandoc 2 embeds figures as data: URIs; pandoc 3 may put the <svg> inline
    assert page.count("data:image/svg+xml") + page.count("<svg") >= 3


# ---- the browser check itself ----

def test_browser_check_catches_a_bad_page(tmp_path):
    """A page with no TOC, figures or details, and a remote image, fails those checks."""
    if browser_check.find_browser() is None:
        pytest.skip(NO_BROWSER)
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><head><title>Bad</title></head><body>'
                    '<h1 class="title">Bad</h1>'
                    '<img src="https://remote.example/picture.png" alt="remote">'
                    '</body></html>', encoding="utf-8")
    proc = subprocess.run([sys.executable, str(BROWSER_CHECK), str(page)],
                          capture_output=True, text=True, timeout=400)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "ok    title" in out
    for name in ("table of contents", "figures", "images embedded", "details", "network"):
        assert f"FAIL  {name}" in out, out
    assert "remote.example" in out


def test_browser_check_measures_the_layout(tmp_path):
    """Code that scrolls, a table wider than a phone and a figure with tiny text all fail;
    the measurements are taken at a phone's width, narrower than a browser window can be."""
    if browser_check.find_browser() is None:
        pytest.skip(NO_BROWSER)
    tiny = ('<svg xmlns="http://www.w3.org/2000/svg" width="800" height="100" viewBox="0 0 800 100">'
            '<title>t</title><text x="10" y="50" font-size="8">tiny</text></svg>')
    data = "data:image/svg+xml;base64," + base64.b64encode(tiny.encode()).decode()
    page = tmp_path / "wide.html"
    page.write_text('<!DOCTYPE html><html><head><title>Wide</title></head><body>'
                    '<pre style="white-space: pre; overflow-x: auto">' + "x" * 300 + '</pre>'
                    '<table><tr>' + "<td>123456789</td>" * 12 + '</tr></table>'
                    f'<figure><img src="{data}" style="width: 100%" alt="tiny"></figure>'
                    '</body></html>', encoding="utf-8")
    proc = subprocess.run([sys.executable, str(BROWSER_CHECK), str(page), "--widths", "390"],
                          capture_output=True, text=True, timeout=400)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    # The code block scrolls inside itself, but the table, which cannot, widens the whole page.
    page_width = re.search(r"(?m)^FAIL  page width at 390px: (\d+)px of content in a 390px window$", out)
    assert page_width and int(page_width[1]) > 390, out
    for name in ("code blocks at 390px", "tables at 390px", "figure text at 390px"):
        assert f"FAIL  {name}" in out, out


# ---- the figures ----

@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_figure_is_self_contained_svg(name):
    path = FIGURES / f"{name}.svg"
    text = path.read_text(encoding="utf-8")
    root = ET.fromstring(text)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    x, y, width, height = (float(v) for v in root.get("viewBox").replace(",", " ").split())
    assert 600 <= width <= 800, f"viewBox width {width}"
    assert root.find("{http://www.w3.org/2000/svg}title") is not None, "no <title> for screen readers"
    bad = {"image", "script", "foreignObject", "style"}
    used = {el.tag.split("}")[-1] for el in root.iter()}
    assert not bad & used, f"elements a figure should not need: {bad & used}"
    refs = [m.group(2) for m in SVG_REF.finditer(text)] + css_references(text)
    assert all(r.startswith("#") for r in refs), f"references outside the file: {refs}"
    generic = {"serif", "sans-serif", "monospace"}
    fonts = {el.get("font-family") for el in root.iter() if el.get("font-family")}
    assert fonts <= generic, f"non-generic font families: {fonts - generic}"


def text_spans(element, inherited=None):
    """(text, x, font size, anchor, bold) of every <text> with an x under element, with the
    size, anchor and weight a <g> around it gives."""
    style = dict(inherited or {"font-size": "16", "text-anchor": "start", "font-weight": "normal"})
    style.update({k: element.get(k) for k in style if element.get(k)})
    if element.tag.endswith("}text") and element.get("x") is not None:
        yield ("".join(element.itertext()), float(element.get("x")), float(style["font-size"]),
               style["text-anchor"], style["font-weight"] == "bold")
    for child in element:
        yield from text_spans(child, style)


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_figure_text_fits_inside_the_figure(name):
    """A line of text ends inside the figure's width, by a generous estimate of its width
    (half the font size per character, a little more for bold): a title or legend cut off
    by the edge is a figure that reads wrong."""
    root = ET.parse(FIGURES / f"{name}.svg").getroot()
    width = float(root.get("viewBox").replace(",", " ").split()[2])
    for text, x, size, anchor, bold in text_spans(root):
        w = (0.58 if bold else 0.53) * size * len(text)
        left = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
        assert left >= 0 and left + w <= width, f"{text!r} runs past the edge ({left:.0f} to {left + w:.0f} of {width:.0f})"


def test_figure_ids_are_distinct():
    """No id is used by two figures, so they can also be put inline in one page."""
    seen = {}
    for name in FIGURE_NAMES:
        root = ET.parse(FIGURES / f"{name}.svg").getroot()
        for el in root.iter():
            if el.get("id"):
                assert el.get("id") not in seen, f"id {el.get('id')!r} in {name} and {seen[el.get('id')]}"
                seen[el.get("id")] = name


def test_fragments_are_named_and_references_link_to_definitions(rendered):
    """pbrt's way: a caption names each named fragment (≡ first, +≡ continued), and every
    reference in the code is a link to an element that exists on the page."""
    names = re.findall(r'^```\{\.cpp chunk="([^"]+)"\}', rendered.md_text, re.M)
    if rendered.name == "gemm.md":
        assert names, "gemm.md has no named fragments"
    if not names:   # the sample has none: no caption may appear
        assert 'class="fragment-name"' not in rendered.html
        return
    captions = re.findall(r'<div class="fragment-name">(.*?)</div>', rendered.html)
    assert len(captions) == len(names)
    seen = set()
    for name, caption in zip(names, captions):
        shown = html.unescape(re.sub(r"<[^>]+>", "", caption))
        mark = "+≡" if name in seen else "≡"
        assert shown.startswith(f"⟨{name}⟩ {mark}"), (name, shown)
        seen.add(name)
    ids = set(re.findall(r'\sid="([^"]+)"', rendered.html))
    targets = re.findall(r'<a class="fragment-ref" href="#([^"]+)"', rendered.html)
    assert targets and all(t in ids for t in targets), set(targets) - ids
    links = re.findall(r'<div class="fragment-name">.*?</div>', rendered.html)
    for link in re.findall(r'href="#([^"]+)"', " ".join(links)):
        assert link in ids, link
    assert len(ids) == len(re.findall(r'\sid="', rendered.html)), "an id is used twice"


# ---- the shape of the post ----

PATH_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def main_path(text):
    """What a reader reads without opening an appendix, a <details> fold or a footnote, as
    (line, in_code) pairs: the prose lines, and the lines inside code fences (the fence
    lines themselves are neither). The front matter is left out."""
    lines = text.split("\n")
    if lines and lines[0] == "---":
        lines = lines[lines.index("---", 1) + 1:]
    kept, appendix, folded, fence, note = [], False, 0, None, False
    for line in lines:
        if fence is not None:
            if re.match(rf"^ {{0,3}}{fence[0]}{{{len(fence)},}}\s*$", line):
                fence = None
            elif not appendix and not folded:
                kept.append((line, True))
            continue
        opening = PATH_FENCE.match(line)
        if opening:
            fence = opening[1]
            continue
        if line.startswith("# "):
            appendix = line.startswith("# Appendix")
        if line.strip().startswith("<details"):
            folded += 1
        if re.match(r"^\[\^[^\]]+\]:", line):
            note = True                  # a footnote's text, and its indented lines
        elif note and line.strip() and not line.startswith("    "):
            note = False
        if not appendix and not folded and not note:
            kept.append((line, False))
        if line.strip().startswith("</details"):
            folded -= 1
    return kept


MARKUP = re.compile(r"[|:\-]+|#+|[-*+>]|\d+\.")   # table rules and bars, headings, list marks


def prose_words(line):
    """The words, numbers and signs of a line of Markdown prose: every run of non-space
    characters but Markdown's own marks (table bars and rules, heading and list marks) and
    HTML tags; a link counts by its text, not its target. A table's cells, a figure's caption,
    a fold's summary and a footnote's text count like any prose."""
    line = re.sub(r"<[^>]*>", " ", line)
    line = re.sub(r"\]\([^)]*\)", "] ", line)
    line = re.sub(r"\[\^[^\]]*\]", " ", line)   # footnote marks; inline footnotes are read
    return sum(1 for token in line.split() if not MARKUP.fullmatch(token))


def visible_extras(text):
    """What a reader of the main path sees besides main_path's lines: the summary line of
    each fold there, and the text of its footnotes (each shown where it is defined or at the
    end of the page)."""
    lines = text.split("\n")
    end = next((i for i, line in enumerate(lines) if line.startswith("# Appendix")), len(lines))
    extras, note = [], False
    for line in lines[:end]:
        if "<summary>" in line:
            extras.append(line)
        if re.match(r"^\[\^[^\]]+\]:", line):
            note = True
            extras.append(re.sub(r"^\[\^[^\]]+\]:", " ", line))
        elif note and line.strip() and not line.startswith("    "):
            note = False
        elif note:
            extras.append(line)
    return extras


def budget(text):
    """(words of prose, lines of code) on the main path: its prose, its folds' summaries and
    its footnotes, and its visible code."""
    path = main_path(text)
    prose = [line for line, code in path if not code] + visible_extras(text)
    return sum(prose_words(line) for line in prose), sum(1 for _, code in path if code)


# The main path, read carefully, in about ninety minutes.
MAX_WORDS, MAX_CODE_LINES = 7000, 350

# The chapters of the main path, in the order the post tells its story.
ARC = ["What we compute, and how to run it", "Tensor cores, one tile at a time",
       "Storage, padding and indexing", "Tiling of tiles", "Beyond WMMA: Hopper's own instructions",
       "Results on an H100", "What is left"]


def test_the_main_path_is_an_evening():
    text = (ROOT / "gemm.md").read_text(encoding="utf-8")
    words, code = budget(text)
    assert words <= MAX_WORDS, f"the main path has {words} words of prose, the budget {MAX_WORDS}"
    assert code <= MAX_CODE_LINES, f"the main path shows {code} lines of code, the budget {MAX_CODE_LINES}"


def test_the_kernel_comes_early_and_the_chapters_tell_one_story():
    text = (ROOT / "gemm.md").read_text(encoding="utf-8")
    lines = text.split("\n")
    first = next(i for i, line in enumerate(lines, 1) if "wmma::mma_sync(" in line)
    assert first <= len(lines) / 10, f"the first mma_sync is at line {first} of {len(lines)}"
    chapters = [line[2:] for line, code in main_path(text) if not code and line.startswith("# ")]
    assert chapters == ARC
    # The appendices are where they say they are: after the main text, and all of them.
    headings = [line for line in lines if re.match(r"^# [A-Z]", line)]
    headings = [h for h in headings if h[2:] in ARC or h.startswith("# Appendix")]
    appendices = [h for h in headings if h.startswith("# Appendix")]
    assert len(appendices) >= 4 and headings[-len(appendices):] == appendices


def anchor(heading):
    """The identifier pandoc gives a heading (its auto_identifiers extension)."""
    words = re.sub(r"`|\*|\[|\]\([^)]*\)", "", heading).lower()
    words = re.sub(r"[^\w\s.-]", "", words)
    words = re.sub(r"\s+", "-", words.strip())
    return re.sub(r"^[^a-z]*", "", words)


def test_every_cross_reference_names_a_heading():
    text = (ROOT / "gemm.md").read_text(encoding="utf-8")
    ids = {anchor(line.lstrip("#").strip()) for line, code in
           [(l, c) for l, c in zip(text.split("\n"), _in_code(text))] if not code and re.match(r"^#{1,6} ", line)}
    targets = re.findall(r"\]\(#([^)]+)\)", text)
    assert targets, "the post links its sections"
    assert not sorted(set(targets) - ids), sorted(set(targets) - ids)
    assert anchor("The registry: `--describe`") == "the-registry---describe"
    assert anchor("What changed since GEMM on Jetson") == "what-changed-since-gemm-on-jetson"


def _in_code(text):
    inside, fence = [], None
    for line in text.split("\n"):
        opening = PATH_FENCE.match(line)
        if fence is None and opening:
            fence = opening[1]
            inside.append(True)
        elif fence is not None:
            inside.append(True)
            if re.match(rf"^ {{0,3}}{fence[0]}{{{len(fence)},}}\s*$", line):
                fence = None
        else:
            inside.append(False)
    return inside


@pytest.mark.parametrize("script", sorted(p.name for p in FIGURES.joinpath("src").glob("*.py")
                                          if p.name != "svgfig.py"))
def test_a_drawn_figure_is_what_its_script_draws(tmp_path, script):
    """The figures drawn by a script are in the repository as the script draws them now."""
    import shutil as sh
    src = tmp_path / "figures" / "src"
    sh.copytree(FIGURES / "src", src)
    result = subprocess.run([sys.executable, str(src / script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    made = [p for p in (tmp_path / "figures").glob("*.svg")]
    assert len(made) == 1
    assert made[0].read_text() == (FIGURES / made[0].name).read_text(), f"run python3 post/figures/src/{script}"
    assert f"post/figures/{made[0].name}" in (ROOT / "gemm.md").read_text(encoding="utf-8")
