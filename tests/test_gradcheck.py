"""The gradient check: passes for every primitive, catches a wrong local derivative,
and reports points where a finite difference means nothing as such."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rich.console import Console

from gradviz import engine, ops
from gradviz.checking import EPS_SCALE, default_eps, gradcheck, summary
from gradviz.engine import ADD, MUL, POW, UNARY_OPS, Op, Value, apply, power_op
from gradviz.errors import InputError
from gradviz.render.trace_view import check_view

# An ordinary point inside every op's domain (log and sqrt need a positive input).
POINT = 0.7


@pytest.mark.parametrize("name", sorted(set(UNARY_OPS) - {"detach"}))
@pytest.mark.parametrize("x0", [POINT, 1.9])
def test_every_unary_primitive_passes(name: str, x0: float) -> None:
    x, w = Value(x0, "x"), Value(-1.3, "w")
    rows = gradcheck(apply(UNARY_OPS[name], x) * w)
    assert [(r.name, r.status) for r in rows] == [("x", "pass"), ("w", "pass")]
    assert all(r.rel_error < 1e-8 for r in rows)


@pytest.mark.parametrize("op", [ADD, MUL, POW], ids=lambda op: op.name)
def test_every_binary_primitive_passes(op: Op) -> None:
    x, y = Value(1.7, "x"), Value(-0.6, "y")
    rows = gradcheck(apply(op, x, y))
    assert [r.status for r in rows] == ["pass", "pass"]


@pytest.mark.parametrize("n", [2.0, 3.0, -1.0, 0.5, -2.5])
def test_constant_powers_pass(n: float) -> None:
    x = Value(1.3, "x")
    assert [r.status for r in gradcheck(apply(power_op(n), x))] == ["pass"]


def test_compositions_and_large_inputs_pass() -> None:
    x, y = Value(1.0e4, "x"), Value(-3.5, "y")
    out = (x * 1e-3).sin() / (y * y + 1) - x.sqrt() * y.exp() + (-y).relu()
    rows = gradcheck(out)
    assert [r.status for r in rows] == ["pass", "pass"]
    assert rows[0].eps == pytest.approx(EPS_SCALE * 1e4)


def test_a_wrong_local_derivative_fails() -> None:
    wrong_tanh = Op(
        name="tanh",
        symbol="tanh",
        out=engine.TANH.out,
        d=("1.0 - out",),  # should be 1 - out²
        shown=("1 - tanh(a)",),
    )
    x = Value(0.5, "x")
    (row,) = gradcheck(apply(wrong_tanh, x) * 2.0)
    assert row.status == "fail" and row.failed
    assert row.analytic == pytest.approx(2 * (1 - math.tanh(0.5)))
    assert row.numeric == pytest.approx(2 * (1 - math.tanh(0.5) ** 2), rel=1e-8)
    assert "a local derivative on the way is wrong" in row.note
    assert summary([row]) == "1 leaf checked: 1 fail — FAILED: x"


def test_a_wrong_derivative_is_caught_even_when_the_gradient_is_tiny() -> None:
    wrong_mul = Op(name="mul", symbol="*", out=MUL.out, d=("2 * b", "a"), shown=("2·b", "a"))
    x = Value(0.3, "x")
    rows = gradcheck(engine.apply(wrong_mul, x, 1e-7))  # x * 1e-7, with d/dx written wrong
    assert rows[0].analytic == 2e-7 and rows[0].numeric == pytest.approx(1e-7)
    assert rows[0].status == "fail"


def test_a_true_zero_gradient_passes() -> None:
    x = Value(-2.0, "x")
    (row,) = gradcheck(x.relu() + 5.0)
    assert (row.analytic, row.numeric, row.status) == (0.0, 0.0, "pass")


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda x: x.relu() * 3.0, "relu at 0"),
        (lambda x: abs(x) + x, "abs at 0"),
        (lambda x: x.sqrt(), "sqrt at 0"),
        (lambda x: (x * 2.0).relu(), "relu at 0"),
    ],
    ids=["relu", "abs", "sqrt", "relu-inside"],
)
def test_non_differentiable_points_are_reported_not_failed(build, words: str) -> None:
    x = Value(0.0, "x")
    (row,) = gradcheck(build(x))
    assert row.status == "non-differentiable" and not row.failed
    assert words in row.note


def test_a_kink_within_the_step_is_reported() -> None:
    x = Value(1e-9, "x")
    (row,) = gradcheck(x.relu())
    assert row.status == "non-differentiable"
    assert "crosses 0 within ±h" in row.note


def test_non_finite_values_are_reported() -> None:
    with np.errstate(invalid="ignore"):
        out = Value(-1.0, "x").log()
    (row,) = gradcheck(out)
    assert (row.status, row.note) == ("non-finite", "L = log(x) is nan (log is undefined at -1)")
    (row,) = gradcheck(Value(math.inf, "x") * 2.0)
    assert row.status == "non-finite" and "x itself is inf" in row.note


def test_an_overflow_is_non_finite_not_non_differentiable() -> None:
    with np.errstate(over="ignore"):
        out = Value(1000.0, "x").exp()
    (row,) = gradcheck(out)
    assert (row.status, row.note) == ("non-finite", "L = exp(x) overflows to inf (exp of 1000)")
    with np.errstate(over="ignore"):
        out = Value(1e200, "x") * Value(1e200, "y") + 1.0
    (row, _) = gradcheck(out)
    assert row.note == "n2 = x·y overflows to inf (mul of 1e200, 1e200), so L is inf"


def test_an_overflow_within_the_step_is_non_finite() -> None:
    # exp(709.78) is finite, exp(709.78 + h) is not (the largest float is e^709.7827).
    (row,) = gradcheck(Value(709.78, "x").exp())
    assert row.status == "non-finite"
    assert row.note.startswith("L is inf at x + h = 709.8: L = exp(x) overflows to inf")
    assert row.numeric == pytest.approx(math.exp(709.78), rel=1e-5)  # the h/2 difference


def test_nan_weights_are_non_finite_not_a_kink() -> None:
    """A diverged network: a nan weight feeds a relu. Its input is nan, which is no
    reason to talk about relu's corner (nan compares unequal to everything)."""
    x, w = Value(1.0, "x"), Value(math.nan, "w")
    out = (w * x).relu() * 2.0 + x * 3.0
    rows = gradcheck(out)
    assert [(r.name, r.status) for r in rows] == [("w", "non-finite"), ("x", "non-finite")]
    assert rows[0].note == "w itself is nan, so L is nan"
    assert rows[1].note == "the leaf w is nan, so L is nan"
    assert math.isnan(rows[1].abs_error) and math.isnan(rows[1].rel_error)
    batch = Value(np.array([1.0, -1.0, 2.0]), "x")
    with np.errstate(over="ignore"):
        out = (batch * 400.0).exp().relu()
    (row,) = gradcheck(out)
    assert row.note == (
        "n3 = exp(n2) overflows to inf in 1 of 3 examples (exp of 800), so L is inf in 1 of "
        "3 examples"
    )


def test_a_gradient_that_overflows_with_finite_data_is_non_finite() -> None:
    # Five square roots of a tiny number: every value is finite, the product of the
    # local derivatives 1/(2·√a) is not.
    x = Value(1e-320, "x")
    out = x.sqrt().sqrt().sqrt().sqrt().sqrt()
    (row,) = gradcheck(out)
    assert (row.status, row.note) == (
        "non-finite",
        "the backward pass gives inf: the gradient is already inf at x",
    )


def test_a_tiny_step_at_a_tiny_input_has_its_rounding_noise_counted() -> None:
    # L(x±h) differ in their 10th digit only: the rounding noise (ε·|L|/h, computed
    # without overflowing although 1/h does) is what the estimate is good for.
    (row,) = gradcheck(Value(1e-310, "x").sqrt(), eps=1e-320)
    assert row.status == "pass" and row.rel_error > 1e-7
    assert 0 < row.abs_error < row.noise


@pytest.mark.parametrize(
    ("build", "x0"),
    [
        (lambda x: x.exp(), 700.0),
        (lambda x: x.exp(), 500.0),
        (lambda x: x.exp(), -700.0),
        (lambda x: x.sin(), 500.0),
        (lambda x: x.sin(), 1000.0),
        (lambda x: (x * 1000.0).sin(), 1.0),
        (lambda x: x**3, 1e5),
        (lambda x: x.tanh() * x.log(), 3e4),
    ],
    ids=["exp700", "exp500", "exp-700", "sin500", "sin1000", "sin1000x", "cube1e5", "tanhlog"],
)
def test_large_inputs_pass(build, x0: float) -> None:
    """h grows with |x|, and so does the h² error of a central difference (3e-6 for exp
    at 700): Richardson's extrapolation cancels it."""
    (row,) = gradcheck(build(Value(x0, "x")))
    assert row.status == "pass", row
    assert row.rel_error < 1e-9


def _scaled(op: Op, factor: float) -> Op:
    """`op` with its local derivative multiplied by `factor`: a deliberately wrong op."""
    return Op(
        name=op.name,
        symbol=op.symbol,
        out=op.out,
        d=tuple(f"{factor!r} * ({d})" for d in op.d),
        shown=op.formulas,
        bound=op.bound,
    )


@pytest.mark.parametrize("factor", [1.01, 0.99, 1 + 1e-4])
@pytest.mark.parametrize(
    ("op", "x0"),
    [(ops.EXP, 700.0), (ops.SIN, 1000.0), (ops.TANH, 0.5), (ops.EXP, 0.0)],
    ids=["exp700", "sin1000", "tanh", "exp0"],
)
def test_a_slightly_wrong_derivative_fails_even_at_large_inputs(
    op: Op, x0: float, factor: float
) -> None:
    """The truncation estimate widens what passes, but not enough to let a derivative
    that is 1% (or 0.01%) off through, also where h is large."""
    (row,) = gradcheck(apply(_scaled(op, factor), Value(x0, "x")))
    assert row.status == "fail", row
    assert row.truncation < 1e-5 * abs(row.numeric)


def test_detach_is_reported_not_failed() -> None:
    x, w = Value(3.0, "x"), Value(2.0, "w")
    rows = gradcheck(x.detach() * w)
    assert [(r.name, r.status) for r in rows] == [("x", "detached"), ("w", "pass")]
    assert "stops the gradient on purpose" in rows[0].note


def test_wrt_by_name_and_value_and_errors() -> None:
    a, b = Value(2.0, "a"), Value(-3.0, "b")
    e = a * b
    e.label = "e"
    out = e + 1.0
    assert [r.name for r in gradcheck(out, ["b"])] == ["b"]
    assert [r.name for r in gradcheck(out, [a, "b", "a"])] == ["a", "b"]
    with pytest.raises(InputError, match="no leaf named 'z'") as info:
        gradcheck(out, ["z"])
    assert info.value.hint == "Leaves with names: a, b."
    with pytest.raises(InputError, match="e is computed from other values, not a leaf"):
        gradcheck(out, ["e"])
    with pytest.raises(InputError, match="eps must be a positive number"):
        gradcheck(out, eps=0.0)
    with pytest.raises(InputError, match="tol must be a positive number"):
        gradcheck(out, tol=math.nan)


def test_unlabelled_graph_checks_every_leaf_but_not_its_constants() -> None:
    out = Value(2.0) * Value(3.0) * 4.0  # unnamed inputs are named by position, as in draw
    assert [r.name for r in gradcheck(out)] == ["n0", "n1"]


def test_the_graph_is_left_as_it_was() -> None:
    x, y = Value(0.4, "x"), Value(1.1, "y")
    out = (x * y).tanh() + y
    out.backward()
    before = [(n.data, n.grad) for n in engine.topological_order(out)]
    gradcheck(out, eps=0.1)
    assert [(n.data, n.grad) for n in engine.topological_order(out)] == before


def test_explicit_eps_is_used() -> None:
    x = Value(1.0, "x")
    (row,) = gradcheck(x**3, eps=1e-3)
    assert row.eps == 1e-3
    # The central difference is off by h²·f'''/6 = 1e-6 exactly for x³ (2.5e-7 at h/2);
    # the extrapolation cancels it, and the estimate of what may remain is that 2.5e-7.
    assert row.abs_error < 1e-10
    assert row.truncation == pytest.approx(2.5e-7, rel=1e-4)


def test_default_eps_scales_with_magnitude() -> None:
    assert default_eps(0.0) == default_eps(0.5) == EPS_SCALE
    assert default_eps(-200.0) == pytest.approx(200 * EPS_SCALE)
    assert 6.0e-6 < EPS_SCALE < 6.1e-6


def test_batched_values_check_each_sample() -> None:
    x = Value(np.array([0.3, -0.5, 2.0]), "x")
    w = Value(0.8, "w")
    rows = gradcheck((x * w).tanh())
    assert [r.status for r in rows] == ["pass", "pass"]


def test_check_view_text() -> None:
    x = Value(0.0, "x")
    rows = gradcheck(x.relu() + x * 2.0)
    console = Console(width=120, no_color=True, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(check_view(rows, "L"))
    lines = console.export_text().splitlines()
    assert lines[0].split() == [
        "leaf",
        "value",
        "analytic",
        "∂L/∂leaf",
        "finite",
        "diff",
        "rel",
        "error",
        "status",
    ]  # the absolute error is left out (80 columns): check_view(show=True) prints it
    assert lines[2].split() == ["x", "0", "2", "2.5", "0.2", "non-differentiable"]
    assert (
        lines[3] == "x: relu at 0: n1 = relu(x) has a corner there (the slopes on each side differ)"
    )
    assert lines[4] == "1 leaf checked: 1 non-differentiable — ok"


# -- only the paths that carry credit from the leaf count ------------------------------


def test_a_slope_in_an_input_that_does_not_move_is_no_reason_to_skip() -> None:
    # (-3)^(1+1): the exponent is computed, and a^b has no slope in b for a < 0 (nan);
    # but the exponent does not depend on x, and d/dx = 2·x = -6 is perfectly fine.
    x = Value(-3.0, "x")
    (row,) = gradcheck(x ** (Value(1.0) + Value(1.0)))
    assert (row.status, row.analytic) == ("pass", -6.0)
    assert row.numeric == pytest.approx(-6.0, rel=1e-9)
    x, n = Value(-2.0, "x"), Value(2.0, "n")
    rows = gradcheck(x**n)
    assert [(r.name, r.status) for r in rows] == [("x", "pass"), ("n", "non-differentiable")]
    assert "the local derivative of L = x^n is not finite there" in rows[1].note


def test_a_kink_on_another_leafs_path_is_no_reason_to_skip() -> None:
    x, y = Value(1.5, "x"), Value(0.0, "y")
    rows = gradcheck(x * y.relu())
    assert [(r.name, r.status) for r in rows] == [("x", "pass"), ("y", "non-differentiable")]


def test_op_kinks_come_from_the_op_table() -> None:
    # A made-up op with a corner at 1: the check reads Op.kinks, not a list of its own.
    clamp = Op(
        name="clamp1",
        symbol="clamp1",
        out="number(np.minimum(a, 1.0))",
        d=("1.0 if a < 1.0 else 0.0",),
        shown=("1 if a < 1 else 0",),
        kinks=(1.0,),
    )
    (row,) = gradcheck(apply(clamp, Value(1.0, "x")))
    assert row.status == "non-differentiable" and "clamp1 at 1" in row.note
    (row,) = gradcheck(apply(clamp, Value(1.0 - 1e-9, "x")))
    assert row.status == "non-differentiable" and "crosses 1 within ±h" in row.note
    (row,) = gradcheck(apply(clamp, Value(0.5, "x")))
    assert row.status == "pass"
    assert ops.RELU.kinks == ops.ABS.kinks == (0.0,)


WRONG_TANH = Op(
    name="tanh", symbol="tanh", out=engine.TANH.out, d=("1.0 - out",), shown=("1 - tanh(a)",)
)


def test_a_detach_on_another_path_does_not_hide_a_wrong_derivative() -> None:
    x = Value(0.5, "x")
    (row,) = gradcheck(apply(WRONG_TANH, x) + x.detach())
    # detach(x) is held at 0.5 while x is nudged, as the backward pass treats it.
    assert row.status == "fail"
    assert row.numeric == pytest.approx(1 - math.tanh(0.5) ** 2, rel=1e-8)


def test_a_detach_on_another_path_is_held_and_the_rest_compared() -> None:
    x = Value(0.0, "x")
    # The relu (at its kink) and the sqrt (infinite slope) are behind detach: irrelevant.
    (row,) = gradcheck(x.relu().detach() + x.sqrt().detach() * 3.0 + x * 2.0)
    assert (row.status, row.analytic, row.numeric) == ("pass", 2.0, pytest.approx(2.0))
    assert x.data == 0.0


def test_detached_only_when_every_path_runs_through_detach() -> None:
    x = Value(0.5, "x")
    (row,) = gradcheck((x * x).detach() + (x.exp() * 0.0).detach())
    assert row.status == "detached" and "every path from x to L runs through detach" in row.note
    (row,) = gradcheck((x * x).detach() * x)
    assert (row.status, row.analytic) == ("pass", 0.25)
