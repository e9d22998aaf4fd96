"""Plots drawn by matplotlib: gradient bars per layer, the layers x epochs heat map, loss
and accuracy curves, and a two-input network's decision boundary.

Plots are not graphs: they need real axes, ticks, log scales and colour bars, which a
plotting library gives and Graphviz tables do not. matplotlib is imported only here and
only when a plot is drawn (`# lazy: start-up`), with the Agg/SVG/PDF writers and no GUI
(no pyplot). Every function returns the file's bytes, the same bytes on every run:
fonts are matplotlib's bundled DejaVu Sans drawn as paths (text metrics do not depend on
the viewer's fonts), SVG ids come from a fixed salt, and no date is written.

Colours (safe for the common colour-vision deficiencies, with shapes or hatching beside
every colour that carries meaning): gradient magnitude on the sequential `magma` map,
darkest for the smallest, so vanishing gradients stand out most; a vanishing or stalled
layer's bar is vivid magenta and hatched, as the terminal shows it; NaN/inf cells are
cyan with crosses, exact zeros white with dots. The decision boundary uses the diverging
purple-orange map centred on the decision threshold.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gradviz.numbers import fmt
from gradviz.ops import ACTIVATIONS
from gradviz.records import Diagnosis, History, series
from gradviz.text import printable

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gradviz.boundary import Boundary

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

# Bars: the statuses a reader must not miss are vivid and hatched, healthy ones calm.
VANISHING = "#c2187d"  # vivid magenta, as the terminal's vanishing/stalled
NONFINITE = ("#56b4e9", "xxx")  # NaN/inf: cyan, crossed
ZERO = ("#ffffff", "...")  # exact zeros: white, dotted
STATUS_COLOURS = {
    "NaN": NONFINITE,
    "exploding": ("#d55e00", "xxx"),
    "dead": ("#333333", "..."),
    "zero": ("#333333", "..."),
    "stalled": (VANISHING, "////"),
    "vanishing": (VANISHING, "////"),
    "saturated": ("#e69f00", ""),
    "weak": ("#e69f00", ""),
    "converged": ("#9ab7d3", ""),
    "ok": ("#9ab7d3", ""),
    "frozen": ("#bbbbbb", ""),
}
MAGNITUDE_MAP = "magma"  # sequential, perceptually uniform: dark = small
BOUNDARY_MAP = "PuOr_r"  # diverging: purple below the threshold, orange above
POSITIVE, NEGATIVE = "#b35806", "#542788"  # the two ends of PuOr, for the points
HIDDEN_MAP = "viridis"
MAX_HIDDEN_MAPS = 16
# The decision threshold's contour runs along the boundary map's white middle in either
# theme (the map is a raster the theme leaves alone): a near-black line the dark theme's
# style sheet leaves as it is (it recolours #000000, the axes' and texts' ink, for a dark
# page) in a white casing, so that its key reads on a dark page too.
THRESHOLD_INK, THRESHOLD_CASING = "#111111", "#ffffff"
THRESHOLD_GID = "threshold-contour"  # the contour's group in the SVG (tests find it so)


def _threshold_look(width: float = 1.2) -> dict[str, Any]:
    from matplotlib import patheffects  # lazy: start-up

    casing = patheffects.withStroke(linewidth=width + 2.0, foreground=THRESHOLD_CASING)
    return {"color": THRESHOLD_INK, "linewidth": width, "path_effects": [casing]}


def _mpl() -> Any:
    """matplotlib, loaded on first use; its own log (a font cache being built, a config
    folder it cannot write) stays quiet unless the user configured logging."""
    import logging  # lazy: start-up

    log = logging.getLogger("matplotlib")
    if log.level == logging.NOTSET:
        log.setLevel(logging.ERROR)
    import matplotlib  # lazy: start-up

    return matplotlib


# Magnitudes beyond these are drawn at them, and the plot says so: a log axis pads its
# limits and places ticks a stride past them in powers of ten, which overflow (inf, and a
# RuntimeWarning or an OverflowError) far below the float maximum, 1.8e308.
PLOT_MAX = 1e200
PLOT_MIN = 1e-200  # positive values, on a log axis


def within(value: float, log: bool = False) -> float:
    """`value` as a plot can draw it: its magnitude at most PLOT_MAX (on a log axis, at
    least PLOT_MIN); NaN and ±inf as they are (drawn as gaps, and marked)."""
    if not math.isfinite(value):
        return value
    if log:
        return min(max(value, PLOT_MIN), PLOT_MAX)
    return min(max(value, -PLOT_MAX), PLOT_MAX)


def _figure(height_in: float) -> Figure:
    from matplotlib.figure import Figure  # lazy: start-up

    return Figure(figsize=(WIDTH_IN, height_in), layout="constrained")


def _save(figure: Figure, fmt: str) -> bytes:
    if fmt not in PLOT_FORMATS:
        raise ValueError(f"plots are written as {', '.join(PLOT_FORMATS)}, not {fmt!r}")
    out = io.BytesIO()
    figure.savefig(out, format=fmt, metadata=METADATA[fmt], bbox_inches="tight", pad_inches=0.1)
    if fmt == "svg":  # dark mode, as every SVG gradviz writes; PNG and PDF stay light
        from gradviz.render.themes import themed_plot  # lazy: start-up

        return themed_plot(out.getvalue().decode("utf-8")).encode("utf-8")
    return out.getvalue()


def _short(name: str, most: int = 40) -> str:
    """A layer's name as a tick label: at most `most` characters (then …)."""
    return name if len(name) <= most else name[: most - 1] + "…"


def plain(text: str) -> str:
    """Text from the user (a file, layer or column name) as matplotlib shows it literally:
    a `$` would otherwise start TeX math, and a control character (a tab in a module's
    name) is shown as its escape (`gradviz.text.printable`; raw, it is invalid in SVG)."""
    return printable(text).replace("$", r"\$")


SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
MATH_LABEL = re.compile(r"\$\\mathdefault\{(.*)\}\$")


def unicode_log_labels(axis: Any) -> None:
    """A log axis labelled 10⁻³, 2×10⁻³ in plain text with Unicode superscripts, not TeX
    math: the same labels matplotlib would choose, without its mathtext parser (built on
    first use, it was a tenth of a page's time)."""
    from matplotlib.ticker import LogFormatterSciNotation  # lazy: start-up

    class Labels(LogFormatterSciNotation):
        def __call__(self, x: float, pos: int | None = None) -> str:
            text = super().__call__(x, pos)
            math = MATH_LABEL.fullmatch(text)
            if math is None:
                return text
            inner = math.group(1).replace(r"\times", "×")
            inner = re.sub(r"\^\{(-?\d+)\}", lambda m: m.group(1).translate(SUPERSCRIPT), inner)
            return inner.replace("-", "\u2212", 1) if inner.startswith("-") else inner

    axis.set_major_formatter(Labels(base=10))
    axis.set_minor_formatter(Labels(base=10, labelOnlyBase=False))


def _suptitle(figure: Figure, title: str, subtitle: str) -> None:
    """The title, and under it in the same text the circumstances (when, on what data)."""
    if subtitle:
        figure.suptitle(plain(f"{title}\n{textwrap.fill(subtitle, 100)}"), fontsize=10)
    else:
        figure.suptitle(plain(title), fontweight="bold")


def _draw(build: Any, fmt: str) -> bytes:
    """Build and save a figure under gradviz's rc settings (fonts, salt), restored after."""
    matplotlib = _mpl()
    with matplotlib.rc_context(RC):
        return _save(build(), fmt)


# -- gradients per layer -----------------------------------------------------------------


STATUS_MEANINGS = "gradviz.stats.status_help()"  # each status's rule, in words


def grads_plot(
    diagnosis: Diagnosis,
    snapshots: History | None = None,
    title: str = "rms gradient per layer",
    subtitle: str = "",
    fmt: str = "svg",
    statuses: str = STATUS_MEANINGS,
) -> bytes:
    """The last moment's rms gradient per layer as horizontal log-scale bars, each
    layer's value and status beside it; with a history, the layers x epochs heat map to
    the right, row for row, with a log colour bar. The legend says where each status
    is explained, in the caller's words (`statuses`: the CLI says `gradviz grads --help`)."""
    return _draw(lambda: _grads_figure(diagnosis, snapshots, title, subtitle, statuses), fmt)


def _grads_figure(
    diagnosis: Diagnosis, snapshots: History | None, title: str, subtitle: str, statuses: str
) -> Figure:
    from matplotlib.colors import LogNorm  # lazy: start-up
    from matplotlib.patches import Patch  # lazy: start-up
    from matplotlib.ticker import LogLocator, MaxNLocator  # lazy: start-up

    layers = diagnosis.layers
    n = len(layers)
    heat = bool(snapshots) and len(snapshots) > 1
    figure = _figure(2.2 + 0.3 * n)
    if heat:
        bars, grid = figure.subplots(1, 2, width_ratios=[1, 1.25], sharey=True)
    else:
        bars, grid = figure.subplots(1, 1), None
    epochs, names, rows = series(snapshots) if heat else ([], [], [])
    rows = [[within(v, log=True) if v > 0 else v for v in row] for row in rows]
    values = [lay.rms for lay in layers] + [v for row in rows for v in row]
    finite = [within(v, log=True) for v in values if 0 < v < math.inf]
    lo = 10.0 ** math.floor(math.log10(min(finite))) if finite else 1e-8
    hi = 10.0 ** math.ceil(math.log10(max(finite))) if finite else 1.0
    hi = max(hi, lo * 10)

    y = list(range(n))
    for i, layer in enumerate(layers):
        colour, hatch = STATUS_COLOURS.get(layer.status, ("#9ab7d3", ""))
        v = within(layer.rms, log=True)
        if 0 < v < math.inf:
            bars.barh(i, v, left=lo, color=colour, hatch=hatch, edgecolor="white", height=0.7)
        elif not math.isfinite(v):  # no length to show: the whole row, crossed
            face, mark = NONFINITE
            bars.barh(i, hi, left=lo, color=face, hatch=mark, edgecolor="#666666", height=0.7)
        else:  # exactly 0: a short dotted stub at the axis' start, never a long bar
            stub = lo * (hi / lo) ** 0.06 - lo
            bars.barh(
                i, stub, left=lo, color=ZERO[0], hatch=ZERO[1], edgecolor="#666666", height=0.7
            )
    bars.set_xscale("log")
    bars.set_xlim(lo, hi)
    bars.xaxis.set_major_locator(LogLocator(numticks=6))  # room for every 10⁻ⁿ label
    unicode_log_labels(bars.xaxis)
    bars.set_yticks(y, [plain(f"{_short(lay.name)} {lay.activation}") for lay in layers])
    bars.set_ylim(n - 0.5, -0.5)  # L1 at the top, as in the table
    bars.set_xlabel("rms gradient (log scale)")
    bars.set_title("now: rms gradient per layer", loc="left")
    bars.grid(axis="x", color="#dddddd", linewidth=0.6)
    bars.set_axisbelow(True)
    status = bars.secondary_yaxis("right")
    status.set_yticks(y, [f"{fmt(lay.rms, 2)} {lay.status}" for lay in layers])
    status.tick_params(length=0)
    for label, layer in zip(status.get_yticklabels(), layers, strict=True):
        colour = STATUS_COLOURS.get(layer.status, ("#333333", ""))[0]
        # text a shade darker than its bar where the bar colour is too light to read
        dark = {"#e69f00": "#9a5c00", "#9ab7d3": "#333333", NONFINITE[0]: "#00669b"}
        label.set_color(dark.get(colour, colour))
        if layer.status in ("vanishing", "stalled", "NaN", "exploding", "dead"):
            label.set_fontweight("bold")

    shown = [s for s in STATUS_COLOURS if any(lay.status == s for lay in layers)]
    handles = [
        Patch(facecolor=STATUS_COLOURS[s][0], hatch=STATUS_COLOURS[s][1], label=s) for s in shown
    ]
    if grid is not None:
        _heat(figure, grid, epochs, names, rows, layers, LogNorm(lo, hi), MaxNLocator)
    flags = [lay.rms for lay in layers] + [v for row in rows for v in row]
    if any(not math.isfinite(v) for v in flags) and "NaN" not in shown:
        handles.append(Patch(facecolor=NONFINITE[0], hatch=NONFINITE[1], label="NaN/inf"))
    if any(v == 0 for v in flags):
        handles.append(
            Patch(facecolor=ZERO[0], hatch=ZERO[1], edgecolor="#666666", label="exactly 0")
        )
    figure.legend(
        handles=handles,
        loc="outside lower center",
        ncol=min(6, max(1, len(handles))),
        frameon=False,
        title=f"bar colour: status (see {statuses})",
        title_fontsize=8,
    )
    _suptitle(figure, title, subtitle)
    return figure


def _heat(
    figure: Figure,
    ax: Any,
    epochs: list[int],
    names: list[str],
    rows: list[list[float]],
    layers: Sequence[Any],
    norm: Any,
    locator: Any,
) -> None:
    """The layers x epochs map: one row per layer, one column per recorded epoch (cells
    as wide as the time they stand for), NaN/inf and zeros hatched over the colour."""
    import numpy as np  # lazy: start-up
    from matplotlib.patches import Rectangle  # lazy: start-up

    grid = np.array([rows[names.index(lay.name)] for lay in layers], dtype=np.float64)
    e = np.asarray(epochs, dtype=np.float64)
    if len(e) > 1 and not np.all(np.diff(e) > 0):
        # records at one step (a recorder's step() twice between updates): cells of one
        # width side by side over the steps' span, so none is of width 0 (and the axis
        # not a singular one, which matplotlib warns of)
        edges = np.linspace(e[0] - 0.5, e[-1] + 0.5, len(e) + 1)
    elif len(e) > 1:
        mids = (e[1:] + e[:-1]) / 2
        edges = np.concatenate([[e[0] - (mids[0] - e[0])], mids, [e[-1] + (e[-1] - mids[-1])]])
    else:
        edges = np.array([e[0] - 0.5, e[0] + 0.5])
    masked = np.ma.masked_where(~np.isfinite(grid) | (grid <= 0), grid)
    mesh = ax.pcolormesh(
        edges, np.arange(len(layers) + 1) - 0.5, masked, cmap=MAGNITUDE_MAP, norm=norm
    )
    for i, j in zip(*np.nonzero(np.ma.getmaskarray(masked)), strict=True):
        face, hatch = NONFINITE if not np.isfinite(grid[i, j]) else ZERO
        ax.add_patch(
            Rectangle(
                (edges[j], i - 0.5),
                edges[j + 1] - edges[j],
                1,
                facecolor=face,
                hatch=hatch,
                edgecolor="#666666",
                linewidth=0,
            )
        )
    ax.set_xlim(edges[0], edges[-1])
    ticks = locator(nbins=8, integer=True, steps=[1, 2, 5, 10]).tick_values(e[0], e[-1])
    ax.set_xticks([t for t in ticks if e[0] <= t <= e[-1]])  # recorded epochs only
    ax.set_xlabel("epoch")
    ax.set_title("over training", loc="left")
    ax.tick_params(axis="y", left=False, labelleft=False)
    bar = figure.colorbar(mesh, ax=ax, pad=0.02, aspect=30)
    unicode_log_labels(bar.ax.yaxis)
    bar.set_label("rms gradient (log scale; darkest = smallest)")


# -- loss and accuracy over training ----------------------------------------------------


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
    return _draw(lambda: _curves_figure(loss, accuracy, every, title, subtitle), fmt)


def _curves_figure(
    loss: Sequence[float], accuracy: Sequence[float], every: int, title: str, subtitle: str
) -> Figure:
    from matplotlib.ticker import MaxNLocator, PercentFormatter  # lazy: start-up

    figure = _figure(4.8)
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=[1.4, 1])
    epochs = [every * (i + 1) for i in range(len(loss))]
    given = [v for v in loss if math.isfinite(v)]
    log = bool(given) and min(given) > 0
    loss = [within(v, log) for v in loss]
    finite = [v for v in loss if math.isfinite(v)]
    top.plot(epochs, loss, color="#0072b2", linewidth=1.4)
    if log:
        top.set_yscale("log")
        unicode_log_labels(top.yaxis)
        top.set_ylabel("loss (log scale)")
    else:
        top.set_ylabel("loss")
    if finite != given:
        edge = f"{PLOT_MIN:g} and {PLOT_MAX:g}" if log else f"±{PLOT_MAX:g}"
        top.text(0.01, 0.95, f"drawn between {edge}", transform=top.transAxes, va="top")
    bad = [x for x, v in zip(epochs, loss, strict=True) if not math.isfinite(v)]
    if bad:
        top.plot(bad, [min(finite) if finite else 0] * len(bad), "x", color="#d55e00")
        top.text(0.99, 0.95, "x: NaN/inf loss", transform=top.transAxes, ha="right", va="top")
    top.set_title("mean per epoch, as training saw the examples", loc="left", fontsize=8)
    top.grid(color="#dddddd", linewidth=0.6)
    bottom.plot(epochs, accuracy, color="#009e73", linewidth=1.4)
    bottom.set_ylim(-0.03, 1.03)
    bottom.yaxis.set_major_formatter(PercentFormatter(1.0))
    bottom.set_ylabel("accuracy")
    bottom.set_xlabel("epoch")
    bottom.xaxis.set_major_locator(MaxNLocator(nbins=8, integer=True, steps=[1, 2, 5, 10]))
    bottom.grid(color="#dddddd", linewidth=0.6)
    if epochs:
        bottom.set_xlim(0, epochs[-1])
    _suptitle(figure, title, subtitle)
    return figure


# -- decision boundary -------------------------------------------------------------------


def boundary_plot(
    b: Boundary, title: str = "decision boundary", subtitle: str = "", fmt: str = "svg"
) -> bytes:
    """The network's output over the input plane on a diverging map centred on the
    decision threshold, the threshold's contour, the data points on top (ringed where
    misclassified), and beside it one small map per unit of the first hidden layer."""
    return _draw(lambda: _boundary_figure(b, title, subtitle), fmt)


def output_norm(b: Boundary) -> tuple[float, float]:
    """The colour range: [0, 1] for a sigmoid output, else symmetric about the threshold,
    so the map's neutral middle is exactly the decision threshold."""
    import numpy as np  # lazy: start-up

    if b.output_activation == "sigmoid":
        return 0.0, 1.0
    finite = b.output[np.isfinite(b.output)]
    reach = float(np.max(np.abs(finite - b.threshold))) if finite.size else 1.0
    reach = reach if reach > 0 else 1.0
    return b.threshold - reach, b.threshold + reach


def _boundary_figure(b: Boundary, title: str, subtitle: str) -> Figure:
    import numpy as np  # lazy: start-up
    from matplotlib.colors import Normalize, TwoSlopeNorm  # lazy: start-up
    from matplotlib.lines import Line2D  # lazy: start-up

    figure = _figure(5.6)
    hidden = b.hidden[:MAX_HIDDEN_MAPS]
    if hidden:
        main_fig, side_fig = figure.subfigures(1, 2, width_ratios=[1.7, 1], wspace=0.02)
    else:
        main_fig, side_fig = figure, None
    ax = main_fig.subplots()
    lo, hi = output_norm(b)
    norm = TwoSlopeNorm(vcenter=b.threshold, vmin=lo, vmax=hi)
    extent = b.extent
    image = ax.imshow(
        b.output,
        origin="lower",
        extent=extent,
        cmap=BOUNDARY_MAP,
        norm=norm,
        aspect="auto",
        interpolation="nearest",
    )
    finite = b.output[np.isfinite(b.output)]
    if finite.size and finite.min() < b.threshold < finite.max():
        look = _threshold_look()
        contour = ax.contour(
            b.xs, b.ys, b.output, levels=[b.threshold], colors=look["color"],
            linewidths=look["linewidth"],
        )  # fmt: skip
        contour.set_path_effects(look["path_effects"])
        contour.set_gid(THRESHOLD_GID)
    positive = b.targets > b.threshold
    wrong = b.wrong
    few = len(b.targets) <= 20  # a gate's four corners: bigger marks
    many = len(b.targets) > 2000  # drawn as an image: an SVG of 100,000 marks is unusable
    halo, mark = (150, 90) if few else (70, 42)
    for mask, colour, marker in ((positive, POSITIVE, "o"), (~positive, NEGATIVE, "s")):
        # a black halo under a white-edged marker: visible on any colour of the map
        for size, face, edge, z in ((halo, "black", "black", 3), (mark, colour, "white", 4)):
            ax.scatter(
                b.points[mask, 0],
                b.points[mask, 1],
                s=size,
                c=face,
                marker=marker,
                edgecolors=edge,
                linewidths=1.0,
                zorder=z,
                rasterized=many,
            )
    if wrong.any():  # a white-and-black ring around the point, which stays visible
        for width, colour, z in ((3.2, "white", 5), (1.6, "black", 6)):
            ax.scatter(
                b.points[wrong, 0],
                b.points[wrong, 1],
                s=4 * mark,
                marker="o",
                facecolors="none",
                edgecolors=colour,
                linewidths=width,
                zorder=z,
            )
    ax.set_xlabel(plain(b.feature_names[0]))
    ax.set_ylabel(plain(b.feature_names[1]))
    bar = main_fig.colorbar(image, ax=ax, pad=0.02, aspect=30)
    bar.set_label(f"network output ({b.output_activation}); threshold {fmt(b.threshold)}")
    bar.ax.axhline(b.threshold, **_threshold_look())
    cut = fmt(b.threshold)
    handles = [
        Line2D([], [], ls="", marker="o", color=POSITIVE, mec="black", label=f"target > {cut}"),
        Line2D([], [], ls="", marker="s", color=NEGATIVE, mec="black", label=f"target ≤ {cut}"),
        Line2D(
            [],
            [],
            ls="",
            marker="o",
            ms=11,
            mfc="none",
            mec="black",
            mew=1.6,
            label=f"misclassified (ringed): {wrong.sum()}",
        ),
        Line2D([], [], label=f"output = {cut}", **_threshold_look()),
    ]
    main_fig.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False)
    if side_fig is not None:
        _hidden_maps(side_fig, b, hidden, extent, Normalize, np)
    _suptitle(figure, title, subtitle)
    return figure


def _hidden_maps(
    figure: Any, b: Boundary, hidden: list[Any], extent: tuple, normalize: Any, np: Any
) -> None:
    """One small map per unit of the first hidden layer, on one shared colour scale."""
    n = len(hidden)
    columns = 2 if n <= 8 else 4
    rows = math.ceil(n / columns)
    axes = np.atleast_1d(figure.subplots(rows, columns, squeeze=False)).ravel()
    op = ACTIVATIONS.get(b.hidden_activation)
    if op is not None and op.output_range is not None:  # σ in [0, 1], tanh in [-1, 1]
        lo, hi = op.output_range
    else:
        values = np.concatenate([h[np.isfinite(h)] for h in hidden])
        lo, hi = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
        hi = hi if hi > lo else lo + 1.0
    norm = normalize(lo, hi)
    image = None
    for k, ax in enumerate(axes):
        if k >= n:
            ax.set_axis_off()
            continue
        image = ax.imshow(
            hidden[k],
            origin="lower",
            extent=extent,
            cmap=HIDDEN_MAP,
            norm=norm,
            aspect="auto",
            interpolation="nearest",
        )
        ax.scatter(
            b.points[:, 0],
            b.points[:, 1],
            s=5,
            c="white",
            edgecolors="black",
            linewidths=0.3,
            rasterized=True,
        )
        ax.set_xticks([])
        ax.set_yticks([])
        for spine in ax.spines.values():
            spine.set_visible(True)
            spine.set_color("#999999")
        ax.set_title(f"N{k + 1}", fontsize=8, pad=2)
    shown = f"first {n} of {len(b.hidden)} units" if len(b.hidden) > n else f"{n} units"
    figure.suptitle(f"first hidden layer, {shown}", fontsize=9)
    bar = figure.colorbar(image, ax=list(axes), location="bottom", aspect=25, shrink=0.9)
    bar.set_label(f"L1 unit output ({b.hidden_activation})", fontsize=8)
