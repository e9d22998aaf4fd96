"""Property tests: random expressions, their gradients against central finite differences
of an independent float evaluator (the math module), and batched/re-evaluated runs against
separate scalar runs, bit for bit."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import gradviz
from gradviz.engine import Graph, Value, topological_order

LEAVES = 3

# An expression is a tree of tuples:
#   ("x", i)  leaf i          ("k", c)  constant c
#   ("f", name, e)  unary function    ("pow", n, e)  e ** n for a constant n
#   ("op", sym, l, r)  binary: + - * / and ** (a Value exponent)
UNARY = ("exp", "log", "tanh", "sigmoid", "relu", "sin", "cos", "abs", "sqrt", "detach", "neg")
BINARY = ("+", "-", "*", "/", "**")
EXPONENTS = (2.0, 3.0, -1.0, -2.0, 0.5, 1.5, -0.5)

leaf = st.integers(0, LEAVES - 1).map(lambda i: ("x", i))
constant = st.sampled_from((-2.0, -0.5, 0.3, 1.0, 2.5)).map(lambda c: ("k", c))


def _extend(child: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.tuples(st.just("f"), st.sampled_from(UNARY), child),
        st.tuples(st.just("pow"), st.sampled_from(EXPONENTS), child),
        st.tuples(st.just("op"), st.sampled_from(BINARY), child, child),
        st.tuples(st.just("op"), st.sampled_from(BINARY), child, constant),
        st.tuples(st.just("op"), st.sampled_from(BINARY), constant, child),
    )


expressions = st.recursive(leaf, _extend, max_leaves=8)
points = st.lists(st.floats(-3.0, 3.0), min_size=LEAVES, max_size=LEAVES)


# -- the engine's side ---------------------------------------------------------------------


def build(expr: tuple, xs: list[Value]) -> Value | float:
    """The expression as engine Values (constants stay plain numbers, as users write them)."""
    kind = expr[0]
    if kind == "x":
        return xs[expr[1]]
    if kind == "k":
        return expr[1]
    if kind == "f":
        inner = build(expr[2], xs)
        if expr[1] == "neg":
            return -inner
        return getattr(gradviz, expr[1])(inner)  # functions accept plain numbers too
    if kind == "pow":
        base = build(expr[2], xs)
        return (base if isinstance(base, Value) else Value(base)) ** expr[1]
    a, b = build(expr[2], xs), build(expr[3], xs)
    if not isinstance(a, Value) and not isinstance(b, Value):
        a = Value(a)
    return {
        "+": lambda: a + b,
        "-": lambda: a - b,
        "*": lambda: a * b,
        "/": lambda: a / b,
        "**": lambda: a ** (b if isinstance(b, Value) else Value(b)),
    }[expr[1]]()


def build_value(expr: tuple, xs: list[Value]) -> Value:
    out = build(expr, xs)
    return out if isinstance(out, Value) else Value(out)


# -- the independent reference ---------------------------------------------------------------


class OffDomain(Exception):
    """The point is too close to a kink, a pole or the edge of a domain to difference."""


MARGIN = 1e-2  # how far every kink/pole/domain edge must be from the point
BOUND = 1e4  # every intermediate stays below this, so finite differences stay accurate


class Reference:
    """Evaluates an expression with floats and the math module. Detached subexpressions
    keep the value they had at the base point (they are constants to the derivative)."""

    def __init__(self, expr: tuple) -> None:
        self.expr = expr
        self.frozen: list[float] | None = None

    def __call__(self, *xs: float) -> float:
        self._detached: list[float] = []
        result = self._eval(self.expr, xs)
        if self.frozen is None:
            self.frozen = self._detached
        return result

    def _eval(self, expr: tuple, xs: tuple[float, ...]) -> float:
        kind = expr[0]
        if kind == "x":
            return xs[expr[1]]
        if kind == "k":
            return expr[1]
        if kind == "f":
            v = self._eval(expr[2], xs)
            return self._check(self._unary(expr[1], v))
        if kind == "pow":
            v, n = self._eval(expr[2], xs), expr[1]
            self._away(v if not n.is_integer() else abs(v) if n < 0 else math.inf)
            return self._check(v**n)
        a, b = self._eval(expr[2], xs), self._eval(expr[3], xs)
        sym = expr[1]
        if sym == "/":
            self._away(abs(b))
        if sym == "**":
            self._away(a)
        ops: dict[str, Callable[[], float]] = {
            "+": lambda: a + b,
            "-": lambda: a - b,
            "*": lambda: a * b,
            "/": lambda: a / b,
            "**": lambda: a**b,
        }
        return self._check(ops[sym]())

    def _unary(self, name: str, v: float) -> float:
        if name == "detach":
            self._detached.append(v)
            return v if self.frozen is None else self.frozen[len(self._detached) - 1]
        if name in ("relu", "abs"):
            self._away(abs(v))
        if name in ("log", "sqrt"):
            self._away(v)
        if name == "exp":
            self._check(v)
            return math.exp(v)
        return {
            "log": math.log,
            "tanh": math.tanh,
            "sigmoid": lambda v: 1.0 / (1.0 + math.exp(-v)),
            "relu": lambda v: max(v, 0.0),
            "sin": math.sin,
            "cos": math.cos,
            "abs": abs,
            "sqrt": math.sqrt,
            "neg": lambda v: -v,
        }[name](v)

    @staticmethod
    def _away(distance: float) -> None:
        if not distance > MARGIN:
            raise OffDomain

    @staticmethod
    def _check(v: float) -> float:
        if not abs(v) < BOUND:
            raise OffDomain
        return v


def reference_and_gradient(expr: tuple, xs: list[float]) -> tuple[float, list[float], list[float]]:
    """f(xs), its gradient by central differences, and each difference's own error estimate
    (two step sizes apart: Richardson), large where f curves fast; rejects points near trouble."""
    f = Reference(expr)

    def central(i: int, h: float) -> float:
        up, down = list(xs), list(xs)
        up[i] += h
        down[i] -= h
        return (f(*up) - f(*down)) / (2 * h)

    try:
        value = f(*xs)
        grads, errors = [], []
        for i in range(len(xs)):
            h = 1e-6 * max(1.0, abs(xs[i]))
            coarse, fine = central(i, 2 * h), central(i, h)
            grads.append(fine)
            errors.append(abs(coarse - fine))
    except (OffDomain, OverflowError, ValueError, ZeroDivisionError):
        assume(False)
    return value, grads, errors


# -- properties ----------------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(expressions, points)
# Found by hypothesis: steep enough that a fixed tolerance blamed the finite difference's error.
@example(("f", "sin", ("pow", -2.0, ("f", "cos", ("x", 0)))), [1.5, 0.0, 0.0])
def test_gradients_match_finite_differences(expr: tuple, xs: list[float]) -> None:
    value, expected, errors = reference_and_gradient(expr, xs)
    assume(all(abs(g) < 1e4 for g in expected))  # steep spots are for the cases above
    leaves = [Value(x, f"x{i}") for i, x in enumerate(xs)]
    out = build_value(expr, leaves)
    out.backward()
    assert math.isclose(out.data, value, rel_tol=1e-9, abs_tol=1e-9)
    for leaf, g, error in zip(leaves, expected, errors, strict=True):
        tolerance = 1e-5 * max(1.0, abs(g)) + 2 * error
        assert abs(leaf.grad - g) <= tolerance, (leaf.label, leaf.grad, g, error)


def _bits(x: object) -> bytes:
    """The exact float64 bits (so -0.0 != 0.0); every NaN alike, since IEEE leaves the sign
    and payload of a NaN result to the hardware (x86 keeps the first operand's)."""
    return np.where(np.isnan(x), np.nan, np.asarray(x, dtype=np.float64)).tobytes()


batches = st.lists(
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=4, max_size=4),
    min_size=LEAVES,
    max_size=LEAVES,
)


@settings(max_examples=150, deadline=None)
@given(expressions, batches)
def test_batched_equals_separate_runs_of_one_sample_bit_for_bit(expr: tuple, columns) -> None:
    # Any numbers at all, nan and inf included: whatever a run of one sample gives, the batch
    # gives. (A run on plain floats uses math where a batch uses numpy: each op within 1 ulp,
    # tests/test_ops.py; through a whole graph cancellation can make that any relative
    # difference, so the bit-for-bit property is the one-sample batch's.)
    leaves = [Value(np.array(col)) for col in columns]
    out = build_value(expr, leaves)
    out.backward()
    for i in range(len(columns[0])):
        single = [Value(np.array([col[i]])) for col in columns]
        ref = build_value(expr, single)
        ref.backward()
        assert _bits(np.broadcast_to(out.data, (len(columns[0]),))[i]) == _bits(
            np.broadcast_to(ref.data, (1,))[0]
        )
        for batched, scalar in zip(leaves, single, strict=True):
            got = np.broadcast_to(batched.grad, (len(columns[0]),))[i]
            assert _bits(got) == _bits(np.broadcast_to(scalar.grad, (1,))[0])


@settings(max_examples=100, deadline=None)
@given(expressions, points, points)
def test_re_evaluated_graph_equals_a_fresh_one(expr: tuple, old: list[float], new: list[float]):
    leaves = [Value(x) for x in old]
    graph = Graph(build_value(expr, leaves))
    graph.backward()
    graph.backward()  # twice: grads are reset, not accumulated
    for leaf, x in zip(leaves, new, strict=True):
        leaf.data = x
    graph.forward()
    graph.backward()
    fresh_leaves = [Value(x) for x in new]
    fresh = build_value(expr, fresh_leaves)
    fresh.backward()
    fresh_nodes = topological_order(fresh)
    assert len(fresh_nodes) == len(graph.nodes)
    for kept, built in zip(graph.nodes, fresh_nodes, strict=True):
        assert _bits(kept.data) == _bits(built.data)
        assert _bits(kept.grad) == _bits(built.grad)
