"""The one colour scale for |grad|, read by every picture: terminal, Graphviz, Mermaid, HTML.

Built on ColorBrewer's purple-orange diverging palette (PuOr), which stays readable with
the common colour-vision deficiencies: vanishing gradients the darkest purple, the healthy
middle a calm light grey, exploding ones dark orange; an exact 0 white with a dashed
border, NaN/inf black with a thick red border and a ‼ mark. Every `ink` reads on its
`fill` at a WCAG contrast of at least 4.5 (tests/test_colours.py computes it and simulates
the deficiencies). Dark mode (`DARK_BANDS`, `DARK`) turns the bands' lightness around, so
vanishing gradients are still the furthest from the background; pictures are written in
the light colours and `gradviz.render.themes` switches them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace


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
    Band("g0", "0", "#ffffff", "#000000", dashed=True, term="dim", line="#8a8a8a"),
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


@dataclass(frozen=True, slots=True)
class Palette:
    """What a picture draws besides the bands, in one theme."""

    name: str  # "light" or "dark"
    background: str  # the page behind the drawing
    surface: str  # nodes without a grad, the exact 0 and dimmed nodes
    ink: str  # text on `surface` and on the background (titles, edge labels)
    border: str  # node outlines, plain edges and their arrowheads
    cluster: str  # a cluster's box
    current: str  # the trace: the step being taken (nodes and edges)
    done: str  # the trace: the steps already taken
    dim_border: str  # the trace: nodes no credit reaches
    dim_ink: str
    bands: tuple[Band, ...]  # as ALL_BANDS, in this theme


# The trace's states: (border colour, pen width, ink override). The current step is blue:
# it shows on every band's fill (an orange border vanished on the orange bands).
CURRENT, DONE, DIM_BORDER, DIM_INK = "#0969da", "#2ca02c", "#cccccc", "#aaaaaa"
STATE_LOOK = {
    "current": (CURRENT, "3", None),
    "done": (DONE, "2", None),
    "dim": (DIM_BORDER, "1", DIM_INK),
}

LIGHT = Palette(
    "light",
    background="#ffffff",
    surface=PLAIN_FILL,
    ink="#000000",
    border=PLAIN_BORDER,
    cluster="#999999",
    current=CURRENT,
    done=DONE,
    dim_border=DIM_BORDER,
    dim_ink=DIM_INK,
    bands=ALL_BANDS,
)

# The dark scale, band by band. Where the light scale draws a band's edges in its fill
# colour (g1, g2), so does this one, so that a colour names one band.
_DARK_LOOK = {
    "g0": {"fill": "#22262d", "ink": "#e6edf3", "line": "#8b949e"},
    "g1": {"fill": "#e4d8ff", "ink": "#000000", "line": "#e4d8ff"},
    "g2": {"fill": "#9a88dc", "ink": "#000000", "line": "#9a88dc"},
    "g3": {"fill": "#4f4480", "ink": "#ffffff", "line": "#8b80c4"},
    "g4": {"fill": "#3a3e46", "ink": "#ffffff", "line": "#9aa0a6"},
    "g5": {"fill": "#8a4e0c", "ink": "#ffffff", "line": "#d9832b"},
    "g6": {"fill": "#c47a35", "ink": "#000000", "line": "#f0a050"},
    "bad": {"fill": "#000000", "ink": "#ffffff", "line": "#ff6b6b"},
}
DARK_BANDS: tuple[Band, ...] = tuple(
    replace(band, **_DARK_LOOK[band.name], border="#ff6b6b" if band is BAD_BAND else "#8b949e")
    for band in ALL_BANDS
)
DARK = Palette(
    "dark",
    background="#16181d",
    surface=_DARK_LOOK["g0"]["fill"],
    ink="#e6edf3",
    border="#8b949e",
    cluster="#6e7681",
    current="#2f81f7",
    done="#3fb950",
    dim_border="#3d444d",
    dim_ink="#7d8590",
    bands=DARK_BANDS,
)
PALETTES = (LIGHT, DARK)


def band_for(magnitude: float | None, finite: bool = True) -> Band | None:
    """The band of a |grad| (None without one); `finite` False gives BAD_BAND."""
    if not finite or (magnitude is not None and not math.isfinite(magnitude)):
        return BAD_BAND
    if magnitude is None:
        return None
    if magnitude == 0:
        return BANDS[0]
    return BANDS[1 + sum(magnitude >= edge for edge in BAND_EDGES)]
