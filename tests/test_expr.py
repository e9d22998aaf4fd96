"""The expression language: graphs built from text, leaf values and defaults, positions,
limits, and property tests (random text only ever raises our errors; generated
expressions build the same graph as Python code on Values and have correct gradients)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import gradviz
from gradviz import expr
from gradviz.cli import flag
from gradviz.engine import POW, UNARY_OPS, Graph, Value, topological_order
from gradviz.errors import ExpressionError, InputError
from gradviz.expr import describe_defaults, parse, parse_assignments, parse_program

# numpy warns about the inf and nan we compute on purpose; pytest would re-enable them.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

HAND = "e = a*b; d = e + c; L = d*f"
HAND_VALUES = {"a": 2, "b": -3, "c": 10, "f": -2}


def grads(program: expr.Program) -> dict[str, float]:
    program.output.backward()
    return {name: node.grad for name, node in program.leaves.items()}


# -- the hand-derived example ----------------------------------------------------------------


def test_hand_example_data_and_gradients():
    # e = a*b = -6, d = e + c = 4, L = d*f = -8.
    # dL/dd = f = -2, dL/dc = dL/dd = -2, dL/de = -2, dL/da = -2*b = 6, dL/db = -2*a = -4,
    # dL/df = d = 4.
    program = parse_program(HAND, HAND_VALUES)
    assert program.output.data == -8.0
    assert grads(program) == {"a": 6.0, "b": -4.0, "c": -2.0, "f": 4.0}
    assert program.output is program.names["L"]
    assert program.names["e"].data == -6.0 and program.names["d"].data == 4.0
    assert program.names["d"].grad == -2.0


def test_hand_example_names_labels_and_order():
    program = parse_program(HAND, HAND_VALUES)
    # Order of first appearance in the text: a target comes before its operands.
    assert list(program.names) == ["e", "a", "b", "d", "c", "L", "f"]
    assert list(program.leaves) == ["a", "b", "c", "f"]
    for name, node in program.names.items():
        assert node.label == name
    assert all(node.is_leaf for node in program.leaves.values())
    assert not program.names["e"].is_leaf
    assert program.defaults == {} and describe_defaults(program) is None
    assert program.source == HAND and program.seed == 0


def test_newlines_and_semicolons_and_comments_are_the_same_program():
    text = "# the hand example\ne = a*b   # a product\nd = e + c\n\nL = d*f\n"
    program = parse_program(text, HAND_VALUES)
    assert program.output.data == -8.0
    assert grads(program) == {"a": 6.0, "b": -4.0, "c": -2.0, "f": 4.0}


def test_indented_multiline_text_is_dedented():
    program = parse_program("\n    e = a*b\n    d = e + c\n    L = d*f\n", HAND_VALUES)
    assert program.output.data == -8.0


def test_parse_is_exported_and_returns_the_output():
    out = gradviz.parse("(a+b)*c", a=2, b=-3, c=10)
    assert isinstance(out, Value) and out.data == -10.0
    assert out.grad == 0.0  # no backward pass is run
    out.backward()
    leaves = {n.label: n.grad for n in topological_order(out) if n.is_leaf}
    assert leaves == {"a": 10.0, "b": 10.0, "c": -1.0}


# -- graph shape: the same graph Python code on Values builds ----------------------------------


def test_a_value_used_twice_is_one_node_with_two_edges():
    out = parse("x*x", x=3)
    assert out.parents[0] is out.parents[1]
    out.backward()
    assert out.parents[0].grad == 6.0


def test_constants_stay_numbers_until_an_op_meets_them():
    out = parse("x - 2", x=5)  # drawn as typed: a subtraction of the constant 2
    assert out.op.name == "sub" and out.data == 3.0
    assert out.parents[1].is_leaf and out.parents[1].label is None and out.parents[1].data == 2
    assert parse("x + -2", x=5).parents[1].data == -2  # -2 is a number, not a negation
    assert parse("-3").data == -3.0 and parse("-3").is_leaf
    assert parse("--3").data == 3.0
    both = parse("2*3")  # two constants: drawn as an op, not folded
    assert both.op.name == "mul" and both.data == 6.0


def test_powers_constant_exponent_is_unary_other_exponents_use_pow():
    assert parse("x**2", x=3).op.name == "pow2"
    assert parse("x**-1", x=4).data == 0.25 and parse("x**-1", x=4).op.name == "pow-1"
    assert parse("x**0.5", x=4).op.parents if False else parse("x**0.5", x=4).data == 2.0
    assert parse("x**y", x=2, y=3).op is POW
    two_x = parse("2**x", x=3)
    assert two_x.op is POW and two_x.data == 8.0 and two_x.parents[0].data == 2.0
    assert parse("x**(1/2)", x=4).op is POW  # constant arithmetic is drawn, not folded
    n_leaf = parse("n = 3; x**n", x=2)  # a named number is a leaf, so a Value exponent
    assert n_leaf.op is POW and n_leaf.data == 8.0


def test_every_function_is_callable_and_matches_the_engine():
    for name, op in UNARY_OPS.items():
        out = parse(f"{name}(x)", x=0.7)
        assert out.op is op
        assert out.data == op.forward(0.7)


def test_detach_blocks_the_gradient():
    program = parse_program("detach(x)*y + x", {"x": 2.0, "y": 3.0})
    assert grads(program) == {"x": 1.0, "y": 2.0}


def test_unary_plus_and_parentheses_add_no_nodes():
    assert len(topological_order(parse("+((a))*b", a=1, b=2))) == 3


def test_named_number_is_a_leaf_that_a_value_overrides():
    program = parse_program("w = -0.5; y = w*x", {"x": 2})
    assert program.leaves["w"].data == -0.5 and program.output.data == -1.0
    assert list(program.leaves) == ["w", "x"] and program.defaults == {}
    program = parse_program("w = -0.5; y = w*x", {"x": 2, "w": 3})
    assert program.output.data == 6.0 and program.leaves["w"].label == "w"
    assert parse_program("w = 2.5e-3").output.data == 0.0025
    assert parse_program("p = pi").leaves["p"].data == math.pi  # a named constant is a number


def test_alias_keeps_the_first_label():
    program = parse_program("t = a*b; u = t; u + 1", {"a": 1, "b": 2})
    assert program.names["u"] is program.names["t"] and program.names["u"].label == "t"
    leaf = parse_program("b = a", {"a": 4})
    assert leaf.output is leaf.names["a"] and leaf.output.label == "a"


def test_unused_intermediate_is_allowed_and_not_in_the_graph():
    program = parse_program("spare = a*a; y = b + 1", {"a": 1, "b": 2})
    assert program.output.data == 3.0
    assert program.names["spare"] not in topological_order(program.output)


def test_pi_and_e_are_constants_unless_assigned_or_given():
    assert parse("2*pi").data == 2 * math.pi
    assert parse("e").data == math.e and parse("e").label is None
    assert parse_program("pi*2").leaves == {}
    program = parse_program("e*2", {"e": 3})  # a value makes it a leaf
    assert program.output.data == 6.0 and list(program.leaves) == ["e"]
    assert parse_program(HAND, HAND_VALUES).names["e"].data == -6.0  # assigned: a name
    with pytest.raises(ExpressionError, match="e is used before it is assigned"):
        parse_program("x = e*2; e = a*b")


def test_batches_of_values_flow_through():
    out = parse("a*b + 1", a=np.array([1.0, 2.0]), b=3)
    assert out.data.tolist() == [4.0, 7.0]


# -- overflow and special values: floats all the way -------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2**100000", math.inf),
        ("10**10**10", math.inf),
        ("(-2)**100001", -math.inf),
        ("1e999", math.inf),
        ("1/0", math.inf),
        ("x/0", math.inf),
        ("exp(1000)", math.inf),
        ("0*1e999", math.nan),
        ("log(-1)", math.nan),
        ("2**-100000", 0.0),
        ("(-8)**(1/3)", math.nan),
    ],
)
def test_huge_and_undefined_results_are_inf_and_nan(text, expected):
    data = parse_program(text, {"x": 1.0} if text.startswith("x") else {}).output.data
    if math.isnan(expected):
        assert math.isnan(data)
    else:
        assert data == expected


def test_exponent_is_never_python_integer_arithmetic():
    # 9**9**9 as Python ints would take minutes and gigabytes; here it is one float op.
    assert parse("9**9**9").data == math.inf
    assert parse("x**1000000", x=1.0).data == 1.0  # at the exponent limit


# -- leaf values -------------------------------------------------------------------------------


def test_values_for_names_not_in_the_expression_are_refused_by_name():
    with pytest.raises(InputError) as caught:
        parse_program("(a+b)*c", {"a": 1, "bb": 2})
    assert (
        caught.value.message == "a value was given for bb, but bb does not appear in the expression"
    )
    assert caught.value.hint == "did you mean b? the leaves are: a, b, c"
    assert caught.value.exit_code == 2


def test_values_for_computed_names_and_functions_are_refused():
    with pytest.raises(InputError, match="the expression computes e"):
        parse_program(HAND, {"e": 1})
    with pytest.raises(InputError, match="a value was given for tanh, which is a function"):
        parse_program("tanh(x)", {"tanh": 1})


def test_values_must_be_numbers():
    with pytest.raises(InputError, match="the value for a must be a number, got str"):
        parse_program("a", {"a": "2"})
    with pytest.raises(InputError, match="got bool"):
        parse_program("a", {"a": True})


def test_value_names_are_normalised_like_expression_names():
    # Python reads the fullwidth ａ as a; a value given as ａ or as a reaches the same leaf.
    assert parse_program("ａ*2", {"a": 3}).output.data == 6.0
    assert parse_program("a*2", {"ａ": 3}).output.data == 6.0
    with pytest.raises(InputError, match="given twice"):
        parse_program("a*2", {"a": 1, "ａ": 3})


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["a=2", "b=-3e-2"], {"a": 2.0, "b": -0.03}),
        ([" a = 1.5 "], {"a": 1.5}),
        (["x1=+4", "w_2=1_000"], {"x1": 4.0, "w_2": 1000.0}),
        (["µ=2"], {"μ": 2.0}),  # the micro sign is Python's Greek mu
        ([], {}),
    ],
)
def test_parse_assignments(args, expected):
    assert parse_assignments(args) == expected


def test_parse_assignments_accepts_nan_and_inf():
    values = parse_assignments(["a=nan", "b=-inf"])
    assert math.isnan(values["a"]) and values["b"] == -math.inf


@pytest.mark.parametrize(
    ("arg", "message", "span"),
    [
        ("a", "expected NAME=VALUE, got 'a'", "a"),
        ("a=x", "the value for a is not a number: 'x'", "x"),
        ("a= 2x", "the value for a is not a number: '2x'", "2x"),
        ("a=1/2", "the value for a is not a number: '1/2'", "1/2"),
        ("a=", "the value for a is not a number: ''", ""),
        ("2a=1", "'2a' is not a usable name", "2a"),
        ("__x=1", "'__x' is not a usable name", "__x"),
        ("=1", "'' is not a usable name", "="),
    ],
)
def test_parse_assignments_errors_point_at_the_bad_part(arg, message, span):
    with pytest.raises(ExpressionError) as caught:
        parse_assignments([arg])
    error = caught.value
    assert error.message == message and error.exit_code == 2
    if span:
        assert arg[error.start : error.end] == span


def test_parse_assignments_refuses_a_name_given_twice():
    with pytest.raises(ExpressionError, match="a is given twice"):
        parse_assignments(["a=1", "a=2"])


# -- defaults ----------------------------------------------------------------------------------


def test_defaults_are_reproducible_short_nonzero_and_distinct():
    text = "(a+b)*c + d*e2 - f"
    first = parse_program(text)
    again = parse_program(text)
    assert first.defaults == again.defaults
    assert list(first.defaults) == ["a", "b", "c", "d", "e2", "f"]
    for name, value in first.defaults.items():
        assert first.leaves[name].data == value
        assert value != 0 and abs(value) != 1 and -3 <= value <= 3
        assert round(value, 1) == value
    assert len(set(first.defaults.values())) == len(first.defaults)


def test_defaults_depend_on_the_seed():
    text = "(a+b)*c"
    seen = {tuple(parse_program(text, seed=seed).defaults.values()) for seed in range(5)}
    assert len(seen) == 5
    assert parse_program(text, seed=7).seed == 7


def test_defaults_only_for_leaves_without_a_value():
    program = parse_program("(a+b)*c; ", {"b": 5})
    assert list(program.defaults) == ["a", "c"] and program.leaves["b"].data == 5.0


def test_leaves_feeding_log_sqrt_or_fractional_powers_get_positive_defaults():
    for seed in range(20):
        program = parse_program("log(x) + sqrt(y) + z**0.5 + w**v", seed=seed)
        for name in ("x", "y", "z", "w"):
            assert program.defaults[name] > 0
        assert math.isfinite(program.output.data)


def test_many_leaves_still_get_defaults():
    text = " + ".join(f"x{i}" for i in range(80))
    program = parse_program(text)
    assert len(program.defaults) == 80 and all(v != 0 for v in program.defaults.values())


def test_describe_defaults():
    program = parse_program("(a+b)*c", {"c": 1})
    a, b = program.defaults["a"], program.defaults["b"]
    assert describe_defaults(program, flag) == (
        f"no value given for a, b: used a={a:g}, b={b:g} "
        "(set them as a=VALUE, or change them with --seed N)"
    )
    assert describe_defaults(program).endswith("or change them with seed N)")  # the library's


def test_describe_defaults_of_one_leaf_says_it():
    program = parse_program("a * b", {"b": 2})
    a = program.defaults["a"]
    assert describe_defaults(program, flag) == (
        f"no value given for a: used a={a:g} (set it as a=VALUE, or change it with --seed N)"
    )


def test_negative_seed_is_refused():
    with pytest.raises(InputError, match="seed must be a whole number >= 0"):
        parse_program("a", seed=-1)


# -- unicode -----------------------------------------------------------------------------------


def test_names_are_nfkc_normalised_as_python_does():
    out = parse("ｅｘｐ(ａ)", a=0.0)
    assert out.op is UNARY_OPS["exp"] and out.data == 1.0
    assert out.parents[0].label == "a"
    program = parse_program("α = 2; β*α", {"β": 3})
    assert program.output.data == 6.0 and list(program.names) == ["α", "β"]


def test_lookalike_of_a_builtin_is_an_unknown_function_and_never_runs():
    with pytest.raises(ExpressionError) as caught:
        parse("ｅｖａｌ('1')")
    error = caught.value
    assert error.message == "unknown function ｅｖａｌ (read as eval)"
    assert (error.start, error.end) == (0, 4)


def test_a_name_that_normalises_to_a_dunder_is_refused():
    with pytest.raises(ExpressionError) as caught:
        parse("_＿import＿＿('os')")  # fullwidth low lines: Python reads __import__
    assert caught.value.message == (
        "dunder names (_＿import＿＿ (read as __import__)) are not supported"
    )


def test_error_positions_are_characters_not_bytes():
    text = "ééé + x.y"  # é is two bytes in UTF-8
    with pytest.raises(ExpressionError) as caught:
        parse(text)
    assert text[caught.value.start : caught.value.end] == "x.y"


def test_error_positions_in_later_lines_are_absolute():
    text = "t = ä*b\nu = t + c\nv = u[0]"
    with pytest.raises(ExpressionError) as caught:
        parse(text)
    assert text[caught.value.start : caught.value.end] == "u[0]"
    assert caught.value.render().splitlines()[1:3] == ["  v = u[0]", "      ^^^^"]


def test_error_positions_in_dedented_text_point_into_the_original():
    text = "\n   t = ä*b\n   v = u.x"
    with pytest.raises(ExpressionError) as caught:
        parse(text)
    assert text[caught.value.start : caught.value.end] == "u.x"


def test_syntax_error_position_after_non_ascii_text():
    # Python 3.11 reports SyntaxError columns in characters for text input.
    text = "ääää = 1 $ 2"
    with pytest.raises(ExpressionError) as caught:
        parse(text)
    assert caught.value.message == "syntax error: invalid syntax"
    assert text[caught.value.start] == "$"


def test_syntax_error_on_a_later_line():
    text = "a = 1\nb = (a +\n"
    with pytest.raises(ExpressionError) as caught:
        parse(text)
    assert caught.value.message == "syntax error: '(' was never closed"
    assert text[caught.value.start] == "("


def test_rendered_caret_counts_terminal_columns():
    with pytest.raises(ExpressionError) as caught:
        parse("ｅｖａｌ(1)")
    assert caught.value.render().splitlines()[1:3] == ["  ｅｖａｌ(1)", "  ^^^^^^^^"]
    with pytest.raises(ExpressionError) as caught:
        parse("漢字 + x.y")
    assert caught.value.render().splitlines()[1:3] == ["  漢字 + x.y", "         ^^^"]


def test_rendered_error_never_echoes_control_characters():
    with pytest.raises(ExpressionError) as caught:
        parse("a + \x1b]0;pwned\x07 + b")
    rendered = caught.value.render()
    assert "\x1b" not in rendered and "\x07" not in rendered
    assert rendered.splitlines()[1] == "  a + \ufffd]0;pwned\ufffd + b"


def test_rendered_long_line_is_a_window_around_the_span():
    text = "a + " * 400 + "x.y" + " + b" * 400
    with pytest.raises(ExpressionError) as caught:
        parse(text)
    _, line, caret, _ = caught.value.render().splitlines()
    assert len(line) < 2 * 60 + 10 and line.startswith("  …") and line.endswith("…")
    assert line[caret.index("^") : caret.rindex("^") + 1] == "x.y"


def test_bytes_that_were_not_utf8_are_refused_and_render_encodably():
    text = "a + b\udcff"  # how Python hands over a command-line byte 0xFF
    with pytest.raises(ExpressionError) as caught:
        parse(text)
    assert caught.value.message == "the expression contains a character that is not text (U+DCFF)"
    assert caught.value.start == 5
    caught.value.render().encode("utf-8")  # printable to any UTF-8 terminal
    with pytest.raises(ExpressionError) as caught:
        parse_assignments(["a\udcff=1"])
    caught.value.render().encode("utf-8")


@pytest.mark.parametrize("text", ["1 is 1", "'\\d'", "0x1for"])
def test_pythons_syntax_warnings_are_not_printed(text, recwarn, capfd):
    with pytest.raises(ExpressionError):
        parse(text)
    assert [str(w.message) for w in recwarn] == []
    assert capfd.readouterr() == ("", "")


def test_windows_and_old_mac_newlines():
    assert parse_program("e = a*b\r\nd = e + c\rL = d*f", HAND_VALUES).output.data == -8.0


# -- limits ------------------------------------------------------------------------------------


def test_length_limit():
    text = "a+" * (expr.MAX_LENGTH // 2) + "a"
    with pytest.raises(InputError, match=f"expression too long: {len(text)} characters"):
        parse(text)


@pytest.mark.parametrize(
    "text",
    [
        "(" * 101 + "a" + ")" * 101,
        "-" * 101 + "a",
        "2**" * 101 + "2",
        "(-" * 51 + "a" + ")" * 51,
        "[" * 101,
        "not " * 101 + "a",
        "f(" * 150 + "x" + ")" * 150,
    ],
)
def test_depth_limit_is_checked_before_pythons_parser(text, monkeypatch):
    def no_parse(*args, **kwargs):
        raise AssertionError("ast.parse must not run")

    monkeypatch.setattr(expr.ast, "parse", no_parse)
    with pytest.raises(ExpressionError) as caught:
        parse(text)
    assert caught.value.message.startswith("expression nested too deeply (more than 100 levels")


def test_depth_at_the_limit_is_fine():
    assert parse("(" * 100 + "a" + ")" * 100, a=2).data == 2.0
    assert parse("-" * 100 + "a", a=2).data == 2.0
    # The limit is per statement: 98 levels, then 99 more in the next one (148 signs in all).
    assert parse("t = " + "-(" * 49 + "a" + ")" * 49 + "\n" + "-" * 99 + "t", a=2).data == 2.0


def test_long_flat_sums_are_not_nesting():
    text = " + ".join(["a"] * 999)
    assert parse(text, a=1).data == 999.0


def test_node_limit():
    text = "+".join(["a"] * 1001)
    with pytest.raises(ExpressionError, match="expression too large"):
        parse(text)


def test_statement_limit():
    text = "\n".join(f"x{i} = {i}" for i in range(expr.MAX_STATEMENTS + 1))
    with pytest.raises(ExpressionError, match="too many statements: 501"):
        parse(text)


def test_number_literal_limit_covers_pythons_integer_digit_limit():
    text = "1" * 5000 + " + a"  # Python refuses ints of more than 4300 digits with ValueError
    with pytest.raises(ExpressionError) as caught:
        parse(text)
    assert caught.value.message == "number too long: 5000 characters (the limit is 100)"
    assert (caught.value.start, caught.value.end) == (0, 5000)
    assert parse("1" * 100).data == 1.1111111111111111e99


def test_name_length_limit():
    with pytest.raises(ExpressionError, match="name too long: 101 characters"):
        parse("x" * 101)


def test_exponent_limit():
    with pytest.raises(ExpressionError) as caught:
        parse("x**-1e7")
    assert caught.value.message == "exponent too large: -10000000 is outside -1e6 to 1e6"
    assert "x**-1e7"[caught.value.start : caught.value.end] == "-1e7"
    # just over the limit: the number is shown exactly, not rounded onto the limit
    with pytest.raises(ExpressionError) as caught:
        parse("x**-1000001")
    assert caught.value.message == "exponent too large: -1000001 is outside -1e6 to 1e6"
    assert parse("x**-1000000").op  # the limit itself is allowed


@pytest.mark.parametrize(
    "text",
    [
        "(" * 250 + "a" + ")" * 250,  # "too many nested parentheses"
        "-" * 3500 + "a",  # RecursionError in the parser
        "2**" * 3000 + "2",  # MemoryError in the parser
    ],
)
def test_pythons_own_parser_limits_become_expression_errors(text, monkeypatch):
    monkeypatch.setattr(expr, "MAX_DEPTH", 10**6)
    monkeypatch.setattr(expr, "MAX_NODES", 10**6)
    with pytest.raises(ExpressionError, match="nested too deeply"):
        parse(text)


# -- properties --------------------------------------------------------------------------------

EXPRESSION_CHARS = "ab xe+-*/()=;.,\n#'[]^%<@~:λ_01239" + "ｅ"


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=60), st.text(EXPRESSION_CHARS, max_size=60)))
def test_random_text_only_ever_raises_our_input_errors(text):
    try:
        program = parse_program(text)
    except InputError as error:
        error.render()
        return
    assert isinstance(program.output, Value)


TOKENS = (
    "a", "b", "e", "pi", "x1", "tanh", "exp", "log", "eval", "__import__", "ｅｘｐ", "λ",
    "0", "2", "-1", "1e999", "0x1f", "1_0", ".5", "3j", "True", "None", "'s'", "f'{a}'",
    "+", "-", "*", "/", "**", "//", "%", "^", "@", "~", "<", "==", "and", "not", "if", "else",
    "lambda", ":", ":=", "=", "+=", ",", ".", "(", ")", "[", "]", "{", "}", ";", "\n", "\n  ",
    "#", "\\", "import", "del", "for", "in", "yield", "await", "*", "...",
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=25), st.sampled_from(["", " "]))
def test_random_token_soup_only_ever_raises_our_input_errors(tokens, space):
    try:
        program = parse_program(space.join(tokens))
    except InputError as error:
        error.render()
        return
    assert isinstance(program.output, Value)


# A generated expression is a tree: ("x", name) ("k", number) ("f", name, e) ("neg", e)
# ("powc", n, e) ("op", symbol, left, right).
LEAF_NAMES = ("a", "b", "c")
leaf = st.sampled_from(LEAF_NAMES).map(lambda n: ("x", n))
number = st.sampled_from((-2.0, -0.5, 0.3, 1.0, 2.5, 3.0)).map(lambda c: ("k", c))


def trees(functions, operators, exponents, max_leaves=8):
    def extend(child):
        return st.one_of(
            st.tuples(st.just("f"), st.sampled_from(functions), child),
            st.tuples(st.just("neg"), child),
            st.tuples(st.just("powc"), st.sampled_from(exponents), child),
            st.tuples(st.just("op"), st.sampled_from(operators), child, child),
            st.tuples(st.just("op"), st.sampled_from(operators), child, number),
            st.tuples(st.just("op"), st.sampled_from(operators), number, child),
        )

    return st.recursive(st.one_of(leaf, number), extend, max_leaves=max_leaves)


def text_of(tree) -> str:
    kind = tree[0]
    if kind == "x":
        return tree[1]
    if kind == "k":
        return f"({tree[1]!r})"
    if kind == "f":
        return f"{tree[1]}({text_of(tree[2])})"
    if kind == "neg":
        return f"-({text_of(tree[1])})"
    if kind == "powc":
        return f"({text_of(tree[2])})**({tree[1]!r})"
    return f"({text_of(tree[2])}) {tree[1]} ({text_of(tree[3])})"


def build(tree, leaves: dict[str, Value]):
    """The tree as Python code on Values, following the language's documented rules."""
    kind = tree[0]
    if kind == "x":
        return leaves[tree[1]]
    if kind == "k":
        return tree[1]
    if kind == "f":
        inner = build(tree[2], leaves)
        return getattr(gradviz, tree[1])(inner)
    if kind == "neg":
        return -build(tree[1], leaves)
    if kind == "powc":
        base = build(tree[2], leaves)
        return (base if isinstance(base, Value) else Value(base)) ** tree[1]
    a, b = build(tree[2], leaves), build(tree[3], leaves)
    if not isinstance(a, Value) and not isinstance(b, Value):
        a = Value(a)
    if tree[1] == "**" and not isinstance(b, Value):
        return a**b  # a plain-number exponent: the unary constant power
    return {"+": a + b, "-": a - b, "*": a * b, "/": a / b, "**": a**b}[tree[1]]


def names_in(tree) -> set[str]:
    if tree[0] == "x":
        return {tree[1]}
    return set().union(*(names_in(part) for part in tree[1:] if isinstance(part, tuple)))


def same(x: float, y: float) -> bool:
    return x == y or (math.isnan(x) and math.isnan(y))


ALL_TREES = trees(tuple(UNARY_OPS), ("+", "-", "*", "/", "**"), (2.0, -1.0, 0.5, 3.0, -2.5))
POINTS = st.fixed_dictionaries({n: st.floats(-3, 3) for n in LEAF_NAMES})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ALL_TREES, POINTS)
def test_generated_text_builds_what_python_code_on_values_builds(tree, point):
    program = parse_program(text_of(tree), {n: point[n] for n in names_in(tree)})
    leaves = {n: Value(point[n], label=n) for n in LEAF_NAMES}
    reference = build(tree, leaves)
    reference = reference if isinstance(reference, Value) else Value(reference)
    ours = topological_order(program.output)
    theirs = topological_order(reference)
    assert [(n.op, n.label) for n in ours] == [(n.op, n.label) for n in theirs]
    program.output.backward()
    reference.backward()
    for mine, other in zip(ours, theirs, strict=True):
        assert same(mine.data, other.data) and same(mine.grad, other.grad)


# Smooth pieces only, so central differences are a fair judge of the gradients.
SMOOTH_TREES = trees(("tanh", "sigmoid", "sin", "cos"), ("+", "-", "*"), (2.0, 3.0), 10)


def smooth_text(tree) -> str:
    """Wrap in functions that are smooth everywhere and keep numbers moderate."""
    inner = text_of(tree)
    return f"t = {inner}\ny = log(1 + t**2) + sqrt(1 + t**2) / (2 + sin(t)) + exp(tanh(t))"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SMOOTH_TREES, st.fixed_dictionaries({n: st.floats(-2, 2) for n in LEAF_NAMES}))
def test_generated_gradients_agree_with_central_differences(tree, point):
    program = parse_program(smooth_text(tree), {n: point[n] for n in names_in(tree)})
    graph = Graph(program.output)
    graph.backward()
    analytic = {n: node.grad for n, node in program.leaves.items()}
    for name, node in program.leaves.items():  # includes t when the tree is a plain number
        x = node.data

        def central(h: float, node=node, x=x) -> float:
            node.data = x + h
            up = graph.forward()
            node.data = x - h
            down = graph.forward()
            node.data = x
            assume(math.isfinite(up) and math.isfinite(down))
            return (up - down) / (2 * h)

        h = 1e-5 * max(1.0, abs(x))
        # a step that moves the output by more than a little is no judge: `((c**3)**3)**2`
        # at c = 2 moves t by about 47 (many periods of sin(t)) and both estimates are noise
        assume(abs(analytic[name]) * h < 1e-2)
        coarse, fine = central(h), central(h / 2)
        # The difference of two step sizes estimates the finite difference's own truncation
        # error (Richardson), which is large where the function curves fast, e.g. (b**3)**3.
        truncation = abs(coarse - fine)
        tolerance = 1e-4 * (1 + abs(analytic[name])) + 2 * truncation
        assert abs(fine - analytic[name]) <= tolerance, name
