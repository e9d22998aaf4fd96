"""Output formats, the Graphviz program that renders pictures, and safe file writes.

Pictures (SVG, PNG, PDF) need a Graphviz layout program. A system `dot` is preferred
(it also does PDF); otherwise `graphviz-pure`, a static port installed with gradviz
from PyPI, renders SVG and PNG with no system packages. For a heavy layout (a value
reused far down a long chain) graphviz-pure is preferred for SVG and PNG: measured
10-15 times faster than dot 2.43 there (see PREFER_PURE_COST). `GRADVIZ_DOT` chooses
one: `system`, `pure`, `none` (Graphviz switched off), or a path to a program; any
other value, like a bad `GRADVIZ_DOT_TIMEOUT`, is bad input (exit status 2).

Files are written atomically: a temporary file in the same folder, renamed over the
target, so a failure (or Ctrl-C) half-way leaves any previous file as it was.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gradviz.errors import (
    InputError,
    OptionWords,
    OutputError,
    RenderError,
    Worded,
    keyword,
    quoted,
)
from gradviz.files import write_atomic
from gradviz.numbers import DEFAULT_PRECISION
from gradviz.render import as_diagram
from gradviz.render.diagram import Diagram, draw_less
from gradviz.render.dot import dot_body, layout_cost, to_dot
from gradviz.render.terminal import to_text

if TYPE_CHECKING:
    import subprocess

    import graphviz

    from gradviz.data import Dataset
    from gradviz.engine import Value
    from gradviz.model import Model
    from gradviz.run import Run
    from gradviz.train import Evaluation


@dataclass(frozen=True)
class Format:
    name: str
    extensions: tuple[str, ...]
    description: str
    binary: bool = False  # cannot go to a terminal / stdout
    graphviz: bool = False  # needs a Graphviz program


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("dot", (".dot", ".gv"), "Graphviz DOT source"),
        Format("svg", (".svg",), "SVG picture (via Graphviz)", graphviz=True),
        Format("png", (".png",), "PNG picture (via Graphviz)", binary=True, graphviz=True),
        Format("pdf", (".pdf",), "PDF (needs a system Graphviz)", binary=True, graphviz=True),
        Format("mermaid", (".mmd", ".mermaid"), "Mermaid flowchart"),
        Format("markdown", (".md", ".markdown"), "Mermaid in a fenced block, for READMEs"),
        Format("json", (".json",), "nodes and edges with op, data, grad"),
        Format("text", (".txt",), "the terminal view as plain text"),
        Format(
            "html", (".html", ".htm"), "a live page: inputs, numbers, backward pass", graphviz=True
        ),
    )
}
_BY_EXTENSION = {ext: f.name for f in FORMATS.values() for ext in f.extensions}
_ALIASES = {"gv": "dot", "mmd": "mermaid", "md": "markdown", "txt": "text", "htm": "html"}

# Layout time and memory grow fast: ~2 s for a 2000-node SVG, far more for a big PNG,
# and far more again when long edges add many hidden nodes (see dot.layout_cost).
WARN_NODES = 1000
WARN_LAYOUT_COST = 20_000
# Above this layout cost, SVG and PNG go to graphviz-pure even when a system dot is
# installed (unless GRADVIZ_DOT says otherwise). Measured SVG times, system dot 2.43 vs
# graphviz-pure 0.2.2: `t = t*x` chains of 100/200/390 statements (cost 10k/40k/152k)
# 0.9/12/95 s vs 0.1/1.2/6.6 s; sums `x*y+x*y+…` of 100/200/499 terms (cost 10k/40k/250k)
# 0.4/12/>180 s vs 0.3/2.2/24 s. Below it both take about a second or less.
PREFER_PURE_COST = WARN_LAYOUT_COST
# PNGs are capped at this size in inches (at 96 dpi: 3840 px), whatever the graph.
PNG_MAX_INCHES = 40
PNG_DPI = 96
DOT_TIMEOUT = 60.0  # seconds; GRADVIZ_DOT_TIMEOUT overrides

GET_GRAPHVIZ = (
    "install Graphviz (apt install graphviz, brew install graphviz, winget install graphviz) "
    "or `pip install graphviz-pure` (SVG and PNG only)"
)
WITHOUT_GRAPHVIZ = ".dot, .mmd, .md, .json, .txt and the terminal view work without it"


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


# -- the Graphviz program ---------------------------------------------------------


@dataclass(frozen=True)
class DotProgram:
    """A Graphviz layout program and what it can write."""

    path: str
    kind: str  # "system" (Graphviz's dot) or "pure" (graphviz-pure)

    @property
    def formats(self) -> tuple[str, ...]:
        return ("svg", "png", "pdf") if self.kind == "system" else ("svg", "png")


def _pure_program() -> str | None:
    """graphviz-pure: on PATH, or next to this interpreter when the venv is not active."""
    import shutil  # lazy: start-up (as are the other imports for writing pictures)
    import sysconfig  # lazy: start-up

    found = shutil.which("graphviz-pure")
    if found:
        return found
    name = "graphviz-pure.exe" if os.name == "nt" else "graphviz-pure"
    for folder in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


DOT_CHOICES = ("auto", "system", "pure", "none")


def dot_choice() -> str:
    """GRADVIZ_DOT as given (`auto` when unset): a word of DOT_CHOICES or a program's
    path. Anything else is the user's mistake (InputError, exit 2)."""
    choice = os.environ.get("GRADVIZ_DOT", "").strip() or "auto"
    if choice in DOT_CHOICES:
        return choice
    import shutil  # lazy: start-up

    try:  # a name too long for the file system is no program either
        path = shutil.which(choice) or choice
        runnable = Path(path).is_file() and os.access(path, os.X_OK)
    except OSError:
        runnable = False
    if not runnable:
        raise InputError(
            f"GRADVIZ_DOT={quoted(choice)} is neither {', '.join(DOT_CHOICES)} nor a program "
            "that can be run"
        )
    return path


def dot_programs(*, heavy: bool = False) -> list[DotProgram]:
    """Usable programs, best first, as `GRADVIZ_DOT` allows: system `dot` first, unless
    the layout is `heavy` and no program was chosen (then graphviz-pure, much faster)."""
    import shutil  # lazy: start-up

    choice = dot_choice()
    system = shutil.which("dot")
    pure = _pure_program()
    if choice == "auto":
        found = [DotProgram(system, "system")] if system else []
        found += [DotProgram(pure, "pure")] if pure else []
        return sorted(found, key=lambda p: p.kind != "pure") if heavy else found
    if choice == "system":
        return [DotProgram(system, "system")] if system else []
    if choice == "pure":
        return [DotProgram(pure, "pure")] if pure else []
    if choice == "none":
        return []
    return [DotProgram(choice, "pure" if "graphviz-pure" in Path(choice).name else "system")]


def find_dot(fmt: str, *, heavy: bool = False) -> DotProgram:
    """The program that renders `fmt`, or a RenderError saying how to get one."""
    programs = dot_programs(heavy=heavy)
    for program in programs:
        if fmt in program.formats:
            return program
    choice = dot_choice()
    if choice == "none":  # switched off on purpose: say so, not how to install it
        raise RenderError(
            f"GRADVIZ_DOT=none switched Graphviz off, so {fmt.upper()} cannot be written "
            f"(unset GRADVIZ_DOT to use it); {WITHOUT_GRAPHVIZ}"
        )
    if programs:  # only graphviz-pure, asked for PDF
        raise RenderError(
            f"{fmt.upper()} needs Graphviz's own `dot` (graphviz-pure does SVG and PNG): "
            f"install Graphviz (apt install graphviz, brew install graphviz); "
            f"SVG, PNG, {WITHOUT_GRAPHVIZ}"
        )
    if choice in ("system", "pure"):
        missing = "no `dot` is on PATH" if choice == "system" else "graphviz-pure is not found"
        raise RenderError(
            f"GRADVIZ_DOT={choice} but {missing}, so {fmt.upper()} cannot be written: "
            f"unset GRADVIZ_DOT, or {GET_GRAPHVIZ}; {WITHOUT_GRAPHVIZ}"
        )
    raise RenderError(
        f"no Graphviz program found to write {fmt.upper()}: {GET_GRAPHVIZ}; {WITHOUT_GRAPHVIZ}"
    )


def dot_timeout() -> float:
    """Seconds a layout may take: GRADVIZ_DOT_TIMEOUT, else DOT_TIMEOUT."""
    text = os.environ.get("GRADVIZ_DOT_TIMEOUT", "").strip()
    if not text:
        return DOT_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < 1e6:  # the user's setting: bad input, exit 2
        raise InputError(
            f"GRADVIZ_DOT_TIMEOUT={quoted(text)} is not a number of seconds (> 0, < 1e6)"
        )
    return seconds


SMALLER = Worded("draw a smaller graph")  # what a timeout advises first, by default


def run_dot(
    dot_text: str,
    fmt: str,
    *,
    program: DotProgram | None = None,
    heavy: bool = False,
    smaller: Worded = SMALLER,
) -> bytes:
    """Lay out DOT text and return the picture (argv list, no shell, with a timeout).

    One call per format: a PNG's size cap (`-Gsize`) would also shrink an SVG drawn in
    the same call, so formats do not share a layout. `smaller` is what the timeout
    message suggests first (`draw_less`: the options it names are the error's)."""
    import subprocess  # lazy: start-up

    program = program or find_dot(fmt, heavy=heavy)
    timeout = dot_timeout()
    argv = [program.path, f"-T{fmt}"]
    if fmt == "png":
        argv += [f"-Gdpi={PNG_DPI}", f"-Gsize={PNG_MAX_INCHES},{PNG_MAX_INCHES}"]
    try:
        done = _run_in_own_group(argv, dot_text.encode("utf-8"), timeout)
    except subprocess.TimeoutExpired:
        faster = (
            "; graphviz-pure is much faster on such graphs: GRADVIZ_DOT=pure"
            if program.kind == "system" and fmt in ("svg", "png") and _pure_program()
            else ""
        )
        raise RenderError(
            f"{Path(program.path).name} took longer than {timeout:g} s to draw the graph",
            hint=f"{smaller.template[0].upper()}{smaller.template[1:]}, write .dot or .json "
            "instead (no layout needed), or set GRADVIZ_DOT_TIMEOUT=SECONDS to wait longer"
            f"{faster}.",
            options=smaller.options,
        ) from None
    except OSError as error:
        raise RenderError(f"could not run {program.path}: {error.strerror or error}") from None
    if done.returncode != 0 or not done.stdout:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = message[-1] if message else f"exit status {done.returncode}"
        raise RenderError(f"{Path(program.path).name} failed to write {fmt.upper()}: {why}")
    return done.stdout


def _run_in_own_group(argv: list[str], data: bytes, timeout: float) -> subprocess.CompletedProcess:
    """`subprocess.run` with its output captured, but the program runs in a process group
    of its own, and on a timeout (or Ctrl-C) the whole group is killed: a `dot` wrapper
    that started a child of its own leaves nothing running behind it."""
    import subprocess  # lazy: start-up

    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=os.name == "posix",
    )
    try:
        out, err = process.communicate(data, timeout=timeout)
    except BaseException:  # the timeout, Ctrl-C: end every process it started
        _kill_group(process)
        raise
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def _kill_group(process: subprocess.Popen) -> None:
    if os.name == "posix":
        with contextlib.suppress(OSError):  # already gone
            os.killpg(process.pid, signal.SIGKILL)
    process.kill()
    process.wait()  # reap it; not communicate(): a child that left the group may hold a pipe
    for pipe in (process.stdin, process.stdout, process.stderr):
        with contextlib.suppress(OSError):
            pipe.close()  # type: ignore[union-attr]


def configure_graphviz_package() -> DotProgram | None:
    """Point the `graphviz` package at graphviz-pure when there is no system `dot`, so a
    Digraph displays in Jupyter after a plain pip install. Returns the program used."""
    programs = [p for p in dot_programs() if "svg" in p.formats]
    if not programs:
        return None
    program = programs[0]
    if program.kind == "pure":
        import graphviz.backend.dot_command  # lazy: start-up

        graphviz.backend.dot_command.DOT_BINARY = Path(program.path)
    return program


# -- rendering to bytes -------------------------------------------------------------


def render(
    diagram: Diagram,
    fmt: str,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    legend: bool = True,
    program: DotProgram | None = None,
    expression: str | None = None,
    command: str = "draw",
    words: OptionWords = keyword,
) -> bytes:
    """A diagram in one format, as the bytes to write. Pictures go through `program`, or
    through the best one found (graphviz-pure first for heavy layouts). An HTML page is
    live when `expression` (the text it was parsed from) is given: its copy-command
    button writes `gradviz COMMAND EXPRESSION name=value…` (`trace` opens on step 1); a
    static page's note names an option as `words` does (`html_page`)."""
    from gradviz.render.json import to_json  # lazy: start-up (these two renderers)
    from gradviz.render.mermaid import to_markdown, to_mermaid  # lazy: start-up

    options = {"rankdir": rankdir, "precision": precision, "legend": legend}
    if fmt == "mermaid":
        text = to_mermaid(diagram, **options)
    elif fmt == "markdown":
        text = to_markdown(diagram, **options)
    elif fmt == "json":
        text = to_json(diagram)
    elif fmt == "text":
        text = to_text(diagram, precision=precision)
    elif fmt == "dot":
        text = to_dot(diagram, **options)
    elif fmt == "html":
        return html_page(
            diagram,
            rankdir=rankdir,
            precision=precision,
            program=program,
            expression=expression,
            command=command,
            words=words,
        ).encode("utf-8")
    elif fmt in ("svg", "png", "pdf"):
        heavy = layout_cost(diagram) > PREFER_PURE_COST
        return run_dot(
            to_dot(diagram, **options),
            fmt,
            program=program,
            heavy=heavy,
            smaller=draw_less(diagram),
        )
    else:
        raise OutputError(f"unknown format {quoted(fmt)}", hint=f"Formats: {', '.join(FORMATS)}.")
    return text.encode("utf-8")


def html_page(
    diagram: Diagram,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    program: DotProgram | None = None,
    expression: str | None = None,
    command: str = "draw",
    words: OptionWords = keyword,
) -> str:
    """The self-contained page of `gradviz.render.html`, with its SVG drawn by Graphviz
    (numbers laid out wide enough for the page to rewrite them). A static page says why,
    naming an option as `words` does (the CLI: `--no-grad`)."""
    from gradviz.render import html  # lazy: start-up (only for .html outputs)

    live = html.live_reason(diagram) is None and expression is not None
    drawn = html.page_diagram(diagram) if live else diagram
    dot_text = to_dot(
        drawn,
        rankdir=rankdir,
        precision=precision,
        number_width=html.NUMBER_WIDTH if live else 0,
    )
    heavy = layout_cost(diagram) > PREFER_PURE_COST
    svg = run_dot(dot_text, "svg", program=program, heavy=heavy, smaller=draw_less(diagram))
    note = (
        None
        if live
        else html.live_reason(diagram, words) or "only a graph drawn from an expression is live"
    )
    return html.to_html(
        diagram,
        svg.decode("utf-8"),
        expression=expression,
        command=command,
        step=1 if command == "trace" else 0,
        precision=precision,
        note=note,
    )


class Page:
    """A live page (`gradviz.explore`): `.html` is its text, `.save(path)` writes it, and a
    notebook (Jupyter, JupyterLab, VS Code) shows it inline in an isolated iframe."""

    def __init__(self, html: str, height: int = 900) -> None:
        self.html = html
        self.height = height

    def _repr_html_(self) -> str:
        # srcdoc + sandbox: the page's scripts run in a frame of their own (an opaque
        # origin), so they cannot touch the notebook and the notebook's cannot touch them.
        import html  # lazy: start-up

        return (
            f'<iframe srcdoc="{html.escape(self.html, quote=True)}" sandbox="allow-scripts" '
            f'title="gradviz page" width="100%" height="{self.height}" '
            'frameborder="0"></iframe>'
        )

    def save(self, path: str | Path) -> None:
        write_atomic(Path(path), self.html.encode("utf-8"))


def explore(
    graph: Value | str | Model,
    *,
    rankdir: str = "LR",
    precision: int = DEFAULT_PRECISION,
    **values: float,
) -> Page:
    """The live page of a graph (`gradviz.explore`): a Value (its backward pass is run from
    zero, as `gradviz draw` runs it), or
    an expression with its inputs' values, `explore("e = a*b; L = e + a", a=2, b=-3)`,
    whose page can also copy the `gradviz draw` command that reproduces it; or a trained
    network (`explore(load_model("xor.json"))`): its report page, as `inspect -o` writes it."""

    from gradviz.engine import Value, backpropagate, topological_order  # lazy: start-up
    from gradviz.expr import parse_program  # lazy: start-up
    from gradviz.model import Model  # lazy: start-up
    from gradviz.render.diagram import diagram_from_value  # lazy: start-up

    if isinstance(graph, Model):
        return _model_page(graph, values)
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
    import re  # lazy: start-up

    size = re.search(r'<svg width="[\d.]+pt" height="([\d.]+)pt"', page)
    drawing = float(size.group(1)) * 4 / 3 if size else 300.0
    return int(min(drawing, 900) + 720)


# The report page's texts are laid out this wide (the table drops columns as a terminal so
# wide would).
PAGE_TEXT_WIDTH = 130


def _plain(renderables: list, width: int = PAGE_TEXT_WIDTH) -> str:
    """Renderables as the terminal prints them, without colour and without the spaces at
    the ends of lines (the texts the report page shows)."""
    import io  # lazy: start-up
    import re  # lazy: start-up

    from rich.console import Console  # lazy: start-up

    text = io.StringIO()
    console = Console(file=text, width=width, color_system=None, highlight=False)
    for renderable in renderables:
        console.print(renderable)
    return re.sub(r"[ \t]+(?=\n)", "", text.getvalue()).rstrip("\n")


def report_page(
    model: Model,
    data: Dataset,
    evaluation: Evaluation,
    title: str,
    *,
    more: str | None = None,
    statuses: str | None = None,
) -> str:
    """The report page of a trained network (`gradviz.render.report_page`): the summary and
    gradient texts as `inspect` prints them, and the pictures drawn here (matplotlib for the
    plots, Graphviz for the network). `train --report`, `inspect -o` and `explore(model)`
    give the same page for the same weights, but for where the page points the reader, in
    the caller's words: `more` for the columns the table leaves out (`layer_table`),
    `statuses` for what each status means (`grads_plot`)."""
    from dataclasses import replace  # lazy: start-up

    from gradviz.boundary import boundary  # lazy: start-up
    from gradviz.model import network_loss_graph  # lazy: start-up
    from gradviz.render.html import NUMBER_WIDTH  # lazy: start-up
    from gradviz.render.network import network_diagram  # lazy: start-up
    from gradviz.render.plots import (  # lazy: start-up
        STATUS_MEANINGS,
        boundary_plot,
        curves_plot,
        grads_plot,
    )
    from gradviz.render.report_page import (  # lazy: start-up
        ReportParts,
        epoch_diagram,
        epoch_frames,
        report_html,
    )
    from gradviz.render.training import (  # lazy: start-up
        final_text,
        gradient_report,
        summary_text,
    )
    from gradviz.stats import diagnose  # lazy: start-up

    outputs = evaluation.outputs

    network = model.network()
    snapshots = model.snapshots()
    where = f"on {data.name}, {data.size} examples"
    epochs = model.epochs_run
    loss, accuracy, every = model.curves()
    notes: dict[str, str] = {}
    curves = curves_plot(loss, accuracy, every, "loss and accuracy", where) if loss else None
    if curves is None:
        notes["curves"] = "No training curves recorded in this model."
    if network.sizes[0] == 2:
        drawn = boundary(network, data, outputs=outputs)
        title_b = f"decision boundary after {epochs} epochs"
        boundary_svg: bytes | None = boundary_plot(drawn, title_b, where)
    else:
        boundary_svg = None
        notes["boundary"] = (
            f"The network has {network.sizes[0]} inputs: the decision boundary is drawn for "
            "2-input networks only."
        )
    samples = model.layer_samples(data)
    diagnosis = diagnose(samples, epoch=epochs)
    grads = grads_plot(
        diagnosis,
        snapshots or None,
        "rms gradient per layer",
        where,
        statuses=statuses or STATUS_MEANINGS,
    )
    graph = network_loss_graph(network, data.X[0].tolist(), float(data.Y[0]))
    diagram = network_diagram(graph, "layer", None)
    key = "one node per layer, coloured by its rms gradient ∂L/∂w at the epoch chosen above"
    diagram = replace(diagram, title=f"{key}; inputs, y and loss: the example shown below")
    layer_names = [layer.name for layer in network.layers]
    diagram = epoch_diagram(diagram, epoch_frames(snapshots, layer_names), data)
    dot_text = to_dot(diagram, rankdir="TB", number_width=NUMBER_WIDTH)
    network_svg = run_dot(dot_text, "svg").decode("utf-8")
    summary = [
        summary_text(model.spec, data),
        final_text(evaluation.loss, evaluation.accuracy, data.size),
    ]
    gradients = [gradient_report(samples, snapshots, epochs, "Gradients per layer", more)]
    parts = ReportParts(
        title=title,
        summary=_plain(summary),
        gradients=_plain(gradients),
        curves_svg=curves,
        boundary_svg=boundary_svg,
        grads_svg=grads,
        network_svg=network_svg,
        notes=notes,
    )
    return report_html(parts, network, data, outputs, snapshots, layer_names)


def _model_page(model: Model, values: dict[str, float]) -> Page:
    """A trained network's report page on its own data set, for a notebook."""
    from gradviz.measure import model_data  # lazy: start-up
    from gradviz.train import evaluate  # lazy: start-up

    if values:
        raise TypeError("values go with an expression: explore('a*b', a=2, b=3)")
    data = model_data(model)
    page = report_page(model, data, evaluate(model.network(), data), model.spec.name)
    return Page(page, height=1400)


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


# -- writing files --------------------------------------------------------------------


def refuse_inputs(outputs: Iterable[str], inputs: Iterable[str | Path]) -> None:
    """Refuse an output path that names one of the inputs (it would be overwritten)."""
    sources = []
    for path in inputs:
        try:
            sources.append(Path(path).resolve())
        except OSError:
            continue
    for output in outputs:
        if output == "-":
            continue
        target = Path(output).resolve()
        for source in sources:
            if target == source or (
                target.exists() and source.exists() and target.samefile(source)
            ):
                raise OutputError(
                    f"refusing to write {quoted(output)}: it is an input of this command",
                    hint="Choose another output file name.",
                )


def run_report_page(
    run: Run, title: str, *, more: str | None = None, statuses: str | None = None
) -> str:
    """The report page of a recorded run (`gradviz.render.run_page`): the texts as
    `inspect` prints them, the curves and the gradient plot (matplotlib), the layer
    picture (Graphviz). `more` and `statuses` as for `report_page`."""
    from gradviz.render.layers import report  # lazy: start-up
    from gradviz.render.plots import STATUS_MEANINGS, curves_plot, grads_plot  # lazy: start-up
    from gradviz.render.run_page import RunParts, run_html  # lazy: start-up
    from gradviz.render.run_view import (  # lazy: start-up
        MISSING,
        last_logged,
        run_diagram,
        run_layers_table,
        run_summary,
    )
    from gradviz.stats import verdict  # lazy: start-up

    where = run.description()
    loss, accuracy, every = run.curves()
    notes: dict[str, str] = {}
    curves = curves_plot(loss, accuracy, every, "loss and accuracy", where) if loss else None
    if curves is None:
        notes["curves"] = "No curves logged in this run (rec.log(loss=...) adds them)."
    diagnosis = run.diagnosis()
    grads = grads_plot(
        diagnosis,
        run.history,
        "rms gradient per layer",
        where,
        statuses=statuses or STATUS_MEANINGS,
    )
    from gradviz.render.html import NUMBER_WIDTH  # lazy: start-up

    dot_text = to_dot(run_diagram(run), rankdir="TB", number_width=NUMBER_WIDTH)
    network_svg = run_dot(dot_text, "svg").decode("utf-8")
    texts = [run_summary(run), run_layers_table(run), last_logged(run)]
    gradients = [
        report(
            diagnosis,
            verdict(diagnosis, run.history),
            run.history,
            "Gradients per layer",
            more=more,
        )
    ]
    parts = RunParts(
        title=title,
        summary=_plain(texts),
        gradients=_plain(gradients),
        missing=MISSING,
        curves_svg=curves,
        grads_svg=grads,
        network_svg=network_svg,
        notes=notes,
    )
    return run_html(parts)
