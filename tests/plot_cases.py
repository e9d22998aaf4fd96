"""Pictures the plot tests share: made once per session from the samples and small
hand-made networks, so the browser tests and the file tests look at the same bytes."""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import numpy as np

from gradviz import stats
from gradviz.boundary import boundary
from gradviz.data import Dataset
from gradviz.measure import measure
from gradviz.nn import LayerSample, Network
from gradviz.render.plots import boundary_plot, curves_plot, grads_plot
from gradviz.spec import resolve_spec
from gradviz.train import train

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
# The plots `make samples` writes under docs/ (kept fresh by test_samples_tool.py).
DOCS_PLOTS = ("deep-sigmoid-grads.svg", "xor-boundary.svg", "circle-boundary.svg")


def layer(i: int, n: int, grad: float) -> LayerSample:
    """A one-weight sigmoid layer whose weight gradient is `grad`."""
    return LayerSample(
        index=i,
        name=f"L{i}",
        activation="sigmoid",
        is_output=i == n,
        weights=np.array([[0.5]]),
        biases=np.array([0.0]),
        weight_grads=np.array([[grad]]),
        bias_grads=np.array([grad]),
        pre_activations=np.array([[0.1, 0.2]]),
        activations=np.array([[0.52, 0.55]]),
    )


def odd_history() -> stats.History:
    """Four layers over five moments: a NaN, an exact zero and a spread of magnitudes."""
    moments = []
    for epoch in range(0, 50, 10):
        grads = [10.0 ** -(7 - epoch / 10), 0.0 if epoch == 20 else 1e-3, 1e-2, 0.1]
        if epoch == 30:
            grads[0] = math.nan
        moments.append((epoch, [layer(i + 1, 4, g) for i, g in enumerate(grads)]))
    return stats.history(moments)


def diagonal_network(sharpness: float = 4.0) -> Network:
    """One sigmoid neuron, output σ(k·(x0 − x1)): above 0.5 exactly where x0 > x1."""
    network = Network((2, 1), ("sigmoid",))
    network.set_weights([(np.array([[sharpness, -sharpness]]), np.array([0.0]))])
    return network


def square_data(targets: tuple[float, ...] = (0.0, 0.0, 1.0, 0.0)) -> Dataset:
    """The corners (0,0), (0,1), (1,0), (1,1) of the unit square."""
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    return Dataset("corners", X, np.array(targets), ("x0", "x1"))


@cache
def trained(name: str, epochs: int | None = None):
    overrides = {"epochs": epochs} if epochs else {}
    spec = resolve_spec(
        str(ROOT / "samples" / f"{name}.toml")
        if (ROOT / "samples" / f"{name}.toml").is_file()
        else name,
        overrides,
        {},
    )
    return train(spec)


# The pictures' names, known without making them: tests are parametrized by these at
# collection, and the networks behind them are trained only when a test asks (`pictures`).
PICTURE_NAMES = (
    "circle-curves",
    "deep-relu-grads",
    "deep-sigmoid-bars",
    "diagonal-boundary",
    "moons-boundary",
    "nan-and-zero-grads",
)


@cache
def _subjects() -> tuple:
    """What the pictures show, trained once for every format."""
    relu = measure(str(ROOT / "samples" / "deep-relu.toml"), epochs=200, every=10)
    sigmoid = measure(str(ROOT / "samples" / "deep-sigmoid.toml"))
    return relu, sigmoid, odd_history(), trained("circle"), trained("moons", 300)


@cache
def pictures(fmt: str = "svg") -> dict[str, bytes]:
    """name -> picture bytes, one of each kind and shape (named as PICTURE_NAMES)."""
    relu, sigmoid, history, circle, moons = _subjects()
    return {
        "deep-relu-grads": grads_plot(
            relu.diagnosis(),
            relu.snapshots,
            "samples/deep-relu.toml: rms gradient per layer",
            relu.description,
            fmt,
        ),
        "deep-sigmoid-bars": grads_plot(
            sigmoid.diagnosis(), None, "samples/deep-sigmoid.toml", sigmoid.description, fmt
        ),
        "nan-and-zero-grads": grads_plot(history[-1][1], history, "a <chain> & $x$", "", fmt),
        "circle-curves": curves_plot(
            circle.history.loss, circle.history.accuracy, 1, "samples/circle.toml", "", fmt
        ),
        "moons-boundary": boundary_plot(
            boundary(moons.network, moons.dataset), "moons", "after 300 epochs", fmt
        ),
        "diagonal-boundary": boundary_plot(
            boundary(diagonal_network(), square_data()), "one neuron", "", fmt
        ),
    }
