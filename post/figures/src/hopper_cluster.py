#!/usr/bin/env python3
"""Writes post/figures/hopper-cluster.svg: what the two blocks of a cluster share. They compute
neighbouring 128-row bands of C in the same 256 columns, so they read the same band of B; each
copies its own band of A and one half of B, and the TMA writes that half into both blocks'
shared memory (multicast).

    python3 post/figures/src/hopper_cluster.py
"""
from svgfig import INK, MUTED, rect, svg, text, write

W, H = 720, 490
A_FILL, B0_FILL, B1_FILL = "#e8eef7", "#fff3e6", "#eef5ee"
A_EDGE, B0_EDGE, B1_EDGE = "#4a6fa5", "#d9822b", "#5b9a68"
body = []


def arrow(x1, y1, x2, y2, dashed=False):
    dash = ' stroke-dasharray="6 4"' if dashed else ""
    body.append(f'  <path d="M{x1} {y1}L{x2} {y2}" stroke="{INK}" stroke-width="2"{dash} '
                'marker-end="url(#hc-arrow)"/>')


def note(x, y, s, anchor=None):
    body.append(text(x, y, s, size=15, anchor=anchor, extra=f' font-style="italic" fill="{MUTED}"'))


# Global memory: B's band for one step (two halves of 128 columns) above, A's two bands on the left.
body.append(text(24, 36, "global memory, one step of 64 along K", size=16, extra=f' fill="{MUTED}"'))
body.append(rect(250, 52, 200, 44, B0_FILL, B0_EDGE, 2))
body.append(rect(450, 52, 200, 44, B1_FILL, B1_EDGE, 2))
body.append(text(350, 80, "B, columns 0-127", size=15, anchor="middle"))
body.append(text(550, 80, "B, columns 128-255", size=15, anchor="middle"))
body.append(rect(24, 150, 150, 90, A_FILL, A_EDGE, 2))
body.append(rect(24, 290, 150, 90, A_FILL, A_EDGE, 2))
body.append(text(99, 190, "A, rows", size=15, anchor="middle"))
body.append(text(99, 210, "0-127", size=15, anchor="middle"))
body.append(text(99, 330, "A, rows", size=15, anchor="middle"))
body.append(text(99, 350, "128-255", size=15, anchor="middle"))

# The cluster: two blocks, each with its shared-memory stage (A and the whole of B).
body.append(f'  <rect x="220" y="128" width="484" height="282" rx="10" fill="#ffffff" stroke="{INK}" '
            'stroke-width="1.5" stroke-dasharray="6 4"/>')
body.append(text(690, 400, "a cluster of two blocks, on two multiprocessors", size=15, anchor="end",
                 extra=f' fill="{MUTED}"'))
for y, name in ((150, "block 0"), (270, "block 1")):
    body.append(text(236, y + 18, name, size=16, extra=' font-weight="bold"'))
    body.append(rect(236, y + 30, 90, 60, A_FILL, A_EDGE, 2))
    body.append(text(281, y + 66, "A", size=16, anchor="middle"))
    body.append(rect(356, y + 30, 137, 60, B0_FILL, B0_EDGE, 2))
    body.append(rect(493, y + 30, 137, 60, B1_FILL, B1_EDGE, 2))
    body.append(text(424, y + 66, "B, first half", size=15, anchor="middle"))
    body.append(text(561, y + 66, "B, second half", size=15, anchor="middle"))

# Each block's own A; block 0 copies B's first half into both, block 1 the second half.
arrow(174, 195, 234, 210)
arrow(174, 335, 234, 330)
arrow(400, 96, 424, 178)
arrow(340, 96, 362, 298, dashed=True)
arrow(560, 96, 561, 178, dashed=True)
arrow(645, 96, 626, 298)
note(236, 70, "each half is read once", "end")
note(236, 90, "and written into both blocks", "end")
note(24, 448, "solid: a copy into the shared memory of the block that issues it;")
note(24, 470, "dashed: the same copy, multicast into its partner's")

write("hopper-cluster.svg", svg(
    W, H, "What the two blocks of a cluster share",
    "One step of the Hopper kernel with a cluster of two blocks. In global memory, the step's band "
    "of B is split into two halves of 128 columns, and A has two bands of 128 rows. Block 0 computes "
    "C rows 0 to 127 and block 1 rows 128 to 255, in the same 256 columns, so both need the whole "
    "band of B. Each block copies its own band of A into its shared memory. Block 0 copies B's "
    "first half and block 1 the second, each with one multicast TMA copy that writes the half into "
    "the shared memory of both blocks: each half of B is read from L2 once and written twice.",
    body, arrow_id="hc-arrow"))
