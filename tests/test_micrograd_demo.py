"""micrograd's demo as a spec: hinge loss, l2, the linear schedule, micrograd's init and
scikit-learn's moons, checked against independent numbers (scikit-learn's points and
micrograd's own losses, recorded as constants) and against micrograd run beside us."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gradviz import nn
from gradviz import train as T
from gradviz.cli import cli
from gradviz.data import DataSpec, load
from gradviz.engine import Value
from gradviz.errors import DataError, SpecError
from gradviz.nn import LOSS_FUNCTIONS
from gradviz.spec import Spec, load_spec, preset, spec_from_mapping

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

# scikit-learn 1.9.1: make_moons(100, noise=0.1, random_state=1), rows 0, 1, 50, 99
SKLEARN_MOONS_100 = {
    0: ([1.3561737160849392, -0.33694213016569713], 1),
    1: ([1.6680803377128437, -0.33290256940598334], 1),
    50: ([-0.9093871829662543, 0.55106030082501], 0),
    99: ([-0.8797829509731991, 0.789539998328938], 0),
}
# make_moons(7, noise=0.3, random_state=0): every row (an odd count: 3 on the upper moon)
SKLEARN_MOONS_7 = (
    [
        [1.7471827838512137, 1.0909773343609683],
        [-0.6201644410426665, -0.1517629619281534],
        [0.7635602335413162, 1.3242435739166336],
        [0.14529364623619942, 0.6737421436120186],
        [0.9455252281806412, 0.42306138933936427],
        [1.3876584927059379, -0.2834659091115426],
        [0.21177361647986348, -0.25294731128585374],
    ],
    [1, 0, 0, 1, 0, 1, 1],
)


def test_moons_are_scikit_learns_points_bit_for_bit() -> None:
    data = load(DataSpec("moons", size=100, noise=0.1, seed=1))
    for row, (point, label) in SKLEARN_MOONS_100.items():
        assert data.X[row].tolist() == point and data.Y[row] == label
    data = load(DataSpec("moons", size=7, noise=0.3, seed=0))
    assert data.X.tolist() == SKLEARN_MOONS_7[0] and data.Y.tolist() == SKLEARN_MOONS_7[1]


def test_moons_seed_is_a_randomstate_seed() -> None:
    with pytest.raises(SpecError, match=r"data\.seed"):
        spec_from_mapping({"layers": [2, 1], "data": {"name": "moons", "seed": 2**32}}, locate=str)


@pytest.mark.parametrize(
    ("out", "y", "loss", "slope"),
    [
        (0.3, 1.0, 0.7, -1.0),  # t = +1: 1 − 0.3
        (0.3, 0.0, 1.3, 1.0),  # t = −1: 1 + 0.3
        (2.0, 1.0, 0.0, 0.0),  # beyond the margin: no loss, no gradient
        (-1.5, 0.0, 0.0, 0.0),
    ],
)
def test_hinge_loss_by_hand(out: float, y: float, loss: float, slope: float) -> None:
    output = Value(out)
    value = LOSS_FUNCTIONS["hinge"].build(output, Value(y))
    value.backward()
    assert value.data == pytest.approx(loss, abs=1e-15)
    assert output.grad == slope


def test_hinge_defaults_to_a_linear_output_and_judges_by_sign() -> None:
    spec = spec_from_mapping({"layers": [2, 3, 1], "data": "xor", "loss": "hinge"})
    assert spec.activations == ("sigmoid", "linear")
    net = nn.Network((1, 1), ("linear",), "hinge")
    net.set_flat([1.0, 0.0])  # output = x
    data = T.Dataset("d", np.array([[0.2], [-0.1], [0.0], [0.3]]), np.array([1, 0, 0, 0.0]), ("x",))
    evaluation = T.evaluate(net, data)
    # right: 0.2 (t=+1), −0.1 (t=−1), 0.0 (t=−1, on the −1 side as micrograd's `> 0` has it)
    assert evaluation.accuracy == 0.75
    assert evaluation.loss == pytest.approx((0.8 + 0.9 + 1.0 + 1.3) / 4, abs=1e-15)


def test_l2_adds_its_gradient_and_its_term() -> None:
    spec = spec_from_mapping({"layers": [2, 2, 1], "data": "xor", "init": "uniform1", "l2": 0.25})
    net = nn.Network.from_spec(spec)
    plain = net.copy()
    plain.l2 = 0.0
    data = T.load_data(spec)
    with_l2 = nn.layer_samples(net, data.X, data.Y)
    without = nn.layer_samples(plain, data.X, data.Y)
    for a, b in zip(with_l2, without, strict=True):  # d(0.25·w²)/dw = 0.5·w, biases too
        assert np.allclose(a.weight_grads - b.weight_grads, 0.5 * a.weights, atol=1e-15)
        assert np.allclose(a.bias_grads - b.bias_grads, 0.5 * a.biases, atol=1e-15)
    weights = net.flat()
    expected = T.evaluate(plain, data).loss + 0.25 * sum(w * w for w in weights)
    assert T.evaluate(net, data).loss == pytest.approx(expected, rel=1e-15)


def test_linear_schedule_is_micrograds() -> None:
    spec = preset("moons")
    for k in (0, 1, 50, 99):
        assert spec.rate_at(k + 1) == 1.0 - 0.9 * k / 100  # the demo's own expression
    assert preset("xor").rate_at(7) == 1.0  # constant


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"lr_end": 0.1}, 'add lr_schedule = "linear"'),
        ({"lr_schedule": "linear"}, "needs an end value"),
        ({"lr_schedule": "cosine", "lr_end": 0.1}, "expected one of constant, linear"),
        ({"l2": -1}, "must be a number from 0"),
        ({"l2": True}, "must be a number from 0"),
    ],
)
def test_schedule_and_l2_mistakes_name_the_key(changes: dict, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        spec_from_mapping({"layers": [2, 1], "data": "xor", **changes})


def test_micrograd_init_is_uniform_weights_and_zero_biases() -> None:
    net = nn.Network.from_spec(preset("moons"))
    for W, b in net.weights():
        assert np.all(b == 0.0) and np.all(np.abs(W) <= 1.0)
    W = np.concatenate([W.ravel() for W, _ in net.weights()])
    assert 0.4 < np.mean(np.abs(W)) < 0.6  # U(−1, 1): mean |w| = 0.5


def test_moons_sample_is_the_preset() -> None:
    assert load_spec(SAMPLES / "moons.toml") == preset("moons")


# micrograd 0.1.0 running demo.ipynb's loop (make_moons(100, noise=0.1, random_state=1),
# y*2-1, total_loss = data_loss + 1e-4·Σp², lr = 1.0 - 0.9*k/100) from gradviz's initial
# weights of the moons preset: its total_loss at steps k (a run of minutes, kept as
# numbers); its accuracy was 73% at step 0, first 100% at step 35, 100% at step 99
MICROGRAD_LOSSES = {
    0: 0.9354917156252972,
    1: 1.214739307956981,
    10: 0.24204034041740272,
    50: 0.028379740343910984,
    99: 0.014845702283353667,
}


@pytest.mark.slow
def test_moons_sample_trains_to_100_percent_with_micrograds_losses() -> None:
    result = CliRunner().invoke(cli, ["train", str(SAMPLES / "moons.toml"), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["final"]["accuracy"] == 1.0
    assert payload["spec"]["lr_schedule"] == "linear" and payload["spec"]["l2"] == 1e-4
    for step, loss in MICROGRAD_LOSSES.items():
        assert abs(payload["loss"][step] - loss) < 1e-12, step
    assert payload["accuracy"][0] == 0.73 and payload["accuracy"][99] == 1.0
    assert payload["accuracy"].index(1.0) == 35


def _micrograd_run(spec: Spec, steps: int) -> tuple[list[float], list[float]]:
    """demo.ipynb's loop, on micrograd's own Value and MLP, from our initial weights."""
    engine = pytest.importorskip("micrograd.engine")
    mnn = pytest.importorskip("micrograd.nn")
    network = nn.Network.from_spec(spec)
    data = T.load_data(spec)
    model = mnn.MLP(2, [16, 16, 1])
    for p, value in zip(model.parameters(), network.flat(), strict=True):
        p.data = value
    X = data.X.tolist()
    y = [2 * label - 1 for label in data.Y.tolist()]
    losses, accuracies = [], []
    for k in range(steps):
        inputs = [list(map(engine.Value, row)) for row in X]
        scores = list(map(model, inputs))
        margins = [(1 + -yi * si).relu() for yi, si in zip(y, scores, strict=True)]
        data_loss = sum(margins) * (1.0 / len(margins))
        reg_loss = 1e-4 * sum(p * p for p in model.parameters())
        total = data_loss + reg_loss
        right = [(yi > 0) == (si.data > 0) for yi, si in zip(y, scores, strict=True)]
        model.zero_grad()
        total.backward()
        rate = spec.learning_rate - (spec.learning_rate - spec.lr_end) * k / steps
        for p in model.parameters():
            p.data -= rate * p.grad
        losses.append(total.data)
        accuracies.append(sum(right) / len(right))
    return losses, accuracies


@pytest.mark.slow
def test_losses_equal_micrograds_own_run_step_by_step(tmp_path: Path) -> None:
    """The library and the CLI against micrograd itself, on 24 moons and 6 steps (its
    graph per step is slow: the full demo takes it minutes)."""
    text = (SAMPLES / "moons.toml").read_text()
    text = text.replace("size = 100", "size = 24").replace("epochs = 100", "epochs = 6")
    path = tmp_path / "small.toml"
    path.write_text(text)
    spec = load_spec(path)
    assert (spec.epochs, spec.data.size) == (6, 24)
    theirs, accuracies = _micrograd_run(spec, 6)
    assert all(math.isfinite(v) for v in theirs)
    ours = T.train(spec, record=False)
    assert np.max(np.abs(np.array(ours.history.loss) - theirs)) < 1e-12
    assert ours.history.accuracy == accuracies
    result = CliRunner().invoke(cli, ["train", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["loss"] == ours.history.loss


def test_csv_labels_may_be_plus_minus_one(tmp_path: Path) -> None:
    path = tmp_path / "pm.csv"
    path.write_text("x,y\n0.5,1\n-0.5,-1\n")
    assert load(DataSpec("csv", path=str(path))).Y.tolist() == [1.0, 0.0]
    path.write_text("x,y\n0.5,1\n-0.5,-1\n0.1,0\n")
    with pytest.raises(DataError, match=r"line 4: labels 0 \(line 4\) and −1 \(line 3\)"):
        load(DataSpec("csv", path=str(path)))
