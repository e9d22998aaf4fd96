"""The op table (gradviz.ops): each op's derivative is written once, and every other form
of it (the engine's callable, the compiler's code, the formula shown) says the same."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from gradviz import ops
from gradviz.expr import parse_program

TABLE = [
    *ops.BINARY_OPS.values(),
    ops.NEG,
    *ops.UNARY_OPS.values(),
    ops.power_op(2.0),
    ops.power_op(0.5),
    ops.power_op(-1.0),
    ops.power_op(0.0),
    ops.power_op(3.0),
]
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf and nan on purpose

POINTS = [-2.5, -1.0, -0.3, 0.0, 0.7, 1.0, 2.0, 3.3]


def inputs(op: ops.Op) -> list[tuple[float, ...]]:
    if op.arity == 1:
        return [(a,) for a in POINTS]
    return [(a, b) for a in POINTS for b in POINTS]


# The display formulas in Python, independently of the op table's own expressions: the
# learner's notation translated token by token (σ, √, ², ·, ^, "sign", "tanh²").
_DISPLAY = [
    (", u = 2√(2/π)·(a + 0.044715·a³)", ""),  # gelu's: u and u′ as it defines them
    ("σ(u)", "(1/(1+math.exp(-(2*math.sqrt(2/math.pi)*(a + 0.044715*a**3)))))"),
    ("u′", "(2*math.sqrt(2/math.pi)*(1 + 3*0.044715*a**2))"),
    ("σ(a)", "(1/(1+math.exp(-a)))"),
    ("σ(", "(lambda z: 1/(1+math.exp(-z)))("),
    ("tanh²(a)", "math.tanh(a)**2"),
    ("a^b", "a**b"),
    ("a^(b-1)", "a**(b-1)"),
    ("√a", "math.sqrt(a)"),
    ("b²", "b**2"),
    ("ln(a)", "math.log(a)"),
    ("·", "*"),
    ("^", "**"),
    ("1 if a > 0 else 0.01", "(1 if a > 0 else 1/100)"),
    ("1 if a > 0 else 0", "(1 if a > 0 else 0)"),
    (" (stop-gradient)", ""),
]


def shown_value(formula: str, a: float, b: float = 0.0) -> float:
    text = formula
    for old, new in _DISPLAY:
        text = text.replace(old, new)
    text = re.sub(r"(?<!\.)\b(exp|log|sin|cos|tanh)\(", r"math.\1(", text)
    text = text.replace("sign(a)", "math.copysign(1.0, a) * (a != 0)")
    return float(eval(text, {"math": math, "a": a, "b": b}))  # our test's own formulas


@pytest.mark.parametrize("op", TABLE, ids=lambda op: op.name)
def test_the_formula_shown_is_the_derivative_the_engine_computes(op: ops.Op) -> None:
    checked = 0
    for args in inputs(op):
        out = op.forward(*args)
        locals_ = op.local(out, *args)
        for formula, local in zip(op.formulas, locals_, strict=True):
            if not math.isfinite(local) or abs(local) > 1e6:
                continue
            try:
                expected = shown_value(formula, *args)
            except (ValueError, ZeroDivisionError, OverflowError, TypeError):
                continue  # the textbook formula is undefined there (0^-1, ln(-1))
            if op.passes_credit:
                assert local == pytest.approx(expected, rel=1e-12, abs=1e-12), (formula, args)
            checked += 1
    assert checked >= len(inputs(op)) // 3


@pytest.mark.parametrize("op", TABLE, ids=lambda op: op.name)
def test_the_compilers_code_gives_the_engines_bits(op: ops.Op) -> None:
    """The compiler's lines (templates filled with names, run on floats) against the
    engine's callables: the same numbers bit for bit, inf and nan included."""
    names = ops.compiled_names(np)
    for args in [*inputs(op), *((x,) * op.arity for x in (math.inf, -math.inf, math.nan))]:
        slots = {"out": "o", "a": "a", "b": "b", "tmp": "t"}
        scope = {**names, "a": args[0], "b": args[-1]}
        exec(op.code.format(**slots), scope)  # our own templates, no user text
        out = op.forward(*args)
        assert repr(scope["o"]) == repr(out), (op.code, args)
        for template, local in zip(op.local_code, op.local(out, *args), strict=True):
            assert repr(eval(template.format(**slots), scope)) == repr(local), (template, args)


def ulps(x: float, y: float) -> float:
    """How many units in the last place x and y are apart (0 for equal, inf and nan)."""
    if x == y or (math.isnan(x) and math.isnan(y)):
        return 0.0
    return abs(x - y) / math.ulp(max(abs(x), abs(y)))


def test_ops_run_on_a_batch_as_on_each_sample_within_one_ulp() -> None:
    """A batch (numpy) against separate scalar runs (math for exp, log, tanh): the same
    value and local derivatives, each within 1 ulp, given the same inputs."""
    for op in TABLE:
        columns = [np.array(column) for column in zip(*inputs(op), strict=True)]
        out = op.forward(*columns)
        for i, args in enumerate(inputs(op)):
            scalar_out = op.forward(*args)
            assert ulps(float(out[i]), scalar_out) <= 1, (op.name, args)
            batch = op.local(np.array([scalar_out]), *(np.array([x]) for x in args))
            for local, scalar in zip(batch, op.local(scalar_out, *args), strict=True):
                assert ulps(float(np.broadcast_to(local, (1,))[0]), scalar) <= 1, (op.name, args)


def test_plain_floats_never_import_numpy_and_give_ieee_values() -> None:
    special = [0.0, -0.0, 1.0, -1.0, 1e308, -1e308, 800.0, math.inf, -math.inf, math.nan]
    with np.errstate(all="ignore"):
        for op in TABLE:
            for args in ((x,) * op.arity for x in special):
                got = op.forward(*args)
                want = op.forward(*(np.array([x]) for x in args))
                assert type(got) is float
                assert ulps(got, float(want[0])) <= 1, (op.name, args)


def test_the_callables_come_from_the_written_expressions() -> None:
    # the derivative is written once, as text; the callable is that text compiled
    assert ops.MUL.d == ("b", "a") and ops.MUL.local(6.0, 2.0, 3.0) == (3.0, 2.0)
    assert ops.MUL.local_code == ("{b}", "{a}") and ops.MUL.formulas == ("b", "a")
    assert ops.TANH.d == ("1.0 - out * out",)
    assert ops.TANH.local_code == ("1.0 - {out} * {out}",)
    assert ops.SUB.formulas == ("1", "-1") and ops.EXP.formulas == ("exp(a)",)
    assert ops.power_op(-1.0).local_code == ("number((-1.0) * np.power({a}, (-1.0) - 1.0))",)


def test_what_else_is_known_about_an_op_is_in_the_table() -> None:
    assert [op.name for op in ops.UNARY_OPS.values() if op.positive[0]] == ["log", "sqrt"]
    assert ops.power_op(0.5).positive == (True,) and ops.power_op(2.0).positive == (False,)
    assert ops.POW.positive == (True, False)
    assert ops.SIGMOID.saturation == (0.015, 0.985) and ops.TANH.saturation == (-0.97, 0.97)
    assert ops.RELU.kinks == ops.ABS.kinks == (0.0,)
    assert (ops.SIGMOID.max_slope, ops.SIGMOID.slope_name) == (0.25, "σ′")
    assert not ops.DETACH.passes_credit


@pytest.mark.parametrize(
    ("text", "positive"),
    [("log(x) + y", "x"), ("sqrt(x) * y", "x"), ("x**0.5 + y", "x"), ("x**y", "x")],
)
def test_expression_defaults_ask_the_table_which_inputs_must_be_positive(text, positive) -> None:
    for seed in range(20):
        assert parse_program(text, seed=seed).defaults[positive] > 0


def test_sigmoid_over_an_array_is_its_two_branches_bit_for_bit() -> None:
    """The array σ is written for speed (in place, the numerator as a maximum); it must be
    the overflow-safe definition, 1/(1+e) where a ≥ 0 and e/(1+e) below, e = exp(-|a|),
    element for element: the same bits, NaN where the input is NaN."""
    special = [0.0, -0.0, 5e-324, -5e-324, 1e-300, -1e-300, 36.7, -36.7, 709.0, -709.0]
    special += [745.0, -745.0, 800.0, -800.0, 1e308, -1e308, math.inf, -math.inf, math.nan]
    rng = np.random.default_rng(4)
    for a in (np.array(special), rng.normal(0, 3, (80, 16)), rng.normal(0, 300, 5000)):
        e = np.exp(-np.abs(a))
        want = np.where(a >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))
        got = ops.sigmoid(a.copy())
        assert got.dtype == np.float64 and got.shape == a.shape
        assert np.array_equal(got, want, equal_nan=True)
        assert np.array_equal(np.isnan(got), np.isnan(a))


def test_step_over_an_array_is_heaviside_bit_for_bit() -> None:
    """relu's slope is written for speed (a comparison and a cast): it must be numpy's
    heaviside(a, 0): 1 above 0, 0 at ±0 and below, NaN (positive) where a is NaN."""
    special = [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 5e-324, -5e-324, 1.0, -1.0]
    rng = np.random.default_rng(5)
    mixed = rng.normal(0, 1, (600, 48))
    mixed[::7, ::5] = math.nan
    arrays = [np.array(special), rng.normal(0, 1, (80, 16)), mixed, np.zeros((0, 3))]
    arrays += [mixed.astype(np.float32), np.array([3, -1, 0]), np.array([True, False])]
    for a in arrays:
        want = np.heaviside(a, 0.0)
        got = ops.step(a.copy())
        assert got.dtype == want.dtype and got.shape == a.shape
        assert np.array_equal(got, want, equal_nan=True)
        assert np.array_equal(np.signbit(got), np.signbit(want))
