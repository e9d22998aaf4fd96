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

from gradviz.errors import RenderError
from gradviz.numbers import DEFAULT_PRECISION
from gradviz.render.diagram import (
    BAD_BAND,
    BAD_BORDER,
    BANDS,
    Band,
    Diagram,
    Node,
    band_of,
    constant_text,
    draw_less,
    number_text,
)
from gradviz.text import printable

DIRECTIONS = ("LR", "TB", "RL", "BT")

# Mermaid refuses to render more edges than this (its `maxEdges` default).
MAX_EDGES = 500

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

_STATE_STYLES = {
    "current": "stroke:#ff7f0e,stroke-width:3px",
    "done": "stroke:#2ca02c,stroke-width:2px",
    "dim": "fill:#ffffff,stroke:#cccccc,color:#aaaaaa",
}


def escape(text: str) -> str:
    """User text as it may stand between double quotes in a Mermaid label."""
    return printable(text).translate(_ENTITIES)


CAPTION = "caption"  # the title's node id: not an id of ours (n0, key_x, c0) nor a keyword
_CAPTION_STYLE = "fill:none,stroke:none,color:#000000,font-weight:bold"


def _label(node: Node, precision: int) -> str:
    constant = constant_text(node, precision)
    if constant is not None:
        return escape(constant)
    parts = []
    if node.label:
        parts.append(escape(node.label))
    if node.data is not None:
        parts.append("data " + escape(number_text(node.data, precision)))
    if node.grad is not None:
        parts.append("grad " + escape(number_text(node.grad, precision)))
    text = SEPARATOR.join(parts)
    if node.extra_lines:
        text = "<br>".join([text, *(escape(line) for line in node.extra_lines)])
    return text or " "


def _class_def(band: Band) -> str:
    # NaN/inf: a thick dark border, since red on red would not show
    stroke = f"stroke:{BAD_BORDER},stroke-width:3px" if band is BAD_BAND else "stroke:#555555"
    return f"    classDef {band.name} fill:{band.fill},{stroke},color:{band.ink}\n"


def to_mermaid(
    diagram: Diagram,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    legend: bool = True,
) -> str:
    """A `flowchart` with one node per diagram node; colours through `classDef`.

    Raises RenderError above Mermaid's edge limit, where it would refuse to draw.
    """
    if rankdir not in DIRECTIONS:
        raise ValueError(f"rankdir must be one of {', '.join(DIRECTIONS)}, not {rankdir!r}")
    if len(diagram.edges) > MAX_EDGES:
        raise RenderError(
            f"the graph has {len(diagram.edges)} edges; Mermaid refuses more than {MAX_EDGES}",
            hint=f"Write SVG instead (-o graph.svg), or {draw_less(diagram)}.",
        )
    ids = {node.id: f"n{i}" for i, node in enumerate(diagram.nodes)}
    lines: list[str] = []
    lines.append(f"flowchart {rankdir}\n")
    if diagram.title:
        lines.append(f'    {CAPTION}["{escape(diagram.title)}"]\n')

    classes: dict[str, list[str]] = {}  # class name -> mermaid ids, in node order

    def node_line(node: Node, indent: str) -> str:
        mid = ids[node.id]
        band = band_of(node)
        if node.kind == "op":
            classes.setdefault("op", []).append(mid)
            return f'{indent}{mid}(("{_label(node, precision)}"))\n'
        if band is not None:
            classes.setdefault(band.name, []).append(mid)
        elif node.kind == "value":
            classes.setdefault("plain", []).append(mid)
        if node.state is not None:
            classes.setdefault(node.state, []).append(mid)
        shape = ('(["', '"])') if node.kind == "group" else ('["', '"]')
        return f"{indent}{mid}{shape[0]}{_label(node, precision)}{shape[1]}\n"

    for node in diagram.nodes:
        if node.cluster is None:
            lines.append(node_line(node, "    "))
    for i, name in enumerate(diagram.clusters):
        lines.append(f'    subgraph c{i} ["{escape(name)}"]\n')
        for node in diagram.nodes:
            if node.cluster == name:
                lines.append(node_line(node, "        "))
        lines.append("    end\n")
    for edge in diagram.edges:
        arrow = "==>" if edge.emphasis else "-->"
        text = f'|"{escape(edge.label)}"|' if edge.label else ""
        lines.append(f"    {ids[edge.source]} {arrow}{text} {ids[edge.target]}\n")

    used = [b for b in (*BANDS, BAD_BAND) if b.name in classes]
    if legend and diagram.has_grad and used:
        lines.append(f'    subgraph legend ["{escape("|grad| (log scale)")}"]\n')
        lines.append("        direction LR\n")
        for band in used:
            lines.append(f'        key_{band.name}["{escape(band.text)}"]:::{band.name}\n')
        lines.append("    end\n")
    for band in used:
        lines.append(_class_def(band))
    if diagram.title:
        lines.append(f"    classDef {CAPTION} {_CAPTION_STYLE}\n")
        lines.append(f"    class {CAPTION} {CAPTION}\n")
    if "op" in classes:
        lines.append("    classDef op fill:#ffffff,stroke:#555555,color:#000000\n")
    if "plain" in classes:
        lines.append("    classDef plain fill:#ffffff,stroke:#555555,color:#000000\n")
    for state, style in _STATE_STYLES.items():
        if state in classes:
            lines.append(f"    classDef {state} {style}\n")
    for name in [b.name for b in used] + ["op", "plain", *_STATE_STYLES]:
        if name in classes:
            lines.append(f"    class {','.join(classes[name])} {name}\n")
    return "".join(lines)


def to_markdown(diagram: Diagram, **options: object) -> str:
    """The flowchart in a fenced ```mermaid block: paste it into a GitHub README."""
    return "```mermaid\n" + to_mermaid(diagram, **options) + "```\n"  # type: ignore[arg-type]
