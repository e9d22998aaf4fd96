"""The five activations added as op table rows (softplus, leaky_relu, elu, gelu, silu): each
against its textbook definition and a derivative derived by hand here, independently of the
row; finite differences; the slope bound and saturation band the table states, measured;
the verdict's reasoning (leaky_relu cannot die, gelu/silu are not monotone); and every
command that takes a function or an activation."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gradviz import ops, stats
from gradviz.cli import cli
from gradviz.engine import Value
from gradviz.expr import FUNCTIONS
from gradviz.spec import ACTIVATION_NAMES
from gradviz.stats import LayerSample

NEW = ("softplus", "leaky_relu", "elu", "gelu", "silu")
C = math.sqrt(2 / math.pi)  # GPT-2's √(2/π)
K = 0.044715


def sigma(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


# The textbook definitions, and their derivatives worked out by hand (chain and product rule):
DEFINITION = {
    "softplus": lambda x: math.log(1 + math.exp(x)),
    "leaky_relu": lambda x: x if x > 0 else 0.01 * x,
    "elu": lambda x: x if x > 0 else math.exp(x) - 1,
    "gelu": lambda x: 0.5 * x * (1 + math.tanh(C * (x + K * x**3))),
    "silu": lambda x: x * sigma(x),
}
BY_HAND = {
    # d/dx ln(1 + e^x) = e^x / (1 + e^x) = σ(x)
    "softplus": lambda x: math.exp(x) / (1 + math.exp(x)),
    "leaky_relu": lambda x: 1.0 if x > 0 else 0.01,
    "elu": lambda x: 1.0 if x > 0 else math.exp(x),
    # u = C(x + Kx³): d/dx ½x(1 + tanh u) = ½(1 + tanh u) + ½x(1 - tanh²u)·C(1 + 3Kx²)
    "gelu": lambda x: (
        0.5 * (1 + math.tanh(C * (x + K * x**3)))
        + 0.5 * x * (1 - math.tanh(C * (x + K * x**3)) ** 2) * C * (1 + 3 * K * x * x)
    ),
    # d/dx x·σ(x) = σ(x) + x·σ(x)(1 - σ(x))
    "silu": lambda x: sigma(x) + x * sigma(x) * (1 - sigma(x)),
}
POINTS = [-7.0, -3.2, -1.3, -0.75, -0.2, 0.1, 0.6, 1.4, 2.4, 5.0]


@pytest.mark.parametrize("name", NEW)
def test_value_and_derivative_are_the_textbooks(name: str) -> None:
    op = ops.UNARY_OPS[name]
    for x in POINTS:
        out = Value(x, label="x")
        y = getattr(out, name)()
        y.backward()
        assert y.data == pytest.approx(DEFINITION[name](x), rel=1e-13, abs=1e-15), x
        assert out.grad == pytest.approx(BY_HAND[name](x), rel=1e-12, abs=1e-15), x
        assert op.local(y.data, x)[0] == out.grad  # the trace's number is the engine's


@pytest.mark.parametrize("name", NEW)
def test_derivative_agrees_with_finite_differences(name: str) -> None:
    f = ops.UNARY_OPS[name].forward
    h = 1e-6
    for x in POINTS:
        numeric = (f(x + h) - f(x - h)) / (2 * h)
        assert ops.UNARY_OPS[name].local(f(x), x)[0] == pytest.approx(numeric, abs=1e-7), x


def test_softplus_is_stable_where_the_formula_overflows() -> None:
    softplus = ops.UNARY_OPS["softplus"].forward
    assert softplus(1000.0) == 1000.0  # ln(1 + e^1000): e^1000 overflows a float
    assert softplus(-1000.0) == 0.0
    assert softplus(-40.0) == pytest.approx(math.exp(-40.0), rel=1e-15)  # the tail kept
    assert ops.UNARY_OPS["elu"].forward(-1000.0) == -1.0
    assert ops.UNARY_OPS["silu"].forward(1000.0) == 1000.0
    assert ops.UNARY_OPS["gelu"].forward(-1000.0) == 0.0


GRID = np.linspace(-30.0, 30.0, 600_001)


def slopes(name: str) -> np.ndarray:
    op = ops.UNARY_OPS[name]
    return np.asarray(op.local(op.forward(GRID), GRID)[0])


@pytest.mark.parametrize(
    ("name", "largest"),
    [("softplus", 1.0), ("leaky_relu", 1.0), ("elu", 1.0), ("gelu", 1.12899), ("silu", 1.09984)],
)
def test_the_slope_bound_is_the_measured_largest_slope(name: str, largest: float) -> None:
    measured = float(np.max(np.abs(slopes(name))))
    bound = ops.UNARY_OPS[name].max_slope
    assert bound is not None and measured <= bound
    assert measured == pytest.approx(largest, abs=1e-5) and bound - measured < 1e-3


@pytest.mark.parametrize("name", NEW)
def test_monotone_as_the_table_says(name: str) -> None:
    rising = bool(np.all(slopes(name) >= 0))
    assert ops.UNARY_OPS[name].monotone == rising
    if not rising:  # gelu and silu dip below 0 before they rise
        assert ops.UNARY_OPS[name].forward(-1.0) < 0 < ops.UNARY_OPS[name].forward(1.0)


@pytest.mark.parametrize("name", NEW)
def test_saturation_band_is_where_the_slope_is_nearly_0(name: str) -> None:
    op = ops.UNARY_OPS[name]
    d = np.abs(slopes(name))
    out = np.asarray(op.forward(GRID))
    if op.saturation is not None:
        low, high = op.saturation
        inside = (out < low) | (out > high)
    elif op.saturation_input is not None:
        low, high = op.saturation_input
        inside = (low > GRID) | (high < GRID)
    else:  # leaky_relu: a slope of 0.01 at least, everywhere
        assert name == "leaky_relu" and d.min() == 0.01
        return
    assert inside.any() and np.all(d[inside] < 0.015)
    # and only there: right outside the band the slope is back above it
    edge = GRID[~inside & (GRID < 0)].min()
    assert abs(op.local(op.forward(edge), edge)[0]) > 0.01


def layer(activation: str, pre: np.ndarray) -> list[LayerSample]:
    """A hidden layer whose units see these pre-activations (one column per unit), and a
    linear output unit after it, their gradients from the engine."""
    units = pre.shape[1]
    zs = [Value(pre[:, j].copy()) for j in range(units)]
    acts = [getattr(z, activation)() for z in zs]
    w2 = [Value(1.0) for _ in range(units)]
    out = Value(0.0)
    for w, a in zip(w2, acts, strict=True):
        out = out + w * a
    (out * out).backward()
    grads = np.array([z.grad for z in zs]).T  # d loss / d z, per sample
    ones = np.ones((units, 1))
    act = np.array([a.data for a in acts]).T
    return [
        LayerSample(
            index=1,
            name="L1",
            activation=activation,
            is_output=False,
            weights=ones,
            biases=np.zeros(units),
            weight_grads=ones * np.mean(grads, axis=0)[:, None],
            bias_grads=np.mean(grads, axis=0),
            pre_activations=pre,
            activations=act,
        ),
        LayerSample(
            index=2,
            name="L2",
            activation="linear",
            is_output=True,
            weights=np.ones((1, units)),
            biases=np.zeros(1),
            weight_grads=np.array([[w.grad.mean() for w in w2]]),
            bias_grads=np.array([float(np.mean(out.grad))]),
            pre_activations=np.array([out.data]).T,
            activations=np.array([out.data]).T,
        ),
    ]


NEGATIVE = np.array([[-8.0, -9.0, -7.5, 1.0], [-8.5, -10.0, -8.0, 2.0], [-9.0, -8.0, -9.5, 0.5]])


def test_leaky_relu_cannot_die_where_relu_does() -> None:
    relu = stats.diagnose(layer("relu", NEGATIVE))
    assert relu.layers[0].dead_units == 3 and relu.layers[0].status == "dead"
    leaky = stats.diagnose(layer("leaky_relu", NEGATIVE))
    assert leaky.layers[0].dead_units == 0 and leaky.layers[0].status != "dead"
    assert leaky.layers[0].saturated is None  # a slope of 0.01 is small, not saturated
    assert not any("are dead" in line or "stuck" in line for line in stats.verdict(leaky))
    assert any("units are dead" in line for line in stats.verdict(relu))


def test_saturating_activations_get_stuck_at_their_low_end() -> None:
    for name in ("softplus", "elu", "gelu", "silu"):
        d = stats.diagnose(layer(name, NEGATIVE))
        assert d.layers[0].dead_units == 3, name
        assert any("stuck at one end" in line for line in stats.verdict(d)), name


def test_gelu_and_silu_outputs_near_0_are_not_read_as_saturated() -> None:
    """An output near 0 of gelu or silu comes from an input near 0 (slope ½) as from a
    very negative one: only the inputs tell them apart, as the table's band says."""
    near_zero = np.array([[0.01, -0.02], [-0.01, 0.02], [0.0, 0.015]])
    for name in ("gelu", "silu"):
        d = stats.diagnose(layer(name, near_zero))
        assert d.layers[0].saturated == 0.0 and d.layers[0].dead_units == 0, name
        assert d.layers[0].mean_slope == pytest.approx(0.5, abs=0.02)
    # the dip: a slope below 0 still passes signal; the mean counts its size
    dip = stats.diagnose(layer("silu", np.full((3, 2), -2.0)))
    assert dip.layers[0].mean_slope == pytest.approx(abs(BY_HAND["silu"](-2.0)), rel=1e-9)


# -- every command ----------------------------------------------------------------------


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, (args, result.output)
    return result.output


@pytest.mark.parametrize("name", NEW)
def test_each_is_a_function_of_draw_trace_check_and_the_page(name: str, tmp_path: Path) -> None:
    assert name in FUNCTIONS and name in run("draw", "--help")
    expression = f"{name}(w*x + b)"
    tree = run("draw", expression, "x=0.5", "w=-2", "b=0.3")
    assert f"← {name}" in tree
    assert "Step" in run("trace", expression, "x=0.5", "w=-2", "b=0.3")
    checked = json.loads(run("check", expression, "x=0.5", "w=-2", "b=0.3", "--json"))
    assert checked["passed"] is True
    page = tmp_path / "page.html"
    run("draw", expression, "x=0.5", "w=-2", "b=0.3", "-o", str(page))
    assert f'"{name}": {{arity: 1' in page.read_text(encoding="utf-8")  # the page computes it


@pytest.mark.parametrize("name", NEW)
def test_each_is_an_activation_of_train_grads_and_compare(name: str, tmp_path: Path) -> None:
    assert name in ACTIVATION_NAMES and name in run("train", "--help")
    spec = tmp_path / "net.toml"
    spec.write_text(
        f'layers = [2, 4, 1]\nactivation = "{name}"\ndata = "xor"\nepochs = 5\n', encoding="utf-8"
    )
    document = json.loads(run("train", str(spec), "--quiet", "--json"))
    assert document["spec"]["activation"] == [name]
    document = json.loads(run("train", "xor", "--activation", name, "--epochs", "5", "--json"))
    assert document["gradients"]["layers"][0]["activation"] == name
    assert name in run("grads", str(spec))
    assert name in run("compare", "xor", f"xor --activation {name}", "--epochs", "5")


def test_each_name_lives_in_at_most_two_files_of_the_package() -> None:
    package = Path(__file__).parent.parent / "gradviz"
    for name in NEW:
        found = subprocess.run(
            ["grep", "-rlw", "--exclude-dir=__pycache__", name, str(package)],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.split()
        assert 1 <= len(found) <= 2, (name, found)
