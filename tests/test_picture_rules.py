"""The rules of issue 12 that text can show: one name per node in every format, a neuron
view drawn as textbooks draw it, the direction chosen from the graph's shape."""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pytest
from graphviz_support import needs_system_dot

from gradviz import Value
from gradviz.drawn import diagram_from_value, network_diagram, to_dot, to_json, to_mermaid, to_text
from gradviz.layout import dot_programs
from gradviz.model import network_loss_graph
from gradviz.nn import Network
from gradviz.render.colours import band_for
from gradviz.render.diagram import preferred_rankdir
from gradviz.render.dot import MAX_PEN, MIN_PEN
from gradviz.tracing import trace


def unnamed() -> Value:
    """(a*b)+c: the product has no name; it is n2 in topological order."""
    a, b, c = Value(2.0, label="a"), Value(3.0, label="b"), Value(1.0, label="c")
    out = a * b + c
    out.label = "L"
    return out


def test_an_unnamed_node_has_the_same_name_in_every_format():
    out = unnamed()
    steps = trace(out)  # runs the backward pass too
    named = {step.name for step in steps}
    assert "n2" in named  # the trace calls the product n2 …
    diagram = diagram_from_value(out)
    assert diagram.node("n2").label == ""  # … and it is unnamed
    assert '"n2" [shape="record", label="{ n2 | data 6 | grad 1 }"' in to_dot(diagram)
    assert 'n2["n2 │ data\u202f6 │ grad\u202f1"]' in to_mermaid(diagram)
    assert "n2 ← *  data 6  grad 1" in to_text(diagram)
    assert [n["id"] for n in json.loads(to_json(diagram))["nodes"]].count("n2") == 1
    # Mermaid's ids are the diagram's: its n2 is the same node as DOT's and JSON's
    assert re.search(r"^    n2_op --> n2$", to_mermaid(diagram), re.M)


def _graph(layers: list[int], seed: int = 1):
    network = Network(layers, ["tanh"] * (len(layers) - 2) + ["sigmoid"], "mse")
    rng = np.random.default_rng(seed)
    for layer in network.layers:
        for neuron in layer.neurons:
            for w in neuron.weights:
                w.data = float(rng.normal())
    return network_loss_graph(network, (0.5, -1.0), y=1.0)


def test_the_neuron_view_has_an_edge_per_weight_its_width_and_colour_from_the_weight():
    graph = _graph([2, 3, 1])
    diagram = network_diagram(graph, "neuron")
    text = to_dot(diagram)
    weights = [w for layer in graph.network.layers for n in layer.neurons for w in n.weights]
    largest = max(abs(w.data) for w in weights)
    for layer in graph.network.layers:
        for neuron in layer.neurons:
            target = neuron.name.replace(".", "_")
            for w in neuron.weights:
                width = MIN_PEN + (MAX_PEN - MIN_PEN) * abs(w.data) / largest
                colour = band_for(abs(w.grad)).line
                pattern = (
                    rf'-> "{target}" \[penwidth="{width:.2f}", arrowsize="0.4", color="{colour}"'
                )
                assert re.search(pattern, text), (neuron.name, pattern)
    # plain boxes (edges end at their border), no text on the edges, the key explains them
    assert 'shape="record"' not in "".join(ln for ln in text.splitlines() if "L1_N" in ln)
    assert "label=" not in "".join(ln for ln in text.splitlines() if " -> " in ln)
    assert "edges: width |w|, colour ∂L/∂w" in text
    # biases visible in each neuron
    assert all(
        any(x.startswith("b ") for x in n.extra_lines) for n in diagram.nodes if n.kind == "group"
    )


def test_neurons_stand_in_order_in_their_layer():
    text = to_dot(network_diagram(_graph([2, 4, 1]), "neuron"))
    assert 'ordering="out"' in text
    assert '"L1_N1" -> "L1_N2" -> "L1_N3" -> "L1_N4" [style=invis]' in text
    assert "subgraph cluster_0" not in text.split('"L1_N1"')[0]  # a rank, not a box


@pytest.mark.parametrize("kind", ["pure", pytest.param("system", marks=needs_system_dot)])
def test_neurons_are_laid_out_n1_first(kind):
    programs = [p for p in dot_programs() if p.kind == kind]
    assert programs, f"no {kind} Graphviz here"
    text = to_dot(network_diagram(_graph([2, 6, 1]), "neuron"))
    plain = subprocess.run(
        [programs[0].path, "-Tplain"], input=text.encode(), capture_output=True, check=True
    ).stdout.decode()
    y = {m[1]: float(m[2]) for m in re.finditer(r'^node "?(L1_N\d)"? \S+ (\S+)', plain, re.M)}
    assert sorted(y, key=lambda name: -y[name]) == [f"L1_N{i}" for i in range(1, 7)]


def test_the_mermaid_neuron_view_styles_each_weight():
    diagram = network_diagram(_graph([2, 3, 1]), "neuron")
    text = to_mermaid(diagram)
    styles = re.findall(
        r"^    linkStyle (\d+) stroke:(#[0-9a-f]{6}),stroke-width:([\d.]+)px", text, re.M
    )
    assert len(styles) == 2 * 3 + 3 * 1
    assert max(float(w) for _, _, w in styles) == pytest.approx(5.0)


def test_wide_graphs_are_drawn_top_to_bottom():
    x = Value(1.0, label="x")
    chain = x
    for _ in range(3):
        chain = chain * x
    assert preferred_rankdir(diagram_from_value(chain)) == "LR"  # short: as a formula reads
    long = x
    for i in range(12):
        long = (long * Value(1.0, label=f"w{i}")).tanh()
    assert preferred_rankdir(diagram_from_value(long)) == "TB"
