#!/usr/bin/env python3
"""Open the rendered post in headless Chromium and check what the browser built.

    python3 post/browser_check.py gemm.html [--screenshot gemm.png]

Chromium loads the file with --dump-dom, and the serialised DOM it prints is
checked for: a title, a table of contents with links that resolve, at least
three figures whose SVG is embedded in the page (and parses), every image
embedded, and <details> blocks that each have a <summary>.

The browser is kept off the network: every request it makes goes to a proxy
on a local port that this script runs, which refuses it and writes it down;
host names do not resolve; and the browser's own background services are
switched off or pointed at that proxy. Any request the page makes fails the
"network" check (the page must need none); requests to the browser's own
update and sign-in services are listed but not held against the page.

The layout is measured too, at a phone's width and a desktop's (--widths,
default 390 and 1200 CSS pixels): a copy of the page with a small script
added reports, after load, how wide the page is, every <pre> and <table>
wider than its box, and the width each figure is drawn at. The checks: no
horizontal overflow of the page, no code block or table that scrolls
sideways, and no text in a figure drawn smaller than MIN_FIGURE_TEXT_PX
(the figure's smallest font size, scaled by its drawn width over its
viewBox width).

One line is printed per check; the exit status is 0 when all passed, 1 when
one failed, 2 when the browser could not be run. With --screenshot, a second
run saves a picture of the top of the page (--window-size, default 1200,2400).

Standard library only: this runs under the test environment's Python.
"""

import argparse
import base64
import binascii
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import urllib.parse
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
BROWSER_FEATURES_OFF = ("NetworkTimeServiceQuerying", "Translate", "OptimizationHints",
                        "MediaRouter", "AutofillServerCommunication")
# Services the browser itself talks to, whatever page it shows. The flags above
# keep it from them (Chromium 156 makes no request at all), but a later version
# may start a new one; a request to one of these hosts is reported, not failed.
# A page has no business loading anything from them.
BROWSER_OWN_HOSTS = ("update.googleapis.com", "clients1.google.com", "clients2.google.com",
                     "accounts.google.com", "clientservices.googleapis.com",
                     "optimizationguide-pa.googleapis.com", "safebrowsing.googleapis.com",
                     "safebrowsingohttpgateway.googleapis.com", "android.clients.google.com",
                     "content-autofill.googleapis.com", "redirector.gvt1.com",
                     "edgedl.me.gvt1.com", "dl.google.com")
MIN_FIGURES = 3
MIN_FIGURE_TEXT_PX = 9          # the smallest text a figure may be drawn with, in CSS pixels
WIDTHS = (390, 1200)            # an iPhone's width, and a desktop browser's
# The page is measured inside an <iframe> of the width wanted (a browser window
# cannot be made as narrow as a phone), from a script of the page around it.
MEASURE = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">
<iframe id="page" style="border:0" width="WIDTH" height="900" srcdoc="PAGE"></iframe>
<script>
document.getElementById("page").addEventListener("load", function () {
  var doc = this.contentDocument, root = doc.documentElement,
      out = {width: root.clientWidth, page: root.scrollWidth, pre: [], table: [], img: []};
  var short = function (el) { return el.textContent.replace(/\\s+/g, " ").trim().slice(0, 50); };
  doc.querySelectorAll("pre").forEach(function (el) {
    if (el.scrollWidth > el.clientWidth + 1) out.pre.push(short(el));
  });
  doc.querySelectorAll("table").forEach(function (el) {
    var r = el.getBoundingClientRect();
    if (el.scrollWidth > el.clientWidth + 1 || r.left < -1 || r.right > root.clientWidth + 1)
      out.table.push(short(el));
  });
  doc.querySelectorAll("img").forEach(function (el) { out.img.push(el.getBoundingClientRect().width); });
  var pre = document.createElement("pre");
  pre.id = "layout-metrics";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script></body></html>
"""
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
        "meta", "param", "source", "track", "wbr"}


def find_browser():
    """The Chromium to use: $CHROMIUM if set, else the first of BROWSERS on PATH."""
    named = os.environ.get("CHROMIUM")
    if named:
        return shutil.which(named) or (named if os.access(named, os.X_OK) else None)
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


# ---- a local proxy that answers nothing and remembers what was asked ----

class RefusingProxy:
    """Listens on 127.0.0.1; records the first line of every request, answers 403."""

    def __init__(self):
        self.requests = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.2)
        self.port = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    data = conn.recv(8192)
                except OSError:
                    data = b""
                line = data.split(b"\r\n", 1)[0].decode("latin-1").strip()
                if line:
                    with self._lock:
                        self.requests.append(line)
                try:
                    conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n"
                                 b"Connection: close\r\n\r\n")
                except OSError:
                    pass

    def close(self):
        self._stop.set()
        self._thread.join(timeout=2)
        self._sock.close()


def run_browser(browser, args, proxy_port, timeout):
    """Run headless Chromium offline with a throwaway profile; return (rc, stdout, stderr)."""
    with tempfile.TemporaryDirectory(prefix="browser-check-") as profile:
        cmd = [
            browser,
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            # everything goes to the refusing proxy, loopback included ...
            f"--proxy-server=http://127.0.0.1:{proxy_port}",
            "--proxy-bypass-list=<-loopback>",
            # ... and nothing that skips the proxy can look a host name up
            "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
            # the browser's own background traffic: off, or sent to the proxy
            "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-default-apps", "--disable-extensions",
            "--disable-domain-reliability", "--disable-client-side-phishing-detection",
            "--no-first-run", "--no-default-browser-check", "--metrics-recording-only",
            "--disable-features=" + ",".join(BROWSER_FEATURES_OFF),
            f"--component-updater=url-source=http://127.0.0.1:{proxy_port}/",
            f"--gaia-url=http://127.0.0.1:{proxy_port}/",
            "--hide-scrollbars", "--mute-audio",
        ] + args
        env = dict(os.environ, XDG_CONFIG_HOME=profile, XDG_CACHE_HOME=profile)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=env, cwd=profile, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)   # the group this call started
            out, err = proc.communicate()
            return None, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        return (proc.returncode, out.decode("utf-8", "replace"),
                err.decode("utf-8", "replace"))


# ---- the DOM, as a small tree ----

class Node:
    def __init__(self, tag, attrs, parent):
        self.tag = tag
        self.attrs = dict(attrs)
        self.parent = parent
        self.children = []      # Nodes and str

    def iter(self, tag=None):
        for child in self.children:
            if isinstance(child, Node):
                if tag is None or child.tag == tag:
                    yield child
                yield from child.iter(tag)

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def classes(self):
        return (self.attrs.get("class") or "").split()


class TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.cur)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        node = self.cur
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:          # a stray end tag is ignored
            self.cur = node.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse(html):
    builder = TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root


# ---- the checks ----

def svg_from_data_uri(uri):
    """The text of an SVG data: URI, or None if it is not one."""
    head, sep, payload = uri.partition(",")
    if not sep or not head.lower().startswith("data:image/svg+xml"):
        return None
    try:
        if head.lower().endswith(";base64"):
            return base64.b64decode(payload, validate=False).decode("utf-8")
        return urllib.parse.unquote(payload)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def svg_smallest_text(text):
    """(smallest font size in the SVG's own units, viewBox width), or None if it has no text."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return None
    box = root.get("viewBox")
    width = float(box.replace(",", " ").split()[2]) if box else float(str(root.get("width", "0")).rstrip("pt") or 0)
    if box is None and str(root.get("width", "")).endswith("pt"):
        width *= 1.0   # matplotlib: width in pt, drawn in the same units as its fonts
    sizes = []

    def walk(node, inherited):
        size = inherited
        if node.get("font-size"):
            size = float(str(node.get("font-size")).rstrip("px").rstrip("pt"))
        style = node.get("style") or ""
        for piece in style.split(";"):
            key, _, value = piece.partition(":")
            key, value = key.strip(), value.strip()
            if key == "font-size":
                size = float(value.rstrip("px").rstrip("pt"))
            elif key == "font":
                for word in value.split():
                    if word.endswith("px") or word.endswith("pt"):
                        size = float(word[:-2])
                        break
        if node.tag.split("}")[-1] in ("text", "tspan") and (node.text or "").strip():
            sizes.append(size)
        for child in node:
            walk(child, size)

    walk(root, 16.0)
    return (min(sizes), width) if sizes and width else None


def measure_layout(browser, page, width, proxy_port, timeout):
    """The page's layout at this width, as the MEASURE script reports it; None on failure."""
    import html as htmllib
    import json
    text = page.read_text(encoding="utf-8")
    host = MEASURE.replace("WIDTH", str(width)).replace("PAGE", htmllib.escape(text, quote=True))
    with tempfile.TemporaryDirectory(prefix="layout-") as folder:
        copy = pathlib.Path(folder) / "measure.html"
        copy.write_text(host, encoding="utf-8")
        rc, dom, _ = run_browser(browser, ["--dump-dom", f"--window-size={width + 100},1000",
                                           "--virtual-time-budget=8000", copy.as_uri()],
                                 proxy_port, timeout)
    start = dom.find('<pre id="layout-metrics">')
    if rc != 0 or start < 0:
        return None
    end = dom.find("</pre>", start)
    return json.loads(htmllib.unescape(dom[start + len('<pre id="layout-metrics">'):end]))


def check_layout(root, layouts):
    """Checks of the layouts measured at each width: overflow, and figure text size."""
    results = []
    texts = [svg_smallest_text(svg_from_data_uri(img.attrs.get("src", "")) or "") for img in root.iter("img")]
    for width, m in layouts:
        if m is None:
            results.append((False, f"layout at {width}px", "the browser reported no measurements"))
            continue
        results.append((m["page"] <= m["width"], f"page width at {width}px",
                        f"{m['page']}px of content in a {m['width']}px window"))
        results.append((not m["pre"], f"code blocks at {width}px",
                        "none scrolls sideways" if not m["pre"] else
                        f"{len(m['pre'])} scroll sideways, the first: {m['pre'][0]!r}"))
        results.append((not m["table"], f"tables at {width}px",
                        "all fit" if not m["table"] else
                        f"{len(m['table'])} do not fit, the first: {m['table'][0]!r}"))
        small = []
        for drawn, found in zip(m["img"], texts):
            if found:
                px = found[0] * drawn / found[1]
                if px < MIN_FIGURE_TEXT_PX:
                    small.append(f"{px:.1f}px")
        results.append((not small, f"figure text at {width}px",
                        f"all at least {MIN_FIGURE_TEXT_PX}px" if not small else
                        f"{len(small)} figures have smaller text: {', '.join(small)}"))
    return results


def svg_parses(text):
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return False
    return root.tag in ("svg", "{http://www.w3.org/2000/svg}svg")


def request_host(line):
    """host[:port] of a proxy request line: 'CONNECT h:443 ...' or 'GET http://h/p ...'."""
    parts = line.split()
    if len(parts) < 2:
        return ""
    if parts[0].upper() == "CONNECT":
        host = parts[1]
        return host[:-4] if host.endswith(":443") else host
    return urllib.parse.urlsplit(parts[1]).netloc


def check_dom(root, requests, own_host=""):
    """A list of (ok, name, detail)."""
    results = []
    ids = {n.attrs["id"] for n in root.iter() if n.attrs.get("id")}

    titles = [n.text().strip() for n in root.iter("h1") if "title" in n.classes()]
    titles += [n.text().strip() for n in root.iter("title")]
    titles = [t for t in titles if t]
    results.append((bool(titles), "title",
                    repr(titles[0]) if titles else "no <h1 class=\"title\"> or <title> with text"))

    navs = [n for n in root.iter("nav") if n.attrs.get("id") == "TOC"]
    links = [a.attrs.get("href", "") for nav in navs for a in nav.iter("a")]
    local = [h for h in links if h.startswith("#")]
    broken = [h for h in local if urllib.parse.unquote(h[1:]) not in ids]
    if not navs:
        results.append((False, "table of contents", "no <nav id=\"TOC\">"))
    elif not local:
        results.append((False, "table of contents", "<nav id=\"TOC\"> has no #links"))
    elif broken:
        results.append((False, "table of contents", f"links to missing ids: {broken[:5]}"))
    else:
        results.append((True, "table of contents", f"{len(local)} links, all resolve"))

    good, bad = 0, []
    for fig in root.iter("figure"):
        inline = any(True for _ in fig.iter("svg"))
        embedded = [svg_from_data_uri(img.attrs.get("src", "")) for img in fig.iter("img")]
        if inline or any(t is not None and svg_parses(t) for t in embedded):
            good += 1
        else:
            srcs = [img.attrs.get("src", "")[:60] for img in fig.iter("img")]
            bad.append(srcs or ["(no image)"])
    detail = f"{good} with embedded SVG"
    if bad:
        detail += f"; {len(bad)} without: {bad[:3]}"
    results.append((good >= MIN_FIGURES and not bad, "figures",
                    detail + ("" if good >= MIN_FIGURES else f" (need {MIN_FIGURES})")))

    srcs = [img.attrs.get("src", "") for img in root.iter("img")]
    outside = [s[:80] for s in srcs if not s.startswith("data:")]
    results.append((not outside, "images embedded",
                    f"all {len(srcs)} are data: URIs" if not outside
                    else f"not embedded: {outside[:5]}"))

    details = list(root.iter("details"))
    unlabelled = 0
    for d in details:
        summaries = [c for c in d.children if isinstance(c, Node) and c.tag == "summary"]
        if not summaries or not summaries[0].text().strip():
            unlabelled += 1
    if not details:
        results.append((False, "details", "no <details> blocks"))
    elif unlabelled:
        results.append((False, "details", f"{unlabelled} of {len(details)} have no <summary> with text"))
    else:
        results.append((True, "details", f"{len(details)} blocks, each with a <summary>"))

    own = [r for r in requests if request_host(r) in BROWSER_OWN_HOSTS + (own_host,)]
    page = [r for r in requests if r not in own]
    detail = "no requests" if not page else f"{len(page)} attempted: {page[:5]}"
    if own:
        hosts = sorted({request_host(r) for r in own})
        detail += f" (ignored {len(own)} of the browser's own, to {', '.join(hosts)})"
    results.append((not page, "network", detail))
    return results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("html", help="the rendered page")
    ap.add_argument("--screenshot", metavar="PNG", help="also save a screenshot here")
    ap.add_argument("--window-size", default="1200,2400", metavar="W,H",
                    help="browser window for the screenshot (default 1200,2400)")
    ap.add_argument("--dark", action="store_true",
                    help="screenshot with the dark colour scheme")
    ap.add_argument("--timeout", type=float, default=90, help="seconds per browser run")
    ap.add_argument("--widths", default=",".join(map(str, WIDTHS)), metavar="W1,W2",
                    help="window widths at which to measure the layout (default %(default)s)")
    args = ap.parse_args(argv)

    page = pathlib.Path(args.html)
    if not page.is_file():
        print(f"browser_check: no such file: {page}", file=sys.stderr)
        return 2
    browser = find_browser()
    if not browser:
        print("browser_check: no Chromium found (tried " + ", ".join(BROWSERS) + ")",
              file=sys.stderr)
        return 2
    url = page.resolve().as_uri()

    proxy = RefusingProxy()
    try:
        rc, dom, err = run_browser(browser, ["--dump-dom", url], proxy.port, args.timeout)
        if rc != 0 or "<body" not in dom:
            why = "timed out" if rc is None else f"exit status {rc}"
            print(f"browser_check: {browser} --dump-dom failed ({why})", file=sys.stderr)
            print(err[-2000:], file=sys.stderr)
            return 2
        layouts = [(int(w), measure_layout(browser, page, int(w), proxy.port, args.timeout))
                   for w in args.widths.split(",") if w.strip()]
        shot_ok = True
        if args.screenshot:
            shot = pathlib.Path(args.screenshot).resolve()
            extra = ["--force-dark-mode", "--blink-settings=preferredColorScheme=0"] if args.dark else []
            if shot.exists():
                shot.unlink()
            rc, _, err = run_browser(browser, extra + [f"--screenshot={shot}",
                                     f"--window-size={args.window_size}", url],
                                     proxy.port, args.timeout)
            shot_ok = rc == 0 and shot.is_file() and shot.stat().st_size > 0
    finally:
        proxy.close()

    tree = parse(dom)
    results = check_dom(tree, proxy.requests, own_host=f"127.0.0.1:{proxy.port}")
    results += check_layout(tree, layouts)
    if args.screenshot:
        results.append((shot_ok, "screenshot", str(shot) if shot_ok
                        else f"not written ({err.strip()[-300:]})"))
    for ok, name, detail in results:
        print(f"{'ok  ' if ok else 'FAIL'}  {name}: {detail}")
    failed = [name for ok, name, _ in results if not ok]
    print(f"browser check of {page}: " +
          ("all passed" if not failed else "failed: " + ", ".join(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
