"""Batched training (gradviz.batched) against the compiled trainer, which is the Value
engine bit for bit (tests/test_train.py): the same record of a run within the bound its
docstring states. ≤ 1e-12 relative per epoch at the start (only the order of the sums
differs), and over whole runs the same final accuracy, statuses, divergence and clipping
counts. Every sample spec is checked, and small specs hypothesis makes up."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradviz import nn, stats
from gradviz import train as T
from gradviz.batched import Batched
from gradviz.engine import Value
from gradviz.model import from_result
from gradviz.ops import ACTIVATIONS
from gradviz.schema import model_dict as to_dict
from gradviz.spec import PRESETS, Spec, load_spec, spec_from_mapping

SAMPLES = sorted(Path(__file__).parent.parent.glob("samples/*.toml"))
START = 1e-12  # relative, per epoch, over the first epochs
EARLY = 5  # epochs compared at START


def run(spec: Spec, batches: bool, monkeypatch: pytest.MonkeyPatch, **options: object):
    """`train` on the execution asked for (the rule decides, in real use)."""
    with monkeypatch.context() as patch:
        patch.setattr(T, "uses_batches", lambda *_: batches)
        try:
            return T.train(spec, **options)
        except T.Diverged as diverged:
            return diverged


def outcome(trained):
    """(the Result, the divergence message or None) of `run`."""
    if isinstance(trained, T.Diverged):
        return trained.result, trained.message
    return trained, None


def relative(a: float, b: float) -> float:
    if a == b or (math.isnan(a) and math.isnan(b)):
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def statuses(history: T.History) -> list[tuple[int, list[str]]]:
    return [
        (epoch, [layer.status for layer in d.layers])
        for epoch, d in stats.history(history.snapshots)
    ]


def assert_same_start(a: T.History, b: T.History, epochs: int = EARLY) -> None:
    for epoch, (x, y) in enumerate(zip(a.loss[:epochs], b.loss[:epochs], strict=True), 1):
        assert relative(x, y) <= START, f"epoch {epoch}: loss {x!r} against {y!r}"
    assert a.accuracy[:epochs] == b.accuracy[:epochs]


def assert_same_run(a: T.Result, b: T.Result) -> None:
    """What a whole run records, apart from rounding: epochs, accuracy at the end,
    every recorded moment's statuses, divergence, clipping counts."""
    assert a.history.epochs_run == b.history.epochs_run
    assert a.final.accuracy == b.final.accuracy
    assert a.history.accuracy[-1] == b.history.accuracy[-1]
    assert statuses(a.history) == statuses(b.history)
    assert [e for e, _ in a.history.snapshots] == [e for e, _ in b.history.snapshots]
    assert [row[:2] for row in a.history.clipping] == [row[:2] for row in b.history.clipping]
    assert (a.history.stopped is None) == (b.history.stopped is None)


def samples_spec(path: Path, epochs: int | None = None) -> Spec:
    spec = load_spec(path)
    if epochs is None:
        return spec
    return spec_from_mapping({**spec.to_dict(), "epochs": min(epochs, spec.epochs)})


# -- every sample, at the start and over whole runs ---------------------------------------


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_every_sample_starts_within_the_bound(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = samples_spec(path, epochs=EARLY)
    compiled, said = outcome(run(spec, False, monkeypatch))
    batched, told = outcome(run(spec, True, monkeypatch))
    assert_same_start(compiled.history, batched.history)
    assert said == told
    # the first record: the gradients of every layer at the initial weights
    first = stats.history(compiled.history.snapshots)[0][1]
    other = stats.history(batched.history.snapshots)[0][1]
    for x, y in zip(first.layers, other.layers, strict=True):
        assert relative(x.rms, y.rms) <= START and x.status == y.status


FULL_RUNS = [
    pytest.param(
        path, marks=[] if path.stem in ("xor", "xor-relu") else pytest.mark.slow, id=path.stem
    )
    for path in SAMPLES
]


@pytest.mark.parametrize("path", FULL_RUNS)
def test_every_sample_records_the_same_run(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = samples_spec(path)
    compiled, said = outcome(run(spec, False, monkeypatch))
    batched, told = outcome(run(spec, True, monkeypatch))
    assert_same_start(compiled.history, batched.history)
    assert_same_run(compiled, batched)
    assert said == told  # the divergence message, epoch and layer (exploding.toml)


def test_exploding_diverges_and_clipping_counts_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    path = Path(__file__).parent.parent / "samples" / "exploding.toml"
    spec = samples_spec(path, epochs=12)
    _, said = outcome(run(spec, False, monkeypatch))
    batched, told = outcome(run(spec, True, monkeypatch))
    assert said is not None and said == told and "training diverged at epoch" in said
    assert batched.history.loss[-1] != batched.history.loss[-1] or math.isinf(
        batched.history.loss[-1]
    )
    clipped = spec_from_mapping({**spec.to_dict(), "clip_norm": 0.5, "epochs": 30})
    a, _ = outcome(run(clipped, False, monkeypatch))
    b, _ = outcome(run(clipped, True, monkeypatch))
    assert a.history.clipping and [r[:2] for r in a.history.clipping] == [
        r[:2] for r in b.history.clipping
    ]
    for x, y in zip(a.history.clipping, b.history.clipping, strict=True):
        assert relative(x[2], y[2]) <= 1e-9 and relative(x[3], y[3]) <= 1e-9
    assert_same_run(a, b)


def test_keep_going_trains_on_through_nan_batched(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = spec_from_mapping(
        {**PRESETS["deep-relu"], "output_activation": "linear", "learning_rate": 1e6, "epochs": 3}
    )
    compiled, _ = outcome(run(spec, False, monkeypatch, keep_going=True))
    batched, _ = outcome(run(spec, True, monkeypatch, keep_going=True))
    assert compiled.history.stopped == batched.history.stopped
    assert "diverged at epoch 3" in (batched.history.stopped or "")
    assert batched.history.epochs_run == 3 and math.isnan(batched.history.loss[-1])
    assert batched.final.accuracy == compiled.final.accuracy == 0.0


def test_the_saved_model_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = spec_from_mapping({**PRESETS["deep-sigmoid"], "epochs": 20, "record_every": 5})
    a = to_dict(from_result(run(spec, False, monkeypatch)))
    b = to_dict(from_result(run(spec, True, monkeypatch)))

    def shape(value: object) -> object:  # every key and list length, every text
        if isinstance(value, dict):
            return {k: shape(v) for k, v in value.items()}
        if isinstance(value, list):
            return [shape(v) for v in value]
        return value if isinstance(value, str | bool) or value is None else type(value)

    assert shape(a) == shape(b)
    np.testing.assert_allclose(
        np.array(a["history"]["loss"], float), np.array(b["history"]["loss"], float), rtol=1e-12
    )


def test_layer_samples_are_the_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    """The statistics' raw numbers from one batched pass against `nn.layer_samples` (the
    engine's graph over the batch): the same arrays to rounding, previous weights too."""
    spec = spec_from_mapping({**PRESETS["moons"], "update": "minibatch 9"})  # hinge, l2, linear
    net = nn.Network.from_spec(spec)
    data = T.load_data(spec)
    previous = np.array(net.flat()) * 0.9
    engine = nn.layer_samples(net, data.X, data.Y, previous)
    batched = Batched(net).samples(np.array(net.flat()), data.X, data.Y, previous)
    for x, y in zip(engine, batched, strict=True):
        for field in ("weights", "biases", "previous_weights", "pre_activations", "activations"):
            np.testing.assert_allclose(getattr(y, field), getattr(x, field), rtol=1e-13, atol=0)
        scale = np.max(np.abs(x.weight_grads))
        np.testing.assert_allclose(y.weight_grads, x.weight_grads, rtol=1e-12, atol=1e-14 * scale)
        np.testing.assert_allclose(y.bias_grads, x.bias_grads, rtol=1e-12, atol=1e-14 * scale)
        assert (x.index, x.name, x.activation, x.is_output) == (
            y.index,
            y.name,
            y.activation,
            y.is_output,
        )


def test_evaluate_agrees_with_the_compiled_forward_pass() -> None:
    spec = spec_from_mapping(PRESETS["deep-relu"])
    net = nn.Network.from_spec(spec)
    data = T.load_data(spec)
    assert T.uses_batches(net.sizes, data.size, data.size, 1)  # the rule's choice here
    batched = T.evaluate(net, data)
    compiled = T.evaluate(net, data, batched=False)
    assert relative(batched.loss, compiled.loss) <= START
    assert batched.accuracy == compiled.accuracy
    np.testing.assert_allclose(batched.outputs, compiled.outputs, rtol=1e-13)


def test_an_activation_comes_from_its_op_row() -> None:
    """The batched path has no activation of its own: each layer's value and slope are its
    row's `forward` and `local` (a finite difference of the loss checks them here), and a
    loss is built from nn.LOSS_FUNCTIONS on the engine's Values."""
    for name, op in ACTIVATIONS.items():
        if op is None:
            continue
        net = nn.Network((2, 3, 1), (name, "sigmoid"))
        net.initialise("xavier", 3)
        X = np.array([[0.3, -0.7], [1.1, 0.4], [-0.2, -1.3]])
        Y = np.array([1.0, 0.0, 1.0])
        b = Batched(net)
        P = np.array(net.flat())
        layers = b.layers(P)
        pre, act = b.forward(layers, X)
        np.testing.assert_array_equal(act[0], op.forward(pre[0]))
        _, G = b.gradient(layers, X, Y, pre, act)
        h = 1e-6
        for k in range(b.size):
            up, down = P.copy(), P.copy()
            up[k] += h
            down[k] -= h
            slope = (b.evaluate(up, X, Y)[0] - b.evaluate(down, X, Y)[0]) / (2 * h)
            assert slope == pytest.approx(G[k], rel=1e-5, abs=1e-8), (name, k)


def test_a_loss_is_built_from_its_definition() -> None:
    net = nn.Network((2, 1), ("sigmoid",), "bce")
    b = Batched(net)
    out, y = np.array([0.2, 0.9]), np.array([1.0, 0.0])
    losses, slopes = b.losses(out, y, slopes=True)
    for k in range(2):  # the engine on one example at a time
        o = Value(float(out[k]))
        loss = b.loss.build(o, Value(float(y[k])))
        loss.backward()
        assert losses[k] == pytest.approx(loss.data, rel=1e-15)
        assert slopes[k] == pytest.approx(o.grad, rel=1e-15)


# -- the rule ---------------------------------------------------------------------------


def test_the_rule_keeps_compiled_code_for_tiny_nets_and_online_updates() -> None:
    assert not T.uses_batches((2, 4, 1), 4, 4, 2000)  # xor: 0.54x numpy's time compiled
    assert not T.uses_batches((2, 8, 1), 80, 1, 2000)  # the circle's online SGD
    assert T.uses_batches((2, *[16] * 9, 1), 80, 80, 300)  # the lesson's deep networks
    assert T.uses_batches((2, 16, 16, 1), 100, 100, 100)  # the moons demo
    assert T.uses_batches((2, 64, 70, 1), 1000, 1000, 300)  # about the largest allowed


# -- hypothesis: small specs of every kind ------------------------------------------------


@st.composite
def small_specs(draw: st.DrawFn) -> Spec:
    hidden = draw(st.lists(st.integers(1, 5), min_size=0, max_size=2))
    names = [name for name in ACTIVATIONS]
    loss = draw(st.sampled_from(["mse", "bce", "hinge"]))
    # the spec's rules: bce needs a sigmoid output, hinge one that can be negative
    signed = [
        name for name in names if ACTIVATIONS[name] is None or not ACTIVATIONS[name].never_negative
    ]
    output = (
        "sigmoid" if loss == "bce" else draw(st.sampled_from(signed if loss == "hinge" else names))
    )
    update = draw(st.sampled_from(["full", "online", "minibatch 3"]))
    clip = draw(st.sampled_from([{}, {"clip_value": 0.05}, {"clip_norm": 0.1}]))
    raw = {
        "layers": [2, *hidden, 1],
        "activation": [draw(st.sampled_from(names)) for _ in hidden],
        "output_activation": output,
        "init": draw(st.sampled_from(["default", "xavier", "he", "uniform1", "micrograd"])),
        "loss": loss,
        "data": draw(
            st.sampled_from(["xor", {"name": "circle", "size": 12}, {"name": "moons", "size": 10}])
        ),
        "epochs": draw(st.integers(1, 3)),
        "learning_rate": draw(st.sampled_from([0.05, 0.3, 1.0])),
        "update": update,
        "seed": draw(st.integers(0, 2**16)),
        "l2": draw(st.sampled_from([0.0, 1e-3])),
        "record_every": 1,
        **clip,
    }
    return spec_from_mapping(raw)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(spec=small_specs())
def test_small_specs_agree_with_the_compiled_engine(
    spec: Spec, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled, said = outcome(run(spec, False, monkeypatch))
    batched, told = outcome(run(spec, True, monkeypatch))
    assert_same_start(compiled.history, batched.history, spec.epochs)
    assert_same_run(compiled, batched)
    assert said == told
    for x, y in zip(compiled.network.flat(), batched.network.flat(), strict=True):
        assert relative(x, y) <= 1e-11 or abs(x - y) <= 1e-14


@pytest.mark.parametrize("activation", [name for name in ACTIVATIONS if name != "linear"])
def test_every_activation_trains_batched_as_compiled(
    activation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each activation of the op table (the five op-rows added too: softplus, leaky_relu,
    elu, gelu, silu) runs in the batched execution from its row alone, with the compiled
    engine's numbers."""
    spec = spec_from_mapping(
        {
            "layers": [2, 8, 8, 1],
            "activation": activation,
            "init": "xavier",
            "data": {"name": "circle", "size": 40},
            "epochs": 6,
            "learning_rate": 0.5,
            "record_every": 1,
        }
    )
    compiled, said = outcome(run(spec, False, monkeypatch))
    batched, told = outcome(run(spec, True, monkeypatch))
    assert said is None and told is None
    assert_same_start(compiled.history, batched.history, spec.epochs)
    assert_same_run(compiled, batched)


def test_the_statistics_pass_is_the_next_epochs_first_and_changes_no_bit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A full batch's statistics are measured on all rows after an epoch, which is the pass
    the next epoch starts with: it is reused (once per recording), and a run that
    recomputes every pass records the same bits (l2 and clipping too)."""
    reused = []
    keep = Batched._measured_pass

    def counting(self: Batched, *args: object) -> object:
        kept = keep(self, *args)
        reused.append(kept is not None)
        return kept

    def never(self: Batched, *args: object) -> None:
        self._measured = None

    variants = [
        {**PRESETS["deep-sigmoid"], "epochs": 12, "record_every": 2},
        {**PRESETS["deep-relu"], "epochs": 8, "record_every": 1, "l2": 0.01, "clip_norm": 0.5},
        {**PRESETS["moons"], "epochs": 6, "update": "minibatch 25"},  # never reused
    ]
    for raw in variants:
        spec = spec_from_mapping(raw)
        reused.clear()
        monkeypatch.setattr(Batched, "_measured_pass", counting)
        fast = run(spec, True, monkeypatch)
        hits = sum(reused)
        monkeypatch.setattr(Batched, "_measured_pass", never)
        slow = run(spec, True, monkeypatch)
        full = spec.update == "full"
        # every recording but the last is followed by an epoch that starts with its pass
        assert hits == (len(fast.history.snapshots) - 1 if full else 0), raw["name"]
        assert [x.hex() for x in fast.history.loss] == [x.hex() for x in slow.history.loss]
        assert fast.history.accuracy == slow.history.accuracy
        assert fast.history.clipping == slow.history.clipping
        assert np.array_equal(np.array(fast.network.flat()), np.array(slow.network.flat()))
        a, b = to_dict(from_result(fast)), to_dict(from_result(slow))
        assert a == b


def test_a_statistics_pass_is_not_reused_for_other_weights_or_rows() -> None:
    spec = spec_from_mapping(PRESETS["deep-sigmoid"])
    net = nn.Network.from_spec(spec)
    data = T.load_data(spec)
    batched = Batched(net)
    P = np.array(net.flat())
    batched.samples(P, data.X, data.Y)
    assert batched._measured_pass(P + 1e-9, data.X, data.Y) is None
    batched.samples(P, data.X, data.Y)
    assert batched._measured_pass(P, data.X[::-1], data.Y[::-1]) is None
    batched.samples(P, data.X, data.Y)
    assert batched._measured_pass(P, data.X[:40], data.Y[:40]) is None
    batched.samples(P, data.X, data.Y)
    assert batched._measured_pass(P, data.X, data.Y) is not None
    assert batched._measured_pass(P, data.X, data.Y) is None  # used once
