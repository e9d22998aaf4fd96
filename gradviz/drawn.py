"""A Value's graph drawn: the `Diagram` of everything a Value depends on, the frames of
its backward pass, and the public `to_*` functions that take a Value (or a Diagram).

The walk over Values lives here, not in render/: render/ draws the Diagrams it is handed
and imports nothing that computes.

    >>> from gradviz import Value, to_mermaid
    >>> a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    >>> L = a * b
    >>> L.label = "L"
    >>> L.backward()
    >>> print(to_mermaid(L, legend=False).splitlines()[1].replace("\\u202f", " "))
        n0["a │ data 2 │ grad -3"]

(Mermaid labels join each number to its name with a narrow no-break space, U+202F.)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gradviz.engine import Constant, Value, topological_order
from gradviz.errors import InputError, quoted
from gradviz.names import definition, node_names, op_form, operand, output_name, substitute
from gradviz.numbers import DEFAULT_PRECISION, fmt, fmt_full, json_number
from gradviz.ops import Op
from gradviz.render import dot as _dot
from gradviz.render import terminal as _terminal
from gradviz.render.diagram import (
    STOPS,
    Diagram,
    Edge,
    Node,
    Role,
    _states_a_value,
    op_id,
    value_id,
)
from gradviz.render.frames import Change, Frames

if TYPE_CHECKING:
    from gradviz.model import DataSetStatus, LossGraph
    from gradviz.records import Step


def _value_detail(v: Value, name: str, grad: bool) -> str:
    if type(v) is Constant:
        return f"{name}: a constant, data = {fmt_full(v.data)}"
    lines = [f"{name}: data = {fmt_full(v.data)}"]
    if grad:
        lines.append(f"grad = {fmt_full(v.grad)}")
    if v.op is not None:
        lines.append(f"made by {v.op.name}")
    return "\n".join(lines)


def _op_detail(v: Value, names: Mapping[Value, str], grad: bool) -> str:
    """The op and, with `grad`, its local derivatives with the graph's names as the
    trace writes them (`∂(d·f)/∂d = f = -2.0`), at the current numbers."""
    op = v.op
    assert op is not None  # only called for non-leaves
    inputs = v.parents
    operands = [names[p] for p in inputs]
    applied = op_form(op, *operands)
    lines = [f"{op.name}: {names[v]} = {applied} = {fmt_full(v.data)}"]
    if grad:  # without: data alone, the backward pass was not run
        for position, (formula, local) in enumerate(zip(op.formulas, v.locals, strict=True)):
            if type(inputs[position]) is Constant:
                continue  # a slope towards a constant moves nothing
            named = substitute(formula, *operands)
            line = f"∂({applied})/∂{operand(operands[position])} = {named}"
            if not _states_a_value(named, local):
                line += f" = {fmt_full(local)}"
            lines.append(line)
    if not op.passes_credit:
        lines.append("passes no gradient to its input")
    elif grad:
        lines.append(f"grad in = {fmt_full(v.grad)}")
    return "\n".join(lines)


_SWAP = {"a": "b", "b": "a"}


def is_ordered(op: Op) -> bool:
    """A binary op whose inputs' order matters (a − b, a ÷ b, a ** b): its local
    derivatives do not mirror each other when a and b swap, as a + b's and a·b's do."""
    if op.arity != 2:
        return False
    swapped = re.sub(r"\b[ab]\b", lambda m: _SWAP[m.group(0)], op.d[0])
    return swapped != op.d[1]


def _role(v: Value, root: Value) -> Role:
    if v is root:
        return "output"
    if v.op is not None:
        return "intermediate"
    return "constant" if type(v) is Constant else "input"


def diagram_from_value(
    root: Value,
    *,
    grad: bool = True,
    clusters: Mapping[Value, str] | None = None,
    title: str | None = None,
    order: list[Value] | None = None,
) -> Diagram:
    """The micrograd-style drawing of everything `root` depends on: a node per Value, an op
    node between an op's inputs and its output (`x*x`: two edges), grads as they are
    (`grad=False`: data alone); `order`, a topological order already computed."""
    nodes_in_order = order if order is not None else topological_order(root)
    ids = {v: value_id(i) for i, v in enumerate(nodes_in_order)}
    names = node_names(nodes_in_order)  # the trace's names, for tooltips
    clusters = clusters or {}
    nodes: list[Node] = []
    edges: list[Edge] = []
    for v in nodes_in_order:
        vid = ids[v]
        role = _role(v, root)
        cluster = clusters.get(v)
        if v.op is not None:
            oid = op_id(vid)
            nodes.append(
                Node(
                    id=oid,
                    kind="op",
                    label=v.op.symbol,
                    detail=_op_detail(v, names, grad),
                    cluster=cluster,
                    op=v.op.name,
                    role="op",
                    ordered=is_ordered(v.op),
                )
            )
            stops = None if v.op.passes_credit else STOPS  # detach: credit ends here
            for index, parent in enumerate(v.parents):
                edges.append(Edge(ids[parent], oid, label=stops, index=index))
            edges.append(Edge(oid, vid))
        named = v is root or role == "constant"  # a constant is named by its number
        label = names[v] if named and not v.label else (v.label or "")
        nodes.append(
            Node(
                id=vid,
                kind="value",
                label=label,
                data=v.data,
                grad=v.grad if grad and role != "constant" else None,
                detail=_value_detail(v, names[v], grad),
                cluster=cluster,
                op=v.op.name if v.op is not None else None,
                role=role,
            )
        )
    return Diagram(tuple(nodes), tuple(edges), has_grad=grad, title=title, value_ids=ids)


def page_graph(diagram: Diagram) -> dict[str, Any]:
    """What the live page (`gradviz.render.html.to_html`) knows of the Values `diagram` was
    drawn from: `nodes` in topological order (op key, parents' indices, names, local
    derivatives' formulas), the output's name (`out`) and its name in the trace."""
    from gradviz.render.html import POWER_KEY, op_key, power_exponent  # lazy: start-up

    order = list(diagram.value_ids)
    names = node_names(order)
    index = {v: i for i, v in enumerate(order)}
    nodes = []
    for v in order:
        vid = diagram.value_ids[v]
        entry: dict[str, Any] = {"id": vid, "name": names[v], "k": None}
        if diagram.node(vid).role == "constant":  # no slider, no grad shown, no step
            entry["constant"] = True
        entry["def"] = definition(v, names)
        if v.op is None:
            entry["v"] = json_number(v.data)
        else:
            op = v.op
            operands = [names[p] for p in v.parents]
            entry.update(k=op_key(op), op=op.name, p=[index[p] for p in v.parents])
            if entry["k"] == POWER_KEY:
                entry["n"] = json_number(power_exponent(op))
            applied = entry["applied"] = op_form(op, *operands)
            inputs = []
            for position, formula in enumerate(op.formulas):
                local_text = substitute(formula, *operands)
                inputs.append(
                    {
                        "nf": f"∂({applied})/∂{operand(operands[position])} = {local_text}",
                        "lt": local_text,
                        # a formula that is a number says its value already (the tooltips' rule)
                        "same": _states_a_value(local_text, v.locals[position]),
                    }
                )
            entry["c"] = inputs
        nodes.append(entry)
    return {"nodes": nodes, "out": names[order[-1]], "trace_out": output_name(order[-1])}


def as_diagram(graph: Value | Diagram, *, grad: bool = True) -> Diagram:
    """A Diagram as it is, or the drawing of a Value (`grad=False`: data alone)."""
    if isinstance(graph, Diagram):
        return graph
    if isinstance(graph, Value):
        return diagram_from_value(graph, grad=grad)
    raise TypeError(f"expected a Value or a Diagram, not {type(graph).__name__}")


def to_dot(
    graph: Value | Diagram,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    grad: bool = True,
    legend: bool = True,
) -> str:
    """Graphviz DOT text (byte-stable)."""
    diagram = as_diagram(graph, grad=grad)
    return _dot.to_dot(diagram, rankdir=rankdir, precision=precision, legend=legend)


def to_mermaid(
    graph: Value | Diagram,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    grad: bool = True,
    legend: bool = True,
) -> str:
    """A Mermaid `flowchart` (raises RenderError above Mermaid's 500-edge limit)."""
    from gradviz.render import mermaid as _mermaid  # lazy: start-up

    diagram = as_diagram(graph, grad=grad)
    return _mermaid.to_mermaid(diagram, rankdir=rankdir, precision=precision, legend=legend)


def to_markdown(
    graph: Value | Diagram,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    grad: bool = True,
    legend: bool = True,
) -> str:
    """The Mermaid flowchart in a fenced block, ready to paste into a README."""
    from gradviz.render import mermaid as _mermaid  # lazy: start-up

    diagram = as_diagram(graph, grad=grad)
    return _mermaid.to_markdown(diagram, rankdir=rankdir, precision=precision, legend=legend)


def to_json(graph: Value | Diagram, *, grad: bool = True) -> str:
    """Nodes and edges with op, data and grad (NaN/inf as the strings "nan", "inf")."""
    from gradviz.render import json as _json  # lazy: start-up

    return _json.to_json(as_diagram(graph, grad=grad))


def to_text(
    graph: Value | Diagram,
    *,
    precision: int = DEFAULT_PRECISION,
    grad: bool = True,
    width: int = 100,
) -> str:
    """The terminal view (tree and leaf table) as plain text."""
    return _terminal.to_text(as_diagram(graph, grad=grad), precision=precision, width=width)


def trace_frames(
    value: Value, steps: list[Step], clusters: dict[Value, str] | None = None
) -> Frames:
    """One diagram per step of the backward pass, for slides or an animation. Frame k: the
    earlier steps' nodes `done`, step k's node (and op) `current`, nodes no credit reaches
    `dim`; each value node's grad is the credit received so far (a node used twice visibly
    adds up); step k's edges emphasised, each input edge labelled with the credit it carries
    back (`+= -2`). Kept as the graph and each step's changes: a frame is made when asked for,
    so memory grows with the graph, not with the graph times its steps."""
    from gradviz.render.trace_view import frame_title  # lazy: start-up (numpy, rich)

    order = topological_order(value)
    # Drawn without grads, so no tooltip tells a grad before its step; the frames then
    # put back the credit received so far.
    drawn = diagram_from_value(value, order=order, grad=False, clusters=clusters)
    out = output_name(value, order)
    names = node_names(order)
    # Unnamed results get the names the titles use (`n3`), so a title can be followed.
    labels = {drawn.id_of(v): names[v] for v in order if v.op is not None and not v.label}
    reached = {s.node for s in steps}
    # Dim what no credit reaches; constants never take part, so they keep their plain look.
    dim = {drawn.id_of(v) for v in order if v not in reached and type(v) is not Constant}
    dim.update(drawn.op_id_of(v) for v in order if v not in reached and v.op is not None)
    base = replace(
        drawn,
        nodes=tuple(
            replace(n, label=labels.get(n.id, n.label), state="dim" if n.id in dim else None)
            for n in drawn.nodes
        ),
        has_grad=True,
    )
    changes: list[Change] = []
    for step in steps:
        vid = base.id_of(step.node)
        oid = base.op_id_of(step.node)
        grads = [(vid, step.credit)] if step.is_output else []
        grads += [(base.id_of(c.parent), c.total) for c in step.contributions if c.passes]
        if oid is not None:
            inputs = [p for p in step.node.parents if type(p) is not Constant]
            emphasis = [(base.id_of(p), oid) for p in inputs] + [(oid, vid)]
        else:
            emphasis = [(vid, base.op_id_of(s.consumer)) for s in step.sources]
        # The credit each input receives, written on the edge it travels back along.
        passed = [
            ((base.id_of(c.parent), oid, c.position), f"+= {fmt(c.amount)}" if c.passes else STOPS)
            for c in step.contributions
        ]
        changes.append(
            Change(
                current=(vid,) if oid is None else (vid, oid),
                title=frame_title(step, len(steps), out),
                emphasis=tuple(emphasis),
                grads=tuple(grads),
                labels=tuple(passed),
            )
        )
    return Frames(base, changes)


def network_diagram(
    graph: LossGraph,
    level: str = "scalar",
    title: str | None = None,
    grad: bool = True,
    statuses: DataSetStatus | None = None,
) -> Diagram:
    """One example's loss drawn by `scalar`, by neuron (pre-activation, activation, grads)
    or by layer (gradient statistics, with the statuses of `statuses`: the model's whole
    data set, `gradviz.model.data_set_status`); `grad=False`: data alone."""
    from gradviz.render.network import LEVELS, layer_diagram, neuron_diagram  # lazy: start-up

    if level == "scalar":
        diagram = diagram_from_value(graph.loss, grad=grad, clusters=graph.clusters, title=title)
    elif level == "neuron":
        diagram = neuron_diagram(graph, title, grad)
    elif level == "layer":
        diagram = layer_diagram(graph, title, grad, statuses)
    else:
        raise InputError(f"unknown level {quoted(level)}; expected one of {', '.join(LEVELS)}")
    return replace(diagram, level=level)  # size advice then offers only coarser levels
