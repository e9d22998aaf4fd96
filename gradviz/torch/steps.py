"""The backward pass of a recorded PyTorch graph, step by step, as `trace --animate` and
the trace's live page step through a gradviz graph.

A step is a node whose credit is complete: every node it feeds has passed its gradient
back (the order autograd's engine may run them: from the loss back, each node after all
its consumers; ties in reverse graph order). Each step lights the node (and the op that
made it), shows its gradient and the edges it passes the gradient back along; the
caption says what it has and to whom it passes it, and marks the frontier (the first
node whose gradient is below a tenth of the output's, `gradviz.torch.draw.FRONTIER`).

Pure: a diagram of `gradviz.torch.diagram` in, the drawing to lay out once and its
`gradviz.render.animate.Timeline` out; `gradviz.output`'s renderers draw them.
"""

from __future__ import annotations

from dataclasses import replace

from gradviz.numbers import fmt
from gradviz.render.animate import Timeline
from gradviz.render.diagram import Diagram, Node, band_of, captioned, title_lines
from gradviz.torch.draw import FRONTIER


def _name(node: Node) -> str:
    return node.label or (f"{node.id} ({node.op})" if node.op else node.id)


def _grad_text(node: Node) -> str:
    if node.grad is not None:
        return f"grad {fmt(node.grad)}"
    if node.grad_rms is not None:
        return f"grad rms {fmt(node.grad_rms)}"
    return "no grad"


def backward_steps(diagram: Diagram) -> list[tuple[str, ...]]:
    """The steps of the backward pass: each the ids lit together (a result with the op
    that made it), from the loss back to the leaves."""
    ids = [n.id for n in diagram.nodes]
    position = {node_id: i for i, node_id in enumerate(ids)}
    made_by = {f"{n.id}_op": n.id for n in diagram.nodes if n.kind == "value"}
    made_by = {oid: vid for oid, vid in made_by.items() if oid in position}
    unit = {node_id: made_by.get(node_id, node_id) for node_id in ids}  # op -> its result
    consumers: dict[str, set[str]] = {u: set() for u in unit.values()}
    for e in diagram.edges:
        s, t = unit.get(e.source), unit.get(e.target)
        if s is not None and t is not None and s != t:
            consumers[s].add(t)
    waiting = {u: len(c) for u, c in consumers.items()}
    feeds: dict[str, set[str]] = {u: set() for u in consumers}
    for u, cs in consumers.items():
        for c in cs:
            feeds[c].add(u)
    ready = sorted((u for u, n in waiting.items() if n == 0), key=position.get)
    order: list[str] = []
    while ready:
        u = ready.pop()  # the latest in graph order first
        order.append(u)
        for s in feeds[u]:
            waiting[s] -= 1
            if waiting[s] == 0:
                ready.append(s)
                ready.sort(key=position.get)
    ops = {vid: oid for oid, vid in made_by.items()}
    return [(u, ops[u]) if u in ops else (u,) for u in order if u != "more"]


def backward_timeline(diagram: Diagram) -> tuple[Diagram, Timeline]:
    """The drawing to lay out once (every gradient shown, the longest caption as its
    last title line) and when each part of it appears."""
    nodes = {n.id: n for n in diagram.nodes}
    steps = backward_steps(diagram)
    current: dict[str, int] = {}
    arrives: dict[str, int] = {}
    edges: dict[tuple[str, str, int], int] = {}
    captions: list[str] = []
    for k, lit in enumerate(steps):
        for node_id in lit:
            current[node_id] = k
        main = nodes[lit[0]]
        if main.grad is not None or main.grad_rms is not None or main.extra_lines:
            arrives[main.id] = k
        inputs = []
        for e in diagram.edges:
            if e.target in lit and e.source not in lit:
                edges[(e.source, e.target, e.index)] = k
                inputs.append(_name(nodes[e.source]) if e.source in nodes else e.source)
        said = (
            f"Step {k + 1}/{len(steps)}: {_name(main)} has its whole gradient ({_grad_text(main)})"
        )
        said += f", passes it back to {', '.join(dict.fromkeys(inputs))}" if inputs else ", a leaf"
        if FRONTIER in main.extra_lines:
            said += " ▶ the frontier: below ⅒ of the output grad"  # (no quote: see _captions)
        captions.append(said)
    longest = max(captions, key=len) if captions else ""
    lines = [*title_lines(diagram), longest]
    drawn = replace(diagram, **captioned(None, *lines))
    bands = {n.id: band.name for n in diagram.nodes if (band := band_of(n)) is not None}
    return drawn, Timeline(len(steps), current, arrives, edges, tuple(captions), bands)


def animation(diagram: Diagram, *, rankdir: str | None = None, program=None) -> bytes:
    """The backward pass as one animated SVG (`gradviz.render.animate`), laid out once."""
    return _animated(diagram, rankdir, program)[0].encode("utf-8")


def page(diagram: Diagram, *, rankdir: str | None = None, program=None) -> str:
    """The live page: the picture fitted to its column (with zoom), and the backward
    pass stepped through with Previous, Play and Next (`gradviz.render.step_page`)."""
    from gradviz.render.step_page import step_page  # lazy: only for pages

    svg, timeline = _animated(diagram, rankdir, program)
    return step_page(svg, timeline, title="gradviz: a PyTorch backward pass")


def _animated(diagram: Diagram, rankdir: str | None, program) -> tuple[str, Timeline]:
    from gradviz.layout import PREFER_PURE_COST, run_dot  # lazy: start-up
    from gradviz.render.animate import animated_svg  # lazy: start-up
    from gradviz.render.diagram import draw_less, preferred_rankdir
    from gradviz.render.dot import layout_cost, to_dot

    drawn, timeline = backward_timeline(diagram)
    direction = rankdir or preferred_rankdir(diagram)
    svg = run_dot(
        to_dot(drawn, rankdir=direction),
        "svg",
        program=program,
        heavy=layout_cost(drawn) > PREFER_PURE_COST,
        smaller=draw_less(drawn),
    )
    return animated_svg(svg.decode("utf-8"), timeline), timeline
