#!/usr/bin/env python3
"""Writes post/figures/hopper-descriptor.svg: a consumer's 64 rows of A in one stage as a wgmma
matrix descriptor describes them (groups of eight 128-byte rows, the stride byte offset between
groups, the four wgmmas of a step 32 bytes apart), and the descriptor's 64 bits.

    python3 post/figures/src/hopper_descriptor.py
"""
from svgfig import INK, MUTED, rect, svg, text, write

X0, BYTE, BAND = 110, 3.2, 24          # left edge, pixels per byte, height of a group of 8 rows
W = 720
SHADES = ["#4a6fa5", "#7d9cc6", "#a9bfdc", "#d3deed"]
body = []

# The stage: 8 groups of 8 rows, each row 128 bytes (64 half along K).
y = 40
body.append(text(X0, y, "A: one consumer's 64 rows of a stage, K-major", size=17,
                 extra=' font-weight="bold"'))
y += 30
for w in range(4):                     # the four wgmmas of a step: 16 half = 32 bytes each
    x = X0 + w * 32 * BYTE
    body.append(text(x + 16 * BYTE, y, f"wgmma {w}", size=15, anchor="middle"))
    body.append(text(x + 16 * BYTE, y + 18, f"+{32 * w} B", size=14, anchor="middle",
                     extra=f' fill="{MUTED}"'))
y += 28
top = y
for g in range(8):
    yy = top + g * BAND
    for w in range(4):
        body.append(rect(X0 + w * 32 * BYTE, yy, 32 * BYTE, BAND - 3, SHADES[w],
                         stroke="#c9d1db", width=1))
    body.append(text(X0 - 10, yy + 15, f"rows {8 * g}–{8 * g + 7}", size=14, anchor="end"))
right = X0 + 128 * BYTE
# The stride byte offset: from one group of eight rows to the next.
ax = right + 22
body.append(f'  <path d="M{ax} {top}V{top + BAND}" stroke="{INK}" stroke-width="1.5" '
            'marker-start="url(#desc-arrow)" marker-end="url(#desc-arrow)"/>')
body.append(text(ax + 10, top + 12, "stride byte offset", size=14))
body.append(text(ax + 10, top + 30, "1024 B = 8 × 128 B", size=14))
body.append(text(X0, top + 8 * BAND + 22, "wgmma w reads bytes 32w to 32w + 31 of every row.",
                 size=14, extra=f' fill="{MUTED}" font-style="italic"'))

# The descriptor's 64 bits, bit 0 on the left.
y = top + 8 * BAND + 62
body.append(text(40, y, "The descriptor: 64 bits", size=17, extra=' font-weight="bold"'))
y += 14
BIT, BX = 10, 40
fields = [(0, 14, "start address ÷ 16", "#d3deed"), (14, 16, "", "#ffffff"),
          (16, 30, "leading offset ÷ 16", "#eef1f5"), (30, 32, "", "#ffffff"),
          (32, 46, "stride offset ÷ 16", "#d3deed"), (46, 62, "0 here", "#ffffff"),
          (62, 64, "", "#4a6fa5")]
for lo, hi, label, fill in fields:
    body.append(rect(BX + lo * BIT, y, (hi - lo) * BIT, 30, fill, stroke="#8a96a6", width=1))
    if label:
        body.append(text(BX + (lo + hi) / 2 * BIT, y + 20, label, size=12, anchor="middle"))
for bit in (0, 16, 32):
    body.append(text(BX + bit * BIT, y + 48, str(bit), size=13, extra=f' fill="{MUTED}"'))
body.append(text(BX + 64 * BIT, y + 48, "62–63: swizzle", size=13, anchor="end"))
body.append(text(BX, y + 74, "The four wgmmas of a step differ only in the start address field.",
                 size=14, extra=f' fill="{MUTED}" font-style="italic"'))
H = y + 94
defs_id = "desc-arrow"
write("hopper-descriptor.svg", svg(W, H, "A wgmma matrix descriptor and the operand it describes",
                                   "Above, a consumer's 64 rows of A in one stage, drawn as eight groups "
                                   "of eight rows of 128 bytes; the stride byte offset, 1024 bytes, is the "
                                   "distance from one group to the next. The 128 bytes of a row are cut "
                                   "into four parts of 32 bytes, 16 half values along K, one per wgmma of "
                                   "a step, starting 0, 32, 64 and 96 bytes into the row. Below, the "
                                   "descriptor's 64 bits: the start address divided by 16 in bits 0 to "
                                   "13, the leading byte offset in bits 16 to 29, the stride byte offset "
                                   "in bits 32 to 45, and the swizzle in bits 62 and 63.", body,
                                   arrow_id=defs_id))
