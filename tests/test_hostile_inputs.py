"""Hostile inputs at every entry point, as a table: what goes in, the exit status, and a
fragment of the one message that comes out.

Entry points: expression text, NAME=VALUE arguments, spec TOML files and inline spec
options, saved model JSON, CSV data, output paths. Every row runs through click's
CliRunner and is held to the same contract (see `check`): the status (2 bad input,
1 runtime failure, 0 handled), the message on stderr and not on stdout, no traceback,
no escape sequence from the input on the terminal, rich markup printed literally.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gradviz.cli import cli
from gradviz.errors import ExpressionError

Content = str | bytes | Callable[[str], str]  # a callable gets the text of a saved model


FIFO = b"<a named pipe>"  # file content that makes the file a named pipe (no writer)
FOLDER = b"<a folder>"  # file content that makes the name a folder

# Every error line is short, whatever the input's size: quoted text is cut (errors.quoted),
# and advice goes on a line of its own (issue 23: three lines were over 200 characters).
MAX_LINE = 200
# Lines that list what is allowed (the 14 spec keys) are longer by that list, not by input.
LISTING = re.compile(r"known keys: name, layers|Use one of \.dot")


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    status: int
    fragment: str  # in stderr for an error, in stdout when the input is handled (status 0)
    files: dict[str, Content] = field(default_factory=dict)
    caret: bool = False  # an expression error: the line and a caret under the span
    env: dict[str, str] = field(default_factory=dict)


def case(status: int, fragment: str, *args: str, files=None, caret=False, env=None, id: str):
    return pytest.param(Case(args, status, fragment, files or {}, caret, env or {}), id=id)


def draw(expr: str, *rest: str, status: int = 2, fragment: str, caret: bool = True, id: str):
    return case(status, fragment, "draw", expr, *rest, caret=caret and status == 2, id=id)


# -- expressions --------------------------------------------------------------------------

EXPRESSIONS = [
    # no code execution: each construct refused by name
    draw("__import__('os')", fragment="dunder names (__import__)", id="dunder-import"),
    draw("__builtins__", fragment="dunder names", id="dunder-name"),
    draw("os.system('ls')", fragment="attribute access (.name) is not supported", id="attr"),
    draw("a.__class__.__bases__", fragment="attribute access", id="attr-chain"),
    # issue 23: a word that names a file which is not there
    draw("hand.expr", fragment="no such file: 'hand.expr'", caret=False, id="missing-file"),
    draw("samples/hand.exp", fragment="no such file: 'samples/hand.exp'", caret=False, id="typo"),
    draw("notes.txt", fragment="no such file: 'notes.txt'", caret=False, id="missing-txt"),
    draw("a.b", fragment="attribute access (.name) is not supported", id="attr-short"),
    draw("x.exp()", fragment="attribute access (.name) is not supported", id="attr-call"),
    draw("1/2.e5", status=0, fragment="data 5e-6", id="float-not-a-file"),
    case(2, "no such file: 'hand.expr'", "trace", "hand.expr", id="trace-missing-file"),
    case(2, "no such file: 'hand.expr'", "check", "hand.expr", id="check-missing-file"),
    draw("lambda: 1", fragment="lambda functions are not supported", id="lambda"),
    draw("(lambda: 1)()", fragment="lambda functions are not supported", id="lambda-call"),
    draw("[x for x in y]", fragment="comprehensions are not supported", id="listcomp"),
    draw("exp(x for x in y)", fragment="comprehensions are not supported", id="genexp"),
    draw("{x: 1 for x in y}", fragment="comprehensions are not supported", id="dictcomp"),
    draw("f'{a}'", fragment="f-strings are not supported", id="fstring"),
    draw("(y := 2) * y", fragment="the walrus operator (:=) is not supported", id="walrus"),
    draw("a[0]", fragment="subscripts ([...]) are not supported", id="subscript"),
    draw("a[0](x)", fragment="subscripts ([...]) are not supported", id="subscript-call"),
    draw("ｅｖａｌ(1)", fragment="unknown function ｅｖａｌ (read as eval)", id="fullwidth-eval"),
    draw("ᵉˣᵉᶜ(x)", fragment="unknown function ᵉˣᵉᶜ (read as exec)", id="superscript-exec"),
    draw("exec(x)", fragment="unknown function exec", id="exec"),
    draw("open(x)", fragment="unknown function open", id="open"),
    draw("＿＿import＿＿('os')", fragment="invalid character '＿'", id="fullwidth-dunder"),
    draw("import os", fragment="import statements are not supported", id="import"),
    draw("def f(): pass", fragment="function definitions are not supported", id="def"),
    draw("'rm -rf'", fragment="strings are not supported", id="string"),
    draw("b'x'", fragment="strings are not supported", id="bytes"),
    draw("1j", fragment="complex numbers are not supported", id="complex"),
    draw("True", fragment="booleans are not supported", id="bool"),
    draw("...", fragment="is not supported", id="ellipsis"),
    draw("a if b else c", fragment="conditional expressions", id="ifexp"),
    draw("a < b", fragment="comparisons are not supported", id="compare"),
    draw("a and b", fragment="boolean operators (and, or)", id="and"),
    draw("not a", fragment="boolean operators (not)", id="not"),
    draw("~a", fragment="the bitwise operator ~", id="invert"),
    draw("a // b", fragment="floor division (//)", id="floordiv"),
    draw("a % b", fragment="the modulo operator (%)", id="mod"),
    draw("a @ b", fragment="matrix multiplication (@)", id="matmul"),
    draw("a ^ 2", fragment="the bitwise operator ^", id="xor"),
    draw("a << 2", fragment="the shift operator <<", id="shift"),
    draw("a += 1", fragment="augmented assignment", id="augassign"),
    draw("x: int = 1", fragment="annotated assignment", id="annassign"),
    draw("del a", fragment="del statements are not supported", id="del"),
    draw("*a", fragment="starred", id="starred"),
    draw("exp(x=1)", fragment="keyword arguments are not supported", id="kwargs"),
    draw("exp(*a)", fragment="starred arguments", id="star-args"),
    draw("exp(a, b)", fragment="exp takes 1 argument, got 2", id="two-args"),
    draw("exp", fragment="exp is a function; call it with one argument", id="bare-function"),
    draw("exp = 2; exp", fragment="exp is a function name and cannot be assigned", id="assign-fn"),
    draw("a = b = c", fragment="chained assignment", id="chained"),
    draw("a = 1; a = 2; a", fragment="a is assigned twice", id="twice"),
    draw("y = y + 1", fragment="y is used in its own definition", id="self-ref"),
    draw("2x", fragment="to multiply, write 2*x", id="juxtapose"),
    draw("a b", fragment="an operator is missing", id="missing-op"),
    draw("(a + b", fragment="syntax error", id="unclosed"),
    draw("", fragment="the expression is empty", id="empty"),
    draw("# just a comment", fragment="the expression is empty", id="comment"),
    draw("a\x00b", fragment="NUL character", id="nul"),
    draw("a\x1b[31m", fragment="syntax error", id="escape-seq"),
    draw("a\u202e + b", fragment="syntax error", id="bidi-override"),
    draw("a × b", fragment="use * for multiplication", id="times-sign"),
    # rich markup in the input is printed as typed
    draw("[red]x[/]", fragment="[red]x[/]", id="markup"),
    # bounded work: refused before Python's parser, or computed in floating point
    draw("9" * 101, fragment="number too long: 101 characters (the limit is 100)", id="long-num"),
    draw("a" * 101, fragment="name too long: 101 characters (the limit is 100)", id="long-name"),
    draw("(" * 101 + "a" + ")" * 101, fragment="nested too deeply", id="deep-parens"),
    draw(
        "(" * 5000 + "a" + ")" * 5000, fragment="expression too long", caret=False, id="parens-5k"
    ),
    draw("a*" + "-" * 101 + "a", fragment="nested too deeply", id="deep-signs"),
    draw("a" + "**a" * 101, fragment="nested too deeply", id="deep-powers"),
    draw("exp(" * 101 + "a" + ")" * 101, fragment="nested too deeply", id="deep-calls"),
    draw("a" + "+a" * 1001, fragment="expression too large (more than 2000", id="many-nodes"),
    draw(
        "\n".join(f"t{i} = 1" for i in range(501)) + "\nt0",
        fragment="too many statements: 502 (the limit is 500)",
        id="many-statements",
    ),
    draw("a" * 10_001, fragment="expression too long: 10001 characters", caret=False, id="long"),
    draw(
        "x**10000000", fragment="exponent too large: 10000000 is outside -1e6 to 1e6", id="exponent"
    ),
    draw("x**1e400", fragment="exponent too large: inf", id="exponent-inf"),
    draw("2**100000", status=0, fragment="data inf", id="2**100000"),
    draw("10**10**10", status=0, fragment="data inf", id="10**10**10"),
    draw("exp(exp(exp(1000)))", status=0, fragment="data inf", id="exp-overflow"),
    draw("log(0) * 0", status=0, fragment="data nan", id="nan-result"),
    draw("1e99999 * a", "a=2", status=0, fragment="data inf", id="huge-literal"),
]

# -- NAME=VALUE -----------------------------------------------------------------------------

ASSIGNMENTS = [
    draw("a", "a", fragment="expected NAME=VALUE, got 'a'", id="no-equals"),
    draw("a", "=1", fragment="'' is not a usable name", id="no-name"),
    draw("a", "a=x", fragment="the value for a is not a number: 'x'", id="not-number"),
    draw("a", "a=1", "a=2", fragment="a is given twice", id="twice"),
    draw("a", "ａ=1", "a=2", fragment="a is given twice", id="nfkc-twice"),
    draw("a", "__class__=1", fragment="'__class__' is not a usable name", id="dunder"),
    draw("a", "[red]x[/]=1", fragment="'[red]x[/]' is not a usable name", id="markup-name"),
    draw("a", "a=[red]", fragment="not a number: '[red]'", id="markup-value"),
    draw("a", "a=\x1b[31m", fragment="not a number", id="escape-value"),
    draw("a", "b=1", fragment="b does not appear in the expression", caret=False, id="unknown"),
    draw("a", "exp=1", fragment="exp, which is a function", caret=False, id="function"),
    draw("e = a*b; e", "e=1", fragment="the expression computes e", caret=False, id="computed"),
    draw("a*b", "a=nan", "b=2", status=0, fragment="data nan", id="nan"),
    draw("a*b", "a=-inf", "b=2", status=0, fragment="data -inf", id="inf"),
    draw("a*b", "a=1e400", "b=2", status=0, fragment="data inf", id="overflow"),
    draw("a*b", "a=" + "9" * 5000, "b=2", status=0, fragment="data inf", id="5000-digits"),
]

# -- spec files and inline options --------------------------------------------------------

XOR = 'layers = [2, 2, 1]\ndata = "xor"\nepochs = 2\n'


def spec(text: str, fragment: str, *, status: int = 2, id: str):
    return case(status, fragment, "train", "s.toml", "-q", files={"s.toml": text}, id=id)


def option(fragment: str, *args: str, status: int = 2, id: str):
    return case(status, fragment, "train", "-q", "--epochs", "2", *args, id=id)


SPECS = [
    spec(XOR + "learning_rate = nan\n", "learning_rate: nan must be a positive number", id="nan"),
    spec(XOR + "learning_rate = inf\n", "learning_rate: inf must be a positive", id="inf"),
    spec(XOR + "learning_rate = 1e400\n", "learning_rate: inf must be", id="overflow"),
    spec(XOR + "learning_rate = 1" + "0" * 400 + "\n", "learning_rate: 1000", id="lr-400-digits"),
    spec(XOR + "clip_value = 1" + "0" * 400 + "\n", "clip_value: 1000", id="clip-400-digits"),
    spec(XOR + "epochs = 3\n", "s.toml line 4: epochs: given twice", id="duplicate-key"),
    spec(XOR + '"epochs" = 3\n', "s.toml line 4: epochs: given twice", id="duplicate-quoted"),
    spec(XOR + "[data]\nname = 'or'\n", "s.toml line 4: data: given twice", id="duplicate-table"),
    case(0, "Gradients per layer", "grads", "s.toml", files={"s.toml": "\ufeff" + XOR}, id="bom"),
    spec(XOR + "seed = " + "9" * 5000 + "\n", "a number is too long to read", id="5000-digits"),
    spec(XOR + "seed = " + "9" * 30 + "\n", "seed: 999,999,999", id="30-digits"),
    spec("x = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply", id="nested"),
    spec(XOR + "layres = 1\n", "line 4: layres: unknown key", id="unknown-key"),
    # a table after another table is found too (it was only when it came first)
    spec(
        'layers = [2, 2, 1]\n[data]\nname = "xor"\n[colour]\nx = 1\n',
        "s.toml line 4: colour: unknown key",
        id="unknown-table-after-a-table",
    ),
    spec(XOR + '"[red]x[/]" = 1\n', "[red]x[/]: unknown key", id="markup-key"),
    spec(XOR + '"\\u001b[31m" = 1\n', "\\x1b[31m: unknown key", id="escape-key"),
    spec(XOR + 'name = "a\\u001b]0;pwned\\u0007"\n', "name: 'a\\x1b]0;pwned\\x07'", id="esc-name"),
    spec('layers = [2, 100000, 1]\ndata = "xor"\n', "100000 units is more than", id="wide"),
    spec(f"layers = [{'2,' * 70}1]\ndata = 'xor'\n", "70 layers is more than the 64", id="deep"),
    spec('layers = [2, 1000, 1000, 1]\ndata = "xor"\n', "parameters is more than", id="params"),
    spec(XOR.replace("2\n", "1000000000\n"), "epochs: 1,000,000,000 is out of range", id="epochs"),
    spec(XOR.replace("epochs = 2", "epochs = 2.5"), "expected a whole number, got 2.5", id="float"),
    spec(XOR.replace("epochs = 2", "epochs = true"), "expected a whole number, got true", id="b"),
    # issue 23: values quoted as the file spells them; hinge only with a signed output
    spec(XOR + "l2 = true\n", "l2: true must be a number from 0", id="l2-true"),
    spec(
        XOR + f"name = '{'n' * 101}'\n",
        "name: 101 characters is more than the 100 allowed",
        id="name",
    ),
    option(
        "(the outputs are finite; its L2 term, l2·Σp², overflowed)",
        *("xor", "--l2", "1000", "--lr", "1000", "--epochs", "50"),
        status=1,
        id="l2-diverged",
    ),
    spec(XOR + "learning_rate = false\n", "expected a number, got false", id="lr-false"),
    spec(XOR + "loss = true\n", "unknown value true; expected one of", id="loss-true"),
    spec(
        XOR + 'loss = "hinge"\noutput_activation = "sigmoid"\n',
        "hinge needs a score that can be negative (its sign is the prediction), and a sigmoid",
        id="hinge-sigmoid",
    ),
    spec(XOR + 'loss = "hinge"\noutput_activation = "relu"\n', "a relu output", id="hinge-relu"),
    spec(
        XOR + 'loss = "hinge"\noutput_activation = "softplus"\n',
        "a softplus output never is",
        id="hinge-softplus",
    ),
    spec(XOR + 'loss = "hinge"\noutput_activation = "tanh"\n', "", status=0, id="hinge-tanh"),
    spec(XOR + 'loss = "hinge"\noutput_activation = "elu"\n', "", status=0, id="hinge-elu"),
    spec(XOR.replace("xor", "[bold]x"), "unknown data set", id="markup-data"),
    spec("layers = [2, 2, 1]\ndata = {csv = 'gone.csv'}\n", "gone.csv: no such CSV", id="csv"),
    spec("layers = [2, 2, 1]\ndata = {name = 'circle', size = 1e12}\n", "data.size", id="size"),
    spec("layers = [2,\n", "invalid TOML", id="invalid"),
    spec(b"\xff\xfe layers", "not UTF-8 text", id="not-utf8"),  # type: ignore[arg-type]
    case(2, "no such spec file", "train", "missing.toml", id="missing-file"),
    option("--layers: 'x' is not a positive integer", "--layers", "2,x,1", "--data", "xor", id="x"),
    option(
        "is not a positive integer",
        "--layers",
        "2,99999999999999999999,1",
        "--data",
        "xor",
        id="huge-layer",
    ),
    option(
        "--layers: expected at least two sizes",
        "--layers",
        "[red]",
        "--data",
        "xor",
        id="markup-layers",
    ),
    option(
        "--epochs: 99,999",
        "--layers",
        "2,2,1",
        "--data",
        "xor",
        "--epochs",
        "9" * 20,
        id="huge-epochs",
    ),
    option(
        "--lr: nan must be a positive number",
        "--layers",
        "2,2,1",
        "--data",
        "xor",
        "--lr",
        "nan",
        id="lr-nan",
    ),
    option("--lr: -1", "--layers", "2,2,1", "--data", "xor", "--lr", "-1", id="lr-negative"),
    option(
        "--seed: -5 is out of range",
        "--layers",
        "2,2,1",
        "--data",
        "xor",
        "--seed",
        "-5",
        id="seed",
    ),
    option(
        "--activation: unknown value",
        "--layers",
        "2,2,1",
        "--data",
        "xor",
        "--activation",
        "[bold]evil[/]",
        id="activation",
    ),
    option(
        "--clip-value: nan",
        "--layers",
        "2,2,1",
        "--data",
        "xor",
        "--clip-value",
        "nan",
        id="clip-nan",
    ),
    option(
        "--update:",
        "--layers",
        "2,2,1",
        "--data",
        "xor",
        "--update",
        "minibatch 0",
        id="minibatch-0",
    ),
    option("no such CSV file", "--layers", "2,2,1", "--data", "gone.csv", id="csv-missing"),
    option(
        "training diverged at epoch 1",
        "circle",
        "--activation",
        "relu",
        "--output-activation",
        "linear",
        "--lr",
        "1000000",
        status=1,
        id="diverged",
    ),
]

# -- saved models ----------------------------------------------------------------------------


def first_weight(replacement: str) -> Callable[[str], str]:
    """The saved model with its first weight's text replaced."""

    def edit(text: str) -> str:
        raw = json.loads(text)
        number = json.dumps(raw["layers"][0]["weights"][0][0])
        return text.replace(number, replacement, 1)

    return edit


def edited(change: Callable[[dict], None]) -> Callable[[str], str]:
    def edit(text: str) -> str:
        raw = json.loads(text)
        change(raw)
        return json.dumps(raw)

    return edit


def model(content: Content, fragment: str, *, status: int = 2, command: str = "inspect", id: str):
    args = {
        "inspect": ("inspect", "m.json"),
        "draw": ("draw", "--model", "m.json", "--input", "0,1", "-f", "dot"),
        "trace": ("trace", "--model", "m.json", "--input", "0,1", "--level", "layer"),
        "grads": ("grads", "m.json"),
    }[command]
    return case(status, fragment, *args, files={"m.json": content}, id=id)


MODELS = [
    model(first_weight("NaN"), 'L1.N1.w0 = "NaN" is not finite', id="nan-literal"),
    model(first_weight("-Infinity"), "is not finite (the model diverged)", id="inf-literal"),
    model(first_weight('"nan"'), 'L1.N1.w0 = "nan" is not finite', id="nan-string"),
    model(first_weight("1e400"), "L1.N1.w0 = Infinity is not finite", id="overflow"),
    model(first_weight("9" * 5000), "a number of 5,000 characters", id="5000-digits"),
    model(first_weight("9" * 400), "a number of 400 characters", command="draw", id="400-digits"),
    model(first_weight("true"), "L1.N1.w0 = true is not a number", id="bool"),
    model(first_weight('"[red]x[/]"'), 'L1.N1.w0 = "[red]x[/]" is not a number', id="markup"),
    model(
        lambda t: t.replace('"version": 1', '"version": 1, "version": 2', 1),
        'the key "version" appears twice in one object',
        id="duplicate-key",
    ),
    model(
        lambda t: t.replace(
            '"format": "gradviz-model"', '"format": "x", "format": "gradviz-model"'
        ),
        'the key "format" appears twice',
        command="draw",
        id="duplicate-format",
    ),
    model(lambda t: t[: len(t) // 2], "m.json: truncated: Expecting", id="truncated"),
    model(lambda t: t[:-3], "truncated", id="truncated-end"),
    model("[" * 100_000 + "]" * 100_000, "nested too deeply to be a model", id="nested"),
    model("", "truncated: Expecting value", id="empty"),
    model("[]", 'not a gradviz model (no "format": "gradviz-model")', id="list"),
    model(lambda t: "\ufeff" + t, "Unexpected UTF-8 BOM", id="bom"),
    model(b"\xff\xfe{}", "not UTF-8 text", id="not-utf8"),  # type: ignore[arg-type]
    model(edited(lambda r: r.update(version=99)), "99 is not a version", id="version"),
    model(edited(lambda r: r.pop("layers")), "layers: missing", id="no-layers"),
    model(
        edited(lambda r: r["spec"].update(layers=[2, 1000, 1])),
        "expected 1000 rows of 2 weights",
        id="shape",
    ),
    model(
        edited(lambda r: r["spec"].update(layers=[2, 100000, 1])),
        "100000 units is more than",
        id="huge-layer",
    ),
    model(
        edited(lambda r: r["spec"].update(name="x\u001b[2J")),
        "spec.name: 'x\\x1b[2J' holds control characters",
        id="esc-name",
    ),
    model(
        edited(lambda r: r["spec"].update(data={"csv": "/etc/passwd"})),
        "/etc/passwd is outside the model's folder",
        command="draw",
        id="csv-elsewhere",
    ),
    model(
        edited(lambda r: r["history"].update(loss=["nan", "inf", 0.5])),
        "nan",
        status=0,
        id="history-nan",
    ),
    model(
        edited(lambda r: r["spec"].update(name="[red]evil[/]")),
        "[red]evil[/]: 2-4-1",
        status=0,
        id="markup-name",
    ),
    model(
        edited(lambda r: r.update(layers="x")),
        "layers: expected 2 layers",
        command="trace",
        id="trace",
    ),
    model(first_weight("NaN"), "is not finite", command="grads", id="grads"),
    case(2, "no such model file", "inspect", "missing.json", id="missing"),
    case(
        2,
        "expected 2 finite numbers",
        "draw",
        "--model",
        "m.json",
        "--input",
        "nan,1",
        files={"m.json": lambda t: t},
        id="input-nan",
    ),
    case(
        2,
        "expected 2 numbers separated by commas",
        "draw",
        "--model",
        "m.json",
        "--input",
        "[red]",
        files={"m.json": lambda t: t},
        id="input-markup",
    ),
    case(
        2,
        "is not in the data set xor",
        "draw",
        "--model",
        "m.json",
        "--input",
        "0.5,0.5",
        files={"m.json": lambda t: t},
        id="input-unknown",
    ),
    case(
        2,
        "give an expression or --model, not both",
        "draw",
        "a",
        "--model",
        "m.json",
        files={"m.json": lambda t: t},
        id="both",
    ),
]

# -- CSV data ----------------------------------------------------------------------------------


def csv(text: str | bytes, fragment: str, *, status: int = 2, id: str):
    quiet = ("-q",) if status else ()  # handled: the output shows the data was read
    args = ("train", *quiet, "--layers", "2,2,1", "--data", "d.csv", "--epochs", "2")
    return case(status, fragment, *args, files={"d.csv": text}, id=id)


CSVS = [
    csv("a,b,y\n1,nan,0\n", "line 2: 'nan' in column 'b' is not finite", id="nan"),
    csv("a,b,y\n1,-inf,0\n", "'-inf' in column 'b' is not finite", id="inf"),
    csv("a,b,y\n1,1e999,0\n", "'1e999' in column 'b' is not finite", id="overflow"),
    csv("a,b,y\n1," + "9" * 5000 + ",0\n", "…' (5,000 characters) in column 'b' is not", id="long"),
    csv("a,b,y\n1,2,3\n", "label '3' in column 'y' is not 0 or 1", id="label"),
    csv("a,b,y\n1,2\n", "line 2: 2 fields, expected 3", id="ragged"),
    csv("a,b,y\n1,\x002,0\n", "is not a number", id="nul"),
    csv("a,a,y\n1,2,0\n", "repeated column name", id="duplicate-header"),
    csv("\x1b[31ma,b,y\n1,2,0\n", "column name '\\x1b[31ma' holds control characters", id="esc"),
    csv("", "the CSV file has no rows", id="empty"),
    csv("a,b,y\n", "a header but no data rows", id="header-only"),
    csv(
        ",".join(f"c{i}" for i in range(1002)) + "\n" + ",".join(["0"] * 1002) + "\n",
        "more than 1000 feature columns",
        id="wide",
    ),
    csv("a,b,y\n1," + "1" * 200_000 + ",0\n", "field larger than field limit", id="huge-field"),
    csv(b"a,b,y\n\xff,1,0\n", "not UTF-8 text", id="not-utf8"),
    csv("a,b,c,y\n1,2,3,0\n3,4,5,1\n", "they must match", id="width"),
    case(
        0,
        "[red]a[/] ┃ b",
        "train",
        "--layers",
        "2,2,1",
        "--data",
        "d.csv",
        "--epochs",
        "2",
        files={"d.csv": "[red]a[/],b,y\n1,2,0\n"},
        id="markup-header",
    ),
]

# -- output paths ----------------------------------------------------------------------------------

OUTPUTS = [
    case(2, "cannot tell the format of 'out.xyz'", "draw", "a", "-o", "out.xyz", id="ext"),
    case(2, "(no extension)", "draw", "a", "-o", "out", id="no-ext"),
    case(2, "folder 'nowhere' does not exist", "draw", "a", "-o", "nowhere/out.dot", id="folder"),
    case(2, "it is a folder", "draw", "a", "-o", "dir.dot", files={"dir.dot/keep": ""}, id="dir"),
    case(2, "File name too long", "draw", "a", "-o", "n" * 300 + ".dot", id="name-too-long"),
    case(2, "Not a directory", "draw", "a", "-o", "f.txt/a.dot", files={"f.txt": ""}, id="not-dir"),
    case(
        2,
        "PNG is binary and cannot be written to stdout",
        "draw",
        "a",
        "-o",
        "-",
        "-f",
        "png",
        id="png-stdout",
    ),
    case(
        2,
        "is given twice as an output",
        "draw",
        "a",
        "-o",
        "a.dot",
        "-o",
        "./a.dot",
        id="twice",
    ),
    case(
        2,
        "refusing to write 'in.expr': it is an input",
        "draw",
        "@in.expr",
        "-f",
        "dot",
        "-o",
        "in.expr",
        files={"in.expr": "a*b"},
        id="input-expr",
    ),
    case(
        2,
        "refusing to write 'in.expr': it is an input",
        "draw",
        "in.expr",
        "-f",
        "json",
        "-o",
        "in.expr",
        files={"in.expr": "a*b"},
        id="input-expr-path",
    ),
    case(
        2,
        "refusing to write 'm.json': it is an input",
        "draw",
        "--model",
        "m.json",
        "--input",
        "0,1",
        "-o",
        "m.json",
        files={"m.json": lambda t: t},
        id="input-model",
    ),
    case(
        2,
        "refusing to write 's.toml': it is an input",
        "train",
        "s.toml",
        "--save",
        "s.toml",
        files={"s.toml": XOR},
        id="save-spec",
    ),
    case(
        2,
        "it is an input",
        "train",
        "--layers",
        "2,2,1",
        "--data",
        "d.csv",
        "--save",
        "d.csv",
        files={"d.csv": "a,b,y\n1,2,0\n"},
        id="save-csv",
    ),
    case(2, "no folder 'nowhere'", "train", "xor", "--save", "nowhere/m.json", id="save-folder"),
    case(
        2,
        "cannot write '/proc/x.html': '/proc' takes no new file",
        *("train", "xor", "--epochs", "2", "-q", "--report", "/proc/x.html"),
        id="report-in-proc",
    ),
    case(0, "data 1", "draw", "a", "a=1", "--depth", "9" * 5000, id="depth-5000-digits"),
    case(0, "data 1", "draw", "a", "a=1", "--depth", "9" * 20, id="depth-20-digits"),
    case(2, "'gif' is not one of", "draw", "a", "-f", "gif", id="format"),
    case(2, "cannot read 'gone.expr'", "draw", "@gone.expr", id="missing-input"),
    case(2, "is not UTF-8 text", "draw", "@bin.expr", files={"bin.expr": b"a\xff"}, id="binary"),
    case(
        2,
        "too large for an expression file",
        "draw",
        "@big.expr",
        files={"big.expr": "a" * 1_000_001},
        id="big-input",
    ),
]


# -- issue 11: odd input at the other entry points ----------------------------------------------

LONG = "v" * 20_000  # every error that quotes it must cut it (errors.quoted)
CSV_MODEL_SPEC = 'layers = [2, 2, 1]\ndata = {csv = "d.csv"}\nepochs = 2\n'
POINTS = "a,b,y\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n"


def csv_model(path: str) -> Callable[[str], str]:
    """The saved model with its data set replaced by the CSV file `path`."""
    return edited(lambda r: r["spec"].update(data={"csv": path}))


def check_cmd(*args: str, status: int = 2, fragment: str, id: str):
    return case(status, fragment, "check", *args, id=id)


ODD = [
    # echoes of long text are cut (item 15) and say what is wrong (items 10, 16)
    draw("a", LONG + "=1", fragment="name too long: 20000 characters (the limit is 100)", id="n"),
    draw("a", "v" * 101 + "=1", fragment="name too long: 101 characters", id="name-101"),
    draw(
        "a", "v" * 100 + "=1", fragment="does not appear in the expression", caret=False, id="100"
    ),
    draw("a", "a=" + LONG, fragment="not a number: 'vvvv", id="long-value"),
    draw(
        " + ".join(f"x{i}" for i in range(500)),
        "q=1",
        fragment="the leaves are: x0, x1, x2, x3, x4, x5, x6, x7, … (500 in all)",
        caret=False,
        id="many-leaves",
    ),
    check_cmd(
        " + ".join(f"x{i}" for i in range(500)),
        "--wrt",
        "q",
        fragment="no leaf named 'q'",
        id="wrt-many-leaves",
    ),
    draw("a", LONG, fragment="expected NAME=VALUE, got 'vvv", id="long-no-equals"),
    draw("a**-1000001", fragment="exponent too large: -1000001 is outside -1e6 to 1e6", id="exp"),
    draw("a**1000000", "a=1", status=0, fragment="data 1", id="exponent-at-limit"),
    check_cmd("a*b", "a=1", "b=2", "--wrt", LONG, fragment="no leaf named 'vvvv", id="long-wrt"),
    case(2, "'vvvv", "draw", "a", "-f", LONG, id="long-format"),
    case(2, "'vvvv", "grads", "xor", "--fail-on", LONG, id="long-fail-on"),
    *[
        case(2, "file name too long: 'vvvv", *args, id=f"long-path-{i}-{args[0]}")
        for i, args in enumerate(
            [
                ("grads", LONG),
                ("compare", LONG, "xor"),
                ("train", LONG + ".toml"),
                ("train", "xor", "-q", "--save", LONG + ".json"),
                ("trace", "a", "a=1", "--frames", LONG),
                ("draw", LONG + ".expr"),
            ]
        )
    ],
    case(2, "…: cannot read: File name too long", "inspect", LONG + ".json", id="long-inspect"),
    case(2, "(204 characters)", "draw", "a", "-o", LONG[:200] + ".xyz", id="long-output"),
    case(
        2,
        "label column 'y' not found; columns: c0, c1, c2, c3, c4, c5, c6, c7, … (1,000 in all)",
        "train",
        "s.toml",
        "-q",
        files={
            "s.toml": 'layers = [2, 2, 1]\ndata = {csv = "d.csv", label = "y"}\n',
            "d.csv": ",".join(f"c{i}" for i in range(1000)) + "\n" + "0," * 999 + "0\n",
        },
        id="no-label-column",
    ),
    model(first_weight(json.dumps(LONG)), "is not a number", id="long-weight"),
    model(
        edited(lambda r: r["spec"].update(activation=[LONG])),
        "'vvvv",
        id="long-activation",
    ),
    spec(XOR + "activation = " + json.dumps(LONG) + "\n", "'vvvv", id="long-activation"),
    spec(XOR + json.dumps(LONG) + " = 1\n", "unknown key", id="long-key"),
    spec(
        XOR + "name = " + json.dumps(LONG) + "\n",
        "name: 20,000 characters is more than the 100 allowed",
        id="long-name",
    ),
    # TOML (items 7, 11)
    spec(XOR + '"layers" = [3, 4, 1]\n', "s.toml line 4: layers: given twice", id="dup-layers"),
    spec("\ufeff" + XOR + "epochs = 1\n", "s.toml line 4: epochs: given twice", id="bom-dup"),
    case(
        0, "data 2", "draw", "@e.expr", "a=1", "b=2", files={"e.expr": "\ufeffa*b"}, id="bom-expr"
    ),
    # outputs (items 12, 13)
    case(
        2,
        "--save 'd': is a folder",
        "train",
        "xor",
        "-q",
        "--save",
        "d",
        files={"d": FOLDER},
        id="save-dir",
    ),
    case(2, "is a folder, not a model file", "inspect", "d", files={"d": FOLDER}, id="inspect-dir"),
    case(
        2, "is a folder, not a model", "draw", "--model", "d", files={"d": FOLDER}, id="model-dir"
    ),
    case(
        2,
        "refusing to write 'd.csv': it is an input",
        "draw",
        "--model",
        "m.json",
        "--input",
        "0,1",
        "-f",
        "json",
        "-o",
        "d.csv",
        files={"d.csv": POINTS, "m.json": csv_model("d.csv")},
        id="output-is-model-data",
    ),
    case(
        2,
        "refusing to write 'd.csv': it is an input",
        "draw",
        "--model",
        "m.json",
        "-f",
        "dot",
        "-o",
        "d.csv",
        files={"d.csv": POINTS, "m.json": csv_model("d.csv")},
        id="output-is-model-data-no-input",
    ),
    # a model's data path (items 19, 20)
    case(
        2,
        "its data set 'p.csv' is not a regular file",
        "inspect",
        "m.json",
        files={"p.csv": FIFO, "m.json": csv_model("p.csv")},
        id="data-fifo",
    ),
    case(
        2,
        "its data set 'p.csv' is not a regular file",
        "draw",
        "--model",
        "m.json",
        "-f",
        "dot",
        files={"p.csv": FIFO, "m.json": csv_model("p.csv")},
        id="data-fifo-draw",
    ),
    model(csv_model("../d.csv"), "../d.csv is outside the model's folder", id="data-parent"),
    case(
        2,
        "its data set 'sub.csv' is a folder",
        "grads",
        "m.json",
        files={"sub.csv": FOLDER, "m.json": csv_model("sub.csv")},
        id="data-folder",
    ),
    model(csv_model("gone.csv"), "gone.csv: no such CSV file", id="data-missing"),
    model(
        edited(
            lambda r: [
                w.update(weights=[[1e308] * len(w["weights"][0])] * len(w["weights"]))
                for w in r["layers"]
            ]
        ),
        "inf",
        status=0,
        id="weights-1e308",
    ),
    model(
        edited(
            lambda r: [
                w.update(weights=[[1e308] * len(w["weights"][0])] * len(w["weights"]))
                for w in r["layers"]
            ]
        ),
        "Gradients per layer",
        status=0,
        command="grads",
        id="grads-weights-1e308",
    ),
    # check (item 14)
    check_cmd("x*x", "x=3", "--eps", "1e-20", fragment="eps 1e-20 is too small", id="eps-tiny"),
    check_cmd("x*x", "x=3", "--eps", "1e-14", status=0, fragment="pass", id="eps-small-ok"),
    check_cmd("x*x", "x=1e300", "--eps", "1e-20", fragment="too small", id="eps-huge-x"),
    check_cmd("x*x", "x=3", "--eps", "1e308", fragment="eps 1e+308 is too large", id="eps-huge"),
    check_cmd("x*x", "x=1e308", "--eps", "1e308", fragment="overflow float64", id="eps-2-huge"),
    check_cmd(
        "x*x", "x=3", "--eps", "1e307", "--show", status=0, fragment="h = 1e307", id="eps-big"
    ),
    check_cmd("x*x", "x=3", "--eps", "nan", fragment="eps must be a positive number", id="eps-nan"),
    check_cmd("x*x", "x=3", "--eps", "-1", fragment="eps must be a positive", id="eps-negative"),
    check_cmd("x*x", "x=3", "--tol", "0", fragment="tol must be a positive", id="tol-0"),
    check_cmd("x*x", "x=3", "--wrt", "y", fragment="no leaf named 'y'", id="wrt-unknown"),
    check_cmd("x*", fragment="syntax error", id="syntax"),
    # compare (item 20)
    case(2, "no such model file", "compare", "xor", "gone.json", id="compare-missing"),
    case(2, "is neither a spec file nor", "compare", "xor", "nope", id="compare-unknown"),
    case(
        2,
        "is not finite",
        "compare",
        "xor",
        "m.json",
        files={"m.json": first_weight("NaN")},
        id="compare-nan",
    ),
    case(2, "is a folder", "compare", "xor", "d.json", files={"d.json": FOLDER}, id="compare-dir"),
    # issue 23: an option string longer than a file name can be; errors name their side
    case(
        0,
        "rel: log scale",
        "compare",
        "xor",
        "xor " + " ".join(["--activation relu --init he --seed 3"] * 8),
        id="compare-long-options",
    ),
    case(2, "B ('xor --lr nan'): --lr: nan must be", "compare", "xor", "xor --lr nan", id="b-side"),
    case(2, "A ('xor --lr 0'): --lr: 0.0 must be", "compare", "xor --lr 0", "xor", id="a-side"),
    case(
        0,
        "\\x1b[31mevil.json",
        "compare",
        "xor",
        "\x1b[31mevil.json",
        files={"\x1b[31mevil.json": lambda t: t},
        id="compare-escape-name",
    ),
    case(
        0,
        "\\x1b[31mevil.json",
        "grads",
        "\x1b[31mevil.json",
        files={"\x1b[31mevil.json": lambda t: t},
        id="grads-escape-name",
    ),
    case(
        0,
        "\\x1b[31mevil.json",
        "inspect",
        "\x1b[31mevil.json",
        files={"\x1b[31mevil.json": lambda t: t},
        id="inspect-escape-name",
    ),
    # trace --frames and grads --plot targets
    case(
        2,
        "it is not a folder",
        "trace",
        "a*b",
        "a=1",
        "b=2",
        "--frames",
        "f.txt",
        files={"f.txt": ""},
        id="frames-file",
    ),
    case(
        2,
        "'gif' is not one of",
        "trace",
        "a*b",
        "--frames",
        "out",
        "--format",
        "gif",
        id="frames-format",
    ),
    case(
        2,
        "--format is the format of the --frames files",
        "trace",
        "a",
        "--format",
        "svg",
        id="format-without-frames",
    ),
    case(
        2,
        "cannot create folder",
        "trace",
        "a*b",
        "a=1",
        "b=2",
        "--frames",
        "f.txt/sub",
        files={"f.txt": ""},
        id="frames-under-file",
    ),
    case(2, "cannot tell the format of 'p.xyz'", "grads", "xor", "--plot", "p.xyz", id="plot-ext"),
    case(2, "a plot is written as .svg", "grads", "xor", "--plot", "p.json", id="plot-json"),
    case(
        2,
        "it is a folder",
        "grads",
        "xor",
        "--plot",
        "p.svg",
        files={"p.svg": FOLDER},
        id="plot-folder",
    ),
    case(2, "does not exist", "grads", "xor", "--plot", "nowhere/p.svg", id="plot-nowhere"),
    case(
        2,
        "refusing to write 's.svg'",
        "grads",
        "s.svg",
        "--plot",
        "s.svg",
        files={"s.svg": XOR},
        id="plot-over-spec",
    ),
    case(
        2,
        "refusing to write 'd.svg'",
        "grads",
        "s.toml",
        "--plot",
        "d.svg",
        files={"s.toml": CSV_MODEL_SPEC.replace("d.csv", "d.svg"), "d.svg": POINTS},
        id="plot-over-spec-data",
    ),
    case(
        2,
        "refusing to write 'd.svg'",
        "grads",
        "m.json",
        "--plot",
        "d.svg",
        files={"d.svg": POINTS, "m.json": csv_model("d.svg")},
        id="plot-over-model-data",
    ),
    # GRADVIZ_DOT and GRADVIZ_DOT_TIMEOUT (item 20)
    *[
        case(2, fragment, "draw", "a", "-o", "a.svg", env=env, id=f"env-{name}")
        for name, env, fragment in [
            ("dot-missing", {"GRADVIZ_DOT": "/no/such/dot"}, "is neither auto, system, pure"),
            ("dot-folder", {"GRADVIZ_DOT": "."}, "nor a program that can be run"),
            ("dot-long", {"GRADVIZ_DOT": LONG}, "GRADVIZ_DOT='vvvv"),
            ("timeout-word", {"GRADVIZ_DOT_TIMEOUT": "soon"}, "GRADVIZ_DOT_TIMEOUT='soon'"),
            ("timeout-0", {"GRADVIZ_DOT_TIMEOUT": "0"}, "is not a number of seconds"),
            ("timeout-neg", {"GRADVIZ_DOT_TIMEOUT": "-1"}, "is not a number of seconds"),
            ("timeout-nan", {"GRADVIZ_DOT_TIMEOUT": "nan"}, "is not a number of seconds"),
            ("timeout-inf", {"GRADVIZ_DOT_TIMEOUT": "inf"}, "is not a number of seconds"),
            ("timeout-1e6", {"GRADVIZ_DOT_TIMEOUT": "1e6"}, "is not a number of seconds"),
            ("timeout-long", {"GRADVIZ_DOT_TIMEOUT": LONG}, "(20,000 characters)"),
        ]
    ],
    case(
        2,
        "nor a program",
        "draw",
        "a",
        "-o",
        "a.svg",
        files={"dot": "#!/bin/sh\n"},
        env={"GRADVIZ_DOT": "./dot"},
        id="env-dot-not-executable",
    ),
    # CSV data (item 20)
    csv("a,b,y\n1,2,0\n1,2\n", "line 3: 2 fields, expected 3", id="ragged-later"),
    csv("a,b,y\n1,2,0\n1,2,0,4\n", "line 3: 4 fields, expected 3", id="ragged-long"),
    csv("a,b,y\n1,NaN,0\n", "'NaN' in column 'b' is not finite", id="nan-caps"),
    csv("a,b,y\n1,,0\n", "'' in column 'b' is not a number", id="empty-cell"),
    csv("a,b,y\n1,2,0.5\n", "label '0.5' in column 'y' is not 0 or 1", id="label-half"),
    csv("a,,y\n1,2,0\n3,4,1\n", "examples, full-batch", status=0, id="empty-column-name"),
    csv('é ∂,b b,"y,1"\n1,2,0\n3,4,1\n', "examples, full-batch", status=0, id="odd-column-names"),
    csv("\ufeffa,b,y\n1,2,0\n3,4,1\n", "examples, full-batch", status=0, id="bom"),
    csv("a,b,y\r\n1,2,0\r\n3,4,1\r\n", "examples, full-batch", status=0, id="crlf"),
    csv("a,b,y\r1,2,0\r3,4,1\r", "2 examples, full-batch", status=0, id="cr-only"),
    csv("a,b,y\r1,2\r", "line 2: 2 fields, expected 3", id="cr-only-ragged"),
    csv("\n\n,,\n", "the CSV file has no rows", id="blank-lines"),
    csv(
        'a,b,y\n"1,2,0\n',
        "1 fields, expected 3",
        id="open-quote",
    ),
    csv("a,b,y\n1," + "1" * 131_000 + ",0\n", "is not finite", id="field-just-under"),
]


def check(result: Result, expected: Case, caught: list | None = None) -> None:
    """The contract every row is held to. `caught`: the Python warnings the run raised."""
    everything = result.stdout + result.stderr
    assert "Traceback" not in everything
    assert not caught, [str(w.message) for w in caught]  # no Python warning, ever
    assert "Warning" not in result.stderr, result.stderr
    for line in result.stderr.splitlines():
        limit = MAX_LINE + (200 if LISTING.search(line) else 0)
        assert len(line) < limit, f"{len(line)} characters: {line[:300]}"
    assert "\x1b" not in everything  # no escape sequence from the input; no colour off a tty
    if result.exception is not None:  # an exception that escaped the CLI is a crash
        assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == expected.status, (result.exit_code, result.stderr, result.stdout)
    if expected.status == 0:
        assert expected.fragment in result.stdout, result.stdout
        assert "Error" not in result.stderr
        return
    assert expected.fragment in result.stderr, result.stderr
    assert expected.fragment not in result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, result.stderr  # one message, naming the problem
    if expected.caret:
        lines = result.stderr.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("Error: "))
        assert re.fullmatch(r"  \s*\^+", lines[at + 2]), result.stderr  # the line, the caret


@pytest.fixture(scope="module")
def model_text(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("model") / "xor.json"
    result = CliRunner().invoke(cli, ["train", "xor", "--epochs", "3", "-q", "--save", str(path)])
    assert result.exit_code == 0, result.output
    return path.read_text()


def make_files(folder: Path, files: dict[str, Content], model_text: str) -> None:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content = content(model_text)
        if name.endswith("/keep"):
            continue  # only the folder
        if content == FIFO:
            os.mkfifo(path)
        elif content == FOLDER:
            path.mkdir()
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def invoke(expected: Case) -> tuple[Result, list]:
    """Run one case in-process, with the warning filters a user's run has: everything
    shown, except the NaN/inf warnings that gradviz's engine silences on purpose."""
    env = {"GRADVIZ_DOT": None, "NO_COLOR": "1", "COLUMNS": "200", **expected.env}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"gradviz(\.|$)")
        result = CliRunner().invoke(cli, list(expected.args), env=env)
    return result, list(caught)


def table(prefix: str, rows: list) -> list:
    return [pytest.param(*row.values, id=f"{prefix}-{row.id}", marks=row.marks) for row in rows]


@pytest.mark.parametrize(
    "expected",
    table("expr", EXPRESSIONS)
    + table("value", ASSIGNMENTS)
    + table("spec", SPECS)
    + table("model", MODELS)
    + table("csv", CSVS)
    + table("output", OUTPUTS)
    + table("odd", ODD),
)
def test_hostile_input(expected: Case, tmp_path: Path, monkeypatch, model_text: str) -> None:
    monkeypatch.chdir(tmp_path)
    make_files(tmp_path, expected.files, model_text)
    before = sorted(p.name for p in tmp_path.iterdir())
    result, caught = invoke(expected)
    check(result, expected, caught)
    if expected.status != 0:  # a refused input leaves no file behind, half-written or not
        assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root")
def test_unwritable_folder_is_bad_input(tmp_path: Path, monkeypatch) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    monkeypatch.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, ["draw", "a", "a=1", "-o", "locked/a.dot"])
    finally:
        locked.chmod(0o700)
    check(result, Case((), 2, "Permission denied"))


def test_traceback_only_when_asked() -> None:
    quiet = CliRunner().invoke(cli, ["draw", "a.b"])
    assert quiet.exit_code == 2 and isinstance(quiet.exception, SystemExit)
    loud = CliRunner().invoke(cli, ["--traceback", "draw", "a.b"])
    assert isinstance(loud.exception, ExpressionError)  # raised, so Python prints it
    env = CliRunner().invoke(cli, ["draw", "a.b"], env={"GRADVIZ_TRACEBACK": "1"})
    assert isinstance(env.exception, ExpressionError)


def test_runtime_failures_are_status_1_and_other_outputs_still_written(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        cli,
        ["draw", "a*b", "a=1", "b=2", "-o", "g.svg", "-o", "g.dot"],
        env={"GRADVIZ_DOT": "none"},
    )
    check(result, Case((), 1, "GRADVIZ_DOT=none switched Graphviz off, so SVG"))
    assert (tmp_path / "g.dot").is_file() and not (tmp_path / "g.svg").exists()
    assert "wrote g.dot" in result.stderr
    many = " + ".join(f"x{i}*y{i}" for i in range(200))
    result = CliRunner().invoke(cli, ["draw", many, "-f", "mermaid"])
    check(result, Case((), 1, "Mermaid refuses more than 500"))


def _strict_json(text: str) -> object:
    """JSON as RFC 8259 has it: a bare NaN or Infinity is an error, not a number."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"non-standard JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


def _strings(value: object) -> set[str]:
    if isinstance(value, dict):
        return set().union(*(_strings(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_strings(v) for v in value)) if value else set()
    return {value} if isinstance(value, str) else set()


def test_json_outputs_stay_valid_json_with_non_finite_numbers_as_strings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    drawn = CliRunner().invoke(cli, ["draw", "a*b + c", "a=nan", "b=inf", "c=-inf", "-f", "json"])
    assert drawn.exit_code == 0, drawn.output
    nodes = {n["label"]: n for n in _strict_json(drawn.stdout)["nodes"]}  # type: ignore[index]
    assert (nodes["a"]["data"], nodes["b"]["data"], nodes["c"]["data"]) == ("nan", "inf", "-inf")
    diverging = ["circle", "--activation", "relu", "--output-activation", "linear", "--lr", "1e6"]
    trained = CliRunner().invoke(
        cli, ["train", *diverging, "--epochs", "3", "--keep-going", "--json", "--save", "m.json"]
    )
    assert trained.exit_code == 0, trained.output
    assert _strings(_strict_json(trained.stdout)) & {"nan", "inf", "-inf"}
    saved = _strict_json((tmp_path / "m.json").read_text())
    assert _strings(saved) & {"nan", "inf", "-inf"}
    # and reading it back shows the NaN weights (the file says training diverged)
    inspected = CliRunner().invoke(cli, ["inspect", "m.json", "--json"])
    assert inspected.exit_code == 0, inspected.output
    assert _strings(_strict_json(inspected.stdout)) & {"nan", "inf", "-inf"}


def test_a_file_name_with_escapes_reaches_no_page_or_picture_raw(tmp_path, monkeypatch, model_text):
    """The terminal escaped it; the report page's title and heading, and the plots' titles,
    held the ESC raw (issue 23, point 10)."""
    monkeypatch.chdir(tmp_path)
    name = "\x1b[31mevil\x1b]0;pwned\x07.json"
    (tmp_path / name).write_text(model_text)
    args = ["inspect", name, "-o", "r.html", "--curves", "c.svg", "--boundary", "b.svg"]
    result, caught = invoke(Case(tuple(args), 0, ""))
    assert result.exit_code == 0 and not caught, result.stderr
    for written in ("r.html", "c.svg", "b.svg"):
        data = (tmp_path / written).read_bytes()
        assert b"\x1b" not in data and b"\x07" not in data, written
    assert "<title>gradviz report: \\x1b[31mevil" in (tmp_path / "r.html").read_text()
