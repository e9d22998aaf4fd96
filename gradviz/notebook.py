"""What a notebook shows (Jupyter, JupyterLab, VS Code): `explore`'s live page in an
isolated iframe (`Page`), and `draw`'s Digraph, displayed as that same live page."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import TYPE_CHECKING

from gradviz.drawn import as_diagram, diagram_from_value
from gradviz.engine import Value, backpropagate, topological_order
from gradviz.files import write_atomic
from gradviz.layout import configure_graphviz_package
from gradviz.numbers import DEFAULT_PRECISION
from gradviz.pages import html_page, report_page
from gradviz.render.diagram import Diagram
from gradviz.render.dot import to_dot

if TYPE_CHECKING:
    import graphviz

    from gradviz.model import Model
    from gradviz.report import Report


class Page:
    """A live page (`gradviz.explore`): `.html` its text, `.save(path)` writes it, a notebook
    shows it inline."""

    def __init__(self, html: str, height: int = 900) -> None:
        self.html = html
        self.height = height

    def _repr_html_(self) -> str:
        # srcdoc + sandbox: the page's scripts run in an opaque origin, apart from the notebook's
        return (
            f'<iframe srcdoc="{html.escape(self.html, quote=True)}" sandbox="allow-scripts" '
            f'title="gradviz page" width="100%" height="{self.height}" '
            'frameborder="0"></iframe>'
        )

    def save(self, path: str | Path) -> None:
        write_atomic(Path(path), self.html.encode("utf-8"))


def explore(
    graph: Value | str | Model | Report,
    *,
    rankdir: str | None = None,
    precision: int = DEFAULT_PRECISION,
    **values: float,
) -> Page:
    """The live page (`gradviz.explore`) of a Value (its backward pass run from zero), of an
    expression with its inputs' values (`explore("L = a*b", a=2, b=-3)`), of a trained
    network (`explore(load_model("xor.json"))`: its report page) or of a training report."""
    from gradviz.expr import parse_program  # lazy: start-up
    from gradviz.model import Model  # lazy: start-up
    from gradviz.report import Report, build_report  # lazy: start-up

    if not isinstance(graph, Value | str | Model | Report):
        raise TypeError(
            f"explore takes a Value, an expression or a Model, not {type(graph).__name__}"
        )
    if values and not isinstance(graph, str):
        raise TypeError("values go with an expression: explore('a*b', a=2, b=3)")
    if isinstance(graph, Model):
        return Page(report_page(build_report(graph), title=graph.spec.name), height=1400)
    if isinstance(graph, Report):  # a run's report, built anywhere (a recorded run too)
        return Page(report_page(graph), height=1400)
    if isinstance(graph, str):
        expression, root = graph, parse_program(graph, values).output
    else:
        expression, root = "", graph
    backpropagate(topological_order(root))
    page = html_page(
        diagram_from_value(root),
        rankdir=rankdir,
        precision=precision,
        expression=expression,
    )
    return Page(page, height=_page_height(page))


def _page_height(page: str) -> int:
    """An iframe tall enough for the page's picture (at most 900 px of it) and controls."""
    size = re.search(r'<svg\b[^>]*\bheight="([\d.]+)pt"', page)
    drawing = float(size.group(1)) * 4 / 3 if size else 300.0
    return int(min(drawing, 900) + 720)


def draw(
    graph: Value | Diagram,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    grad: bool = True,
    legend: bool = True,
) -> graphviz.Digraph:
    """A `graphviz.Digraph` of the graph (`gradviz.draw`): inline in Jupyter, `.render()`
    writes files; graphviz-pure when no system Graphviz is installed."""
    import graphviz  # lazy: start-up (only this function needs it)

    configure_graphviz_package()
    diagram = as_diagram(graph, grad=grad)
    text = to_dot(diagram, rankdir=rankdir, precision=precision, legend=legend)
    body = text.splitlines(keepends=True)[1:-1]  # inside `digraph gradviz { … }`
    if not grad:
        return graphviz.Digraph(name="gradviz", body=body)

    class LiveDigraph(graphviz.Digraph):
        """The Digraph, shown in a notebook as the live page of the graph as it is now."""

        def _repr_mimebundle_(self, include: object = None, exclude: object = None, **_: object):
            page = html_page(diagram, rankdir=rankdir, precision=precision, expression="")
            return {"text/html": Page(page, height=_page_height(page))._repr_html_()}

    return LiveDigraph(name="gradviz", body=body)
