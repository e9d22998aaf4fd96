"""gradviz.torch.watch: the recorder's numbers against the gradients and activations read
straight off the tensors (numpy), when it reads them (after clipping), what it keeps, and
the run file it writes as `gradviz inspect` and `gradviz grads` read it."""

from __future__ import annotations

import io
import itertools
import json
import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from click.testing import CliRunner
from torch_support import require_torch

torch = require_torch()
nn = torch.nn

from gradviz.cli import cli  # noqa: E402
from gradviz.errors import InputError, ModelError  # noqa: E402
from gradviz.numbers import fmt  # noqa: E402
from gradviz.ops import ACTIVATIONS  # noqa: E402
from gradviz.render.training import percent  # noqa: E402
from gradviz.schema import load_run  # noqa: E402
from gradviz.stats import verdict  # noqa: E402
from gradviz.torch import watch  # noqa: E402


def _mlp(sizes, activation=nn.Sigmoid, seed=0, dtype=torch.float64):
    torch.manual_seed(seed)
    layers = []
    for a, b in itertools.pairwise(sizes):
        layers += [nn.Linear(a, b, dtype=dtype), activation()]
    return nn.Sequential(*layers)


def _data(n=32, width=3, seed=1, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, width, generator=g, dtype=dtype)
    return X, (X.sum(1, keepdim=True) > 0).to(dtype)


def _step(net, optimizer, X, Y, clip=None):
    optimizer.zero_grad()
    loss = ((net(X) - Y) ** 2).mean()
    loss.backward()
    if clip is not None:
        nn.utils.clip_grad_norm_(net.parameters(), clip)
    optimizer.step()
    return loss


def test_numbers_match_the_tensors() -> None:
    """rms, mean and max |g|, grad:data, update:data and the activations' statistics of each
    layer, against numpy on the very tensors the step used."""
    net = _mlp([3, 5, 4, 1])
    X, Y = _data()
    outputs = {}
    for name, module in net.named_children():
        module.register_forward_hook(lambda m, i, o, name=name: outputs.__setitem__(name, o))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.3)
    rec = watch(net, every=1, optimizer=optimizer)
    before = [net[i].weight.detach().clone().numpy() for i in (0, 2, 4)]
    optimizer.zero_grad()
    ((net(X) - Y) ** 2).mean().backward()
    grads = [net[i].weight.grad.clone().numpy() for i in (0, 2, 4)]
    bias_grads = [net[i].bias.grad.clone().numpy() for i in (0, 2, 4)]
    optimizer.step()
    diagnosis = rec.diagnosis()
    assert [layer.name for layer in diagnosis.layers] == ["0", "2", "4"]
    for k, (layer, i) in enumerate(zip(diagnosis.layers, (0, 2, 4), strict=True)):
        g, w = grads[k], before[k]
        assert math.isclose(layer.rms, np.sqrt(np.mean(g * g)), rel_tol=1e-12)
        assert math.isclose(layer.mean_abs, np.mean(np.abs(g)), rel_tol=1e-12)
        assert layer.max_abs == np.max(np.abs(g))
        assert math.isclose(layer.signal, np.sqrt(np.mean(bias_grads[k] ** 2)), rel_tol=1e-12)
        assert math.isclose(layer.grad_data, np.linalg.norm(g) / np.linalg.norm(w), rel_tol=1e-12)
        moved = np.linalg.norm(net[i].weight.detach().numpy() - w) / np.linalg.norm(w)
        assert math.isclose(layer.update_data, moved, rel_tol=1e-9)
        a = outputs[str(i + 1)].detach().numpy()  # the Sigmoid after the layer
        assert math.isclose(layer.act_mean, np.mean(a), rel_tol=1e-12)
        assert math.isclose(layer.act_std, np.std(a), rel_tol=1e-9)
        assert math.isclose(layer.mean_slope, np.mean(a * (1 - a)), rel_tol=1e-12)
        low, high = ACTIVATIONS["sigmoid"].saturation
        assert layer.saturated == pytest.approx(np.mean((a < low) | (a > high)))
        assert layer.batch == 32 and layer.activation == "sigmoid"
        assert layer.n_out, layer.n_in == g.shape
    assert diagnosis.layers[-1].is_output
    # the hop: ‖δ‖ of a layer over the next one's (δ: the bias gradient)
    hop = np.linalg.norm(bias_grads[0]) / np.linalg.norm(bias_grads[1])
    assert math.isclose(diagnosis.layers[0].hop, hop, rel_tol=1e-12)


def test_it_reads_the_gradients_after_clipping() -> None:
    """Recorded at the optimizer's step: what the step uses, after clip_grad_norm_."""
    net = _mlp([3, 8, 1])
    X, Y = _data()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    rec = watch(net, every=1, optimizer=optimizer)
    _step(net, optimizer, X, Y, clip=1e-3)
    norms = [layer.norm for layer in rec.diagnosis().layers]
    total = math.sqrt(
        sum(n * n for n in norms) + sum(float(net[i].bias.grad.norm()) ** 2 for i in (0, 2))
    )
    assert total == pytest.approx(1e-3, rel=1e-4)  # (clip_grad_norm_ divides by norm + 1e-6)


def _amp_run(how: str, steps: int = 2):
    """A float32 MLP under fp16 autocast and a torch.amp.GradScaler (its loss scale 2^16),
    stepped as `how` says: the gradients' rms at each optimizer step (read in a step
    pre-hook), where clipped (after unscale_) layer 0's ‖g‖ and the total norm before it,
    and the recorder."""
    net = _mlp([3, 8, 8, 2], activation=nn.ReLU, dtype=torch.float32)
    X, Y = _data(dtype=torch.float32)
    optimizer = (
        torch.optim.Adam(net.parameters(), lr=1e-3, fused=True)
        if how == "fused"
        else torch.optim.SGD(net.parameters(), lr=0.1)
    )
    scaler = torch.amp.GradScaler("cpu")
    seen, clipped = [], []

    def at_step(opt, args, kwargs) -> None:
        scale = getattr(opt, "grad_scale", None)  # (fused: unscaled inside the step)
        scale = 1.0 if scale is None else float(scale)
        seen.append([float(net[i].weight.grad.pow(2).mean().sqrt()) / scale for i in (0, 2, 4)])

    optimizer.register_step_pre_hook(at_step)
    rec = watch(
        net, every=1, optimizer=None if how == "callback" else optimizer, manual=how == "callback"
    )
    for _ in range(steps):
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            loss = nn.functional.cross_entropy(net(X), Y[:, 0].long())
        scaler.scale(loss).backward()
        if how in ("clip", "callback"):
            scaler.unscale_(optimizer)
        if how == "clip":
            first = float(net[0].weight.grad.norm())
            clipped.append((first, float(nn.utils.clip_grad_norm_(net.parameters(), 1e-3))))
        if how == "callback":  # (a framework's hook between unscale_ and the step)
            rec.step()
        scaler.step(optimizer)
        scaler.update()
    return seen, clipped, rec


@pytest.mark.parametrize("how", ["step", "fused", "clip", "callback"])
def test_under_a_grad_scaler_the_gradients_are_the_unscaled_ones(how: str) -> None:
    """torch.amp.GradScaler: the backward pass leaves the gradients 2^16 times too large,
    unscaled in place before the step (its unscale_ leaves their version counters as
    they were) or, by a fused optimizer, inside it. The table shows those the step uses,
    and the loss scale undone is not clipping; clipping after unscale_ is, by its own
    factor, from the unscaled gradients."""
    seen, clipped, rec = _amp_run(how)
    history = rec.history()
    assert len(history) == len(seen) == 2
    for (_, d), expected in zip(history, seen, strict=True):
        rms = [layer.rms for layer in d.layers]
        assert rms == pytest.approx(expected, rel=1e-5)
        assert all(layer.status == "ok" for layer in d.layers[:-1])
        if how != "clip":
            assert d.clip_scale is None
    if how == "clip":
        d = history[-1][1]
        first, total = clipped[-1]
        assert d.layers[0].clipped_from == pytest.approx(first, rel=1e-5)
        assert d.clip_scale == pytest.approx(1e-3 / (total + 1e-6), rel=1e-5)
    else:
        assert not any("clipping" in line for line in verdict(rec.diagnosis(), history))


@pytest.mark.parametrize("factor", [0.01, 0.5])
def test_gradients_written_through_data_are_read_as_written(factor: float) -> None:
    """`p.grad.data.mul_(c)` after backward (old-style scaling) bumps no version counter
    of p.grad: the norms are read at the step all the same, consistent with max|g|."""
    net = _mlp([3, 8, 1], dtype=torch.float32)
    X, Y = _data(dtype=torch.float32)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    rec = watch(net, every=1, optimizer=optimizer)
    optimizer.zero_grad()
    ((net(X) - Y) ** 2).mean().backward()
    for p in net.parameters():
        p.grad.data.mul_(factor)
    g = net[0].weight.grad.double()
    optimizer.step()
    layer = rec.diagnosis().layers[0]
    assert layer.rms == pytest.approx(float(g.pow(2).mean().sqrt()), rel=1e-6)
    assert layer.max_abs == pytest.approx(float(g.abs().max()), rel=1e-6)
    assert layer.rms <= layer.max_abs


@pytest.mark.parametrize("scale", [1e-26, 0.0])
def test_a_tiny_float32_gradient_is_not_read_as_zero(scale: float) -> None:
    """Inputs of 1e-26: the first layer's weight gradient is about 1e-26, whose float32
    squares underflow to 0 (‖g‖₂ read 0 while mean|g| is not); read again in float64.
    Inputs of 0: a gradient of zeros, whose ‖g‖₂ stays exactly 0."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(6, 4), nn.Sigmoid(), nn.Linear(4, 1))
    X = torch.rand(8, 6, generator=torch.Generator().manual_seed(1)) * scale
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    rec = watch(net, every=1, optimizer=optimizer)
    optimizer.zero_grad()
    ((net(X) - 1.0) ** 2).mean().backward()
    g = net[0].weight.grad.double()
    optimizer.step()
    layer = rec.diagnosis().layers[0]
    rms, mean_abs = float(g.pow(2).mean().sqrt()), float(g.abs().mean())
    assert (rms > 0) == (scale > 0)
    assert layer.mean_abs == pytest.approx(mean_abs, rel=1e-6, abs=0)  # (abs: 1e-12 else)
    assert layer.rms == pytest.approx(rms, rel=1e-6, abs=0)
    assert layer.norm == pytest.approx(float(g.norm()), rel=1e-6, abs=0)


def test_infinite_activations_give_nan_statistics_not_a_crash(tmp_path) -> None:
    """The output layer's units +inf and -inf for a sample: its per-unit sums hold both
    (fsum refuses inf − inf). Its mean and std are NaN, the row is NaN, first in its
    pre-activations; the table prints and the run saves."""
    net = nn.Sequential(nn.Linear(2, 2))
    with torch.no_grad():
        net[0].weight.copy_(torch.tensor([[2.0, 0.0], [-2.0, 0.0]]))
        net[0].bias.zero_()
    X = torch.tensor([[3e38, 0.0], [1.0, 1.0]])
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    rec = watch(net, every=1, optimizer=optimizer)
    optimizer.zero_grad()
    out = net(X)
    assert out[0].tolist() == [math.inf, -math.inf]
    out.sum().backward()
    optimizer.step()
    d = rec.diagnosis()
    layer = d.layers[0]
    assert math.isnan(layer.act_mean) and math.isnan(layer.act_std)
    assert layer.status == "NaN" and layer.nonfinite_in == "pre-activations"
    assert d.first_nonfinite == (1, "pre-activations")
    printed = io.StringIO()
    rec.table(file=printed, width=200)
    assert "NaN/inf first appeared in layer 0" in printed.getvalue()
    rec.save(tmp_path / "run.json")
    assert load_run(tmp_path / "run.json").history[-1][1].layers[0].status == "NaN"


def test_dead_relu_units_and_counts() -> None:
    net = _mlp([3, 6, 1], activation=nn.ReLU)
    with torch.no_grad():
        net[0].bias[:4] = -100.0  # four units below 0 for every input: dead
    X, Y = _data()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    rec = watch(net, every=1, optimizer=optimizer)
    _step(net, optimizer, X, Y)
    first = rec.diagnosis().layers[0]
    a = torch.relu(net[0](X)).detach().numpy()  # (the weights after the step: same signs)
    assert first.dead_units == int(np.sum(np.all(a <= 0, axis=0))) >= 4
    assert first.status == "dead" and first.activation == "relu"
    assert math.isclose(first.mean_slope, float(np.mean(a > 0)), rel_tol=1e-12)


def test_every_n_steps_and_the_curves() -> None:
    net = _mlp([3, 4, 1])
    X, Y = _data()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    rec = watch(net, every=3, optimizer=optimizer)
    for _ in range(10):
        rec.log(loss=_step(net, optimizer, X, Y), accuracy=0.5)
    assert [step for step, _ in rec.history()] == [0, 3, 6, 9]
    steps, loss, accuracy = rec.curves()
    assert steps == list(range(1, 11)) and accuracy == [0.5] * 10
    assert all(isinstance(v, float) for v in loss)
    rec.close()
    assert not any(m._forward_hooks for m in net.modules())
    _step(net, optimizer, X, Y)
    assert rec.steps == 10  # closed: the optimizer's steps are no longer counted


def test_without_an_optimizer_step_records() -> None:
    net = _mlp([3, 4, 1])
    X, Y = _data()
    rec = watch(net, every=1)
    with pytest.raises(InputError, match="nothing recorded yet"):
        rec.diagnosis()
    ((net(X) - Y) ** 2).mean().backward()
    rec.step()
    assert rec.diagnosis().layers[0].update_data is None
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    with pytest.raises(InputError, match=r"optimizer\.step"):
        watch(net, optimizer=optimizer).step()


def test_nan_is_counted_and_located() -> None:
    net = _mlp([3, 4, 1])
    X, Y = _data()
    with torch.no_grad():
        net[2].weight[0, 1] = math.nan
    rec = watch(net, every=1)
    ((net(X) - Y) ** 2).mean().backward()
    rec.step()
    d = rec.diagnosis()
    assert d.layers[1].status == "NaN" and d.layers[1].nonfinite_in == "weights"
    assert d.first_nonfinite == (2, "weights")
    assert d.layers[0].nonfinite == 4 * 3 + 4  # its gradients: NaN from the loss back


@pytest.mark.parametrize("conv", [False, True])
def test_relu_units_above_zero_count_a_nan_as_count_nonzero_does(conv: bool) -> None:
    """The float32 ReLU count (signs summed) is exact on a finite step, and a step whose
    activations hold a NaN (its sign is 0, count_nonzero counts it) is counted again."""
    torch.manual_seed(0)
    if conv:
        net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten(),
                            nn.Linear(4 * 36, 3), nn.ReLU())  # fmt: skip
        X = torch.randn(5, 1, 6, 6)
    else:
        net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.ReLU())
        X = torch.randn(5, 4)
    relus = [m for m in net if isinstance(m, nn.ReLU)]
    seen: dict[int, object] = {}
    for k, m in enumerate(relus):
        m.register_forward_hook(lambda m, i, o, k=k: seen.__setitem__(k, o.detach().clone()))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.0)
    rec = watch(net, every=1, optimizer=optimizer)
    for step in range(2):
        optimizer.zero_grad()
        x = X.clone()
        if step == 1:
            x[0] = math.nan  # one sample's activations all NaN
        net(x).sum().backward()
        optimizer.step()
        rows = [layer for layer in rec.diagnosis().layers if layer.activation == "relu"]
        assert len(rows) == 2
        for k, layer in enumerate(rows):
            a = seen[k]
            per_unit = torch.count_nonzero(a, dim=tuple(i for i in range(a.dim()) if i != 1))
            assert bool(a.isnan().any()) == (step == 1)
            assert layer.mean_slope == float(per_unit.sum()) / a.numel()
            if layer is not rows[-1]:  # (a hidden row's dead units; the output's are per unit)
                assert layer.dead_units == int((per_unit == 0).sum())


@pytest.mark.parametrize(
    ("args", "words"),
    [((nn.ReLU(),), "no parameters to watch"), (("net",), "torch.nn.Module"), ((None, 0), "every")],
)
def test_watch_refuses(args, words: str) -> None:
    args = (_mlp([2, 2]), *args[1:]) if args[0] is None else args
    with pytest.raises(InputError, match=words):
        watch(*args)


@pytest.fixture(scope="module")
def deep_run(tmp_path_factory) -> tuple[object, object]:
    """A deep sigmoid MLP watched for 60 steps, and its run file."""
    net = _mlp([3, *[8] * 6, 1], dtype=torch.float32)
    X, Y = _data(dtype=torch.float32)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.5)
    rec = watch(net, every=10, optimizer=optimizer)
    for _ in range(60):
        loss = _step(net, optimizer, X, Y)
        rec.log(loss=loss, accuracy=float(((net(X) > 0.5) == (Y > 0.5)).float().mean()))
    path = tmp_path_factory.mktemp("run") / "run.json"
    rec.save(path)
    return rec, path


def test_the_saved_run_reads_back_the_same(deep_run) -> None:
    rec, path = deep_run
    run = load_run(path)
    assert [s for s, _ in run.history] == [0, 10, 20, 30, 40, 50]
    assert [d.to_dict() for _, d in run.history] == [d.to_dict() for _, d in rec.history()]
    assert run.steps_run == 60 and run.every == 10 and len(run.loss) == 60
    assert run.layers[0].activation_module == "Sigmoid"
    assert run.framework.startswith("PyTorch ")


def _invoke(*args: str):
    return CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(cli, list(args))


def test_grads_prints_the_recorders_table(deep_run) -> None:
    rec, path = deep_run
    done = _invoke("grads", str(path))
    assert done.exit_code == 0, done.output
    mine = io.StringIO()
    rec.table(file=mine, width=200)
    # the table and the heat map, line for line (the titles differ; the verdict's lines
    # wrap in a terminal, not in a pipe)
    table = [line.rstrip() for line in mine.getvalue().split("\n•")[0].splitlines()[1:]]
    printed = [line.rstrip() for line in done.output.splitlines()]
    assert len(table) > 10 and printed[1 : 1 + len(table)] == table
    assert "vanishing" in done.output and "σ′ averages" in done.output


def test_inspect_shows_the_run_and_says_what_is_missing(deep_run, tmp_path) -> None:
    """Through the one training report (`report.run_report`): the terminal, the JSON and
    the page, each saying what a run without network or data leaves out."""
    rec, path = deep_run
    done = _invoke("inspect", str(path))
    assert done.exit_code == 0, done.output
    assert "recorded in PyTorch" in done.output and "(read after Sigmoid)" in done.output
    assert "no predictions, no decision boundary: a recorded run holds no" in done.output
    _, loss, accuracy = rec.curves()
    assert f"last recorded loss {fmt(loss[-1])}, accuracy {percent(accuracy[-1])}" in done.output
    assert "Gradients per layer at step 50 (as recorded)" in done.output
    page, curves = tmp_path / "report.html", tmp_path / "curves.svg"
    done = _invoke("inspect", str(path), "-o", str(page), "--curves", str(curves))
    assert done.exit_code == 0, done.output
    html = page.read_text("utf-8")
    assert "a recorded run holds no network and no data" in html and "<svg" in html
    assert "The network by step" in html and "mean per epoch" not in html
    assert ET.fromstring(curves.read_bytes()).tag.endswith("svg")
    document = json.loads(_invoke("inspect", str(path), "--json").output)
    assert document["gradients"] == rec.diagnosis().to_dict() and document["verdict"]
    assert document["predictions"] == []


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("grads", "{run}", "--params"), "recorded run"),
        (("grads", "{run}", "--epochs", "3"), "as recorded"),
        (("inspect", "{run}", "--boundary", "b.svg"), "recorded run"),
        (("inspect", "{run}", "--data", "xor"), "recorded run"),
    ],
)
def test_what_a_run_cannot_do_is_refused(deep_run, args, words: str, tmp_path) -> None:
    _, path = deep_run
    done = _invoke(*(a.replace("{run}", str(path)) for a in args))
    assert done.exit_code == 2, done.output
    assert words in done.output and "Traceback" not in done.output


def test_a_damaged_run_is_one_line(deep_run, tmp_path) -> None:
    _, path = deep_run
    raw = json.loads(path.read_text("utf-8"))
    raw["history"][2]["layers"][1]["rms"] = "lots"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(raw), "utf-8")
    with pytest.raises(ModelError, match=r"history\[2\]\.layers\[1\]\.rms"):
        load_run(bad)
    done = _invoke("grads", str(bad))
    assert done.exit_code == 2 and "history[2].layers[1].rms" in done.output
    cut = tmp_path / "cut.json"
    cut.write_text(path.read_text("utf-8")[:500], "utf-8")
    done = _invoke("inspect", str(cut))
    assert done.exit_code == 2 and len(done.output.strip().splitlines()) == 1
    assert "truncated" in done.output or "not valid JSON" in done.output  # where it was cut
