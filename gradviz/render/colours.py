"""The one colour scale for |grad|, read by every picture: terminal, Graphviz, Mermaid, HTML.

Plain data (hex colours, band names, legend texts) so that any renderer, in Python or in
a page's JavaScript (`scale_as_data()`), shows the same thing. The scale is built on
ColorBrewer's purple-orange diverging palette (PuOr), chosen because it stays readable
with the common colour-vision deficiencies (it varies in lightness, and purple and orange
survive deuteranopia and protanopia): vanishing gradients are the darkest, most saturated
purple, the healthy middle a calm light grey, exploding ones dark orange. An exact 0 is
white with a dashed border, NaN/inf black with a thick red border and a ‼ mark: neither
can be taken for a band. Every `ink` is a text colour with a WCAG contrast of at least
4.5 on its `fill` (tests/test_colours.py computes it, and simulates the colour-vision
deficiencies).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass


@dataclass(frozen=True, slots=True)
class Band:
    """One step of the |grad| colour scale."""

    name: str  # a CSS/class-safe name: "g0" … "g6", "bad"
    text: str  # what the legend says
    fill: str  # background colour
    ink: str  # text colour readable on `fill`
    border: str = "#555555"  # outline colour
    border_width: float = 1.0  # outline width (pt in Graphviz, px in Mermaid/HTML)
    dashed: bool = False  # outline dashed (the exact 0)
    # The rich style of a grad number in this band in the terminal: named colours of the
    # same hue (purple → magenta, orange → yellow), since 16-colour terminals turn
    # #542788 into grey.
    term: str = ""
    line: str = "#555555"  # an edge's colour for a gradient in this band (seen on white)


# |grad| on a log scale, two decades a step. The ends of the scale stand out most.
BANDS: tuple[Band, ...] = (
    Band(
        "g0", "0", "#ffffff", "#000000", border="#555555", dashed=True, term="dim", line="#8a8a8a"
    ),
    Band("g1", "< 1e-6", "#542788", "#ffffff", term="bold white on magenta", line="#542788"),
    Band("g2", "1e-6 – 1e-4", "#7263a8", "#ffffff", term="bold magenta", line="#7263a8"),
    Band("g3", "1e-4 – 0.01", "#bdb7dc", "#000000", term="magenta", line="#8580bd"),
    Band("g4", "0.01 – 1", "#e3e3e3", "#000000", term="", line="#6e6e6e"),
    Band("g5", "1 – 100", "#fdb863", "#000000", term="yellow", line="#c66a00"),
    Band("g6", "≥ 100", "#b35806", "#ffffff", term="bold red", line="#7f3b08"),
)
# NaN/inf: black with a thick red border (also in grey scale: the only black fill), and
# the bad number itself carries BAD_MARK, so one can tell whether data or grad went wrong.
BAD_BAND = Band(
    "bad",
    "nan / inf",
    "#000000",
    "#ffffff",
    border="#d62728",
    border_width=3.0,
    term="bold white on red",
    line="#d62728",
)
BAD_BORDER = BAD_BAND.border
BAD_MARK = "‼"
ALL_BANDS: tuple[Band, ...] = (*BANDS, BAD_BAND)
BAND_EDGES = (1e-6, 1e-4, 1e-2, 1.0, 1e2)  # lower bounds of bands g2 … g6
LEGEND_TITLE = "|grad|"  # what the legend row starts with
EDGE_KEY = "edges: width |w|, colour ∂L/∂w"  # a network's weight edges, in the legend
PLAIN_FILL = "#ffffff"  # nodes without a grad (ops, --no-grad)
PLAIN_BORDER = "#555555"


def band_for(magnitude: float | None, finite: bool = True) -> Band | None:
    """The band of a |grad| (None without one); `finite` False gives BAD_BAND."""
    if not finite or (magnitude is not None and not math.isfinite(magnitude)):
        return BAD_BAND
    if magnitude is None:
        return None
    if magnitude == 0:
        return BANDS[0]
    return BANDS[1 + sum(magnitude >= edge for edge in BAND_EDGES)]


def scale_as_data() -> dict[str, object]:
    """The scale as JSON-ready data, for pages that colour in JavaScript (HTML output)."""
    return {
        "title": LEGEND_TITLE,
        "edges": list(BAND_EDGES),
        "bands": [asdict(b) for b in ALL_BANDS],
        "bad_mark": BAD_MARK,
    }
