"""Graphviz DOT text for a diagram: micrograd-style record nodes (name | data | grad).

The text is built by hand rather than through the `graphviz` package so that every
byte is ours: ids come from graph order, numbers from `gradviz.numbers.fmt`, and every
piece of user text goes through one escaping function per context. Graphviz reads a
label in stages (DOT string, record fields, `\\N`-style substitution, HTML entities,
`\\n`/`\\l` line breaks), so text is written as numeric character references where a
stage could otherwise interpret it; tests render hostile labels with the real `dot`
and with graphviz-pure and compare the SVG text.
"""

from __future__ import annotations

from gradviz.engine import Number
from gradviz.numbers import DEFAULT_PRECISION
from gradviz.render.diagram import (
    BAD_BAND,
    BAD_BORDER,
    BANDS,
    Diagram,
    Edge,
    Node,
    band_of,
    constant_text,
    number_text,
)
from gradviz.text import printable

RANKDIRS = ("LR", "TB", "RL", "BT")
FONT = "Helvetica"

# Characters that some stage of Graphviz's label reading would act on, written as
# character references: record syntax `{ } | < >`, the DOT quote, `&` (so a typed
# `&amp;` stays literal) and the backslash, doubled because the last stage (line
# breaks) turns `\\` into one backslash and would eat a single one.
_LABEL_ESCAPES = {
    "&": "&amp;",
    '"': "&quot;",
    "<": "&lt;",
    ">": "&gt;",
    "{": "&#123;",
    "}": "&#125;",
    "|": "&#124;",
    "\\": "&#92;&#92;",
}
_LABEL_TABLE = str.maketrans(_LABEL_ESCAPES)

# Tooltips are read in a different order (entities first, then two stages that each
# halve backslashes), so one backslash is four references. No raw backslash is ever
# written: one before the closing quote would escape it.
_TOOLTIP_TABLE = str.maketrans(
    {"&": "&amp;", '"': "&quot;", "<": "&lt;", ">": "&gt;", "\\": "&#92;" * 4}
)

# Node look by trace state: (border colour, pen width, ink override)
_STATE_LOOK = {
    "current": ("#ff7f0e", "3", None),
    "done": ("#2ca02c", "2", None),
    "dim": ("#cccccc", "1", "#aaaaaa"),
}


def label_text(text: str) -> str:
    """Escape user text for a DOT label (inside double quotes)."""
    return printable(text).translate(_LABEL_TABLE)


def field_text(text: str) -> str:
    """Escape user text for a record field: spaces become references too, since a field
    trims and merges spaces, and Graphviz 2.x drops a space that follows a multi-byte
    character there. (Other non-ASCII text stays UTF-8: 2.x garbles references above
    U+FFFF.)"""
    return label_text(text).replace(" ", "&#32;")


def tooltip_text(text: str) -> str:
    """Escape multi-line text for a tooltip attribute (SVG `<title>`); lines kept."""
    return "&#10;".join(printable(line).translate(_TOOLTIP_TABLE) for line in text.split("\n"))


def html_text(text: str) -> str:
    """Escape text for an HTML-like label (`<...>`): XML rules, and the backslash
    doubled, since Graphviz still expands `\\G` (the graph's name) and `\\\\` there."""
    return (
        printable(text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("\\", "&#92;&#92;")
    )


def node_id(text: str) -> str:
    """A node id as a quoted DOT ID (ids are ours, but quoting keeps any of them safe)."""
    safe = "".join(
        ch if (ch.isalnum() and ch.isascii()) or ch in "_.:-" else f"_u{ord(ch):x}_" for ch in text
    )
    return f'"{safe}"'


# Padding for numbers that a live page rewrites (gradviz.render.html): as wide as a digit.
FIGURE_SPACE = "\u2007"


def _number_field(name: str, x: Number, precision: int, width: int) -> str:
    """`data 2`, centred in figure spaces to `width` characters of number when given."""
    text = f"{name} {number_text(x, precision)}"
    room = max(0, len(name) + 1 + width - len(text))
    return FIGURE_SPACE * (room // 2) + text + FIGURE_SPACE * (room - room // 2)


def _fields(node: Node, precision: int, number_width: int = 0) -> list[str]:
    """The record fields of a node: name (if any), data, grad, extra lines."""
    constant = constant_text(node, precision)
    if constant is not None:
        return [constant]
    fields = []
    if node.label:
        fields.append(field_text(node.label))
    # Numbers need no escaping: digits, `.-+e`, nan, inf and BAD_MARK (after a space,
    # never before one, so Graphviz 2.x keeps every space).
    if node.data is not None:
        fields.append(_number_field("data", node.data, precision, number_width))
    if node.grad is not None:
        fields.append(_number_field("grad", node.grad, precision, number_width))
    fields.extend(field_text(line) for line in node.extra_lines)
    return fields or [" "]


def _attrs(pairs: list[tuple[str, str]]) -> str:
    return ", ".join(f'{key}="{value}"' for key, value in pairs)


def _node_line(
    node: Node, diagram: Diagram, precision: int, horizontal: bool, number_width: int = 0
) -> str:
    """One node statement. `horizontal` puts record fields side by side."""
    pairs: list[tuple[str, str]]
    band = band_of(node)
    if node.kind == "op":
        pairs = [
            ("shape", "ellipse"),
            ("label", label_text(node.label)),
            ("fontsize", "10"),
            ("width", "0.3"),
            ("height", "0.3"),
            ("margin", "0.02"),
        ]
        fill, ink = "#ffffff", None
    else:
        body = " | ".join(_fields(node, precision, number_width))
        shape_label = f"{{ {body} }}" if horizontal else body
        pairs = [("shape", "record"), ("label", shape_label)]
        if node.kind == "group":
            pairs.append(("style", "filled,rounded"))
        fill = band.fill if band is not None else "#ffffff"
        ink = band.ink if band is not None and band.ink != "#000000" else None
    pairs.append(("fillcolor", fill))
    border, penwidth, state_ink = (None, None, None)
    if band is BAD_BAND:
        border, penwidth = BAD_BORDER, "3"
    if node.state in _STATE_LOOK:
        border, penwidth, state_ink = _STATE_LOOK[node.state]
        if node.state == "dim":
            pairs[-1] = ("fillcolor", "#ffffff")
            ink = state_ink
    if border is not None:
        pairs += [("color", border), ("penwidth", penwidth or "1")]
    if ink is not None:
        pairs.append(("fontcolor", ink))
    if node.detail:
        pairs.append(("tooltip", tooltip_text(node.detail)))
    return f"\t{node_id(node.id)} [{_attrs(pairs)}]\n"


def _edge_line(edge: Edge) -> str:
    pairs: list[tuple[str, str]] = []
    if edge.label:
        pairs += [("label", label_text(edge.label)), ("style", "dashed")]
    if edge.emphasis:
        pairs += [("color", "#ff7f0e"), ("penwidth", "2.5")]
    return (
        f"\t{node_id(edge.source)} -> {node_id(edge.target)}"
        + (f" [{_attrs(pairs)}]" if pairs else "")
        + "\n"
    )


# Graphviz's time goes mostly to edges that span many ranks (each rank crossed is a
# hidden "virtual" node): a value reused deep down a long chain (`x*x*…*x`, a long
# sum) costs O(n²) of them, and old versions of dot then need minutes for a few
# hundred nodes. Above this many (nodes + virtual nodes), the layout's search limits
# are cut: a slightly less tidy picture in a second instead of minutes.
HEAVY_LAYOUT = 2000
FAST_LAYOUT = 'mclimit="0.01", nslimit="0.1", nslimit1="0.1", searchsize="10"'


def layout_cost(diagram: Diagram) -> int:
    """Nodes plus the virtual nodes Graphviz will add for long edges (ranks by longest
    path; each edge crossing k ranks adds k - 1). Iterative, any node order."""
    incoming: dict[str, int] = {n.id: 0 for n in diagram.nodes}
    outgoing: dict[str, list[str]] = {n.id: [] for n in diagram.nodes}
    for edge in diagram.edges:
        if edge.source in outgoing and edge.target in incoming:
            outgoing[edge.source].append(edge.target)
            incoming[edge.target] += 1
    rank = dict.fromkeys(incoming, 0)
    ready = [node_id for node_id, count in incoming.items() if count == 0]
    while ready:
        node_id = ready.pop()
        for target in outgoing[node_id]:
            rank[target] = max(rank[target], rank[node_id] + 1)
            incoming[target] -= 1
            if incoming[target] == 0:
                ready.append(target)
    spans = sum(
        max(0, rank[e.target] - rank[e.source] - 1)
        for e in diagram.edges
        if e.source in rank and e.target in rank
    )
    return len(diagram.nodes) + spans


def legend_table(title: str | None = None) -> str:
    """The key to the fill colours as an HTML-like table, under the title if there is
    one. It becomes the graph's own label, placed above the drawing: a node would be
    laid out beside the inputs and, top to bottom, double the picture's width."""
    cells = "".join(
        f'<TD BGCOLOR="{b.fill}"><FONT COLOR="{b.ink}">{html_text(b.text)}</FONT></TD>'
        for b in (*BANDS, BAD_BAND)
    )
    key = (
        '<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3">'
        f'<TR><TD BORDER="0">|grad| (log scale)</TD>{cells}</TR></TABLE>'
    )
    heading = f"<TR><TD>{html_text(title)}</TD></TR>" if title else ""
    return (
        '<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0">'
        f'{heading}<TR><TD><FONT POINT-SIZE="9">{key}</FONT></TD></TR>'
        '<TR><TD HEIGHT="4"></TD></TR></TABLE>'  # a gap above the drawing
    )


def dot_body(
    diagram: Diagram,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    legend: bool = True,
    number_width: int = 0,
) -> list[str]:
    """The statements inside `digraph gradviz { … }`, one per line (tab-indented),
    in the shape the `graphviz` package keeps in `Digraph.body`. `number_width` lays
    numbers out that many characters wide (for a page that rewrites them)."""
    if rankdir not in RANKDIRS:
        raise ValueError(f"rankdir must be one of {', '.join(RANKDIRS)}, not {rankdir!r}")
    horizontal = rankdir in ("LR", "RL")
    fast = f", {FAST_LAYOUT}" if layout_cost(diagram) > HEAVY_LAYOUT else ""
    lines = [
        f'\tgraph [rankdir="{rankdir}", fontname="{FONT}", nodesep="0.25", ranksep="0.35"{fast}]\n',
        f'\tnode [fontname="{FONT}", fontsize="11", style="filled", height="0.3"]\n',
        f'\tedge [fontname="{FONT}", fontsize="9", color="#555555", arrowsize="0.6"]\n',
    ]
    clusters = diagram.clusters
    cluster_index = {name: i for i, name in enumerate(clusters)}
    loose = [n for n in diagram.nodes if n.cluster is None]
    for node in loose:
        lines.append(_node_line(node, diagram, precision, horizontal, number_width))
    for name in clusters:
        i = cluster_index[name]
        lines.append(f"\tsubgraph cluster_{i} {{\n")
        lines.append(f'\t\tlabel="{label_text(name)}"\n\t\tstyle="rounded"\n\t\tcolor="#999999"\n')
        for node in diagram.nodes:
            if node.cluster == name:
                lines.append("\t" + _node_line(node, diagram, precision, horizontal, number_width))
        lines.append("\t}\n")
    for edge in diagram.edges:
        lines.append(_edge_line(edge))
    # The graph's label (title and legend) comes last, so no cluster inherits it.
    if legend and diagram.has_grad:
        lines.append(f'\tlabel=<{legend_table(diagram.title)}>\n\tlabelloc="t"\n')
    elif diagram.title:
        lines.append(f'\tlabel="{label_text(diagram.title)}"\n\tlabelloc="t"\n')
    return lines


def to_dot(
    diagram: Diagram,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    legend: bool = True,
    number_width: int = 0,
) -> str:
    """The whole DOT document (byte-stable: the same diagram gives the same text)."""
    body = dot_body(
        diagram, rankdir=rankdir, precision=precision, legend=legend, number_width=number_width
    )
    return "digraph gradviz {\n" + "".join(body) + "}\n"
