#!/usr/bin/env python3
"""Writes post/figures/hopper-swizzle.svg: eight 128-byte rows of a K-major stage as the
program addresses them and as the 128-byte swizzle stores them (piece c of row r at c xor r).

    python3 post/figures/src/hopper_swizzle.py
"""
from svgfig import MUTED, rect, svg, text, write

CELL, ROWH, X0, GAP = 36, 30, 70, 48
W = X0 + 2 * 8 * CELL + GAP + 24
body = []


def panel(x, y, title, where):
    body.append(text(x, y, title, size=19, extra=' font-weight="bold"'))
    y += 16
    for g in range(8):
        body.append(text(x + g * CELL + CELL / 2, y + 16, f"{4 * g}", size=13,
                         anchor="middle", extra=f' fill="{MUTED}"'))
    y += 24
    for r in range(8):
        yy = y + r * ROWH
        if x == X0:
            body.append(text(x - 10, yy + 21, f"row {r}", size=16, anchor="end"))
        for c in range(8):
            pos = where(r, c)
            shaded = c == 0
            body.append(rect(x + pos * CELL, yy, CELL, ROWH - 4, "#4a6fa5" if shaded else "#f4f6f9",
                             stroke="#4a6fa5" if shaded else "#c9d1db", width=1))
            body.append(text(x + pos * CELL + CELL / 2, yy + 20, str(c), size=15, anchor="middle",
                             extra=' fill="#ffffff" font-weight="bold"' if shaded else ""))
    return y + 8 * ROWH


y0 = 36
x1 = X0 + 8 * CELL + GAP
end = panel(X0, y0, "As addressed", lambda r, c: c)
panel(x1, y0, "As stored: c at c ⊕ r", lambda r, c: c ^ r)
body.append(text(X0, end + 30, "above each column: its first bank of four; shaded: piece 0 of every row",
                 size=15, extra=f' font-style="italic" fill="{MUTED}"'))
H = end + 50
write("hopper-swizzle.svg", svg(W, H, "The 128-byte swizzle of a K-major stage",
                                "Two panels of eight rows of 128 bytes, each row eight 16-byte pieces "
                                "numbered 0 to 7 along K. On the left, as the program addresses them, "
                                "piece 0 of every row is in the first column, banks 0 to 3. On the "
                                "right, as the swizzle stores them, piece c of row r sits at position c "
                                "exclusive-or r, so piece 0 of row r is in column r and the eight pieces "
                                "of a column fall in eight different groups of banks.", body))
