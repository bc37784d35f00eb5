"""A few helpers shared by the scripts that draw the post's figures as plain SVG."""
from pathlib import Path

FIGURES = Path(__file__).resolve().parent.parent
INK, MUTED = "#2d3142", "#59636e"


def svg(width, height, title, desc, body, arrow_id=None):
    head = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="19" fill="{INK}">',
            f"  <title>{title}</title>", f"  <desc>{desc}</desc>"]
    if arrow_id:
        head += ["  <defs>",
                 f'    <marker id="{arrow_id}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
                 'markerHeight="7" orient="auto-start-reverse">',
                 f'      <path d="M0 0L10 5L0 10z" fill="{INK}"/>', "    </marker>", "  </defs>"]
    head.append(f'  <rect width="{width}" height="{height}" rx="8" fill="#ffffff"/>')
    return "\n".join(head + body + ["</svg>"]) + "\n"


def rect(x, y, w, h, fill, stroke=INK, width=1.5, extra=""):
    return f'  <rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{fill}" stroke="{stroke}" stroke-width="{width}"{extra}/>'


def text(x, y, s, size=None, anchor=None, extra=""):
    attrs = (f' font-size="{size}"' if size else "") + (f' text-anchor="{anchor}"' if anchor else "") + extra
    return f'  <text x="{x}" y="{y}"{attrs}>{s}</text>'


def write(name, content):
    (FIGURES / name).write_text(content)
