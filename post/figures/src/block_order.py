#!/usr/bin/env python3
"""Writes post/figures/block-order.svg: the order in which blocks take the block tiles of C, row by
row and in groups of GROUP_M rows, and what the first blocks to run read of A and B.

    python3 post/figures/src/block_order.py
"""
from svgfig import MUTED, rect, svg, text, write

ROWS, COLS, GROUP, RUNNING = 6, 6, 3, 9
CELL, W = 46, 720
body = []


def grouped_tile(b, group):
    """grouped_tile of gemm.md, in Python: (row, column) of block b."""
    if group == 1:
        return b // COLS, b % COLS
    g = b // (group * COLS)
    first = g * group
    rows = min(group, ROWS - first)
    within = b - g * group * COLS
    return first + within % rows, within // rows


def panel(x, y, group, title):
    body.append(text(x, y - 44, title, size=20, extra=' font-weight="bold"'))
    order = {grouped_tile(b, group): b for b in range(ROWS * COLS)}
    rows_a = {grouped_tile(b, group)[0] for b in range(RUNNING)}
    cols_b = {grouped_tile(b, group)[1] for b in range(RUNNING)}
    # The bands of A (left) and B (top) that the first RUNNING blocks read.
    for r in range(ROWS):
        body.append(rect(x - 26, y + r * CELL, 18, CELL, "#4a6fa5" if r in rows_a else "#e8eef7",
                         stroke="#4a6fa5", width=1))
    for c in range(COLS):
        body.append(rect(x + c * CELL, y - 26, CELL, 18, "#d9822b" if c in cols_b else "#fbe3c9",
                         stroke="#d9822b", width=1))
    for (r, c), b in order.items():
        running = b < RUNNING
        body.append(rect(x + c * CELL, y + r * CELL, CELL, CELL, "#5b9a68" if running else "#ffffff",
                         stroke="#9aa4af", width=1))
        body.append(text(x + c * CELL + CELL / 2, y + r * CELL + 30, b, size=19, anchor="middle",
                         extra=' fill="#ffffff" font-weight="bold"' if running else ""))
    if group > 1:
        for g in range(1, ROWS // group):
            yy = y + g * group * CELL
            body.append(f'  <path d="M{x - 4} {yy}H{x + COLS * CELL + 4}" stroke="#2d3142" stroke-width="3"/>')
    body.append(text(x, y + ROWS * CELL + 34, f"A: {len(rows_a)} bands, B: {len(cols_b)} bands",
                     size=19, extra=f' fill="{MUTED}"'))


panel(56, 96, 1, "GROUP_M = 1")
panel(56 + COLS * CELL + 76, 96, GROUP, f"GROUP_M = {GROUP}")
H = 96 + ROWS * CELL + 60
write("block-order.svg", svg(W, H, "The order of the blocks: row by row, and in groups of rows",
                             "Two 6 by 6 grids of block tiles of C, each numbered with the block that computes "
                             "it. Left, GROUP_M = 1: blocks go along the first row, then the second. Right, "
                             "GROUP_M = 3: blocks go down three rows, then one column to the right, and the "
                             "next group of three rows starts after the first is done. The first nine blocks, "
                             "which run together, are filled in; the bands of A on the left and of B on top "
                             "that they read are dark: 2 bands of A and 6 of B row by row, 3 and 3 in groups.",
                             body))
