"""The terminal's decision-boundary map, rendered into a recording console of fixed width
and compared as text, for one sigmoid neuron whose boundary is the diagonal x0 = x1."""

from __future__ import annotations

import io

from plot_cases import diagonal_network, square_data
from rich.console import Console

from gradviz.boundary import boundary
from gradviz.render.boundary_map import ABOVE, BELOW, COLUMNS, ROWS, boundary_map, grid_shape

# Targets: (0,0) 0, (0,1) 0, (1,0) 1, (1,1) 1. The neuron gives exactly 0.5 on the diagonal,
# which is not above the threshold: (1,1) is misclassified (O), (0,0) is right (x).
PLAIN = """\
...............................................#
....x.......................................O###
...........................................#####
.........................................#######
.......................................#########
.....................................###########
...................................#############
.................................###############
...............................#################
.............................###################
...........................#####################
.........................#######################
.......................#########################
.....................###########################
...................#############################
.................###############################
...............#################################
.............###################################
...........#####################################
.........#######################################
.......#########################################
....x#######################################o###
...#############################################
.###############################################
x0 -0.1 … 1.1 →, x1 -0.1 … 1.1 ↑
#: output > 0.5, .: ≤ 0.5
o/x: target > 0.5 / ≤ 0.5; O/X misclassified: 1 of 4
"""


def diagonal(colour: bool):
    data = square_data(targets=(0.0, 0.0, 1.0, 1.0))
    return boundary(diagonal_network(), data, *grid_shape(colour))


def test_plain_map_is_the_diagonal_with_its_points() -> None:
    console = Console(record=True, width=80, color_system=None, file=io.StringIO())
    console.print(boundary_map(diagonal(colour=False), colour=False))
    assert console.export_text() == PLAIN
    # the region rule, derived again: '#' exactly where the cell's centre has x0 > x1
    b = diagonal(colour=False)
    lines = PLAIN.splitlines()[:ROWS]
    for k, line in enumerate(lines):
        y = b.ys[ROWS - 1 - k]
        for c, char in enumerate(line):
            if char in "#.":
                assert (char == "#") == (b.xs[c] > y), (k, c)


def test_colour_map_paints_each_half_block_by_its_own_grid_cell() -> None:
    console = Console(
        record=True, width=80, color_system="truecolor", force_terminal=True, file=io.StringIO()
    )
    b = diagonal(colour=True)
    console.print(boundary_map(b, colour=True))
    lines = console.export_text().splitlines()
    assert len(lines) == ROWS + 3 and all(len(line) == COLUMNS for line in lines[:ROWS])
    assert lines[ROWS + 1] == "orange: output > 0.5, purple: ≤ 0.5"
    hexes = {name: set(shades) for name, shades in (("above", ABOVE), ("below", BELOW))}
    rows = [[]]
    for segment in console.render(boundary_map(b, colour=True)):
        if segment.text == "\n":
            rows.append([])
        elif segment.text:
            rows[-1].append(segment)
    points = {}
    for k, row in enumerate(rows[:ROWS]):
        upper, lower = 2 * (ROWS - 1 - k) + 1, 2 * (ROWS - 1 - k)
        for c, segment in enumerate(row):
            if segment.text != "▀":
                points[(k, c)] = (segment.text, segment.style.bgcolor.triplet.hex)
                continue
            for cell, colour in ((upper, segment.style.color), (lower, segment.style.bgcolor)):
                side = "above" if b.xs[c] > b.ys[cell] else "below"
                assert colour.triplet.hex in hexes[side], (k, c, cell)
    # the four corners: (0,1) top left, (1,1) top right (wrong), (0,0), (1,0) bottom
    assert {k: text for k, (text, _) in points.items()} == {
        (1, 4): "x",
        (1, 44): "O",
        (21, 4): "x",
        (21, 44): "o",
    }
    assert points[(1, 44)][1] == "#ffd700"  # a misclassified point on yellow


def test_far_from_the_boundary_is_deep_and_near_it_pale() -> None:
    console = Console(
        record=True, width=80, color_system="truecolor", force_terminal=True, file=io.StringIO()
    )
    b = diagonal(colour=True)
    first = next(iter(console.render(boundary_map(b, colour=True))))
    assert first.style.color.triplet.hex == BELOW[2]  # top left: x0 − x1 = −1.2, far below
