"""How gradviz.torch's recorder maps rows: their order and the output layer from the
forward pass alone (not gradient checkpointing's recompute in the backward pass, not a
layer left out of the mapping step), and the activations it reads after each layer,
whether applied by a module, a function or a tensor method, in place or not. Every
number is checked against what the test reads off the tensors itself."""

from __future__ import annotations

import pytest
from torch_support import require_torch

torch = require_torch()
nn = torch.nn
F = torch.nn.functional

from torch.utils.checkpoint import checkpoint  # noqa: E402

from gradviz.torch import watch  # noqa: E402

DT = torch.float64


class Checkpointed(nn.Module):
    """inp → relu → [blk.0 → ReLU → blk.2 → Tanh], checkpointed → head."""

    def __init__(self, reentrant: bool) -> None:
        super().__init__()
        self.reentrant = reentrant
        self.inp = nn.Linear(6, 8, dtype=DT)
        self.blk = nn.Sequential(
            nn.Linear(8, 8, dtype=DT), nn.ReLU(), nn.Linear(8, 8, dtype=DT), nn.Tanh()
        )
        self.head = nn.Linear(8, 3, dtype=DT)

    def forward(self, x):
        h = checkpoint(self.blk, torch.relu(self.inp(x)), use_reentrant=self.reentrant)
        return self.head(h)


def _trained(model: nn.Module, loss_of, steps: int = 2):
    """`steps` steps of SGD, each recorded; the outputs of every module on the last step's
    forward pass (the first call of each: a recompute in the backward pass comes later)."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    rec = watch(model, every=1, optimizer=optimizer)
    outputs: dict[str, torch.Tensor] = {}

    def keep(name: str, output: torch.Tensor) -> None:
        outputs.setdefault(name, output.detach().clone())

    for name, module in model.named_modules():
        module.register_forward_hook(lambda m, i, o, name=name: keep(name, o))
    for step in range(steps):
        outputs.clear()
        optimizer.zero_grad()
        loss_of(step).backward()
        optimizer.step()
    return rec, outputs


@pytest.mark.parametrize("reentrant", [False, True])
def test_a_checkpoints_recompute_is_not_a_forward_pass(reentrant: bool) -> None:
    """The recompute in the backward pass runs blk's forward hooks again: the rows keep the
    forward pass's order (head the output layer, its hop none), the activations are the
    forward pass's, once (under use_reentrant=True that pass ran without gradients: its
    activations are said to be unread, not read off the recompute)."""
    torch.manual_seed(0)
    model = Checkpointed(reentrant)
    X, Y = torch.randn(8, 6, dtype=DT), torch.randint(0, 3, (8,))
    rec, outputs = _trained(model, lambda _: F.cross_entropy(model(X), Y))
    layers = {lay.name: lay for lay in rec.diagnosis().layers}
    assert list(layers) == ["inp", "blk.0", "blk.2", "head"]
    assert [lay.is_output for lay in layers.values()] == [False, False, False, True]
    assert layers["head"].hop is None and layers["blk.2"].hop is not None
    read = {"head": "head"} | ({} if reentrant else {"blk.0": "blk.1", "blk.2": "blk.3"})
    for name, module in read.items():
        a = outputs[module]
        assert layers[name].batch == 8  # (one forward pass's rows)
        assert layers[name].act_mean == pytest.approx(float(a.mean()), rel=1e-12)
        assert layers[name].act_std == pytest.approx(float(a.std(correction=0)), rel=1e-9)
    for name in {"blk.0", "blk.2"} - set(read):
        assert layers[name].unread.startswith("activations")


class Branch(nn.Module):
    """inp → a or b (a on even steps, b on odd ones) → head: b is not called on step 0,
    the step that maps the rows."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(6, 8, dtype=DT)
        self.a = nn.Linear(8, 8, dtype=DT)
        self.b = nn.Linear(8, 8, dtype=DT)
        self.head = nn.Linear(8, 3, dtype=DT)

    def forward(self, x, step):
        branch = self.a if step % 2 == 0 else self.b
        return self.head(torch.relu(branch(torch.relu(self.inp(x)))))


def test_a_layer_not_called_on_the_mapping_step_is_not_the_output_layer() -> None:
    """b, first called on step 1, is placed before head (the output layer), compared with
    no other layer, and the notes say its place and its activation were not seen."""
    torch.manual_seed(0)
    model = Branch()
    X, Y = torch.randn(8, 6, dtype=DT), torch.randint(0, 3, (8,))
    rec, outputs = _trained(model, lambda step: F.cross_entropy(model(X, step), Y), steps=4)
    history = rec.history()
    assert len(history) == 4
    for _, diagnosis in history:
        layers = {lay.name: lay for lay in diagnosis.layers}
        assert list(layers) == ["inp", "a", "b", "head"]
        assert [lay.is_output for lay in layers.values()] == [False, False, False, True]
        assert not layers["b"].compared and layers["b"].below is None
        assert layers["b"].hop is None and layers["a"].hop is None  # (b's place not seen)
    layers = {lay.name: lay for lay in history[-1][1].layers}  # (step 3: b called)
    head = outputs["head"]
    assert layers["head"].act_mean == pytest.approx(float(head.mean()), rel=1e-12)
    assert layers["b"].rms == pytest.approx(float(model.b.weight.grad.pow(2).mean().sqrt()))
    notes = rec.notes()
    assert any(n.startswith("b: not called in the forward pass of step 0") for n in notes)
    assert any("after layer b was not seen" in n for n in notes)
    assert not any(n.startswith(("a:", "inp:", "head:")) for n in notes)
