#!/usr/bin/env python3
"""Writes post/figures/host-map.svg: what main calls, and what flows between the parts.

    python3 post/figures/src/host_map.py
"""
from pathlib import Path

W = 640
out = []
BOLD = ' font-weight="bold"'


def box(x, y, w, h, title, sub=(), fill="#e8eef7", stroke="#4a6fa5", top=False):
    out.append(f'  <rect x="{x}" y="{y}" width="{w}" height="{h}" rx="8" fill="{fill}" '
               f'stroke="{stroke}" stroke-width="2"/>')
    ty = y + 30 if sub or top else y + h / 2 + 7
    out.append(f'  <text x="{x + 14}" y="{ty:.0f}" font-family="monospace" font-size="21"{BOLD}>{title}</text>')
    for k, line in enumerate(sub):
        out.append(f'  <text x="{x + 14}" y="{y + 58 + 26 * k}">{line}</text>')


def arrow(y1, y2, label=None, x=60):
    out.append(f'  <path d="M{x} {y1}V{y2 - 2}" stroke="#2d3142" stroke-width="2" marker-end="url(#hm-arrow)"/>')
    if label:
        out.append(f'  <text x="{x + 14}" y="{(y1 + y2) / 2 + 7:.0f}" font-size="18" '
                   f'font-style="italic" fill="#59636e">{label}</text>')


y = 16
box(16, y, 608, 48, "main(argc, argv)"); y += 48
arrow(y, y + 44, "the command line"); y += 44
box(16, y, 608, 84, "parse_args, check_problem", ["sizes, scalars and options checked"]); y += 84
arrow(y, y + 44, "Options; open_gpu, check_gpu_memory"); y += 44
box(16, y, 608, 84, "make_problem", ["A, B, C in host memory, as stored"]); y += 84
arrow(y, y + 44, "Problem"); y += 44
top, height = y, 466
out.append(f'  <rect x="16" y="{y}" width="608" height="{height}" rx="8" fill="#fff7ec" '
           f'stroke="#d9822b" stroke-width="2"/>')
out.append(f'  <text x="30" y="{y + 32}" font-family="monospace" font-size="21"{BOLD}>run_gpu</text>')
out.append(f'  <text x="130" y="{y + 32}" font-size="18" fill="#59636e">(--cpu-only: reference_gemm)</text>')
y += 48
box(36, y, 568, 78, "upload_padded", ["zero-padded buffers on the GPU"], "#ffffff", "#d9822b"); y += 78
arrow(y, y + 30, x=80); y += 30
box(36, y, 568, 78, "time_launches(cuBLAS)", ["cuBLAS's C, and its time"], "#ffffff", "#d9822b"); y += 78
arrow(y, y + 30, x=80); y += 30
box(36, y, 568, 186, "for each kernel:", (), "#ffffff", "#d9822b", top=True)
steps = [("time_launches", "its C and its time"), ("cross_check", "against cuBLAS, on the GPU"),
         ("download_unpadded", "C back to the host"), ("verify", "against the CPU reference")]
for k, (name, what) in enumerate(steps):
    yy = y + 68 + 34 * k
    out.append(f'  <text x="56" y="{yy}" font-family="monospace">{name}</text>')
    out.append(f'  <text x="300" y="{yy}" font-size="18">{what}</text>')
y = top + height
arrow(y, y + 44, "Run: the times and the checks"); y += 44
box(16, y, 608, 84, "report or report_csv", ["exit status 0 only if every check passed"]); y += 84
H = y + 16

svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
       f'font-family="sans-serif" font-size="19" fill="#2d3142">',
       '  <title>The host program: what main calls, and what flows between the parts</title>',
       "  <desc>A column of boxes from main down: parse_args and check_problem turn the command line "
       "into Options; make_problem makes A, B and C in host memory; run_gpu pads them into device "
       "buffers, times cuBLAS, then for each kernel times it, compares its C with cuBLAS's on the GPU, "
       "brings it back and verifies it against the CPU reference; report or report_csv prints the "
       "outcome.</desc>",
       '  <defs>',
       '    <marker id="hm-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
       'orient="auto-start-reverse">',
       '      <path d="M0 0L10 5L0 10z" fill="#2d3142"/>',
       '    </marker>',
       '  </defs>',
       f'  <rect width="{W}" height="{H}" rx="8" fill="#ffffff"/>'] + out + ['</svg>']
Path(__file__).resolve().parent.parent.joinpath("host-map.svg").write_text("\n".join(svg) + "\n")
