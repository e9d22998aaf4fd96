"""Where `draw`, `trace` and `check` get their graph, resolved in one place: an expression
(the text itself, `@FILE` or a `.expr` file, with NAME=VALUE values) or a saved model
(`--model FILE`, one example of it: `--input`, else the first of its data set)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gradviz.cli import flag
from gradviz.errors import InputError, quoted
from gradviz.expr import Program, describe_defaults, parse_assignments, parse_program
from gradviz.numbers import fmt
from gradviz.text import printable_lines

if TYPE_CHECKING:
    from gradviz.model import LossGraph

EXPR_SUFFIX = ".expr"
NAME_MAX = 255  # characters of a file name (one part of a path) on common file systems
MAX_EXPR_FILE = 1_000_000  # bytes; the expression language caps the text far lower

# A word that names a file rather than an expression: path characters only, ending in
# `name.ext` (attribute access in an expression, which is refused anyway), with a folder
# in it or an extension like .expr (a typo included: .exp) or .txt. `a.b` and
# `os.system` are no file names: they keep the expression language's teaching error.
_PATH_LIKE = re.compile(r"[\w./~-]*[A-Za-z_]\w*\.([A-Za-z_]\w*)")
_FILE_EXTENSIONS = ("expr", "txt")


@dataclass(frozen=True)
class Source:
    """An `expression` (from `file` when one was named) with its `values`, or a `model`."""

    expression: str | None
    file: Path | None
    values: dict[str, float] = field(default_factory=dict)
    model: Path | None = None

    @property
    def inputs(self) -> list[Path]:
        """The files the command reads, which no output may overwrite (a model's CSV too)."""
        if self.model is not None:
            from gradviz.model import model_inputs  # lazy: start-up

            return model_inputs(self.model)
        return [self.file] if self.file is not None else []

    def program(self, seed: int) -> Program:
        """The expression parsed (leaves without a value drawn from `seed`, said on stderr)."""
        program = parse_program(self.expression or "", self.values, seed=seed)
        note = describe_defaults(program, flag)
        if note:
            say(f"note: {note}")
        return program


def graph_source(expr: str | None, assignments: tuple[str, ...], model: Path | None) -> Source:
    """Exactly one source of a graph: an expression, or a saved model."""
    if model is not None:
        if expr is not None or assignments:
            raise InputError("give an expression or --model, not both")
        return Source(None, Path(model), model=Path(model))
    if expr is None:
        raise InputError("give an expression (EXPR) or a saved model (--model FILE)")
    text, file = read_expression(expr)
    return Source(text, file, parse_assignments(assignments))


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


def model_loss_graph(model_path: Path, input_text: str | None, target: float | None) -> LossGraph:
    """The loss graph, forward and backward, of the example to draw or trace: `--input`
    (its target None: looked up in the data set), else the first of the model's data set,
    said on stderr."""
    from gradviz import model as models  # lazy: start-up

    model = models.load_model(model_path)
    if input_text is not None:
        x = models.parse_input(input_text, model.spec.layers[0])
        return models.network_loss_graph(model, x, target)
    first = models.first_example(model, target)
    say(
        f"note: no --input given: using the first example of {first.data}, "
        f"x = ({', '.join(fmt(v) for v in first.x)}), y = {fmt(first.y)}"
    )
    return models.network_loss_graph(model, first.x, first.y)


def say(message: str) -> None:
    click.echo(printable_lines(message), err=True)  # file names may hold escapes
