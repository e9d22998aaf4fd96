"""Renderers: pure functions from a graph to text (or a rich renderable).

Each function takes a `Value` (the output of a computation; call `.backward()` first
to see gradients) or a ready-made `Diagram`, and never prints or writes files.

    >>> from gradviz import Value, to_mermaid
    >>> a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    >>> L = a * b
    >>> L.label = "L"
    >>> L.backward()
    >>> print(to_mermaid(L, legend=False).splitlines()[1].replace("\\u202f", " "))
        n0["a │ data 2 │ grad -3"]

(Mermaid labels join each number to its name with a narrow no-break space, U+202F.)
"""

from __future__ import annotations

from collections.abc import Mapping

from gradviz.engine import Value
from gradviz.numbers import DEFAULT_PRECISION
from gradviz.render import dot as _dot
from gradviz.render import terminal as _terminal
from gradviz.render.diagram import Diagram, Edge, Node, diagram_from_value

__all__ = [
    "Diagram",
    "Edge",
    "Node",
    "as_diagram",
    "diagram_from_value",
    "to_dot",
    "to_json",
    "to_markdown",
    "to_mermaid",
    "to_text",
]


def as_diagram(
    graph: Value | Diagram, *, grad: bool = True, clusters: Mapping[Value, str] | None = None
) -> Diagram:
    """A Diagram as it is, or the drawing of a Value (`grad=False`: data alone)."""
    if isinstance(graph, Diagram):
        return graph
    if isinstance(graph, Value):
        return diagram_from_value(graph, grad=grad, clusters=clusters)
    raise TypeError(f"expected a Value or a Diagram, not {type(graph).__name__}")


def to_dot(
    graph: Value | Diagram,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    grad: bool = True,
    legend: bool = True,
) -> str:
    """Graphviz DOT text (byte-stable)."""
    diagram = as_diagram(graph, grad=grad)
    return _dot.to_dot(diagram, rankdir=rankdir, precision=precision, legend=legend)


def to_mermaid(
    graph: Value | Diagram,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    grad: bool = True,
    legend: bool = True,
) -> str:
    """A Mermaid `flowchart` (raises RenderError above Mermaid's 500-edge limit)."""
    from gradviz.render import mermaid as _mermaid  # lazy: start-up

    diagram = as_diagram(graph, grad=grad)
    return _mermaid.to_mermaid(diagram, rankdir=rankdir, precision=precision, legend=legend)


def to_markdown(
    graph: Value | Diagram,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    grad: bool = True,
    legend: bool = True,
) -> str:
    """The Mermaid flowchart in a fenced block, ready to paste into a README."""
    from gradviz.render import mermaid as _mermaid  # lazy: start-up

    diagram = as_diagram(graph, grad=grad)
    return _mermaid.to_markdown(diagram, rankdir=rankdir, precision=precision, legend=legend)


def to_json(graph: Value | Diagram, *, grad: bool = True) -> str:
    """Nodes and edges with op, data and grad (NaN/inf as the strings "nan", "inf")."""
    from gradviz.render import json as _json  # lazy: start-up

    return _json.to_json(as_diagram(graph, grad=grad))


def to_text(
    graph: Value | Diagram,
    *,
    precision: int = DEFAULT_PRECISION,
    grad: bool = True,
    width: int = 100,
) -> str:
    """The terminal view (tree and leaf table) as plain text."""
    diagram = as_diagram(graph, grad=grad)
    return _terminal.to_text(diagram, precision=precision, width=width)
