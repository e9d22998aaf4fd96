"""gradviz.torch.draw (gradviz/torch/graph.py): a PyTorch loss's autograd graph as gradviz's
drawing model, checked against the tensors themselves, and drawn by every gradviz renderer."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from graphviz_support import needs_system_dot
from torch_support import require_torch

torch = require_torch()

import gradviz  # noqa: E402
from gradviz import layout  # noqa: E402
from gradviz.drawn import to_json, to_mermaid, to_text  # noqa: E402
from gradviz.errors import InputError  # noqa: E402
from gradviz.numbers import fmt  # noqa: E402
from gradviz.output import render  # noqa: E402
from gradviz.render.dot import layout_cost  # noqa: E402
from gradviz.torch import diagram  # noqa: E402
from gradviz.torch.graph import COLLAPSE_AT, NOT_KEPT, describe  # noqa: E402


def _mlp_loss(backward: bool = True):
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(2, 16), torch.nn.Tanh(), torch.nn.Linear(16, 16), torch.nn.Tanh(),
        torch.nn.Linear(16, 1), torch.nn.Sigmoid(),
    )  # fmt: skip
    loss = ((net(torch.tensor([[1.0, -0.5]])) - 1.0) ** 2).mean()
    if backward:
        loss.backward()
    return net, loss


def test_scalars_carry_their_values_and_gradients() -> None:
    """L = x·y + x at x = 2, y = -3: ∂L/∂x = y + 1 = -2, ∂L/∂y = x = 2 (by hand)."""
    x = torch.tensor(2.0, requires_grad=True)
    y = torch.tensor(-3.0, requires_grad=True)
    loss = x * y + x
    loss.backward()
    d = diagram(loss, {"x": x, "y": y})
    by_label = {n.label: n for n in d.nodes if n.kind == "value" and n.label}
    assert (by_label["x"].data, by_label["x"].grad) == (2.0, -2.0)
    assert (by_label["y"].data, by_label["y"].grad) == (-3.0, 2.0)
    assert (by_label["loss"].data, by_label["loss"].grad) == (-4.0, 1.0)
    assert sorted(n.op for n in d.nodes if n.op) == ["add", "mul"]  # the loss: made by add
    x_id = by_label["x"].id
    assert sum(e.source == x_id for e in d.edges) == 2  # x is used twice: two edges


def test_an_mlp_names_its_parameters_and_summarises_tensors() -> None:
    net, loss = _mlp_loss()
    d = diagram(loss, net)
    leaves = {n.label: n for n in d.nodes if n.role == "input"}
    assert set(leaves) == {f"{i}.{p}" for i in (0, 2, 4) for p in ("weight", "bias")}
    weight = net[2].weight.detach()
    lines = leaves["2.weight"].extra_lines
    assert lines[0] == "shape 16×16"
    norm = torch.linalg.vector_norm(weight.detach().double())
    assert lines[1] == f"data ‖·‖ {fmt(float(norm))}, min {fmt(float(weight.min()))}, " + (
        f"max {fmt(float(weight.max()))} (of 256)"
    )
    assert lines[2].startswith(
        f"grad ‖·‖ {fmt(float(torch.linalg.vector_norm(net[2].weight.grad)))}"
    )
    bias = leaves["4.bias"]  # one number: shown as the node's data and grad
    assert bias.data == float(net[4].bias.detach()) and bias.grad == float(net[4].bias.grad)
    ops = [n.label for n in d.nodes if n.kind == "op"]
    assert ops.count("addmm") == 3 and ops.count("tanh") == 2 and "sigmoid" in ops
    assert d.nodes[-1].label == "loss" and d.nodes[-1].role == "output"
    # each layer in a box of its module: its parameters, the view of its weight, its addmm
    assert sorted(d.clusters) == ["0", "2", "4"]
    boxed = {n.cluster for n in d.nodes if n.kind == "op" and n.label == "addmm"}
    assert boxed == {"0", "2", "4"}
    assert all(n.cluster is None for n in d.nodes if n.label in ("tanh", "sigmoid", "mean"))
    # inputs before their consumers: every edge goes forward in node order
    position = {n.id: i for i, n in enumerate(d.nodes)}
    assert all(position[e.source] < position[e.target] for e in d.edges)


def test_before_backward_there_are_no_gradients_and_kept_outputs_show() -> None:
    _, loss = _mlp_loss(backward=False)
    d = diagram(loss)
    assert not d.has_grad and all(n.grad is None for n in d.nodes)
    # sigmoid and tanh keep their outputs for the backward pass: those are shown
    assert any(n.extra_lines and n.role == "intermediate" for n in d.nodes)


def test_small_tensors_in_full() -> None:
    assert describe(torch.tensor([1.0, -2.0, 0.5]), "data") == "data [1, -2, 0.5]"


@pytest.mark.parametrize(
    "t",
    [
        torch.full((8, 8), 3e30),  # its squares overflow float32: the norm is summed in float64
        torch.full((8, 8), 1e-30),  # and underflow it
        torch.linspace(-2, 5, 70).to(torch.float16),
        torch.arange(-30, 40),  # integers, and booleans: as float64
        torch.arange(12) % 3 == 0,
        torch.tensor([3.0, float("nan"), 1.0, 2.0, 0.0, 4.0, 5.0]),
        torch.tensor([float("inf"), -1.0, 1.0, 2.0, 0.0, 4.0, 5.0]),
    ],
)
def test_a_summary_is_the_float64_one_and_gives_the_norm(t) -> None:
    """`summary` reads min, max and ‖·‖₂ without a float64 copy: the same text as the
    float64 copy gives, and the norm (rms comes from it) to the last digit shown."""
    from gradviz.torch.graph import summary, summary_rms

    wide = t.to(torch.float64).reshape(-1)
    norm = math.sqrt(math.fsum(v * v for v in wide.tolist()))  # (nan, inf: as they are)
    text, got = summary(t, "grad")
    low, high = float(wide.min()), float(wide.max())
    assert text == f"grad ‖·‖ {fmt(norm)}, min {fmt(low)}, max {fmt(high)} (of {t.numel()})"
    assert fmt(got, 12) == fmt(norm, 12)
    assert fmt(summary_rms(t), 12) == fmt(norm / math.sqrt(t.numel()), 12)


def test_every_format_draws_it(tmp_path) -> None:
    net, loss = _mlp_loss()
    d = diagram(loss, net)
    assert "2.weight" in to_text(d, width=100)
    assert "flowchart" in to_mermaid(d)
    assert {n["id"] for n in json.loads(to_json(d))["nodes"]} == {n.id for n in d.nodes}
    svg = render(d, "svg")
    assert ET.fromstring(svg).tag.endswith("svg")
    assert render(d, "png").startswith(b"\x89PNG")
    page = render(d, "html").decode("utf-8")
    assert page.startswith("<!doctype html>") and "2.weight" in page
    assert "2.weight" in gradviz.draw(loss, names=net).source  # gradviz.draw, given a tensor


@needs_system_dot
def test_its_svg_is_laid_out_by_graphviz_pure_as_the_manuals_pictures(monkeypatch) -> None:
    """A PyTorch drawing's SVG (file, page, animation) goes to graphviz-pure first, about
    twice dot 2.43's speed on it (bench/README.md, issue 30); PNG and PDF to the system dot
    (the PNG needs its fonts' ▶ and ⅒); a GRADVIZ_DOT choice is respected."""
    net, loss = _mlp_loss()
    d = diagram(loss, net)
    assert d.level == "op" and layout_cost(d) < layout.PREFER_PURE_COST  # not for its size
    seen = []

    def fake_run(argv, data, timeout):
        seen.append(Path(argv[0]).name)
        return subprocess.CompletedProcess(argv, 0, b'<svg width="8pt" height="8pt"/>', b"")

    monkeypatch.delenv("GRADVIZ_DOT", raising=False)
    monkeypatch.setattr(layout, "_run_in_own_group", fake_run)
    for format_ in ("svg", "html", "png", "pdf"):
        render(d, format_)
    assert seen == ["graphviz-pure", "graphviz-pure", "dot", "dot"]
    monkeypatch.setenv("GRADVIZ_DOT", "system")
    seen.clear()
    render(d, "svg")
    assert seen == ["dot"]


def test_a_deep_graph_is_walked_without_recursion_and_capped() -> None:
    x = torch.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(3000):  # far past Python's recursion limit
        y = torch.sin(y)
    d = diagram(y, {"x": x}, limit=50)
    assert len([n for n in d.nodes if n.kind == "op"]) <= 50
    assert d.title is not None and "nearest the loss" in d.title and "limit" in d.title
    assert d.nodes[0].label == "…"
    full = diagram(y, {"x": x}, limit=10_000)
    assert full.title == NOT_KEPT and any(n.label == "x" for n in full.nodes)


@pytest.mark.parametrize(
    ("loss", "words"),
    [(lambda: torch.ones(3, requires_grad=True) * 2, "scalar loss"), (lambda: 3.0, "Tensor")],
)
def test_draw_refuses(loss, words: str) -> None:
    with pytest.raises(InputError, match=words):
        diagram(loss())


def test_drawing_a_value_never_imports_torch() -> None:
    code = (
        "import sys, gradviz; gradviz.draw(gradviz.parse('a*b', a=2, b=3)); "
        "print('torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def _stack(blocks: int):
    """An input layer, `blocks` identical Sequential blocks, a head; its loss after backward."""
    torch.manual_seed(0)
    nn = torch.nn

    def block():
        return nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU())

    net = nn.Sequential(nn.Linear(2, 8), nn.Sequential(*[block() for _ in range(blocks)]))
    net.append(nn.Linear(8, 1))
    loss = net(torch.randn(4, 2)).pow(2).mean()
    loss.backward()
    return net, loss


def _block_rms(net, block: str) -> float:
    grads = [
        p.grad.double().flatten() for n, p in net.named_parameters() if n.startswith(block + ".")
    ]
    flat = torch.cat(grads)
    return float((flat @ flat / flat.numel()) ** 0.5)


def test_repeated_blocks_are_drawn_once_and_counted() -> None:
    net, loss = _stack(12)
    full = diagram(loss, net, limit=10_000)  # (the graph is large: the repeats collapse)
    labels = {n.label for n in full.nodes}
    names = {name for name, _ in net.named_parameters()}
    # the first block, the input layer and the head in full; no parameter of a repeat
    assert {n for n in names if not n.startswith("1.") or n.startswith("1.0.")} <= labels
    assert not any(label.startswith(f"1.{k}.") for label in labels for k in range(1, 12))
    (box,) = [n for n in full.nodes if n.kind == "group"]
    assert box.label == "×11" and box.extra_lines[0] == "1.1…1.11: as 1.0, not drawn"
    # the gradient through the blocks: each block's parameters' grad rms, computed here
    through = [_block_rms(net, f"1.{k}") for k in range(12)]
    head, ramp, first, arrow, last = box.extra_lines[1].rsplit(" ", 4)
    assert head == "param grad rms 1.0…1.11:" and arrow == "→"
    assert (first, last) == (fmt(through[0]), fmt(through[-1])) and len(ramp) == 12
    assert ramp[through.index(min(through))] == "▁" and ramp[through.index(max(through))] == "█"
    assert full.title == f"blocks 1.1…1.11 repeat 1.0: one box ×11; {NOT_KEPT}"
    # one way through: the first block's last op into the box, the box into the head
    into = [e.source for e in full.edges if e.target == box.id]
    out = [e.target for e in full.edges if e.source == box.id]
    kinds = {n.id: n for n in full.nodes}
    assert len(into) == 1 and kinds[into[0]].cluster is None  # the first block's ReLU
    assert len(out) == 1 and kinds[out[0]].cluster == "2"  # the head's addmm
    # every drawn node still reaches the loss, and every edge joins drawn nodes
    ids = set(kinds)
    assert all(e.source in ids and e.target in ids for e in full.edges)
    reaches, frontier = {n.id for n in full.nodes if n.role == "output"}, True
    while frontier:
        more = {e.source for e in full.edges if e.target in reaches} - reaches
        reaches |= more
        frontier = bool(more)
    assert reaches == ids
    assert len(full.nodes) < COLLAPSE_AT


def test_a_small_stack_is_drawn_in_full() -> None:
    net, loss = _stack(2)
    d = diagram(loss, net)
    assert len(d.nodes) <= COLLAPSE_AT and d.title == NOT_KEPT
    assert not [n for n in d.nodes if n.kind == "group"]
    assert {name for name, _ in net.named_parameters()} <= {n.label for n in d.nodes}


def test_past_the_cap_the_repeats_collapsed_may_fit() -> None:
    """60 blocks are past the cap of 400 autograd nodes, but with the repeats as one box
    the whole graph fits: drawn whole, block 0 in full, no cap box."""
    net, loss = _stack(60)
    d = diagram(loss, net)
    labels = {n.label for n in d.nodes}
    assert {name for name, _ in net.named_parameters() if name.startswith("1.0.")} <= labels
    assert "0.weight" in labels and "2.weight" in labels
    assert [n.label for n in d.nodes if n.kind == "group"] == ["×59"]
    assert d.title == f"blocks 1.1…1.59 repeat 1.0: one box ×59; {NOT_KEPT}"


def test_under_the_cap_the_first_drawn_block_stands_for_the_repeats() -> None:
    """200 blocks do not fit even collapsed within 10 × the cap of 150: the nearest are
    walked, the earlier ones are the cap's box, and the collapse keeps the first block
    that was drawn (not block 0, which is not) and counts only the drawn repeats."""
    net, loss = _stack(200)
    d = diagram(loss, net, limit=150)
    labels = {n.label for n in d.nodes}
    (box,) = [n for n in d.nodes if n.label.startswith("×")]
    first = min(int(label.split(".")[1]) for label in labels if label.startswith("1."))
    assert first > 0 and not any(label.startswith("1.0.") for label in labels)
    assert box.label == f"×{199 - first}"
    assert box.extra_lines[0] == f"1.{first + 1}…1.199: as 1.{first}, not drawn"
    assert box.extra_lines[1].startswith(f"param grad rms 1.{first}…1.199: ")
    assert box.extra_lines[1].endswith(f" {fmt(_block_rms(net, '1.199'))}")
    assert d.title is not None and d.title.startswith("the 150 autograd nodes nearest the loss")
    assert d.title.endswith(
        f"blocks 1.{first + 1}…1.199 repeat 1.{first}: one box ×{199 - first}; {NOT_KEPT}"
    )
