#!/usr/bin/env python3
"""Writes post/figures/hopper-accumulators.svg: which thread of a consumer warp group holds
which element of its 64 x 256 accumulator tile (the first 16 columns drawn).

    python3 post/figures/src/hopper_accumulators.py
"""
from svgfig import MUTED, rect, svg, text, write

WARP_COLOURS = ["#4a6fa5", "#d9822b", "#5b9a68", "#b8505a"]
CW, RH, X0, Y0 = 36, 24, 90, 60
COLS, ROWS = 16, 16
body = []
body.append(text(X0, 30, "Columns 0–15: which thread of the warp holds each",
                 size=17, extra=' font-weight="bold"'))
for c in range(COLS):
    body.append(text(X0 + c * CW + CW / 2, Y0 - 8, str(c), size=13, anchor="middle", extra=f' fill="{MUTED}"'))
for r in range(ROWS):
    warp, within = r // 16, r % 16
    y = Y0 + r * RH
    if within == 0:
        body.append(text(X0 - 12, y + 16 * RH / 2 + 5, f"warp {warp}", size=15, anchor="end",
                         extra=f' fill="{WARP_COLOURS[warp]}" font-weight="bold"'))
    for c in range(COLS):
        t = (within % 8) * 4 + (c % 8) // 2
        light = within >= 8
        body.append(rect(X0 + c * CW, y, CW, RH, WARP_COLOURS[warp] if not light else "#ffffff",
                         stroke=WARP_COLOURS[warp], width=0.6,
                         extra=' fill-opacity="0.25"' if not light else ""))
        body.append(text(X0 + c * CW + CW / 2, y + RH - 6, str(t), size=14, anchor="middle"))
yb = Y0 + ROWS * RH + 10
for w in range(1, 4):
    y = yb + (w - 1) * 34
    body.append(rect(X0, y, COLS * CW, 28, WARP_COLOURS[w], stroke=WARP_COLOURS[w], width=0.6,
                     extra=' fill-opacity="0.25"'))
    body.append(text(X0 - 12, y + 20, f"warp {w}", size=15, anchor="end",
                     extra=f' fill="{WARP_COLOURS[w]}" font-weight="bold"'))
    body.append(text(X0 + 10, y + 20, f"rows {16 * w}–{16 * w + 15}: the same pattern", size=15))
notes = ["Thread t holds columns 2 (t mod 4) and 2 (t mod 4) + 1 of each band of 8,",
         "in row ⌊t / 4⌋ of its warp (shaded) and in the row 8 below (white)."]
for i, line in enumerate(notes):
    body.append(text(X0 - 60, yb + 3 * 34 + 26 + 24 * i, line, size=15, extra=f' fill="{MUTED}"'))
W = 720
H = yb + 3 * 34 + 26 + 24 * 2 + 10
write("hopper-accumulators.svg", svg(W, H, "Which thread holds which accumulator of a wgmma tile",
                                     "A grid of 64 rows and the first 16 of 256 columns of a consumer "
                                     "warp group's accumulators, coloured by warp: warp w holds rows 16w "
                                     "to 16w + 15. Each cell shows the number of the thread in its warp "
                                     "that holds it: in each band of eight columns, thread t holds "
                                     "columns 2 (t mod 4) and 2 (t mod 4) + 1 of row t / 4 (rounded "
                                     "down) and of the row eight below.", body))
