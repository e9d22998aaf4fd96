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

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gradviz.numbers import DEFAULT_PRECISION
from gradviz.render.colours import (
    ALL_BANDS,
    BAD_BAND,
    BAD_BORDER,
    CURRENT,
    EDGE_KEY,
    LEGEND_TITLE,
    PLAIN_FILL,
    STATE_LOOK,
    Band,
)
from gradviz.render.diagram import (
    SIDE_BY_SIDE_PX,
    STOPS,
    TORCH_LEVELS,
    Diagram,
    Edge,
    Node,
    band_of,
    check_rankdir,
    constant_text,
    number_text,
    ranks,
    title_lines,
    widest_rank,
)
from gradviz.text import printable

if TYPE_CHECKING:
    from gradviz.engine import Number

# DejaVu Sans: the default sans of Debian and Ubuntu, and among the widest common sans
# fonts; graphviz-pure and the system `dot` lay text out with its metrics, so a browser
# with DejaVu (or a narrower fallback) keeps every text inside its box.
FONT = "DejaVu Sans"
OP_FONT_SIZE = 10  # points: an op's symbol in its small circle

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
_SPECIAL = re.compile(r'[&"<>{}|\\]')  # str.translate costs µs even when it changes nothing

CREDIT_MARK = "+= "  # how the trace labels the credit an edge carries back


def label_text(text: str) -> str:
    """Escape user text for a DOT label (inside double quotes)."""
    text = printable(text)
    return text.translate(_LABEL_TABLE) if _SPECIAL.search(text) else text


def field_text(text: str) -> str:
    """Escape user text for a record field: spaces become references too, since a field
    trims and merges spaces, and Graphviz 2.x drops a space that follows a multi-byte
    character there. (Other non-ASCII text stays UTF-8: 2.x garbles references above
    U+FFFF.)"""
    return label_text(text).replace(" ", "&#32;")


def tooltip_text(text: str) -> str:
    """Escape multi-line text for a tooltip attribute (SVG `<title>`); lines kept."""
    lines = [printable(line) for line in text.split("\n")]
    return "&#10;".join(x.translate(_TOOLTIP_TABLE) if _SPECIAL.search(x) else x for x in lines)


# An HTML-like label (`<...>`): XML rules, and the backslash doubled, since Graphviz
# still expands `\\G` (the graph's name) and `\\\\` there.
_HTML_TABLE = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\\": "&#92;&#92;"}
)


def html_text(text: str) -> str:
    return printable(text).translate(_HTML_TABLE)


_SAFE_ID = re.compile(r"[A-Za-z0-9_.:-]*")  # (what `node_id` keeps: most ids, `n12`)


def node_id(text: str) -> str:
    """A node id as a quoted DOT ID (ids are ours, but quoting keeps any of them safe)."""
    if _SAFE_ID.fullmatch(text):
        return f'"{text}"'
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
    elif node.kind == "value":  # unnamed: its id, as the trace, JSON and Mermaid name it
        fields.append(field_text(node.id))
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
    node: Node,
    precision: int,
    horizontal: bool,
    number_width: int = 0,
    op_font: tuple[str, int] | None = None,
) -> str:
    """One node statement. `horizontal` puts record fields side by side; `op_font` (if
    given) is the font and size (points) of an op's symbol."""
    pairs: list[tuple[str, str]]
    band = band_of(node)
    if node.kind == "op":
        # a − b: which input is which, as the edges into it say (`e - 1` is not `1 - e`)
        label = f"a {node.label} b" if node.ordered else node.label
        name, size = op_font or (None, OP_FONT_SIZE)
        pairs = [
            ("shape", "ellipse"),
            ("label", label_text(label)),
            ("fontsize", str(size)),
            ("width", "0.3"),
            ("height", "0.3"),
            ("margin", "0.02"),
        ]
        pairs += [("fontname", name)] if name else []
        fill, ink = "#ffffff", None
    elif node.kind == "group":
        # A plain box (not a record), so edges end at its border and never cross its text.
        lines = _fields(node, precision, number_width)
        pairs = [("shape", "box"), ("label", "\\n".join(lines)), ("margin", "0.08,0.04")]
        styles = ["filled", "rounded"] + (["dashed"] if band is not None and band.dashed else [])
        pairs.append(("style", ",".join(styles)))
    else:
        body = " | ".join(_fields(node, precision, number_width))
        shape_label = f"{{ {body} }}" if horizontal else body
        pairs = [("shape", "record"), ("label", shape_label)]
        if band is not None and band.dashed:
            pairs.append(("style", "filled,dashed"))
    if node.kind != "op":
        fill = band.fill if band is not None else PLAIN_FILL
        ink = band.ink if band is not None and band.ink != "#000000" else None
    border, penwidth = (
        (BAD_BORDER, f"{BAD_BAND.border_width:g}") if band is BAD_BAND else (None, None)
    )
    if node.state in STATE_LOOK:
        border, penwidth, state_ink = STATE_LOOK[node.state]
        if node.state == "dim":
            fill, ink = "#ffffff", state_ink
    pairs.append(("fillcolor", fill))
    if border is not None:
        pairs += [("color", border), ("penwidth", penwidth or "1")]
    if ink is not None:
        pairs.append(("fontcolor", ink))
    if node.detail:
        pairs.append(("tooltip", tooltip_text(node.detail)))
    return f"\t{node_id(node.id)} [{_attrs(pairs)}]\n"


# A weight's line: from hairline (w = 0) to MAX_PEN pt (the largest |w| of the picture).
MIN_PEN, MAX_PEN = 0.6, 4.0


def pen_width(weight: float, largest: float) -> str:
    """The line width of a weight's edge, in pt: |w| relative to the largest |w|."""
    share = abs(weight) / largest if largest > 0 and math.isfinite(largest) else 0.0
    share = share if math.isfinite(share) else 1.0
    return f"{MIN_PEN + (MAX_PEN - MIN_PEN) * share:.2f}"


def _edge_line(edge: Edge, largest: float = 0.0, ordered: bool = False) -> str:
    """One edge; `ordered`: it goes into an op whose inputs' order matters, and says
    which input it is (a or b) at its head."""
    pairs: list[tuple[str, str]] = []
    if ordered:
        pairs += [("headlabel", "ab"[edge.index]), ("labelfontsize", "9"), ("labeldistance", "1.4")]
    look = [("tooltip", tooltip_text(edge.detail))] if edge.detail else []
    look += [("color", CURRENT), ("penwidth", "2.5")] if edge.emphasis else []
    if edge.label == STOPS:  # the end of the credit: dashed
        pairs += [("label", label_text(edge.label)), ("style", "dashed")]
    elif edge.label and edge.label.startswith(CREDIT_MARK):
        return _credit_edge_lines(edge, pairs, look)
    elif edge.label:
        pairs.append(("label", label_text(edge.label)))
    if edge.weight is not None:
        pairs += [("penwidth", pen_width(edge.weight, largest)), ("arrowsize", "0.4")]
    band = edge.band
    if band is not None:
        pairs.append(("color", band.line))
        if band.dashed:
            pairs.append(("style", "dashed"))
    pairs += look
    attrs = f" [{_attrs(pairs)}]" if pairs else ""
    return f"\t{node_id(edge.source)} -> {node_id(edge.target)}{attrs}\n"


def credit_node_id(edge: Edge) -> str:
    """The id of the small node that carries an edge's credit (`+= 6`) on the line."""
    return f"credit.{edge.source}.{edge.target}.{edge.index}"


def credit_edge_key(name: str) -> tuple[str, str, int] | None:
    """The (source, target, index) of the edge whose credit node `name` is, else None."""
    parts = name.split(".")
    if len(parts) != 4 or parts[0] != "credit" or not parts[3].isdigit():
        return None
    return parts[1], parts[2], int(parts[3])


def _credit_edge_lines(
    edge: Edge, head_pairs: list[tuple[str, str]], look: list[tuple[str, str]]
) -> str:
    """A credit the trace sends back (`+= 6`), drawn on its edge: the edge runs through a
    small text node, so the credit sits on its own line (two edges into one op share the
    gap where edge labels stand) and the layout keeps room for it. `look` (tooltip and
    emphasis) is both halves'."""
    label = node_id(credit_node_id(edge))
    node = [
        ("shape", "plaintext"),
        ("style", "solid"),
        ("label", label_text(edge.label or "")),
        ("fontsize", "9"),
        ("width", "0"),
        ("height", "0"),
        ("margin", "0.02"),
    ]
    return (
        f"\t{label} [{_attrs(node)}]\n"
        f"\t{node_id(edge.source)} -> {label} [{_attrs([*look, ('arrowhead', 'none')])}]\n"
        f"\t{label} -> {node_id(edge.target)} [{_attrs(head_pairs + look)}]\n"
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
    rank = ranks(diagram)
    spans = sum(
        max(0, rank[e.target] - rank[e.source] - 1)
        for e in diagram.edges
        if e.source in rank and e.target in rank
    )
    return len(diagram.nodes) + spans


def cluster_reentered(diagram: Diagram) -> bool:
    """Whether a path leaves a cluster and comes back into it (a transformer layer's relu,
    then its linear2's box, then the layer's residual add). dot's default ranking ranks
    each cluster alone and keeps its ranks: the longer path outside is squeezed into a
    flat edge, which dot 2.43 and graphviz-pure lose between record nodes ("lost n60 n64
    edge"); `newrank` ranks the whole graph at once."""
    bit = {name: 1 << i for i, name in enumerate(diagram.clusters)}
    if not bit:
        return False
    rank = ranks(diagram)
    own = {n.id: bit.get(n.cluster, 0) for n in diagram.nodes}  # (0: in no cluster)
    above = dict.fromkeys(own, 0)  # the clusters of each node's ancestors, as bits
    edges = [e for e in diagram.edges if e.source in own and e.target in own]
    for edge in sorted(edges, key=lambda e: rank[e.source]):  # (sources in graph order)
        source, target = edge.source, edge.target
        if own[target] & ~own[source] & above[source]:
            return True
        above[target] |= above[source] | own[source]
    return False


def legend_cell(band: Band) -> str:
    """One band of the key: its colour, border and text, as the nodes show them."""
    look = f' BGCOLOR="{band.fill}" COLOR="{band.border}"'
    if band.dashed:
        look += ' STYLE="dashed"'
    if band.border_width > 1:
        look += f' BORDER="{band.border_width:g}"'
    return f'<TD{look}><FONT COLOR="{band.ink}">{html_text(band.text)}</FONT></TD>'


def legend_table(title: Sequence[str] = (), weights: bool = False, size: int = 9) -> str:
    """The key to the fill colours as one compact row (an HTML-like table), under the
    title's lines if there are any. It becomes the graph's own label, placed above the drawing:
    a node would be laid out beside the inputs and, top to bottom, double the width."""
    cells = "".join(legend_cell(b) for b in ALL_BANDS)
    if weights:  # a network's weight edges
        cells += f'<TD BORDER="0">{html_text(EDGE_KEY)}</TD>'
    key = (
        '<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="2" CELLPADDING="2">'
        f'<TR><TD BORDER="0">{html_text(LEGEND_TITLE)}</TD>{cells}</TR></TABLE>'
    )
    heading = "".join(f"<TR><TD>{html_text(line)}</TD></TR>" for line in title)
    return (
        '<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0">'
        f'{heading}<TR><TD><FONT POINT-SIZE="{size}">{key}</FONT></TD></TR>'
        '<TR><TD HEIGHT="4"></TD></TR></TABLE>'  # a gap above the drawing
    )


def _layer_column(members: list[Node], precision: int, horizontal: bool, number_width: int) -> str:
    """A layer of the neuron view as textbooks draw it: its neurons in one rank, N1 first
    (on top, left to right), held in order by invisible edges and `ordering=out`; no box
    (a cluster lets dot reorder them, differently between versions) and no title (each
    neuron names its layer, L1.N1; the weight edges would cross a title)."""
    body = "".join("\t" + _node_line(node, precision, horizontal, number_width) for node in members)
    chain = " -> ".join(node_id(node.id) for node in members)
    order = f"\t\t{chain} [style=invis]\n" if len(members) > 1 else ""
    return f"\t{{rank=same\n{body}{order}\t}}\n"


def to_dot(
    diagram: Diagram,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    legend: bool = True,
    number_width: int = 0,
    font: str = FONT,
    op_font: tuple[str, int] | None = None,
) -> str:
    """The whole DOT document, byte-stable (the same diagram gives the same text).
    `number_width` pads numbers (for a page that rewrites them); `font` is every text's,
    `op_font` (if given) the font and size of the ops' symbols (a PNG's bold `+`)."""
    check_rankdir(rankdir)
    # Braced record fields: side by side LR, stacked TB (narrow nodes top to bottom), but
    # side by side TB too when every rank fits a page so (a chain: half the height).
    horizontal = rankdir in ("LR", "RL") or widest_rank(diagram) > SIDE_BY_SIDE_PX
    fast = f", {FAST_LAYOUT}" if layout_cost(diagram) > HEAVY_LAYOUT else ""
    fast += ', ordering="out"' if diagram.level == "neuron" else ""
    fast += ', newrank="true"' if cluster_reentered(diagram) else ""
    # a PyTorch drawing sets its title, frames and key at the nodes' 11 pt (edge labels stay
    # 9 pt): the system dot loads a fontset per size, 0.75 ms each (issue 30)
    one_size = diagram.level in TORCH_LEVELS
    fast += ', fontsize="11"' if one_size else ""
    lines = [
        f'\tgraph [rankdir="{rankdir}", fontname="{font}", nodesep="0.25", ranksep="0.35"{fast}]\n',
        f'\tnode [fontname="{font}", fontsize="11", style="filled", height="0.3"]\n',
        f'\tedge [fontname="{font}", fontsize="9", color="#555555", arrowsize="0.6"]\n',
    ]
    for node in diagram.nodes:
        if node.cluster is None:
            lines.append(_node_line(node, precision, horizontal, number_width, op_font))
    for i, name in enumerate(diagram.clusters):
        members = [node for node in diagram.nodes if node.cluster == name]
        if diagram.level == "neuron" and all(n.kind == "group" for n in members):
            lines.append(_layer_column(members, precision, horizontal, number_width))
            continue
        lines.append(f"\tsubgraph cluster_{i} {{\n")
        lines.append(f'\t\tlabel="{label_text(name)}"\n\t\tstyle="rounded"\n\t\tcolor="#999999"\n')
        for node in members:
            lines.append("\t" + _node_line(node, precision, horizontal, number_width, op_font))
        lines.append("\t}\n")
    largest = max((abs(e.weight) for e in diagram.edges if e.weight is not None), default=0.0)
    ordered = {n.id for n in diagram.nodes if n.ordered}
    lines += [_edge_line(e, largest, e.target in ordered and e.index < 2) for e in diagram.edges]
    # The graph's label (title and legend) comes last, so no cluster inherits it.
    if legend and diagram.has_grad:
        weights = any(e.weight is not None for e in diagram.edges)
        key = legend_table(title_lines(diagram), weights, 11 if one_size else 9)
        lines.append(f'\tlabel=<{key}>\n\tlabelloc="t"\n')
    elif diagram.title:
        label = "\\n".join(label_text(line) for line in title_lines(diagram))
        lines.append(f'\tlabel="{label}"\n\tlabelloc="t"\n')
    return "digraph gradviz {\n" + "".join(lines) + "}\n"
