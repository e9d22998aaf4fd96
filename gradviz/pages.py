"""The HTML pages whose pictures Graphviz draws: a graph's live page (`html_page`) and
a training report's page (`report_page`). The page builders in gradviz.render are pure;
here they are handed what they show: the trace steps, the SVG laid out by the Graphviz
program (gradviz.layout), the plots (gradviz.render.page_plots: inline SVG, no matplotlib)."""

from __future__ import annotations

import io
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rich.console import Console

from gradviz.engine import topological_order
from gradviz.errors import GradvizError, OptionWords, keyword
from gradviz.layout import DotProgram, run_dot
from gradviz.numbers import DEFAULT_PRECISION, json_number
from gradviz.output import pure_first, svg_width_px
from gradviz.render import html
from gradviz.render.diagram import (
    TORCH_LEVELS,
    Diagram,
    captioned,
    draw_less,
    preferred_rankdir,
)
from gradviz.render.dot import to_dot
from gradviz.render.html import NUMBER_WIDTH, POWER_KEY, op_key, power_exponent

if TYPE_CHECKING:
    from gradviz.model import LossGraph
    from gradviz.render.animate import Timeline
    from gradviz.report import Report


def stepped_svg(
    diagram: Diagram, *, rankdir: str | None = None, program: DotProgram | None = None
) -> tuple[str, Timeline]:
    """A diagram's backward pass as one animated SVG laid out once, and its timeline."""
    from gradviz.render.animate import animated_svg  # lazy: start-up
    from gradviz.render.step_page import backward_timeline  # lazy: start-up

    drawn, timeline = backward_timeline(diagram)
    dot_text = to_dot(drawn, rankdir=rankdir or preferred_rankdir(diagram))
    heavy = pure_first(drawn)
    svg = run_dot(dot_text, "svg", program=program, heavy=heavy, smaller=draw_less(drawn))
    return animated_svg(svg.decode("utf-8"), timeline), timeline


def html_page(
    diagram: Diagram,
    *,
    rankdir: str | None = None,
    precision: int = DEFAULT_PRECISION,
    program: DotProgram | None = None,
    expression: str | None = None,
    command: str = "draw",
    words: OptionWords = keyword,
) -> str:
    """The self-contained page of `gradviz.render.html`, with its SVG drawn by Graphviz
    (numbers laid out wide enough for the page to rewrite them). A static page says why,
    naming an option as `words` does (the CLI: `--no-grad`). `rankdir` None: left to
    right, or top to bottom where that reads better at 800 px."""
    from gradviz.render.themes import themed_svg  # lazy: start-up

    if diagram.level in TORCH_LEVELS and diagram.has_grad:  # (render.step_page)
        from gradviz.render.step_page import backward_sentences, step_page  # lazy: start-up

        svg, timeline = stepped_svg(diagram, rankdir=rankdir, program=program)
        title = "gradviz: a PyTorch backward pass"
        return step_page(svg, timeline, title=title, sentences=backward_sentences(diagram))
    live = html.live_reason(diagram) is None and expression is not None
    drawn = html.page_diagram(diagram) if live else diagram
    heavy = pure_first(diagram)

    def layout(direction: str) -> bytes:
        dot_text = to_dot(
            drawn,
            rankdir=direction,
            precision=precision,
            number_width=html.NUMBER_WIDTH if live else 0,
        )
        return run_dot(dot_text, "svg", program=program, heavy=heavy, smaller=draw_less(diagram))

    # Left to right unless the picture's text would then stand below 10 px on an 800 px
    # page (a live page fits it to its width) and top to bottom is narrower. (A static
    # page shows its picture at its natural size, scrolling sideways.)
    svg = layout(rankdir or "LR")
    if rankdir is None and live and svg_width_px(svg) > html.FIT_WIDTH_PX:
        tall = layout("TB")
        svg = tall if svg_width_px(tall) < svg_width_px(svg) else svg
    svg = themed_svg(svg.decode("utf-8")).encode("utf-8")
    note, steps, graph = None, (), None
    if live:
        from gradviz.drawn import page_graph  # lazy: start-up
        from gradviz.tracing import trace  # lazy: start-up

        steps, graph = trace(list(diagram.value_ids)[-1]), page_graph(diagram)
    else:
        note = html.live_reason(diagram, words) or "only a graph drawn from an expression is live"
    return html.to_html(
        diagram,
        svg.decode("utf-8"),
        expression=one_line(expression) if expression else expression,
        command=command,
        step=1 if command == "trace" else 0,
        precision=precision,
        note=note,
        graph=graph,
        steps=steps,
    )


def one_line(text: str) -> str:
    """An expression file as one line (comments dropped, statements joined by `; `), or
    the text as it was when the one line would not parse to the same graph."""
    from gradviz.expr import parse_program  # lazy: start-up

    parts: list[str] = []
    depth = 0
    for line in text.split("\n"):
        code = line.split("#", 1)[0].strip()
        if not code:
            continue
        if parts:
            joined = depth > 0 or parts[-1].endswith("\\")
            parts[-1] = parts[-1].rstrip("\\").rstrip()
            parts.append(" " if joined else "; ")
        parts.append(code.rstrip(";").rstrip() if code.endswith(";") else code)
        depth += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
    short = "".join(parts)
    if short == text:
        return text

    def shape(code: str) -> tuple[list, list[str]]:
        program = parse_program(code)
        nodes = (program.output, *program.names.values())
        return [(n.op.name if n.op else n.label, n.data) for n in nodes], list(program.names)

    try:
        return short if shape(text) == shape(short) else text
    except GradvizError:
        return text


# The report page's texts are laid out this wide (the table drops columns as a terminal so
# wide would): 96 columns of 12 px DejaVu Sans Mono fit the page at 800 px, uncut.
PAGE_TEXT_WIDTH = 96


def _plain(renderables: list) -> str:
    """Renderables as the terminal prints them, without colour or trailing spaces."""
    text = io.StringIO()
    console = Console(file=text, width=PAGE_TEXT_WIDTH, color_system=None, highlight=False)
    for renderable in renderables:
        console.print(renderable)
    return re.sub(r"[ \t]+(?=\n)", "", text.getvalue()).rstrip("\n")


def report_page(
    report: Report,
    *,
    more: str | None = None,
    statuses: str | None = None,
    title: str | None = None,
) -> str:
    """The report page of a training run (`gradviz.render.report_page`): the texts as
    `inspect` prints them, the plots as inline SVG, the network by Graphviz. `more` and
    `statuses` point the reader, in the caller's words, to the columns the table leaves
    out and to what each status means; `title`: the report's own."""
    from gradviz.drawn import network_diagram  # lazy: start-up
    from gradviz.model import network_loss_graph  # lazy: start-up
    from gradviz.render.network import recorded_layer_diagram  # lazy: start-up
    from gradviz.render.page_plots import (  # lazy: start-up
        STATUS_MEANINGS,
        boundary_svg,
        curves_svg,
        grads_svg,
        unmappable,
    )
    from gradviz.render.report_page import (  # lazy: start-up
        ReportParts,
        epoch_diagram,
        epoch_frames,
        report_html,
    )
    from gradviz.render.themes import themed_svg  # lazy: start-up
    from gradviz.render.training import final_text, gradient_report, summary_text  # lazy: start-up

    data, network = report.data, report.network
    where = f"on {data.name}, {data.size} examples" if data is not None else "as recorded"
    notes: dict[str, str] = {}
    curves = None
    if report.loss:
        curves = curves_svg(
            report.loss, report.accuracy, report.every, "loss and accuracy", where, report.unit
        )
    else:
        notes["curves"] = "No training curves recorded in this model."
    grid, boundary = report.boundary(), None
    if why := (report.boundary_note if grid is None else unmappable(grid)):
        notes["boundary"] = why
    elif grid is not None:
        boundary = boundary_svg(grid, f"decision boundary after {report.epochs_run} epochs", where)
    grads = grads_svg(
        report.diagnosis,
        report.snapshots or None,
        "rms gradient per layer",
        where,
        statuses=statuses or STATUS_MEANINGS,
    )
    program: dict = {"skip": "no example graph: the run holds no data"}
    frames = epoch_frames(report.snapshots, report.layer_names)
    example = network is not None and data is not None  # else a recorded run
    if example:
        graph = network_loss_graph(network, data.X[0].tolist(), float(data.Y[0]))
        diagram = network_diagram(graph, "layer", None)
        key = "one node per layer, coloured by its rms gradient ∂L/∂w at the epoch chosen above"
        diagram = replace(
            diagram, **captioned(None, key, "inputs, y and loss: the example shown below")
        )
        program = example_program(graph)
    else:  # its layers from the statistics alone
        diagram = recorded_layer_diagram(report.layer_names, report.diagnosis)
    diagram = epoch_diagram(diagram, frames, data if example else None)
    dot_text = to_dot(diagram, rankdir="TB", number_width=NUMBER_WIDTH)
    network_svg = run_dot(dot_text, "svg").decode("utf-8")
    if example:
        network_svg = themed_svg(network_svg)

    summary: list = [summary_text(report.spec, data)] if report.spec and data else [report.summary]
    if report.final is not None and data is not None:
        summary.append(final_text(report.final.loss, report.final.accuracy, data.size))
    parts = ReportParts(
        title=title or report.title,
        summary=_plain(summary),
        gradients=_plain([gradient_report(report, "Gradients per layer", more)]),
        curves_svg=curves,
        boundary_svg=boundary,
        grads_svg=grads,
        network_svg=network_svg,
        notes=notes,
        program=program,
    )
    return report_html(parts, report)


# Nodes of one example's loss graph the page still runs and lists; above, a note.
GRAPH_LIMIT = 3000


def example_program(graph: LossGraph) -> dict[str, Any]:
    """One example's loss graph (`model.network_loss_graph`) as the report page's engine
    runs it: nodes in topological order (`k` the JS op key, `p` parent indices, `n` a
    constant exponent), leaves with their values (the weights), and which leaves are the
    inputs `x0…` and the target `y`. Every example's graph has this shape."""
    order = topological_order(graph.loss)
    if len(order) > GRAPH_LIMIT:
        return {
            "skip": f"{len(order):,} nodes in one example's loss graph: more than the "
            f"page lists ({GRAPH_LIMIT:,})"
        }
    index = {v: i for i, v in enumerate(order)}
    nodes = []
    for v in order:
        entry: dict[str, Any] = {"name": v.label or "", "k": None, "at": graph.clusters.get(v, "")}
        if v.op is None:
            entry["v"] = json_number(v.data)
        else:
            entry.update(k=op_key(v.op), op=v.op.symbol, p=[index[p] for p in v.parents])
            if entry["k"] == POWER_KEY:
                entry["n"] = json_number(power_exponent(v.op))
        nodes.append(entry)
    return {
        "nodes": nodes,
        "x": [index[x] for x in graph.built.inputs],
        "y": index[graph.built.target],
    }
