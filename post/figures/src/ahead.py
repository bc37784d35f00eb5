#!/usr/bin/env python3
"""Writes post/figures/ahead.svg: one warp's main-loop iteration, fragments loaded and then
multiplied (worklog step 10) against fragments loaded a WK step ahead (step 11).

    python3 post/figures/src/ahead.py
"""
from svgfig import INK, MUTED, rect, svg, text, write

W, X0, UNIT, LANE = 720, 110, 27, 40
COLOUR = {"wait": "#e0e0e0", "copy": "#d9822b", "load": "#4a6fa5", "mma": "#5b9a68"}
body = []


def bar(lane_y, t0, length, kind, label):
    x, w = X0 + t0 * UNIT, length * UNIT
    body.append(rect(round(x, 1), lane_y, round(w, 1), LANE - 8, COLOUR[kind], stroke="#ffffff", width=1.5))
    if label:
        dark = kind == "wait"
        body.append(text(round(x + w / 2, 1), lane_y + 22, label, size=16, anchor="middle",
                         extra="" if dark else ' fill="#ffffff" font-weight="bold"'))


def version(y, title, ahead):
    body.append(text(24, y, title, size=20, extra=' font-weight="bold"'))
    mem, tc = y + 16, y + 16 + LANE
    body.append(text(X0 - 12, mem + 22, "loads", size=17, anchor="end", extra=f' fill="{MUTED}"'))
    body.append(text(X0 - 12, tc + 22, "tensor", size=17, anchor="end", extra=f' fill="{MUTED}"'))
    t = 0.0
    starts = []
    if not ahead:
        for iteration in range(2):
            starts.append(t)
            bar(mem, t, 1.5, "wait", "sync"); t += 1.5
            bar(mem, t, 2.1, "copy", "copies"); t += 2.1
            bar(mem, t, 0.9, "load", "f0"); t += 0.9
            for q in range(4):
                bar(tc, t, 1.6, "mma", f"q{q}")
                if q < 3:
                    bar(mem, t + 0.2, 0.9, "load", f"f{q + 1}")
                t += 1.6
    else:
        bar(mem, t, 0.9, "load", "f0"); t += 0.9
        for iteration in range(2):
            starts.append(t)
            for q in range(4):
                bar(tc, t, 1.6, "mma", f"q{q}")
                if q == 0:
                    bar(mem, t + 0.05, 0.55, "copy", "")
                if q < 3:
                    bar(mem, t + 0.65, 0.9, "load", f"f{q + 1}")
                else:
                    bar(mem, t, 0.6, "wait", "")
                    bar(mem, t + 0.6, 0.9, "load", "f0")
                t += 1.6
    for s in starts:
        x = X0 + s * UNIT
        body.append(f'  <path d="M{x:.1f} {mem - 6}V{tc + LANE}" stroke="{INK}" stroke-width="1.5" '
                    'stroke-dasharray="4 3"/>')
    return tc + LANE, t


end_a, t_a = version(40, "Step 10: barrier, copies and first loads come first", False)
end_b, t_b = version(end_a + 50, "Step 11: the next first loads overlap this iteration", True)
y = end_b + 34
body.append(text(24, y, "Dashed: the start of a main-loop iteration (one k-tile, four WK steps q0–q3).", size=17,
                 extra=f' fill="{MUTED}"'))
body.append(text(24, y + 26, "Durations are drawn to show the order, not measured.", size=17,
                 extra=f' fill="{MUTED}"'))
write("ahead.svg", svg(W, y + 46, "Fragments loaded a step ahead: the tensor cores no longer wait at the start of an iteration",
                       "Two timelines of one warp over two main-loop iterations, each with a lane for loads, "
                       "copies and barriers and a lane for the tensor cores. In step 10, each iteration starts with "
                       "the wait and barrier, then the copy instructions of the next stage, then the first "
                       "fragment load, and only then the first multiplication, so the tensor cores sit idle "
                       "at every iteration's start. In step 11, the fragments of the next WK step load while the "
                       "current one is multiplied, and the wait, the barrier and the first load of the next "
                       "iteration happen during the last multiplication of this one, so the multiplications follow "
                       "each other without a gap.", body))
