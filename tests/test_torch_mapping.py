"""How gradviz.torch's recorder maps rows: their order and the output layer from the
forward pass alone (not gradient checkpointing's recompute in the backward pass, not a
layer left out of the mapping step), and the activations it reads after each layer,
whether applied by a module, a function or a tensor method, in place or not. Every
number is checked against what the test reads off the tensors itself."""

from __future__ import annotations

import io

import pytest
from torch_support import require_torch

torch = require_torch()
nn = torch.nn
F = torch.nn.functional

from torch.utils.checkpoint import checkpoint  # noqa: E402

from gradviz.render.page_plots import grads_svg  # noqa: E402
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

    def keep(name: str, output: object) -> None:
        if isinstance(output, torch.Tensor):
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


class InPlace(nn.Module):
    """Activations as in-place tensor methods and functions: a.relu_(), b.sigmoid_(),
    torch.tanh_, then F.elu(inplace=True), whose slope needs the input it overwrites."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b, self.c, self.d = (
            nn.Linear(4 if i == 0 else 8, 8, dtype=DT) for i in range(4)
        )
        self.head = nn.Linear(8, 1, dtype=DT)
        with torch.no_grad():
            self.a.bias[:4] = -50.0  # units 0-3 below 0 for every sample: dead

    def forward(self, x):
        x = self.a(x).relu_()
        x = self.b(x).sigmoid_()
        x = torch.tanh_(self.c(x))
        x = F.elu(self.d(x), inplace=True)
        return self.head(x)


def test_in_place_activations_are_read_as_their_op_or_said() -> None:
    """relu_, sigmoid_ and tanh_ are read off their outputs, as their modules are; an
    in-place elu has lost the input its slope needs: read as linear, and said."""
    torch.manual_seed(0)
    model = InPlace()
    X, Y = torch.rand(32, 4, dtype=DT), torch.rand(32, 1, dtype=DT)
    rec, outputs = _trained(model, lambda _: F.mse_loss(model(X), Y))
    layers = {lay.name: lay for lay in rec.diagnosis().layers}
    assert {name: lay.activation for name, lay in layers.items()} == {
        "a": "relu", "b": "sigmoid", "c": "tanh", "d": "linear", "head": "linear",
    }  # fmt: skip
    relu = torch.relu(outputs["a"])  # (the hook's copy is the layer's output, before relu_)
    assert layers["a"].dead_units == int((relu == 0).all(0).sum()) == 4
    assert layers["a"].mean_slope == pytest.approx(float((relu > 0).double().mean()), rel=1e-12)
    assert layers["a"].status == "dead"
    for name, f in (("b", torch.sigmoid), ("c", torch.tanh)):
        a = f(outputs[name])
        assert layers[name].act_mean == pytest.approx(float(a.mean()), rel=1e-12)
        slope = a * (1 - a) if name == "b" else 1 - a * a
        assert layers[name].mean_slope == pytest.approx(float(slope.mean()), rel=1e-9)
    assert layers["d"].act_mean == pytest.approx(float(outputs["d"].mean()), rel=1e-12)
    notes = rec.notes()
    assert any("after layer d (elu) works in place" in n for n in notes)
    assert not any("layer a" in n or "layer b" in n or "layer c" in n for n in notes)


def test_a_row_whose_activations_were_not_read_is_named_so_everywhere() -> None:
    """An RNN's row: "?" in the table's act column, in the heat map's label and in the
    page's plot (not "linear", the recorder's placeholder), and "the RNN's output" said."""
    torch.manual_seed(0)
    rnn, head = nn.RNN(4, 8, batch_first=True, dtype=DT), nn.Linear(8, 2, dtype=DT)
    model = nn.ModuleDict({"rnn": rnn, "head": head})
    X, Y = torch.randn(8, 5, 4, dtype=DT), torch.randint(0, 2, (8,))
    rec, _ = _trained(model, lambda _: F.cross_entropy(head(rnn(X)[0][:, -1]), Y))
    rows = {lay.name: lay for lay in rec.diagnosis().layers}
    assert rows["rnn.l0"].unread == "activations: the RNN's output is not one layer's units"
    out = io.StringIO()
    rec.table(file=out, width=160)
    lines = out.getvalue().splitlines()
    heat = lines[next(i for i, line in enumerate(lines) if "rms gradient over training" in line) :]
    labels = {line.split()[0]: line.split()[1] for line in heat[2:4]}
    assert labels == {"rnn.l0": "?", "head": "linear"}
    assert next(line for line in lines if line.startswith("rnn.l0")).split()[1] == "?"
    svg = grads_svg(rec.diagnosis(), rec.history())
    assert ">rnn.l0 ?<" in svg and ">head linear<" in svg and "rnn.l0 linear" not in svg
