"""A recorded PyTorch computation drawn one box per module call (`level="module"`).

Each op the recording saw ran inside a stack of module calls (`0`, `0.self_attn`); it is
drawn in the box of the innermost call that is a leaf of the call tree, or the call at
`depth` when that is shallower. A box says its module (path and class), its input and
output shapes, the rms of the gradient of the loss with respect to its output (the
colour, as every gradviz picture colours by |grad|) and its parameters' count and
gradient rms; hovering it gives the numbers in full and the bytes its ops saved for
backward. Ops that ran in a module with children of its own (a residual `add` in a
transformer layer), or outside every module (the loss), are drawn as at the op level,
inside a frame of the module they ran in; shape-only ops between boxes are written on
their edge. A parameter is drawn inside its module's box (not as a node of its own)
when only that module uses it. A view of more than COLLAPSE_AT boxes draws each run of
REPEATS or more repeated blocks as the first block and one box `×N` with the gradient
through them all as a strip (`gradviz.torch.graph.strip`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

import torch

from gradviz.numbers import fmt
from gradviz.render.diagram import FRONTIER, Diagram, Edge, Node, captioned
from gradviz.torch.graph import (
    CHECKPOINT,
    SHAPE_OPS,
    Summarize,
    _bytes,
    _depth_of,
    _op_name,
    _Source,
    fold_label,
    leaf_node,
    mark_frontier,
    result_node,
    shape_text,
    strip,
    summary_rms,
)

if TYPE_CHECKING:
    from gradviz.torch.recording import ModuleCall

GRAD_MEANING = "a box's grad: rms of ∂loss/∂(its output)"
COLLAPSE_AT = 40  # boxes: a larger view draws each run of repeated blocks as its first and ×N
REPEATS = 3  # blocks in a run, at least


def _label(call: ModuleCall) -> str:
    """`0.linear1 Linear`; a module outside the model by its class (`MSELoss`); a later
    call of the same module with its number."""
    name = call.kind if call.path.startswith(call.kind + "#") or not call.path else call.path
    name = name if name == call.kind else f"{name} {call.kind}"
    return name if call.call == 1 else f"{name} (call {call.call})"


def _shapes(tensors: tuple[torch.Tensor, ...]) -> str:
    """The first tensor's shape, and how many more there are: `2×4×6 (+2)`."""
    if not tensors:
        return "—"
    more = f" (+{len(tensors) - 1})" if len(tensors) > 1 else ""
    return shape_text(tensors[0]) + more


def module_diagram(
    order: list[object],
    cut: bool,
    source: _Source,
    labels: Mapping[int, str],
    depth: int | None,
) -> Diagram:
    """The module view of the walked autograd nodes `order` (see the module's docstring)."""
    recording = source.recording
    assert recording is not None  # (checked by the caller)
    calls = recording.calls
    parents_of_children = {c.parent for c in calls if c.parent is not None}

    def place(fn: object) -> tuple[str, int | None]:
        """("box", call): drawn in that call's box; ("loose", call or None): on its own."""
        index = recording.module_of.get(fn)
        if index is None:
            return "loose", None
        if type(fn).__name__ == CHECKPOINT:  # the one node of its module's call
            return "box", index
        chain = []
        while index is not None:
            chain.append(index)
            index = calls[index].parent
        chain.reverse()  # outermost first
        for k in chain:
            leaf = k not in parents_of_children
            if calls[k].path == "" and not leaf:
                continue  # the model itself: its children are the boxes
            if leaf or (depth is not None and _depth_of(calls[k].path) >= depth):
                return "box", k
        return "loose", chain[-1]

    def frame(k: int | None) -> str | None:
        """The frame a node of call k's is drawn in: the call, named."""
        if k is None or calls[k].path == "":
            return None
        return _label(calls[k])

    backward_done = recording.root is not None or any(
        fn.variable.grad is not None for fn in order if hasattr(fn, "variable")
    )
    root = source.root
    nodes: list[Node] = []
    edges: list[Edge] = []
    starts: dict[object, str] = {}
    folded: dict[object, tuple[str, tuple[str, ...]]] = {}
    boxes: dict[int, list[object]] = {}  # call -> its ops
    box_at: dict[int, int] = {}  # call -> the position of its node in `nodes`
    consumers: dict[object, list[str]] = {}  # a leaf -> the nodes it goes into
    more_id = "more"
    loose_call: dict[str, int] = {}  # an op drawn on its own -> the call it ran in
    leaf_at: dict[str, tuple[int, torch.Tensor]] = {}  # a leaf's id -> (position, tensor)

    def start(child: object, output: int) -> tuple[str, tuple[str, ...]]:
        if child in folded:
            begin, on_the_way = folded[child]
            label = fold_label(_op_name(child), source.value(child, output), output)
            return begin, (*on_the_way, label)
        return starts.get(child, more_id), ()

    seen_edges: set[tuple[str, str]] = set()

    def connect(fn: object, target: str) -> None:
        for index, (child, output) in enumerate(fn.next_functions):
            if child is None:
                continue
            begin, on_the_way = start(child, output)
            if hasattr(child, "variable"):
                consumers.setdefault(child, []).append(target)
            if begin == target or (begin, target) in seen_edges:
                continue
            seen_edges.add((begin, target))
            edges.append(Edge(begin, target, index=index, label=" · ".join(on_the_way) or None))

    for i, fn in enumerate(order):
        vid = f"n{i}"
        if hasattr(fn, "variable"):  # its node is made below, unless a box absorbs it
            leaf_at[vid] = (len(nodes), fn.variable)
            nodes.append(Node(vid, "value", ""))
            starts[fn] = vid
            continue
        where, k = place(fn)
        if where == "box":
            box_id = f"m{k}"
            if k not in boxes:
                boxes[k] = []
                box_at[k] = len(nodes)
                nodes.append(Node(box_id, "group", "", role="group"))  # filled in below
            boxes[k].append(fn)
            starts[fn] = box_id
            connect(fn, box_id)
            continue
        op = _op_name(fn)
        inputs = [(c, n) for c, n in fn.next_functions if c is not None]
        if op in SHAPE_OPS and len(inputs) == 1 and fn is not root:
            folded[fn] = start(*inputs[0])
            continue
        oid = f"{vid}_op"
        cluster = frame(k)
        value = source.value(fn)
        if value is None:  # the op alone
            nodes.append(
                Node(oid, "op", op, detail=type(fn).__name__, op=op, role="op", cluster=cluster)
            )
        else:  # the op and its result as one box (the loss: its value and grad 1)
            grad = source.grad(fn) if backward_done else None
            where_name = None if k is None else calls[k].path or None
            saved, summarize = source.saved(fn), source.summary
            node = result_node(
                oid, fn, op, value, grad, fn is root, where_name, saved, backward_done, summarize
            )
            loose = _loose(node, op, value, grad, cluster, summarize) if fn is not root else node
            nodes.append(replace(loose, cluster=cluster))
        if k is not None:
            loose_call[oid] = k
        connect(fn, oid)
        starts[fn] = oid
    named = list(recording.model.named_parameters()) if recording.model is not None else []
    for k, ops in boxes.items():
        nodes[box_at[k]] = _box(k, calls, ops, source, named, frame(calls[k].parent))
    # a parameter only its own module uses is drawn in that module's box
    absorbed: set[str] = set()
    for fn, targets in consumers.items():
        name = labels.get(id(fn.variable), "")
        owners = [calls[int(t[1:])].path for t in targets if t.startswith("m")]
        if name and len(owners) == len(targets) and all(_owns(p, name) for p in owners):
            absorbed.add(starts[fn])
    for vid, (at, tensor) in leaf_at.items():  # (described only when drawn: bench/README.md)
        if vid not in absorbed:
            name = labels.get(id(tensor), "")
            nodes[at] = leaf_node(vid, tensor, name, backward_done, source.summary)
    nodes = [n for n in nodes if n.id not in absorbed]
    edges = [e for e in edges if e.source not in absorbed]
    notes = [GRAD_MEANING] if backward_done else []
    # (the frontier is found on every box, then shown on the box of the repeats if in one)
    nodes, frontier = mark_frontier(nodes, edges, _output_id(recording, starts))
    if len(nodes) > COLLAPSE_AT:
        of_call = {**loose_call, **{f"m{k}": k for k in boxes}}
        for run in _runs(calls, recording.model):
            collapsed = _collapse_run(nodes, edges, run, calls, of_call, source)
            if collapsed is not None:
                nodes, edges = collapsed
                first, repeats = calls[run[0]].path, [calls[k].path for k in run[1:]]
                notes.append(
                    f"blocks {repeats[0]}…{repeats[-1]} repeat {first}: one box ×{len(repeats)}"
                )
    if frontier:
        notes.append(frontier)
    if cut:
        nodes.insert(
            0, Node(more_id, "group", "…", extra_lines=("earlier nodes, not drawn",), role="group")
        )
    if cut:
        notes.insert(
            0, f"the {len(order)} autograd nodes nearest the loss; the earlier ones are one box"
        )
    return Diagram(
        tuple(nodes),
        tuple(edges),
        has_grad=backward_done,
        level="module",
        **captioned(None, *notes),
    )


def _runs(calls: list[ModuleCall], model: object) -> list[list[int]]:
    """Runs of REPEATS or more consecutive calls of the same parent that are the same block
    (the same modules and sizes: the same repr) holding parameters, outermost first, none
    inside another: their call indices."""
    if model is None:
        return []
    children: dict[int | None, list[int]] = {}
    for k, call in enumerate(calls):
        children.setdefault(call.parent, []).append(k)
    runs: list[list[int]] = []
    taken: set[int] = set()
    for k in range(-1, len(calls)):
        parent = None if k < 0 else k
        if parent is not None and _inside(parent, taken, calls):
            continue
        kids = children.get(parent, [])
        i = 0
        while i < len(kids):
            shape = _block_repr(calls[kids[i]], model)
            j = i + 1
            while j < len(kids) and shape and _block_repr(calls[kids[j]], model) == shape:
                j += 1
            if j - i >= REPEATS and shape and "params" in shape:
                runs.append(kids[i:j])
                taken.update(kids[i:j])
            i = j
    return runs


def _block_repr(call: ModuleCall, model: object) -> str | None:
    """The block's repr, and whether it holds parameters; None outside the model."""
    try:
        module = model.get_submodule(call.path) if call.path else None  # type: ignore[attr-defined]
    except AttributeError:
        return None
    if module is None:
        return None
    has = any(True for _ in module.parameters())
    return repr(module) + (" params" if has else "")


def _inside(k: int, calls_taken: set[int], calls: list[ModuleCall]) -> bool:
    """Whether call k is one of (or inside one of) the calls taken."""
    at: int | None = k
    while at is not None:
        if at in calls_taken:
            return True
        at = calls[at].parent
    return False


def _collapse_run(
    nodes: list[Node],
    edges: list[Edge],
    run: list[int],
    calls: list[ModuleCall],
    of_call: Mapping[str, int],
    source: _Source,
) -> tuple[list[Node], list[Edge]] | None:
    """The run's first block kept, the others as one box that shows the gradient through
    all the blocks (`strip`: the rms of ∂loss/∂(each block's output), first → last), and
    is coloured by its own output's."""
    later = set(run[1:])
    region = {n.id for n in nodes if n.id in of_call and _inside(of_call[n.id], later, calls)}
    if not region:
        return None
    through = []
    for k in run:
        out = calls[k].outputs[0] if calls[k].outputs else None
        grad = (
            None if out is None or out.grad_fn is None else source.grad(out.grad_fn, out.output_nr)
        )
        through.append(summary_rms(grad, source.summary))
    first, last = calls[run[0]].path, calls[run[-1]].path
    box_id = f"r{run[0]}"
    lines = [f"{calls[run[1]].path}…{last}: as {first}, not drawn"]
    if any(v is not None for v in through):
        lines.append(f"grad rms {first}…{last}: {strip(through)}")
    if any(FRONTIER in n.extra_lines for n in nodes if n.id in region):
        lines.append(FRONTIER)
    box = Node(
        box_id,
        "group",
        f"×{len(run) - 1} {calls[run[0]].kind}",
        extra_lines=tuple(lines),
        role="group",
        grad_rms=through[-1],
    )
    at = next(i for i, n in enumerate(nodes) if n.id in region)
    kept = [n for n in nodes if n.id not in region]
    kept.insert(at, box)
    new_edges: list[Edge] = []
    seen: set[tuple[str, str]] = set()
    for edge in edges:
        s = box_id if edge.source in region else edge.source
        t = box_id if edge.target in region else edge.target
        if s == t or (s, t) in seen:
            continue
        seen.add((s, t))
        new_edges.append(replace(edge, source=s, target=t))
    return kept, new_edges


def _loose(
    result: Node,
    op: str,
    value: torch.Tensor,
    grad: torch.Tensor | None,
    cluster: str | None,
    summarize: Summarize,
) -> Node:
    """An op outside the boxes and its result as one box: the op, its shape and grad rms;
    its data and grad in full on hover."""
    lines = [shape_text(value)]
    strength = summary_rms(grad, summarize)
    if strength is not None:
        lines.append(f"grad rms {fmt(strength)}")
    detail = [result.detail, summarize(value, "data")[0]]
    if grad is not None:
        detail.append(summarize(grad, "grad")[0])
    return Node(
        result.id,
        "group",
        op,
        detail="\n".join(detail),
        extra_lines=tuple(lines),
        op=op,
        role="intermediate",
        cluster=cluster,
        grad_rms=strength,
    )


def _owns(path: str, parameter: str) -> bool:
    return path == "" or parameter.startswith(path + ".")


def _output_id(recording: object, starts: Mapping[object, str]) -> str | None:
    """The node of the model's output: the first top-level call's result."""
    for call in recording.calls:
        if call.parent is None and call.outputs:
            return starts.get(call.outputs[0].grad_fn)
    return None


def _box(
    k: int,
    calls: list[ModuleCall],
    ops: list[object],
    source: _Source,
    named: list[tuple[str, torch.Tensor]],
    cluster: str | None,
) -> Node:
    """One module call as a box: its name, shapes, gradient and parameters (`named`: the
    model's, by path)."""
    call = calls[k]
    parameters = []
    if "#" not in call.path.split(".")[0]:  # (a module outside the model has none of its)
        parameters = [(n, p) for n, p in named if call.path == "" or n.startswith(call.path + ".")]
    out = call.outputs[0] if call.outputs else None
    out_grad = None
    if out is not None and out.grad_fn is not None:
        out_grad = source.grad(out.grad_fn, out.output_nr)
    lines = [f"{_shapes(call.inputs)} → {_shapes(call.outputs)}"]
    summarize = source.summary  # (each tensor read once: a box's input is the last's output)
    strength = summary_rms(out_grad, summarize)
    if strength is not None:
        lines.append(f"grad rms {fmt(strength)}")
    detail = [f"{_label(call)}: {len(ops)} autograd ops"]
    for t in call.inputs[:3]:
        detail.append(f"input {shape_text(t)}: {summarize(t, 'data')[0]}")
    if out is not None:
        detail.append(f"output {shape_text(out)}: {summarize(out, 'data')[0]}")
    if out_grad is not None:
        detail.append(f"∂loss/∂output: {summarize(out_grad, 'grad')[0]}")
    if parameters:
        count = sum(p.numel() for _, p in parameters)
        grads = [
            (name, p, summarize(p.grad, "grad")) for name, p in parameters if p.grad is not None
        ]
        said = f"params {count:,}"
        size = sum(p.grad.numel() for _, p, _ in grads)
        if size:  # the rms of all their gradients: ‖g‖² is the sum of each one's
            norm = math.sqrt(sum(read[1] ** 2 for _, _, read in grads))
            said += f", grad rms {fmt(norm / math.sqrt(size))}"
        lines.append(said)
        for name, p, read in grads:
            detail.append(f"{name} {shape_text(p)}: {read[0]}")
    saved = [source.saved(fn) for fn in ops]
    if any(s is not None for s in saved):
        detail.append(f"saved for backward: {_bytes(sum(s or 0 for s in saved))}")
    if any(type(fn).__name__ == CHECKPOINT for fn in ops):
        lines.append("checkpointed: recomputed in backward")
        detail.append("checkpointed (use_reentrant=True): its ops run again in backward()")
    return Node(
        f"m{k}",
        "group",
        _label(call),
        detail="\n".join(detail),
        extra_lines=tuple(lines),
        role="intermediate",  # (a step of the computation, as an op is: not a leaf)
        cluster=cluster,
        grad_rms=strength,
    )
