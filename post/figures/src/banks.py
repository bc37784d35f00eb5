#!/usr/bin/env python3
"""Writes post/figures/banks.svg: eight rows of a stage in shared memory, the 16-byte pieces
that one fast fragment load reads, and the banks they fall in, without and with a 16-byte skew.

    python3 post/figures/src/banks.py
"""
from svgfig import MUTED, rect, svg, text, write

COLOURS = ["#4a6fa5", "#d9822b", "#5b9a68", "#b8505a", "#8a6bb8", "#c2a83e", "#4aa5a0", "#7a7a7a"]
W, CELL, ROWH, X0 = 720, 64, 34, 96
body = []


def panel(y, title, skew):
    body.append(text(24, y, title, size=21, extra=' font-weight="bold"'))
    y += 18
    # Bank groups: 8 columns of 16 bytes = the 128 bytes the 32 banks cover once.
    for g in range(8):
        body.append(text(X0 + g * CELL + CELL / 2, y + 18, f"{4 * g}–{4 * g + 3}", size=15, anchor="middle",
                         extra=f' fill="{MUTED}"'))
    body.append(text(X0 - 10, y + 18, "banks", size=15, anchor="end", extra=f' fill="{MUTED}"'))
    y += 28
    for r in range(8):
        yy = y + r * ROWH
        body.append(text(X0 - 10, yy + 23, f"row {r}", size=17, anchor="end"))
        for g in range(8):
            body.append(rect(X0 + g * CELL, yy, CELL, ROWH - 4, "#f4f6f9", stroke="#c9d1db", width=1))
        g = (r * skew) % 8
        body.append(rect(X0 + g * CELL, yy, CELL, ROWH - 4, COLOURS[r], stroke=COLOURS[r]))
        body.append(text(X0 + g * CELL + CELL / 2, yy + 22, f"r{r}", size=16, anchor="middle",
                         extra=' fill="#ffffff" font-weight="bold"'))
    return y + 8 * ROWH


y = panel(40, "Rows 128 bytes apart: 8 pieces, one group of banks", 0)
body.append(text(24, y + 30, "8 pieces in banks 0–3: the load takes 8 passes", size=18,
                 extra=f' font-style="italic" fill="{MUTED}"'))
y = panel(y + 90, "Rows 144 bytes apart (skew of 16 bytes)", 1)
body.append(text(24, y + 30, "8 pieces in 8 groups: the load takes 1 pass", size=18,
                 extra=f' font-style="italic" fill="{MUTED}"'))
H = y + 56
write("banks.svg", svg(W, H, "Shared-memory banks without and with the 16-byte skew",
                       "Two panels of eight rows of a stage of shared memory, each row drawn over the eight "
                       "groups of four banks (16 bytes each) that 128 bytes cover. A fast fragment load reads "
                       "one 16-byte piece from each of eight rows. With rows 128 bytes apart, all eight "
                       "pieces fall in banks 0 to 3 and are served one after another; with rows 144 bytes "
                       "apart, row r's piece falls in group r, and all eight are served at once.", body))
