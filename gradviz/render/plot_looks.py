"""What each plot shows, decided once for its two drawers: matplotlib for the files
(`plots`) and the pages' inline SVG (`page_plots`).

Colours safe for the common colour-vision deficiencies, with shapes or hatching beside
every colour that carries meaning: gradient magnitude on `magma`, darkest for the smallest;
a vanishing or stalled layer's bar vivid magenta and hatched, as the terminal shows it;
NaN/inf cyan with crosses, exact zeros white with dots; the decision boundary on the
diverging purple-orange map centred on the decision threshold.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from gradviz.numbers import fmt
from gradviz.ops import ACTIVATIONS
from gradviz.records import Diagnosis, History, LayerStats, series

if TYPE_CHECKING:
    from gradviz.boundary import Boundary

STATUS_MEANINGS = "gradviz.stats.status_help()"  # each status's rule, in words
VANISHING = "#c2187d"  # vivid magenta, as the terminal's vanishing/stalled
NONFINITE = ("#56b4e9", "xxx")  # NaN/inf: cyan, crossed
ZERO = ("#ffffff", "...")  # exact zeros: white, dotted
STATUS_COLOURS = {  # status -> (bar colour, matplotlib hatch)
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
HEALTHY = ("#9ab7d3", "")  # a status of no colour of its own
# A status's text a shade darker than its bar where the bar colour is too light to read.
DARK_TEXT = {"#e69f00": "#9a5c00", "#9ab7d3": "#333333", NONFINITE[0]: "#00669b"}
LOUD = ("vanishing", "stalled", "NaN", "exploding", "dead")  # in bold
LOSS_COLOUR, ACCURACY_COLOUR = "#0072b2", "#009e73"  # the curves
BAD_MARK = "#d55e00"  # the x on a NaN/inf epoch
MAGNITUDE_MAP = "magma"  # sequential, perceptually uniform: dark = small
BOUNDARY_MAP = "PuOr_r"  # diverging: purple below the threshold, orange above
POSITIVE, NEGATIVE = "#b35806", "#542788"  # the two ends of PuOr, for the points
HIDDEN_MAP = "viridis"
MAX_HIDDEN_MAPS = 16
SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def power_label(value: float) -> str:
    """A log axis's label: 10⁻³ for 0.001, 2×10⁻³ for 0.002, in plain text with Unicode
    superscripts (not TeX)."""
    k = math.floor(math.log10(value) + 1e-9)
    mantissa = round(value / 10.0**k, 6)
    power = "10" + str(k).translate(SUPERSCRIPT)
    return power if mantissa == 1 else f"{mantissa:g}×{power}"


# Magnitudes beyond these are drawn at them, and the plot says so: a log axis pads its
# limits and places ticks a stride past them in powers of ten, which overflow (inf, and a
# RuntimeWarning or an OverflowError) far below the float maximum, 1.8e308.
PLOT_MAX = 1e200
PLOT_MIN = 1e-200  # positive values, on a log axis


def within(value: float, log: bool = False) -> float:
    """`value` within ±PLOT_MAX (on a log axis, at least PLOT_MIN); NaN and ±inf as they
    are (drawn as gaps, and marked)."""
    if not math.isfinite(value):
        return value
    if log:
        return min(max(value, PLOT_MIN), PLOT_MAX)
    return min(max(value, -PLOT_MAX), PLOT_MAX)


def clip(label: str, most: int) -> str:
    return label if len(label) <= most else label[: most - 1] + "…"


# -- gradients per layer -------------------------------------------------------------------


def grad_rows(
    diagnosis: Diagnosis, snapshots: History | None
) -> tuple[bool, list[int], list[list[float]], list[float]]:
    """(heat map or not: it needs two recorded moments, its epochs, each layer's row within
    the limits (NaN where it was not recorded), every finite positive magnitude of bars
    and map)."""
    heat = bool(snapshots) and len(snapshots) > 1  # type: ignore[arg-type]
    layers = diagnosis.layers
    epochs, names, rows = series(snapshots) if heat and snapshots else ([], [], [])
    row_of = dict(zip(names, rows, strict=True))
    gap = [math.nan] * len(epochs)
    rows = [[within(v, True) if v > 0 else v for v in row_of.get(lay.name, gap)] for lay in layers]
    values = [lay.rms for lay in layers] + [v for row in rows for v in row]
    return heat, epochs, rows, [within(v, log=True) for v in values if 0 < v < math.inf]


# The gradients plot's words: its two panels' titles, the bars' axis, the map's colour scale,
# the legend's title (with where the statuses are explained).
NOW, OVER_TRAINING = "now: rms gradient per layer", "over training"
RMS_AXIS, RMS_COLOURS = "rms gradient (log scale)", "rms gradient (log scale; darkest = smallest)"
STATUS_KEY = "bar colour: status (see {})"


def cell_edges(epochs: Sequence[int]) -> list[float]:
    """The heat map's column edges: each recorded epoch's cell as wide as the time it
    stands for (halfway to its neighbours), a lone one one epoch wide."""
    if len(epochs) == 1:
        return [epochs[0] - 0.5, epochs[0] + 0.5]
    mids = [(a + b) / 2 for a, b in itertools.pairwise(epochs)]
    return [epochs[0] - (mids[0] - epochs[0]), *mids, epochs[-1] + (epochs[-1] - mids[-1])]


def bar_look(layer: LayerStats) -> tuple[str, tuple[str, str]]:
    """(kind, (colour, hatch)) of a layer's bar: "bar" (a length to show, in its status'
    colour), "nonfinite" (the whole row, crossed) or "zero" (a short dotted stub)."""
    v = within(layer.rms, log=True)
    if 0 < v < math.inf:
        return "bar", STATUS_COLOURS.get(layer.status, HEALTHY)
    return ("nonfinite", NONFINITE) if not math.isfinite(v) else ("zero", ZERO)


def status_words(layer: LayerStats) -> tuple[str, str, bool]:
    """The words beside a bar, their colour and whether they are bold."""
    ink = STATUS_COLOURS.get(layer.status, HEALTHY)[0]
    return f"{fmt(layer.rms, 2)} {layer.status}", DARK_TEXT.get(ink, ink), layer.status in LOUD


def grads_keys(
    layers: Sequence[LayerStats], rows: list[list[float]]
) -> list[tuple[str, tuple[str, str]]]:
    """The legend: each status shown, then NaN/inf and exactly 0 where any value is."""
    shown = [s for s in STATUS_COLOURS if any(lay.status == s for lay in layers)]
    keys = [(s, STATUS_COLOURS[s]) for s in shown]
    flags = [lay.rms for lay in layers] + [v for row in rows for v in row]
    if any(not math.isfinite(v) for v in flags) and "NaN" not in shown:
        keys.append(("NaN/inf", NONFINITE))
    if any(v == 0 for v in flags):
        keys.append(("exactly 0", ZERO))
    return keys


# -- loss and accuracy ---------------------------------------------------------------------


# What a curve's point is, by what it counts.
PER_POINT = {
    "epoch": "mean per epoch, as training saw the examples",
    "step": "as logged at each optimizer step: that step's batch",
}
LOSS_AXIS = {True: "loss (log scale)", False: "loss"}
ACCURACY_RANGE = (-0.03, 1.03)  # 0 to 100 %, a little room either side
BAD_LOSS = "x: NaN/inf loss"  # the note beside the marks on NaN/inf epochs


def loss_series(
    loss: Sequence[float], every: int
) -> tuple[list[int], bool, list[float], list[float], bool]:
    """(the epochs, log scale or not, the losses within the limits, the finite ones of
    those, whether any was moved to a limit)."""
    given = [v for v in loss if math.isfinite(v)]
    log = bool(given) and min(given) > 0
    drawn = [within(v, log) for v in loss]
    finite = [v for v in drawn if math.isfinite(v)]
    return [every * (i + 1) for i in range(len(loss))], log, drawn, finite, finite != given


# -- decision boundary ---------------------------------------------------------------------


FEW_POINTS = 20  # up to this many (a gate's four corners): bigger marks


def output_norm(b: Boundary) -> tuple[float, float]:
    """The colour range: [0, 1] for a sigmoid output, else symmetric about the threshold
    (the map's neutral middle)."""
    if b.output_activation == "sigmoid":
        return 0.0, 1.0
    finite = b.output[np.isfinite(b.output)]
    reach = float(np.max(np.abs(finite - b.threshold))) if finite.size else 1.0
    reach = reach if reach > 0 else 1.0
    return b.threshold - reach, b.threshold + reach


def hidden_range(b: Boundary, hidden: list[np.ndarray]) -> tuple[float, float]:
    """The hidden maps' colour scale: the activation's range (σ, tanh), else the values'."""
    op = ACTIVATIONS.get(b.hidden_activation or "")
    if op is not None and op.output_range is not None:
        return op.output_range
    values = np.concatenate([h[np.isfinite(h)] for h in hidden])
    lo, hi = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
    return lo, hi if hi > lo else lo + 1.0


def boundary_words(b: Boundary) -> tuple[str, str, str, str, str]:
    """The colour bar's label and the legend's four keys: the two classes, the ringed
    points, the threshold's contour."""
    cut = fmt(b.threshold)
    return (
        f"network output ({b.output_activation}); threshold {cut}",
        f"target > {cut}",
        f"target ≤ {cut}",
        f"misclassified (ringed): {int(b.wrong.sum())}",
        f"output = {cut}",
    )


def hidden_grid(b: Boundary, hidden: list[np.ndarray]) -> tuple[int, int, str, str]:
    """(columns, rows, title, colour bar's label) of the small maps of the first hidden
    layer's units."""
    n = len(hidden)
    columns = 2 if n <= 8 else 4
    shown = f"first {n} of {len(b.hidden)} units" if len(b.hidden) > n else f"{n} units"
    heading = f"first hidden layer, {shown}"
    return columns, math.ceil(n / columns), heading, f"L1 unit output ({b.hidden_activation})"
