"""Constructed failures, each named as it is, eagerly and under torch.compile (the
two-process DDP runs are in test_torch_ddp.py): dead units, a vanishing gradient, an
explosion, a NaN at a known step and layer whatever the cadence, a frozen layer, an
explosion hidden by clipping, weights that never move; none of them "Healthy". And what
the verdict reads under an adaptive optimizer, and the API a PyTorch user expects."""

from __future__ import annotations

import gc
import itertools
import math
import subprocess
import sys

import pytest
from torch_support import require_torch

torch = require_torch()
nn = torch.nn

from gradviz.errors import InputError  # noqa: E402
from gradviz.stats import verdict  # noqa: E402
from gradviz.torch import watch  # noqa: E402

DT = torch.float64


def _mlp(sizes, activation=nn.ReLU, bias=None, scale=None, seed=0):
    torch.manual_seed(seed)
    layers = []
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        layer = nn.Linear(a, b, dtype=DT)
        with torch.no_grad():
            if bias is not None:
                layer.bias.fill_(bias)
            if scale is not None:
                layer.weight.mul_(scale)
        layers.append(layer)
        if i < len(sizes) - 2:
            layers.append(activation())
    return nn.Sequential(*layers)


def _data(width=4, n=32, seed=1):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, width, generator=g, dtype=DT)
    return X, torch.rand(n, 1, generator=g, dtype=DT)


def _train(net, steps=4, every=1, compiled=False, clip=None, lr=0.1, optimizer_class=None,
           before_step=None):  # fmt: skip
    X, Y = _data(net[0].in_features)
    optimizer = (optimizer_class or torch.optim.SGD)(net.parameters(), lr=lr)
    run = torch.compile(net, backend="aot_eager") if compiled else net
    rec = watch(run, every=every)
    for step in range(steps):
        if before_step is not None:
            before_step(step, net)
        optimizer.zero_grad()
        loss = ((run(X) - Y) ** 2).mean()
        loss.backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(net.parameters(), clip)
        optimizer.step()
    rec.close()
    return rec


def _statuses(rec) -> list[str]:
    return [layer.status for layer in rec.diagnosis().layers]


def _never_healthy(rec) -> list[str]:
    lines = verdict(rec.diagnosis(), rec.history())
    assert not any(line.startswith("Healthy") for line in lines), lines
    return lines


MODES = [pytest.param(False, id="eager"), pytest.param(True, id="compiled", marks=pytest.mark.slow)]


@pytest.mark.parametrize("compiled", MODES)
def test_dead_relus(compiled: bool) -> None:
    """A 4-layer ReLU net whose biases are -5: every hidden unit is 0 for every input,
    every hidden gradient exactly 0. Eagerly "dead"; compiled (no activation read) "zero",
    and never "Healthy" or "converged"."""
    rec = _train(_mlp([4, 8, 8, 8, 1], bias=-5.0), compiled=compiled)
    statuses = _statuses(rec)
    assert statuses[:3] == (["zero"] * 3 if compiled else ["dead"] * 3)
    lines = _never_healthy(rec)
    assert not any(line.startswith("Converged") for line in lines)
    if compiled:
        assert any("getting no gradient at all" in line for line in lines)
        assert any("torch.compile" in note for note in rec.notes())


@pytest.mark.parametrize("compiled", MODES)
def test_vanishing_through_sigmoids(compiled: bool) -> None:
    rec = _train(_mlp([4, *[8] * 10, 1], activation=nn.Sigmoid), compiled=compiled)
    assert _statuses(rec)[0] == "vanishing"
    lines = _never_healthy(rec)
    assert any("vanishing" in line for line in lines)


@pytest.mark.parametrize("compiled", MODES)
def test_exploding_weights(compiled: bool) -> None:
    # linear layers whose weights multiply a signal by about 4.6 each: ×10^4 over six
    net = _mlp([4, *[16] * 6, 1], activation=nn.Identity, scale=8.0)
    rec = _train(net, lr=1e-9, compiled=compiled)
    assert "exploding" in _statuses(rec)
    assert any("exploding" in line for line in _never_healthy(rec))


@pytest.mark.parametrize("compiled", MODES)
def test_nan_at_a_known_step_and_layer_between_recorded_steps(compiled: bool) -> None:
    """Layer 2's weight turns NaN before step 5; the cadence records steps 0 and 4, yet
    step 5 is recorded in full, its first NaN in layer 2's weights."""

    def poison(step: int, net) -> None:
        if step == 5:
            with torch.no_grad():
                net[2].weight[0, 0] = math.nan

    rec = _train(_mlp([4, 8, 8, 1]), steps=7, every=4, compiled=compiled, before_step=poison)
    history = rec.history()
    assert [step for step, _ in history] == [0, 4, 5]
    at = dict(history)[5]
    assert at.first_nonfinite == (2, "weights")
    assert at.layers[1].status == "NaN"
    lines = _never_healthy(rec)
    assert any("NaN/inf first appeared in layer 2 (its weights) at step 5" in ln for ln in lines)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_gradients_checked_between_recorded_steps(dtype: str) -> None:
    """A float16 gradient of 100,000 ones sums to inf in float16 (its largest is 65,504),
    though every entry is finite: no step is taken for a NaN. A NaN in step 5's input,
    which reaches the gradient, is still found there, between the recorded steps."""
    half = getattr(torch, dtype)

    def run(poison_at: int | None) -> list[int]:
        net = nn.Linear(1000, 100, bias=False, dtype=half)
        optimizer = torch.optim.SGD(net.parameters(), lr=0.0)
        rec = watch(net, every=4)
        for step in range(7):
            x = torch.ones(1, 1000, dtype=half)
            if step == poison_at:
                x[0, 7] = math.nan
            optimizer.zero_grad()
            net(x).sum().backward()  # (∂/∂W = x, in every row)
            if dtype == "float16" and step != poison_at:
                assert float(net.weight.grad.sum()) == math.inf
                assert bool(torch.isfinite(net.weight.grad).all())
            optimizer.step()
        return [step for step, _ in rec.history()]

    assert run(None) == [0, 4]
    assert run(5) == [0, 4, 5]


@pytest.mark.parametrize("compiled", MODES)
def test_a_frozen_layer_is_frozen_not_vanishing(compiled: bool) -> None:
    net = _mlp([4, 8, 8, 1])
    net[0].requires_grad_(False)
    rec = _train(net, compiled=compiled)
    d = rec.diagnosis()
    assert d.layers[0].status == "frozen"
    lines = verdict(d, rec.history())
    assert any("0 is frozen" in line for line in lines)
    assert not any("He init" in line for line in lines)


@pytest.mark.parametrize("compiled", MODES)
def test_clipping_does_not_hide_an_explosion(compiled: bool) -> None:
    """Tiny weights, a huge loss: the gradient is 10^4 times the weights; clipped to a norm
    of 1e-3 it looks small. Read before clipping it is exploding, and the verdict says
    clipping scaled it and by how much."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 1, dtype=DT))
    with torch.no_grad():
        net[0].weight.mul_(1e-3)
    X, Y = _data()
    Y = Y * 1e4
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-9)
    run = torch.compile(net, backend="aot_eager") if compiled else net
    rec = watch(run, every=1)
    optimizer.zero_grad()
    ((run(X) - Y) ** 2).mean().backward()
    before = math.sqrt(sum(float(p.grad.norm()) ** 2 for p in net.parameters()))
    weight_before = float(net[0].weight.grad.norm())
    nn.utils.clip_grad_norm_(net.parameters(), 1e-3)
    optimizer.step()
    d = rec.diagnosis()
    layer = d.layers[0]
    assert layer.status == "exploding" and "before clipping" in layer.reason
    assert d.clip_scale == pytest.approx(1e-3 / before, rel=1e-4)
    assert layer.clipped_from == pytest.approx(weight_before, rel=1e-12)
    lines = _never_healthy(rec)
    assert any(line.startswith("Gradient clipping scaled the gradients by ×") for line in lines)


def test_a_recorder_let_go_leaves_the_next_one_working() -> None:
    """A notebook cell run twice: the first recorder is gone (collected) when the second
    one's optimizer steps; its global step hooks must not break torch's loop over them."""
    X, Y = _data()
    for _ in range(2):
        net = _mlp([4, 8, 1])
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        rec = watch(net)
        for _ in range(2):
            optimizer.zero_grad()
            ((net(X) - Y) ** 2).mean().backward()
            optimizer.step()
        assert [step for step, _ in rec.history()] == [0]
        del rec
        gc.collect()


def test_two_optimizers_after_one_backward_pass_are_one_step() -> None:
    """SGD for the body, Adam for the head, both stepped after one backward pass: one
    training step each time (not two), no layer frozen, every row's update measured across
    its own optimizer's step, activations read, and the verdict names each optimizer."""
    net = _mlp([4, 8, 8, 1])
    X, Y = _data()
    body = torch.optim.SGD([*net[0].parameters(), *net[2].parameters()], lr=0.1)
    head = torch.optim.Adam(net[4].parameters(), lr=1e-3)
    rec = watch(net, every=1)
    for _ in range(3):
        body.zero_grad()
        head.zero_grad()
        ((net(X) - Y) ** 2).mean().backward()
        rms = [float(layer.weight.grad.pow(2).mean().sqrt()) for layer in net[::2]]
        before = [layer.weight.detach().clone() for layer in net[::2]]
        body.step()
        head.step()
    assert rec.steps == 3 and [step for step, _ in rec.history()] == [0, 1, 2]
    d = rec.diagnosis()
    assert [layer.status for layer in d.layers] == ["ok"] * 3
    for layer, layer_rms, w0, module in zip(d.layers, rms, before, net[::2], strict=True):
        moved = float((module.weight.detach() - w0).norm() / w0.norm())
        assert layer.update_data == pytest.approx(moved, rel=1e-9) and moved > 0
        assert layer.rms == pytest.approx(layer_rms, rel=1e-12)
        assert layer.unread is None and math.isfinite(layer.act_mean)
    lines = verdict(d, rec.history())
    assert not any("frozen" in line for line in lines)
    assert any("Adam for 4 (SGD for 0, 2) rescales" in line for line in lines), lines
    rec.close()


def test_two_optimizers_each_after_its_own_backward_pass_are_two_steps() -> None:
    """Each optimizer after a backward pass of its own (as a GAN's): two training steps;
    a row the stepping optimizer does not hold has no update measured, and is neither
    frozen nor said never to move."""
    net = _mlp([4, 8, 1])
    X, Y = _data()
    first = torch.optim.SGD(net[0].parameters(), lr=0.1)
    second = torch.optim.SGD(net[2].parameters(), lr=0.1, momentum=0.5)
    rec = watch(net, every=1)
    for _ in range(2):
        for optimizer in (first, second):
            optimizer.zero_grad()
            ((net(X) - Y) ** 2).mean().backward()
            optimizer.step()
    assert rec.steps == 4 and len(rec.history()) == 4
    for step, d in rec.history():
        stepped = d.layers[step % 2]
        assert [layer.frozen for layer in d.layers] == [False, False]
        assert stepped.update_data is not None and stepped.update_data > 0
        assert d.layers[1 - step % 2].update_data is None
    assert not any("never changed" in line for line in verdict(rec.diagnosis(), rec.history()))
    rec.close()


def test_a_partly_frozen_row_says_so_and_reads_the_trained_tensors() -> None:
    """One tensor of a GRU layer frozen: the row says which and how many, and its
    gradient statistics are of the trained tensor alone."""
    torch.manual_seed(0)
    gru, head = nn.GRU(3, 4, batch_first=True, dtype=DT), nn.Linear(4, 1, dtype=DT)
    gru.weight_hh_l0.requires_grad_(False)

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gru, self.head = gru, head

        def forward(self, x):
            return self.head(self.gru(x)[0][:, -1])

    net = Net()
    g = torch.Generator().manual_seed(1)
    X, Y = torch.rand(8, 5, 3, generator=g, dtype=DT), torch.rand(8, 1, generator=g, dtype=DT)
    optimizer = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.1)
    rec = watch(net, every=1, optimizer=optimizer)
    for _ in range(2):
        optimizer.zero_grad()
        ((net(X) - Y) ** 2).mean().backward()
        optimizer.step()
    row = next(layer for layer in rec.diagnosis().layers if layer.name == "gru.l0")
    trained = gru.weight_ih_l0.grad
    frozen = gru.weight_hh_l0.numel()
    assert not row.frozen and row.n_params == sum(p.numel() for p in gru.parameters()) - frozen
    assert row.rms == pytest.approx(float(trained.pow(2).mean().sqrt()), rel=1e-12)
    assert row.max_abs == pytest.approx(float(trained.abs().max()), rel=1e-12)
    total = sum(p.numel() for p in gru.parameters())
    assert f"gru.l0: gru.weight_hh_l0 frozen ({frozen} of its {total} parameters)" in " ".join(
        rec.notes()
    )
    rec.close()


def test_a_row_whose_weight_alone_is_frozen_reads_its_bias() -> None:
    """A layer's weight frozen, its bias trained (as BitFit): the row's numbers are of the
    bias, not zeros of the weight (which made it vanishing)."""
    net = _mlp([4, 8, 8, 1])
    net[2].weight.requires_grad_(False)
    rec = _train(net, steps=2)
    row = rec.diagnosis().layers[1]
    bias = net[2].bias.grad
    assert row.n_params == bias.numel() and row.status == "ok"
    assert row.rms == pytest.approx(float(bias.pow(2).mean().sqrt()), rel=1e-12)
    assert row.max_abs == pytest.approx(float(bias.abs().max()), rel=1e-12)
    assert any("2: 2.weight frozen (64 of its 72 parameters)" in line for line in rec.notes())


def test_weights_that_never_move_are_said() -> None:
    """A layer in the optimizer at learning rate 0: a gradient, and no update."""
    torch.manual_seed(0)
    net = _mlp([4, 8, 1])
    X, Y = _data()
    optimizer = torch.optim.SGD(
        [{"params": net[0].parameters(), "lr": 0.0}, {"params": net[2].parameters(), "lr": 0.1}]
    )
    rec = watch(net, every=1)
    for _ in range(3):
        optimizer.zero_grad()
        ((net(X) - Y) ** 2).mean().backward()
        optimizer.step()
    lines = verdict(rec.diagnosis(), rec.history())
    assert any(line.startswith("0: the weights never changed") for line in lines), lines


def test_adam_is_read_by_update_data() -> None:
    """Under Adam the raw gradient's size is not what moves the weights: the layers are
    compared by update:data, and the verdict says which it read."""
    net = _mlp([4, *[8] * 6, 1], activation=nn.Sigmoid)
    rec = _train(net, steps=3, optimizer_class=torch.optim.Adam, lr=1e-3)
    d = rec.diagnosis()
    assert d.judged_by == "update" and d.optimizer == "Adam"
    lines = verdict(d, rec.history())
    assert any(line.startswith("Read by update:data") and "Adam" in line for line in lines)
    # Adam moves every layer by about the learning rate: none is weak or vanishing by it
    assert not any(layer.status in ("weak", "vanishing") for layer in d.layers)
    sgd = _train(_mlp([4, *[8] * 6, 1], activation=nn.Sigmoid), steps=3)
    assert sgd.diagnosis().judged_by == "gradient"
    assert sgd.diagnosis().layers[0].status in ("weak", "vanishing")


def test_watch_alone_records_at_any_optimizers_step_and_closures_after_they_run() -> None:
    net = _mlp([4, 8, 1])
    X, Y = _data()
    rec = watch(net, every=1)
    optimizer = torch.optim.LBFGS(net.parameters(), lr=0.1, max_iter=3)
    seen = []

    def closure():
        optimizer.zero_grad()
        loss = ((net(X) - Y) ** 2).mean()
        loss.backward()
        if not seen:
            seen.append(float(net[0].weight.grad.pow(2).mean().sqrt()))
        return loss

    optimizer.step(closure)
    d = rec.diagnosis()  # the closure's gradients, not the zeros before it
    assert d.layers[0].rms == pytest.approx(seen[0], rel=1e-12) and seen[0] > 0
    other = torch.optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1)
    other.step()  # another model's optimizer: not recorded
    assert len(rec.history()) == 1
    rec.close()


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda net: watch(net, optimizer="adam"), "optimizer must be a torch.optim.Optimizer"),
        (lambda net: watch(net, every=0), "every must be a whole number"),
        (lambda net: watch(net, manual="yes"), "manual must be True or False"),
        (lambda net: watch(net).save("never.json"), "nothing recorded yet"),
    ],
)
def test_bad_arguments_are_one_line(call, words: str, tmp_path) -> None:
    with pytest.raises(InputError, match=words) as caught:
        call(_mlp([2, 2]))
    assert "\n" not in caught.value.message


ORDERS = [
    "from gradviz.torch import watch, draw, Recorder",
    "import gradviz.torch.graph; import gradviz.torch.recorder; "
    "from gradviz.torch import watch, draw, Recorder",
    "import gradviz.torch as t; t.diagram; from gradviz.torch import watch, draw, Recorder",
    "import gradviz, torch; gradviz.draw(torch.ones(1, requires_grad=True).sum()); "
    "from gradviz.torch import watch, draw, Recorder",
]


def test_the_api_imports_in_any_order() -> None:
    """Each order in an interpreter of its own as far as gradviz goes (its modules dropped
    between orders; torch, imported once, is not what shadowed the functions)."""
    code = (
        "import inspect, sys, torch\n"
        f"for imports in {ORDERS!r}:\n"
        "    for name in [m for m in sys.modules if m.split('.')[0] == 'gradviz']:\n"
        "        del sys.modules[name]\n"
        "    scope = {}\n"
        "    exec(imports, scope)\n"  # (this test's own constant strings)
        "    watch, draw, Recorder = scope['watch'], scope['draw'], scope['Recorder']\n"
        "    assert inspect.isfunction(watch), (imports, watch)\n"
        "    assert inspect.isfunction(draw), (imports, draw)\n"
        "    assert inspect.isclass(Recorder), imports\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_an_evaluation_pass_under_no_grad_is_not_counted() -> None:
    """A validation forward (no_grad) on a recorded step leaves its activations as they
    were: the statistics are of the batch trained on."""

    def run(evaluate: bool):
        net = _mlp([4, 8, 1], activation=nn.Sigmoid)
        X, Y = _data()
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        rec = watch(net, every=1)
        for _ in range(2):
            if evaluate:
                with torch.no_grad():
                    net(torch.full((5, 4), 9.0, dtype=DT))  # far off: would move the numbers
            optimizer.zero_grad()
            ((net(X) - Y) ** 2).mean().backward()
            optimizer.step()
        rec.close()
        return [lay.to_dict() for _, d in rec.history() for lay in d.layers]

    assert run(True) == run(False)
