"""The backward pass as one animated SVG (`gradviz trace EXPR -o backward.svg --animate`).

No script: CSS keyframes, which play where scripts may not run (inside `<img>`, as GitHub
shows README images). One layout holds every frame's content (each credit on the edge it
travels back along); after a caption saying the forward pass is done, the keyframes show
step by step which node is current, which are done, and each credit as it arrives. With
reduced motion, or without CSS animations, the picture is as written: the last frame.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, replace

from gradviz.render.diagram import Diagram, band_of
from gradviz.render.dot import credit_edge_key
from gradviz.render.frames import Frames
from gradviz.render.themes import themed_svg

STEP_SECONDS = 1.2  # each step of the backward pass
LEAD_STEPS = 1  # before step 1: the forward pass done, no credit yet
HOLD_STEPS = 2  # the last frame, before the loop starts again
# What the picture says before step 1: never a picture without words.
LEAD_CAPTION = "Forward pass done: every node has its data, no grad yet"


@dataclass(frozen=True)
class Timeline:
    """When each node is current (the step index, from 0), when each credit arrives, and
    the caption of each step; `steps` in all."""

    steps: int
    current: dict[str, int]  # node id -> its step
    arrives: dict[str, int]  # value node id -> the step its (whole) credit is in
    edges: dict[tuple[str, str, int], int]  # (source, target, index) -> its step
    captions: tuple[str, ...]
    bands: dict[str, str]  # value node id -> its band's name once its credit is in
    lead: str = ""  # the caption before step 1 (the forward pass done)

    @property
    def seconds(self) -> float:
        return (LEAD_STEPS + self.steps + HOLD_STEPS) * STEP_SECONDS

    def percent(self, step: int) -> str:
        """Where step `step` starts in the loop, as a keyframe offset."""
        share = (LEAD_STEPS + step) / (LEAD_STEPS + self.steps + HOLD_STEPS)
        return f"{100 * share:.4g}%"


def animation_diagram(frames: Frames) -> tuple[Diagram, Timeline]:
    """The diagram to lay out once (the last frame, with every step's credit on its edge
    and the longest caption as its title, so the layout has room for each) and when each
    part of it appears. Read from the frames' changes, one step at a time: no frame but
    the last is made."""
    if not frames:
        raise ValueError("an animation needs at least one frame")
    base = frames.base
    between: dict[tuple[str, str], list[tuple[str, str, int]]] = {}
    for e in base.edges:
        between.setdefault((e.source, e.target), []).append((e.source, e.target, e.index))
    values = {n.id for n in base.nodes if n.kind == "value"}
    seen: dict[str, object] = {
        n.id: n.grad for n in base.nodes if n.id in values and n.grad is not None
    }
    arrives = dict.fromkeys(seen, 0)  # a grad the drawing holds from the start
    current: dict[str, int] = {}
    edges: dict[tuple[str, str, int], int] = {}
    labels: dict[tuple[str, str, int], str] = {}
    for step, change in enumerate(frames.changes):
        for node_id in change.current:
            current.setdefault(node_id, step)
        for node_id, grad in change.grads:
            if node_id in values and grad is not None and seen.get(node_id) != grad:
                seen[node_id] = grad
                arrives[node_id] = step  # its credit so far: the last change is the whole
        for pair in change.emphasis:
            for key in between.get(pair, ()):
                edges.setdefault(key, step)
        for key, label in change.labels:
            if label:
                labels.setdefault(key, label)
        if step == 0:  # the edges' own labels show in every frame: from the first on
            for e in base.edges:
                if e.label:
                    labels.setdefault((e.source, e.target, e.index), e.label)
    captions = tuple(change.title or "" for change in frames.changes)
    last = frames[-1]
    drawn = replace(
        last,
        edges=tuple(
            replace(e, label=labels.get((e.source, e.target, e.index), e.label)) for e in last.edges
        ),
        title=max((*captions, LEAD_CAPTION), key=len),
    )
    bands = {n.id: band.name for n in last.nodes if (band := band_of(n)) is not None}
    return drawn, Timeline(len(frames), current, arrives, edges, captions, bands, LEAD_CAPTION)


PLAIN = "stroke:var(--gv-border);stroke-width:1px"
CURRENT = "stroke:var(--gv-current);stroke-width:3px"
DONE = "stroke:var(--gv-done);stroke-width:2px"
EDGE_ON = "stroke:var(--gv-current);stroke-width:2.5px"
HEAD_ON = "stroke:var(--gv-current);fill:var(--gv-current)"
HEAD_OFF = "stroke:var(--gv-border);fill:var(--gv-border)"
OPACITY = ("opacity:0", "opacity:1")  # hidden, shown


def _during(start: str, end: str | None, off: str, on: str) -> list[tuple[str, str]]:
    """Keyframes: `on` from `start` to `end` (None: to the end of the loop), else `off`."""
    return [("0%", off), (start, on)] + ([] if end is None else [(end, off)])


def animation_css(timeline: Timeline, prefix: str) -> tuple[str, dict[str, str]]:
    """The keyframes of each step and the rules that play them (only for readers who do
    not prefer reduced motion), and the class each node gets (node id -> class)."""
    frames: dict[str, str] = {}  # keyframes by name: each written once
    plays: list[str] = []

    def keyframes(name: str, looks: list[tuple[str, str]]) -> str:
        """`@keyframes name` from (offset, declarations) pairs, and the animation playing it."""
        steps = "".join(f"{offset}{{{look}}}" for offset, look in looks)
        frames.setdefault(name, f"@keyframes {name}{{{steps}}}")
        return f"{name} {timeline.seconds:g}s steps(1,end) infinite both"

    at = timeline.percent
    for step in range(timeline.steps):
        start, end = at(step), at(step + 1)
        edge, label, caption = (f"{prefix}{kind}{step}" for kind in "elc")
        until = None if step == timeline.steps - 1 else end  # the last: held, as written
        line = keyframes(f"{edge}p", _during(start, until, PLAIN, EDGE_ON))
        head = keyframes(f"{edge}h", _during(start, until, HEAD_OFF, HEAD_ON))
        shown = keyframes(label, _during(start, None, *OPACITY))
        told = keyframes(caption, _during(start, until, *OPACITY))
        plays += [
            f".{edge} path{{animation:{line}}}.{edge} polygon{{animation:{head}}}",
            f".{edge} text{{animation:{shown}}}.{caption}{{animation:{told}}}",
        ]
    if timeline.lead:  # shown until step 1 starts
        lead = keyframes(f"{prefix}lead", _during(at(0), None, "opacity:1", "opacity:0"))
        plays.append(f".{prefix}c-lead{{animation:{lead}}}")
    classes: dict[str, str] = {}
    styled: set[str] = set()  # the node classes whose rules are written
    for node_id in sorted(set(timeline.current) | set(timeline.arrives)):
        turn, arrives = timeline.current.get(node_id), timeline.arrives.get(node_id)
        band = timeline.bands.get(node_id) if arrives is not None else None
        name = f"{prefix}k{'' if turn is None else turn}-{'' if arrives is None else arrives}"
        name += f"-{band}" if band else ""
        classes[node_id] = name
        if name in styled:
            continue
        styled.add(name)
        shape, texts = [], []
        if turn is not None:
            looks = [("0%", PLAIN), (at(turn), CURRENT)]
            looks += [(at(turn + 1), DONE)] if turn < timeline.steps - 1 else []
            shape.append(keyframes(f"{prefix}n{turn}", looks))
        if band is not None:
            fill = [("0%", "fill:var(--gv-surface)"), (at(arrives), f"fill:var(--gv-{band}-fill)")]
            shape.append(keyframes(f"{prefix}f{arrives}{band}", fill))
            ink = [("0%", "fill:var(--gv-ink)"), (at(arrives), f"fill:var(--gv-{band}-ink)")]
            texts.append(keyframes(f"{prefix}i{arrives}{band}", ink))
        outline = f".{name} :is(polygon,ellipse,polyline,path)"  # (path: a rounded box)
        if shape:
            plays.append(f"{outline}:not([fill=none]){{animation:{','.join(shape)}}}")
            if turn is not None:  # a record's separators take the outline's colour
                plays.append(f"{outline}[fill=none]{{animation:{shape[0]}}}")
        if texts:
            plays.append(f".{name} text{{animation:{','.join(texts)}}}")
        if arrives is not None:  # the grad's own text appears with its credit
            shown = keyframes(f"{prefix}r{arrives}", _during(at(arrives), None, *OPACITY))
            plays.append(f".{name} text.{prefix}grad{{animation:{','.join([*texts, shown])}}}")
    css = "".join(frames.values())
    css += "@media (prefers-reduced-motion:no-preference){" + "".join(plays) + "}"
    return css, classes


# A node's or an edge's group as Graphviz writes it (to its first closing tag: a tooltip's
# group inside it closes there, and holds the shapes and texts).
_GROUP = re.compile(
    r'<g id="((?:node|edge)\d+)" class="(node|edge)">\n<title>(.*?)</title>(.*?)\n</g>', re.S
)
_TEXT = re.compile(r"<text\b([^>]*)>(.*?)</text>", re.S)


def animated_svg(svg: str, timeline: Timeline, prefix: str = "gv-") -> str:
    """The SVG of `animation_diagram` made to step through the backward pass; `prefix`
    names its classes and keyframes, and prefixes its ids (many on a page: `gv3-`)."""
    css, classes = animation_css(timeline, prefix)
    positions: dict[tuple[str, str], list[int]] = {}  # the input positions of each pair's edges
    for source, target, index in sorted(timeline.edges, key=lambda key: key[2]):
        positions.setdefault((source, target), []).append(index)
    unread = {pair: iter(at) for pair, at in positions.items()}

    def group(match: re.Match[str]) -> str:
        kind, title, body = match.group(2), html.unescape(match.group(3)), match.group(4)
        names = [kind]
        credit = credit_edge_key(title) if kind == "node" else None
        if credit is not None:  # the credit's text on its edge: shown with the edge
            step = timeline.edges.get(credit)
            names = ["credit"] + ([] if step is None else [f"{prefix}e{step}"])
        elif kind == "node":
            if title in classes:
                names.append(classes[title])
            if title in timeline.arrives:
                body = _mark_grad(body, f"{prefix}grad")
        else:
            source, target = title.split("->", 1)
            # an edge that carries a credit runs through its credit's node, either half
            split = credit_edge_key(source) or credit_edge_key(target)
            if split is not None:
                step = timeline.edges.get(split)
            else:
                # Graphviz writes the edges between two nodes in the DOT's order: by input
                # position (x*x: a, then b)
                index = next(unread.get((source, target), iter(())), None)
                step = timeline.edges.get((source, target, index))
            if step is not None:
                names.append(f"{prefix}e{step}")
        return (
            f'<g id="{match.group(1)}" class="{" ".join(names)}">\n'
            f"<title>{match.group(3)}</title>{body}\n</g>"
        )

    animated = _captions(_GROUP.sub(group, svg), timeline, prefix)
    return themed_svg(animated, prefix, extra_css=css)


def _mark_grad(body: str, name: str) -> str:
    """The node's `grad …` text, marked to appear with its credit."""

    def text(match: re.Match[str]) -> str:
        if html.unescape(match.group(2)).lstrip("\u2007").startswith("grad "):
            return f'<text class="{name}"{match.group(1)}>{match.group(2)}</text>'
        return match.group(0)

    return _TEXT.sub(text, body)


def _captions(svg: str, timeline: Timeline, prefix: str) -> str:
    """The title's text, one per step, each shown during its step (the last one as the
    picture is written), and the lead's before step 1."""
    longest = max((*timeline.captions, timeline.lead), key=len)
    escaped = html.escape(longest, quote=False)
    pattern = re.compile(r"<text\b([^>]*)>" + re.escape(escaped.replace("-", "&#45;")) + "</text>")
    match = pattern.search(svg) or re.search(
        r"<text\b([^>]*)>" + re.escape(escaped) + "</text>", svg
    )
    if match is None:
        return svg
    attributes = match.group(1)
    texts = []
    if timeline.lead:
        texts.append(
            f'<text class="{prefix}c-lead"{attributes} opacity="0">'
            f"{html.escape(timeline.lead, quote=False)}</text>"
        )
    for step, caption in enumerate(timeline.captions):
        hidden = "" if step == timeline.steps - 1 else ' opacity="0"'
        texts.append(
            f'<text class="{prefix}c{step}"{attributes}{hidden}>'
            f"{html.escape(caption, quote=False)}</text>"
        )
    return svg[: match.start()] + "\n".join(texts) + svg[match.end() :]
