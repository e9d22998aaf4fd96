"""Mermaid flowchart text for a diagram, ready for GitHub, GitLab and most doc sites.

Mermaid has no general escape character, so every label is quoted and each character
that Mermaid (or the HTML it renders into) would act on is written as one of its
entity codes (`#quot;`, `#35;`, …). Node ids are generated (`n0`, `n1`, …) rather
than taken from names, since a node called `end` or `style` would end a block or start
a statement. Control characters never reach the text (see `gradviz.text.printable`), so no
label can start a new line such as `%%{init}%%` or `click`. Tests run the output
through the real Mermaid parser and compare the labels it reads.

A title is a node of its own (`caption`, bold, no border, first so that it stands at
the top or the left), written with the same entity codes: Mermaid's front-matter title
would show them undecoded and garble `& < >`, while a label shows exactly what was typed.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from gradviz.errors import RenderError
from gradviz.numbers import DEFAULT_PRECISION
from gradviz.render import colours
from gradviz.render.colours import ALL_BANDS, EDGE_KEY, LEGEND_TITLE, Band
from gradviz.render.diagram import (
    STOPS,
    Diagram,
    Node,
    band_of,
    check_rankdir,
    constant_text,
    draw_less,
    number_text,
)
from gradviz.text import printable

# Mermaid refuses to render more edges than this (its `maxEdges` default).
MAX_EDGES = 500
# The picture to write instead above it: a Graphviz format, as `render(diagram, fmt='svg')`
# gives it in Python (the CLI words it per command: `-o graph.svg`, trace's `--format svg`).
AS_SVG = "fmt='svg'"

_ENTITIES = str.maketrans(
    {
        "#": "#35;",  # first in meaning: every other code starts with it
        '"': "#quot;",
        "<": "#lt;",
        ">": "#gt;",
        "&": "#amp;",
        "\\": "#92;",
        "`": "#96;",
        "%": "#37;",  # `%%` starts a comment or a directive
        "|": "#124;",  # edge-label delimiter
        "{": "#123;",
        "}": "#125;",
        "[": "#91;",
        "]": "#93;",
        "(": "#40;",
        ")": "#41;",
        ";": "#59;",
        # Mermaid drops the `;` of an entity on a line matching `style.*:\S*#.*;` (meant
        # for style statements), so a label never holds a bare colon.
        ":": "#58;",
    }
)

SEPARATOR = " │ "  # between name, data and grad, as in the Graphviz record

# The classes of nodes without a band (white, as in Graphviz, not Mermaid's own lavender)
# and of a trace's states, in the order they are written.
_PLAIN_STYLE = "fill:#ffffff,stroke:#555555,color:#000000"
_CLASS_STYLES = {
    "op": _PLAIN_STYLE,
    "plain": _PLAIN_STYLE,
    "current": f"stroke:{colours.CURRENT},stroke-width:3px",
    "done": f"stroke:{colours.DONE},stroke-width:2px",
    "dim": f"fill:#ffffff,stroke:{colours.DIM_BORDER},color:{colours.DIM_INK}",
}


def escape(text: str) -> str:
    """User text as it may stand between double quotes in a Mermaid label. mermaid.js reads
    any line holding `direction TB` (or LR, …) as a direction statement, quotes or not:
    the word's `o` is written as an entity code, so that no label holds it."""
    escaped = printable(text).translate(_ENTITIES)
    return _DIRECTION.sub(lambda m: f"{m[1]}#{ord(m[2])};{m[3]}", escaped)


_DIRECTION = re.compile(r"(directi)(o)(n)", re.IGNORECASE)


_SAFE_ID = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_KEY_BOX_STYLE = "fill:none,stroke:none,color:#000000"
_CAPTION_STYLE = "fill:none,stroke:none,color:#000000,font-weight:bold"


# Mermaid wraps a long label at spaces and hyphens: a number and its name are held
# together by a narrow no-break space, and a minus sign inside a number (`3.505e-14`) is
# the non-breaking hyphen, so `grad 3.505e-14` never splits across lines. (Not U+00A0:
# an HTML serializer writes it as `&nbsp;`, which makes Mermaid's SVG invalid XML.)
NB_SPACE = "\u202f"
# A minus that follows a digit or an `e` (`1e-6`); a leading minus stays ASCII, so that a
# copied `-3` is still a number (no line break falls inside `-3`).
_EXPONENT_SIGN = re.compile(r"(?<=[0-9.e])-")
NB_HYPHEN = "\u2011"


def whole(text: str) -> str:
    """Text escaped for a label that may not break inside it: spaces and exponent signs
    made non-breaking (after escaping, which would show them as escapes)."""
    return _EXPONENT_SIGN.sub(NB_HYPHEN, escape(text)).replace(" ", NB_SPACE)


# Mermaid words that cannot be node ids; our ids (n3, n3_op, x0, L1_N2, loss) never are,
# but a renamed diagram might hold one: those get a generated id instead.
_RESERVED = {"end", "graph", "flowchart", "subgraph", "style", "class", "classDef", "click"}
# The title's node id: not an id of ours (n0, key_x, c0) nor a keyword.
_RESERVED |= {"linkStyle", "direction", "default", "call", "href", CAPTION := "caption"}


def mermaid_ids(diagram: Diagram) -> dict[str, str]:
    """Each node's Mermaid id: its diagram id (`n3`, as DOT, JSON and the trace name it)
    when Mermaid can take it as one, else `m<i>`."""
    ids: dict[str, str] = {}
    for i, node in enumerate(diagram.nodes):
        safe = _SAFE_ID.fullmatch(node.id) and node.id not in _RESERVED
        ids[node.id] = node.id if safe and not node.id.startswith("key_") else f"m{i}"
    return ids


def _label(node: Node, precision: int, stacked: bool = False) -> str:
    """name │ data │ grad on one line, or (`stacked`, for top-to-bottom pictures, as the
    Graphviz records stack their fields) one field a line, so the picture stays narrow."""
    constant = constant_text(node, precision)
    if constant is not None:
        return whole(constant)
    parts = []
    if node.label:
        parts.append(escape(node.label))
    elif node.kind == "value":  # unnamed: its id, as DOT, JSON and the trace name it
        parts.append(escape(node.id))
    if node.data is not None:
        parts.append(whole(f"data {number_text(node.data, precision)}"))
    if node.grad is not None:
        parts.append(whole(f"grad {number_text(node.grad, precision)}"))
    text = ("<br>" if stacked else SEPARATOR).join(parts)
    if node.extra_lines:
        text = "<br>".join([text, *(escape(line) for line in node.extra_lines)])
    return text or " "


# A one-character op (`*`, `+`) in a circle as wide as its text is a dot of 13 px: padded
# with em spaces (as entities: Mermaid trims the label's own spaces) to about 40 px.
OP_PAD = "#8195;"


def _op_label(node: Node, precision: int) -> str:
    if node.ordered:  # a − b: which input is which, as the edges into it say
        return whole(f"a {node.label} b")
    label = _label(node, precision)
    return f"{OP_PAD}{label}{OP_PAD}" if len(node.label) <= 2 else label


def _class_def(band: Band) -> str:
    stroke = f"stroke:{band.border},stroke-width:{band.border_width:g}px"
    if band.dashed:
        stroke += ",stroke-dasharray:4 3"
    return f"    classDef {band.name} fill:{band.fill},{stroke},color:{band.ink}\n"


def check_edges(diagram: Diagram) -> None:
    """Raise RenderError above Mermaid's edge limit, where it would refuse to draw (checked
    before a sequence of frames is drawn too: every frame has the graph's edges)."""
    if len(diagram.edges) > MAX_EDGES:
        less = draw_less(diagram)
        raise RenderError(
            f"the graph has {len(diagram.edges)} edges; Mermaid refuses more than {MAX_EDGES}",
            hint=f"Write SVG instead ({{{AS_SVG}}}), or {less.template}.",
            options=(AS_SVG, *less.options),
        )


def to_mermaid(
    diagram: Diagram,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    legend: bool = True,
) -> str:
    """A `flowchart`, one node per diagram node, coloured through `classDef`; RenderError
    above Mermaid's edge limit."""
    check_rankdir(rankdir)
    check_edges(diagram)
    ids = mermaid_ids(diagram)
    stacked = rankdir in ("TB", "BT")
    lines = [f"flowchart {rankdir}\n"]
    if diagram.title:
        lines.append(f'    {CAPTION}["{escape(diagram.title)}"]\n')

    classes: dict[str, list[str]] = {}  # class name -> mermaid ids, in node order

    def node_line(node: Node, indent: str) -> str:
        mid = ids[node.id]
        band = band_of(node)
        if node.kind == "op":
            classes.setdefault("op", []).append(mid)
            return f'{indent}{mid}(("{_op_label(node, precision)}"))\n'
        classes.setdefault(band.name if band is not None else "plain", []).append(mid)
        if node.state is not None:
            classes.setdefault(node.state, []).append(mid)
        shape = ('(["', '"])') if node.kind == "group" else ('["', '"]')
        return f"{indent}{mid}{shape[0]}{_label(node, precision, stacked)}{shape[1]}\n"

    body = [node_line(node, "    ") for node in diagram.nodes if node.cluster is None]
    for i, name in enumerate(diagram.clusters):
        body.append(f'    subgraph c{i} ["{escape(name)}"]\n')
        body += [node_line(node, "        ") for node in diagram.nodes if node.cluster == name]
        body.append("    end\n")
    links: list[str] = []
    ordered = {n.id for n in diagram.nodes if n.ordered}
    for edge in diagram.edges:
        if edge.target in ordered and edge.index < 2:  # which input of a − b it is
            role = "ab"[edge.index]
            edge = replace(edge, label=f"{role}: {edge.label}" if edge.label else role)
        # thick for the trace's current step; dashed where the credit ends (detach)
        arrow = "==>" if edge.emphasis else "-.->" if edge.label == STOPS else "-->"
        text = f'|"{escape(edge.label)}"|' if edge.label else ""
        links.append(f"    {ids[edge.source]} {arrow}{text} {ids[edge.target]}\n")
    link_styles = _weight_styles(diagram)

    used = [b for b in ALL_BANDS if b.name in classes]
    keyed = legend and diagram.has_grad and bool(used)
    if keyed:
        keys, key_links = _legend(diagram, ids, rankdir, used)
        # mermaid.js counts the key's invisible links as edges too: a graph near the
        # limit is drawn without its key rather than refused by the reader's mermaid.js
        if len(diagram.edges) + sum(line.count("~~~") for line in key_links) > MAX_EDGES:
            keyed = False
        else:
            lines += keys
            links += key_links  # after the graph's own: linkStyle numbers those first
    lines += body + links + link_styles
    lines += [_class_def(band) for band in used]
    if diagram.title:
        lines.append(f"    classDef {CAPTION} {_CAPTION_STYLE}\n")
    if keyed:
        lines.append(f"    classDef keytitle {_KEY_BOX_STYLE}\n")
    if diagram.title:
        lines.append(f"    class {CAPTION} {CAPTION}\n")
    lines += [f"    classDef {k} {style}\n" for k, style in _CLASS_STYLES.items() if k in classes]
    for name in [b.name for b in used] + list(_CLASS_STYLES):
        if name in classes:
            lines.append(f"    class {','.join(classes[name])} {name}\n")
    return "".join(lines)


def _legend(
    diagram: Diagram, ids: dict[str, str], rankdir: str, used: list[Band]
) -> tuple[list[str], list[str]]:
    """The key to the colours used, as one row of boxes declared first (at the top; the
    whole scale would be wider than most graphs), and the invisible links that make it a
    row: left to right a chain of keys, top to bottom the keys above the graph's sources."""
    keys = ["key_title", *(f"key_{band.name}" for band in used)]
    lines = [f'    key_title["{whole(LEGEND_TITLE)}"]:::keytitle\n']
    lines += [f'    key_{b.name}["{whole(b.text)}"]:::{b.name}\n' for b in used]
    if any(edge.weight is not None for edge in diagram.edges):  # a network's weights
        keys.append("key_edges")
        # broken only after its comma: "∂L/∂w" is held whole by a word joiner after "/"
        edge_key = ", ".join(whole(part) for part in EDGE_KEY.split(", ")).replace("/", "/\u2060")
        lines.append(f'    key_edges["{edge_key}"]:::keytitle\n')
    if rankdir in ("LR", "RL"):
        return lines, [f"    {' ~~~ '.join(keys)}\n"]
    targets = {e.target for e in diagram.edges}
    sources = [ids[n.id] for n in diagram.nodes if n.id not in targets]
    return lines, [f"    {keys[-1]} ~~~ {source}\n" for source in sources]


def _weight_styles(diagram: Diagram) -> list[str]:
    """`linkStyle` lines for a network's weight edges: width from |w|, colour from the
    gradient through the edge, on the shared scale (see dot.pen_width)."""
    largest = max((abs(e.weight) for e in diagram.edges if e.weight is not None), default=0.0)
    lines = []
    for i, edge in enumerate(diagram.edges):
        if edge.weight is None:
            continue
        share = abs(edge.weight) / largest if largest > 0 else 0.0
        width = 0.8 + 4.2 * (share if math.isfinite(share) else 1.0)
        look = f"stroke-width:{width:.1f}px"
        band = edge.band
        if band is not None:
            look = f"stroke:{band.line}," + look + (",stroke-dasharray:4 3" if band.dashed else "")
        lines.append(f"    linkStyle {i} {look}\n")
    return lines


def to_markdown(diagram: Diagram, **options: object) -> str:
    """The flowchart in a fenced ```mermaid block: paste it into a GitHub README."""
    return "```mermaid\n" + to_mermaid(diagram, **options) + "```\n"  # type: ignore[arg-type]
