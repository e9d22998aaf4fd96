"""Text → graph: a small Python-like expression language, safe by allow-list.

    e = a*b; d = e + c; L = d*f

Statements are separated by `;` or newlines; `NAME = expression` names a result (its node
is labelled NAME), `NAME = 2.5` makes a leaf, the last statement is the output. Names used
but never assigned are leaves, valued from `values` (the CLI's `a=2`) or by a reproducible
default drawn from `seed`. The text is parsed with `ast.parse` (never compiled or
evaluated) and walked iteratively against tables of node types, operators and functions;
anything else is refused by name, with the culprit's span for a caret. Sizes that cost
time or memory are capped before Python's parser sees the text (`MAX_LENGTH` ...). The
engine computes in floating point: `2**100000` is `inf`, not a huge integer.

Decisions worth knowing:
- A name is assigned at most once, and only after its last use as a leaf (a leaf that
  later becomes a result is always a typo; Python would raise NameError).
- `pi` and `e` are constants unless assigned or given a value (`e = a*b` is fine).
- Identifiers are NFKC-normalised as Python does (`ｅｘｐ(x)` is `exp(x)`); messages quote
  the name as written; `ｅｖａｌ(1)` is an unknown function like any other.
- Constant arithmetic is drawn, not folded: `x**(1/2)` is the general power of `1 ÷ 2`,
  while `x**0.5`, `x**-1` (a plain, optionally signed number) use the constant power.
- A named result that the output does not use is allowed and not drawn.
"""

from __future__ import annotations

import ast
import itertools
import math
import operator
import re
import unicodedata
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from gradviz.engine import Constant, Value, apply, as_data
from gradviz.errors import ExpressionError, InputError, OptionWords, listing, quoted, shortened
from gradviz.errors import keyword as option_keyword
from gradviz.numbers import fmt
from gradviz.ops import POW, UNARY_OPS, power_op

MAX_LENGTH = 10_000  # characters in an expression: far beyond any readable diagram
# Nesting levels: open brackets plus chained signs and powers (`--x`, `a**b**c`); Python's
# own parser gives up at 200 brackets and ~3000 levels.
MAX_DEPTH = 100
MAX_NODES = 2_000  # names, numbers and operators in the whole text
MAX_STATEMENTS = 500
MAX_NUMBER_LENGTH = 100  # characters in a number (Python refuses ints of over 4300 digits)
MAX_NAME_LENGTH = 100  # characters in a name: it becomes a label in every diagram
# Largest |n| of a constant exponent `x**n` (the op is labelled `**n`): any larger power of
# a number other than ±1 is 0 or inf anyway.
MAX_EXPONENT = 1_000_000.0

FUNCTIONS = tuple(sorted(UNARY_OPS))  # what an expression may call: the one-input ops
# Used where the expression neither assigns the name nor gets a value for it.
CONSTANTS = {"pi": math.pi, "e": math.e}

_FUNCTION_LIST = ", ".join(FUNCTIONS)
_SPLIT_HINT = "split it into named steps, e.g. t = a*b; y = tanh(t) + c"
_ASSIGN_HINT = "write NAME = expression, e.g. t = a*b"

# Arithmetic the language allows, as the engine's Python operators (Value handles floats).
_BINARY: dict[type[ast.operator], Callable[[object, object], object]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}

# Operators refused by name: (what it is, the symbol to put a caret under, what to do instead).
_ONLY = "only + - * / ** and functions are supported"
_REFUSED_BINARY: dict[type[ast.operator], tuple[str, str, str]] = {
    ast.FloorDiv: ("floor division (//)", "//", "use / for division"),
    ast.Mod: ("the modulo operator (%)", "%", _ONLY),
    ast.MatMult: ("matrix multiplication (@)", "@", "use * to multiply numbers"),
    ast.BitXor: ("the bitwise operator ^", "^", "use ** for powers: x**2"),
    ast.BitAnd: ("the bitwise operator &", "&", _ONLY),
    ast.BitOr: ("the bitwise operator |", "|", _ONLY),
    ast.LShift: ("the shift operator <<", "<<", "use * and ** instead: x * 2**n"),
    ast.RShift: ("the shift operator >>", ">>", "use / and ** instead: x / 2**n"),
}

# Expression kinds refused by name: (message, what to do instead).
_PIECEWISE = "use relu(x) or abs(x) for piecewise functions"
_ONE_NUMBER = "each leaf is one number; separate statements with ; or a newline"
_NUMBERS_ONLY = "expressions compute numbers only"
_REFUSED_EXPR: dict[type[ast.AST], tuple[str, str]] = {
    ast.Attribute: (
        "attribute access (.name) is not supported",
        "call the functions directly: exp(x), not math.exp(x)",
    ),
    ast.Subscript: ("subscripts ([...]) are not supported", _ONE_NUMBER),
    ast.Slice: ("slices are not supported", _ONE_NUMBER),
    ast.Lambda: (
        "lambda functions are not supported",
        "name intermediate results instead: t = a*b; y = t + c",
    ),
    **dict.fromkeys(
        (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp),
        ("comprehensions are not supported", "write the terms out: a + b + c"),
    ),
    ast.JoinedStr: ("f-strings are not supported", _NUMBERS_ONLY),
    ast.NamedExpr: (
        "the walrus operator (:=) is not supported",
        "name a result with a statement: t = a*b; y = t + c",
    ),
    ast.Compare: ("comparisons are not supported", _PIECEWISE),
    ast.BoolOp: ("boolean operators (and, or) are not supported", _PIECEWISE),
    ast.IfExp: ("conditional expressions (x if c else y) are not supported", _PIECEWISE),
    ast.List: ("lists are not supported", _ONE_NUMBER),
    ast.Tuple: ("tuples are not supported", _ONE_NUMBER),
    ast.Set: ("sets are not supported", _ONE_NUMBER),
    ast.Dict: ("dicts are not supported", _ONE_NUMBER),
    ast.Starred: ("starred expressions (*x) are not supported", _ONE_NUMBER),
    ast.Await: ("await is not supported", _NUMBERS_ONLY),
    **dict.fromkeys((ast.Yield, ast.YieldFrom), ("yield is not supported", _NUMBERS_ONLY)),
}

# Constants refused by kind (bool before the numbers it is one of): (kind, what, what to do).
_REFUSED_CONSTANTS = (
    (bool, "booleans", "use 1 or 0"),
    (str | bytes, "strings", _NUMBERS_ONLY),
    (complex, "complex numbers", "use real numbers only"),
)

# Statements refused by name, most by their keyword ("return statements are not
# supported"); any other kind: "<Kind> statements are not supported".
_BY_KEYWORD = (ast.Return, ast.If, ast.Raise, ast.Try, ast.Assert, ast.Global, ast.Nonlocal)
_BY_KEYWORD += (ast.Pass, ast.Break, ast.Continue, ast.Match)
_STATEMENT_NAMES: dict[type[ast.stmt], str] = {
    **{kind: f"{kind.__name__.lower()} statements are not supported" for kind in _BY_KEYWORD},
    **dict.fromkeys((ast.Import, ast.ImportFrom), "import statements are not supported"),
    **dict.fromkeys((ast.With, ast.AsyncWith), "with statements are not supported"),
    ast.Delete: "del statements are not supported",
    **dict.fromkeys((ast.For, ast.AsyncFor), "for loops are not supported"),
    ast.While: "while loops are not supported",
    **dict.fromkeys(
        (ast.FunctionDef, ast.AsyncFunctionDef), "function definitions are not supported"
    ),
    ast.ClassDef: "class definitions are not supported",
    ast.AugAssign: "augmented assignment (+=, -=, ...) is not supported",
    ast.AnnAssign: "annotated assignment (name: type = ...) is not supported",
}

# Characters people paste from maths text, and what to type instead.
_LOOKALIKE_HINTS = {
    **dict.fromkeys("×·", "use * for multiplication"),
    "÷": "use / for division",
    **dict.fromkeys("−–", "use the ASCII minus sign -"),
    "²": "use ** for powers: x**2",
    "³": "use ** for powers: x**3",
    "√": "use sqrt(x)",
}

_SURROGATE = re.compile("[\ud800-\udfff]")

# Keywords that nest in Python's parser like a prefix operator does.
_PREFIX_KEYWORDS = frozenset({"not", "lambda", "await", "else"})


@dataclass
class Program:
    """A parsed expression: its graph, evaluated forward (no backward pass), and its names."""

    source: str  # the text as parsed (newlines as \n): error offsets index into it
    output: Value  # the last statement's value
    names: dict[str, Value]  # every named node, in order of first appearance
    leaves: dict[str, Value]  # the named leaves only, in the same order
    defaults: dict[str, float]  # leaves that got a default value: none was given
    seed: int
    # The output's name from the last statement (`y` in `t = a*b; y = t`, `L` in `L = x; L`),
    # None for an unnamed expression; an op node output is labelled so.
    output_name: str | None = None


def parse_program(
    text: str, values: Mapping[str, float] | None = None, *, seed: int = 0
) -> Program:
    """Parse `text` into a graph, with leaf values from `values`, else defaults from `seed`.
    ExpressionError (with a span) for what the language refuses, InputError for values."""
    if not isinstance(text, str):
        raise InputError(f"an expression is text, not {type(text).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"the seed must be a whole number >= 0, got {quoted(seed)}")
    if len(text) > MAX_LENGTH:
        message = f"expression too long: {len(text)} characters (the limit is {MAX_LENGTH})"
        raise InputError(message, hint="build bigger graphs in Python with gradviz.Value")
    source = text.replace("\r\n", "\n").replace("\r", "\n")
    given = _normalise_values(values or {})
    _scan(source)
    positions, module = _parse_module(source)
    return _Compiler(source, positions, given).run(module, seed)


def parse(text: str, **values: float) -> Value:
    """The output Value of an expression, `parse("(a+b)*c", a=2, b=-3, c=10)` (defaults of
    seed 0 for leaves without a value; no backward pass)."""
    return parse_program(text, values).output


def parse_assignments(args: Sequence[str]) -> dict[str, float]:
    """`["a=2", "b=-3e-2"]` → `{"a": 2.0, "b": -0.03}` (the CLI's NAME=VALUE arguments), names
    NFKC-normalised like the expression's; `nan` and `inf` are accepted."""
    result: dict[str, float] = {}
    for arg in args:
        name_text, sep, value_text = arg.partition("=")
        name = unicodedata.normalize("NFKC", name_text.strip())
        start = len(name_text) - len(name_text.lstrip())
        end = max(len(name_text.rstrip()), start + 1)
        value_start = len(name_text) + 1 + len(value_text) - len(value_text.lstrip())
        try:
            value = float(value_text.strip())
        except ValueError:
            value = None
        problem = None  # (message, start, end, hint)
        if not sep:
            message = f"expected NAME=VALUE, got {quoted(arg)}"
            problem = (message, 0, len(arg), "give leaf values as a=2 b=-3")
        elif len(name) > MAX_NAME_LENGTH:
            message = f"name too long: {len(name)} characters (the limit is {MAX_NAME_LENGTH})"
            problem = (message, start, end, "use a shorter name")
        elif not name.isidentifier() or name.startswith("__"):
            hint = "names are letters, digits and _, e.g. a=2 or x1=0.5"
            problem = (f"{quoted(name_text.strip())} is not a usable name", start, end, hint)
        elif value is None:
            message = f"the value for {name} is not a number: {quoted(value_text.strip())}"
            hint = "write a decimal number such as 2, -0.5 or 1e-3"
            problem = (message, value_start, len(arg), hint)
        elif name in result:
            problem = (f"{name} is given twice", start, end, "give each leaf one value")
        if problem is not None:
            message, at, to, hint = problem
            raise ExpressionError(message, source=arg, start=at, end=to, hint=hint)
        result[name] = value
    return result


def describe_defaults(program: Program, words: OptionWords = option_keyword) -> str | None:
    """One line saying which leaves got default values, and how to choose them instead
    (`words` names the seed option: `--seed` in the CLI)."""
    if not program.defaults:
        return None
    items = list(program.defaults.items())
    them = "it" if len(items) == 1 else "them"
    how = f"(set {them} as {items[0][0]}=VALUE, or change {them} with {words('seed')} N)"
    used = ", ".join(f"{name}={fmt(value)}" for name, value in items[:MAX_DEFAULTS_SHOWN])
    if len(items) <= MAX_DEFAULTS_SHOWN:
        return f"no value given for {', '.join(program.defaults)}: used {used} {how}"
    # One line, not one per leaf: 300 leaves would otherwise make a 12 KB line.
    rest = len(items) - MAX_DEFAULTS_SHOWN
    return f"no value given for {len(items)} leaves: used {used}, … and {rest} more {how}"


MAX_DEFAULTS_SHOWN = 10  # leaves listed by name in the default-values note


# -- before Python's parser ---------------------------------------------------------------


def _scan(source: str) -> None:
    """Enforce MAX_DEPTH, MAX_NODES and MAX_NUMBER_LENGTH before `ast.parse`, whose own
    limits surface as RecursionError or MemoryError: a rough linear tokenizer."""

    def fail(message: str, start: int, end: int | None, hint: str) -> ExpressionError:
        return ExpressionError(message, source=source, start=start, end=end, hint=hint)

    if "\0" in source:
        hint = "remove control characters from the text"
        raise fail("the expression contains a NUL character", source.index("\0"), None, hint)
    surrogate = _SURROGATE.search(source)  # bytes that were not UTF-8, via surrogateescape
    if surrogate:
        code = f"U+{ord(surrogate.group()):04X}"
        message = f"the expression contains a character that is not text ({code})"
        raise fail(message, surrogate.start(), None, "save the text as UTF-8")
    chains = [0]  # per open bracket: signs and ** chained at that level
    depth = 0  # open brackets + sum(chains)
    count = 0  # operands and operators
    operand = False  # was the last token an operand (so + and - are binary)?
    i, n = 0, len(source)

    def deeper(start: int, end: int, bracket: bool = False) -> None:
        nonlocal depth
        depth += 1
        if bracket:
            chains.append(0)
        else:
            chains[-1] += 1
        if depth > MAX_DEPTH:
            levels = f"more than {MAX_DEPTH} levels of brackets, signs and powers"
            raise fail(f"expression nested too deeply ({levels})", start, end, _SPLIT_HINT)

    def counted(start: int, end: int) -> None:
        nonlocal count
        count += 1
        if count > MAX_NODES:
            message = f"expression too large (more than {MAX_NODES} names, numbers and operators)"
            raise fail(message, start, end, "build bigger graphs in Python with gradviz.Value")

    while i < n:
        c = source[i]
        j = i + 1  # where the token ends
        if c in " \t\f\\":
            pass
        elif c == "#":
            end = source.find("\n", i)
            j = n if end == -1 else end
        elif c in "'\"":
            j = _skip_string(source, i)
            counted(i, j)
            operand = True
        elif c.isdigit() or (c == "." and j < n and source[j].isdigit()):
            j = _NUMBER.match(source, i).end()
            if j - i > MAX_NUMBER_LENGTH:
                message = f"number too long: {j - i} characters (the limit is {MAX_NUMBER_LENGTH})"
                hint = "write big or precise numbers in scientific notation, e.g. 1.5e300"
                raise fail(message, i, j, hint)
            counted(i, j)
            operand = True
        elif c == "_" or c.isalpha() or ord(c) > 127:
            while j < n and (source[j] == "_" or source[j].isalnum() or ord(source[j]) > 127):
                j += 1
            counted(i, j)
            word = source[i:j]
            if word in _PREFIX_KEYWORDS:
                deeper(i, j)
                operand = False
            else:
                operand = word not in ("and", "or", "if", "in", "is")
        elif c in "([{":
            deeper(i, j, bracket=True)
            operand = False
        elif c in ")]}":
            if len(chains) > 1:
                depth -= 1 + chains.pop()
            operand = True
        elif source.startswith("**", i) or (c in "+-~" and not operand):
            j = i + (2 if c == "*" else 1)

            deeper(i, j)
            counted(i, j)
            operand = False
        else:  # a separator, binary operator or stray character ends the chain
            if c not in "\n;" or len(chains) == 1:  # (a newline inside brackets does not)
                depth -= chains[-1]
                chains[-1] = 0
            if c in "+-*/%@&|^<>=":
                counted(i, j)
            operand = False
        i = j


def _skip_string(source: str, i: int) -> int:
    """The index after the string literal starting at i (or the end of its line)."""
    quote = source[i] * 3 if source.startswith(source[i] * 3, i) else source[i]
    j = i + len(quote)
    while j < len(source):
        c = source[j]
        if c == "\\":
            j += 2
        elif source.startswith(quote, j):
            return j + len(quote)
        elif c == "\n" and len(quote) == 1:
            return j
        else:
            j += 1
    return len(source)


# A number literal, as far as Python's tokenizer would read it into one (`1_000`, `2.5e-3`,
# `0x1F`, `3j`, and `2x`, a malformed one): word characters and dots, and a sign after e.
_NUMBER = re.compile(r"0[xX][\w.]*|(?:[\w.]|(?<=[eE])[+-])*")


class _Positions:
    """Character offsets into the source for the (line, column) pairs Python reports: ast
    counts UTF-8 bytes, SyntaxError characters, both in the text as parsed (dedented)."""

    def __init__(self, source: str, removed: list[int]) -> None:
        self.lines = source.split("\n")
        self.removed = removed
        self.starts = [0, *itertools.accumulate(len(line) + 1 for line in self.lines[:-1])]

    def _line(self, lineno: int | None) -> int:
        return min(max((lineno or 1) - 1, 0), len(self.lines) - 1)

    def from_chars(self, lineno: int | None, column: int) -> int:
        index = self._line(lineno)
        return self.starts[index] + self.removed[index] + max(column, 0)

    def from_bytes(self, lineno: int | None, column: int) -> int:
        index = self._line(lineno)
        parsed_line = self.lines[index][self.removed[index] :]
        chars = len(parsed_line.encode("utf-8")[: max(column, 0)].decode("utf-8", "ignore"))
        return self.starts[index] + self.removed[index] + chars

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.from_bytes(node.lineno, node.col_offset)
        end_col = getattr(node, "end_col_offset", None)
        end = start + 1 if end_col is None else self.from_bytes(node.end_lineno, end_col)
        return start, max(end, start + 1)


def _dedent(source: str) -> tuple[str, list[int]]:
    """The text to parse without the indentation its code lines share (a multi-line shell
    string is usually indented), and the characters removed per line."""
    lines = source.split("\n")
    code = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    indents = [line[: len(line) - len(line.lstrip(" \t"))] for line in code]
    common = indents[0] if indents else ""
    for indent in indents[1:]:
        while not indent.startswith(common):
            common = common[:-1]
    removed = [
        len(common) if line.startswith(common) else len(line) - len(line.lstrip(" \t"))
        for line in lines
    ]
    return "\n".join(line[cut:] for line, cut in zip(lines, removed, strict=True)), removed


def _parse_module(source: str) -> tuple[_Positions, ast.Module]:
    """`ast.parse` with every way it can fail turned into an ExpressionError."""
    parsed, removed = _dedent(source)
    positions = _Positions(source, removed)
    try:
        # Python warns on stderr about some texts it accepts (`1 is 1`, `'\\d'`, `0x1for`);
        # a library must not print, and we refuse or report those texts ourselves.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            module = ast.parse(parsed, mode="exec")
    except SyntaxError as error:
        raise _syntax_error(source, positions, error) from None
    except (RecursionError, MemoryError):
        message, end = "expression nested too deeply for Python's parser", source.find("\n")
        end = len(source) if end == -1 else end
        raise ExpressionError(message, source=source, start=0, end=end, hint=_SPLIT_HINT) from None
    except ValueError as error:  # e.g. integer digit limits in some Python versions
        raise ExpressionError(
            f"cannot read the expression: {error}", source=source, start=0, hint=_SPLIT_HINT
        ) from None
    return positions, module


def _syntax_error(source: str, positions: _Positions, error: SyntaxError) -> ExpressionError:
    """Python's SyntaxError, at its position, in our words where Python's would mislead."""
    message = error.msg or "invalid syntax"
    start = positions.from_chars(error.lineno, (error.offset or 1) - 1)
    end = None
    if error.end_offset and (error.end_lineno or error.lineno) == error.lineno:
        end = positions.from_chars(error.lineno, error.end_offset - 1)
    hint = "expressions look like: (a + b) * c, or: e = a*b; L = tanh(e)"
    before = source[:start].rstrip(" \t")
    here = source[start : start + 1]
    if "Perhaps you forgot a comma" in message or (
        message == "invalid syntax"
        and before[-1:].isalnum() | (before[-1:] in "_)")
        and here.isalnum() | (here in "_(")
        and before.strip() != ""
    ):
        message = "an operator is missing"
        hint = "write a*b for a product; separate statements with ; or a newline"
    elif message.startswith("invalid") and message.endswith("literal"):
        while start > 0 and (source[start - 1].isalnum() or source[start - 1] in "._"):
            start -= 1
        end = start
        while end < len(source) and (source[end].isalnum() or source[end] in "._"):
            end += 1
        literal = source[start:end]  # `2x` gets a hint with its own names, `2e`, `0x` none
        digits = len(literal) - len(literal.lstrip("0123456789."))
        name = literal[digits:]
        plain = digits and name.isidentifier() and name[0] not in "eEjJxXoObB_"
        hint = (
            f"to multiply, write {literal[:digits]}*{name}" if plain else "to multiply, write 2*x"
        )
    elif isinstance(error, IndentationError):
        line_start = source.rfind("\n", 0, start) + 1
        line = source[line_start:].split("\n", 1)[0]
        start, end = line_start, line_start + len(line) - len(line.lstrip())
        hint = "start every statement at the same column"
    elif "cannot assign to" in message or "Maybe you meant '=='" in message:
        message = "only a name can be assigned"
        hint = _ASSIGN_HINT
    elif "too many nested parentheses" in message:
        message = "expression nested too deeply for Python's parser"
        hint = _SPLIT_HINT
    elif message.startswith("invalid character"):
        char = source[start] if start < len(source) else ""
        hint = _LOOKALIKE_HINTS.get(char, hint)
    elif "Exceeds the limit" in message:
        message = "number too long"
        hint = "write big or precise numbers in scientific notation, e.g. 1.5e300"
    prefix = "" if message.startswith("expression nested") else "syntax error: "
    return ExpressionError(f"{prefix}{message}", source=source, start=start, end=end, hint=hint)


# -- the allow-list walk ------------------------------------------------------------------


def _normalise_values(values: Mapping[str, object]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in values.items():
        name = unicodedata.normalize("NFKC", str(key))
        if name in result:
            raise InputError(f"a value for {name} is given twice ({quoted(key)} is the same name)")
        wrong = f"the value for {name} must be a number, got {type(value).__name__}"
        if isinstance(value, bool):  # Value(True) is 1.0 (micrograd), a=True a slip
            raise InputError(wrong)
        try:
            result[name] = as_data(value)
        except TypeError:
            raise InputError(wrong) from None
    return result


# Postfix code for one expression: ("num", float) ("name", str) ("neg", None)
# ("bin", ast operator type) ("powc", float) ("call", function name).
_Code = list[tuple[str, object]]


class _Compiler:
    """Checks a module against the allow-list and builds its graph, statement by statement."""

    def __init__(self, source: str, positions: _Positions, given: dict[str, object]) -> None:
        self.source = source
        self.positions = positions
        self.given = given
        self.assigned_anywhere: set[str] = set()
        self.assigned: set[str] = set()  # names whose assignment has been compiled
        self.target: str | None = None  # the name the current statement assigns
        self.first_seen: dict[str, int] = {}  # name -> offset of first appearance
        self.free: list[str] = []  # leaves that only the values or defaults can set
        self.number_leaves: dict[str, float] = {}  # `a = 2`
        self.positive: set[str] = set()  # leaves whose default should be > 0 (log, sqrt, ...)
        self.nodes: dict[str, Value] = {}  # every name's node, filled as statements run

    # -- errors --

    def fail(self, node: ast.AST, message: str, hint: str | None = None) -> ExpressionError:
        start, end = self.positions.span(node)
        return ExpressionError(message, source=self.source, start=start, end=end, hint=hint)

    def written(self, node: ast.Name) -> str:
        """The name as the user typed it, with Python's reading when NFKC changed it."""
        start, end = self.positions.span(node)
        text = self.source[start:end]
        return node.id if text == node.id else f"{text} (read as {node.id})"

    # -- the program --

    def run(self, module: ast.Module, seed: int) -> Program:
        body = module.body
        if not body:
            hint = "write something like (a + b) * c"
            raise ExpressionError("the expression is empty", source=self.source, start=0, hint=hint)
        if len(body) > MAX_STATEMENTS:
            message = f"too many statements: {len(body)} (the limit is {MAX_STATEMENTS})"
            hint = "build bigger graphs in Python with gradviz.Value"
            raise self.fail(body[MAX_STATEMENTS], message, hint)
        assignments = [s for s in body if isinstance(s, ast.Assign)]
        targets = [target for statement in assignments for target in statement.targets]
        self.assigned_anywhere = {target.id for target in targets if isinstance(target, ast.Name)}

        compiled = [
            self.compile_statement(statement, last=index == len(body) - 1)
            for index, statement in enumerate(body)
        ]
        self.check_values()
        defaults = self.make_leaves(seed)

        output: Value | None = None
        for target, code in compiled:
            result = _execute(code, self.nodes)
            node = result if isinstance(result, Value) else Value(result)
            if target is not None:
                if target in self.number_leaves:
                    node = self.nodes[target]
                elif node.op is not None and node.label is None:
                    node.label = target
                # else `b = a`: a second name for a node, which keeps its first label
                self.nodes[target] = node
            output = node
        assert output is not None  # a module with statements yields one
        output_name = compiled[-1][0]
        last = body[-1]
        if output_name is None and isinstance(last, ast.Expr) and isinstance(last.value, ast.Name):
            output_name = last.value.id if last.value.id in self.assigned else None
        if output_name is not None and output.op is not None:
            # `t = a*b; y = t`: the output is called y in every view. Nothing drawn uses
            # the output, so t's other uses (not drawn) lose nothing. A leaf keeps its name.
            output.label = output_name
        order = sorted(self.first_seen, key=self.first_seen.__getitem__)
        names = {name: self.nodes[name] for name in order}
        leaf_names = {*self.free, *self.number_leaves}
        leaves = {name: node for name, node in names.items() if name in leaf_names}

        return Program(self.source, output, names, leaves, defaults, seed, output_name)

    def compile_statement(self, statement: ast.stmt, last: bool) -> tuple[str | None, _Code]:
        """The name a statement assigns (None for a bare expression) and its code."""
        self.target = None
        if isinstance(statement, ast.Expr):
            if not last:
                raise self.fail(
                    statement,
                    "this statement's value is never used",
                    hint="name it (t = ...) and use the name later; only the last statement "
                    "can be a bare expression",
                )
            return None, self.compile_expr(statement.value)
        if not isinstance(statement, ast.Assign):
            unknown = f"{type(statement).__name__} statements are not supported"
            message = _STATEMENT_NAMES.get(type(statement), unknown)
            hint = _ASSIGN_HINT
            if isinstance(statement, ast.AugAssign):
                hint = "use a new name for the new value: a2 = a + 1"
            raise self.fail(statement, message, hint=hint)
        if len(statement.targets) != 1:
            message = "chained assignment (a = b = ...) is not supported"
            raise self.fail(statement.targets[1], message, hint="assign one name per statement")
        target = statement.targets[0]
        if not isinstance(target, ast.Name):
            raise self.fail(target, "only a name can be assigned", hint=_ASSIGN_HINT)
        name = self.read_name(target)
        if name in UNARY_OPS:
            message = f"{self.written(target)} is a function name and cannot be assigned"
            raise self.fail(target, message, hint="pick another name")
        if name in self.assigned:
            message = f"{self.written(target)} is assigned twice"
            raise self.fail(target, message, hint=f"give each result its own name: {name}2 = ...")
        self.target = name
        code = self.compile_expr(statement.value)
        self.assigned.add(name)
        if len(code) == 1 and code[0][0] == "num":
            self.number_leaves[name] = code[0][1]  # type: ignore[assignment]
        return name, code

    def read_name(self, node: ast.Name) -> str:
        """A name, checked, noted where it first appears (`Program.names` keeps that order)."""
        name = node.id
        if name.startswith("__"):
            message = f"dunder names ({self.written(node)}) are not supported"
            raise self.fail(node, message, hint="use plain names such as a, x1, w_2")
        if len(name) > MAX_NAME_LENGTH:
            message = f"name too long: {len(name)} characters (the limit is {MAX_NAME_LENGTH})"
            raise self.fail(node, message, hint="use a shorter name")
        self.first_seen.setdefault(name, self.positions.span(node)[0])
        return name

    def plain_number(self, node: ast.expr) -> float | None:
        """The value of a number literal, optionally signed, or of a constant; else None."""
        sign = 1.0
        while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            sign = -sign if isinstance(node.op, ast.USub) else sign
            node = node.operand
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, int | float):
                return None
            return sign * float(value)  # (MAX_NUMBER_LENGTH keeps an int within float range)
        if isinstance(node, ast.Name) and self.is_constant(node.id):
            return sign * CONSTANTS[node.id]
        return None

    def is_constant(self, name: str) -> bool:
        return name in CONSTANTS and name not in self.assigned_anywhere and name not in self.given

    def compile_expr(self, root: ast.expr) -> _Code:
        """`root`'s postfix code, checked against the allow-list outer nodes first, left to
        right. Iterative, so any depth Python parsed is fine."""
        code: _Code = []
        stack: list[tuple[ast.expr, tuple[str, object] | None]] = [(root, None)]
        while stack:
            node, emit = stack.pop()
            if emit is not None:
                code.append(emit)
                continue
            number = self.plain_number(node)
            if number is not None:
                code.append(("num", number))
            elif isinstance(node, ast.Name):
                code.append(("name", self.use_name(node)))
            elif isinstance(node, ast.BinOp):
                stack.extend(self.binop(node))
            elif isinstance(node, ast.UnaryOp):
                if isinstance(node.op, ast.UAdd):
                    stack.append((node.operand, None))
                elif isinstance(node.op, ast.USub):
                    stack.extend([(node, ("neg", None)), (node.operand, None)])
                elif isinstance(node.op, ast.Not):
                    raise self.fail(node, "boolean operators (not) are not supported", _PIECEWISE)
                else:
                    message = "the bitwise operator ~ is not supported"
                    raise self.fail(node, message, hint="use -x to negate")
            elif isinstance(node, ast.Call):
                name = self.check_call(node)
                argument = node.args[0]
                if UNARY_OPS[name].positive[0] and isinstance(argument, ast.Name):
                    self.positive.add(argument.id)
                stack.extend([(node, ("call", name)), (argument, None)])
            else:
                raise self.refuse(node)
        return code

    def binop(self, node: ast.BinOp) -> list[tuple[ast.expr, tuple[str, object] | None]]:
        kind = type(node.op)
        if kind not in _BINARY:
            what, symbol, hint = _REFUSED_BINARY.get(
                kind, (f"the operator {kind.__name__}", "", "use + - * / **")
            )
            raise self.fail_operator(node, symbol, f"{what} is not supported", hint)
        if kind is ast.Pow:
            exponent = self.plain_number(node.right)
            if exponent is not None:
                if not abs(exponent) <= MAX_EXPONENT:
                    # digit for digit (`-1000001`, not fmt's `-1e6`): not rounded onto the limit
                    whole = exponent.is_integer() and abs(exponent) < 1e18
                    exact = str(int(exponent)) if whole else repr(exponent)
                    raise self.fail(
                        node.right,
                        f"exponent too large: {exact} is outside "
                        f"{fmt(-MAX_EXPONENT)} to {fmt(MAX_EXPONENT)}",
                        hint="every power this large of a number other than ±1 is 0 or inf",
                    )
                if isinstance(node.left, ast.Name) and power_op(float(exponent)).positive[0]:
                    self.positive.add(node.left.id)
                return [(node, ("powc", exponent)), (node.left, None)]
            if isinstance(node.left, ast.Name) and POW.positive[0]:
                self.positive.add(node.left.id)
        return [(node, ("bin", kind)), (node.right, None), (node.left, None)]

    def fail_operator(self, node: ast.BinOp, symbol: str, message: str, hint: str) -> Exception:
        """An error under the operator itself, found between the operands."""
        _, left_end = self.positions.span(node.left)
        right_start, _ = self.positions.span(node.right)
        at = self.source.find(symbol, left_end, right_start) if symbol else -1
        if at == -1:
            return self.fail(node, message, hint)
        return ExpressionError(
            message, source=self.source, start=at, end=at + len(symbol), hint=hint
        )

    def use_name(self, node: ast.Name) -> str:
        name = self.read_name(node)
        if name in UNARY_OPS:
            message = f"{self.written(node)} is a function; call it with one argument"
            raise self.fail(node, message, hint=f"write {name}(x)")
        if name in self.assigned_anywhere and name not in self.assigned:
            if name == self.target:
                message = f"{self.written(node)} is used in its own definition"
                raise self.fail(node, message, hint=f"give the result a new name: {name}2 = ...")
            message = f"{self.written(node)} is used before it is assigned"
            hint = f"move the assignment {name} = ... above its first use"
            raise self.fail(node, message, hint)
        if name not in self.assigned and name not in self.free:
            self.free.append(name)
        return name

    def check_call(self, node: ast.Call) -> str:
        func = node.func
        if not isinstance(func, ast.Name):
            if type(func) in _REFUSED_EXPR:  # `(lambda: 1)()`, `a.b()`: refuse it by name
                raise self.refuse(func)
            message = "only functions can be called"
            raise self.fail(func, message, hint=f"the functions are: {_FUNCTION_LIST}")
        name = func.id
        if name.startswith("__"):
            self.read_name(func)  # refuses it
        if name not in UNARY_OPS:
            variable = name in self.assigned_anywhere or name in self.given or name in self.free
            if variable or name in CONSTANTS:
                message = f"{self.written(func)} is not a function"
                hint = f"write {name}*(...) to multiply; the functions are: {_FUNCTION_LIST}"
            else:
                message = f"unknown function {self.written(func)}"
                import difflib  # lazy: start-up (only for a mistyped name)

                close = difflib.get_close_matches(name, FUNCTIONS, n=1)
                suggestion = {"pow": "use x**y for powers", "ln": "use log(x)"}.get(name)
                if suggestion is None and close:
                    suggestion = f"did you mean {close[0]}?"
                if suggestion is None and len(name) == 1:
                    suggestion = f"to multiply, write {name}*(...)"
                hint = f"the functions are: {_FUNCTION_LIST}"
                hint = f"{suggestion} ({hint})" if suggestion else hint
            raise self.fail(func, message, hint=hint)
        one_argument = f"write {name}(x)"
        for keyword in node.keywords:
            what = "keyword arguments" if keyword.arg else "**kwargs arguments"
            raise self.fail(keyword, f"{what} are not supported", one_argument)
        for argument in node.args:
            if isinstance(argument, ast.Starred):
                message = "starred arguments (*args) are not supported"
                raise self.fail(argument, message, one_argument)
        if len(node.args) != 1:
            raise self.fail(node, f"{name} takes 1 argument, got {len(node.args)}", one_argument)
        return name

    def refuse(self, node: ast.AST) -> ExpressionError:
        """The error for an expression kind outside the allow-list, by name."""
        if isinstance(node, ast.Constant):
            value = node.value
            for kind, what, hint in _REFUSED_CONSTANTS:
                if isinstance(value, kind):
                    return self.fail(node, f"{what} are not supported", hint=hint)
            shown = "... (Ellipsis)" if value is Ellipsis else repr(value)
            return self.fail(node, f"{shown} is not supported", hint="use numbers and names")
        unknown = f"{type(node).__name__} expressions are not supported"
        message, hint = _REFUSED_EXPR.get(type(node), (unknown, "use + - * / ** and functions"))
        return self.fail(node, message, hint=hint)

    # -- values --

    def check_values(self) -> None:
        leaves = [*self.free, *self.number_leaves]
        for given in self.given:
            if given in leaves:
                continue
            name = shortened(given, 40)  # said twice below: a name may be 100 characters
            if given in self.assigned_anywhere:
                raise InputError(
                    f"a value was given for {name}, but the expression computes {name}",
                    hint="give values only to leaves: " + (listing(leaves) or "(there are none)"),
                )
            if given in UNARY_OPS:
                message = f"a value was given for {name}, which is a function"
                raise InputError(message, hint="the leaves are: " + (listing(leaves) or "(none)"))
            import difflib  # lazy: start-up (only for a mistyped name)

            close = difflib.get_close_matches(given, leaves, n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            hint += "the leaves are: " + (listing(leaves) or "(none)")
            message = f"a value was given for {name}, but {name} does not appear in the expression"
            raise InputError(message, hint=hint)

    def make_leaves(self, seed: int) -> dict[str, float]:
        """The leaf nodes get a given value, else their literal, else a default."""
        defaults = _default_values(
            [name for name in self.free if name not in self.given], self.positive, seed
        )
        values = {**defaults, **self.number_leaves, **self.given}  # the later wins
        for name in [*self.free, *self.number_leaves]:
            self.nodes[name] = Value(values[name], label=name)
        return defaults


# Defaults in tenths: -3.0 … 3.0 without 0 (nothing flows) and ±1 (hides a factor).
_DEFAULT_TENTHS = [k for k in range(-30, 31) if k not in (-10, 0, 10)]


def _default_values(names: list[str], positive: set[str], seed: int) -> dict[str, float]:
    """Short, distinct, non-zero values (one decimal, in [-3, 3]) drawn from `seed`
    (numpy's `default_rng(seed).permutation` of them, then repeats once they run out); a
    leaf that feeds log, sqrt or a fractional power directly gets a positive one."""
    if not names:  # every leaf has its value: no numpy to import
        return {}
    import numpy as np  # lazy: start-up (a graph whose leaves all have values needs none)

    tenths = np.array(_DEFAULT_TENTHS)
    rng = np.random.default_rng(seed)
    pool = [k / 10 for k in rng.permutation(tenths).tolist()]
    result: dict[str, float] = {}
    for name in names:
        wanted = next((v for v in pool if v > 0 or name not in positive), None)
        if wanted is None:  # more leaves than distinct values: repeat some
            wanted = float(rng.choice(tenths[tenths > 0])) / 10
            if name not in positive and rng.integers(2):
                wanted = -wanted
        else:
            pool.remove(wanted)
        result[name] = wanted
    return result


def _execute(code: _Code, nodes: dict[str, Value]) -> Value | float:
    """Run postfix code on the engine. Numbers stay floats until an op meets them, as in
    Python (`-2` is a number, `-a` a negation); two floats meet as a constant node and a
    float, so no arithmetic runs on Python numbers (`2**100000` is inf, not a huge int)."""
    stack: list[Value | float] = []
    for kind, arg in code:
        if kind == "num":
            stack.append(arg)  # type: ignore[arg-type]
        elif kind == "name":
            stack.append(nodes[arg])  # type: ignore[index]
        elif kind == "neg":
            top = stack.pop()
            stack.append(-top if isinstance(top, Value) else -float(top))
        elif kind == "powc":
            base = stack.pop()
            base = base if isinstance(base, Value) else Constant(base)
            stack.append(base ** float(arg))  # type: ignore[arg-type]
        elif kind == "call":
            stack.append(apply(UNARY_OPS[arg], stack.pop()))  # type: ignore[index]
        else:  # "bin"
            right = stack.pop()
            left = stack.pop()
            if not isinstance(left, Value) and not isinstance(right, Value):
                left = Constant(left)
            stack.append(_BINARY[arg](left, right))  # type: ignore[index]
    return stack.pop()
