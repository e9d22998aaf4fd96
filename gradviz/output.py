"""Output formats: one table, each row naming its renderer, and the rule that picks a
format from a file name. The Graphviz program that lays pictures out is gradviz.layout,
the pages it draws gradviz.pages, what a notebook shows gradviz.notebook, and safe writes
and input refusal gradviz.files."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gradviz.errors import InputError, OptionWords, OutputError, keyword, quoted
from gradviz.layout import PREFER_PURE_COST, DotProgram, dot_timeout, find_dot, png_fonts, run_dot
from gradviz.numbers import DEFAULT_PRECISION
from gradviz.render import as_diagram
from gradviz.render.diagram import Diagram, draw_less, preferred_rankdir
from gradviz.render.dot import FONT, layout_cost, to_dot
from gradviz.render.terminal import to_text

if TYPE_CHECKING:
    from gradviz.engine import Value
    from gradviz.render.frames import Frames


@dataclass(frozen=True)
class Options:
    """How to render: the layout's direction, digits, the legend, the Graphviz program
    (None: the best found), and for an HTML page what makes it live (see `render`)."""

    rankdir: str | None = "LR"  # None: a page chooses (`gradviz.pages.html_page`)
    precision: int = DEFAULT_PRECISION
    legend: bool = True
    program: DotProgram | None = None
    expression: str | None = None
    command: str = "draw"
    words: OptionWords = keyword
    id_prefix: str = ""  # an SVG's ids, to share a page with others


Renderer = Callable[[Diagram, Options], bytes]


def _dot(diagram: Diagram, o: Options) -> bytes:
    return to_dot(diagram, rankdir=o.rankdir, precision=o.precision, legend=o.legend).encode()


def _mermaid(diagram: Diagram, o: Options) -> bytes:
    from gradviz.render.mermaid import to_mermaid  # lazy: start-up

    return to_mermaid(diagram, rankdir=o.rankdir, precision=o.precision, legend=o.legend).encode()


def _markdown(diagram: Diagram, o: Options) -> bytes:
    from gradviz.render.mermaid import to_markdown  # lazy: start-up

    text = to_markdown(diagram, rankdir=o.rankdir, precision=o.precision, legend=o.legend)
    return text.encode()


def _json(diagram: Diagram, o: Options) -> bytes:
    from gradviz.render.json import to_json  # lazy: start-up

    return to_json(diagram).encode()


def _text(diagram: Diagram, o: Options) -> bytes:
    return to_text(diagram, precision=o.precision).encode()


def _html(diagram: Diagram, o: Options) -> bytes:
    from gradviz.pages import html_page  # lazy: start-up (Graphviz, the trace)

    page = html_page(
        diagram,
        rankdir=o.rankdir,
        precision=o.precision,
        program=o.program,
        expression=o.expression,
        command=o.command,
        words=o.words,
    )
    return page.encode()


def _picture(fmt: str) -> Renderer:
    """A picture laid out by Graphviz (graphviz-pure first for heavy layouts); an SVG
    follows dark mode (`gradviz.render.themes`), PNG and PDF stay light."""

    def picture(diagram: Diagram, o: Options) -> bytes:
        heavy = layout_cost(diagram) > PREFER_PURE_COST
        program = o.program or find_dot(fmt, heavy=heavy)
        # a PNG in a sans its program really has, its ops' symbols bold (`layout.png_fonts`)
        font, op_font = png_fonts(program, FONT) if fmt == "png" else (FONT, None)
        dot_text = to_dot(
            diagram,
            rankdir=o.rankdir,
            precision=o.precision,
            legend=o.legend,
            font=font,
            op_font=op_font,
        )
        drawn = run_dot(dot_text, fmt, program=program, heavy=heavy, smaller=draw_less(diagram))
        if fmt != "svg":
            return drawn
        from gradviz.render.themes import themed_svg  # lazy: start-up

        return themed_svg(drawn.decode("utf-8"), o.id_prefix).encode("utf-8")

    return picture


@dataclass(frozen=True)
class Format:
    name: str
    extensions: tuple[str, ...]
    description: str
    render: Renderer
    binary: bool = False  # cannot go to a terminal / stdout
    graphviz: bool = False  # needs a Graphviz program


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("dot", (".dot", ".gv"), "Graphviz DOT source", _dot),
        Format("svg", (".svg",), "SVG picture (via Graphviz)", _picture("svg"), graphviz=True),
        Format(
            "png",
            (".png",),
            "PNG picture (via Graphviz)",
            _picture("png"),
            binary=True,
            graphviz=True,
        ),
        Format(
            "pdf",
            (".pdf",),
            "PDF (needs a system Graphviz)",
            _picture("pdf"),
            binary=True,
            graphviz=True,
        ),
        Format("mermaid", (".mmd", ".mermaid"), "Mermaid flowchart", _mermaid),
        Format(
            "markdown", (".md", ".markdown"), "Mermaid in a fenced block, for READMEs", _markdown
        ),
        Format("json", (".json",), "nodes and edges with op, data, grad", _json),
        Format("text", (".txt",), "the terminal view as plain text", _text),
        Format(
            "html",
            (".html", ".htm"),
            "a live page: inputs, numbers, backward pass",
            _html,
            graphviz=True,
        ),
    )
}
_BY_EXTENSION = {ext: f.name for f in FORMATS.values() for ext in f.extensions}
_ALIASES = {"gv": "dot", "mmd": "mermaid", "md": "markdown", "txt": "text", "htm": "html"}

# Layout time and memory grow fast: ~2 s for a 2000-node SVG, far more for a big PNG,
# and far more again when long edges add many hidden nodes (see dot.layout_cost).
WARN_NODES = 1000
WARN_LAYOUT_COST = PREFER_PURE_COST


def format_for(path: str, override: str | None = None) -> str:
    """The format to write `path` in: `override` (-f) if given, else by extension."""
    if override is not None:
        name = _ALIASES.get(override.lower(), override.lower())
        if name not in FORMATS:
            raise OutputError(
                f"unknown format {quoted(override)}",
                hint=f"Formats: {', '.join(FORMATS)}.",
            )
        return name
    if path == "-":
        return "text"
    suffix = Path(path).suffix.lower()
    if suffix not in _BY_EXTENSION:
        known = " ".join(sorted(_BY_EXTENSION))
        shown = f"extension {quoted(suffix)}" if suffix else "no extension"
        raise OutputError(
            f"cannot tell the format of {quoted(path)} ({shown})",
            hint=f"Use one of {known}, or give the format with -f.",
        )
    return _BY_EXTENSION[suffix]


def render(
    diagram: Diagram,
    fmt: str,
    *,
    rankdir: str | None = "LR",
    precision: int = DEFAULT_PRECISION,
    legend: bool = True,
    program: DotProgram | None = None,
    expression: str | None = None,
    command: str = "draw",
    words: OptionWords = keyword,
    id_prefix: str = "",
) -> bytes:
    """A diagram in one format, as the bytes to write (the row's renderer). Pictures go
    through `program`, or through the best one found. An HTML page is live when
    `expression` (the text it was parsed from) is given: its copy-command button writes
    `gradviz COMMAND EXPRESSION name=value…` (`trace` opens on step 1); a static page's
    note names an option as `words` does (`gradviz.pages.html_page`). `rankdir` None: a
    page chooses the direction that reads at 800 px (others draw left to right). An SVG's
    ids are prefixed by `id_prefix`, for many on one page."""
    if fmt not in FORMATS:
        raise OutputError(f"unknown format {quoted(fmt)}", hint=f"Formats: {', '.join(FORMATS)}.")
    if rankdir is None and fmt != "html":
        rankdir = "LR"
    options = Options(rankdir, precision, legend, program, expression, command, words, id_prefix)
    return FORMATS[fmt].render(diagram, options)


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
    """The SVG picture as text, ready to sit inline in an HTML page: dark mode from CSS
    variables (`gradviz.render.themes`), every id prefixed by `id_prefix` (say `gv3-`) so
    that many diagrams share a page."""
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


def animated_trace(
    frames: Frames,
    *,
    rankdir: str | None = None,
    precision: int = DEFAULT_PRECISION,
    program: DotProgram | None = None,
    id_prefix: str = "gv-",
) -> bytes:
    """The trace's frames as one animated SVG (`gradviz.render.animate`): laid out once,
    stepping through the backward pass with CSS keyframes, the last frame when still.

    `rankdir` None: left to right if that fits a column of COLUMN_PX, else top to bottom
    when that is narrower (the credits travel on the edges: left to right, they double
    its columns). A heavy layout is made once, in the diagram's preferred direction."""
    from gradviz.render.animate import animated_svg, animation_diagram  # lazy: start-up

    drawn, timeline = animation_diagram(frames)
    heavy = layout_cost(drawn) > PREFER_PURE_COST

    def lay_out(direction: str) -> bytes:
        return run_dot(
            to_dot(drawn, rankdir=direction, precision=precision),
            "svg",
            program=program,
            heavy=heavy,
            smaller=draw_less(drawn),
        )

    if rankdir is not None or heavy:
        svg = lay_out(rankdir or preferred_rankdir(drawn))
    else:
        svg = lay_out("LR")
        if svg_width_px(svg) > COLUMN_PX:
            tall = lay_out("TB")
            svg = tall if svg_width_px(tall) < svg_width_px(svg) else svg
    return animated_svg(svg.decode("utf-8"), timeline, id_prefix).encode("utf-8")


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
    """Refuse, before any frame is drawn, frames that cannot all be written: more than
    MAX_FRAME_NODES nodes to draw in all (unless `one` frame is asked for), or more edges
    than Mermaid draws (RenderError, as `render` raises it)."""
    if fmt in ("mermaid", "markdown"):
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
    """What to tell a user before a slow or refused render (the CLI prints these, naming
    the options as `words` does: `--level layer`)."""
    from gradviz.render.mermaid import MAX_EDGES  # lazy: start-up

    less = draw_less(diagram).words(words)
    warnings = []
    nodes = len(diagram.nodes)
    heavy = layout_cost(diagram) > WARN_LAYOUT_COST
    if FORMATS[fmt].graphviz and (nodes > WARN_NODES or heavy):
        reused = ", some values reused far down long chains" if heavy else ""
        warnings.append(
            f"{nodes} nodes{reused}: Graphviz may take a while (it gives up after "
            f"{dot_timeout():g} s; GRADVIZ_DOT_TIMEOUT=SECONDS to wait longer); "
            f"to go faster, {less}, or write .dot or .json (no layout needed)"
        )
    # Close to Mermaid's limit; above it, rendering fails with the same advice.
    if fmt in ("mermaid", "markdown") and MAX_EDGES * 0.8 < len(diagram.edges) <= MAX_EDGES:
        warnings.append(
            f"{len(diagram.edges)} edges: Mermaid refuses more than {MAX_EDGES}; "
            f"write SVG instead, or {less}"
        )
    return warnings
