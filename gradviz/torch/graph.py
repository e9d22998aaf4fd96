"""Draw a PyTorch computation: the autograd graph behind a scalar loss, as gradviz's
drawing model (`gradviz.render.diagram.Diagram`), so every gradviz format draws it: the
terminal tree, DOT/SVG/PNG, Mermaid, JSON and a static HTML page (`gradviz.output.render`).

One op node per autograd node (`addmm`, `sigmoid`, `mse_loss`…) and one value node per
leaf tensor (a parameter named by its module path when the model is given, `net.0.weight`),
each labelled with its shape and data: the value of a scalar, the values of a small
tensor, a summary (‖·‖, min, max) of a larger one; after `backward()`, its gradient in the
same form. An op's own output is shown when autograd kept it (sigmoid, tanh, exp keep
their result). The walk is iterative (no recursion limit) and in a fixed order, so the
same graph gives the same text.

A graph of more than `COLLAPSE_AT` nodes drawn with its model has each run of repeated
blocks (consecutive children of a container with the same structure and sizes, such as a
stack of identical `nn.Sequential` blocks) drawn as its first block in full and the
repeats as one box `×N`; a graph larger than `limit` nodes is cut to the `limit` nodes
nearest the loss, the rest drawn as one box, unless its repeats collapsed make it fit
(walked up to `WIDE` × `limit` nodes). The diagram's title says either.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

import torch
from torch import nn

from gradviz.errors import InputError
from gradviz.notebook import draw as draw_diagram
from gradviz.numbers import fmt
from gradviz.render.diagram import Diagram, Edge, Node, preferred_rankdir

if TYPE_CHECKING:
    import graphviz

DRAW_LIMIT = 400  # nodes drawn (ops and leaves); beyond, the ones nearest the loss
COLLAPSE_AT = 150  # nodes: a larger graph has its repeated blocks drawn once and `×N`
WIDE = 10  # past the cap, a model with repeats is walked this many times further
SMALL = 6  # a tensor of at most this many numbers is shown in full
_BACKWARD = re.compile(r"Backward\d*$")

Names = nn.Module | Mapping[str, torch.Tensor] | None


def _op_name(fn: object) -> str:
    """`AddmmBackward0` → `addmm`, `MseLossBackward0` → `mse_loss`."""
    name = _BACKWARD.sub("", type(fn).__name__) or type(fn).__name__
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _shape(t: torch.Tensor) -> str:
    return "shape " + ("×".join(str(n) for n in t.shape) if t.dim() else "()")


def describe(t: torch.Tensor, what: str) -> str:
    """`data [0.1, -2, 3]` for a small tensor, `data ‖·‖ 3.2, min -1, max 2 (of 64)` beyond."""
    values = t.detach().to(torch.float64).reshape(-1)
    if values.numel() <= SMALL:
        return f"{what} [{', '.join(fmt(v) for v in values.tolist())}]"
    norm = float(torch.linalg.vector_norm(values))
    low, high = float(values.min()), float(values.max())
    return f"{what} ‖·‖ {fmt(norm)}, min {fmt(low)}, max {fmt(high)} (of {values.numel()})"


def _numbers(t: torch.Tensor | None, what: str) -> tuple[float | None, list[str]]:
    """A scalar as the node's number; a tensor as lines of text under it."""
    if t is None:
        return None, []
    if t.numel() == 1:
        return float(t.detach().reshape(())), []
    return None, [describe(t, what)]


def _parameter_names(names: Names) -> dict[int, str]:
    if names is None:
        return {}
    if isinstance(names, nn.Module):
        named = names.named_parameters()
    elif isinstance(names, Mapping):
        named = names.items()
    else:
        raise InputError(
            f"names: expected a module or a mapping of names to tensors, got {names!r}"
        )
    return {id(tensor): name for name, tensor in named}


def _walk(root: object, limit: int) -> tuple[list[object], bool]:
    """The autograd nodes `root` depends on (at most `limit`, nearest first), in an order
    where every node comes after its inputs; and whether any were left out."""
    kept: set[object] = set()
    queue = deque([root])
    while queue and len(kept) < limit:
        fn = queue.popleft()
        if fn in kept:
            continue
        kept.add(fn)
        queue.extend(child for child, _ in fn.next_functions if child is not None)
    cut = any(child not in kept for fn in kept for child, _ in fn.next_functions if child)
    order: list[object] = []
    done: set[object] = set()
    stack: list[tuple[object, bool]] = [(root, False)]
    while stack:
        fn, expanded = stack.pop()
        if expanded:
            order.append(fn)
            continue
        if fn in done:
            continue
        done.add(fn)
        stack.append((fn, True))
        children = [c for c, _ in fn.next_functions if c is not None and c in kept]
        stack.extend((c, False) for c in reversed(children) if c not in done)
    return order, cut


def _saved_result(fn: object) -> torch.Tensor | None:
    """The output autograd kept for the backward pass (sigmoid, tanh, exp), if any: gone
    after `backward()` unless it was called with retain_graph=True."""
    try:
        saved = getattr(fn, "_saved_result", None)
    except RuntimeError:  # freed by backward()
        return None
    return saved if isinstance(saved, torch.Tensor) else None


def diagram(loss: torch.Tensor, names: Names = None, *, limit: int = DRAW_LIMIT) -> Diagram:
    """The autograd graph of the scalar `loss` (see the module's docstring). `names`: the
    model (its parameters are named by module path) or a mapping of names to tensors."""
    if not isinstance(loss, torch.Tensor):
        raise InputError(f"draw: expected a torch.Tensor, got {type(loss).__name__}")
    if loss.numel() != 1:
        raise InputError(
            f"draw: walks back from a scalar loss; this tensor has {_shape(loss)} "
            "(take .sum() or .mean() first)"
        )
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InputError(f"draw: limit must be a whole number ≥ 1, got {limit!r}")
    labels = _parameter_names(names)
    root = loss.grad_fn
    value, _ = _numbers(loss, "data")
    if root is None:  # a leaf: one node
        node = Node("n0", "value", "loss", data=value, role="output")
        return Diagram((node,), (), has_grad=False)
    order, cut = _walk(root, limit)
    if cut and isinstance(names, nn.Module) and _repeats(names):
        # the repeats may make the whole graph fit: walk it, collapse, and keep that if
        # it is no larger than what the cap draws
        wide_order, wide_cut = _walk(root, WIDE * limit)
        if not wide_cut:
            wide = _build(loss, root, wide_order, False, labels, names)
            if len(wide.nodes) <= 2 * limit:  # (an op is two nodes, its op and its value)
                return wide
    return _build(loss, root, order, cut, labels, names)


def _build(
    loss: torch.Tensor,
    root: object,
    order: list[object],
    cut: bool,
    labels: dict[int, str],
    names: Names,
) -> Diagram:
    """The diagram of the walked autograd nodes `order` (`cut`: some were left out)."""
    ids = {fn: f"n{i}" for i, fn in enumerate(order)}
    leaves = [fn for fn in order if hasattr(fn, "variable")]
    backward_done = any(fn.variable.grad is not None for fn in leaves)
    nodes: list[Node] = []
    edges: list[Edge] = []
    more_id = f"n{len(order)}"
    hidden = 0
    for fn in order:
        vid = ids[fn]
        if hasattr(fn, "variable"):  # AccumulateGrad: a leaf tensor that wants a gradient
            tensor = fn.variable
            data, lines = _numbers(tensor, "data")
            grad, grad_lines = _numbers(tensor.grad, "grad") if backward_done else (None, [])
            name = labels.get(id(tensor), "")
            nodes.append(
                Node(
                    vid,
                    "value",
                    name,
                    data=data,
                    grad=grad,
                    detail=f"{name or 'leaf'}: {type(tensor).__name__} {_shape(tensor)}",
                    extra_lines=(_shape(tensor), *lines, *grad_lines),
                    role="input",
                )
            )
            continue
        op = _op_name(fn)
        oid = f"{vid}_op"
        nodes.append(Node(oid, "op", op, detail=type(fn).__name__, op=op, role="op"))
        for index, (child, _) in enumerate(fn.next_functions):
            if child is None:
                continue
            if child in ids:
                edges.append(Edge(ids[child], oid, index=index))
            else:
                hidden += 1
                edges.append(Edge(more_id, oid, index=index))
        edges.append(Edge(oid, vid))
        is_root = fn is root
        saved = _saved_result(fn)
        shown = loss if is_root else saved
        data, lines = _numbers(shown, "data")
        if is_root:
            grad = 1.0 if backward_done else None
            extra: tuple[str, ...] = ()
        else:
            grad, extra = None, (*([_shape(shown)] if shown is not None else []), *lines)
        nodes.append(
            Node(
                vid,
                "value",
                "loss" if is_root else "",
                data=data,
                grad=grad,
                detail=f"the output of {type(fn).__name__}",
                extra_lines=extra,
                op=op,
                role="output" if is_root else "intermediate",
            )
        )
    diagram_nodes = _module_boxes(nodes, edges)
    notes = []
    if isinstance(names, nn.Module) and len(diagram_nodes) > COLLAPSE_AT:
        for k, blocks in enumerate(_repeats(names)):
            collapsed = _collapse(diagram_nodes, edges, blocks, f"r{k}")
            if collapsed is not None:
                diagram_nodes, edges, first, repeats = collapsed
                notes.append(
                    f"blocks {repeats[0]}…{repeats[-1]} repeat {first}: one box ×{len(repeats)}"
                )
    title = "; ".join(notes) or None
    if cut:
        diagram_nodes.insert(
            0, Node(more_id, "group", "…", extra_lines=("earlier nodes, not drawn",), role="group")
        )
        title = "; ".join(
            [
                f"the {len(order)} autograd nodes nearest the loss; the earlier ones are one "
                "box (draw(loss, limit=N) draws more)",
                *notes,
            ]
        )
    return Diagram(tuple(diagram_nodes), tuple(edges), has_grad=backward_done, title=title)


def _repeats(model: nn.Module) -> list[list[str]]:
    """Runs of two or more consecutive children of a container that are the same block
    (the same modules and sizes: the same repr) and hold parameters, outermost first, none
    inside another: their names."""
    runs: list[list[str]] = []
    inside: list[str] = []
    for prefix, module in model.named_modules():
        if any(prefix == r or prefix.startswith(r + ".") for r in inside):
            continue
        children = [
            (f"{prefix}.{name}" if prefix else name, child)
            for name, child in module.named_children()
        ]
        i = 0
        while i < len(children):
            j = i + 1
            shape = repr(children[i][1])
            while j < len(children) and repr(children[j][1]) == shape:
                j += 1
            if j - i >= 2 and any(True for _ in children[i][1].parameters()):
                runs.append([name for name, _ in children[i:j]])
                inside += [name for name, _ in children[i:j]]
            i = j
    return runs


def _collapse(
    nodes: list[Node], edges: list[Edge], blocks: list[str], box_id: str
) -> tuple[list[Node], list[Edge], str, list[str]] | None:
    """The first of `blocks` drawn (the cap may have left out earlier ones) kept, and the
    nodes of the later ones as one box: those that depend on their parameters but not on
    a parameter used after them (nor the loss); with the names of the first and of the
    repeats. None when fewer than two of the blocks have a parameter drawn."""
    targets: dict[str, list[str]] = {}
    for edge in edges:
        targets.setdefault(edge.source, []).append(edge.target)

    def downstream(start: set[str]) -> set[str]:
        seen, stack = set(start), list(start)
        while stack:
            for t in targets.get(stack.pop(), []):
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        return seen

    def within(label: str, blocks: list[str]) -> bool:
        return any(label.startswith(b + ".") for b in blocks)

    params = [n for n in nodes if n.role == "input"]
    drawn = [b for b in blocks if any(within(n.label, [b]) for n in params)]
    if len(drawn) < 2:
        return None
    first, repeats = drawn[0], drawn[1:]
    mine = {n.id for n in params if within(n.label, repeats)}
    region = downstream(mine)
    used = {t for p in mine for t in targets.get(p, [])}
    for n in params:  # a parameter used after the repeats: it and what follows stay drawn
        if n.id not in mine and not within(n.label, [first]):
            after = downstream({n.id})
            if not after & used:
                region -= after
    region -= {n.id for n in nodes if n.role == "output"}
    box = Node(
        box_id,
        "group",
        f"×{len(repeats)}",
        extra_lines=(f"{repeats[0]}…{repeats[-1]}: as {first}, not drawn",),
        role="group",
    )
    kept = [n for n in nodes if n.id not in region]
    at = next((i for i, n in enumerate(nodes) if n.id in region), len(kept))
    kept.insert(min(at, len(kept)), box)
    new_edges: list[Edge] = []
    seen: set[tuple[str, str]] = set()
    for edge in edges:
        source = box_id if edge.source in region else edge.source
        target = box_id if edge.target in region else edge.target
        if source == target == box_id or (source, target) in seen:
            continue
        seen.add((source, target))
        new_edges.append(replace(edge, source=source, target=target))
    return kept, new_edges, first, repeats


def _module_boxes(nodes: list[Node], edges: list[Edge]) -> list[Node]:
    """Each named parameter in a box of its module (`net.0.weight` in `net.0`), with the
    views of one parameter (`t` of the weight) and the ops that combine that module's
    parameters with what comes in (`addmm`), and what those ops make: a layer drawn as one
    box. Activations between layers stay outside."""
    inputs: dict[str, list[str]] = {}
    for edge in edges:
        inputs.setdefault(edge.target, []).append(edge.source)
    box: dict[str, str] = {}
    parameter_only: set[str] = set()
    for node in nodes:  # (in graph order: every input before its consumers)
        if node.role == "input" and "." in node.label:
            box[node.id] = node.label.rsplit(".", 1)[0]
            parameter_only.add(node.id)
            continue
        if node.kind == "value" and node.id + "_op" in box:  # an op's result: its box
            box[node.id] = box[node.id + "_op"]
            if node.id + "_op" in parameter_only:
                parameter_only.add(node.id)
            continue
        if node.kind != "op":
            continue
        sources = inputs.get(node.id, [])
        owners = {box[s] for s in sources if s in parameter_only}
        if len(owners) == 1:
            box[node.id] = owners.pop()
            if len(sources) == 1:  # a view of one parameter (`t`, `view`): still its own
                parameter_only.add(node.id)
    return [replace(n, cluster=box[n.id]) if n.id in box else n for n in nodes]


def draw(
    loss: torch.Tensor,
    names: Names = None,
    *,
    limit: int = DRAW_LIMIT,
    rankdir: str | None = None,
) -> graphviz.Digraph:
    """A `graphviz.Digraph` of `loss`'s autograd graph, as `gradviz.draw` gives for a
    Value: shown inline in Jupyter, `.render()` writes files (no system Graphviz needed).
    `rankdir` as gradviz chooses it when not given (a deep graph reads top to bottom)."""
    drawn = diagram(loss, names, limit=limit)
    return draw_diagram(drawn, rankdir=rankdir or preferred_rankdir(drawn))
