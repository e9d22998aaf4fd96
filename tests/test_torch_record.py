"""gradviz.torch.record: every op's data and grad in the drawing, checked against tensors
the test takes itself (forward hooks and retain_grad(), and a forward pass written out by
hand), for the five models at both levels and in every format."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from graphviz_support import needs_system_dot
from torch_support import require_torch

torch = require_torch()

import gradviz.torch as gt  # noqa: E402
from gradviz.drawn import to_json, to_mermaid, to_text  # noqa: E402
from gradviz.errors import InputError  # noqa: E402
from gradviz.numbers import fmt  # noqa: E402
from gradviz.output import render  # noqa: E402
from gradviz.render.diagram import preferred_rankdir  # noqa: E402
from gradviz.torch.examples import MODELS  # noqa: E402
from gradviz.torch.graph import FRONTIER, NOT_KEPT, SHAPE_OPS, describe  # noqa: E402


def _rms(t) -> float:
    flat = t.detach().double().flatten()
    return float((flat @ flat / flat.numel()) ** 0.5)


def _hooked(make):
    """The model, its loss computed with each module's output kept by a forward hook
    (retain_grad), after backward: {path: output}, independent of gradviz."""
    net, loss_of = make()
    outputs: dict[str, torch.Tensor] = {}
    handles = []
    for name, module in net.named_modules():
        if not name:
            continue

        def hook(module, args, out, name=name):
            first = out[0] if isinstance(out, tuple) else out
            if first.requires_grad:
                first.retain_grad()
            outputs[name] = first

        handles.append(module.register_forward_hook(hook))
    return net, loss_of, outputs, handles


@pytest.mark.parametrize("name", list(MODELS))
def test_each_module_box_against_forward_hooks(name: str) -> None:
    net, loss_of, outputs, handles = _hooked(MODELS[name])
    with gt.record(net) as rec:
        loss = loss_of()
        loss.backward()
    for h in handles:
        h.remove()
    d = rec.diagram()
    assert d.level == "module" and d.has_grad
    boxes = {n.label.split(" ")[0]: n for n in d.nodes if n.id.startswith("m")}
    assert boxes, "no module box"
    for path, box in boxes.items():
        out = outputs[path]
        shape = "×".join(map(str, out.shape))
        assert box.extra_lines[0].split(" → ")[1].split(" (+")[0] == shape
        if out.grad is not None:
            assert f"grad rms {fmt(_rms(out.grad))}" in box.extra_lines
            assert box.grad_rms == pytest.approx(_rms(out.grad), rel=1e-12)
        params = [p for n, p in net.named_parameters() if n.startswith(path + ".")]
        if params:
            flat = torch.cat([p.grad.flatten() for p in params])
            said = f"params {sum(p.numel() for p in params):,}, grad rms {fmt(_rms(flat))}"
            assert said in box.extra_lines
    (out_node,) = [n for n in d.nodes if n.role == "output"]
    assert out_node.data == float(loss.detach()) and out_node.grad == 1.0
    # no empty boxes: every node says something beyond its name
    assert all(n.extra_lines or n.data is not None or n.kind == "op" for n in d.nodes)
    assert NOT_KEPT not in (d.title or "")


def _hand_mlp():
    """A 2-16-1 tanh MLP written out op by op, every intermediate retained."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    x = torch.randn(5, 2)
    w0, b0, w1, b1 = net[0].weight, net[0].bias, net[2].weight, net[2].bias
    h = torch.addmm(b0, x, w0.t())
    a = torch.tanh(h)
    o = torch.addmm(b1, a, w1.t())
    sq = o.pow(2)
    loss = sq.mean()
    for t in (h, a, o, sq):
        t.retain_grad()
    loss.backward()
    return net, x, [h, a, o, sq], loss


def test_every_op_of_an_mlp_against_a_forward_written_by_hand() -> None:
    ref_net, x, steps, ref_loss = _hand_mlp()
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    with gt.record(net) as rec:
        loss = net(x).pow(2).mean()
        loss.backward()
    d = rec.diagram(level="op")
    values = [n for n in d.nodes if n.role == "intermediate"]
    assert [n.op for n in values] == ["addmm", "tanh", "addmm", "pow"]
    for node, ref in zip(values, steps, strict=True):
        shape = "shape " + "×".join(map(str, ref.shape))
        assert node.extra_lines == (shape, describe(ref, "data"), describe(ref.grad, "grad"))
        assert node.grad_rms == pytest.approx(_rms(ref.grad), rel=1e-12)
    (out,) = [n for n in d.nodes if n.role == "output"]
    assert out.data == float(ref_loss.detach()) and out.grad == 1.0
    # the transposes of the weights are not nodes: written on the edge into addmm, with
    # their shape (a weight's view has the weight's version, which init changed: it was
    # called changed since, its alias's counter being its own)
    assert [e.label for e in d.edges if e.label] == ["t 2×16", "t 16×1"]
    assert "t" not in {n.label for n in d.nodes}
    for name in ("0.weight", "2.bias"):
        leaf = next(n for n in d.nodes if n.label == name)
        grad = dict(ref_net.named_parameters())[name].grad
        assert describe(grad, "grad") in leaf.extra_lines or leaf.grad == float(grad)


@pytest.mark.parametrize("name", list(MODELS))
def test_op_level_values_are_module_outputs_where_a_module_ends(name: str) -> None:
    """At the op level, the op that made a module's output shows that output's data and
    grad (the hooks' tensors); every result shown has a grad line or number."""
    net, loss_of, outputs, handles = _hooked(MODELS[name])
    with gt.record(net) as rec:
        loss_of().backward()
    for h in handles:
        h.remove()
    d = rec.diagram(level="op")
    lines = {line for n in d.nodes for line in n.extra_lines}
    checked = 0
    for out in outputs.values():
        if (
            out.grad is not None
            and out.numel() > 1
            and out.grad_fn.name()
            not in (
                "ViewBackward0",
                "UnsafeViewBackward0",
            )
        ):
            assert describe(out, "data") in lines and describe(out.grad, "grad") in lines
            checked += 1
    assert checked >= 1
    for n in d.nodes:
        if n.role == "intermediate":
            assert n.grad is not None or any(line.startswith("grad ") for line in n.extra_lines)


def test_without_a_recording_the_picture_says_once_values_were_not_kept() -> None:
    net, loss_of = MODELS["mlp"]()
    loss = loss_of()
    loss.backward()
    d = gt.diagram(loss, net)
    assert d.title.count("not kept") == 1 and NOT_KEPT in d.caption
    # no empty boxes: an op whose result is unknown is drawn as the op alone
    assert all(n.extra_lines or n.data is not None for n in d.nodes if n.kind == "value")
    with pytest.raises(InputError, match="needs a recording"):
        gt.diagram(loss, net, level="module")


def test_the_frontier_is_where_the_gradient_first_falls_below_a_tenth() -> None:
    net, loss_of, outputs, handles = _hooked(MODELS["deep"])
    with gt.record(net) as rec:
        loss_of().backward()
    for h in handles:
        h.remove()
    d = rec.diagram()
    reference = _rms(outputs["20"].grad)  # the model's output: the last Linear's
    expected = next(
        str(k) for k in range(20, -1, -1) if _rms(outputs[str(k)].grad) < 0.1 * reference
    )
    (marked,) = [n for n in d.nodes if FRONTIER in n.extra_lines]
    assert marked.label.split(" ")[0] == expected
    assert any(line.startswith("▶ frontier: " + marked.label) for line in d.caption)


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("level", ["module", "op"])
def test_every_format_draws_the_five_models(name: str, level: str) -> None:
    net, loss_of = MODELS[name]()
    with gt.record(net) as rec:
        loss_of().backward()
    d = rec.diagram(level=level)
    assert "loss" in to_text(d, width=100)
    assert to_mermaid(d).startswith("---") or "flowchart" in to_mermaid(d)
    assert {n["id"] for n in json.loads(to_json(d))["nodes"]} == {n.id for n in d.nodes}
    svg = render(d, "svg", rankdir=preferred_rankdir(d))
    assert ET.fromstring(svg).tag.endswith("svg")


def test_draw_refuses_bad_options() -> None:
    net, loss_of = MODELS["mlp"]()
    with gt.record(net) as rec:
        loss_of().backward()
    with pytest.raises(InputError, match="unknown level"):
        rec.diagram(level="neuron")
    with pytest.raises(InputError, match="depth"):
        rec.diagram(depth=0)
    with pytest.raises(InputError, match="Module"), gt.record("net"):
        pass


def test_depth_one_draws_the_transformer_layer_as_one_box() -> None:
    net, loss_of = MODELS["transformer"]()
    with gt.record(net) as rec:
        loss_of().backward()
    boxes = [n.label for n in rec.diagram(depth=1).nodes if n.id.startswith("m")]
    assert boxes == ["0 TransformerEncoderLayer", "1 Flatten", "2 Linear"]
    deeper = [n.label for n in rec.diagram().nodes if n.id.startswith("m")]
    assert "0.self_attn MultiheadAttention" in deeper and "0.norm2 LayerNorm" in deeper


def test_saved_for_backward_bytes_on_hover() -> None:
    net, loss_of = MODELS["mlp"]()
    with gt.record(net) as rec:
        loss_of().backward()
    tanh = next(n for n in rec.diagram(level="op").nodes if n.op == "tanh")
    # tanh saves its 8×16 float32 result: 512 bytes
    assert "saved for backward: 512 B" in tanh.detail


def test_repeated_blocks_collapse_with_their_gradient_through_them() -> None:
    """12 identical blocks: the module view draws block 0's modules and one box ×11 whose
    strip ends with the rms of ∂loss/∂(block output) of the first and the last block (each
    block's output kept by a forward hook here)."""
    torch.manual_seed(0)
    nn = torch.nn

    def block():
        return nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU())

    net = nn.Sequential(nn.Linear(2, 8), nn.Sequential(*[block() for _ in range(12)]))
    net.append(nn.Linear(8, 1))
    x = torch.randn(4, 2)
    outputs = {}

    def keep(module, args, out, k):
        out.retain_grad()
        outputs[k] = out

    handles = [
        net[1][k].register_forward_hook(lambda m, a, o, k=k: keep(m, a, o, k)) for k in range(12)
    ]
    with gt.record(net) as rec:
        net(x).pow(2).mean().backward()
    for h in handles:
        h.remove()
    d = rec.diagram()
    (box,) = [n for n in d.nodes if n.label.startswith("×")]
    assert box.label == "×11 Sequential"
    assert box.extra_lines[0] == "1.1…1.11: as 1.0, not drawn"
    through = [_rms(outputs[k].grad) for k in range(12)]
    head, ramp, first, arrow, last = box.extra_lines[1].rsplit(" ", 4)
    assert head == "grad rms 1.0…1.11:" and len(ramp) == 12 and arrow == "→"
    assert (first, last) == (fmt(through[0]), fmt(through[-1]))
    assert box.grad_rms == pytest.approx(through[-1], rel=1e-12)
    labels = {n.label.split(" ")[0] for n in d.nodes}
    assert {"1.0.0", "1.0.3", "0", "2"} <= labels
    assert not any(label.startswith(f"1.{k}.") for label in labels for k in range(1, 12))
    # one way through: block 0's last module into the box, the box into the head
    assert [e.source for e in d.edges if e.target == box.id] == [
        next(n.id for n in d.nodes if n.label == "1.0.3 ReLU")
    ]
    assert [e.target for e in d.edges if e.source == box.id] == [
        next(n.id for n in d.nodes if n.label == "2 Linear")
    ]


def test_attention_ops_sit_in_the_self_attn_frame() -> None:
    """Every op multi-head attention runs (its projections, the attention itself) is drawn
    in the frame of `0.self_attn`, the module it ran in; the residual adds and the relu of
    the layer's own forward in the layer's frame `0`; the loss outside every frame."""
    net, loss_of = MODELS["transformer"]()
    with gt.record(net) as rec:
        loss_of().backward()
    d = rec.diagram(level="op")
    attention = [n for n in d.nodes if n.op and "attention" in n.op]
    assert attention and all(n.cluster == "0.self_attn" for n in attention)
    assert {n.cluster for n in d.nodes if n.op == "relu"} == {"0"}
    assert [n.cluster for n in d.nodes if n.op == "add" and n.cluster != "0.self_attn"] == [
        "0",
        "0",
    ]
    assert next(n for n in d.nodes if n.op == "log_softmax").cluster is None
    # the JSON carries each node's grad rms (a tensor's colour) as the diagram has it
    document = json.loads(to_json(d))
    for entry, node in zip(document["nodes"], d.nodes, strict=True):
        assert entry.get("grad_rms") == node.grad_rms


@pytest.mark.parametrize("name", list(MODELS))
def test_every_parameter_at_the_op_level_against_its_own_grad(name: str) -> None:
    """Each parameter's node shows its data and PyTorch's own .grad (read here)."""
    net, loss_of = MODELS[name]()
    with gt.record(net) as rec:
        loss_of().backward()
    d = rec.diagram(level="op")
    leaves = {n.label: n for n in d.nodes if n.role == "input"}
    assert set(leaves) == {n for n, p in net.named_parameters() if p.grad is not None}
    for pname, p in net.named_parameters():
        node = leaves[pname]
        if p.numel() == 1:
            assert (node.data, node.grad) == (float(p.detach()), float(p.grad))
        else:
            assert describe(p, "data") in node.extra_lines
            assert describe(p.grad, "grad") in node.extra_lines
            assert node.grad_rms == pytest.approx(_rms(p.grad), rel=1e-12)


def _vit():
    """A tiny ViT: 4×4 patches of an 8×8 image, a class token, one pre-norm encoder layer."""
    torch.manual_seed(0)
    nn = torch.nn

    class ViT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.patch = nn.Conv2d(3, 16, 4, stride=4)
            self.cls = nn.Parameter(torch.zeros(1, 1, 16))
            self.pos = nn.Parameter(torch.randn(1, 5, 16) * 0.02)
            layer = nn.TransformerEncoderLayer(
                16, 2, 32, dropout=0.0, batch_first=True, norm_first=True
            )
            self.enc = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
            self.head = nn.Linear(16, 3)

        def forward(self, x):
            p = self.patch(x).flatten(2).transpose(1, 2)
            tokens = torch.cat([self.cls.expand(x.shape[0], -1, -1), p], 1) + self.pos
            return self.head(self.enc(tokens)[:, 0])

    net = ViT()
    x, y = torch.randn(8, 3, 8, 8), torch.randint(0, 3, (8,))
    return net, lambda: torch.nn.functional.cross_entropy(net(x), y)


@pytest.mark.parametrize("program", [pytest.param("system", marks=needs_system_dot), "pure"])
def test_a_vit_op_view_is_drawn_by_either_dot(program: str, monkeypatch) -> None:
    """A ViT's op view has a path that leaves the encoder layer's frame and comes back (its
    relu, then linear2's frame, then its residual add): both programs refused it ("lost n60
    n64 edge"). It is drawn now, every edge of the diagram an edge of the SVG."""
    net, loss_of = _vit()
    with gt.record(net) as rec:
        loss_of().backward()
    d = rec.diagram(level="op")
    layer = "enc.layers.0"
    assert {n.cluster for n in d.nodes if n.op == "relu"} == {layer}
    assert "enc.layers.0.linear2" in d.clusters
    monkeypatch.setenv("GRADVIZ_DOT", program)
    svg = ET.fromstring(render(d, "svg"))
    drawn = [g for g in svg.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "edge"]
    assert len(drawn) == len(d.edges)


def test_a_checkpointed_block_is_drawn_once_with_its_forward_values() -> None:
    """torch.utils.checkpoint (non-reentrant) recomputes the block in backward(), under
    hooks that unpack each saved tensor once: the recording neither unpacks them (it
    raised "dictionary changed size during iteration", then checkpoint's own error) nor
    records the recomputation. Each op shows the forward's value and its gradient, as a
    forward hook (its first call) and retain_grad() see them; each module once."""
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    nn = torch.nn
    net = nn.ModuleDict({"blk": nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8))})
    x = torch.randn(4, 8)
    outputs = {}

    def keep(module, args, out, name):
        if name not in outputs:  # (the second call is checkpoint's recomputation)
            out.retain_grad()
            outputs[name] = out

    handles = [
        net.blk[k].register_forward_hook(lambda m, a, o, k=k: keep(m, a, o, f"blk.{k}"))
        for k in range(3)
    ]
    with gt.record(net) as rec:
        checkpoint(net.blk, x, use_reentrant=False).pow(2).mean().backward()
    for h in handles:
        h.remove()
    assert [c.path for c in rec.calls] == ["blk", "blk.0", "blk.1", "blk.2"]
    ops = rec.diagram(level="op").nodes
    for op, name in (("relu", "blk.1"), ("addmm", "blk.0"), ("addmm", "blk.2")):
        (node,) = [n for n in ops if n.op == op and n.cluster == name]
        assert describe(outputs[name], "data") in node.extra_lines
        assert describe(outputs[name].grad, "grad") in node.extra_lines
        assert "saved for backward" not in node.detail  # (checkpoint's: not unpacked)
    boxes = [n.label for n in rec.diagram().nodes if n.id.startswith("m")]
    assert boxes == ["blk.0 Linear", "blk.1 ReLU", "blk.2 Linear"]


def test_a_reentrant_checkpoint_is_one_node_naming_what_it_hides() -> None:
    """checkpoint(use_reentrant=True) runs the block with gradients off: autograd's graph
    has one CheckpointFunctionBackward node for it and none of its 144 parameters. The
    node shows the block's output and ∂loss/∂output (as retain_grad() sees them) and says
    what it hides; the module view draws the block as its box; every leaf the text's table
    says is "(above)" is in the tree above (the ops under a node with no value were cut)."""
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    nn = torch.nn
    net = nn.ModuleDict(
        {
            "inp": nn.Linear(6, 8),
            "blk": nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh()),
            "head": nn.Linear(8, 3),
        }
    )
    x, y = torch.randn(8, 6), torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    with gt.record(net) as rec:
        h = checkpoint(net.blk, torch.relu(net.inp(x)), use_reentrant=True)
        h.retain_grad()
        torch.nn.functional.cross_entropy(net.head(h), y).backward()
    count = sum(p.numel() for p in net.blk.parameters())
    assert count == 144
    d = rec.diagram(level="op")
    said = f"checkpointed: blk ({count} parameters), recomputed in backward"
    (node,) = [n for n in d.nodes if said in n.extra_lines]
    assert describe(h, "data") in node.extra_lines
    assert describe(h.grad, "grad") in node.extra_lines
    assert NOT_KEPT not in (d.title or "")
    tree, table = to_text(d, width=200).split("\nleaf ")
    for name in ("inp.weight", "inp.bias", "head.weight", "head.bias"):
        assert name in tree and f"{name} " in table
    blk_grads = torch.cat([p.grad.flatten() for p in net.blk.parameters()])
    (box,) = [n for n in rec.diagram().nodes if n.label == "blk Sequential"]
    assert f"params 144, grad rms {fmt(_rms(blk_grads))}" in box.extra_lines
    assert "checkpointed: recomputed in backward" in box.extra_lines


def test_a_recording_says_which_results_it_could_not_keep_and_why() -> None:
    """A GRU cell on the CPU adds its gates in place, then applies sigmoid_ / tanh_ to the
    sums (and mul_ then add_): those results are gone before backward. The title says how
    many, of which ops, and why: the ops whose result an in-place op overwrote, found here
    by watching them; it does not tell the user to record what is already a recording."""
    from torch.utils._python_dispatch import TorchDispatchMode

    writer: dict[int, tuple[str, torch.Tensor]] = {}  # id -> the op that last wrote it
    changed: list[str] = []  # the ops whose result an in-place op then overwrote

    class InPlace(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func._schema.name.split("::")[-1]
            if name.endswith("_") and id(args[0]) in writer:
                changed.append(writer[id(args[0])][0])
            out = func(*args, **(kwargs or {}))
            for t in out if isinstance(out, tuple | list) else (out,):
                if isinstance(t, torch.Tensor):  # (the tensor kept: its id is not reused)
                    writer[id(t)] = (name.rstrip("_"), t)
            return out

    torch.manual_seed(0)
    nn = torch.nn
    net = nn.ModuleDict({"gru": nn.GRU(3, 4, batch_first=True), "head": nn.Linear(4, 2)})
    x, y = torch.randn(2, 3, 3), torch.tensor([0, 1])
    with InPlace():  # (a run of its own, the same ops)
        net.gru(x)
    with gt.record(net) as rec:
        out, _ = net.gru(x)
        torch.nn.functional.cross_entropy(net.head(out[:, -1]), y).backward()
    d = rec.diagram(level="op")
    unknown = sorted(n.op for n in d.nodes if n.kind == "op")
    drawn = sorted(op for op in changed if op not in SHAPE_OPS)  # (shape ops: on edges)
    assert unknown == drawn and {"add", "mul", "sub"} <= set(drawn)
    title = d.title or ""
    assert f"not kept: {len(drawn)} results changed in place by a later op (" in title
    assert NOT_KEPT not in title and "gradviz.torch.record" not in title


def test_a_result_changed_in_place_later_in_the_same_module_is_never_drawn_changed() -> None:
    """Inside one module's forward, x·w then add_(1), then ·2 then tanh_: the two products
    are overwritten (not kept, and said so), the sum and the tanh are drawn as computed
    here. The kept tensor was a detached alias made inside the dispatch, whose version
    counter was its own: the first product was drawn as the sum, the second as its tanh,
    and the add_ and tanh_ results were called changed."""
    nn = torch.nn

    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(torch.tensor([0.5, -1.0, 2.0]))

        def forward(self, x):
            a = x * self.w
            a.add_(1.0)
            b = a * 2.0
            b.tanh_()
            return b.sum()

    net, x = M(), torch.tensor([1.0, 2.0, 3.0])
    with gt.record(net) as rec:
        net(x).backward()
    d = rec.diagram(level="op")
    total = x * net.w.detach() + 1.0
    shown = {n.op: n.extra_lines for n in d.nodes if n.kind == "value" and n.op}
    assert describe(total, "data") in shown["add"]
    assert describe(torch.tanh(total * 2.0), "data") in shown["tanh"]
    assert sorted(n.op for n in d.nodes if n.kind == "op") == ["mul", "mul"]
    assert "not kept: 2 results changed in place by a later op (mul)" in (d.title or "")
