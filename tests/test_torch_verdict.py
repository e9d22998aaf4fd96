"""The verdict's words where a ratio misleads: weights at zero (a LoRA B, a cls token) make
grad:data and update:data huge by construction; a dead layer zeroes the next layer's weight
gradient; clipping hides the explosion's size; a branch gets gradient on some steps only.
Every number is checked against what the test reads from `param.grad` itself."""

from __future__ import annotations

import math
import re

import pytest
from torch_support import require_torch

torch = require_torch()
nn = torch.nn

from gradviz.stats import verdict  # noqa: E402
from gradviz.torch import watch  # noqa: E402

DT = torch.float64


class _LoRA(nn.Module):
    """A frozen base Linear plus B(A(x)), B zero-initialised as peft does."""

    def __init__(self, i: int, o: int, r: int = 2) -> None:
        super().__init__()
        self.base = nn.Linear(i, o, dtype=DT).requires_grad_(False)
        self.lora_A = nn.Linear(i, r, bias=False, dtype=DT)
        self.lora_B = nn.Linear(r, o, bias=False, dtype=DT)
        nn.init.zeros_(self.lora_B.weight)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x))


def _lora_run(optimizer_class, lr: float, steps: int = 3):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    net = nn.Sequential(
        _LoRA(8, 16), nn.ReLU(), _LoRA(16, 16), nn.ReLU(), nn.Linear(16, 3, dtype=DT)
    )
    X, Y = torch.randn(32, 8, generator=g, dtype=DT), torch.randint(0, 3, (32,), generator=g)
    optimizer = optimizer_class([p for p in net.parameters() if p.requires_grad], lr=lr)
    rec = watch(net, every=1, optimizer=optimizer)
    for _ in range(steps):
        optimizer.zero_grad()
        nn.functional.cross_entropy(net(X), Y).backward()
        optimizer.step()
    rec.close()
    return net, rec


def _rms(t) -> float:
    return float(t.pow(2).mean().sqrt())


@pytest.mark.parametrize("optimizer_class", [torch.optim.AdamW, torch.optim.SGD])
def test_zero_initialised_weights_are_not_exploding(optimizer_class) -> None:
    """lora_B's grad:data is huge only because its weights start at 0 (its gradient is
    smaller than the head's): not exploding, under AdamW or SGD; and under AdamW its large
    update:data is no reference that makes lora_A vanishing."""
    net, rec = _lora_run(optimizer_class, 1e-4 if optimizer_class is torch.optim.AdamW else 1e-2)
    B, head = net[0].lora_B.weight, net[4].weight
    assert float(B.grad.norm() / B.detach().norm()) > 10  # grad:data: the old rule's "exploding"
    assert _rms(B.grad) < _rms(head.grad)
    statuses = {layer.name: layer.status for layer in rec.diagnosis().layers}
    assert "exploding" not in statuses.values(), statuses
    if optimizer_class is torch.optim.AdamW:
        assert statuses["0.lora_A"] not in ("vanishing", "weak"), statuses
    lines = verdict(rec.diagnosis(), rec.history())
    assert not any("exploding" in line for line in lines), lines
    if optimizer_class is torch.optim.AdamW:  # (under SGD lora_A's gradient is B's size: ~0)
        assert not any("vanishing" in line for line in lines), lines


def test_a_dead_layer_is_named_not_the_layer_it_feeds() -> None:
    """Only the first ReLU layer is dead: the next layer's weight gradient is 0 because its
    input is, while its bias gradient is not. The verdict names the dead layer, and does not
    call the next one vanishing (nor advise He init)."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    net = nn.Sequential(
        nn.Linear(4, 8, dtype=DT), nn.ReLU(), nn.Linear(8, 8, dtype=DT), nn.ReLU(),
        nn.Linear(8, 1, dtype=DT),
    )  # fmt: skip
    with torch.no_grad():
        net[0].bias.fill_(-50.0)
        net[2].bias.fill_(0.5)
    X, Y = torch.rand(32, 4, generator=g, dtype=DT), torch.rand(32, 1, generator=g, dtype=DT)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    rec = watch(net, every=1, optimizer=optimizer)
    for _ in range(3):
        optimizer.zero_grad()
        nn.functional.mse_loss(net(X), Y).backward()
        optimizer.step()
    assert float(net[2].weight.grad.abs().max()) == 0 and _rms(net[2].bias.grad) > 0
    statuses = [layer.status for layer in rec.diagnosis().layers]
    assert statuses[:2] == ["dead", "ok"], statuses
    lines = verdict(rec.diagnosis(), rec.history())
    assert any(line.startswith("0 is dead: every unit outputs 0") and "so 2 gets" in line
               for line in lines), lines  # fmt: skip
    assert not any("vanishing" in line or "He init" in line for line in lines), lines


def _clipped_explosion(clip):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    layers = [
        nn.Linear(a, b, dtype=DT) for a, b in zip([4] + [16] * 6, [16] * 6 + [1], strict=True)
    ]
    for layer in layers:
        with torch.no_grad():
            layer.weight.mul_(8.0)
    net = nn.Sequential(*layers)
    X, Y = torch.rand(32, 4, generator=g, dtype=DT), torch.rand(32, 1, generator=g, dtype=DT)
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-9)
    rec = watch(net, every=1, optimizer=optimizer)
    optimizer.zero_grad()
    ((net(X) - Y) ** 2).mean().backward()
    weights = [layer.weight for layer in layers]
    before = [float(w.grad.norm()) for w in weights]
    grad_data = before[0] / float(weights[0].detach().norm())
    clip(net.parameters())
    after = [float(w.grad.norm()) for w in weights]
    optimizer.step()
    rec.close()
    return rec, grad_data, math.hypot(*before), math.hypot(*after)


def _number_before(text: str, mark: str) -> float:
    return float(re.search(r"([-0-9.e]+)" + re.escape(mark), text).group(1))


@pytest.mark.parametrize(
    ("clip", "changed"),
    [
        pytest.param(lambda ps: nn.utils.clip_grad_value_(ps, 1e-3), True, id="value"),
        pytest.param(lambda ps: nn.utils.clip_grad_norm_(ps, 1e-3), False, id="norm"),
    ],
)
def test_an_explosion_clipping_hides_is_told_before_clipping(clip, changed: bool) -> None:
    """The exploding sentence gives grad:data before clipping, and does not advise clipping
    to a run that clips; clip_grad_value_ clamps element-wise, so it "changed" the gradients
    (‖g‖ from X to Y), where clip_grad_norm_ "scaled" them."""
    rec, grad_data, before, after = _clipped_explosion(clip)
    lines = verdict(rec.diagnosis(), rec.history())
    exploding = next(line for line in lines if " exploding" in line)
    assert rec.diagnosis().layers[0].status == "exploding"  # (not at rest after clipping)
    assert "before clipping" in exploding and "clip gradients" not in exploding, exploding
    said = _number_before(exploding, "× its weights before clipping")
    assert said == pytest.approx(grad_data, rel=1e-2)
    clipping = next(line for line in lines if line.startswith("Gradient clipping"))
    if changed:
        found = re.search(
            r"changed the gradients \(‖g‖ from ([-0-9.e]+) to ([-0-9.e]+)\)", clipping
        )
        assert found, clipping
        assert float(found.group(1)) == pytest.approx(before, rel=1e-2)
        assert float(found.group(2)) == pytest.approx(after, rel=1e-2)
    else:
        found = re.search(r"scaled the gradients by ×([-0-9.e]+) ", clipping)
        assert found, clipping
        assert float(found.group(1)) == pytest.approx(after / before, rel=5e-2)


def test_a_branch_used_on_some_steps_is_not_getting_no_gradient() -> None:
    """A layer used on even steps only: zero at the last recorded step, but not "no
    gradient at all": it received gradient on 2 of the 4 recorded steps."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)

    class Branch(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inp, self.a = nn.Linear(6, 8, dtype=DT), nn.Linear(8, 8, dtype=DT)
            self.b, self.head = nn.Linear(8, 8, dtype=DT), nn.Linear(8, 3, dtype=DT)

        def forward(self, x, step):
            return self.head(torch.relu((self.a if step % 2 == 0 else self.b)(self.inp(x))))

    net = Branch()
    X, Y = torch.randn(8, 6, generator=g, dtype=DT), torch.randint(0, 3, (8,), generator=g)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    rec = watch(net, every=1, optimizer=optimizer)
    got = 0
    for step in range(4):
        optimizer.zero_grad()
        nn.functional.cross_entropy(net(X, step), Y).backward()
        got += net.a.weight.grad is not None and bool(net.a.weight.grad.abs().max() > 0)
        optimizer.step()
    assert got == 2
    lines = verdict(rec.diagnosis(), rec.history())
    assert not any("no gradient at all" in line for line in lines), lines
    assert any(line.startswith(f"a received gradient on {got} of the 4 recorded steps")
               for line in lines), lines  # fmt: skip


def test_a_nan_first_seen_after_an_unread_layer_says_it_may_have_begun_there() -> None:
    """An exploding ReLU RNN (W_hh = 3·I): its hidden state is inf at step 1, but an RNN's
    outputs are not read, so the first place gradviz sees one is the head's input; the
    verdict names the head as where it was seen and the RNN as where it may have begun."""

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.rnn = nn.RNN(4, 16, nonlinearity="relu", batch_first=True)
            self.head = nn.Linear(16, 3)
            with torch.no_grad():
                self.rnn.weight_hh_l0.copy_(torch.eye(16) * 3.0)

        def forward(self, x):
            _, h = self.rnn(x)
            self.last_h = h
            return self.head(h[-1])

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    net, X, Y = Net(), torch.rand(8, 12, 4, generator=g), torch.randint(0, 3, (8,), generator=g)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    rec = watch(net, every=1)
    first_bad = None
    for step in range(3):
        opt.zero_grad()
        nn.functional.cross_entropy(net(X), Y).backward()
        if first_bad is None and not net.last_h.isfinite().all():
            first_bad = step  # the RNN's own output, read by the test
        opt.step()
    assert first_bad == 1
    lines = [line for line in verdict(rec.diagnosis(), rec.history()) if "NaN/inf" in line]
    assert lines and lines[0].startswith(
        "NaN/inf first seen in layer head (its pre-activations) at step 1; it may have begun "
        "before, in rnn.l0, whose outputs were not read"
    )


def test_layers_never_compared_get_no_word_that_they_were() -> None:
    """Where no two layers could be compared (their forward order unseen: torch.compile of
    an LSTM model), the verdict must not say each gets a tenth of the next one's gradient,
    nor "Healthy" (the same recorded step, its layers compared, is Healthy)."""
    from dataclasses import replace

    from gradviz.stats import Diagnosis

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8, dtype=DT), nn.Tanh(), nn.Linear(8, 3, dtype=DT))
    X, Y = torch.randn(16, 4, dtype=DT), torch.randint(0, 3, (16,))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    rec = watch(net, every=1, optimizer=opt)
    opt.zero_grad()
    nn.functional.cross_entropy(net(X), Y).backward()
    rms = [p.grad.pow(2).mean().sqrt().item() for p in (net[0].weight, net[2].weight)]
    opt.step()
    d = rec.diagnosis()
    assert [lay.rms for lay in d.layers] == pytest.approx(rms, rel=1e-9)
    assert verdict(d)[0].startswith("Healthy: every layer gets at least a tenth")
    unseen = [replace(lay, compared=False, below=None) for lay in d.layers]
    lines = verdict(Diagnosis(**{**d.__dict__, "layers": unseen}))
    assert lines == [
        "No NaN, explosion or zero gradient, but no two layers' gradients could be compared "
        "(the notes say why), so none was checked for vanishing or weak gradients: this is "
        "not a clean bill of health."
    ]
