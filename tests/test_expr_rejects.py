"""Every rejection the expression language makes, pinned: message, the span under the
caret, and the hint. This file is the list of what is deliberately unsupported; a change
to any of it should be a decision, made here."""

from __future__ import annotations

import pytest

from gradviz.errors import ExpressionError, InputError
from gradviz.expr import parse_program

FUNCTIONS = (
    "the functions are: abs, cos, detach, elu, exp, gelu, leaky_relu, log, relu, sigmoid, silu, "
    "sin, softplus, sqrt, tanh"
)

# (expression, message, text under the caret, hint (the start of it when it continues with
# the list of functions))
REJECTED = [
    (
        "a.b",
        "attribute access (.name) is not supported",
        "a.b",
        "call the functions directly: exp(x), not math.exp(x)",
    ),
    (
        "math.exp(x)",
        "attribute access (.name) is not supported",
        "math.exp",
        "call the functions directly: exp(x), not math.exp(x)",
    ),
    (
        "x.__class__",
        "attribute access (.name) is not supported",
        "x.__class__",
        "call the functions directly: exp(x), not math.exp(x)",
    ),
    (
        "x[0]",
        "subscripts ([...]) are not supported",
        "x[0]",
        "each leaf is one number; separate statements with ; or a newline",
    ),
    (
        "x[1:2]",
        "subscripts ([...]) are not supported",
        "x[1:2]",
        "each leaf is one number; separate statements with ; or a newline",
    ),
    (
        "lambda: 1",
        "lambda functions are not supported",
        "lambda: 1",
        "name intermediate results instead: t = a*b; y = t + c",
    ),
    (
        "[x for x in y]",
        "comprehensions are not supported",
        "[x for x in y]",
        "write the terms out: a + b + c",
    ),
    (
        "{x for x in y}",
        "comprehensions are not supported",
        "{x for x in y}",
        "write the terms out: a + b + c",
    ),
    (
        "{x: 1 for x in y}",
        "comprehensions are not supported",
        "{x: 1 for x in y}",
        "write the terms out: a + b + c",
    ),
    ("sum(x for x in y)", "unknown function sum", "sum", FUNCTIONS),
    ("f'{a}'", "f-strings are not supported", "f'{a}'", "expressions compute numbers only"),
    ("'s'", "strings are not supported", "'s'", "expressions compute numbers only"),
    ("b'x'", "strings are not supported", "b'x'", "expressions compute numbers only"),
    (
        "(y := 2)",
        "the walrus operator (:=) is not supported",
        "y := 2",
        "name a result with a statement: t = a*b; y = t + c",
    ),
    (
        "a < b",
        "comparisons are not supported",
        "a < b",
        "use relu(x) or abs(x) for piecewise functions",
    ),
    (
        "a == b",
        "comparisons are not supported",
        "a == b",
        "use relu(x) or abs(x) for piecewise functions",
    ),
    (
        "a and b",
        "boolean operators (and, or) are not supported",
        "a and b",
        "use relu(x) or abs(x) for piecewise functions",
    ),
    (
        "not a",
        "boolean operators (not) are not supported",
        "not a",
        "use relu(x) or abs(x) for piecewise functions",
    ),
    (
        "a if b else c",
        "conditional expressions (x if c else y) are not supported",
        "a if b else c",
        "use relu(x) or abs(x) for piecewise functions",
    ),
    ("a // b", "floor division (//) is not supported", "//", "use / for division"),
    (
        "a % b",
        "the modulo operator (%) is not supported",
        "%",
        "only + - * / ** and functions are supported",
    ),
    ("a @ b", "matrix multiplication (@) is not supported", "@", "use * to multiply numbers"),
    ("x ^ 2", "the bitwise operator ^ is not supported", "^", "use ** for powers: x**2"),
    (
        "a & b",
        "the bitwise operator & is not supported",
        "&",
        "only + - * / ** and functions are supported",
    ),
    (
        "a | b",
        "the bitwise operator | is not supported",
        "|",
        "only + - * / ** and functions are supported",
    ),
    ("a << 2", "the shift operator << is not supported", "<<", "use * and ** instead: x * 2**n"),
    ("a >> 2", "the shift operator >> is not supported", ">>", "use / and ** instead: x / 2**n"),
    ("~a", "the bitwise operator ~ is not supported", "~a", "use -x to negate"),
    ("tanh(x=1)", "keyword arguments are not supported", "x=1", "write tanh(x)"),
    ("tanh(*a)", "starred arguments (*args) are not supported", "*a", "write tanh(x)"),
    ("tanh(**a)", "**kwargs arguments are not supported", "**a", "write tanh(x)"),
    ("foo(1)", "unknown function foo", "foo", FUNCTIONS),
    ("pow(x, 2)", "unknown function pow", "pow", "use x**y for powers"),
    ("ln(x)", "unknown function ln", "ln", "use log(x)"),
    ("tanhh(x)", "unknown function tanhh", "tanhh", "did you mean tanh?"),
    ("tanh(1, 2)", "tanh takes 1 argument, got 2", "tanh(1, 2)", "write tanh(x)"),
    ("tanh()", "tanh takes 1 argument, got 0", "tanh()", "write tanh(x)"),
    ("a(2)", "unknown function a", "a", "to multiply, write a*(...)"),
    ("(a+b)(c)", "only functions can be called", "a+b", FUNCTIONS),
    ("pi(2)", "pi is not a function", "pi", "write pi*(...) to multiply"),
    (
        "__import__('os')",
        "dunder names (__import__) are not supported",
        "__import__",
        "use plain names such as a, x1, w_2",
    ),
    ("__x", "dunder names (__x) are not supported", "__x", "use plain names such as a, x1, w_2"),
    (
        "__builtins__",
        "dunder names (__builtins__) are not supported",
        "__builtins__",
        "use plain names such as a, x1, w_2",
    ),
    (
        "import os",
        "import statements are not supported",
        "import os",
        "write NAME = expression, e.g. t = a*b",
    ),
    (
        "from os import path",
        "import statements are not supported",
        "from os import path",
        "write NAME = expression, e.g. t = a*b",
    ),
    ("del a", "del statements are not supported", "del a", "write NAME = expression, e.g. t = a*b"),
    ("pass", "pass statements are not supported", "pass", "write NAME = expression, e.g. t = a*b"),
    (
        "x = 1; assert x",
        "assert statements are not supported",
        "assert x",
        "write NAME = expression, e.g. t = a*b",
    ),
    (
        "if a: b",
        "if statements are not supported",
        "if a: b",
        "write NAME = expression, e.g. t = a*b",
    ),
    (
        "for i in a: b",
        "for loops are not supported",
        "for i in a: b",
        "write NAME = expression, e.g. t = a*b",
    ),
    (
        "while a: b",
        "while loops are not supported",
        "while a: b",
        "write NAME = expression, e.g. t = a*b",
    ),
    (
        "with a: b",
        "with statements are not supported",
        "with a: b",
        "write NAME = expression, e.g. t = a*b",
    ),
    (
        "try: a\nexcept: b",
        "try statements are not supported",
        "try: a\nexcept: b",
        "write NAME = expression, e.g. t = a*b",
    ),
    (
        "def f(): pass",
        "function definitions are not supported",
        "def f(): pass",
        "write NAME = expression, e.g. t = a*b",
    ),
    (
        "class A: pass",
        "class definitions are not supported",
        "class A: pass",
        "write NAME = expression, e.g. t = a*b",
    ),
    (
        "return 1",
        "return statements are not supported",
        "return 1",
        "write NAME = expression, e.g. t = a*b",
    ),
    (
        "global a",
        "global statements are not supported",
        "global a",
        "write NAME = expression, e.g. t = a*b",
    ),
    (
        "raise a",
        "raise statements are not supported",
        "raise a",
        "write NAME = expression, e.g. t = a*b",
    ),
    ("ｅｖａｌ(1)", "unknown function ｅｖａｌ (read as eval)", "ｅｖａｌ", FUNCTIONS),
    ("ｏｐｅｎ('x')", "unknown function ｏｐｅｎ (read as open)", "ｏｐｅｎ", FUNCTIONS),
    ("True", "booleans are not supported", "True", "use 1 or 0"),
    ("None", "None is not supported", "None", "use numbers and names"),
    ("1j", "complex numbers are not supported", "1j", "use real numbers only"),
    ("...", "... (Ellipsis) is not supported", "...", "use numbers and names"),
    (
        "a, b",
        "tuples are not supported",
        "a, b",
        "each leaf is one number; separate statements with ; or a newline",
    ),
    (
        "[a, b]",
        "lists are not supported",
        "[a, b]",
        "each leaf is one number; separate statements with ; or a newline",
    ),
    (
        "{a}",
        "sets are not supported",
        "{a}",
        "each leaf is one number; separate statements with ; or a newline",
    ),
    (
        "{a: b}",
        "dicts are not supported",
        "{a: b}",
        "each leaf is one number; separate statements with ; or a newline",
    ),
    (
        "*a",
        "starred expressions (*x) are not supported",
        "*a",
        "each leaf is one number; separate statements with ; or a newline",
    ),
    ("await a", "await is not supported", "await a", "expressions compute numbers only"),
    ("yield a", "yield is not supported", "yield a", "expressions compute numbers only"),
    (
        "a = b = 1",
        "chained assignment (a = b = ...) is not supported",
        "b",
        "assign one name per statement",
    ),
    ("a, b = 1, 2", "only a name can be assigned", "a, b", "write NAME = expression, e.g. t = a*b"),
    ("a[0] = 1", "only a name can be assigned", "a[0]", "write NAME = expression, e.g. t = a*b"),
    (
        "a += 1",
        "augmented assignment (+=, -=, ...) is not supported",
        "a += 1",
        "use a new name for the new value: a2 = a + 1",
    ),
    (
        "a: float = 3",
        "annotated assignment (name: type = ...) is not supported",
        "a: float = 3",
        "write NAME = expression, e.g. t = a*b",
    ),
    ("a = 2; a = 3", "a is assigned twice", "a", "give each result its own name: a2 = ..."),
    ("t = a*b; t = t + 1", "t is assigned twice", "t", "give each result its own name: t2 = ..."),
    (
        "y = a*2; a = 3",
        "a is used before it is assigned",
        "a",
        "move the assignment a = ... above its first use",
    ),
    ("a = a + 1", "a is used in its own definition", "a", "give the result a new name: a2 = ..."),
    ("tanh + 1", "tanh is a function; call it with one argument", "tanh", "write tanh(x)"),
    ("exp = 3", "exp is a function name and cannot be assigned", "exp", "pick another name"),
    (
        "a; b",
        "this statement's value is never used",
        "a",
        "name it (t = ...) and use the name later;",
    ),
    (
        "x = 1 $ 2",
        "syntax error: invalid syntax",
        "$",
        "expressions look like: (a + b) * c, or: e = a*b; L = tanh(e)",
    ),
    ("2x", "syntax error: invalid decimal literal", "2x", "to multiply, write 2*x"),
    (
        "a b",
        "syntax error: an operator is missing",
        "b",
        "write a*b for a product; separate statements with ; or a newline",
    ),
    ("a − b", "syntax error: invalid character '−' (U+2212)", "−", "use the ASCII minus sign -"),
    ("a × b", "syntax error: invalid character '×' (U+00D7)", "×", "use * for multiplication"),
    ("x²", "syntax error: invalid character '²' (U+00B2)", "²", "use ** for powers: x**2"),
    ("", "the expression is empty", "", "write something like (a + b) * c"),
    (
        "a +",
        "syntax error: invalid syntax",
        "",
        "expressions look like: (a + b) * c, or: e = a*b; L = tanh(e)",
    ),
    (
        "(a",
        "syntax error: '(' was never closed",
        "(",
        "expressions look like: (a + b) * c, or: e = a*b; L = tanh(e)",
    ),
    (
        "a)",
        "syntax error: unmatched ')'",
        ")",
        "expressions look like: (a + b) * c, or: e = a*b; L = tanh(e)",
    ),
    (
        "x = 1\n  y = 2",
        "syntax error: unexpected indent",
        "  ",
        "start every statement at the same column",
    ),
    (
        "a\x00",
        "the expression contains a NUL character",
        "\x00",
        "remove control characters from the text",
    ),
    (
        "x**1e7",
        "exponent too large: 10000000 is outside -1e6 to 1e6",
        "1e7",
        "every power this large of a number other than ±1 is 0 or inf",
    ),
]


@pytest.mark.parametrize(("text", "message", "span", "hint"), REJECTED)
def test_rejected_with_message_caret_and_hint(text, message, span, hint):
    with pytest.raises(ExpressionError) as caught:
        parse_program(text)
    error = caught.value
    assert isinstance(error, InputError) and error.exit_code == 2
    assert error.message == message
    assert text[error.start : error.end] == span
    assert error.hint.startswith(hint)
    # The rendered error shows the line with the span underlined (plain short lines here;
    # wide characters, control characters and long lines: see test_expr.py).
    rendered = error.render().split("\n")
    assert rendered[0] == message and rendered[-1] == error.hint
    line_start = text.rfind("\n", 0, error.start) + 1
    line = text[line_start:].split("\n", 1)[0]
    if line.isascii() and line.isprintable():
        column = error.start - line_start
        width = max(1, min(error.end, line_start + len(line)) - error.start)
        assert rendered[1:3] == ["  " + line, "  " + " " * column + "^" * width]


def test_every_refusal_names_what_was_refused():
    # No row falls back to a generic "invalid" or an internal class name.
    for text, message, _, _ in REJECTED:
        assert "Expr" not in message and "ast." not in message, text


ATTACKS = [
    "__import__('os').system('touch {marker}')",
    "ｅｘｅｃ('open(\\'{marker}\\', \\'w\\')')",
    "ｏｐｅｎ('{marker}', 'w')",
    "[c for c in ().__class__.__base__.__subclasses__()]",
    "(lambda: open('{marker}', 'w'))()",
    "getattr(x, 'y')",
    "exec('open(\\'{marker}\\', \\'w\\')')",
    "globals()",
    "breakpoint()",
    "x = 1\nimport os",
    "t = 1; del t",
    "a.b.c.d",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_code_execution_attempts_are_refused_and_nothing_runs(attack, tmp_path, monkeypatch):
    import builtins

    def forbidden(*args, **kwargs):
        raise AssertionError("user text reached eval/exec")

    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    marker = tmp_path / "pwned"
    with pytest.raises(ExpressionError):
        parse_program(attack.format(marker=marker))
    assert not marker.exists()
