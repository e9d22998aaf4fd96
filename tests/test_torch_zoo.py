"""gradviz.torch on the models people train: a CNN with BatchNorm, a residual block, a
transformer encoder layer with a head, a 2-layer LSTM, an embedding tied to the output
layer, a frozen backbone being fine-tuned, each trained a few steps, eagerly and under
torch.compile. Every parameter appears in the table and the run file, and every number is
checked against the gradients and weights this test reads off the tensors itself (an
optimizer step pre-hook of its own), grouped by its own rule: a row per module's own
parameters, an RNN's per layer and direction, a tied tensor once."""

from __future__ import annotations

import io
import math
import re

import pytest
from torch_support import require_torch

torch = require_torch()
nn = torch.nn
F = torch.nn.functional

from gradviz.schema import load_run  # noqa: E402
from gradviz.stats import verdict  # noqa: E402
from gradviz.torch import watch  # noqa: E402

DT = torch.float64
STEPS = 3


class CNN(nn.Module):
    """Conv → BatchNorm → relu (functional, applied to the norm's output), twice, and a head."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1, dtype=DT)
        self.bn1 = nn.BatchNorm2d(4, dtype=DT)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1, dtype=DT)
        self.bn2 = nn.BatchNorm2d(4, dtype=DT)
        self.head = nn.Linear(4 * 6 * 6, 3, dtype=DT)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return self.head(x.flatten(1))


class Residual(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(6, 8, dtype=DT)
        self.norm = nn.LayerNorm(8, dtype=DT)
        self.fc1 = nn.Linear(8, 8, dtype=DT)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(8, 8, dtype=DT)
        self.out = nn.Linear(8, 3, dtype=DT)

    def forward(self, x):
        h = self.inp(x)
        h = h + self.fc2(self.act(self.fc1(self.norm(h))))
        return self.out(h)


class Transformer(nn.Module):
    """An embedding, a learned position table (a raw Parameter), one encoder layer (its
    attention's in_proj and out_proj, its functional relu) and a head."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(11, 16, dtype=DT)
        self.pos = nn.Parameter(torch.randn(5, 16, dtype=DT) * 0.1)
        self.layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True, dtype=DT)
        self.head = nn.Linear(16, 3, dtype=DT)

    def forward(self, tokens):
        h = self.layer(self.embed(tokens) + self.pos)
        return self.head(h[:, -1])


class Recurrent(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(11, 6, dtype=DT)
        self.lstm = nn.LSTM(6, 8, num_layers=2, batch_first=True, dtype=DT)
        self.head = nn.Linear(8, 3, dtype=DT)

    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.head(out[:, -1])


class Tied(nn.Module):
    """The output layer's weight is the embedding's (one tensor, two modules)."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(11, 8, dtype=DT)
        self.mid = nn.Linear(8, 8, dtype=DT)
        self.head = nn.Linear(8, 11, dtype=DT)
        self.head.weight = self.embed.weight

    def forward(self, tokens):
        return self.head(torch.tanh(self.mid(self.embed(tokens).mean(1))))


class FineTuned(nn.Module):
    """A backbone: its first layer with requires_grad off, its second in no optimizer
    group (both frozen), and a head being trained."""

    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Linear(6, 8, dtype=DT), nn.ReLU(), nn.Linear(8, 8, dtype=DT), nn.ReLU()
        )
        self.head = nn.Linear(8, 3, dtype=DT)
        self.backbone[0].requires_grad_(False)

    def forward(self, x):
        return self.head(self.backbone(x))

    def trained(self):
        return self.head.parameters()


ZOO = {
    "cnn": (CNN, lambda g: torch.randn(8, 1, 6, 6, generator=g, dtype=DT)),
    "residual": (Residual, lambda g: torch.randn(8, 6, generator=g, dtype=DT)),
    "transformer": (Transformer, lambda g: torch.randint(0, 11, (8, 5), generator=g)),
    "lstm": (Recurrent, lambda g: torch.randint(0, 11, (8, 5), generator=g)),
    "tied": (Tied, lambda g: torch.randint(0, 11, (8, 5), generator=g)),
    "finetuned": (FineTuned, lambda g: torch.randn(8, 6, generator=g, dtype=DT)),
}
# The rows this test expects, in forward order (its own reading of each model).
# fmt: off
ORDER = {
    "cnn": ["conv1", "bn1", "conv2", "bn2", "head"],
    "residual": ["inp", "norm", "fc1", "fc2", "out"],
    "transformer": [
        "embed", "Transformer", "layer.self_attn", "layer.self_attn.out_proj", "layer.norm1",
        "layer.linear1", "layer.linear2", "layer.norm2", "head",
    ],
    "lstm": ["embed", "lstm.l0", "lstm.l1", "head"],
    "tied": ["mid", "embed ≡ head"],
    "finetuned": ["backbone.0", "backbone.2", "head"],
}
# fmt: on
_RNN = re.compile(r"^(?:weight|bias)_(?:ih|hh)_(l\d+(?:_reverse)?)$")


def _row_key(model: nn.Module, qualified: str) -> str:
    """This test's own rule: a parameter's row is its module's path (with an RNN's layer)."""
    module_path, _, name = qualified.rpartition(".")
    module = model.get_submodule(module_path) if module_path else model
    match = _RNN.match(name) if isinstance(module, nn.RNNBase) else None
    path = module_path or type(model).__name__
    return f"{path}.{match.group(1)}" if match else path


def _train(kind: str, compiled: bool = False, every: int = 1, optimizer_class=None):
    """Train `kind` a few steps; return the recorder, the model, and per step what this
    test read at each optimizer step: every parameter's gradient and weight before the
    step, and its weight after."""
    torch.manual_seed(0)
    build, inputs = ZOO[kind]
    model = build()
    g = torch.Generator().manual_seed(1)
    X, Y = inputs(g), torch.randint(0, 3, (8,), generator=g)
    if kind == "tied":
        Y = torch.randint(0, 11, (8,), generator=g)
    params = model.trained() if isinstance(model, FineTuned) else model.parameters()
    optimizer = (optimizer_class or torch.optim.SGD)(params, lr=0.05)
    seen: list[dict] = []

    def before(opt, args, kwargs):
        seen.append(
            {
                "grad": {
                    n: None if p.grad is None else p.grad.detach().clone()
                    for n, p in model.named_parameters(remove_duplicate=False)
                },
                "data": {
                    n: p.detach().clone() for n, p in model.named_parameters(remove_duplicate=False)
                },
            }
        )

    def after(opt, args, kwargs):
        seen[-1]["after"] = {
            n: p.detach().clone() for n, p in model.named_parameters(remove_duplicate=False)
        }

    optimizer.register_step_pre_hook(before)
    optimizer.register_step_post_hook(after)
    run = torch.compile(model, backend="aot_eager") if compiled else model
    rec = watch(run, every=every)
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = F.cross_entropy(run(X), Y)
        loss.backward()
        optimizer.step()
        rec.log(loss=loss)
    rec.close()
    return rec, model, seen


def _expected(model: nn.Module, moment: dict) -> dict[str, dict[str, float]]:
    """Per row (this test's grouping), the numbers gradviz should show."""
    # a tied tensor's second holder joins the first holder's row; the tensor counts once
    first: dict[int, str] = {}
    alias: dict[str, str] = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        key = _row_key(model, name)
        if id(p) in first and first[id(p)] != key:
            alias[key] = first[id(p)]
        first.setdefault(id(p), key)
    groups: dict[str, list[str]] = {}
    seen_ids: set[int] = set()
    for name, p in model.named_parameters(remove_duplicate=False):
        if id(p) in seen_ids:
            continue
        seen_ids.add(id(p))
        key = _row_key(model, name)
        groups.setdefault(alias.get(key, key), []).append(name)
    out = {}
    for key, names in groups.items():
        weights = [n for n in names if not n.rsplit(".", 1)[-1].startswith("bias")] or names
        biases = [n for n in names if n not in weights]

        def cat(table: dict, ns: list[str]) -> torch.Tensor:
            return torch.cat(
                [
                    (table[n] if table[n] is not None else torch.zeros_like(moment["data"][n]))
                    .reshape(-1)
                    .to(torch.float64)
                    for n in ns
                ]
            )

        g, w = cat(moment["grad"], weights), cat(moment["data"], weights)
        numbers = {
            "rms": float(g.pow(2).mean().sqrt()),
            "mean_abs": float(g.abs().mean()),
            "max_abs": float(g.abs().max()),
            "grad_data": float(g.norm() / w.norm()),
            "signal": float(cat(moment["grad"], biases).pow(2).mean().sqrt())
            if biases
            else math.nan,
            "n_params": sum(moment["data"][n].numel() for n in names),
        }
        if "after" in moment:
            moved = cat(moment["after"], weights) - w
            numbers["update_data"] = float(moved.norm() / w.norm())
        out[key] = numbers
    return out


def _close(a: float | None, b: float, what: str) -> None:
    if isinstance(b, float) and math.isnan(b):
        assert a is None or math.isnan(a), what
        return
    assert a is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-300), (what, a, b)


@pytest.mark.parametrize("kind", list(ZOO))
def test_every_parameter_and_every_number(kind: str, tmp_path) -> None:
    rec, model, seen = _train(kind)
    history = rec.history()
    assert [step for step, _ in history] == list(range(STEPS))
    names = [layer.name for layer in history[-1][1].layers]
    assert names == ORDER[kind]
    # every parameter in the run file, a tied tensor under both its names
    path = tmp_path / "run.json"
    rec.save(path)
    run = load_run(path)
    listed = [p for layer in run.layers for p in layer.params]
    assert sorted(listed) == sorted(n for n, _ in model.named_parameters(remove_duplicate=False))
    assert rec.coverage()[0] == rec.coverage()[1] == sum(p.numel() for p in model.parameters())
    for (step, d), moment in zip(history, seen, strict=True):
        expected = _expected(model, moment)
        for layer in d.layers:
            key = layer.name.split(" ≡ ")[0]
            want = expected[key]
            assert layer.n_params == want["n_params"], layer.name
            for field in ("rms", "mean_abs", "max_abs", "grad_data", "signal"):
                _close(getattr(layer, field), want[field], f"{kind} {layer.name} {field} {step}")
            if layer.frozen:
                assert layer.status == "frozen" and layer.update_data is None
            else:
                _close(layer.update_data, want["update_data"], f"{kind} {layer.name} update")
        assert [lay.to_dict() for lay in d.layers] == [
            lay.to_dict() for lay in run.history[step][1].layers
        ]


def test_the_frozen_backbone_is_frozen_and_out_of_the_verdict() -> None:
    rec, _, _ = _train("finetuned")
    d = rec.diagnosis()
    status = {layer.name: layer.status for layer in d.layers}
    assert status["backbone.0"] == status["backbone.2"] == "frozen"
    assert status["head"] != "frozen"
    lines = verdict(d, rec.history())
    assert any("backbone.0–backbone.2 are frozen" in line for line in lines)
    assert not any("vanishing" in line or "He init" in line for line in lines)


def test_the_tied_tensor_is_one_row_naming_both() -> None:
    rec, _, _ = _train("tied")
    assert [layer.name for layer in rec.diagnosis().layers][-1] == "embed ≡ head"
    assert any(
        "embed ≡ head: one tensor in 2 modules (head.weight is embed.weight)" in note
        for note in rec.notes()
    )


def test_attention_and_rnn_rows_say_their_activations_are_not_read() -> None:
    for kind, rows in (("transformer", ["Transformer", "layer.self_attn"]), ("lstm", ["lstm.l0"])):
        rec, _, _ = _train(kind)
        layers = {layer.name: layer for layer in rec.diagnosis().layers}
        for name in rows:
            assert layers[name].unread and layers[name].unread.startswith("activations")
            assert math.isnan(layers[name].act_std)
        assert any("Activations not read for" in note for note in rec.notes())


def test_functional_activations_are_read_as_their_op() -> None:
    """torch.relu after bn1, F.relu after bn2 (the CNN), TransformerEncoderLayer's relu
    after linear1: read as relu, with the dead fraction of the functions' outputs."""
    rec, _, _ = _train("cnn")
    layers = {layer.name: layer for layer in rec.diagnosis().layers}
    assert layers["bn1"].activation == layers["bn2"].activation == "relu"
    assert layers["conv1"].activation == "linear"  # (its output goes to the norm)
    rec, _, _ = _train("transformer")
    layers = {layer.name: layer for layer in rec.diagnosis().layers}
    assert layers["layer.linear1"].activation == "relu"


def test_a_conv_layers_hop_is_not_read_from_a_bias_the_norm_cancels() -> None:
    rec, _, _ = _train("cnn")
    layers = {layer.name: layer for layer in rec.diagnosis().layers}
    assert layers["conv1"].hop is None and layers["conv2"].hop is None


@pytest.mark.slow  # torch.compile traces each model: seconds
@pytest.mark.parametrize("kind", list(ZOO))
def test_compiled_gives_the_eager_table_or_says_what_it_cannot_read(kind: str) -> None:
    eager, _, _ = _train(kind)
    compiled, model, seen = _train(kind, compiled=True)
    d = compiled.diagnosis()
    # the same rows (module order: no forward hook ran to give the forward's) and names
    assert sorted(layer.name for layer in d.layers) == sorted(ORDER[kind])
    assert not any("_orig_mod" in layer.name for layer in d.layers)
    expected = _expected(model, seen[-1])
    same = {layer.name: layer for layer in eager.diagnosis().layers}
    for layer in d.layers:
        want = expected[layer.name.split(" ≡ ")[0]]
        for field in ("rms", "max_abs", "grad_data"):
            _close(getattr(layer, field), want[field], f"compiled {kind} {layer.name} {field}")
            # the eager run's numbers (compiled kernels: the same to rounding)
            assert math.isclose(
                getattr(layer, field), getattr(same[layer.name], field), rel_tol=1e-6
            ), (layer.name, field)
        assert layer.unread is not None and "torch.compile" in layer.unread
    notes = " ".join(compiled.notes())
    assert "Activations not read" in notes and "torch.compile" in notes
    assert not any(line.startswith("Healthy") for line in verdict(d, compiled.history()))
    out = io.StringIO()
    compiled.table(file=out, width=200)
    assert "?: not read" in out.getvalue()


def test_a_norms_gain_is_compared_with_no_weight_matrix() -> None:
    """Under AdamW a LayerNorm's gain (about 1) moves far less relative to its size than a
    weight matrix does: no "weak" from that. Its row is compared with no other."""
    rec, _, _ = _train("transformer", optimizer_class=torch.optim.AdamW)
    layers = {layer.name: layer for layer in rec.diagnosis().layers}
    for name in ("layer.norm1", "layer.norm2"):
        assert not layers[name].compared and layers[name].below is None
        assert layers[name].status not in ("weak", "vanishing")
    assert layers["layer.linear1"].compared


@pytest.mark.slow  # torch.compile traces the model: seconds
def test_compiled_rows_in_an_unseen_order_are_compared_with_nothing() -> None:
    """Compiled, the forward's order is not seen; the transformer is not a Sequential, so
    its module order is no evidence of which layer is nearer the output."""
    rec, _, _ = _train("transformer", compiled=True)
    d = rec.diagnosis()
    assert all(layer.below is None and layer.hop is None for layer in d.layers)
    assert not any(layer.status in ("weak", "vanishing") for layer in d.layers)
    assert any("the forward pass's order was not seen" in note for note in rec.notes())
