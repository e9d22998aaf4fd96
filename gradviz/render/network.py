"""A saved network's loss graph drawn at three levels: every scalar, a node per neuron,
or a node per layer (with its gradient statistics), so that a 10-layer network stays
readable. Pure: a `gradviz.model.LossGraph` in (with the statuses of its data set, when
the caller has them), a `Diagram` out; `gradviz.drawn.network_diagram` picks the level (the
scalar one is the Value graph's own drawing). `gradviz.drawings.model_diagrams` draws a
saved model's example, for `gradviz draw --model`."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from gradviz.errors import OptionWords, keyword
from gradviz.numbers import fmt
from gradviz.render.diagram import Diagram, Edge, Node, captioned

if TYPE_CHECKING:  # the data drawn, never loaded or computed here
    from gradviz.engine import Value
    from gradviz.model import DataSetStatus, LossGraph
    from gradviz.nn import Network
    from gradviz.records import Diagnosis

LEVELS = ("scalar", "neuron", "layer")
LAYER_VIEW = "level='layer'"  # the option that draws a node per layer (`--level layer`)
AUTO_NODE_LIMIT = 400  # above this many nodes, `auto` draws the next coarser level
# Every scalar of a network reads at docs width (800 px) only for the smallest ones: a
# single neuron has 15 values, 2-2-1 has 31, XOR's 2-4-1 already 51 (3,800 pt wide).
# Above this many, `auto` draws one node per neuron instead.
AUTO_SCALAR_LIMIT = 40
# Above this many edges the neuron view is a tangle (every unit is wired to every unit of
# the next layer; Graphviz routes a dense band between two layers in loops around them:
# 2-8-8-1 has 90 edges and still reads, 2-16-16-1 has 306 and does not), so `auto` draws
# layers.
AUTO_EDGE_LIMIT = 100


def neuron_view_size(network: Network) -> tuple[int, int]:
    """Nodes and edges of the neuron view: the inputs, a node per neuron, y and the
    loss; an edge per weight, and two into the loss."""
    sizes = network.sizes
    return sum(sizes) + 2, sum(a * b for a, b in pairwise(sizes)) + 2


def choose_level(
    graph: LossGraph,
    level: str = "auto",
    limit: int = AUTO_NODE_LIMIT,
    edge_limit: int = AUTO_EDGE_LIMIT,
    mermaid: bool = False,
    words: OptionWords = keyword,
) -> tuple[str, str | None]:
    """The level to draw and, when chosen automatically, a note saying so (naming the
    `level` option as `words` does: `--level` in the CLI): every scalar up to `limit`
    nodes, else a node per neuron if that view has at most `limit` nodes and
    `edge_limit` edges, else a node per layer. For Mermaid, a node per layer where
    Graphviz gets neurons: Mermaid's layout runs a neuron view's weight edges over the
    boxes of other neurons."""
    if level != "auto":
        return level, None
    size = graph.size
    scalar_limit = min(limit, AUTO_SCALAR_LIMIT)
    if size <= scalar_limit:
        return "scalar", None
    scalars = f"{size:,} scalar nodes is more than {scalar_limit}"
    nodes, edges = neuron_view_size(graph.network)
    if nodes <= limit and edges <= edge_limit:
        if mermaid:
            return "layer", (
                f"{scalars}: drawn one node per layer for Mermaid, whose layout runs the "
                "edges of a neuron view over other neurons (Graphviz formats draw neurons)"
            )
        return "neuron", f"{scalars}: drawn one node per neuron ({words('level')})"
    too_many = (
        f"{nodes:,} nodes (more than {limit})"
        if nodes > limit
        else f"{edges:,} edges (more than {edge_limit})"
    )
    return (
        "layer",
        f"{scalars}, and one node per neuron would take {too_many}: drawn one node per "
        f"layer ({words('level')})",
    )


def _value_node(name: str, v: Value, grad: bool, **look: Any) -> Node:
    """A scalar of the loss graph as its own node (an input, the target, the loss)."""
    return Node(
        id=name, kind="value", label=name, data=v.data, grad=v.grad if grad else None, **look
    )


def _group_node(name: str, lines: Sequence[str], label: str | None = None, **look: Any) -> Node:
    """A neuron, a layer or the inputs as one box, its numbers in `lines`."""
    label = name if label is None else label
    return Node(id=name, kind="group", label=label, extra_lines=tuple(lines), role="group", **look)


def _loss_nodes(graph: LossGraph, source: str, grad: bool) -> tuple[list[Node], list[Edge]]:
    built = graph.built
    line = f"{graph.network.loss}: {graph.loss_formula}"
    nodes = [
        _value_node("y", built.target, grad, role="input", cluster="loss"),
        _value_node("loss", built.loss, grad, extra_lines=(line,), role="output", cluster="loss"),
    ]
    return nodes, [Edge(source, "loss"), Edge("y", "loss", index=1)]


def neuron_diagram(graph: LossGraph, title: str | None, grad: bool = True) -> Diagram:
    built, network = graph.built, graph.network
    nodes = [_value_node(f"x{j}", x, grad, role="input") for j, x in enumerate(built.inputs)]
    edges: list[Edge] = []
    sources = [n.id for n in nodes]
    for layer, pre, act in zip(network.layers, built.pre, built.act, strict=True):
        ids = []
        for neuron, z, a in zip(layer.neurons, pre, act, strict=True):
            nid = neuron.name.replace(".", "_")
            ids.append(nid)
            weights = ", ".join(fmt(w.data, 3) for w in neuron.weights)
            wgrads = ", ".join(fmt(w.grad, 3) for w in neuron.weights)
            bias = neuron.bias
            lines = [f"z {fmt(z.data)}" + (f"  ∂L/∂z {fmt(z.grad)}" if grad else "")]
            if a is not z:
                lines.append(f"{layer.activation}(z) {fmt(a.data)}")
            lines.append(f"b {fmt(bias.data)}" + (f"  ∂L/∂b {fmt(bias.grad)}" if grad else ""))
            detail = f"{neuron.name}\nweights: {weights}\n"
            detail += f"weight grads: {wgrads}\n" if grad else ""
            detail += f"bias: {fmt(bias.data)}" + (f" (grad {fmt(bias.grad)})" if grad else "")
            look = {"data": a.data, "grad": a.grad if grad else None, "cluster": layer.name}
            nodes.append(_group_node(nid, lines, label=neuron.name, detail=detail, **look))
            # One edge per weight, as textbooks draw it: width from |w|, colour from
            # ∂L/∂w; no text on the edge (the numbers are in its tooltip).
            for k, (source, w) in enumerate(zip(sources, neuron.weights, strict=True)):
                tip = f"{neuron.name} w{k} = {fmt(w.data)}"
                tip += f", ∂L/∂w{k} = {fmt(w.grad)}" if grad else ""
                through = w.grad if grad else None
                edge = Edge(source, nid, index=k, weight=float(w.data), grad=through, detail=tip)
                edges.append(edge)
        sources = ids
    loss_nodes, loss_edges = _loss_nodes(graph, sources[0], grad)
    return Diagram(tuple(nodes + loss_nodes), tuple(edges + loss_edges), has_grad=grad, title=title)


def layer_diagram(
    graph: LossGraph, title: str | None, grad: bool = True, statuses: DataSetStatus | None = None
) -> Diagram:
    """A node per layer, one short line per quantity; what the numbers are is said once,
    in the title, not in every node. The numbers are this example's, the status the
    whole data set's (`data_set_status`)."""
    built, network, example = graph.built, graph.network, graph.example
    overall = statuses if grad and statuses is not None else None
    inputs = ", ".join(f"x{j} {fmt(x.data)}" for j, x in enumerate(built.inputs))
    nodes = [_group_node("inputs", (inputs,))]
    for i, (layer, stats, acts) in enumerate(
        zip(network.layers, example.layers, built.act, strict=True)
    ):
        lines = [f"{layer.n_out} {layer.activation}, {stats.n_params} params"]
        detail = layer.name
        if grad:
            rel = fmt(stats.rel) if stats.rel is not None else "—"
            lines.append(f"max {fmt(stats.max_abs)}  rel {rel}")
            if overall is not None and overall.diagnosis is not None:
                status = overall.diagnosis.layers[i]
                lines.append(f"status {status.status}")
                detail = f"{layer.name}: {status.status} on the {overall.data}"
                detail += f" ({status.reason})" if status.reason else ""
        else:
            lines.append("outputs " + ", ".join(fmt(a.data, 3) for a in acts[:4]))
            if len(acts) > 4:
                lines[-1] += ", …"
        rms = stats.rms if grad else None  # the colour follows the rms gradient
        nodes.append(_group_node(layer.name, lines, grad=rms, detail=detail))
    if grad:
        key = "per layer: grad = rms ∂L/∂w, max = max |∂L/∂w|, rel = grad ÷ largest (this example)"
        if overall is not None and overall.diagnosis is not None:
            status = f"status on all {overall.size} examples"
        else:
            status = "no status (dead units show on a data set only: gradviz grads)"
        clauses = (key, status)
    else:
        clauses = ()
    loss_nodes, loss_edges = _loss_nodes(graph, nodes[-1].id, grad)
    edges = (*_chain(nodes), *loss_edges)
    return Diagram(tuple(nodes + loss_nodes), edges, has_grad=grad, **captioned(title, *clauses))


def recorded_layer_diagram(layer_names: Sequence[str], diagnosis: Diagnosis) -> Diagram:
    """The layer picture of a run recorded elsewhere (no network, no example): one node per
    layer as `layer_diagram` draws it, its size, activation and parameters from the
    recorded statistics, its colour their rms gradient."""
    nodes = [_group_node("inputs", ())]
    for name, stats in zip(layer_names, diagnosis.layers, strict=True):
        rel = fmt(stats.rel) if stats.rel is not None else "—"
        act = "units (activation not read)" if stats.activations_unread else stats.activation
        lines = (
            f"{stats.n_out} {act}, {stats.n_params} params",
            f"max {fmt(stats.max_abs)}  rel {rel}",
            f"status {stats.status}",
        )
        detail = f"{name}: {stats.status}" + (f" ({stats.reason})" if stats.reason else "")
        nodes.append(_group_node(name, lines, grad=stats.rms, detail=detail))
    title = "per layer: grad = rms ∂L/∂w, max = max |∂L/∂w|, rel = grad ÷ largest, as recorded"
    return Diagram(tuple(nodes), _chain(nodes), title=title, level="layer")


def _chain(nodes: list[Node]) -> tuple[Edge, ...]:
    """An edge from each node to the next: the layer view's line of layers."""
    return tuple(Edge(a.id, b.id) for a, b in pairwise(nodes))
