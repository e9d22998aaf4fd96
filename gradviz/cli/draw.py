"""`gradviz draw`: an expression in, its graph with data and gradients out."""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path

import click

from gradviz.cli import flag
from gradviz.cli.console import stdout_console
from gradviz.cli.options import DASH_HELP, ExpressionCommand, model_options
from gradviz.errors import InputError, OutputError, RenderError, WriteError, quoted
from gradviz.expr import describe_defaults, parse_assignments, parse_program
from gradviz.files import refuse_clashes, write_atomic
from gradviz.numbers import DEFAULT_PRECISION
from gradviz.numbers import fmt as show_number
from gradviz.output import (
    FORMATS,
    dot_choice,
    dot_timeout,
    format_for,
    render,
    size_warnings,
)
from gradviz.render.diagram import Diagram, diagram_from_value, preferred_rankdir
from gradviz.render.dot import RANKDIRS
from gradviz.render.terminal import MAX_DEPTH, to_terminal
from gradviz.text import printable_lines

EXPR_SUFFIX = ".expr"
NAME_MAX = 255  # characters of a file name (one part of a path) on common file systems
MAX_EXPR_FILE = 1_000_000  # bytes; the expression language caps the text far lower

# The formats Mermaid draws (a model's auto level is chosen for them apart).
MERMAID_FORMATS = ("mermaid", "markdown")


# A word that names a file rather than an expression: path characters only, ending in
# `name.ext` (attribute access in an expression, which is refused anyway), with a folder
# in it or an extension like .expr (a typo included: .exp) or .txt. `a.b` and
# `os.system` are no file names: they keep the expression language's teaching error.
_PATH_LIKE = re.compile(r"[\w./~-]*[A-Za-z_]\w*\.([A-Za-z_]\w*)")
_FILE_EXTENSIONS = ("expr", "txt")


def looks_like_a_file(text: str) -> bool:
    """Whether `text`, not an existing file, was meant as one (`hand.expr`,
    `samples/hand.exp`): then it deserves "no such file", not an expression error."""
    match = _PATH_LIKE.fullmatch(text)
    if match is None:
        return False
    suffix = match.group(1).lower()
    return "/" in text or bool(difflib.get_close_matches(suffix, _FILE_EXTENSIONS, cutoff=0.7))


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except OSError:  # too long for a file name
        return False


def read_expression(expr: str) -> tuple[str, Path | None]:
    """The expression text and the file it came from: `@path` reads a file, as does an
    argument naming an existing `.expr` file; anything else is the expression itself."""
    if expr.startswith("@"):
        if not expr[1:].strip():
            raise InputError("'@' needs a file name after it: @FILE, e.g. @samples/hand.expr")
        path = Path(expr[1:])
    elif expr.endswith(EXPR_SUFFIX) and _is_file(expr):
        path = Path(expr)
    elif looks_like_a_file(expr):
        if any(len(part) > NAME_MAX for part in expr.split("/")):
            raise InputError(f"file name too long: {quoted(expr)}")
        raise InputError(
            f"no such file: {quoted(expr)}",
            hint="An expression is read from a file that exists (or from @FILE); "
            "as an expression, .name (attribute access) is not supported.",
        )
    else:
        return expr, None
    try:
        with path.open("rb") as file:
            data = file.read(MAX_EXPR_FILE + 1)
    except OSError as error:
        raise InputError(f"cannot read {quoted(str(path))}: {error.strerror or error}") from None
    if len(data) > MAX_EXPR_FILE:
        raise InputError(f"{quoted(str(path))} is too large for an expression file")
    try:
        return data.decode("utf-8-sig"), path
    except UnicodeDecodeError as error:
        raise InputError(f"{quoted(str(path))} is not UTF-8 text (byte {error.start})") from None


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


def _say(message: str) -> None:
    click.echo(printable_lines(message), err=True)  # file names may hold escapes


class DepthType(click.ParamType):
    """A positive number of levels, or `all` (None: no limit)."""

    name = "depth"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None):
        if value is None or (isinstance(value, str) and value.strip().lower() == "all"):
            return None
        if isinstance(value, int):
            return value
        text = str(value).strip()
        if text.isascii() and text.isdigit() and len(text) > 18:
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


@click.command(
    cls=ExpressionCommand,
    short_help="Draw EXPR's graph with every node's data and grad.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=DASH_HELP.format(command="draw")
    + "\n\nExit status: 0 ok, 1 runtime failure (e.g. no Graphviz for PDF), 2 bad input.",
)
@click.argument("expr", metavar="EXPR", required=False)
@click.argument("assignments", nargs=-1, metavar="[NAME=VALUE]...")
@click.option(
    "-o",
    "--output",
    "outputs",
    multiple=True,
    metavar="FILE",
    help="Write the graph to FILE, format from its extension; repeat for several files. "
    "'-' writes a text format to stdout.",
)
@click.option(
    "-f",
    "--format",
    "format_",
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

    EXPR is a Python-like expression (+ - * / **, tanh sigmoid relu exp log sin cos
    abs sqrt detach); statements separated by ';' name intermediate results, and the
    last one is the output. Leaves take values from NAME=VALUE arguments; leaves left
    without one get reproducible defaults (printed; --seed changes them). EXPR may
    also be @FILE, or the path of an existing .expr file, to read it from a file.

    Without -o, the graph is shown in the terminal as a tree with a table of the
    leaves' gradients. Formats by extension: .dot .gv .svg .png .pdf (Graphviz;
    PDF needs a system Graphviz), .mmd (Mermaid), .md (Mermaid in a fenced block),
    .json, .txt, .html (a live page: move the inputs, step through the backward
    pass; one file, no network).

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
    if model_path is not None:  # a saved network instead of an expression
        if expr is not None or assignments:
            raise InputError("give an expression or --model, not both")
        text, source_file, values = "", Path(model_path), {}
    elif expr is None:
        raise InputError("give an expression to draw, or --model FILE")
    else:
        text, source_file = read_expression(expr)
        values = parse_assignments(assignments)

    if format_ is not None and not outputs:
        outputs = ("-",)
    targets = [(path, format_for(path, format_)) for path in outputs]
    _check_targets(targets)
    inputs: list[Path] = [source_file] if source_file else []
    if model_path is not None:  # its CSV data is an input too
        from gradviz.model import model_inputs  # lazy: start-up

        inputs = model_inputs(model_path)
    refuse_clashes([("output", path) for path, _ in targets], inputs)

    drawings: dict[bool, Diagram] = {}  # a model, by "for Mermaid": levels may differ
    if model_path is not None:
        from gradviz.render.network import model_diagrams  # lazy: start-up (numpy, nn)

        if input_text is None:
            input_text, target = _first_example(model_path, target)
        kinds = sorted({fmt in MERMAID_FORMATS for _, fmt in targets}) or [False]
        made = model_diagrams(model_path, input_text, target, level, not no_grad, kinds, flag)
        for note in dict.fromkeys(note for _, note in made.values() if note):  # each once
            _say(f"note: {note}")
        drawings = {mermaid: drawing for mermaid, (drawing, _) in made.items()}
        diagram = drawings[kinds[0]]
    else:
        program = parse_program(text, values, seed=seed)
        note = describe_defaults(program, flag)
        if note:
            _say(f"note: {note}")
        if not no_grad:
            program.output.backward()
        diagram = diagram_from_value(program.output, grad=not no_grad)

    asked_rankdir = rankdir
    rankdir = (rankdir or preferred_rankdir(diagram)).upper()
    if not targets:
        more = "--depth all shows them"
        stdout_console().print(to_terminal(diagram, precision=precision, depth=depth, more=more))
        return

    failures: list[RenderError | WriteError] = []
    for path, fmt in targets:
        drawn = drawings.get(fmt in MERMAID_FORMATS, diagram)
        for warning in size_warnings(drawn, fmt, flag):
            _say(f"warning: {warning}")
        try:
            data = render(
                drawn,
                fmt,
                rankdir=(asked_rankdir or preferred_rankdir(drawn)).upper(),
                precision=precision,
                expression=None if model_path is not None else text,
                words=flag,
            )
            if path == "-":
                _write_stdout(data)
            else:
                write_atomic(Path(path), data)
                _say(f"wrote {path} ({fmt})")
        except (RenderError, WriteError) as error:  # runtime failures: other outputs still
            failures.append(error)  # get written (a bad path is refused: exit 2 at once)
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise RenderError("\n".join(error.render(flag) for error in failures))


def _first_example(model_path: Path, target: float | None) -> tuple[str, float]:
    """No --input: the first example of the model's data set, as `trace` and `check`
    take it, said on stderr. Returned as --input text (repr: every digit) and target."""
    from gradviz.model import first_example, load_model  # lazy: start-up

    first = first_example(load_model(model_path), target)
    _say(
        f"note: no --input given: using the first example of {first.data}, "
        f"x = ({', '.join(show_number(v) for v in first.x)}), y = {show_number(first.y)}"
    )
    return ",".join(repr(v) for v in first.x), first.y


def _check_targets(targets: list[tuple[str, str]]) -> None:
    """Refuse what cannot work before any work is done: binary formats on stdout, and bad
    GRADVIZ_DOT settings when a picture is due (one file named twice: refuse_clashes)."""
    if any(FORMATS[fmt].graphviz for _, fmt in targets):
        dot_choice()
        dot_timeout()
    for path, fmt in targets:
        if path == "-" and FORMATS[fmt].binary:
            raise OutputError(
                f"{fmt.upper()} is binary and cannot be written to stdout",
                hint=f"Write it to a file: -o graph.{fmt}",
            )
