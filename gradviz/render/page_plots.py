"""The report page's three plots as inline SVG (`svgplot`, no matplotlib): the curves, the
decision boundary with the first hidden layer's units, the gradients per layer. Their looks are
`plot_looks`', shared with `plots`; `report.js` moves the epoch slider's marker by the `data-*`
attributes written here."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from gradviz.numbers import fmt
from gradviz.render import plot_looks as looks
from gradviz.render.plot_looks import STATUS_MEANINGS
from gradviz.render.svgplot import (
    CHAR_WIDTH,
    Scale,
    bottom_axis,
    circle,
    colour_array,
    colour_bar,
    colour_rgb,
    decades,
    esc,
    frame,
    grid_lines,
    hex_rgb,
    image,
    line,
    linear_ticks,
    log_ticks,
    num,
    rect,
    side_axis,
    svg,
    text,
    text_width,
    value_axis,
)
from gradviz.text import printable

if TYPE_CHECKING:
    from gradviz.boundary import Boundary
    from gradviz.records import Diagnosis, History

WIDTH = 800
MAX_POINTS = 1500  # a curve of more points keeps each pixel column's lowest and highest
MAX_MARKS = 5000  # data points drawn on the boundary; above, the first, and a note says so
MAX_COLUMNS = 400  # heat-map columns; above, every k-th recorded epoch, and a note says so
# matplotlib's hatch -> the page's pattern: its name, its marks on a 6 x 6 tile, their width
HATCH = {
    "xxx": ("cross", "M0,0 L6,6 M6,0 L0,6", "0.9"),
    "...": ("dots", "M1.5,1.5 h0.01 M4.5,4.5 h0.01", "1.6"),
    "////": ("lines", "M-1,7 L7,-1 M-1,1 L1,-1 M5,7 L7,5", "0.9"),
}


def _title(title: str, subtitle: str) -> str:
    """The title, then the circumstances, cut with … to the plot's width (a long file
    name; the page's heading has it whole)."""
    room = int((WIDTH - 16) / (13 * CHAR_WIDTH))
    title = _clip(title, room)
    body = f'<tspan font-weight="bold">{esc(title)}</tspan>'
    if subtitle and room - len(title) > 8:
        body += f'<tspan class="soft"> · {esc(_clip(subtitle, room - len(title) - 3))}</tspan>'
    return f'<text x="8" y="18" font-size="13">{body}</text>'


def _clip(label: str, most: int) -> str:
    return looks.clip(printable(label), most)


def _curve(xs: list[float], values: Sequence[float], y: Scale, colour: str, name: str) -> str:
    """One polyline per run of finite values (NaN/inf leave gaps)."""
    runs: list[list[str]] = [[]]
    for px, py in _thin(xs, [y(v) if math.isfinite(v) else v for v in values]):
        if math.isfinite(py):
            runs[-1].append(f"{num(px)},{num(py)}")
        elif runs[-1]:
            runs.append([])
    d = " ".join(
        ("M" + " L".join(run)) if len(run) > 1 else f"M{run[0]} h0.01" for run in runs if run
    )
    if not d:
        return ""
    return (
        f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="1.6" '
        f'stroke-linejoin="round" stroke-linecap="round" class="curve {name}"/>'
    )


def _thin(xs: list[float], ys: list[float]) -> list[tuple[float, float]]:
    """At most about 2 x MAX_POINTS points: beyond, each pixel column keeps its first,
    lowest, highest and last point (the envelope a line of so many points draws anyway);
    a non-finite value always stays, to break the line."""
    points = list(zip(xs, ys, strict=True))
    if len(points) <= MAX_POINTS:
        return points
    kept: list[tuple[float, float]] = []
    by_column = itertools.groupby(points, key=lambda p: (round(p[0]), math.isfinite(p[1])))
    for (_, finite), run in by_column:
        column = list(run)
        if finite and len(column) > 4:
            low = min(column, key=lambda p: p[1])
            high = max(column, key=lambda p: p[1])
            column = [column[0], *sorted({low, high}, key=column.index), column[-1]]
        kept += column
    return kept


def _panel(
    name: str,
    label: str,
    x: Scale,
    y: Scale,
    xticks: list[float],
    ticks: list[float],
    labels: list[str] | None,
    below: list[str],
) -> list[str]:
    """Axes of the curves: the grid, the value axis, what is `below` it, its name."""
    return [
        *grid_lines([x(t) for t in xticks], y.end, y.start, vertical=True),
        *grid_lines([y(t) for t in ticks], x.start, x.end, vertical=False),
        *side_axis(name, y, x.start, ticks, labels),
        *below,
        text(18, (y.end + y.start) / 2, label, 12, "middle", rotate=True),
    ]


# -- loss and accuracy ---------------------------------------------------------------------


def curves_svg(
    loss: Sequence[float],
    accuracy: Sequence[float],
    every: int = 1,
    title: str = "loss and accuracy",
    subtitle: str = "",
    unit: str = "epoch",
) -> str:
    """`plots.curves_plot`'s picture; a run recorded elsewhere counts optimizer steps
    (`unit="step"`), each point its batch's."""
    left, right = 78, WIDTH - 24
    top_a, top_b = 48, 238  # the loss axes
    acc_a, acc_b = 262, 372  # the accuracy axes
    epochs, log, drawn, finite, moved = looks.loss_series(loss, every)
    last = epochs[-1] if epochs else 1
    x = Scale(0, last, left, right)
    parts = [_title(title, subtitle), text(left, top_a - 8, looks.PER_POINT[unit], 11, cls="soft")]
    y, ticks = value_axis(finite, log, top_b, top_a)
    xticks = linear_ticks(0, last, 8, integer=True)
    below = [line(left, top_b, right, top_b)]
    parts += _panel("loss", looks.LOSS_AXIS[log], x, y, xticks, ticks, None, below)
    xs = [x(e) for e in epochs]
    parts.append(_curve(xs, drawn, y, looks.LOSS_COLOUR, "loss"))
    notes = []
    if moved:
        bounds = f"between {looks.PLOT_MIN:g} and {looks.PLOT_MAX:g}"
        notes.append(f"drawn {bounds}" if log else f"drawn within ±{looks.PLOT_MAX:g}")
    marks = sorted({round(px) for px, v in zip(xs, drawn, strict=True) if not math.isfinite(v)})
    if marks:  # an x above the axis where the loss is NaN/inf
        d = " ".join(f"M{p - 4},{num(top_b - 10)} l8,8 m0,-8 l-8,8" for p in marks)
        parts.append(f'<path d="{d}" stroke="{looks.BAD_MARK}" stroke-width="1.6" class="bad"/>')
        notes.append(looks.BAD_LOSS)
    if notes:
        parts.append(text(right, top_a + 14, "; ".join(notes), 11, "end", "note"))
    a = Scale(*looks.ACCURACY_RANGE, acc_b, acc_a)
    aticks = [0.0, 0.25, 0.5, 0.75, 1.0]
    percents = [f"{round(t * 100)}%" for t in aticks]
    epoch_axis = bottom_axis(unit, x, acc_b, xticks, [str(round(t)) for t in xticks])
    parts += _panel("accuracy", "accuracy", x, a, xticks, aticks, percents, epoch_axis)
    parts.append(_curve(xs, accuracy, a, looks.ACCURACY_COLOUR, "accuracy"))
    if accuracy and not any(math.isfinite(v) for v in accuracy):
        parts.append(text(right, acc_a + 14, "no accuracy recorded", 11, "end", "note"))
    parts.append(text((left + right) / 2, acc_b + 34, unit, 12, "middle"))
    # the epoch chosen on the page's slider: x = a + b * epoch
    parts.append(
        f'<line x1="-10" y1="{top_a}" x2="-10" y2="{acc_b}" class="now" '
        f'data-x="{x(0)!r} {(x(1) - x(0))!r}"/>'
    )
    return svg(WIDTH, acc_b + 44, f"loss and accuracy per {unit}", parts, "curves")


# -- the decision boundary -----------------------------------------------------------------


def _two_slope(values: np.ndarray, lo: float, centre: float, hi: float) -> np.ndarray:
    """matplotlib's TwoSlopeNorm: lo…centre onto 0…0.5, centre…hi onto 0.5…1."""
    with np.errstate(all="ignore"):
        below = 0.5 * (values - lo) / (centre - lo) if centre > lo else np.zeros_like(values)
        above = 0.5 + 0.5 * (values - centre) / (hi - centre) if hi > centre else 0.5 + 0 * values
    return np.where(values < centre, below, above)


def _map(
    x: float, y: float, side: float, values: np.ndarray, name: str, t: np.ndarray, cls: str = "map"
) -> str:
    """A square raster of the grid's colours (its rows go upwards), NaN/inf cyan."""
    rgb = colour_array(name, t)
    rgb[~np.isfinite(values)] = hex_rgb(looks.NONFINITE[0])
    return image(x, y, side, side, rgb[::-1], f"pixels {cls}")


def contour(b: Boundary, x: Scale, y: Scale) -> str:
    """The threshold's contour by marching squares on the grid points (cell centres):
    one segment per grid square the level crosses, crossing points interpolated on its
    edges; a square crossed on all four edges is split by its centre's side."""
    z = b.output - b.threshold
    above = z > 0
    finite = np.isfinite(z)
    ok = finite[:-1, :-1] & finite[1:, :-1] & finite[:-1, 1:] & finite[1:, 1:]
    corners = above[:-1, :-1].astype(int) + above[1:, :-1] + above[:-1, 1:] + above[1:, 1:]
    rows, cols = np.nonzero(ok & (corners > 0) & (corners < 4))
    xs, ys, grid = b.xs.tolist(), b.ys.tolist(), z.tolist()
    segments = []
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        # corners counter-clockwise from the lower left: (row, column)
        square = [(i, j), (i, j + 1), (i + 1, j + 1), (i + 1, j)]
        crossings = []
        for (r1, c1), (r2, c2) in zip(square, square[1:] + square[:1], strict=True):
            v1, v2 = grid[r1][c1], grid[r2][c2]
            if (v1 > 0) != (v2 > 0):
                f = v1 / (v1 - v2)
                px = xs[c1] + f * (xs[c2] - xs[c1])
                py = ys[r1] + f * (ys[r2] - ys[r1])
                crossings.append((x(px), y(py)))
        if len(crossings) == 4:
            centre = sum(grid[r][c] for r, c in square) > 0
            first = grid[i][j] > 0
            pairs = [(0, 1), (2, 3)] if centre != first else [(0, 3), (1, 2)]
        else:
            pairs = [(0, 1)]
        for p, q in pairs:
            (x1, y1), (x2, y2) = crossings[p], crossings[q]
            segments.append(f"M{num(x1)},{num(y1)}L{num(x2)},{num(y2)}")
    if not segments:
        return ""
    return (
        f'<path d="{"".join(segments)}" fill="none" stroke="#000000" stroke-width="1.2" '
        'class="contour"/>'
    )


def unmappable(b: Boundary) -> str | None:
    """Why the plane around the data cannot be drawn (its box or its width beyond the
    largest float), or None."""
    x0, x1, y0, y1 = b.extent
    if all(math.isfinite(v) for v in (x0, x1, y0, y1, x1 - x0, y1 - y0)):
        return None
    return (
        "No decision boundary: the inputs span more than a float can hold "
        f"({fmt(float(b.points.min()))} … {fmt(float(b.points.max()))}); rescale them."
    )


def boundary_svg(b: Boundary, title: str = "decision boundary", subtitle: str = "") -> str:
    """`plots.boundary_plot`'s picture: circles above the threshold, squares at or below."""
    hidden = b.hidden[: looks.MAX_HIDDEN_MAPS]
    left, top, size = 62, 40, 340
    x0, x1, y0, y1 = b.extent
    x = Scale(x0, x1, left, left + size)
    y = Scale(y0, y1, top + size, top)
    lo, hi = looks.output_norm(b)
    t = _two_slope(b.output, lo, b.threshold, hi)
    parts = [_title(title, subtitle), _map(left, top, size, b.output, looks.BOUNDARY_MAP, t)]
    parts.append(contour(b, x, y))
    parts += _points(b, x, y)
    parts.append(frame(left, top, size, size))
    parts += bottom_axis("x0", x, top + size, linear_ticks(x0, x1, 6))
    parts += side_axis("x1", y, left, linear_ticks(y0, y1, 6))
    parts.append(text(left + size / 2, top + size + 34, b.feature_names[0], 12, "middle"))
    parts.append(text(16, top + size / 2, b.feature_names[1], 12, "middle", rotate=True))
    # the colour bar: the two halves of the map, threshold marked
    bx = left + size + 12
    parts.append(colour_bar(looks.BOUNDARY_MAP, bx, top, 14, size))
    bar = Scale(lo, hi, top + size, top)
    parts += side_axis("output", bar, bx + 14, linear_ticks(lo, hi, 5), side=1)
    parts.append(line(bx, bar(b.threshold), bx + 14, bar(b.threshold), "threshold"))
    label, *keys = looks.boundary_words(b)
    parts.append(text(bx + 62, top + size / 2, label, 11, "middle", rotate=True))
    parts += _boundary_legend(b, left, top + size + 54, keys)
    if hidden:
        parts += _hidden_maps(b, hidden, bx + 86, top)
    label = "the decision boundary over the input plane"
    return svg(WIDTH, top + size + 104, label, parts, "boundary")


def _points(b: Boundary, x: Scale, y: Scale) -> list[str]:
    """The data: a black halo under a white-edged mark, coloured by class; misclassified
    points ringed white and black."""
    n = len(b.targets)
    shown = min(n, MAX_MARKS)
    r = 7.0 if n <= looks.FEW_POINTS else 3.6
    positive = (b.targets > b.threshold).tolist()[:shown]
    wrong = b.wrong.tolist()[:shown]
    halo, marks, rings = [], [], []
    for (px, py), pos, bad in zip(b.points[:shown].tolist(), positive, wrong, strict=True):
        if not (math.isfinite(px) and math.isfinite(py)):
            continue
        cx, cy = x(px), y(py)
        if pos:
            halo.append(circle(cx, cy, r + 1.5))
            marks.append(circle(cx, cy, r, f' fill="{looks.POSITIVE}"'))
        else:
            s = r * 0.9
            halo.append(rect(cx - s - 1.5, cy - s - 1.5, 2 * s + 3, 2 * s + 3, "#000000"))
            marks.append(rect(cx - s, cy - s, 2 * s, 2 * s, looks.NEGATIVE))
        if bad:
            rings.append(circle(cx, cy, 2 * r))
    parts = [
        f'<g fill="#000000" class="halo">{"".join(halo)}</g>',
        f'<g stroke="#ffffff" stroke-width="1" class="marks">{"".join(marks)}</g>',
    ]
    if rings:
        body = "".join(rings)
        parts.append(f'<g fill="none" stroke="#ffffff" stroke-width="3.2">{body}</g>')
        parts.append(f'<g fill="none" stroke="#000000" stroke-width="1.6" class="wrong">{body}</g>')
    if shown < n:
        note = f"the first {shown:,} of {n:,} points"
        parts.append(text(x.end - 4, y.end + 14, note, 11, "end", "note"))
    return parts


def _boundary_legend(b: Boundary, left: float, y: float, keys: list[str]) -> list[str]:
    above, below, ringed, level = keys
    parts = [
        circle(left + 6, y - 4, 6, f' fill="{looks.POSITIVE}" stroke="#000000"'),
        text(left + 18, y, above, 11),
        rect(left + 1, y + 13, 10, 10, looks.NEGATIVE, ' stroke="#000000"'),
        text(left + 18, y + 22, below, 11),
        circle(left + 186, y - 4, 7, ' fill="none" stroke-width="1.6" class="ink-stroke"'),
        text(left + 200, y, ringed, 11),
        line(left + 176, y + 18, left + 196, y + 18, "threshold-key"),
        text(left + 200, y + 22, level, 11),
    ]
    if not np.isfinite(b.output).all():
        parts.append(rect(left + 1, y + 31, 10, 10, looks.NONFINITE[0], ' stroke="#000000"'))
        parts.append(text(left + 18, y + 40, "output NaN/inf", 11))
    return parts


def _hidden_maps(b: Boundary, hidden: list[np.ndarray], left: float, top: float) -> list[str]:
    """One small map per unit of the first hidden layer, on one shared viridis scale."""
    columns, rows, heading, name = looks.hidden_grid(b, hidden)
    gap = 8
    room = WIDTH - 12 - left
    side = min((room - gap * (columns - 1)) / columns, (300 - 16 * rows) / rows)
    lo, hi = (looks.within(v) for v in looks.hidden_range(b, hidden))
    parts = [text(left + room / 2, top + 4, heading, 12, "middle")]
    x0, x1, y0, y1 = b.extent
    # the data on every map: the same dots, placed once relative to a map's corner
    sx, sy = Scale(x0, x1, 0, side), Scale(y0, y1, side, 0)
    dots = "".join(
        circle(sx(px), sy(py), 1.6)
        for px, py in b.points[:MAX_MARKS].tolist()
        if math.isfinite(px) and math.isfinite(py)
    )
    for k, unit in enumerate(hidden):
        r, c = divmod(k, columns)
        mx = left + c * (side + gap)
        my = top + 26 + r * (side + 16)
        with np.errstate(all="ignore"):
            t = (unit - lo) / (hi - lo)
        parts.append(text(mx + side / 2, my - 4, f"N{k + 1}", 10, "middle"))
        parts.append(_map(mx, my, side, unit, looks.HIDDEN_MAP, t, "unit"))
        parts.append(
            f'<g transform="translate({num(mx)},{num(my)})" fill="#ffffff" stroke="#000000" '
            f'stroke-width="0.4">{dots}</g>'
        )
        parts.append(frame(mx, my, side, side))
    below = top + 26 + rows * (side + 16) + 4
    width = columns * side + (columns - 1) * gap
    parts.append(colour_bar(looks.HIDDEN_MAP, left, below, width, 12, vertical=False))
    scale = Scale(lo, hi, left, left + width)
    parts += bottom_axis("hidden", scale, below + 12, linear_ticks(lo, hi, 5), size=10, spine=False)
    parts.append(text(left + width / 2, below + 42, name, 11, "middle"))
    return parts


# -- gradients per layer -------------------------------------------------------------------

# One pattern per (colour, hatch) the statuses and the NaN/zero marks use: id gvp-…
PATTERN_IDS = {
    look: f"gvp-{HATCH[look[1]][0]}-{look[0][1:]}"
    for look in sorted(
        {(c, h) for c, h in looks.STATUS_COLOURS.values() if h} | {looks.NONFINITE, looks.ZERO}
    )
}


def _patterns() -> str:
    """The hatchings, as matplotlib draws them over a status colour (ids gvp-…, once a page)."""
    defs = []
    for (colour, hatch), pid in PATTERN_IDS.items():
        ink = "#666666" if colour in (looks.ZERO[0], looks.NONFINITE[0]) else "#ffffff"
        _, mark, width = HATCH[hatch]
        defs.append(
            f'<pattern id="{pid}" patternUnits="userSpaceOnUse" width="6" height="6">'
            f'<rect width="6" height="6" fill="{colour}"/><path d="{mark}" '
            f'stroke="{ink}" stroke-width="{width}" stroke-linecap="round"/></pattern>'
        )
    return f"<defs>{''.join(defs)}</defs>"


def _fill(colour: str, hatch: str) -> str:
    return f"url(#{PATTERN_IDS[(colour, hatch)]})" if hatch else colour


def grads_svg(
    diagnosis: Diagnosis,
    snapshots: History | None = None,
    title: str = "rms gradient per layer",
    subtitle: str = "",
    statuses: str = STATUS_MEANINGS,
) -> str:
    """`plots.grads_plot`'s picture."""
    layers = diagnosis.layers
    heat, epochs, rows, finite = looks.grad_rows(diagnosis, snapshots)
    lo, hi = decades(min(finite), max(finite)) if finite else (1e-8, 1.0)
    names_shown = [_clip(f"{lay.name} {lay.activation_shown}", 24) for lay in layers]
    label_w = max((text_width(s, 11) for s in names_shown), default=40)
    bar_left = 12 + min(label_w, 170)
    bar_w = 190 if heat else 380
    status_x = bar_left + bar_w + 6
    top, row_h = 56, 26
    plot_h = len(layers) * row_h
    parts = [_patterns(), _title(title, subtitle)]
    parts.append(text(bar_left, top - 10, looks.NOW, 12))
    x = Scale(lo, hi, bar_left, bar_left + bar_w, log=True)
    ticks = log_ticks(lo, hi, 5 if heat else 8)
    parts += grid_lines([x(t) for t in ticks], top, top + plot_h, vertical=True)
    for i, (layer, shown) in enumerate(zip(layers, names_shown, strict=True)):
        yc = top + (i + 0.5) * row_h
        kind, look = looks.bar_look(layer)
        extra = f' class="bar" data-rms="{layer.rms!r}"'
        end = x(looks.within(layer.rms, True)) if kind == "bar" else x.end
        if kind != "bar":
            extra += ' stroke="#666666" stroke-width="0.6"'
        if kind == "zero":
            end = x.start + 0.06 * bar_w
        parts.append(
            rect(x.start, yc - row_h * 0.35, end - x.start, row_h * 0.7, _fill(*look), extra)
        )
        parts.append(text(bar_left - 6, yc + 4, shown, 11, "end", "layer"))
        words, ink, bold = looks.status_words(layer)
        weight = ' font-weight="bold"' if bold else ""
        cls = f"status st-{layer.status.lower().replace('/', '-')}"  # report.css's dark colours
        parts.append(text(status_x, yc + 4, words, 11, cls=cls, extra=f' fill="{ink}"{weight}'))
    parts.append(line(x.start, top, x.start, top + plot_h))
    parts += bottom_axis("rms", x, top + plot_h, ticks)
    xmid = (x.start + x.end) / 2
    parts.append(text(xmid, top + plot_h + 32, looks.RMS_AXIS, 12, "middle"))
    heat_note = ""
    if heat:
        at = (status_x + 118, top, row_h)
        heat_parts, heat_note = _heat(epochs, rows, (lo, hi), at, diagnosis.unit)
        parts += heat_parts
    legend_y = top + plot_h + 56
    parts.append(text(8, legend_y, looks.STATUS_KEY.format(statuses), 11, cls="soft"))
    at = 8.0
    for name, look in looks.grads_keys(layers, rows):
        key = rect(at, legend_y + 8, 18, 12, _fill(*look), ' stroke="#666666" stroke-width="0.6"')
        parts += [key, text(at + 23, legend_y + 18, name, 11)]
        at += 23 + text_width(name, 11) + 18
    if heat:
        key = f"heat map colour: {looks.RMS_COLOURS}"
        parts.append(text(WIDTH - 8, legend_y, key, 11, "end", "soft"))
    if heat_note:
        parts.append(text(WIDTH - 8, legend_y + 18, heat_note, 11, "end", "note"))
    label = f"rms gradient per layer, and per layer over {diagnosis.unit}s"
    return svg(WIDTH, legend_y + 30, label, parts, "grads")


def _heat(
    epochs: list[int],
    layer_rows: list[list[float]],
    scale: tuple[float, float],
    at: tuple[float, float, float],
    unit: str,
) -> tuple[list[str], str]:
    """The layers x epochs map: one row per layer, one column per recorded epoch (as wide
    as the time it stands for); `at`: its left, top and row height."""
    (lo, hi), (left, top, row_h) = scale, at
    columns = list(range(len(epochs)))
    note = ""
    if len(columns) > MAX_COLUMNS:
        stride = math.ceil(len(columns) / MAX_COLUMNS)
        columns = columns[::stride]
        if columns[-1] != len(epochs) - 1:
            columns.append(len(epochs) - 1)
        note = f"heat map: every {stride}th of {len(epochs):,} recorded {unit}s"
    shown = [epochs[j] for j in columns]
    edges = looks.cell_edges(shown)
    width = WIDTH - left - 86
    x = Scale(edges[0], edges[-1], left, left + width)
    parts = [text(left, top - 10, looks.OVER_TRAINING, 12)]
    cols = []
    for k, j in enumerate(columns):
        a, b = x(edges[k]), x(edges[k + 1])
        cols.append(f"{num(a)} {num(b - a)}")
        for i, row in enumerate(layer_rows):
            v = row[j]
            if 0 < v < math.inf:
                t = (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
                fill = "#{:02x}{:02x}{:02x}".format(*colour_rgb(looks.MAGNITUDE_MAP, t))
            else:  # NaN/inf crossed cyan, zeros dotted white
                fill = _fill(*(looks.NONFINITE if not math.isfinite(v) else looks.ZERO))
            data = f' data-v="{v!r}" data-e="{epochs[j]}"'
            parts.append(rect(a, top + i * row_h, b - a + 0.3, row_h, fill, data))
    plot_h = len(layer_rows) * row_h
    parts.append(frame(left, top, width, plot_h))
    ticks = linear_ticks(shown[0], shown[-1], 6, integer=True)
    ticks = [t for t in ticks if shown[0] <= t <= shown[-1]]
    labels = [str(round(t)) for t in ticks]
    parts += bottom_axis("heat-epoch", x, top + plot_h, ticks, labels, spine=False)
    parts.append(text(left + width / 2, top + plot_h + 32, unit, 12, "middle"))
    # the epoch chosen on the page's slider: one outlined column per recorded epoch
    parts.append(
        f'<rect x="-10" y="{num(top)}" width="0" height="{num(plot_h)}" class="now" '
        f'data-columns="{",".join(cols)}" data-shown="{" ".join(str(j) for j in columns)}"/>'
    )
    bx = left + width + 10
    bar_h = max(plot_h, 90)
    parts.append(colour_bar(looks.MAGNITUDE_MAP, bx, top, 12, bar_h))
    bar = Scale(lo, hi, top + bar_h, top, log=True)
    ticks = log_ticks(lo, hi, max(2, int(bar_h // 18)))
    parts += side_axis("colour", bar, bx + 12, ticks, None, 10, 1)
    return parts, note
