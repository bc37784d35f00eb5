#!/usr/bin/env python3
"""Writes post/figures/hopper-pipeline.svg: the Hopper kernel's four stages over time, filled by
the producer's TMA copies and emptied by the consumers' wgmmas, with the two barriers of a
stage ("full" when its bytes have landed, "empty" when the consumers give it back).

    python3 post/figures/src/hopper_pipeline.py
"""
from svgfig import INK, MUTED, rect, svg, text, write

STAGES, STEPS = 4, 8
COPY, MULTIPLY = 2.6, 1.0          # durations in made-up units: the copies take longer
X0, UNIT, ROW = 150, 52, 34
COLOUR = {"copy": "#d9822b", "read": "#5b9a68", "idle": "#eeeeee"}

# The schedule: the producer copies step k into stage k % 4 once that stage is empty; the
# consumers multiply step k once it has landed and step k - 1 is done, and give the stage of
# step k - 1 back when they issue step k (their wait_group 1 has then seen k - 1 finish).
issue, landed, start, end, freed = {}, {}, {}, {}, {}
for k in range(STEPS):
    issue[k] = 0.0 if k < STAGES else freed[k - STAGES]
    landed[k] = issue[k] + COPY
    start[k] = max(landed[k], end.get(k - 1, 0.0))
    end[k] = start[k] + MULTIPLY
    if k > 0:
        freed[k - 1] = start[k]
freed[STEPS - 1] = end[STEPS - 1]

body = []
top = 56
x = lambda t: round(X0 + t * UNIT, 1)
body.append(text(24, 32, "Time runs to the right; each bar is one step along K (64 elements).", size=17,
                 extra=f' fill="{MUTED}"'))
rows = [f"stage {s}" for s in range(STAGES)] + ["wgmma, step"]
for r, name in enumerate(rows):
    y = top + r * (ROW + 14)
    body.append(text(X0 - 12, y + 23, name, size=17, anchor="end", extra=f' fill="{MUTED}"'))
for k in range(STEPS):
    y = top + (k % STAGES) * (ROW + 14)
    body.append(rect(x(issue[k]), y, round((landed[k] - issue[k]) * UNIT, 1), ROW, COLOUR["copy"],
                     stroke="#ffffff"))
    body.append(text(x((issue[k] + landed[k]) / 2), y + 23, f"copy {k}", size=15, anchor="middle",
                     extra=' fill="#ffffff" font-weight="bold"'))
    release = freed[k]
    body.append(rect(x(landed[k]), y, round((release - landed[k]) * UNIT, 1), ROW, COLOUR["read"],
                     stroke="#ffffff"))
    # "full": the bytes have landed; "empty": the consumers gave the stage back
    body.append(f'  <path d="M{x(landed[k])} {y - 4}V{y + ROW + 4}" stroke="{INK}" stroke-width="2"/>')
    body.append(f'  <path d="M{x(release)} {y - 4}V{y + ROW + 4}" stroke="{INK}" stroke-width="2" '
                'stroke-dasharray="4 3"/>')
    cy = top + STAGES * (ROW + 14)
    body.append(rect(x(start[k]), cy, round(MULTIPLY * UNIT, 1), ROW, COLOUR["read"], stroke="#ffffff"))
    body.append(text(x(start[k] + MULTIPLY / 2), cy + 23, f"{k}", size=16, anchor="middle",
                     extra=' fill="#ffffff" font-weight="bold"'))
y = top + (STAGES + 1) * (ROW + 14) + 22
legend = [("Orange: a step's TMA copy, issued by one producer thread once the stage is empty.", None),
          ("Green: the stage holds that step until both consumer warp groups are done with it.", None),
          ("Solid line: the stage's \u201cfull\u201d barrier completes (all its bytes have landed).", None),
          ("Dashed line: its \u201cempty\u201d barrier completes (eight consumer warps arrived).", None),
          ("Durations are made up to show the order: copies longer than a step of wgmma.", None)]
for i, (line, _) in enumerate(legend):
    body.append(text(24, y + 26 * i, line, size=16, extra=f' fill="{MUTED}"' if i == 4 else ""))
height = y + 26 * len(legend) + 10
W = max(700, round(x(end[STEPS - 1])) + 24)
write("hopper-pipeline.svg", svg(
    W, height, "The Hopper kernel's pipeline: four stages, filled by TMA copies and emptied by wgmma",
    "Four rows, one per shared-memory stage, and a row for the consumer warp groups, over time. "
    "The producer issues the copies of steps 0 to 3 at once, into stages 0 to 3; each lands later "
    "(the stage's full barrier). The consumers multiply step 0 as soon as it has landed, then step 1, "
    "and so on, each wgmma after the previous; a stage is given back (its empty barrier) once the "
    "consumers have moved on to the next step, and only then does the producer copy step 4 into "
    "stage 0. With copies slower than the arithmetic, the consumers wait for the copies; with four "
    "stages in flight, the copies of several steps overlap.", body))
