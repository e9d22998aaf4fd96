"""What a notebook shows (Jupyter, JupyterLab, VS Code): `explore`'s live page in an
isolated iframe (`Page`), and `draw`'s Digraph, displayed as that same live page.
Kept apart from the formats and from the CLI: only a notebook needs an iframe."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import TYPE_CHECKING

from gradviz.engine import Value, backpropagate, topological_order
from gradviz.files import write_atomic
from gradviz.layout import configure_graphviz_package
from gradviz.numbers import DEFAULT_PRECISION
from gradviz.pages import html_page, report_page
from gradviz.render import as_diagram
from gradviz.render.diagram import Diagram, diagram_from_value
from gradviz.render.dot import dot_body

if TYPE_CHECKING:
    import graphviz

    from gradviz.engine import Value
    from gradviz.model import Model
    from gradviz.report import Report


class Page:
    """A live page (`gradviz.explore`): `.html` is its text, `.save(path)` writes it, and a
    notebook (Jupyter, JupyterLab, VS Code) shows it inline in an isolated iframe."""

    def __init__(self, html: str, height: int = 900) -> None:
        self.html = html
        self.height = height

    def _repr_html_(self) -> str:
        # srcdoc + sandbox: the page's scripts run in a frame of their own (an opaque
        # origin), so they cannot touch the notebook and the notebook's cannot touch them.

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
    """The live page of a graph (`gradviz.explore`): a Value (its backward pass is run from
    zero, as `gradviz draw` runs it), or
    an expression with its inputs' values, `explore("e = a*b; L = e + a", a=2, b=-3)`,
    whose page can also copy the `gradviz draw` command that reproduces it; or a trained
    network (`explore(load_model("xor.json"))`): its report page, as `inspect -o` writes it;
    or a training report (`gradviz.report.build_report`, `Report.from_recorded`): its page."""
    from gradviz.expr import parse_program  # lazy: start-up
    from gradviz.model import Model  # lazy: start-up
    from gradviz.report import Report  # lazy: start-up

    if isinstance(graph, Model):
        return _model_page(graph, values)
    if isinstance(graph, Report):  # a run's report, built anywhere (a recorded run too)
        return Page(report_page(graph), height=1400)
    if isinstance(graph, str):
        expression, root = graph, parse_program(graph, values).output
    elif isinstance(graph, Value):
        if values:
            raise TypeError("values go with an expression: explore('a*b', a=2, b=3)")
        expression, root = "", graph
    else:
        raise TypeError(
            f"explore takes a Value, an expression or a Model, not {type(graph).__name__}"
        )
    # A pass from zero, as the CLI runs it: backward() would add to grads already held.
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


# The report page's texts are laid out this wide (the table drops columns as a terminal so


def _model_page(model: Model, values: dict[str, float]) -> Page:
    """A trained network's report page on its own data set, for a notebook."""
    from gradviz.report import build_report  # lazy: start-up

    if values:
        raise TypeError("values go with an expression: explore('a*b', a=2, b=3)")
    return Page(report_page(build_report(model), title=model.spec.name), height=1400)


def draw(
    graph: Value | Diagram,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    grad: bool = True,
    legend: bool = True,
) -> graphviz.Digraph:
    """A `graphviz.Digraph` of the graph (`gradviz.draw`): displays inline in Jupyter,
    `.render()` writes files. Uses graphviz-pure when no system Graphviz is installed, so it
    lives here, beside the finding of `dot`, rather than among the pure renderers."""
    import graphviz  # lazy: start-up (only this function needs it)

    configure_graphviz_package()
    diagram = as_diagram(graph, grad=grad)
    body = dot_body(diagram, rankdir=rankdir, precision=precision, legend=legend)
    if not grad:
        return graphviz.Digraph(name="gradviz", body=body)

    class LiveDigraph(graphviz.Digraph):
        """The Digraph, shown in a notebook as the live page (`explore`'s iframe) of the
        graph as it is now; `.source`, `.render()` and the rest are the Digraph's."""

        def _repr_mimebundle_(self, include: object = None, exclude: object = None, **_: object):
            page = html_page(diagram, rankdir=rankdir, precision=precision, expression="")
            return {"text/html": Page(page, height=_page_height(page))._repr_html_()}

    return LiveDigraph(name="gradviz", body=body)
