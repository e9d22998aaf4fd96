"""The backward pass of a drawing whose gradients are known already (a recorded PyTorch
graph, `gradviz.torch`), step by step, and a page that steps through it.

A step is a node whose credit is complete: every node it feeds has passed its gradient
back (autograd's order: from the loss back, ties in reverse graph order). It lights the
node, the op that made it and the edges it passes its gradient along; the caption marks
the frontier (`FRONTIER`). `backward_timeline` gives the drawing to lay out once and its
`Timeline`, which `animate.animated_svg` plays as CSS keyframes; the page (zoom, Previous,
Play, Next, the caption) only pauses and seeks that animation, so they cannot disagree.
"""

from __future__ import annotations

import html
from dataclasses import replace

from gradviz.numbers import fmt
from gradviz.render.animate import LEAD_STEPS, STEP_SECONDS, Timeline
from gradviz.render.diagram import FRONTIER, Diagram, Node, band_of, captioned, title_lines
from gradviz.render.html import (
    HEAD,
    asset_text,
    csp_hash,
    inline_svg,
    json_for_script,
    style_sources,
)


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
    position = {n.id: i for i, n in enumerate(diagram.nodes)}
    made_by = {
        f"{n.id}_op": n.id for n in diagram.nodes if n.kind == "value" and f"{n.id}_op" in position
    }
    unit = {node_id: made_by.get(node_id, node_id) for node_id in position}  # op -> its result
    consumers: dict[str, set[str]] = {u: set() for u in unit.values()}
    feeds: dict[str, set[str]] = {u: set() for u in unit.values()}
    for e in diagram.edges:
        s, t = unit.get(e.source), unit.get(e.target)
        if s is not None and t is not None and s != t:
            consumers[s].add(t)
            feeds[t].add(s)
    waiting = {u: len(c) for u, c in consumers.items()}
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


def _said(diagram: Diagram, steps: list[tuple[str, ...]]) -> list[tuple[str, str]]:
    """Each step in words: short, for the picture's caption (it must fit an 800 px page),
    and whole, for the page's text: what the node has and to whom it passes it."""
    nodes = {n.id: n for n in diagram.nodes}
    said = []
    for k, lit in enumerate(steps):
        main = nodes[lit[0]]
        inputs = [
            _name(nodes[e.source]) if e.source in nodes else e.source
            for e in diagram.edges
            if e.target in lit and e.source not in lit
        ]
        head = f"Step {k + 1}/{len(steps)}: {_name(main)}"
        short = f"{head}, {_grad_text(main)}"
        whole = f"{head} has its whole gradient ({_grad_text(main)})"
        whole += f", passes it back to {', '.join(dict.fromkeys(inputs))}" if inputs else ", a leaf"
        if FRONTIER in main.extra_lines:  # (no quote in a caption: see animate._captions)
            short += " ▶ the frontier"
            whole += " ▶ the frontier: below ⅒ of the output grad"
        said.append((short, whole))
    return said


def backward_sentences(diagram: Diagram) -> list[str]:
    """Each step of the backward pass in a sentence (the page's text)."""
    return [whole for _, whole in _said(diagram, backward_steps(diagram))]


def backward_timeline(diagram: Diagram) -> tuple[Diagram, Timeline]:
    """The drawing to lay out once (every gradient shown, the longest short caption as its
    last title line) and when each part of it appears."""
    steps = backward_steps(diagram)
    current: dict[str, int] = {}
    arrives: dict[str, int] = {}
    edges: dict[tuple[str, str, int], int] = {}
    node = {n.id: n for n in diagram.nodes}
    for k, lit in enumerate(steps):
        for node_id in lit:
            current[node_id] = k
        main = node[lit[0]]
        if main.grad is not None or main.grad_rms is not None or main.extra_lines:
            arrives[main.id] = k
        for e in diagram.edges:
            if e.target in lit and e.source not in lit:
                edges[(e.source, e.target, e.index)] = k
    captions = [short for short, _ in _said(diagram, steps)]
    longest = max(captions, key=len) if captions else ""
    drawn = replace(diagram, **captioned(None, *title_lines(diagram), longest))
    bands = {n.id: band.name for n in diagram.nodes if (band := band_of(n)) is not None}
    return drawn, Timeline(len(steps), current, arrives, edges, tuple(captions), bands)


BODY = """<body>
<h1>{heading}</h1>
<div class="buttons"><button type="button" id="prev">◀ Previous</button>
<button type="button" id="play">Play</button>
<button type="button" id="next">Next ▶</button>
<span id="step-count" aria-live="polite"></span>
<span>zoom</span><button type="button" data-zoom="fit">fit</button>
<button type="button" data-zoom="1">100 %</button>
<button type="button" data-zoom="2">200 %</button></div>
<pre id="step-text" aria-live="polite"></pre>
<figure id="graph" class="fit" aria-label="the computation graph">{svg}</figure>
<script type="application/json" id="gv-steps">{data}</script>
<script>{script}</script>
</body>
</html>
"""


def step_page(svg: str, timeline: Timeline, *, title: str, sentences: list[str]) -> str:
    """The page for the animated `svg` of `timeline`, opening on its first step, each step
    said in its sentence (`backward_sentences`)."""
    css, script = asset_text("steps.css"), asset_text("steps.js")
    data = {
        "steps": timeline.steps,
        "lead": LEAD_STEPS,
        "seconds": STEP_SECONDS,
        "captions": sentences,
        "start": 0,
        # the node lit in each step (its first: a result, not the op that made it)
        "lit": [
            min((i for i, k in timeline.current.items() if k == step), key=len, default="")
            for step in range(timeline.steps)
        ],
    }
    csp = (
        f"default-src 'none'; script-src '{csp_hash(script)}'; "
        f"style-src {style_sources(css, svg)}; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    head = HEAD.format(csp=csp, title=html.escape(title), css=css)
    return head + BODY.format(
        heading=html.escape(title), svg=inline_svg(svg), data=json_for_script(data), script=script
    )
