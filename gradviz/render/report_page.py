"""One self-contained HTML page for a trained network (`inspect MODEL -o report.html`,
`train SPEC --report FILE.html`): the summary, the curves, the decision boundary, the
predictions, the gradients, the network recoloured by an epoch slider, and one example's
loss graph, which runs in the page: every example's graph has one shape, so the page
carries it once and runs it with assets/engine.js (tests/test_html_parity.py checks it
against the Python engine to the bit). Pure: a `Report` and its rendered parts in, HTML
out. Scripts and styles are allowed by their hashes in a Content-Security-Policy that
forbids everything else; user text is escaped as HTML, or as JSON for a script.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from gradviz.numbers import DEFAULT_PRECISION, fmt, json_number
from gradviz.render import colours
from gradviz.render.colours import BAD_BAND, BANDS
from gradviz.render.diagram import Diagram
from gradviz.render.html import (
    HEAD,
    asset_text,
    csp_hash,
    engine_script,
    inline_svg,
    json_for_script,
    page_css,
    style_sources,
)
from gradviz.text import printable, printable_lines

if TYPE_CHECKING:  # the data drawn, never loaded or computed here
    from gradviz.data import Dataset
    from gradviz.records import History
    from gradviz.report import Report

# Examples the page lists (each a button that shows its loss graph); above, a note says so.
EXAMPLE_LIMIT = 200


@dataclass(frozen=True)
class ReportParts:
    """What the page shows, already rendered: texts as the terminal prints them, the
    pictures as SVG (None: left out, `notes` says why)."""

    title: str  # the model file, or the spec trained
    summary: str  # `summary_text` and the final line, as printed
    gradients: str  # the per-layer table and its verdict, as printed
    curves_svg: str | None  # inline SVG (`page_plots`)
    boundary_svg: str | None
    grads_svg: str | None
    network_svg: str | None  # Graphviz's SVG of the layer-level network picture
    notes: dict[str, str]
    program: dict[str, Any]  # one example's loss graph as the page runs it


def band_index(grad: float | None) -> int:
    """A layer's rms gradient's index into BANDS (the pictures' scale), -1 for NaN/inf;
    a missing value is band 0."""
    band = colours.band_for(None if grad is None else abs(grad))
    if band is BAD_BAND:
        return -1
    return 0 if band is None else BANDS.index(band)


def epoch_frames(snapshots: History, layer_names: Sequence[str]) -> list[dict[str, Any]]:
    """Per recorded epoch, per layer: its band and the texts the network picture shows
    (`max … rel …`, `status …`), as the layer diagram words them."""
    frames = []
    for epoch, diagnosis in snapshots:
        layers = []
        for name, stats in zip(layer_names, diagnosis.layers, strict=False):
            rel = fmt(stats.rel) if stats.rel is not None else "—"
            layers.append(
                {
                    "name": name,
                    "band": band_index(stats.rms),
                    "rms": fmt(stats.rms),
                    "grad": stats.rms,
                    "max": f"max {fmt(stats.max_abs)}  rel {rel}",
                    "status": f"status {stats.status}",
                }
            )
        frames.append({"epoch": epoch, "layers": layers})
    return frames


# Room kept for every epoch's text: spaces (the picture shows other blank characters escaped).
PAD = " "


def inputs_line(x: Sequence[float]) -> str:
    """The network picture's inputs as the layer diagram words them: `x0 0, x1 1`."""
    return ", ".join(f"x{j} {fmt(v)}" for j, v in enumerate(x))


def epoch_diagram(
    diagram: Diagram, frames: Sequence[dict[str, Any]], data: Dataset | None = None
) -> Diagram:
    """The layer-level network picture with each layer's texts room enough for every
    recorded epoch's (the page rewrites them), showing the last epoch's gradients; and
    the inputs' line room enough for every listed example of `data`."""
    by_layer: dict[str, list[dict[str, Any]]] = {}
    for frame in frames:
        for layer in frame["layers"]:
            by_layer.setdefault(layer["name"], []).append(layer)
    nodes = []
    for node in diagram.nodes:
        if data is not None and node.id == "inputs" and node.extra_lines:
            width = max(len(inputs_line(row)) for row in data.X[:EXAMPLE_LIMIT].tolist())
            node = replace(node, extra_lines=(node.extra_lines[0].ljust(width, PAD),))
        seen = by_layer.get(node.id)
        if seen:
            lines = [node.extra_lines[0] if node.extra_lines else node.label]
            for key in ("max", "status"):
                width = max(len(layer[key]) for layer in seen)
                lines.append(seen[-1][key].ljust(width, PAD))
            node = replace(node, grad=seen[-1]["grad"], extra_lines=tuple(lines))
        nodes.append(node)
    return replace(diagram, nodes=tuple(nodes))


def _note(note: str | None) -> str:
    return f'<p class="note">{html.escape(note or "not drawn")}</p>'


def _picture(svg: str | None, note: str | None) -> str:
    return _note(note) if svg is None else f'<figure class="plot">{svg}</figure>'


def _examples(report: Report) -> str:
    """The examples table, or a note when the run holds no data."""
    data, outputs, correct = report.data, report.outputs, report.correct
    if data is None or outputs is None or correct is None:
        return '<p class="note">no predictions: the run holds no data</p>'
    shown = min(data.size, EXAMPLE_LIMIT)
    head = "".join(f'<th scope="col">{html.escape(n)}</th>' for n in data.feature_names)
    rows = []
    for i in range(shown):
        y = float(data.Y[i])
        right = correct[i]
        cells = "".join(f"<td>{html.escape(fmt(v))}</td>" for v in data.X[i].tolist())
        target = 2.0 * y - 1.0 if report.signed else y
        mark = "✓" if right else "✗ wrong"
        rows.append(
            f'<tr class="{"right" if right else "wrong"}"><td>'
            f'<button type="button" class="show" data-i="{i}" '
            f'aria-label="show example {i + 1}\'s loss graph">{i + 1}</button></td>'
            f"{cells}<td>{html.escape(fmt(target))}</td><td>{html.escape(fmt(outputs[i]))}</td>"
            f"<td>{mark}</td></tr>"
        )
    note = ""
    if data.size > shown:
        wrong = list(correct).count(False)
        note = (
            f'<p class="sub">The first {shown} of {data.size} examples ({wrong} wrong in all); '
            "type any other input below.</p>"
        )
    return (
        f'<div class="scroll"><table id="examples"><thead><tr><th scope="col">#</th>{head}'
        '<th scope="col">target</th><th scope="col">output</th><th scope="col"></th></tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table></div>{note}"
    )


SCATTER_SIZE = 260  # px: the clickable data picture of 2-input data
SCATTER_PAD = 14
POINT_FILLS = ("#5e3c99", "#e66101")  # target ≤ 0.5, > 0.5


def _scatter(data: Dataset) -> str:
    """The listed examples of 2-input data as points to click (each shows its loss graph;
    a click elsewhere shows the graph of that input). Its data-* attributes map pixels
    back to inputs. Keyboard users have the table's buttons and the input boxes."""
    if data.X.shape[1] != 2 or data.size == 0:
        return ""
    shown = data.X[:EXAMPLE_LIMIT]
    lows, highs = data.X.min(axis=0).tolist(), data.X.max(axis=0).tolist()
    spans = [(hi - lo) or 1.0 for lo, hi in zip(lows, highs, strict=True)]
    if not all(math.isfinite(v) for v in (*lows, *spans)):  # no pixel maps back: boxes only
        return ""
    inner = SCATTER_SIZE - 2 * SCATTER_PAD

    def px(v: float, axis: int) -> float:
        t = (v - lows[axis]) / spans[axis]
        return round(SCATTER_PAD + (t if axis == 0 else 1 - t) * inner, 2)

    points = []
    for i, (x0, x1) in enumerate(shown.tolist()):
        fill = POINT_FILLS[int(data.Y[i] > 0.5)]
        points.append(
            f'<circle cx="{px(x0, 0)}" cy="{px(x1, 1)}" r="5" fill="{fill}" stroke="#ffffff" '
            f'stroke-width="1" data-i="{i}"><title>example {i + 1}</title></circle>'
        )
    names = [html.escape(n) for n in data.feature_names]
    size = SCATTER_SIZE
    return (
        f'<figure class="scatter"><svg id="scatter" width="{size}" height="{size}" '
        f'viewBox="0 0 {size} {size}" role="img" aria-label="the data: click a point for its '
        f'loss graph, or anywhere else for that input" data-low="{lows[0]!r} {lows[1]!r}" '
        f'data-span="{spans[0]!r} {spans[1]!r}" data-pad="{SCATTER_PAD}">'
        f'<rect x="0.5" y="0.5" width="{size - 1}" height="{size - 1}" fill="#ffffff" '
        f'stroke="#d0d7de"/>{"".join(points)}'
        f'<circle id="scatter-now" r="9" fill="none" stroke="#1b1f24" stroke-width="2" '
        f'cx="-20" cy="-20"/></svg>'
        f"<figcaption>{names[0]} across, {names[1]} up; "
        f'<span class="dot0">●</span> target 0, <span class="dot1">●</span> target 1. '
        "Click a point, or anywhere for that input.</figcaption></figure>"
    )


def _typed_form(data: Dataset) -> str:
    """The boxes for an input of one's own, and the button that shows its loss graph."""
    boxes = [
        f'<label for="in-{j}">{html.escape(name)}</label>'
        f'<input type="number" id="in-{j}" step="any" value="{float(data.X[0, j])!r}">'
        for j, name in enumerate(data.feature_names)
    ]
    return (
        f'<form id="typed" class="inputs">{"".join(boxes)}<label for="in-y">target y</label>'
        f'<input type="number" id="in-y" step="any" value="{float(data.Y[0])!r}">'
        '<button type="submit" id="show-typed">Show graph</button>\n</form>'
    )


PAGE = (
    HEAD
    + """<body class="report">
<header><h1>{heading}</h1><p class="sub">{intro}</p></header>
<main>
<section id="summary" aria-labelledby="summary-h"><h2 id="summary-h">Summary</h2>
<pre>{summary}</pre></section>
<section id="curves" aria-labelledby="curves-h"><h2 id="curves-h">Loss and accuracy</h2>
{curves}</section>
{boundary_section}
<section id="network" aria-labelledby="network-h"><h2 id="network-h">The network by {unit}</h2>
<p class="buttons"><label for="epoch">{Unit}</label>
<input type="range" id="epoch" min="0" max="{last}" step="1" value="{last}"
 aria-describedby="epoch-text">
<span id="epoch-text" aria-live="polite"></span></p>
<figure id="graph" class="live" aria-label="the network, one node per layer">{network}</figure>
<p class="sub">Each layer is coloured by its rms gradient ∂L/∂w {over} at the chosen {unit}
(the colour scale of every gradviz picture).</p>
</section>
<section id="gradients" aria-labelledby="gradients-h"><h2 id="gradients-h">Gradients per layer</h2>
<pre>{gradients}</pre>
{grads}</section>
{data_sections}
</main>
{scripts}
</body>
</html>
"""
)


BOUNDARY_SECTION = """<section id="boundary" aria-labelledby="boundary-h"><h2 id="boundary-h">\
Decision boundary</h2>
{boundary}</section>"""
DATA_SECTIONS = """<section id="predictions" aria-labelledby="predictions-h">\
<h2 id="predictions-h">Predictions</h2>{examples}</section>
<section id="example" aria-labelledby="example-h"><h2 id="example-h">One example's loss graph</h2>
{scatter}
{typed}
<p id="example-text" class="out" aria-live="polite"></p>
<div class="scroll"><table id="graph-table"><thead><tr><th scope="col">#</th>
<th scope="col">node</th><th scope="col">in</th><th scope="col">op</th>
<th scope="col">inputs</th><th scope="col">data</th><th scope="col">grad</th></tr></thead>
<tbody></tbody></table></div>
</section>"""
# A run recorded elsewhere holds per-layer statistics and curves only: one line for the rest.
RUN_LACKS = (
    '<p class="note" id="run-lacks">no predictions, no decision boundary, no example\'s loss '
    "graph: a recorded run holds no network and no data</p>"
)


def report_html(parts: ReportParts, report: Report) -> str:
    """The report page (see the module's docstring)."""
    frames = epoch_frames(report.snapshots, report.layer_names)
    shown = [  # the raw rms stays out: the page reads the band and the texts
        {
            "epoch": f["epoch"],
            "layers": [{k: v for k, v in layer.items() if k != "grad"} for layer in f["layers"]],
        }
        for f in frames
    ]
    data = report.data
    rows = data.X[:EXAMPLE_LIMIT].tolist() if data is not None else []
    payload = {
        "frames": shown,
        "bands": [{"fill": b.fill, "ink": b.ink} for b in BANDS],
        "bad": {"fill": BAD_BAND.fill, "ink": BAD_BAND.ink},
        "edges": list(colours.BAND_EDGES),
        "program": parts.program,
        "X": [[json_number(v) for v in row] for row in rows],
        "Y": [json_number(v) for v in data.Y[:EXAMPLE_LIMIT].tolist()] if data is not None else [],
        "names": list(data.feature_names) if data is not None else [],
        "precision": DEFAULT_PRECISION,
        "unit": report.unit,
    }
    code = engine_script() + asset_text("report.js")
    css = page_css() + asset_text("report.css")
    csp = (
        f"default-src 'none'; script-src '{csp_hash(code)}'; "
        f"style-src {style_sources(css, parts.network_svg or '')}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    scripts = (
        f'<script type="application/json" id="gv-report">{json_for_script(payload)}</script>\n'
        f"<script>{code}</script>"
    )
    notes = parts.notes
    unit = report.unit
    if data is None:  # a recorded run: what it lacks in one line, no empty sections
        intro = (
            f"gradviz: a training run recorded elsewhere, its curves and its gradients. Move "
            f"the {unit} slider to recolour the network."
        )
        boundary_section, data_sections = "", RUN_LACKS
        over = "over the recorded step's batch"
    else:
        intro = (
            "gradviz: a trained network, its training and its gradients. Move the epoch "
            "slider to recolour the network; pick an example to see its loss graph."
        )
        boundary_section = BOUNDARY_SECTION.format(
            boundary=_picture(parts.boundary_svg, notes.get("boundary"))
        )
        data_sections = DATA_SECTIONS.format(
            examples=_examples(report), typed=_typed_form(data), scatter=_scatter(data)
        )
        over = "over the whole data set"
    return PAGE.format(
        csp=csp,
        title=html.escape(printable(f"gradviz report: {parts.title}")),  # a file name: no ESC raw
        css=css,
        heading=html.escape(printable(parts.title)),
        intro=intro,
        unit=unit,
        Unit=unit.capitalize(),
        over=over,
        summary=html.escape(printable_lines(parts.summary)),
        curves=_picture(parts.curves_svg, notes.get("curves")),
        boundary_section=boundary_section,
        data_sections=data_sections,
        last=max(0, len(frames) - 1),
        network=_note(notes.get("network"))
        if parts.network_svg is None
        else inline_svg(parts.network_svg),
        gradients=html.escape(parts.gradients),
        grads=_picture(parts.grads_svg, notes.get("grads")),
        scripts=scripts,
    )
