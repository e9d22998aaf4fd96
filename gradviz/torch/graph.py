"""Draw a PyTorch computation: the autograd graph behind a scalar loss, as gradviz's
drawing model (`gradviz.render.diagram.Diagram`), so every gradviz format draws it: the
terminal tree, DOT/SVG/PNG, Mermaid, JSON and the HTML pages (`gradviz.output.render`).

Two levels. `level="op"`: one node per autograd op, named by the op (`addmm`, `sigmoid`,
`mse_loss`…), and one per leaf tensor (a parameter named by its module path when the model
is given, `net.0.weight`), each labelled with its shape and data: the value of a scalar,
the values of a small tensor, a summary (‖·‖, min, max) of a larger one; after
`backward()`, its gradient in the same form. Shape-only ops (view, reshape, transpose,
permute, expand, select…) are not nodes: they are written on the edge they sit on
(`view 4×8`). `level="module"` (`gradviz.torch.modules`): one box per module call. Every
op's result and gradient are known only from a recording (`gradviz.torch.record`);
without one, an op's result is shown where autograd kept it (sigmoid, tanh, exp keep
theirs), the op alone elsewhere, and the title says once that the intermediate values
were not kept; in a recording, the title counts the results it could not keep, says why
(changed in place by a later op, or made with gradients off) and names their ops.

The walk is iterative (no recursion limit) and in a fixed order, so the same graph
gives the same text. A graph of more than `COLLAPSE_AT` nodes drawn with its model has
each run of repeated blocks (consecutive children of a container with the same
structure and sizes, such as a stack of identical `nn.Sequential` blocks) drawn as its
first block in full and the repeats as one box `×N` with their gradient through the
blocks as a strip (the rms of each block's parameters' gradients, first → last); a graph
larger than `limit` nodes is cut to the `limit` nodes nearest the loss, the rest drawn
as one box, unless its repeats collapsed make it fit (walked up to `WIDE` × `limit`
nodes). The diagram's title says either.

Where the gradient is known on every node (a recording), the node nearest the output
whose gradient (rms) falls below a tenth of the model output's is marked: the
"frontier" (`FRONTIER`).
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

import torch
from torch import nn

from gradviz.errors import InputError, quoted
from gradviz.notebook import draw as draw_diagram
from gradviz.numbers import fmt
from gradviz.render.diagram import (
    FRONTIER,
    Diagram,
    Edge,
    Node,
    captioned,
    preferred_rankdir,
)

if TYPE_CHECKING:
    import graphviz

    from gradviz.torch.recording import Recording

DRAW_LIMIT = 400  # nodes drawn (ops and leaves); beyond, the ones nearest the loss
COLLAPSE_AT = 150  # nodes: a larger graph has its repeated blocks drawn once and `×N`
WIDE = 10  # past the cap, a model with repeats is walked this many times further
SMALL = 6  # a tensor of at most this many numbers is shown in full
LEVELS = ("module", "op")
_BACKWARD = re.compile(r"Backward\d*$")
# where a CamelCase name breaks into words: `Max|Pool2D|With|Indices`, `Mse|Loss`
_WORD = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[0-9A-Z])(?=[A-Z][a-z])")

# Ops that only reshape or select (no arithmetic): written on the edge they sit on.
SHAPE_OPS = frozenset(
    {
        "alias",
        "as_strided",
        "clone",  # (`.contiguous()`)
        "expand",
        "narrow",
        "permute",
        "reshape_alias",
        "select",
        "slice",
        "split",
        "split_with_sizes",
        "squeeze",
        "t",
        "transpose",
        "unbind",
        "unsafe_split",
        "unsafe_view",
        "unsqueeze",
        "view",
    }
)
# The title's clause when some op's result is unknown (each clause is a line of the
# picture's caption: short enough for an 800 px page).
NOT_KEPT = "intermediate values were not kept (gradviz.torch.record keeps them)"
# ... and inside a recording, why (`Recording.changed_in_place`), said with which ops
CHANGED = "changed in place by a later op"
UNSEEN = "made with gradients off or outside the recording"
# torch.utils.checkpoint(use_reentrant=True) runs its function with gradients off: autograd's
# graph holds this one node in place of the function's ops, run again in backward()
CHECKPOINT = "CheckpointFunctionBackward"
FRONTIER_SHARE = 0.1

Names = nn.Module | Mapping[str, torch.Tensor] | None


def _op_name(fn: object) -> str:
    """`AddmmBackward0` → `addmm`, `MseLossBackward0` → `mse_loss`."""
    name = _BACKWARD.sub("", type(fn).__name__) or type(fn).__name__
    return _WORD.sub("_", name).lower()


def shape_text(t: torch.Tensor) -> str:
    """`4×8`, `()` for a scalar."""
    return "×".join(str(n) for n in t.shape) if t.dim() else "()"


def _shape(t: torch.Tensor) -> str:
    return "shape " + shape_text(t)


def summary(t: torch.Tensor, what: str) -> tuple[str, float]:
    """`describe`'s text and ‖t‖₂ (rms and the text from one read of the tensor)."""
    values = t.detach()
    if not values.is_floating_point():
        values = values.to(torch.float64)
    n = values.numel()
    if n <= SMALL:
        listed = values.reshape(-1).tolist()
        text = f"{what} [{', '.join(fmt(v) for v in listed)}]"
        return text, math.sqrt(sum(v * v for v in listed))
    # No float64 copy (bench/README.md, issue 30): the norm is summed in float64, and min
    # and max are exact in the tensor's own precision.
    low, high = torch.aminmax(values)
    norm = torch.linalg.vector_norm(values, dtype=torch.float64).item()
    return f"{what} ‖·‖ {fmt(norm)}, min {fmt(low.item())}, max {fmt(high.item())} (of {n})", norm


def describe(t: torch.Tensor, what: str) -> str:
    """`data [0.1, -2, 3]` for a small tensor, `data ‖·‖ 3.2, min -1, max 2 (of 64)` beyond."""
    return summary(t, what)[0]


def rms(t: torch.Tensor | None) -> float | None:
    """The root mean square of a tensor's entries (None for None or an empty tensor)."""
    if t is None or t.numel() == 0:
        return None
    # ‖t‖ / √n: one reduction, summed in float64 (bench/README.md, issue 30)
    norm = torch.linalg.vector_norm(t.detach(), dtype=torch.float64)
    return float(norm) / math.sqrt(t.numel())


Summarize = Callable[[torch.Tensor, str], tuple[str, float]]


def summary_rms(t: torch.Tensor | None, summarize: Summarize = summary) -> float | None:
    """`rms` of a gradient from the norm its text was read with."""
    if t is None or t.numel() == 0:
        return None
    return summarize(t, "grad")[1] / math.sqrt(t.numel())


def _numbers(
    t: torch.Tensor | None, what: str, summarize: Summarize = summary
) -> tuple[float | None, list[str], float | None]:
    """A scalar as the node's number; a tensor as lines of text under it, and its rms."""
    if t is None:
        return None, [], None
    n = t.numel()
    if n == 1:
        return float(t.detach().reshape(())), [], None
    text, norm = summarize(t, what)
    return None, [text], norm / math.sqrt(n) if n else None


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


def _bytes(n: int) -> str:
    """`512 B`, `12.3 kB`, `4.1 MB`."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


class _Source:
    """What the drawing knows of the graph: each autograd node's result and gradient
    (from a recording, else what autograd kept), and where edges from it start."""

    def __init__(
        self, root: object, loss_value: torch.Tensor | None, recording: Recording | None
    ) -> None:
        self.root, self.loss_value, self.recording = root, loss_value, recording
        self._summaries: dict[tuple[int, str], tuple[torch.Tensor, tuple[str, float]]] = {}

    def summary(self, t: torch.Tensor, what: str) -> tuple[str, float]:
        """`summary`, once a tensor in a drawing (a module's input is the one before's
        output; a loose op's text is its box's and its tooltip's)."""
        key = (id(t), what)
        if key not in self._summaries:  # (the tensor is kept: its id is not reused)
            self._summaries[key] = (t, summary(t, what))
        return self._summaries[key][1]

    def value(self, fn: object, output: int = 0) -> torch.Tensor | None:
        if fn is self.root and self.loss_value is not None:
            return self.loss_value
        if self.recording is not None:
            kept = self.recording.value(fn, output)
            if kept is not None:
                return kept
        return _saved_result(fn) if output == 0 else None

    def grad(self, fn: object, output: int = 0) -> torch.Tensor | None:
        if self.recording is None:
            return None
        return self.recording.grad(fn, output)

    def module(self, fn: object) -> str | None:
        """The path of the innermost module `fn` ran in (None: outside the model's
        modules, or not recorded)."""
        if self.recording is None:
            return None
        call = self.recording.call_of(fn)
        while call is not None and call.path == "":
            call = None if call.parent is None else self.recording.calls[call.parent]
        return None if call is None else call.path

    def saved(self, fn: object) -> int | None:
        if self.recording is None:
            return None
        return self.recording.saved_bytes.get(fn)


def checkpointed(fn: object, recording: Recording | None) -> str | None:
    """What a reentrant checkpoint's node stands for, the module it ran and its parameters
    (none of them in autograd's graph): `checkpointed: blk (144 parameters), recomputed
    in backward`; None for any other node."""
    if type(fn).__name__ != CHECKPOINT:
        return None
    call = None if recording is None else recording.call_of(fn)
    if call is None:  # (a function, or no recording: what it ran is unknown)
        return "checkpointed: its ops are not in autograd's graph, recomputed in backward"
    model, count = recording.model, ""
    try:
        module = model.get_submodule(call.path) if model is not None else None
    except AttributeError:  # (a module outside the model)
        module = None
    if module is not None:
        count = f" ({sum(p.numel() for p in module.parameters()):,} parameters)"
    return f"checkpointed: {call.path or call.kind}{count}, recomputed in backward"


def fold_label(op: str, value: torch.Tensor | None, output: int) -> str:
    """A shape-only op as its edge says it: `view 4×8`, `unbind[2] 4`."""
    name = f"{op}[{output}]" if output else op
    return f"{name} {shape_text(value)}" if value is not None else name


def diagram(
    loss: torch.Tensor | None = None,
    names: Names = None,
    *,
    recording: Recording | None = None,
    level: str | None = None,
    depth: int | None = None,
    limit: int = DRAW_LIMIT,
) -> Diagram:
    """The autograd graph of the scalar `loss` (see the module's docstring). `names`: the
    model (its parameters are named by module path) or a mapping of names to tensors.
    `recording` (`gradviz.torch.record`) gives every op's data and grad; with it `loss`
    may be left out (the one backward() ran from). `level`: "module" (the default with a
    recording of modules) or "op"; `depth`: how deep nested modules are expanded (1: the
    model's children only; None: every module)."""
    if loss is None:
        if recording is None:
            raise InputError("draw: give the loss (or a recording: gradviz.torch.record)")
        root = recording.root_node()
        loss_value = recording.value(root)
    else:
        if not isinstance(loss, torch.Tensor):
            raise InputError(f"draw: expected a torch.Tensor, got {type(loss).__name__}")
        if loss.numel() != 1:
            raise InputError(
                f"draw: walks back from a scalar loss; this tensor has {_shape(loss)} "
                "(take .sum() or .mean() first)"
            )
        root, loss_value = loss.grad_fn, loss.detach()
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InputError(f"draw: limit must be a whole number ≥ 1, got {limit!r}")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise InputError(f"draw: depth must be a whole number ≥ 1 or None, got {depth!r}")
    modules = recording is not None and bool(recording.calls)
    if level is None:
        level = "module" if modules else "op"
    if level not in LEVELS:
        raise InputError(f"draw: unknown level {quoted(level)}; expected one of module, op")
    if names is None and recording is not None:
        names = recording.model
    labels = _parameter_names(names)
    if root is None:  # a leaf: one node
        value, _, _ = _numbers(loss_value, "data")
        node = Node("n0", "value", "loss", data=value, role="output")
        return Diagram((node,), (), has_grad=False, level=level)
    source = _Source(root, loss_value, recording)
    if level == "module":
        if not modules:
            raise InputError(
                "draw: level 'module' needs a recording of the model's modules: "
                "with gradviz.torch.record(model) as rec: loss = …; loss.backward(); "
                "then rec.draw()"
            )
        from gradviz.torch.modules import module_diagram  # lazy: start-up (imports draw)

        order, cut = _walk(root, WIDE * limit)
        return module_diagram(order, cut, source, labels, depth)
    order, cut = _walk(root, limit)
    if cut and isinstance(names, nn.Module) and _repeats(names):
        # the repeats may make the whole graph fit: walk it, collapse, and keep that if
        # it is no larger than what the cap draws
        wide_order, wide_cut = _walk(root, WIDE * limit)
        if not wide_cut:
            wide = _build(source, wide_order, False, labels, names, depth)
            if len(wide.nodes) <= 2 * limit:  # (an op is two nodes, its op and its value)
                return wide
    return _build(source, order, cut, labels, names, depth)


def leaf_node(
    vid: str, tensor: torch.Tensor, name: str, backward_done: bool, summarize: Summarize = summary
) -> Node:
    """A leaf tensor (a parameter, an input that wants a gradient) as a value node."""
    data, lines, _ = _numbers(tensor, "data", summarize)
    grad, grad_lines, grad_rms = (
        _numbers(tensor.grad, "grad", summarize) if backward_done else (None, [], None)
    )
    return Node(
        vid,
        "value",
        name,
        data=data,
        grad=grad,
        detail=f"{name or 'leaf'}: {type(tensor).__name__} {_shape(tensor)}",
        extra_lines=(_shape(tensor), *lines, *grad_lines),
        role="input",
        grad_rms=grad_rms,
    )


def result_node(
    vid: str,
    fn: object,
    op: str,
    value: torch.Tensor,
    grad: torch.Tensor | None,
    is_root: bool,
    where: str | None,
    saved: int | None,
    backward_done: bool = True,
    summarize: Summarize = summary,
) -> Node:
    """An op and its result as one value node, named by the op (the loss: `loss`): its
    shape, data and (after backward) grad."""
    data, lines, _ = _numbers(value, "data", summarize)
    number, grad_lines, grad_rms = _numbers(grad, "grad", summarize)
    if is_root and number is None and backward_done:
        number = 1.0  # ∂loss/∂loss
    detail = [f"{op}: the output of {type(fn).__name__}" + (f" in {where}" if where else "")]
    if saved is not None:
        detail.append(f"saved for backward: {_bytes(saved)}")
    extra = () if is_root else (_shape(value), *lines, *grad_lines)
    return Node(
        vid,
        "value",
        "loss" if is_root else op,
        data=data,
        grad=number,
        detail="\n".join(detail),
        extra_lines=extra,
        op=op,
        role="output" if is_root else "intermediate",
        grad_rms=grad_rms,
    )


def _depth_of(path: str) -> int:
    return path.count(".") + 1 if path else 0


def cut_to(path: str | None, depth: int | None) -> str | None:
    """A module path shortened to `depth` parts (`0.self_attn` at depth 1: `0`)."""
    if path is None or depth is None or _depth_of(path) <= depth:
        return path
    return ".".join(path.split(".")[:depth])


def _build(
    source: _Source,
    order: list[object],
    cut: bool,
    labels: dict[int, str],
    names: Names,
    depth: int | None,
) -> Diagram:
    """The op-level diagram of the walked autograd nodes `order` (`cut`: some were left
    out)."""
    root, recording = source.root, source.recording
    ids = {fn: f"n{i}" for i, fn in enumerate(order)}
    leaves = [fn for fn in order if hasattr(fn, "variable")]
    backward_done = any(fn.variable.grad is not None for fn in leaves) or (
        recording is not None and recording.root is not None
    )
    nodes: list[Node] = []
    edges: list[Edge] = []
    more_id = f"n{len(order)}"
    starts: dict[object, str] = {}  # node -> the id its edges start from
    folded: dict[object, tuple[str, tuple[str, ...]]] = {}  # a shape op -> its input's start
    clusters: dict[str, str] = {}
    missing: dict[str, list[tuple[str | None, str]]] = {}  # why unknown -> (module, op)

    def start(child: object, output: int) -> tuple[str, tuple[str, ...]]:
        """Where an edge from `child`'s output `output` starts, and the shape ops on it."""
        if child in folded:
            begin, on_the_way = folded[child]
            return begin, (
                *on_the_way,
                fold_label(_op_name(child), source.value(child, output), output),
            )
        return starts.get(child, more_id), ()

    for fn in order:
        vid = ids[fn]
        if hasattr(fn, "variable"):  # AccumulateGrad: a leaf tensor that wants a gradient
            tensor = fn.variable
            name = labels.get(id(tensor), "")
            nodes.append(leaf_node(vid, tensor, name, backward_done, source.summary))
            starts[fn] = vid
            continue
        op = _op_name(fn)
        inputs = [(c, n) for c, n in fn.next_functions if c is not None]
        if op in SHAPE_OPS and len(inputs) == 1 and fn is not root:
            folded[fn] = start(*inputs[0])
            continue
        where = source.module(fn)
        box = cut_to(where, depth)
        saved = source.saved(fn)
        value = source.value(fn)
        hidden = checkpointed(fn, recording)
        if value is None:  # the op alone, named by its id
            target = f"{vid}_op"
            detail = type(fn).__name__ + (f" in {where}" if where else "")
            if saved is not None:
                detail += f"\nsaved for backward: {_bytes(saved)}"
            if hidden is not None:
                detail += f"\n{hidden}"
            why = NOT_KEPT
            if recording is not None:
                why = CHANGED if recording.changed_in_place(fn) else UNSEEN
                detail += f"\nits result, not kept: {why}"
            nodes.append(Node(target, "op", op, detail=detail, op=op, role="op"))
            missing.setdefault(why, []).append((where, op))
        else:  # the op and its result as one node: the op's name, shape, data, grad
            target = vid
            grad = source.grad(fn) if backward_done else None
            node = result_node(
                vid, fn, op, value, grad, fn is root, where, saved, backward_done, source.summary
            )
            if hidden is not None:
                node = replace(
                    node, extra_lines=(*node.extra_lines, hidden), detail=_join(node.detail, hidden)
                )
            nodes.append(node)
        for index, (child, output) in enumerate(fn.next_functions):
            if child is None:
                continue
            begin, on_the_way = start(child, output)
            label = " · ".join(on_the_way) or None
            edges.append(Edge(begin, target, index=index, label=label))
        starts[fn] = target
        if box is not None:
            clusters[target] = box
    if recording is not None:
        for fn in leaves:  # a parameter in the box of its module
            name = labels.get(id(fn.variable), "")
            owner = cut_to(name.rsplit(".", 1)[0], depth) if "." in name else None
            if owner is not None and owner in clusters.values():
                clusters[ids[fn]] = owner
        diagram_nodes = [
            replace(n, cluster=clusters[n.id]) if n.id in clusters else n for n in nodes
        ]
    else:
        diagram_nodes = _module_boxes(nodes, edges)
    notes = []
    # (the size of the graph as one node per leaf and two per op, folded or not)
    if isinstance(names, nn.Module) and 2 * len(order) - len(leaves) > COLLAPSE_AT:
        for k, blocks in enumerate(_repeats(names)):
            collapsed = _collapse(diagram_nodes, edges, blocks, f"r{k}", names)
            if collapsed is not None:
                diagram_nodes, edges, first, repeats = collapsed
                notes.append(
                    f"blocks {repeats[0]}…{repeats[-1]} repeat {first}: one box ×{len(repeats)}"
                )
    if cut:
        diagram_nodes.insert(
            0, Node(more_id, "group", "…", extra_lines=("earlier nodes, not drawn",), role="group")
        )
        notes.insert(
            0,
            f"the {len(order)} autograd nodes nearest the loss; the earlier ones are one "
            "box (draw(loss, limit=N) draws more)",
        )
    for why, ops in missing.items():
        notes.append(
            why if why == NOT_KEPT else f"not kept: {len(ops)} results {why} ({_where(ops)})"
        )
    diagram_nodes, frontier = mark_frontier(diagram_nodes, edges, _output_id(source, ids, starts))
    if frontier:
        notes.append(frontier)
    return Diagram(
        tuple(diagram_nodes),
        tuple(edges),
        has_grad=backward_done,
        level="op",
        **captioned(None, *notes),
    )


def _where(ops: list[tuple[str | None, str]], most: int = 3) -> str:
    """Ops by module, each once: `add, mul in gru; relu`, the first `most` modules."""
    by_module: dict[str | None, dict[str, None]] = {}
    for where, op in ops:
        by_module.setdefault(where, {})[op] = None
    said = [", ".join(names) + (f" in {w}" if w else "") for w, names in by_module.items()]
    return "; ".join(said[:most]) + ("; …" if len(said) > most else "")


def _output_id(
    source: _Source, ids: Mapping[object, str], starts: Mapping[object, str]
) -> str | None:
    """The node of the model's output (the root module call's result), whose gradient the
    frontier is measured against; else the loss's first input."""
    recording = source.recording
    if recording is not None:
        for call in recording.calls:
            if call.parent is None and call.outputs:
                fn = call.outputs[0].grad_fn
                if fn in starts and starts[fn] != f"{ids[fn]}_op":
                    return starts[fn]
                break
    inputs = [c for c, _ in source.root.next_functions if c is not None]
    return starts.get(inputs[0]) if inputs else None


def node_strength(node: Node) -> float | None:
    """A node's gradient as one number: |grad| of a scalar, its rms for a tensor."""
    return node.magnitude


def mark_frontier(
    nodes: list[Node], edges: list[Edge], output_id: str | None
) -> tuple[list[Node], str | None]:
    """The node nearest the output (walking back from it along the edges) whose gradient
    is below FRONTIER_SHARE of the output's: marked with FRONTIER, and a sentence for
    the title; (nodes, None) when there is none or no gradient to measure."""
    by_id = {n.id: n for n in nodes}
    if output_id is None or output_id not in by_id:
        return nodes, None
    reference = node_strength(by_id[output_id])
    if not reference:
        return nodes, None
    sources: dict[str, list[str]] = {}
    for edge in edges:
        sources.setdefault(edge.target, []).append(edge.source)
    seen, queue = {output_id}, deque([output_id])
    while queue:  # breadth first: the nearest to the output first
        node_id = queue.popleft()
        node = by_id.get(node_id)
        strength = None if node is None else node_strength(node)
        if (
            node is not None
            and node.kind != "op"
            and node.role != "input"  # (a parameter's grad is another quantity)
            and strength is not None
            and math.isfinite(strength)
            and strength < FRONTIER_SHARE * reference
        ):
            marked = replace(
                node,
                extra_lines=(*node.extra_lines, FRONTIER),
                detail=_join(node.detail, FRONTIER),
            )
            name = node.label or (f"{node.id} ({node.op})" if node.op else node.id)
            said = f"▶ frontier: {name}, grad {fmt(strength)} < ⅒ × {fmt(reference)} (output's)"
            return [marked if n.id == node_id else n for n in nodes], said
        for s in sources.get(node_id, ()):
            if s not in seen:
                seen.add(s)
                queue.append(s)
    return nodes, None


def _join(detail: str, line: str) -> str:
    return f"{detail}\n{line}" if detail else line


RAMP = "▁▂▃▄▅▆▇█"


def strip(values: list[float | None]) -> str:
    """Gradients as one character each on a log scale from the smallest to the largest
    (`·` none or zero, `!` NaN/inf), then `first → last`: `▇▆▄▂▁ 0.01 → 3e-06`."""
    finite = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not finite:
        return "no gradient"
    lo, hi = math.log10(min(finite)), math.log10(max(finite))
    span = max(hi - lo, 1e-12)
    chars = []
    for v in values:
        if v is None or v == 0:
            chars.append("·")
        elif not math.isfinite(v):
            chars.append("!")
        else:
            chars.append(RAMP[min(len(RAMP) - 1, int((math.log10(v) - lo) / span * len(RAMP)))])
    first, last = values[0], values[-1]
    ends = f"{fmt(first) if first is not None else '·'} → {fmt(last) if last is not None else '·'}"
    return f"{''.join(chars)} {ends}"


def block_grad_rms(model: nn.Module, block: str) -> float | None:
    """The rms of the gradients of a block's parameters (None before backward)."""
    grads = [
        p.grad.reshape(-1)
        for n, p in model.named_parameters()
        if n.startswith(block + ".") and p.grad is not None
    ]
    return rms(torch.cat(grads)) if grads else None


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
    nodes: list[Node], edges: list[Edge], blocks: list[str], box_id: str, model: nn.Module
) -> tuple[list[Node], list[Edge], str, list[str]] | None:
    """The first of `blocks` drawn (the cap may have left out earlier ones) kept, and the
    nodes of the later ones as one box: those that depend on their parameters but not on
    a parameter used after them (nor the loss); with the names of the first and of the
    repeats. The box shows the gradient through the blocks (`strip`: the rms of each
    block's parameters' gradients, the first block to the last). None when fewer than
    two of the blocks have a parameter drawn."""
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
    lines = [f"{repeats[0]}…{repeats[-1]}: as {first}, not drawn"]
    through = [block_grad_rms(model, b) for b in drawn]
    if any(v is not None for v in through):
        lines.append(f"param grad rms {first}…{repeats[-1]}: {strip(through)}")
    box = Node(box_id, "group", f"×{len(repeats)}", extra_lines=tuple(lines), role="group")
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
        if node.op is None:  # (an op node, or an op and its result as one node)
            continue
        sources = inputs.get(node.id, [])
        owners = {box[s] for s in sources if s in parameter_only}
        if len(owners) == 1:
            box[node.id] = owners.pop()
            if len(sources) == 1:  # a view of one parameter (`t`, `view`): still its own
                parameter_only.add(node.id)
    return [replace(n, cluster=box[n.id]) if n.id in box else n for n in nodes]


def draw(
    loss: torch.Tensor | None = None,
    names: Names = None,
    *,
    recording: Recording | None = None,
    level: str | None = None,
    depth: int | None = None,
    limit: int = DRAW_LIMIT,
    rankdir: str | None = None,
) -> graphviz.Digraph:
    """A `graphviz.Digraph` of `loss`'s autograd graph, as `gradviz.draw` gives for a
    Value: shown inline in Jupyter, `.render()` writes files (no system Graphviz needed).
    `rankdir` as gradviz chooses it when not given (a deep graph reads top to bottom)."""
    drawn = diagram(loss, names, recording=recording, level=level, depth=depth, limit=limit)
    return draw_diagram(drawn, rankdir=rankdir or preferred_rankdir(drawn))
