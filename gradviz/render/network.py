"""A saved network's loss graph drawn at three levels: every scalar, a node per neuron,
or a node per layer (with its gradient statistics), so that a 10-layer network stays
readable. Pure: a `gradviz.model.LossGraph` in, a `Diagram` out (`model_diagram` also
reads the model file, for `gradviz draw --model`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gradviz.errors import InputError
from gradviz.model import LossGraph, load_model, network_loss_graph, parse_input
from gradviz.nn import LOSS_FUNCTIONS, layer_samples
from gradviz.numbers import fmt
from gradviz.render.diagram import Diagram, Edge, Node, diagram_from_value
from gradviz.stats import diagnose

LEVELS = ("scalar", "neuron", "layer")
AUTO_NODE_LIMIT = 400  # above this many scalar nodes, `auto` draws neurons instead


def choose_level(
    graph: LossGraph, level: str = "auto", limit: int = AUTO_NODE_LIMIT
) -> tuple[str, str | None]:
    """The level to draw and, when chosen automatically, a note saying so."""
    if level != "auto":
        return level, None
    size = graph.size
    if size <= limit:
        return "scalar", None
    neurons = sum(graph.network.sizes[1:]) + graph.network.sizes[0] + 2
    if neurons <= limit:
        return "neuron", f"{size} nodes is more than {limit}: drawn one node per neuron (--level)"
    return "layer", f"{size} nodes is more than {limit}: drawn one node per layer (--level)"


def network_diagram(
    graph: LossGraph, level: str = "scalar", title: str | None = None, grad: bool = True
) -> Diagram:
    """The drawing of one example's loss: every scalar (`scalar`), a node per neuron with
    its pre-activation, activation and grads (`neuron`), or a node per layer with its
    gradient statistics (`layer`). `grad=False` leaves every gradient out, in the nodes'
    text too: data alone."""
    if level == "scalar":
        return diagram_from_value(graph.loss, grad=grad, clusters=graph.clusters, title=title)
    if level == "neuron":
        return _neuron_diagram(graph, title, grad)
    if level == "layer":
        return _layer_diagram(graph, title, grad)
    raise InputError(f"unknown level {level!r}; expected one of {', '.join(LEVELS)}")


def _input_nodes(graph: LossGraph, grad: bool) -> list[Node]:
    return [
        Node(
            id=f"x{j}",
            kind="value",
            label=f"x{j}",
            data=x.data,
            grad=x.grad if grad else None,
            role="input",
        )
        for j, x in enumerate(graph.built.inputs)
    ]


def _loss_nodes(graph: LossGraph, source: str, grad: bool) -> tuple[list[Node], list[Edge]]:
    built = graph.built
    kind = graph.network.loss
    formula = LOSS_FUNCTIONS[kind].formula
    nodes = [
        Node(
            id="y",
            kind="value",
            label="y",
            data=built.target.data,
            grad=built.target.grad if grad else None,
            role="input",
            cluster="loss",
        ),
        Node(
            id="loss",
            kind="value",
            label="loss",
            data=built.loss.data,
            grad=built.loss.grad if grad else None,
            extra_lines=(f"{kind}: {formula}",),
            role="output",
            cluster="loss",
        ),
    ]
    return nodes, [Edge(source, "loss"), Edge("y", "loss", index=1)]


def _neuron_diagram(graph: LossGraph, title: str | None, grad: bool = True) -> Diagram:
    built, network = graph.built, graph.network
    nodes = _input_nodes(graph, grad)
    edges: list[Edge] = []
    sources = [n.id for n in nodes]
    for layer, pre, act in zip(network.layers, built.pre, built.act, strict=True):
        ids = []
        label_edges = layer.n_in * layer.n_out <= 32
        for neuron, z, a in zip(layer.neurons, pre, act, strict=True):
            nid = neuron.name.replace(".", "_")
            ids.append(nid)
            weights = ", ".join(fmt(w.data, 3) for w in neuron.weights)
            wgrads = ", ".join(fmt(w.grad, 3) for w in neuron.weights)
            bias = neuron.bias
            lines = [f"z {fmt(z.data)}  ∂L/∂z {fmt(z.grad)}" if grad else f"z {fmt(z.data)}"]
            if a is not z:
                lines.append(f"{layer.activation}(z) {fmt(a.data)}")
            lines.append(
                f"b {fmt(bias.data)}  ∂L/∂b {fmt(bias.grad)}" if grad else f"b {fmt(bias.data)}"
            )
            detail = f"{neuron.name}\nweights: {weights}\n"
            if grad:
                detail += f"weight grads: {wgrads}\nbias: {fmt(bias.data)} (grad {fmt(bias.grad)})"
            else:
                detail += f"bias: {fmt(bias.data)}"
            nodes.append(
                Node(
                    id=nid,
                    kind="group",
                    label=neuron.name,
                    data=a.data,
                    grad=a.grad if grad else None,
                    detail=detail,
                    cluster=layer.name,
                    extra_lines=tuple(lines),
                    role="group",
                )
            )
            for k, (source, w) in enumerate(zip(sources, neuron.weights, strict=True)):
                label = f"w{k} {fmt(w.data, 3)}" if label_edges else None
                edges.append(Edge(source, nid, label=label, index=k))
        sources = ids
    loss_nodes, loss_edges = _loss_nodes(graph, sources[0], grad)
    return Diagram(tuple(nodes + loss_nodes), tuple(edges + loss_edges), has_grad=grad, title=title)


def _layer_diagram(graph: LossGraph, title: str | None, grad: bool = True) -> Diagram:
    built, network = graph.built, graph.network
    samples = layer_samples(network, np.array([graph.x]), np.array([graph.y]))
    diagnosis = diagnose(samples)
    inputs = ", ".join(f"x{j} {fmt(x.data)}" for j, x in enumerate(built.inputs))
    nodes = [Node(id="inputs", kind="group", label="inputs", extra_lines=(inputs,), role="group")]
    edges: list[Edge] = []
    source = "inputs"
    for layer, stats, acts in zip(network.layers, diagnosis.layers, built.act, strict=True):
        units = f"{layer.n_out} {layer.activation} unit{'s' if layer.n_out != 1 else ''}"
        lines = [f"{units}, {stats.n_params} params"]
        if grad:
            rel = fmt(stats.rel) if stats.rel is not None else "—"
            lines += [
                f"grad shown: rms ∂L/∂w; max |∂L/∂w| {fmt(stats.max_abs)}",
                f"rel {rel}  status {stats.status}",
            ]
        else:
            lines.append("outputs " + ", ".join(fmt(a.data, 3) for a in acts[:8]))
            if len(acts) > 8:
                lines[-1] += ", …"
        nodes.append(
            Node(
                id=layer.name,
                kind="group",
                label=layer.name,
                grad=stats.rms if grad else None,  # the colour follows the rms gradient
                detail=f"{layer.name}: {stats.reason or stats.status}" if grad else layer.name,
                extra_lines=tuple(lines),
                role="group",
            )
        )
        edges.append(Edge(source, layer.name))
        source = layer.name
    loss_nodes, loss_edges = _loss_nodes(graph, source, grad)
    return Diagram(tuple(nodes + loss_nodes), tuple(edges + loss_edges), has_grad=grad, title=title)


def model_diagram(
    path: Path | str,
    input_text: str | None,
    target: float | None = None,
    level: str = "auto",
    grad: bool = True,
) -> tuple[Diagram, str | None]:
    """What `gradviz draw --model` draws: one example's loss through a saved model, at
    the level asked for (`auto` collapses big networks), and a note when it collapsed."""
    model = load_model(path)
    if input_text is None:
        raise InputError("--model needs --input: the example to draw, e.g. --input 0,1")
    x = parse_input(input_text, model.spec.layers[0])
    graph = network_loss_graph(model, x, target)
    chosen, note = choose_level(graph, level)
    shown = ", ".join(fmt(v) for v in graph.x)
    title = f"{model.spec.name}: loss of input ({shown}), target {fmt(graph.y)}"
    return network_diagram(graph, chosen, title, grad), note
