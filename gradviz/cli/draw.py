"""`gradviz draw`: an expression in, its graph with data and gradients out."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from gradviz.cli import command, flag
from gradviz.cli.console import stdout_console
from gradviz.cli.options import ExpressionCommand, OutputOption, model_options
from gradviz.cli.source import graph_source, model_loss_graph, say
from gradviz.drawn import diagram_from_value
from gradviz.errors import OutputError, RenderError, WriteError
from gradviz.expr import FUNCTIONS
from gradviz.files import refuse_clashes, write_atomic
from gradviz.layout import dot_choice, dot_timeout
from gradviz.numbers import DEFAULT_PRECISION
from gradviz.output import FORMATS, format_for, render, size_warnings
from gradviz.render.diagram import RANKDIRS, preferred_rankdir
from gradviz.render.terminal import MAX_DEPTH, to_terminal


def _write_stdout(data: bytes) -> None:
    """Bytes to stdout (text formats are UTF-8 whatever the locale)."""
    sys.stdout.flush()
    stream = getattr(sys.stdout, "buffer", None)
    if stream is None:
        sys.stdout.write(data.decode("utf-8"))
        sys.stdout.flush()
    else:
        # A write into a pipe whose reader left can return a short count instead of raising
        # (CPython's BufferedWriter); writing the rest raises BrokenPipeError, as it should.
        rest = memoryview(data)
        try:
            while rest:
                rest = rest[stream.write(rest) :]
            stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:  # stdout redirected to a full disk, say
            raise WriteError(f"cannot write to stdout: {error.strerror or error}") from None


class DepthType(click.ParamType):
    """A positive number of levels, or `all` (None: no limit)."""

    name = "depth"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None):
        text = str(value).strip()
        if text.lower() == "all" or (text.isascii() and text.isdigit() and len(text) > 18):
            return None  # more levels than any graph has (20 digits or 5,000): every level
        try:
            levels = int(text)
        except ValueError:
            levels = 0
        if levels < 1:
            self.fail(f"{value!r} is not a positive number of levels or 'all'", param, ctx)
        return levels


class UpperChoice(click.Choice):
    """Choices in Graphviz's upper case (LR, TB), accepted in any case. click lowercases
    case-insensitive choices in help and errors, which would list `lr` with default `LR`."""

    def __init__(self, choices: tuple[str, ...]) -> None:
        super().__init__(choices, case_sensitive=False)

    def normalize_choice(self, choice: object, ctx: click.Context | None) -> str:
        return super().normalize_choice(choice, ctx).upper()


@command(
    "draw",
    cls=ExpressionCommand,
    epilog="Exit status: 0 ok, 1 runtime failure (e.g. no Graphviz for PDF), 2 bad input.",
)
@click.argument("expr", metavar="EXPR", required=False)
@click.argument("assignments", nargs=-1, metavar="[NAME=VALUE]...")
@click.option(
    "-o",
    "--output",
    "outputs",
    cls=OutputOption,
    multiple=True,
    metavar="FILE",
    help="Write the graph to FILE, format from its extension; repeat for several files. "
    "'-' writes a text format to stdout.",
)
@click.option(
    "-f",
    "--format",
    "format_",
    cls=OutputOption,
    writes="format",
    type=click.Choice(list(FORMATS), case_sensitive=False),
    help="Format for every -o, whatever the extension. Without -o: write it to stdout.",
)
@click.option(
    "--rankdir",
    type=UpperChoice(RANKDIRS),
    help="Direction of the diagram: left-right, top-bottom, … (default LR; TB for a "
    "network drawn per layer).",
)
@click.option(
    "--precision",
    type=click.IntRange(1, 17),
    default=DEFAULT_PRECISION,
    show_default=True,
    help="Significant digits of the numbers shown (tooltips and JSON keep every digit).",
)
@click.option("--no-grad", is_flag=True, help="Draw data only: no backward pass.")
@click.option(
    "--depth",
    type=DepthType(),
    default=str(MAX_DEPTH),
    show_default=True,
    metavar="N|all",
    help="Levels of the terminal tree; deeper ones are counted and their inputs listed "
    "('all': every level).",
)
@model_options(
    model_help="Instead of EXPR: one example's loss through a saved model (gradviz train --save).",
    input_help="The example for --model (default: the first of the model's data set).",
    levels=("auto", "scalar", "neuron", "layer"),
    level_help="With --model: every scalar, a node per neuron, or a node per layer (auto "
    "collapses a big network and says so).",
)
def draw(
    expr: str,
    assignments: tuple[str, ...],
    outputs: tuple[str, ...],
    format_: str | None,
    rankdir: str | None,
    precision: int,
    no_grad: bool,
    model_path: Path | None,
    input_text: str | None,
    target: float | None,
    level: str,
    seed: int,
    depth: int | None,
) -> None:
    """Draw the computation graph of EXPR with every node's value and gradient.

    EXPR is a Python-like expression (+ - * / **, {functions}); statements
    separated by ';' name intermediate results, and the last one is the output.
    Leaves take values from NAME=VALUE arguments; leaves left without one get
    reproducible defaults (printed; --seed changes them). EXPR may
    also be @FILE, or the path of an existing .expr file, to read it from a file.

    Without -o, the graph is shown in the terminal as a tree with a table of the
    leaves' gradients. Formats by extension: {formats}.

    \b
    Examples:
      gradviz draw "(a+b)*c"
      gradviz draw "e = a*b; d = e + c; L = d*f" a=2 b=-3 c=10 f=-2
      gradviz draw "tanh(w*x + b)" x=0.5 w=-3 b=1 -o neuron.svg -o neuron.md
      gradviz draw samples/tanh_neuron.expr -f mermaid
      gradviz draw --model xor.json --input 0,1 --level neuron -o xor.svg
      gradviz draw --model xor.json    (the first example of its data)
      gradviz draw -- "-x*2" x=1
    """
    source = graph_source(expr, assignments, model_path)

    if format_ is not None and not outputs:
        outputs = ("-",)
    targets = [(path, format_for(path, format_)) for path in outputs]
    _check_targets(targets)
    refuse_clashes([("output", path) for path, _ in targets], source.inputs)

    if source.model is not None:
        from gradviz.drawings import model_diagrams  # lazy: start-up (numpy, nn)

        graph = model_loss_graph(source.model, input_text, target)
        kinds = sorted({_mermaid(fmt) for _, fmt in targets}) or [False]
        made = model_diagrams(graph, level, not no_grad, kinds, flag)
        for note in dict.fromkeys(note for _, note in made.values() if note):  # each once
            say(f"note: {note}")
        drawings = {mermaid: drawing for mermaid, (drawing, _) in made.items()}
    else:
        program = source.program(seed)
        if not no_grad:
            program.output.backward()
        drawn = diagram_from_value(program.output, grad=not no_grad)
        drawings = {False: drawn, True: drawn}  # for Graphviz and Mermaid: one drawing

    if not targets:
        more = "--depth all shows them"
        stdout_console().print(
            to_terminal(drawings[False], precision=precision, depth=depth, more=more)
        )
        return

    failures: list[RenderError | WriteError] = []
    for path, fmt in targets:
        drawn = drawings[_mermaid(fmt)]
        for warning in size_warnings(drawn, fmt, flag):
            say(f"warning: {warning}")
        # a page chooses the direction its picture reads best in at 800 px
        direction = rankdir or (None if fmt == "html" else preferred_rankdir(drawn))
        try:
            data = render(
                drawn,
                fmt,
                rankdir=direction and direction.upper(),
                precision=precision,
                expression=source.expression,
                words=flag,
            )
            if path == "-":
                _write_stdout(data)
            else:
                write_atomic(Path(path), data)
                say(f"wrote {path} ({fmt})")
        except (RenderError, WriteError) as error:  # runtime failures: other outputs still
            failures.append(error)  # get written (a bad path is refused: exit 2 at once)
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise RenderError("\n".join(error.render(flag) for error in failures))


def _formats_help() -> str:
    """The formats table's words for draw's help: Graphviz's formats in one run, then the
    others (`.dot .gv .svg .png .pdf (Graphviz; …), .mmd (Mermaid), …`)."""
    rows = list(FORMATS.values())
    graphviz = " ".join(f.help for f in rows if f.has("graphviz"))
    return ", ".join([graphviz, *(f.help for f in rows if not f.has("graphviz"))])


# the op table's functions, the formats table's formats
draw.help = (draw.help or "").format(functions=" ".join(FUNCTIONS), formats=_formats_help())


def _mermaid(fmt: str) -> bool:
    """Whether Mermaid draws `fmt` (a model's auto level is chosen for it apart)."""
    return FORMATS[fmt].has("mermaid")


def _check_targets(targets: list[tuple[str, str]]) -> None:
    """Refuse what cannot work before any work is done: binary formats on stdout, and bad
    GRADVIZ_DOT settings when a picture is due (one file named twice: refuse_clashes)."""
    if any(FORMATS[fmt].has("layout") for _, fmt in targets):
        dot_choice()
        dot_timeout()
    for path, fmt in targets:
        if path == "-" and FORMATS[fmt].has("binary"):
            raise OutputError(
                f"{fmt.upper()} is binary and cannot be written to stdout",
                hint=f"Write it to a file: -o graph.{fmt}",
            )
