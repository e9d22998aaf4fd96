"""The report page of a recorded run (`gradviz inspect run.json -o report.html`): the
summary and the gradient texts as `inspect` prints them, the curves, the rms gradient
per layer with the layers × steps heat map, and the layer picture. A run has no network
or data, so the page says in a line that the predictions, the decision boundary and the
example graph are not there. Static: no script; only the page's style, by its hash.

Pure: the pictures arrive rendered; one HTML string out."""

from __future__ import annotations

from dataclasses import dataclass

from gradviz.render.html import HEAD, asset_text, csp_hash, inline_svg, page_css
from gradviz.render.report_page import _esc, _picture


@dataclass(frozen=True)
class RunParts:
    title: str
    summary: str
    gradients: str
    missing: str  # what is not on the page, and why
    curves_svg: bytes | None
    grads_svg: bytes | None
    network_svg: str
    notes: dict[str, str]


PAGE = (
    HEAD
    + """<body class="report">
<header><h1>{heading}</h1><p class="sub">gradviz: a training run recorded in another framework,
its curves and its gradients layer by layer.</p></header>
<main>
<section id="summary" aria-labelledby="summary-h"><h2 id="summary-h">Summary</h2>
<pre>{summary}</pre><p class="note">{missing}</p></section>
<section id="curves" aria-labelledby="curves-h"><h2 id="curves-h">Loss and accuracy</h2>
{curves}</section>
<section id="network" aria-labelledby="network-h"><h2 id="network-h">The layers</h2>
<figure id="graph" aria-label="the network, one node per layer">{network}</figure>
<p class="sub">Each layer is coloured by its rms gradient ∂L/∂w at the last recorded step
(the colour scale of every gradviz picture).</p>
</section>
<section id="gradients" aria-labelledby="gradients-h"><h2 id="gradients-h">Gradients per layer</h2>
<pre>{gradients}</pre>
{grads}</section>
</main>
</body>
</html>
"""
)


def run_html(parts: RunParts) -> str:
    css = page_css() + asset_text("report.css")
    csp = (
        f"default-src 'none'; style-src '{csp_hash(css)}'; img-src data:; base-uri 'none'; "
        "form-action 'none'"
    )
    notes = parts.notes
    return PAGE.format(
        csp=csp,
        title=_esc(f"gradviz report: {parts.title}"),
        css=css,
        heading=_esc(parts.title),
        summary=_esc(parts.summary),
        missing=_esc(parts.missing),
        curves=_picture(parts.curves_svg, "loss and accuracy per step", notes.get("curves")),
        network=inline_svg(parts.network_svg),
        gradients=_esc(parts.gradients),
        grads=_picture(
            parts.grads_svg, "rms gradient per layer, and per layer over steps", notes.get("grads")
        ),
    )
