"""The decision boundary in the terminal: a map of the input plane in coloured half-blocks.

Each character is two grid cells, `▀` in the upper cell's colour on the lower's, so a 48 x
24 map of characters shows a 48 x 48 grid. Orange above the decision threshold, purple
below (the plots' palette), deeper the further from it; on top `o` a point of the positive
class, `x` of the negative, capitals on yellow where the network gets it wrong. Without
colour (piped, NO_COLOR): `#` above, `.` below, one grid cell per character. Pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from rich.text import Text

from gradviz.numbers import fmt
from gradviz.render.plot_looks import NONFINITE

if TYPE_CHECKING:  # the data drawn, computed by gradviz.boundary
    from gradviz.boundary import Boundary

COLUMNS, ROWS = 48, 24  # characters; the coloured map samples ROWS * 2 grid rows
# Purple below the threshold, orange above (the plot's PuOr), pale near it, deep far away.
BELOW = ("#d8daeb", "#998ec3", "#542788")
ABOVE = ("#fee0b6", "#f1a340", "#b35806")
NAN_COLOUR = NONFINITE[0]  # the plots'
WRONG = "bold black on #ffd700"
POINT_ON = {True: "bold white", False: "bold black"}  # on a deep / pale cell


def grid_shape(colour: bool) -> tuple[int, int]:
    """(columns, rows) of grid cells the map needs: two rows per character in colour."""
    return COLUMNS, ROWS * 2 if colour else ROWS


def boundary_map(b: Boundary, colour: bool = True) -> Text:
    """The map of `b` (a grid of `grid_shape(colour)` cells, rows increasing upwards in
    `b.output`), the points on it, and a line saying what the marks mean."""
    cells = _cells(b)
    marks = _marks(b)
    rows, columns = b.output.shape
    text = Text()
    if colour:
        for r in range(rows - 1, 0, -2):  # top of the plane first
            for c in range(columns):
                upper, lower = cells[r][c], cells[r - 1][c]
                mark = marks.get((r, c)) or marks.get((r - 1, c))
                if mark is not None:
                    char, wrong = mark
                    deep = upper in (BELOW[2], ABOVE[2], BELOW[1])
                    style = WRONG if wrong else f"{POINT_ON[deep]} on {upper}"
                    text.append(char.upper() if wrong else char, style=style)
                else:
                    text.append("▀", style=f"{upper} on {lower}")
            text.append("\n")
    else:
        for r in range(rows - 1, -1, -1):
            for c in range(columns):
                mark = marks.get((r, c))
                value = b.output[r, c]
                if mark is not None:
                    text.append(mark[0].upper() if mark[1] else mark[0])
                elif not np.isfinite(value):
                    text.append("!")
                else:
                    text.append("#" if b.positive(value) else ".")
            text.append("\n")
    text.append(_legend(b, colour), style="dim")
    return text


def _cells(b: Boundary) -> list[list[str]]:
    """The colour of every grid cell: pale near the threshold, deep far from it."""
    finite = b.output[np.isfinite(b.output)]
    reach = float(np.max(np.abs(finite - b.threshold))) if finite.size else 1.0
    if b.output_activation == "sigmoid":
        reach = max(b.threshold, 1 - b.threshold)
    out = []
    for row in b.output.tolist():
        line = []
        for v in row:
            if not np.isfinite(v):
                line.append(NAN_COLOUR)
            else:
                distance = abs(v - b.threshold) / reach if reach > 0 else 1.0
                side = ABOVE if b.positive(v) else BELOW
                line.append(side[0 if distance < 0.2 else 1 if distance < 0.6 else 2])
        out.append(line)
    return out


def _marks(b: Boundary) -> dict[tuple[int, int], tuple[str, bool]]:
    """(grid row, column) -> (`o` or `x`, misclassified) for the cell each point falls in;
    where points share a cell, a misclassified one wins."""
    marks: dict[tuple[int, int], tuple[str, bool]] = {}
    points = zip(b.points.tolist(), b.targets.tolist(), b.wrong.tolist(), strict=True)
    for (x, y), target, bad in points:
        cell = b.cell(x, y)
        if cell is None:
            continue
        char = "o" if target > b.threshold else "x"
        if cell not in marks or (bad and not marks[cell][1]):
            marks[cell] = (char, bad)
    return marks


def _legend(b: Boundary, colour: bool) -> str:
    cut = fmt(b.threshold)
    x0, x1 = b.feature_names
    x_lo, x_hi, y_lo, y_hi = b.extent
    box = f"{x0} {fmt(x_lo, 2)} … {fmt(x_hi, 2)} →, {x1} {fmt(y_lo, 2)} … {fmt(y_hi, 2)} ↑"
    regions = "orange" if colour else "#", "purple" if colour else "."
    return (
        f"{box}\n{regions[0]}: output > {cut}, {regions[1]}: ≤ {cut}\n"
        f"o/x: target > {cut} / ≤ {cut}; O/X misclassified: {int(b.wrong.sum())} of "
        f"{len(b.targets)}"
    )
