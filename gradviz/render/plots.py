"""The plots as files, drawn by matplotlib: gradient bars per layer and the layers x epochs
heat map, loss and accuracy curves, a two-input network's decision boundary. What each
shows is `plot_looks`', shared with the pages' SVG (`page_plots`).

The CLI imports this module (and matplotlib: Agg, SVG and PDF writers, no pyplot) only to
write a plot; matplotlib's log stays quiet unless the user configured logging. The same
bytes on every run: DejaVu Sans drawn as paths, SVG ids from a fixed salt, no date.
"""

from __future__ import annotations

import io
import logging
import math
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if logging.getLogger("matplotlib").level == logging.NOTSET:
    logging.getLogger("matplotlib").setLevel(logging.ERROR)

import matplotlib
import numpy as np
from matplotlib import patheffects
from matplotlib.colors import LogNorm, Normalize, TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import LogFormatterSciNotation, LogLocator, MaxNLocator, PercentFormatter

from gradviz.render import plot_looks as looks
from gradviz.render.themes import themed_plot
from gradviz.text import printable

if TYPE_CHECKING:
    from gradviz.boundary import Boundary
    from gradviz.records import Diagnosis, History

PLOT_FORMATS = ("svg", "png", "pdf")
WIDTH_IN = 8.0  # at 100 dpi: 800 px, a docs page's width
DPI = 100
FONT = "DejaVu Sans"  # bundled with matplotlib: the same metrics everywhere
RC = {
    "font.family": "sans-serif",
    "font.sans-serif": [FONT],
    "font.size": 9,
    "axes.titlesize": 10,
    "figure.titlesize": 11,
    "svg.fonttype": "path",
    "svg.hashsalt": "gradviz",
    "pdf.fonttype": 42,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "hatch.linewidth": 0.8,
}
METADATA = {
    "svg": {"Date": None, "Creator": "gradviz"},
    "png": {"Software": "gradviz"},
    "pdf": {"CreationDate": None, "Creator": "gradviz", "Producer": "gradviz"},
}

# The decision threshold's contour runs along the boundary map's white middle in either
# theme (the map is a raster the theme leaves alone): a near-black line the dark theme's
# style sheet leaves as it is (it recolours #000000, the axes' and texts' ink, for a dark
# page) in a white casing, so that its key reads on a dark page too.
THRESHOLD_INK, CASING = "#111111", patheffects.withStroke(linewidth=3.2, foreground="#ffffff")
THRESHOLD_LOOK = {"color": THRESHOLD_INK, "linewidth": 1.2, "path_effects": [CASING]}
THRESHOLD_GID = "threshold-contour"  # the contour's group in the SVG (tests find it so)
ZERO_EDGE = {"exactly 0": "#666666"}  # the white key needs an outline
PIXELS = {"origin": "lower", "aspect": "auto", "interpolation": "nearest"}  # a map's raster


def _save(figure: Figure, title: str, subtitle: str, fmt: str) -> bytes:
    """The figure under its title (and, in the same text, the circumstances: when, on what
    data), as the bytes of a file."""
    if subtitle:
        # (each line made plain alone: `plain` escapes a line break as the two characters \n)
        lines = [title, *textwrap.wrap(subtitle, 100)]
        figure.suptitle("\n".join(plain(line) for line in lines), fontsize=10)
    else:
        figure.suptitle(plain(title), fontweight="bold")
    if fmt not in PLOT_FORMATS:
        raise ValueError(f"plots are written as {', '.join(PLOT_FORMATS)}, not {fmt!r}")
    out = io.BytesIO()
    figure.savefig(out, format=fmt, metadata=METADATA[fmt], bbox_inches="tight", pad_inches=0.1)
    if fmt == "svg":  # dark mode, as every SVG gradviz writes; PNG and PDF stay light
        return themed_plot(out.getvalue().decode("utf-8")).encode("utf-8")
    return out.getvalue()


def plain(text: str) -> str:
    """User text as matplotlib shows it literally: no `$` starting TeX math, control
    characters as escapes (`gradviz.text.printable`; raw, they are invalid in SVG)."""
    return printable(text).replace("$", r"\$")


def unicode_log_labels(axis: Any) -> None:
    """A log axis labelled as the pages' are (`plot_looks.power_label`: 10⁻³, 2×10⁻³) at
    the ticks matplotlib labels, without its mathtext parser (built on first use, it was a
    tenth of a page's time)."""

    class Labels(LogFormatterSciNotation):
        def __call__(self, x: float, pos: int | None = None) -> str:
            return looks.power_label(x) if super().__call__(x, pos) else ""

    axis.set_major_formatter(Labels(base=10))
    axis.set_minor_formatter(Labels(base=10, labelOnlyBase=False))


# -- gradients per layer -----------------------------------------------------------------


@matplotlib.rc_context(RC)  # gradviz's fonts and salt while a plot is drawn, restored after
def grads_plot(
    diagnosis: Diagnosis,
    snapshots: History | None = None,
    title: str = "rms gradient per layer",
    subtitle: str = "",
    fmt: str = "svg",
    statuses: str = looks.STATUS_MEANINGS,
) -> bytes:
    """The last moment's rms gradient per layer as horizontal log-scale bars, each
    layer's value and status beside it; with a history, the layers x epochs heat map to
    the right, row for row, with a log colour bar. The legend says where each status
    is explained, in the caller's words (`statuses`: the CLI says `gradviz grads --help`)."""
    layers = diagnosis.layers
    n = len(layers)
    heat, epochs, rows, finite = looks.grad_rows(diagnosis, snapshots)
    figure = Figure(figsize=(WIDTH_IN, 2.2 + 0.3 * n), layout="constrained")
    if heat:
        bars, grid = figure.subplots(1, 2, width_ratios=[1, 1.25], sharey=True)
    else:
        bars, grid = figure.subplots(1, 1), None
    lo = 10.0 ** math.floor(math.log10(min(finite))) if finite else 1e-8
    hi = 10.0 ** math.ceil(math.log10(max(finite))) if finite else 1.0
    hi = max(hi, lo * 10)

    y = list(range(n))
    stub = lo * (hi / lo) ** 0.06 - lo
    for i, layer in enumerate(layers):
        kind, (face, mark) = looks.bar_look(layer)
        length = {"bar": looks.within(layer.rms, True), "nonfinite": hi, "zero": stub}[kind]
        edge = "white" if kind == "bar" else "#666666"
        bars.barh(i, length, left=lo, color=face, hatch=mark, edgecolor=edge, height=0.7)
    bars.set(xscale="log", xlim=(lo, hi))
    bars.xaxis.set_major_locator(LogLocator(numticks=6))  # room for every 10⁻ⁿ label
    unicode_log_labels(bars.xaxis)
    names = [plain(f"{looks.clip(lay.name, 40)} {lay.activation_shown}") for lay in layers]
    bars.set_yticks(y, names)
    bars.set_ylim(n - 0.5, -0.5)  # L1 at the top, as in the table
    bars.set_xlabel(looks.RMS_AXIS)
    bars.set_title(looks.NOW, loc="left")
    bars.grid(axis="x", color="#dddddd", linewidth=0.6)
    bars.set_axisbelow(True)
    status = bars.secondary_yaxis("right")
    words = [looks.status_words(lay) for lay in layers]
    status.set_yticks(y, [text for text, _, _ in words])
    status.tick_params(length=0)
    for label, (_, ink, bold) in zip(status.get_yticklabels(), words, strict=True):
        label.set_color(ink)
        if bold:
            label.set_fontweight("bold")
    handles = [
        Patch(facecolor=face, hatch=hatch, edgecolor=ZERO_EDGE.get(name), label=name)
        for name, (face, hatch) in looks.grads_keys(layers, rows)
    ]
    if grid is not None:
        rms = np.array(rows, dtype=np.float64)
        _heat(figure, grid, epochs, rms, LogNorm(lo, hi), diagnosis.unit)
    key = {"title": looks.STATUS_KEY.format(statuses), "title_fontsize": 8}
    columns = min(6, max(1, len(handles)))
    figure.legend(handles=handles, loc="outside lower center", ncol=columns, frameon=False, **key)
    return _save(figure, title, subtitle, fmt)


def _heat(
    figure: Figure, ax: Any, epochs: list[int], grid: np.ndarray, norm: LogNorm, unit: str
) -> None:
    """The layers x epochs map: one row per layer, one column per recorded epoch (or a
    recorded run's step: `unit`; cells as wide as the time they stand for), NaN/inf and
    zeros hatched over the colour."""
    e = np.asarray(epochs, dtype=np.float64)
    if len(e) > 1 and not np.all(np.diff(e) > 0):
        # records at one step (a recorder's step() twice between updates): cells of one
        # width side by side over the steps' span, so none is of width 0 (and the axis
        # not a singular one, which matplotlib warns of)
        edges = np.linspace(e[0] - 0.5, e[-1] + 0.5, len(e) + 1)
    else:
        edges = np.array(looks.cell_edges(epochs), dtype=np.float64)
    masked = np.ma.masked_where(~np.isfinite(grid) | (grid <= 0), grid)
    mesh = ax.pcolormesh(
        edges, np.arange(len(grid) + 1) - 0.5, masked, cmap=looks.MAGNITUDE_MAP, norm=norm
    )
    for i, j in zip(*np.nonzero(np.ma.getmaskarray(masked)), strict=True):
        face, hatch = looks.NONFINITE if not np.isfinite(grid[i, j]) else looks.ZERO
        corner, width = (edges[j], i - 0.5), edges[j + 1] - edges[j]
        look = {"facecolor": face, "hatch": hatch, "edgecolor": "#666666", "linewidth": 0}
        ax.add_patch(Rectangle(corner, width, 1, **look))
    ax.set_xlim(edges[0], edges[-1])
    ticks = MaxNLocator(nbins=8, integer=True, steps=[1, 2, 5, 10]).tick_values(e[0], e[-1])
    ax.set_xticks([t for t in ticks if e[0] <= t <= e[-1]])  # recorded epochs only
    ax.set_xlabel(unit)
    ax.set_title(looks.OVER_TRAINING, loc="left")
    ax.tick_params(axis="y", left=False, labelleft=False)
    bar = figure.colorbar(mesh, ax=ax, pad=0.02, aspect=30)
    unicode_log_labels(bar.ax.yaxis)
    bar.set_label(looks.RMS_COLOURS)


# -- loss and accuracy over training ----------------------------------------------------


@matplotlib.rc_context(RC)
def curves_plot(
    loss: Sequence[float],
    accuracy: Sequence[float],
    every: int = 1,
    title: str = "training",
    subtitle: str = "",
    fmt: str = "svg",
) -> bytes:
    """The mean loss per epoch (log scale when every value is positive) above the
    accuracy per epoch, on one epoch axis; NaN/inf epochs are left as gaps and marked."""
    figure = Figure(figsize=(WIDTH_IN, 4.8), layout="constrained")
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=[1.4, 1])
    epochs, log, loss, finite, moved = looks.loss_series(loss, every)
    top.plot(epochs, loss, color=looks.LOSS_COLOUR, linewidth=1.4)
    if log:
        top.set_yscale("log")
        unicode_log_labels(top.yaxis)
    top.set_ylabel(looks.LOSS_AXIS[log])
    if moved:
        edge = f"{looks.PLOT_MIN:g} and {looks.PLOT_MAX:g}" if log else f"±{looks.PLOT_MAX:g}"
        top.text(0.01, 0.95, f"drawn between {edge}", transform=top.transAxes, va="top")
    bad = [x for x, v in zip(epochs, loss, strict=True) if not math.isfinite(v)]
    if bad:
        top.plot(bad, [min(finite) if finite else 0] * len(bad), "x", color=looks.BAD_MARK)
        top.text(0.99, 0.95, looks.BAD_LOSS, transform=top.transAxes, ha="right", va="top")
    top.set_title(looks.PER_POINT["epoch"], loc="left", fontsize=8)
    top.grid(color="#dddddd", linewidth=0.6)
    bottom.plot(epochs, accuracy, color=looks.ACCURACY_COLOUR, linewidth=1.4)
    bottom.set(ylim=looks.ACCURACY_RANGE, ylabel="accuracy", xlabel="epoch")
    bottom.yaxis.set_major_formatter(PercentFormatter(1.0))
    bottom.xaxis.set_major_locator(MaxNLocator(nbins=8, integer=True, steps=[1, 2, 5, 10]))
    bottom.grid(color="#dddddd", linewidth=0.6)
    if epochs:
        bottom.set_xlim(0, epochs[-1])
    return _save(figure, title, subtitle, fmt)


# -- decision boundary -------------------------------------------------------------------


@matplotlib.rc_context(RC)
def boundary_plot(
    b: Boundary, title: str = "decision boundary", subtitle: str = "", fmt: str = "svg"
) -> bytes:
    """The network's output over the input plane on a diverging map centred on the
    decision threshold, the threshold's contour, the data points on top (ringed where
    misclassified), and beside it one small map per unit of the first hidden layer."""
    figure = Figure(figsize=(WIDTH_IN, 5.6), layout="constrained")
    hidden = b.hidden[: looks.MAX_HIDDEN_MAPS]
    if hidden:
        main_fig, side_fig = figure.subfigures(1, 2, width_ratios=[1.7, 1], wspace=0.02)
    else:
        main_fig, side_fig = figure, None
    ax = main_fig.subplots()
    lo, hi = looks.output_norm(b)
    norm = TwoSlopeNorm(vcenter=b.threshold, vmin=lo, vmax=hi)
    image = ax.imshow(b.output, extent=b.extent, cmap=looks.BOUNDARY_MAP, norm=norm, **PIXELS)
    finite = b.output[np.isfinite(b.output)]
    if finite.size and finite.min() < b.threshold < finite.max():
        contour = ax.contour(
            b.xs, b.ys, b.output, levels=[b.threshold], colors=THRESHOLD_INK, linewidths=1.2
        )
        contour.set_path_effects([CASING])
        contour.set_gid(THRESHOLD_GID)
    positive = b.targets > b.threshold
    wrong = b.wrong
    many = len(b.targets) > 2000  # drawn as an image: an SVG of 100,000 marks is unusable
    halo, mark = (150, 90) if len(b.targets) <= looks.FEW_POINTS else (70, 42)
    for mask, colour, marker in ((positive, looks.POSITIVE, "o"), (~positive, looks.NEGATIVE, "s")):
        # a black halo under a white-edged marker: visible on any colour of the map
        for size, face, edge, z in ((halo, "black", "black", 3), (mark, colour, "white", 4)):
            look = {"s": size, "c": face, "marker": marker, "edgecolors": edge, "zorder": z}
            ax.scatter(
                b.points[mask, 0], b.points[mask, 1], linewidths=1.0, rasterized=many, **look
            )
    if wrong.any():  # a white-and-black ring around the point, which stays visible
        for width, colour, z in ((3.2, "white", 5), (1.6, "black", 6)):
            ring = {"marker": "o", "facecolors": "none", "edgecolors": colour, "zorder": z}
            ax.scatter(b.points[wrong, 0], b.points[wrong, 1], s=4 * mark, linewidths=width, **ring)
    ax.set(xlabel=plain(b.feature_names[0]), ylabel=plain(b.feature_names[1]))
    bar = main_fig.colorbar(image, ax=ax, pad=0.02, aspect=30)
    label, above, below, ringed, level = looks.boundary_words(b)
    bar.set_label(label)
    bar.ax.axhline(b.threshold, **THRESHOLD_LOOK)
    handles = [
        Line2D([], [], ls="", marker="o", color=looks.POSITIVE, mec="black", label=above),
        Line2D([], [], ls="", marker="s", color=looks.NEGATIVE, mec="black", label=below),
        Line2D([], [], ls="", marker="o", ms=11, mfc="none", mec="black", mew=1.6, label=ringed),
        Line2D([], [], label=level, **THRESHOLD_LOOK),
    ]
    main_fig.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False)
    if side_fig is not None:
        _hidden_maps(side_fig, b, hidden)
    return _save(figure, title, subtitle, fmt)


def _hidden_maps(figure: Any, b: Boundary, hidden: list[Any]) -> None:
    """One small map per unit of the first hidden layer, on one shared colour scale."""
    columns, rows, heading, label = looks.hidden_grid(b, hidden)
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    norm = Normalize(*looks.hidden_range(b, hidden))
    for k, (ax, unit) in enumerate(zip(axes, hidden, strict=False)):  # (the last row's gaps)
        image = ax.imshow(unit, extent=b.extent, cmap=looks.HIDDEN_MAP, norm=norm, **PIXELS)
        dots = {"s": 5, "c": "white", "edgecolors": "black", "linewidths": 0.3}
        ax.scatter(b.points[:, 0], b.points[:, 1], rasterized=True, **dots)
        ax.set(xticks=[], yticks=[])
        ax.spines[:].set_visible(True)
        ax.spines[:].set_color("#999999")
        ax.set_title(f"N{k + 1}", fontsize=8, pad=2)
    for ax in axes[len(hidden) :]:
        ax.set_axis_off()
    figure.suptitle(heading, fontsize=9)
    bar = figure.colorbar(image, ax=list(axes), location="bottom", aspect=25, shrink=0.9)
    bar.set_label(label, fontsize=8)
