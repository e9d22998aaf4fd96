"""What a network with two inputs decides: its output over a grid of the input plane.

The grid is evaluated in ONE batched forward pass of the engine, so the picture is the
network's own arithmetic; the marks at the data points are training's own evaluation.
The plots and the terminal map all draw from the same `Boundary`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gradviz.data import Dataset
from gradviz.engine import Value
from gradviz.errors import InputError
from gradviz.nn import LOSS_FUNCTIONS, Network
from gradviz.train import evaluate

MARGIN = 0.1  # of the data's span, on each side of the plane shown
# The forward pass keeps every node's array: at most this many floats (160 MB) in all.
FLOAT_BUDGET = 20_000_000
MIN_SIDE = 48


def decision_threshold(network: Network) -> float:
    """The loss's own threshold between the classes (0.5 for 0/1 targets, 0 for hinge's
    signed score), so the map and the printed accuracy agree."""
    return LOSS_FUNCTIONS[network.loss].threshold


def predicted_positive(output: np.ndarray | float, threshold: float) -> np.ndarray | bool:
    """Strictly above the threshold (as `train.is_correct`): NaN is never positive."""
    return np.asarray(output) > threshold


@dataclass(frozen=True)
class Boundary:
    """The output on a grid (`output[i, j]` at x1 = ys[i], x0 = xs[j], ys increasing),
    the first hidden layer's units on it, and the data with the output at each point."""

    xs: np.ndarray
    ys: np.ndarray
    output: np.ndarray
    hidden: list[np.ndarray]
    hidden_activation: str | None
    output_activation: str
    threshold: float
    points: np.ndarray
    targets: np.ndarray
    point_outputs: np.ndarray
    feature_names: tuple[str, str]

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """(x0 low, x0 high, x1 low, x1 high): the outer edges of the grid's cells."""
        return (*_edges(self.xs), *_edges(self.ys))

    def cell(self, x: float, y: float) -> tuple[int, int] | None:
        """(row, column) of the grid cell holding the point (x, y), or None off the grid."""
        r, c = _index(y, self.ys), _index(x, self.xs)
        return None if r is None or c is None else (r, c)

    def positive(self, output: np.ndarray | float) -> np.ndarray | bool:
        """Which of `output` the network calls the positive class (`predicted_positive`)."""
        return predicted_positive(output, self.threshold)

    @property
    def wrong(self) -> np.ndarray:
        """Which data points the network misclassifies (NaN outputs count as wrong)."""
        predicted = predicted_positive(self.point_outputs, self.threshold)
        finite = np.isfinite(self.point_outputs)
        return ~finite | (predicted != (self.targets > self.threshold))


def require_two_inputs(n_inputs: int, where: str = "") -> None:
    """A decision boundary is drawn over a plane (`where` names what asked)."""
    if n_inputs != 2:
        raise InputError(
            f"{where}a decision boundary needs a network with 2 inputs; this one has {n_inputs}"
        )


def plane(X: np.ndarray) -> tuple[float, float, float, float]:
    """(x0 low, x0 high, x1 low, x1 high): the data's box with a margin on each side."""
    lows, highs = np.nanmin(X, axis=0), np.nanmax(X, axis=0)
    box = []
    for lo, hi in zip(lows.tolist(), highs.tolist(), strict=True):
        span = hi - lo if hi > lo else 1.0
        box += [lo - MARGIN * span, hi + MARGIN * span]
    return box[0], box[1], box[2], box[3]


def boundary(
    network: Network,
    data: Dataset,
    columns: int = 200,
    rows: int = 200,
    outputs: Sequence[float] | None = None,
) -> Boundary:
    """The output and the first hidden layer over a `columns` x `rows` grid (cell
    centres) around the data, in one forward pass (a big network gets a coarser grid:
    `affordable_grid`); the output at the data points is `outputs` when given."""
    require_two_inputs(network.sizes[0])
    columns, rows = affordable_grid(network, columns, rows)
    X = np.asarray(data.X, dtype=np.float64)
    x_lo, x_hi, y_lo, y_hi = plane(X)
    with np.errstate(all="ignore"):  # a box beyond the largest float: NaN, for the caller
        xs = x_lo + (np.arange(columns) + 0.5) * (x_hi - x_lo) / columns
        ys = y_lo + (np.arange(rows) + 0.5) * (y_hi - y_lo) / rows
        gx, gy = np.meshgrid(xs, ys)
        n_grid = gx.size
        built = network.build(
            [Value(g.ravel(), label=f"x{k}") for k, g in enumerate((gx, gy))],
            Value(np.zeros(n_grid), label="y"),
        )
    hidden = []
    if len(network.layers) > 1:
        hidden = [_as_array(a.data, n_grid).reshape(gx.shape) for a in built.act[0]]
    if outputs is None:
        outputs = evaluate(network, data).outputs
    names = tuple(data.feature_names[:2]) if len(data.feature_names) >= 2 else ("x0", "x1")
    return Boundary(
        xs=xs,
        ys=ys,
        output=_as_array(built.output.data, n_grid).reshape(gx.shape),
        hidden=hidden,
        hidden_activation=network.activations[0] if len(network.layers) > 1 else None,
        output_activation=network.activations[-1],
        threshold=decision_threshold(network),
        points=X,
        targets=np.asarray(data.Y, dtype=np.float64),
        point_outputs=np.asarray(outputs, dtype=np.float64),
        feature_names=(names[0], names[1]),
    )


def graph_nodes(network: Network) -> int:
    """About how many nodes one forward graph holds (per unit: 2 per input, bias, act)."""
    return sum(n_out * (2 * n_in + 2) for n_in, n_out in itertools.pairwise(network.sizes)) + 8


def affordable_grid(network: Network, columns: int, rows: int) -> tuple[int, int]:
    """The grid shrunk until nodes x cells fits FLOAT_BUDGET (sides >= MIN_SIDE)."""
    cells = FLOAT_BUDGET // graph_nodes(network)
    if columns * rows <= cells:
        return columns, rows
    scale = math.sqrt(cells / (columns * rows))
    return max(MIN_SIDE, int(columns * scale)), max(MIN_SIDE, int(rows * scale))


def _as_array(data: float | np.ndarray, n: int) -> np.ndarray:
    """A node's data as n values (a constant node holds one float for the whole batch)."""
    values = np.asarray(data, dtype=np.float64)
    return np.broadcast_to(values, (n,)).copy() if values.ndim == 0 else values


def _edges(centres: np.ndarray) -> tuple[float, float]:
    half = (centres[-1] - centres[0]) / (len(centres) - 1) / 2 if len(centres) > 1 else 0.5
    return float(centres[0] - half), float(centres[-1] + half)


def _index(v: float, centres: np.ndarray) -> int | None:
    """The cell (centres evenly spaced) that holds v; None for NaN or off the grid."""
    lo, hi = _edges(centres)
    if not lo <= v <= hi:  # NaN too
        return None
    return min(len(centres) - 1, int((v - lo) / (hi - lo) * len(centres)))
