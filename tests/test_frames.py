"""Frames kept as changes (`gradviz.render.frames.Frames`, issue 23: the frames of a
6,583-step network passed 5 GB as whole diagrams). Each frame made from the changes is the
frame a whole copy per step gives (the way they were made before, written out here as the
reference); iterating holds one frame at a time; the animation's timeline read from the
changes is the one read from every whole frame."""

from __future__ import annotations

import tracemalloc
from dataclasses import replace

import pytest

from gradviz.drawn import diagram_from_value, network_diagram, trace_frames
from gradviz.engine import Constant, Value, topological_order
from gradviz.expr import parse_program
from gradviz.names import node_names
from gradviz.render.animate import animation_diagram
from gradviz.render.diagram import STOPS, Diagram, band_of
from gradviz.render.trace_view import network_frames
from gradviz.tracing import network_trace, trace

EXPRESSIONS = [
    ("e = a*b; d = e + c; L = d*f", {"a": 2, "b": -3, "c": 10, "f": -2}),
    ("x*x + x", {"x": 3}),  # one value used three times: its credit adds up
    ("y = detach(a*b) + c*a; L = y*y + 2", {"a": 1, "b": 2, "c": 3}),  # dim, a constant
    ("tanh(w*x + b) * 2 - 1", {"x": 0.5, "w": -3, "b": 1}),
    ("relu(x) * 3 + x**2 + exp(-x)", {"x": 0.0}),  # a zero credit still arrives
]


def output_of(text: str, values: dict[str, float]) -> Value:
    return parse_program(text, {k: float(v) for k, v in values.items()}).output


def whole_frames(value: Value) -> list[Diagram]:
    """The reference: each frame a whole copy of the diagram with its states, grads and
    labels set, as `trace_frames` made them before issue 23."""
    steps = trace(value)
    order = topological_order(value)
    base = replace(diagram_from_value(value, order=order, grad=False), has_grad=True)
    names = node_names(order)
    labels = {base.id_of(v): names[v] for v in order if v.op is not None and not v.label}
    reached = {s.node for s in steps}
    dim = {base.id_of(v): "dim" for v in order if v not in reached and type(v) is not Constant}
    dim.update({base.op_id_of(v): "dim" for v in order if v not in reached and v.op is not None})
    received: dict[str, float] = {}
    done: dict[str, str] = {}
    frames = []
    for step in steps:
        vid, oid = base.id_of(step.node), base.op_id_of(step.node)
        if step.is_output:
            received[vid] = step.credit
        for c in step.contributions:
            if c.passes:
                received[base.id_of(c.parent)] = c.total
        states = {**dim, **done, vid: "current"}
        if oid is not None:
            states[oid] = "current"
            inputs = [p for p in step.node.parents if type(p) is not Constant]
            emphasis = [(base.id_of(p), oid) for p in inputs] + [(oid, vid)]
        else:
            emphasis = [(vid, base.op_id_of(s.consumer)) for s in step.sources]
        frame = base.with_states(states, emphasis)
        nodes = tuple(
            replace(n, grad=received.get(n.id), label=labels.get(n.id, n.label))
            if n.kind == "value"
            else n
            for n in frame.nodes
        )
        passed = {
            (base.id_of(c.parent), oid, c.position): f"+= {c.amount:g}" if c.passes else STOPS
            for c in step.contributions
        }
        edges = tuple(
            replace(e, label=passed[(e.source, e.target, e.index)])
            if (e.source, e.target, e.index) in passed
            else e
            for e in frame.edges
        )
        frames.append(replace(frame, nodes=nodes, edges=edges))
        done[vid] = "done"
        if oid is not None:
            done[oid] = "done"
    return frames


def drawing(frame: Diagram) -> tuple:
    """What a frame draws, titles and the formatting of numbers on edges left out (the
    reference writes them with `g`): node fields, and which edges are emphasised and
    labelled."""
    return (
        frame.nodes,
        tuple((e.source, e.target, e.index, e.emphasis, bool(e.label)) for e in frame.edges),
        frame.has_grad,
    )


@pytest.mark.parametrize(("text", "values"), EXPRESSIONS)
def test_each_frame_is_the_whole_copy_a_step_used_to_make(text, values) -> None:
    out = output_of(text, values)
    frames = trace_frames(out, trace(out))
    reference = whole_frames(out)
    assert len(frames) == len(reference)
    iterated = list(frames)
    for k, expected in enumerate(reference):
        assert drawing(frames[k]) == drawing(expected), k  # made on its own
        assert drawing(iterated[k]) == drawing(expected), k  # made from the one before
        assert frames[k] == iterated[k]  # titles and labels too
    assert frames[-1] == iterated[-1] and frames[-len(frames)] == iterated[0]
    assert frames[1:3] == iterated[1:3]
    with pytest.raises(IndexError):
        frames[len(frames)]


def test_network_frames_light_each_unit_and_its_edges_in_turn() -> None:
    from gradviz.model import network_loss_graph
    from gradviz.nn import Network
    from gradviz.spec import PRESETS, spec_from_mapping

    network = Network.from_spec(spec_from_mapping(PRESETS["xor"]))
    graph = network_loss_graph(network, (0.0, 1.0), 1.0)
    steps = network_trace(graph, "neuron")
    diagram = network_diagram(graph, "neuron")
    frames = network_frames(diagram, steps, "neuron")
    assert len(frames) == len(steps)
    for k, (frame, step) in enumerate(zip(frames, steps, strict=True)):
        lit = set(step.ids)
        earlier = {i for s in steps[:k] for i in s.ids} - lit
        assert {n.id for n in frame.nodes if n.state == "current"} == lit
        assert {n.id for n in frame.nodes if n.state == "done"} == earlier
        end = "source" if step.kind == "inputs" else "target"
        assert {(e.source, e.target) for e in frame.edges if e.emphasis} == {
            (e.source, e.target) for e in diagram.edges if getattr(e, end) in lit
        }
        assert frame == frames[k]


def test_iterating_holds_one_frame_at_a_time() -> None:
    """Walking 400 frames of a 640-node graph keeps about one frame in memory: whole
    copies kept in a list would hold 400."""
    text = " + ".join(f"tanh(w{i}*x{i})" for i in range(80))
    out = output_of(text, {})
    frames = trace_frames(out, trace(out))
    assert len(frames) >= 399 and len(frames.base.nodes) >= 638
    tracemalloc.start()
    try:
        one = frames[len(frames) // 2]
        size_of_one = tracemalloc.get_traced_memory()[0]
        del one
        tracemalloc.reset_peak()
        for frame in frames:
            assert frame.nodes
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 * size_of_one, (peak, size_of_one)


def timeline_from_whole_frames(frames: list[Diagram]) -> tuple:
    """The reference timeline: read from every whole frame, as before issue 23."""
    current, arrives, edges, labels, seen = {}, {}, {}, {}, {}
    for step, frame in enumerate(frames):
        for node in frame.nodes:
            if node.state == "current":
                current.setdefault(node.id, step)
            if node.kind == "value" and node.grad is not None and seen.get(node.id) != node.grad:
                seen[node.id] = node.grad
                arrives[node.id] = step
        for edge in frame.edges:
            key = (edge.source, edge.target, edge.index)
            if edge.emphasis:
                edges.setdefault(key, step)
            if edge.label and key not in labels:
                labels[key] = edge.label
    last = frames[-1]
    bands = {n.id: band.name for n in last.nodes if (band := band_of(n)) is not None}
    captions = tuple(frame.title or "" for frame in frames)
    return current, arrives, edges, labels, captions, bands


@pytest.mark.parametrize(("text", "values"), EXPRESSIONS)
def test_the_animation_reads_the_changes_as_it_read_every_frame(text, values) -> None:
    out = output_of(text, values)
    frames = trace_frames(out, trace(out))
    drawn, timeline = animation_diagram(frames)
    current, arrives, edges, labels, captions, bands = timeline_from_whole_frames(list(frames))
    assert (timeline.current, timeline.arrives, timeline.edges) == (current, arrives, edges)
    assert (timeline.captions, timeline.bands) == (captions, bands)
    assert {(e.source, e.target, e.index): e.label for e in drawn.edges if e.label} == labels
    assert drawn.nodes == frames[-1].nodes and drawn.title == max(captions, key=len)
