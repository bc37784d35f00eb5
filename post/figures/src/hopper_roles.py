#!/usr/bin/env python3
"""Writes post/figures/hopper-roles.svg: the three warp groups of a block of the Hopper kernel,
what each one does and with how many registers, and where the data goes.

    python3 post/figures/src/hopper_roles.py
"""
from svgfig import INK, MUTED, rect, svg, text, write

W, H = 720, 470
body = []


def box(x, y, w, h, title, lines, fill, stroke):
    body.append(f'  <rect x="{x}" y="{y}" width="{w}" height="{h}" rx="8" fill="{fill}" '
                f'stroke="{stroke}" stroke-width="2"/>')
    body.append(text(x + 12, y + 26, title, size=18, extra=' font-weight="bold"'))
    for i, line in enumerate(lines):
        body.append(text(x + 12, y + 50 + 22 * i, line, size=16))


def arrow(x1, y1, x2, y2, label=None, lx=None, ly=None, anchor=None):
    body.append(f'  <path d="M{x1} {y1}L{x2} {y2}" stroke="{INK}" stroke-width="2" '
                'marker-end="url(#hr-arrow)"/>')
    if label:
        body.append(text(lx, ly, label, size=15, anchor=anchor, extra=f' font-style="italic" fill="{MUTED}"'))


# Global memory on the left, the block on the right.
box(16, 52, 150, 150, "global", ["A: 128 rows,", "B: 256 columns", "of each step;", "then the tile's C"],
    "#f4f4f4", "#888888")
box(16, 330, 150, 90, "global", ["C: the block's", "128 x 256"], "#f4f4f4", "#888888")
body.append(f'  <rect x="200" y="16" width="504" height="438" rx="10" fill="#ffffff" stroke="{INK}" '
            'stroke-width="1.5" stroke-dasharray="6 4"/>')
body.append(text(216, 38, "one block: 3 warp groups of 128 threads", size=16, extra=f' fill="{MUTED}"'))
box(216, 52, 230, 98, "producer", ["1 thread issues the TMA", "copies; 40 registers"], "#fff3e6", "#d9822b")
box(470, 52, 218, 150, "shared memory", ["4 stages of A and B", "(and C), 48 KiB each,",
                                         "swizzled, 2 barriers", "each; 2 boxes of C out", "per consumer"],
    "#eef5ee", "#5b9a68")
box(216, 250, 230, 90, "consumer 1", ["rows 0-63: 128 accu-", "mulators, 232 registers"], "#e8eef7", "#4a6fa5")
box(216, 354, 230, 90, "consumer 2", ["rows 64-127: the same"], "#e8eef7", "#4a6fa5")
arrow(166, 176, 468, 176, "TMA copies, issued by the producer", 331, 200, "middle")
arrow(500, 202, 448, 290, None)
arrow(510, 202, 448, 395, "wgmma reads", 580, 300, "middle")
body.append(text(580, 320, "A and B here", size=15, anchor="middle", extra=f' font-style="italic" fill="{MUTED}"'))
arrow(214, 300, 168, 365, None)
arrow(214, 398, 168, 380, "alpha AB + beta C by TMA", 110, 460, "middle")
write("hopper-roles.svg", svg(
    W, H + 10, "The Hopper kernel's block: a producer warp group and two consumer warp groups",
    "On the left, global memory: A and B, of which each step copies 128 rows of A and 256 columns "
    "of B, then the tile's C; below, the block's part of C, where the results go. On the right, one "
    "block of three warp groups. The producer, with 40 registers per thread, has one thread issue "
    "TMA copies into four shared-memory stages of 48 KiB, each with a full and an empty barrier: "
    "a tile's steps of A and B, then its C; beside the stages, two boxes of C on their way out for "
    "each consumer. Two consumer warp groups, with 232 "
    "registers per thread, read A and B from shared memory through wgmma, one for rows 0 to 63 "
    "and one for rows 64 to 127, keep the accumulators in registers, and at the end read C from "
    "the stages and write alpha AB plus beta C into their boxes in shared memory, from which the "
    "TMA stores it to global memory.", body, arrow_id="hr-arrow"))
