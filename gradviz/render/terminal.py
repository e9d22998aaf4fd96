"""The diagram in a terminal: a tree from the output down to the leaves, and a table of
the leaves' gradients.

A node used by several others is drawn once, where it first appears, and named again
later as a reference (`↑ e`), so the tree stays as small as the graph. Gradients are
coloured on the Graphviz fill's scale; NaN and inf are marked with a `!` that survives
without colour (the CLI's console decides about colour: `NO_COLOR`, not a terminal).
"""

from __future__ import annotations

import io

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from gradviz.numbers import DEFAULT_PRECISION, fmt
from gradviz.render.colours import ALL_BANDS, BAD_BAND
from gradviz.render.diagram import Diagram, Node, band_of, constant_text, is_bad
from gradviz.text import output_name, printable

# Deeper trees collapse their middle into a count, then list the inputs below it (each
# level indents by 4 columns: 16 levels take 64). Bigger trees stop with a note.
MAX_DEPTH = 16
MAX_LINES = 400
MORE_LEVELS = "a larger depth shows them"  # the CLI names its option instead

# Terminal colours per |grad| band, from the one colour scale (gradviz.render.colours):
# the ends of the scale (vanishing, huge) stand out, the healthy middle stays plain.
BAND_STYLES = {band.name: band.term for band in ALL_BANDS}
STATE_STYLES = {"current": "reverse", "done": "", "dim": "dim"}


def _number(x: object, precision: int) -> Text:
    text = fmt(x, precision)
    if is_bad(x):  # type: ignore[arg-type]
        return Text(text + " !", style=BAND_STYLES[BAD_BAND.name])
    return Text(text)


def _name(node: Node, op_symbol: str | None, output: str) -> Text:
    """What a line starts with: the name, and the op that made it (`L ← *`)."""
    text = Text()
    if node.role == "constant":
        text.append(printable(node.label), style="dim italic")
    elif node.label:
        text.append(printable(node.label), style="bold")
    elif node.role == "output":
        text.append(output, style="bold italic")
    elif node.kind == "value":
        text.append(node.id, style="italic")  # unnamed: n3, as the trace and pictures call it
    if op_symbol is not None:
        if text:
            text.append(" ← ", style="dim")
        text.append(printable(op_symbol), style="italic")
    return text


def _grad(node: Node, precision: int) -> Text:
    """The grad coloured by its band (NaN and inf keep the colour of their mark)."""
    grad = _number(node.grad, precision)
    band = band_of(node)
    if band is not None and not is_bad(node.grad):
        grad.stylize(BAND_STYLES[band.name])
    return grad


def node_line(node: Node, op_symbol: str | None, precision: int, output: str) -> Text:
    """One node as a line: name ← op, data, grad (coloured by magnitude), extras.
    `output` is what an unlabelled output is called (see `diagram_output_name`)."""
    line = _name(node, op_symbol, output)
    constant = constant_text(node, precision)
    if constant is not None:  # named by its number: said once, at this precision
        line = Text(constant, style="dim italic")
        line.append("  constant", style="dim")
    elif node.data is not None:
        line.append("  data ", style="dim")
        line.append_text(_number(node.data, precision))
    if node.grad is not None:
        line.append("  grad ", style="dim")
        line.append_text(_grad(node, precision))
    for extra in node.extra_lines:
        line.append("  " + printable(extra), style="dim")
    if STATE_STYLES.get(node.state or ""):
        line.stylize(STATE_STYLES[node.state])
    if node.state == "current":
        line.append(" ◀")
    return line


def _structure(
    diagram: Diagram,
) -> tuple[dict[str, list[str]], dict[str, str | None], list[str], dict[str, int]]:
    """Each value node's inputs and the op symbol folded into it (the tree shows values,
    and an op only where its result is unknown: a PyTorch op view's op alone, whose inputs
    follow it), the roots (nodes nothing consumes), and the levels below each node down to
    its deepest leaf (inputs come first in a diagram)."""
    nodes = {n.id: n for n in diagram.nodes}
    inputs: dict[str, list[str]] = {n.id: [] for n in diagram.nodes}
    consumers: dict[str, int] = {n.id: 0 for n in diagram.nodes}
    for edge in diagram.edges:
        inputs[edge.target].append(edge.source)
        consumers[edge.source] += 1
    children: dict[str, list[str]] = {}
    symbol: dict[str, str | None] = {}
    heights: dict[str, int] = {}
    for node in diagram.nodes:
        sources = inputs[node.id]
        if node.kind == "op":  # (reached only as the input of another op, or of several)
            symbol[node.id] = None
            children[node.id] = sources
        elif len(sources) == 1 and nodes[sources[0]].kind == "op":
            op = nodes[sources[0]]
            symbol[node.id] = op.label
            children[node.id] = inputs[op.id]
        else:
            symbol[node.id] = None
            children[node.id] = sources
        heights[node.id] = 1 + max((heights.get(k, 0) for k in children[node.id]), default=-1)
    roots = [n.id for n in diagram.nodes if consumers[n.id] == 0 and n.kind != "op"]
    return children, symbol, roots, heights


def diagram_output_name(diagram: Diagram) -> str:
    """The output's name by the rule `trace` and `check` use (`gradviz.text.output_name`)."""
    output = next((n for n in reversed(diagram.nodes) if n.role == "output"), None)
    labels = (n.label for n in diagram.nodes if n.kind == "value")
    return output_name(output.label if output is not None else None, labels)


def _leaves_below(node_id: str, children: dict[str, list[str]]) -> list[str]:
    """The leaves a node depends on, left to right, each once (a stack, no recursion)."""
    seen: set[str] = set()
    leaves: list[str] = []
    stack = [node_id]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        kids = children.get(current, [])
        if not kids and current != node_id:
            leaves.append(current)
        stack.extend(reversed(kids))
    return leaves


def to_tree(
    diagram: Diagram,
    *,
    precision: int = DEFAULT_PRECISION,
    depth: int | None = MAX_DEPTH,
    more: str = MORE_LEVELS,
) -> Tree:
    """The tree from the output(s) down to the leaves; walked with a stack, not recursion.

    Past `depth` levels (None: no limit) the middle of a deep chain is collapsed into a
    line that counts the levels left out and says how to see them (`more`), followed by
    the inputs those levels lead to, so a chain's leaves always show."""
    nodes = {n.id: n for n in diagram.nodes}
    children, symbol, roots, heights = _structure(diagram)
    top = Tree(Text(printable(diagram.title or "")), hide_root=True, guide_style="dim")
    out = diagram_output_name(diagram)
    shown: set[str] = set()
    lines = 0
    # (node id, parent tree, level); children pushed reversed so they come out in order
    stack: list[tuple[str, Tree, int]] = [(r, top, 0) for r in reversed(roots)]
    while stack:
        node_id, parent, level = stack.pop()
        if lines >= MAX_LINES:
            parent.add(Text(f"… more nodes not shown (limit {MAX_LINES} lines)", style="dim"))
            break
        lines += 1
        node = nodes[node_id]
        if node_id in shown:
            name = printable(node.label) if node.label else node.id
            parent.add(Text(f"↑ {name} (shown above)", style="dim"))
            continue
        shown.add(node_id)
        branch = parent.add(node_line(node, symbol.get(node_id), precision, out))
        kids = children.get(node_id, [])
        if kids and depth is not None and level + 1 >= depth:
            hidden = heights[node_id] - 1
            note = f"… {hidden} level{'s' if hidden != 1 else ''} hidden ({more}); the inputs:"
            if hidden:
                branch = branch.add(Text(note, style="dim"))
            leaves = _leaves_below(node_id, children)
            stack += [(leaf, branch, level + 1 + hidden) for leaf in reversed(leaves)]
            continue
        stack += [(kid, branch, level + 1) for kid in reversed(kids)]
    return top


def leaf_table(diagram: Diagram, *, precision: int = DEFAULT_PRECISION) -> Table | None:
    """The inputs with data and grad (constants have no grad: they are not listed)."""
    leaves = [n for n in diagram.nodes if n.role == "input"]
    leaves = leaves or [n for n in diagram.nodes if n.role == "group"]
    if not leaves:
        return None
    of = diagram_output_name(diagram)
    table = Table(title=None, box=None, pad_edge=False, header_style="bold")
    table.add_column("leaf")
    table.add_column("data", justify="right")
    if diagram.has_grad:
        table.add_column(f"grad = ∂{of}/∂leaf", justify="right")
    for leaf in leaves:
        # a leaf with no single number (a tensor: gradviz.torch.draw) shows its lines
        summary = Text(printable(leaf.extra_lines[0]) if leaf.extra_lines else "—", style="dim")
        row: list[RenderableType] = [
            Text(printable(leaf.label) or leaf.id),
            summary if leaf.data is None else _number(leaf.data, precision),
        ]
        if diagram.has_grad and leaf.grad is None:
            row.append(Text("—" if leaf.data is not None else "(above)", style="dim"))
        elif diagram.has_grad:
            row.append(_grad(leaf, precision))
        table.add_row(*row)
    return table


def to_terminal(
    diagram: Diagram,
    *,
    precision: int = DEFAULT_PRECISION,
    depth: int | None = MAX_DEPTH,
    more: str = MORE_LEVELS,
) -> RenderableType:
    """Tree (`to_tree`), then the leaf table, as one renderable."""
    parts: list[RenderableType] = []
    if diagram.title:
        parts.append(Text(printable(diagram.title), style="bold"))
    parts.append(to_tree(diagram, precision=precision, depth=depth, more=more))
    table = leaf_table(diagram, precision=precision)
    if table is not None:
        parts += [Text(""), table]
    return Group(*parts)


def to_text(
    diagram: Diagram,
    *,
    width: int = 100,
    precision: int = DEFAULT_PRECISION,
    depth: int | None = MAX_DEPTH,
) -> str:
    """The terminal view as plain text (no colour): for files, pipes and snapshots."""
    console = Console(width=width, color_system=None, force_terminal=False, file=io.StringIO())
    console.print(to_terminal(diagram, precision=precision, depth=depth))
    return console.file.getvalue()
