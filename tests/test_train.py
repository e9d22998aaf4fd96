"""Training: the compiled fast path gives the plain engine's numbers bit for bit, the same
seed gives the same bits, the classic networks learn, and divergence is reported."""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest

from gradviz import compile as C
from gradviz import nn, stats
from gradviz import train as T
from gradviz.cli import flag
from gradviz.data import MAX_POINTS, load
from gradviz.engine import Op, Value, apply
from gradviz.errors import SpecError, TrainingError
from gradviz.spec import MAX_PARAMETERS, PRESETS, Spec, load_spec, spec_from_mapping
from gradviz.stats import Diagnosis


def spec_of(name: str, **changes: object) -> Spec:
    return spec_from_mapping({**PRESETS[name], **changes})


def bits(values: list[float]) -> list[bytes]:
    """Exact float identity (also tells 0.0 from -0.0, and NaN payloads apart)."""
    return [struct.pack("<d", v) for v in values]


def reference_train(spec: Spec, epochs: int) -> tuple[list[float], list[float]]:
    """The same training on a fresh engine graph per example (`compile.Plain`, batch by
    batch), with the same shuffling stream: returns (weights, per-epoch mean loss)."""
    data = T.load_data(spec)
    net = nn.Network.from_spec(spec)
    clip = "value" if spec.clip_value is not None else ("norm" if spec.clip_norm else None)
    clip_at = spec.clip_value if spec.clip_value is not None else (spec.clip_norm or 0.0)
    rng = np.random.default_rng(np.random.SeedSequence(spec.seed, spawn_key=(1,)))
    n = data.size
    batch = {"full": n, "online": 1}.get(spec.update, spec.batch_size or n)
    plain = C.Plain(net, clip)
    P, X, Y = net.flat(), data.X.tolist(), data.Y.tolist()
    losses = []
    for epoch in range(1, epochs + 1):
        order = rng.permutation(n).tolist() if spec.update != "full" else list(range(n))
        total = -0.0
        lr = spec.rate_at(epoch)
        for start in range(0, n, batch):  # one call per batch, as its own loop
            stop = min(n, start + batch)
            total, _ = plain.run(P, X, Y, order, start, stop, batch, lr, clip_at, total, 0, spec.l2)
        losses.append(total / n)
    return P, losses


CASES = [
    ("xor", {}),
    ("xor", {"loss": "bce"}),
    ("xor", {"activation": "tanh", "output_activation": "linear", "clip_value": 0.05}),
    ("xor-relu", {"clip_norm": 0.1}),
    ("circle", {}),
    ("moons", {"update": "minibatch 7", "clip_norm": 0.5}),  # hinge, l2, linear schedule
    ("moons", {"update": "online", "clip_value": 0.3, "l2": 0.01}),
    ("xor", {"loss": "hinge", "l2": 1e-3, "lr_schedule": "linear", "lr_end": 0.5}),
    # ten layers: seconds each, so only in `make test-all`
    pytest.param("deep-relu", {}, marks=pytest.mark.slow),
    pytest.param("deep-sigmoid", {"init": "uniform1"}, marks=pytest.mark.slow),
]


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Training on the compiled execution, whatever `uses_batches` would choose (the
    batched one agrees to rounding: tests/test_batched.py)."""
    monkeypatch.setattr(T, "uses_batches", lambda *_: False)


@pytest.mark.parametrize(("name", "changes"), CASES)
@pytest.mark.usefixtures("compiled")
def test_compiled_training_is_the_plain_engine_bit_for_bit(name: str, changes: dict) -> None:
    epochs = 2
    spec = spec_of(name, **changes, epochs=epochs)
    if name == "moons":
        spec = spec_of(name, **changes, epochs=epochs, data={"name": "moons", "size": 30})
    result = T.train(spec, record=False)
    weights, losses = reference_train(spec, epochs)
    assert bits(result.network.flat()) == bits(weights)
    assert bits(result.history.loss) == bits(losses)


def _trained(spec: Spec) -> tuple:
    result = T.train(spec)
    history = result.history
    return (
        bits(result.network.flat()),
        bits(history.loss),
        history.accuracy,
        history.clipping,
        bits(result.final.outputs),
        result.final.loss,
    )


@pytest.mark.parametrize(("name", "changes"), [c for c in CASES if isinstance(c, tuple)])
@pytest.mark.usefixtures("compiled")
def test_the_plain_switch_trains_on_the_engine_to_the_same_bits(
    name: str, changes: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GRADVIZ_PLAIN=1 runs no generated code (every example's graph on the engine) and
    gives the compiled training's numbers: weights, losses, accuracy, clipping, outputs."""
    data = {"data": {"name": "moons", "size": 30}} if name == "moons" else {}
    spec = spec_of(name, **changes, **data, epochs=3)
    compiled = _trained(spec)
    monkeypatch.setenv(C.PLAIN, "1")
    assert isinstance(C.compile_network(nn.Network.from_spec(spec)).run.__self__, C.Plain)
    assert _trained(spec) == compiled


def test_a_traceback_through_generated_code_shows_its_lines_under_real_names() -> None:
    """Generated code is registered (gradviz.codegen): a failure inside the trainer's
    functions or an op's names the function and shows the line, as for a file."""
    import traceback

    from gradviz import ops

    net = nn.Network((2, 2, 1), ("tanh", "sigmoid"))
    compiled = C.compile_network(net)
    with pytest.raises(ValueError) as caught:
        compiled.evaluate([0.5] * 3, [(0.0, 1.0)], [1.0])  # 3 of its 9 weights
    text = "".join(traceback.format_exception(caught.value))
    # (numbered, `evaluate #N`, if a test compiled another text of this shape first)
    assert re.search(r'File "<gradviz network 2-2-1: evaluate( #\d+)?>", line 2, in evaluate', text)
    assert "p0, p1, p2, p3, p4, p5, p6, p7, p8, = P" in text
    with pytest.raises(TypeError) as caught:
        ops.EXP.forward("e")  # a string reaches numpy's exp
    frames = traceback.extract_tb(caught.value.__traceback__)
    generated = [f for f in frames if f.filename.startswith("<gradviz")]
    assert [(f.name, f.line) for f in generated] == [("exp", "return exp(a)")]
    assert generated[0].filename.startswith("<gradviz exp")  # (numbered if a test made one)


@pytest.mark.parametrize("name", ["xor", "circle", "deep-sigmoid", "deep-relu", "xor-relu"])
def test_compiled_gradient_is_the_engines_and_layer_samples(name: str) -> None:
    spec = spec_of(name)
    net = nn.Network.from_spec(spec)
    data = T.load_data(spec)
    X, Y = data.X[:12], data.Y[:12]
    compiled = C.compile_network(net)
    _, grads = compiled.gradient(
        net.flat(), [tuple(r) for r in X.tolist()], Y.tolist(), list(range(len(Y)))
    )
    # one example at a time through the engine
    _, reference = C.Plain(net).gradient(net.flat(), X.tolist(), Y.tolist(), range(len(Y)))
    assert bits(grads) == bits(reference)
    # the batched engine graph behind the diagnostics
    samples = nn.layer_samples(net, X, Y)
    flat = np.concatenate(
        [np.concatenate([s.weight_grads, s.bias_grads[:, None]], axis=1).ravel() for s in samples]
    )
    # a batch computes exp/log/tanh with numpy, a scalar run with math: <= 1 ulp per op
    np.testing.assert_allclose(flat, grads, rtol=1e-12, atol=0)


def test_an_op_added_to_the_table_compiles_from_its_own_expressions() -> None:
    """An op is written once (`out`, `d`): the compiler writes its lines from the same
    expressions the engine runs, and gives the engine's numbers bit for bit."""
    net = nn.Network((2, 2, 1), ("tanh", "sigmoid"))
    net.initialise("xavier", 1)
    plain = Op(name="double", symbol="x2", out="a * 3.5", d=("3.5 + 0.0 * a",))
    original = nn.Network.build

    def build(self, inputs, target):
        built = original(self, inputs, target)
        built.loss = apply(plain, built.loss)
        return built

    try:
        nn.Network.build = build  # type: ignore[method-assign]
        compiled = C._compile.__wrapped__(net.sizes, net.activations, "mse", None, False)
        total, grads = compiled.gradient(net.flat(), [(0.5, -1.0)], [1.0], [0])
        built = net.build([Value(0.5), Value(-1.0)], Value(1.0))
        built.loss.backward()
    finally:
        nn.Network.build = original  # type: ignore[method-assign]
    assert " * 3.5" in compiled.source and "3.5 + 0.0 * " in compiled.source
    assert total == built.loss.data
    assert grads == [p.grad for p in net.parameters()]


def test_same_seed_same_bits_other_seed_other_numbers() -> None:
    spec = spec_of("circle", epochs=30)
    a = T.train(spec)
    b = T.train(spec)
    assert bits(a.network.flat()) == bits(b.network.flat())
    assert bits(a.history.loss) == bits(b.history.loss)
    c = T.train(spec_of("circle", epochs=30, seed=1))
    assert a.network.flat() != c.network.flat()


def test_xor_sample_learns_from_the_default_seed() -> None:
    result = T.train(load_spec(nn_sample("xor")))
    for output, target in zip(result.final.outputs, [0, 1, 1, 0], strict=True):
        assert (output > 0.5) == (target == 1)
        assert abs(output - target) < 0.1
    assert result.final.accuracy == 1.0


@pytest.mark.slow
def test_circle_sample_reaches_95_percent() -> None:
    result = T.train(load_spec(nn_sample("circle")), record=False)
    assert result.dataset.size == 80
    assert result.final.accuracy >= 0.95


def nn_sample(name: str):
    from pathlib import Path

    return Path(__file__).resolve().parent.parent / "samples" / f"{name}.toml"


@pytest.mark.slow
def test_deep_sigmoid_does_not_learn_and_deep_relu_does() -> None:
    stuck = T.train(spec_of("deep-sigmoid", epochs=100), record=False)
    share = float(np.mean(stuck.dataset.Y))  # points inside the circle
    assert stuck.final.accuracy == 1 - share  # every point called "outside"
    assert max(abs(o - share) for o in stuck.final.outputs) < 0.01  # the mean prediction
    learns = T.train(load_spec(nn_sample("deep-relu")), record=False)
    assert learns.final.accuracy == 1.0


def test_history_records_gradients_at_first_every_and_last_epoch() -> None:
    spec = spec_of("xor", epochs=25, record_every=10)
    result = T.train(spec)
    epochs = [e for e, _ in result.history.snapshots]
    assert epochs == [0, 10, 20, 25]
    first, last = result.history.snapshots[0][1], result.history.snapshots[-1][1]
    assert isinstance(first, Diagnosis) and first.epoch == 0  # reduced, to keep memory small
    assert first.layers[0].update_data is None  # at initialisation there was no update
    # the weights before the last update of epoch 25 (full batch: after epoch 24)
    before = T.train(spec_of("xor", epochs=24), record=False).network.weights()
    assert np.array_equal(last[0].previous_weights, before[0][0])
    assert np.array_equal(last[0].weights, result.network.weights()[0][0])
    assert len(result.history.loss) == len(result.history.accuracy) == 25


def test_full_batch_loss_history_is_the_loss_before_each_update() -> None:
    spec = spec_of("xor", epochs=3)
    result = T.train(spec, record=False)
    net = nn.Network.from_spec(spec)
    data = load(spec.data)
    P, X, Y, n = net.flat(), data.X.tolist(), data.Y.tolist(), data.size
    for epoch_loss in result.history.loss:
        net.set_flat(P)
        assert epoch_loss == T.evaluate(net, data).loss
        C.Plain(net).run(P, X, Y, list(range(n)), 0, n, n, spec.learning_rate, 0.0)


def test_input_width_must_match_the_data() -> None:
    with pytest.raises(SpecError, match=r"^layers: the first size is 3 but the data set xor has 2"):
        T.train(spec_of("xor", layers=[3, 4, 1]))


def test_the_work_of_training_is_bounded_before_it_starts() -> None:
    """epochs × examples × parameters: 1e6 online epochs of circle would be 2.6e9."""
    spec = spec_of("circle", epochs=1_000_000)
    with pytest.raises(SpecError) as info:
        T.train(spec)
    assert info.value.message == (
        "epochs: 1,000,000 epochs × 80 examples × 33 parameters is 2.64e9 steps of work, "
        "more than the 1e9 allowed: use at most 378,787 epochs, or less data or a smaller network"
    )
    T.check_work(spec_of("circle", epochs=378_787), 80)  # the largest allowed: no error
    with pytest.raises(SpecError, match="378,788 epochs"):
        T.check_work(spec_of("circle", epochs=378_788), 80)
    # the biggest data set and network allowed still train for a couple of epochs
    big = spec_of("xor", layers=[2, 64, 70, 1], epochs=2)
    assert big.n_parameters <= MAX_PARAMETERS
    T.check_work(big, MAX_POINTS)


def test_divergence_names_the_epoch_and_the_first_layer() -> None:
    spec = spec_of(
        "circle", activation="relu", output_activation="linear", learning_rate=1e6, epochs=5
    )
    with pytest.raises(TrainingError) as info:
        T.train(spec)
    message = info.value.render()
    assert "training diverged at epoch 1" in message
    assert "first appeared in layer L2 (its pre-activations)" in message
    assert "pass keep_going=True" in message and info.value.exit_code == 1
    assert "pass --keep-going" in info.value.render(flag)  # the CLI's words


def test_divergence_and_the_verdict_name_the_same_epoch() -> None:
    """The statistics recorded after epoch N hold the weights that epoch N+1 starts
    from: training (which sees the NaN in epoch N+1) and the verdict (which sees it in
    the record of epoch N) both say "the end of epoch N"."""
    spec = spec_from_mapping(
        {
            "layers": [2, 8, 1],
            "output_activation": "linear",
            "learning_rate": 1e4,
            "epochs": 40,
            "data": "xor",
            "record_every": 1,
        }
    )
    result = T.train(spec, keep_going=True)
    stopped = result.history.stopped or ""
    assert stopped.startswith("training diverged at epoch 33: the loss is inf; NaN/inf first ")
    assert "layer L1 (its gradients), computed from the weights at the end of epoch 32." in stopped
    past = stats.history(result.history.snapshots)
    nan = [line for line in stats.verdict(past[-1][1], past) if line.startswith("NaN/inf")]
    assert nan == [
        "NaN/inf first appeared in layer L1 (its gradients) by the end of epoch 32: lower the "
        "learning rate, clip gradients, and check the inputs for NaN or huge values."
    ]


def test_divergence_keeps_the_training_so_far() -> None:
    spec = spec_of("xor", output_activation="linear", learning_rate=1e4, epochs=40)
    with pytest.raises(T.Diverged) as info:
        T.train(spec)
    result = info.value.result
    assert info.value.exit_code == 1
    # the history keeps the fact; the error adds the advice, in the caller's words
    stopped = result.history.stopped or ""
    assert stopped.endswith("(clip_norm = 1).") and "keep" not in stopped
    advice = ", or pass keep_going=True to train on regardless."
    assert info.value.render().replace("\n", " ") == stopped.removesuffix(".") + advice
    assert info.value.message == stopped.partition(". Lower")[0] + "."  # the fact, one line
    epoch = result.history.epochs_run
    assert f"training diverged at epoch {epoch}:" in info.value.message
    assert not np.isfinite(result.history.loss[-1]) and np.isfinite(result.history.loss[-2])
    assert result.history.snapshots[-1][0] == epoch  # the state it stopped in, recorded
    assert stats.diagnose(result.history.snapshots[-1][1]).first_nonfinite is not None


def test_keep_going_trains_on_through_nan() -> None:
    spec = spec_of(
        "circle", activation="relu", output_activation="linear", learning_rate=1e6, epochs=3
    )
    result = T.train(spec, keep_going=True)
    assert result.history.epochs_run == 3
    assert "diverged at epoch 1" in (result.history.stopped or "")
    assert all(np.isnan(v) for v in result.history.loss)
    # NaN outputs are on neither side of 0.5: wrong, never a correct 0 (62% of circle)
    assert all(np.isnan(result.final.outputs))
    assert result.history.accuracy[-1] == result.final.accuracy == 0.0
    assert not T.is_correct(float("nan"), 0.0) and T.is_correct(0.5, 0.0)


def test_generated_code_comes_from_the_op_table_only() -> None:
    net = nn.Network.from_spec(spec_of("xor"))
    source = C.compile_network(net).source
    assert "exp_nonpositive(-abs(" in source  # SIGMOID.code
    assert "L1" not in source and "xor" not in source  # no labels or names of user things


def test_big_data_sets_are_measured_on_their_first_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nn, "STATS_FLOATS", 9 * 20)  # 9 units (2-8-1): 20 rows
    result = T.train(spec_of("circle", epochs=2))
    samples = result.history.snapshots[-1][1]
    assert samples[0].activations.shape == (20, 8)


def test_too_many_records_are_refused() -> None:
    with pytest.raises(SpecError, match="record_every: every 1 of 5,000 epochs is more than 1,000"):
        spec_of("xor", epochs=5000, record_every=1)


@pytest.mark.parametrize(
    "injected",
    ["__import__('os').system('true')", "open", "eval", "x0.__class__", "'text'", "os"],
)
def test_generated_code_is_checked_before_it_runs(injected: str) -> None:
    """exec runs only what the generator writes: one foreign name or string in the
    source and nothing of it runs."""
    from gradviz.compile import _only_generated

    good = "def run(P, X, Y):\n    p0, = P\n    v3 = p0 * x0 + float(np.exp(-abs(v2)))\n"
    scope: dict = {}
    exec(_only_generated(good), scope)  # our names only: it runs
    assert callable(scope["run"])
    with pytest.raises(RuntimeError, match="refusing to run it"):
        _only_generated(good + f"    v4 = {injected}\n")
