"""Output formats: one table, each row naming its suffixes, its renderer and which outputs
take it, and the rule that picks a format from a file name. Each renderer is imported
when its format is written: the commands that name formats in their help load none."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gradviz.errors import InputError, OptionWords, OutputError, keyword, quoted
from gradviz.layout import PREFER_PURE_COST, DotProgram, dot_timeout, find_dot, png_fonts, run_dot
from gradviz.numbers import DEFAULT_PRECISION

if TYPE_CHECKING:
    from gradviz.engine import Value
    from gradviz.render.diagram import Diagram
    from gradviz.render.frames import Frames


@dataclass(frozen=True)
class Options:
    """How to render (`program` None: the best found; for an HTML page, see `render`)."""

    rankdir: str | None = "LR"  # None: a page chooses (`gradviz.pages.html_page`)
    precision: int = DEFAULT_PRECISION
    legend: bool = True
    program: DotProgram | None = None
    expression: str | None = None
    command: str = "draw"
    words: OptionWords = keyword
    id_prefix: str = ""  # an SVG's ids, to share a page with others


Renderer = Callable[["Diagram", Options], bytes]


# The `Options` fields each renderer takes: a diagram's text, a live page.
_DRAWING = ("rankdir", "precision", "legend")
_PAGE = ("rankdir", "precision", "program", "expression", "command", "words")


def _fields(o: Options, names: tuple[str, ...]) -> dict[str, Any]:
    return {name: getattr(o, name) for name in names}


def _drawn(name: str, options: tuple[str, ...] = _DRAWING) -> Renderer:
    """A text format, written by the public `gradviz.drawn` function `name` (`to_dot`)."""

    def write(diagram: Diagram, o: Options) -> bytes:
        from gradviz import drawn  # lazy: start-up

        return getattr(drawn, name)(diagram, **_fields(o, options)).encode()

    return write


def _html(diagram: Diagram, o: Options) -> bytes:
    from gradviz.pages import html_page  # lazy: start-up (Graphviz, the trace)

    return html_page(diagram, **_fields(o, _PAGE)).encode()


def pure_first(diagram: Diagram, fmt: str = "svg") -> bool:
    """Whether graphviz-pure lays `diagram` out even beside a system dot (unless
    `GRADVIZ_DOT` chooses): a heavy layout, which it does 10-15 times faster, or a PyTorch
    drawing's SVG, which it lays out in about half of dot 2.43's time, as the manual's
    pictures are drawn (bench/README.md, issue 30). Not that drawing's PNG: its rasterizer
    lacks glyphs the drawing uses (▶, ⅒) that the system's fonts have."""
    from gradviz.render.diagram import TORCH_LEVELS  # lazy: start-up
    from gradviz.render.dot import layout_cost  # lazy: start-up

    torch_svg = fmt == "svg" and diagram.level in TORCH_LEVELS
    return torch_svg or layout_cost(diagram) > PREFER_PURE_COST


def _picture(fmt: str) -> Renderer:
    """A picture laid out by Graphviz (graphviz-pure first where `pure_first`); an SVG
    follows dark mode (`gradviz.render.themes`), PNG and PDF stay light."""

    def picture(diagram: Diagram, o: Options) -> bytes:
        from gradviz.render.diagram import draw_less  # lazy: start-up
        from gradviz.render.dot import FONT, to_dot  # lazy: start-up

        heavy = pure_first(diagram, fmt)
        program = o.program or find_dot(fmt, heavy=heavy)
        # a PNG in a sans its program really has, its ops' symbols bold (`layout.png_fonts`)
        font, op_font = png_fonts(program, FONT) if fmt == "png" else (FONT, None)
        dot_text = to_dot(diagram, font=font, op_font=op_font, **_fields(o, _DRAWING))
        drawn = run_dot(dot_text, fmt, program=program, heavy=heavy, smaller=draw_less(diagram))
        if fmt != "svg":
            return drawn
        from gradviz.render.themes import themed_svg  # lazy: start-up

        return themed_svg(drawn.decode("utf-8"), o.id_prefix).encode("utf-8")

    return picture


@dataclass(frozen=True)
class Format:
    """A format: its name (`-f`), its suffixes (the first names its files), its renderer,
    its words in `gradviz draw --help`, and its tags: what it is ("graphviz", "mermaid",
    "layout": needs a Graphviz program, "binary": never to stdout) and the outputs besides
    `draw`'s that take it ("frames", "animation", "page", "plot", "report")."""

    name: str
    suffixes: tuple[str, ...]
    render: Renderer
    help: str
    tags: str = ""

    def has(self, tag: str) -> bool:
        return tag in self.tags.split()


_PDF = ".pdf (Graphviz; PDF needs a system Graphviz)"
_HTML = ".html (a live page: move the inputs, step through the backward pass; one file, no network)"
_MMD, _MD = ".mmd (Mermaid)", ".md (Mermaid in a fenced block)"
FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("dot", (".dot", ".gv"), _drawn("to_dot"), ".dot .gv", "graphviz"),
        Format("svg", (".svg",), _picture("svg"), ".svg", "graphviz layout frames animation plot"),
        Format("png", (".png",), _picture("png"), ".png", "graphviz layout binary plot"),
        Format("pdf", (".pdf",), _picture("pdf"), _PDF, "graphviz layout binary plot"),
        Format("mermaid", (".mmd", ".mermaid"), _drawn("to_mermaid"), _MMD, "mermaid frames"),
        Format("markdown", (".md", ".markdown"), _drawn("to_markdown"), _MD, "mermaid"),
        Format("json", (".json",), _drawn("to_json", ()), ".json"),
        Format("text", (".txt",), _drawn("to_text", ("precision",)), ".txt"),
        Format("html", (".html", ".htm"), _html, _HTML, "layout page report"),
    )
}
_BY_SUFFIX = {suffix: f.name for f in FORMATS.values() for suffix in f.suffixes}
# `-f mmd`: a suffix without its dot names its format too
_ALIASES = {s[1:]: f.name for f in FORMATS.values() for s in f.suffixes if s[1:] != f.name}


def formats(use: str) -> list[str]:
    """The formats an output takes (`plot`: svg, png, pdf)."""
    return [f.name for f in FORMATS.values() if f.has(use)]


def suffixes(use: str) -> tuple[str, ...]:
    return tuple(s for name in formats(use) for s in FORMATS[name].suffixes)


def suffix_words(use: str) -> str:
    """The suffixes an output's files are named with, in words: `.svg, .png or .pdf`."""
    first = [FORMATS[name].suffixes[0] for name in formats(use)]
    return " or ".join(filter(None, (", ".join(first[:-1]), first[-1])))


# Layout time and memory grow fast: ~2 s for a 2000-node SVG, far more for a big PNG,
# and far more again when long edges add many hidden nodes (see dot.layout_cost).
WARN_NODES = 1000
WARN_LAYOUT_COST = PREFER_PURE_COST


def _known(name: str, given: str) -> Format:
    if name not in FORMATS:
        raise OutputError(f"unknown format {quoted(given)}", hint=f"Formats: {', '.join(FORMATS)}.")
    return FORMATS[name]


def format_for(path: str, override: str | None = None) -> str:
    """The format to write `path` in: `override` (-f) if given, else by extension."""
    if override is not None:
        return _known(_ALIASES.get(override.lower(), override.lower()), override).name
    if path == "-":
        return "text"
    suffix = Path(path).suffix.lower()
    if suffix not in _BY_SUFFIX:
        known = " ".join(sorted(_BY_SUFFIX))
        shown = f"extension {quoted(suffix)}" if suffix else "no extension"
        raise OutputError(
            f"cannot tell the format of {quoted(path)} ({shown})",
            hint=f"Use one of {known}, or give the format with -f.",
        )
    return _BY_SUFFIX[suffix]


def render(diagram: Diagram, fmt: str, **options: Any) -> bytes:
    """A diagram in one format, as the bytes to write, rendered as `options` (the fields
    of `Options`) say. An HTML page is live when `expression` (the text it was parsed
    from) is given: its button copies `gradviz COMMAND EXPRESSION name=value…`. `rankdir`
    None: a page chooses the direction that reads at 800 px (others draw left to right)."""
    row = _known(fmt, fmt)
    if options.get("rankdir", "LR") is None and fmt != "html":
        options["rankdir"] = "LR"
    return row.render(diagram, Options(**options))


def to_svg(
    graph: Value | Diagram,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    grad: bool = True,
    legend: bool = True,
    id_prefix: str = "",
    program: DotProgram | None = None,
) -> str:
    """The SVG picture as text to sit inline in an HTML page: dark mode from CSS variables,
    every id prefixed by `id_prefix` (say `gv3-`) so that many diagrams share a page."""
    from gradviz.drawn import as_diagram  # lazy: start-up

    diagram = as_diagram(graph, grad=grad)
    options = {"rankdir": rankdir, "precision": precision, "legend": legend}
    return render(diagram, "svg", program=program, id_prefix=id_prefix, **options).decode("utf-8")


# The column an animation is made for (a README's, a docs page's: about 800 px): wider, it
# is shrunk and its smallest texts (the credits on the edges, 9 pt) go below 8 px.
COLUMN_PX = 800
_SVG_WIDTH = re.compile(rb'<svg\b[^>]*?\swidth="([\d.]+)(pt|px)?"')


def svg_width_px(svg: bytes) -> float:
    """The width an SVG asks for, in CSS px (Graphviz writes points: 4/3 px each)."""
    found = _SVG_WIDTH.search(svg)
    if found is None:
        return 0.0
    return float(found.group(1)) * (4 / 3 if found.group(2) in (b"pt", None) else 1.0)


def animated_trace(frames: Frames, *, program: DotProgram | None = None) -> bytes:
    """The trace's frames as one animated SVG, laid out once: left to right if that fits
    a column of COLUMN_PX, else top to bottom when narrower."""
    from gradviz.render.animate import animated_svg, animation_diagram  # lazy: start-up
    from gradviz.render.diagram import draw_less, preferred_rankdir  # lazy: start-up
    from gradviz.render.dot import to_dot  # lazy: start-up

    drawn, timeline = animation_diagram(frames)
    heavy = pure_first(drawn)

    def lay_out(direction: str) -> bytes:
        dot_text = to_dot(drawn, rankdir=direction)
        return run_dot(dot_text, "svg", program=program, heavy=heavy, smaller=draw_less(drawn))

    if heavy:  # one layout only
        svg = lay_out(preferred_rankdir(drawn))
    else:
        svg = lay_out("LR")
        if svg_width_px(svg) > COLUMN_PX:
            tall = lay_out("TB")
            svg = tall if svg_width_px(tall) < svg_width_px(svg) else svg
    return animated_svg(svg.decode("utf-8"), timeline).encode("utf-8")


# Nodes drawn over every frame of a backward pass (frames × the nodes of each): each frame
# is a layout of the whole graph and a file of its own, so the time and the files' bytes
# grow with the product. 100,000 (249 SVG frames of 398 nodes) took 19 s of CPU and 91 MB
# of files here; Mermaid text 2.5 s and 7 MB (bench/frames.py).
MAX_FRAME_NODES = 100_000
# Steps of one animated SVG (`animated_trace`): 500 loop for 10 minutes and take 2 MB; a
# browser needs seconds to show one, more with every step (Chromium here: 3 s for 249
# steps, 7 s for 624, 22 s for 1,249, 5 minutes for 6,583; bench/README.md).
MAX_ANIMATED_STEPS = 500


def check_frames(frames: Frames, fmt: str, *, one: bool = False) -> None:
    """Refuse, before any frame is drawn, more than MAX_FRAME_NODES nodes to draw in all
    (unless `one` frame is asked for), or more edges than Mermaid draws."""
    from gradviz.render.diagram import draw_less  # lazy: start-up

    if FORMATS[fmt].has("mermaid"):
        from gradviz.render.mermaid import check_edges  # lazy: start-up

        check_edges(frames.base)
    if one or frames.nodes_drawn <= MAX_FRAME_NODES:
        return
    less = draw_less(frames.base)
    raise InputError(
        f"{{frames}}: {len(frames):,} frames of {len(frames.base.nodes):,} nodes are "
        f"{frames.nodes_drawn:,} nodes to draw, more than the "
        f"{MAX_FRAME_NODES:,} allowed: write one frame ({{step}} N), or {less.template}",
        options=("frames", "step", *less.options),
    )


def check_animation(frames: Frames) -> None:
    """Refuse, before any work, an animation of more than MAX_ANIMATED_STEPS steps."""
    from gradviz.render.animate import HOLD_STEPS, LEAD_STEPS, STEP_SECONDS  # lazy: start-up
    from gradviz.render.diagram import draw_less  # lazy: start-up

    if len(frames) <= MAX_ANIMATED_STEPS:
        return
    minutes = (LEAD_STEPS + len(frames) + HOLD_STEPS) * STEP_SECONDS / 60
    less = draw_less(frames.base)
    if less.options:  # a network: its collapsed views have frames, not animations
        views = " or ".join("{" + level + "}" for level in less.options)
        instead = f"write the frames of a collapsed view ({{frames}} DIR {views})"
    else:
        instead = "animate a part of the expression, or write one frame ({frames} DIR {step} N)"
    raise InputError(
        f"{{animate}}: {len(frames):,} steps are more than the {MAX_ANIMATED_STEPS} an animation "
        f"may have (a loop of {minutes:.0f} minutes): {instead}",
        options=("animate", "frames", "step", *less.options),
    )


def size_warnings(diagram: Diagram, fmt: str, words: OptionWords = keyword) -> list[str]:
    """What to tell a user before a slow or refused render, naming options as `words` does."""
    from gradviz.render.diagram import draw_less  # lazy: start-up
    from gradviz.render.dot import layout_cost  # lazy: start-up
    from gradviz.render.mermaid import MAX_EDGES  # lazy: start-up

    less = draw_less(diagram).words(words)
    warnings = []
    nodes = len(diagram.nodes)
    heavy = layout_cost(diagram) > WARN_LAYOUT_COST
    if FORMATS[fmt].has("layout") and (nodes > WARN_NODES or heavy):
        reused = ", some values reused far down long chains" if heavy else ""
        warnings.append(
            f"{nodes} nodes{reused}: Graphviz may take a while (it gives up after "
            f"{dot_timeout():g} s; GRADVIZ_DOT_TIMEOUT=SECONDS to wait longer); "
            f"to go faster, {less}, or write .dot or .json (no layout needed)"
        )
    # Close to Mermaid's limit; above it, rendering fails with the same advice.
    mermaid = FORMATS[fmt].has("mermaid")
    if mermaid and MAX_EDGES * 0.8 < len(diagram.edges) <= MAX_EDGES:
        warnings.append(
            f"{len(diagram.edges)} edges: Mermaid refuses more than {MAX_EDGES}; "
            f"write SVG instead, or {less}"
        )
    return warnings
