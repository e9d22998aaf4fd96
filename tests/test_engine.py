"""The engine against references it did not produce: a hand-derived example, central
finite differences of the math module's functions, closed forms, and IEEE rules."""

from __future__ import annotations

import gc
import math
import random
import sys
from collections.abc import Callable

import numpy as np
import pytest

import gradviz
from gradviz.checking import gradcheck
from gradviz.engine import UNARY_OPS, Graph, Value, backpropagate, topological_order

# -- helpers -------------------------------------------------------------------------------


def central_difference(f: Callable[..., float], point: tuple[float, ...], i: int) -> float:
    """d f / d x_i at `point`, by the central difference (error ~ h² f''')."""
    h = 1e-6 * max(1.0, abs(point[i]))
    up = list(point)
    down = list(point)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


def bits(x: object) -> bytes:
    """The exact float64 bits (so -0.0 != 0.0); every NaN alike, since IEEE leaves the sign
    and payload of a NaN result to the hardware (x86 keeps the first operand's)."""
    return np.where(np.isnan(x), np.nan, np.asarray(x, dtype=np.float64)).tobytes()


# -- the classic hand-derived example ------------------------------------------------------


def test_classic_hand_derived_example() -> None:
    a, b, c, f = Value(2.0, "a"), Value(-3.0, "b"), Value(10.0, "c"), Value(-2.0, "f")
    e = a * b
    d = e + c
    L = d * f
    L.backward()
    assert (L.data, e.data, d.data) == (-8.0, -6.0, 4.0)
    assert L.grad == 1.0
    # dL/dd = f, dL/df = d, dL/de = dL/dd·1, dL/dc = dL/dd·1, dL/da = dL/de·b, dL/db = dL/de·a
    assert (d.grad, f.grad, e.grad, c.grad) == (-2.0, 4.0, -2.0, -2.0)
    assert (a.grad, b.grad) == (6.0, -4.0)


# -- every primitive and composition against central finite differences ---------------------

ANYWHERE = (-2.7, -1.3, -0.55, -0.2, 0.15, 0.45, 0.9, 1.6, 2.2, 3.1)
POSITIVE = (0.05, 0.3, 0.7, 1.0, 1.9, 3.3, 7.5)
NONZERO = (-2.4, -0.9, -0.3, 0.25, 0.8, 1.7, 3.2)
PAIRS = ((2.0, -3.0), (-1.5, 0.4), (0.3, 2.5), (-2.2, -0.7), (1.1, 1.9), (3.4, -0.25))
POSITIVE_BASE_PAIRS = ((2.0, -3.0), (0.4, 1.5), (0.3, 2.5), (1.7, -0.7), (3.1, 0.5), (0.9, 4.0))


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


# name: (engine function of Values, the same function on floats via math, points)
UNARY_CASES: dict[str, tuple[Callable, Callable, tuple[float, ...]]] = {
    "exp": (lambda a: a.exp(), math.exp, ANYWHERE),
    "log": (lambda a: a.log(), math.log, POSITIVE),
    "tanh": (lambda a: a.tanh(), math.tanh, ANYWHERE),
    "sigmoid": (lambda a: a.sigmoid(), _sigmoid, (*ANYWHERE, -30.0, 25.0)),
    "relu": (lambda a: a.relu(), lambda x: max(x, 0.0), ANYWHERE),
    "sin": (lambda a: a.sin(), math.sin, ANYWHERE),
    "cos": (lambda a: a.cos(), math.cos, ANYWHERE),
    "abs": (lambda a: a.abs(), abs, ANYWHERE),
    "sqrt": (lambda a: a.sqrt(), math.sqrt, POSITIVE),
    # the activations, by their textbook definitions
    "softplus": (lambda a: a.softplus(), lambda x: math.log(1 + math.exp(x)), ANYWHERE),
    "leaky_relu": (lambda a: a.leaky_relu(), lambda x: x if x > 0 else 0.01 * x, ANYWHERE),
    "elu": (lambda a: a.elu(), lambda x: x if x > 0 else math.exp(x) - 1, ANYWHERE),
    "gelu": (
        lambda a: a.gelu(),
        lambda x: 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
        ANYWHERE,
    ),
    "silu": (lambda a: a.silu(), lambda x: x * _sigmoid(x), ANYWHERE),
    "pow2": (lambda a: a**2, lambda x: x**2, ANYWHERE),
    "pow3": (lambda a: a**3, lambda x: x**3, ANYWHERE),
    "pow-1": (lambda a: a**-1, lambda x: x**-1, NONZERO),
    "pow-2": (lambda a: a**-2, lambda x: x**-2, NONZERO),
    "pow0.5": (lambda a: a**0.5, lambda x: x**0.5, POSITIVE),
    "pow-1.5": (lambda a: a**-1.5, lambda x: x**-1.5, POSITIVE),
    "pow2.7": (lambda a: a**2.7, lambda x: x**2.7, POSITIVE),
    "neg": (lambda a: -a, lambda x: -x, ANYWHERE),
    "2*a": (lambda a: 2 * a, lambda x: 2 * x, ANYWHERE),
    "a*2": (lambda a: a * 2, lambda x: x * 2, ANYWHERE),
    "1-a": (lambda a: 1 - a, lambda x: 1 - x, ANYWHERE),
    "a-1": (lambda a: a - 1, lambda x: x - 1, ANYWHERE),
    "3+a": (lambda a: 3 + a, lambda x: 3 + x, ANYWHERE),
    "1/a": (lambda a: 1 / a, lambda x: 1 / x, NONZERO),
    "a/4": (lambda a: a / 4, lambda x: x / 4, ANYWHERE),
    "2**a": (lambda a: 2**a, lambda x: 2**x, ANYWHERE),
    "0.5**a": (lambda a: 0.5**a, lambda x: 0.5**x, ANYWHERE),
}

BINARY_CASES: dict[str, tuple[Callable, Callable, tuple[tuple[float, float], ...]]] = {
    "a+b": (lambda a, b: a + b, lambda x, y: x + y, PAIRS),
    "a*b": (lambda a, b: a * b, lambda x, y: x * y, PAIRS),
    "a-b": (lambda a, b: a - b, lambda x, y: x - y, PAIRS),
    "a/b": (lambda a, b: a / b, lambda x, y: x / y, PAIRS),
    "a**b": (lambda a, b: a**b, lambda x, y: x**y, POSITIVE_BASE_PAIRS),
}

UNARY_POINTS = [
    pytest.param(name, x, id=f"{name}@{x}")
    for name, (_, _, points) in UNARY_CASES.items()
    for x in points
    # relu and abs have a kink at 0; the points above keep clear of it.
]
BINARY_POINTS = [
    pytest.param(name, x, y, id=f"{name}@{x},{y}")
    for name, (_, _, points) in BINARY_CASES.items()
    for x, y in points
]


@pytest.mark.parametrize(("name", "x"), UNARY_POINTS)
def test_unary_against_finite_differences(name: str, x: float) -> None:
    build, reference, _ = UNARY_CASES[name]
    a = Value(x, "a")
    out = build(a)
    out.backward()
    assert type(out.data) is float
    assert math.isclose(out.data, reference(x), rel_tol=1e-14, abs_tol=1e-300)
    expected = central_difference(reference, (x,), 0)
    assert math.isclose(a.grad, expected, rel_tol=1e-6, abs_tol=1e-9), (a.grad, expected)


@pytest.mark.parametrize(("name", "x", "y"), BINARY_POINTS)
def test_binary_against_finite_differences(name: str, x: float, y: float) -> None:
    build, reference, _ = BINARY_CASES[name]
    a, b = Value(x, "a"), Value(y, "b")
    out = build(a, b)
    out.backward()
    assert math.isclose(out.data, reference(x, y), rel_tol=1e-14)
    for i, leaf in enumerate((a, b)):
        expected = central_difference(reference, (x, y), i)
        assert math.isclose(leaf.grad, expected, rel_tol=1e-6, abs_tol=1e-9), (i, leaf.grad)


def test_every_unary_primitive_is_covered_and_reachable_both_ways() -> None:
    # Every op in the table has a finite-difference case above (detach: its own tests).
    assert set(UNARY_OPS) - {"detach"} <= set(UNARY_CASES)
    for name, op in UNARY_OPS.items():
        x = Value(0.7)
        by_method = getattr(x, name)()
        by_function = getattr(gradviz, name)(x)
        assert by_method.op is op and by_function.op is op
        assert by_method.parents == by_function.parents == (x,)
        assert bits(by_method.data) == bits(by_function.data)


def test_kink_conventions_are_zero() -> None:
    # relu'(0) and abs'(0): the engine picks 0 (a subgradient), as its formulas say.
    for build in (lambda a: a.relu(), lambda a: a.abs()):
        a = Value(0.0)
        build(a).backward()
        assert a.grad == 0.0


# -- graph shape: repeats, sharing, detach, repeated backward -------------------------------


def test_x_times_x_has_two_edges_and_grad_2x() -> None:
    x = Value(-3.5, "x")
    y = x * x
    assert y.parents == (x, x)
    assert y.parents[0] is x and y.parents[1] is x
    y.backward()
    assert x.grad == 2 * -3.5


def test_a_node_used_in_three_places_sums_its_credit() -> None:
    a, b = Value(0.8, "a"), Value(-1.5, "b")
    L = a * b + a.exp() + a.tanh()  # a feeds a*b, exp(a) and tanh(a)
    L.backward()
    by_hand = b.data + math.exp(0.8) + (1 - math.tanh(0.8) ** 2)
    assert math.isclose(a.grad, by_hand, rel_tol=1e-15)
    assert b.grad == 0.8


def test_detach_passes_data_but_no_credit() -> None:
    x = Value(1.5, "x")
    y = x * x.detach()  # d/dx = x (the detached copy is a constant)
    y.backward()
    assert y.data == 2.25
    assert x.grad == 1.5
    assert y.a is x and y.b.op.name == "detach" and y.b.parents == (x,)


def test_detach_blocks_even_an_infinite_credit() -> None:
    # inf · 0 would be nan: detach must not multiply, it must not pass anything.
    x = Value(2.0, "x")
    out = x.detach() * math.inf
    out.backward()
    assert out.a.grad == math.inf
    assert x.grad == 0.0
    assert gradviz.detach(x).data == 2.0


def test_backward_twice_adds_the_grads_and_zero_grad_empties_them() -> None:
    # `.grad` accumulates, as in micrograd and PyTorch: a second call adds the same again.
    a, b = Value(0.3, "a"), Value(-1.2, "b")
    L = (a * b).tanh() + a**2
    L.backward()
    first = [(n.grad) for n in topological_order(L)]
    L.backward()
    assert [(n.grad) for n in topological_order(L)] == [2 * g for g in first]
    by_hand = b.data * (1 - math.tanh(0.3 * -1.2) ** 2) + 0.6
    assert math.isclose(a.grad, 2 * by_hand, rel_tol=1e-15)
    L.zero_grad()
    assert all(n.grad == 0.0 for n in topological_order(L))
    L.backward()
    assert [(n.grad) for n in topological_order(L)] == first


def test_the_lessons_two_losses_add_up_to_seven() -> None:
    # w=2, x=3: dl1/dw = x = 3 and dl2/dw = 2w = 4, so w.grad = 3 + 4 = 7.
    w, x = Value(2.0, "w"), Value(3.0, "x")
    l1 = w * x
    l2 = w * w
    l1.backward()
    assert (w.grad, x.grad) == (3.0, 2.0)
    l2.backward()
    assert (w.grad, x.grad) == (7.0, 2.0)
    l2.zero_grad()  # w's graph through l2: w and l2, not x
    assert (w.grad, x.grad, l2.grad) == (0.0, 2.0, 0.0)


def test_a_second_backward_through_a_shared_node_counts_only_its_own_credit() -> None:
    # h = w·x is used by both losses; micrograd would pass h's stale grad on again
    # (w.grad = 21). The right total is dl1/dw + dl2/dw = 2·3 + 3·3 = 15.
    w, x = Value(2.0, "w"), Value(3.0, "x")
    h = w * x
    l1, l2 = h * 2.0, h * 3.0
    l1.backward()
    l2.backward()
    assert (w.grad, h.grad) == (15.0, 5.0)


def test_accumulation_keeps_batches_apart_and_graph_backward_starts_from_zero() -> None:
    x = Value(np.array([1.0, 2.0]), "x")
    L = x * x
    L.backward()
    L.backward()
    assert list(x.grad) == [4.0, 8.0]
    graph = Graph(L)
    graph.backward()  # a fresh pass, for re-evaluation with new leaf data
    assert list(x.grad) == [2.0, 4.0]
    graph.zero_grad()
    assert x.grad == 0.0


def test_backward_from_a_bigger_graph_adds_to_the_shared_part() -> None:
    a = Value(2.0, "a")
    L = a * 3.0
    L.backward()
    M = L + a
    M.backward()  # dM/da = 4, dM/dL = 1, added to dL/da = 3, dL/dL = 1
    assert (a.grad, L.grad) == (7.0, 2.0)


@pytest.mark.slow
def test_million_node_chain_at_the_default_recursion_limit() -> None:
    # y_k = y_{k-1} + x: a chain a million nodes deep, where recursion would need a
    # million frames. Closed form: y = y0 + n·x, dy/dx = n, dy/dy0 = 1 (all exact).
    limit = sys.getrecursionlimit()
    assert limit < 10_000  # nobody raised it for us
    n = 1_000_000
    x, y0 = Value(0.5, "x"), Value(1.0, "y0")
    y = y0
    for _ in range(n):
        y = y + x
    y.backward()
    assert sys.getrecursionlimit() == limit
    assert y.data == 1.0 + n * 0.5
    assert (x.grad, y0.grad) == (float(n), 1.0)


# -- non-finite numbers are results, not crashes -------------------------------------------

NONFINITE_CASES = {
    # name: (build, expected data, expected grad of the leaf `a`)
    "log(0)": (lambda a: a.log(), 0.0, -math.inf, math.inf),
    "1/0": (lambda a: 1 / a, 0.0, math.inf, -math.inf),
    "exp(1000)": (lambda a: a.exp(), 1000.0, math.inf, math.inf),
    "sqrt(-1)": (lambda a: a.sqrt(), -1.0, math.nan, math.nan),
    "0**-1": (lambda a: a**-1, 0.0, math.inf, -math.inf),
    "(-8)**(1/3)": (lambda a: a ** (1 / 3), -8.0, math.nan, math.nan),
    "(-8)**Value(1/3)": (lambda a: a ** Value(1 / 3), -8.0, math.nan, math.nan),
    "1e200*1e200": (lambda a: a * Value(1e200), 1e200, math.inf, 1e200),
    "1e308+1e308": (lambda a: a + 1e308, 1e308, math.inf, 1.0),
    "2**1e4": (lambda a: 2**a, 1e4, math.inf, math.inf),
    "tanh(inf)": (lambda a: (a * 1e308 * 10).tanh(), 1.0, 1.0, 0.0),
}


def _same_float(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or x == y


@pytest.mark.parametrize("name", NONFINITE_CASES)
def test_non_finite_results_are_ieee_floats_never_exceptions(name: str) -> None:
    build, x, data, grad = NONFINITE_CASES[name]
    a = Value(x, "a")
    out = build(a)
    out.backward()
    assert _same_float(out.data, data), out.data
    assert _same_float(a.grad, grad), a.grad
    for node in topological_order(out):  # never complex, never numpy scalars
        assert type(node.data) is float and type(node.grad) is float


def test_non_finite_grads_flow_as_ieee_values() -> None:
    # exp(1000)·0: data nan (inf·0); d/da = 0·exp(1000) = nan; d/db = exp(1000) = inf.
    a, b = Value(1000.0), Value(0.0)
    out = a.exp() * b
    out.backward()
    assert math.isnan(out.data) and math.isnan(a.grad) and b.grad == math.inf


# -- batched data: the numbers of separate scalar runs, within rounding ---------------------
# A scalar run computes exp, log and tanh with `math`, a batch with numpy: each may round the
# last bit differently (<= 1 ulp per op, tests/test_ops.py); every other op agrees exactly.
# Through a whole graph those differences stay far below 1e-12 relative.


def every_op(a: Value, b: Value, c: Value) -> Value:
    """A graph using every primitive and composition, on any real inputs."""
    u = a * b + c
    v = u.tanh() + a.sigmoid() - b.relu() + c.sin() * a.cos() + abs(b) + (a * a + 1).sqrt()
    v = v + (c * c + 0.5).log() + (a * 0.3).exp() + gradviz.tanh(c) * gradviz.relu(a)
    w = v / (b * b + 1) + 2 * a - (1 - c) + 1 / (c * c + 2) + 2**a + (a * a + 1) ** b
    return w + a**3 + c**0.5 + b.detach() * c + (-a) + a * a + b**-1


SAMPLES = 64


def _batch(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    columns = rng.normal(scale=2.0, size=(3, SAMPLES))
    # A few awkward samples: zeros (kinks, 1/0), negatives under sqrt, overflowing exp.
    columns[:, :4] = [[0.0, -1.0, 2500.0, -0.0], [0.0, 0.0, -3.0, 1e-300], [-1.0, 4.0, 0.0, 9.0]]
    return columns


def near(x: float, y: float, rel: float = 1e-12) -> bool:
    """The same float up to rounding: equal (inf and nan included), or within `rel`."""
    x, y = float(x), float(y)
    if x == y or (math.isnan(x) and math.isnan(y)):
        return True
    return math.isfinite(x) and math.isfinite(y) and abs(x - y) <= rel * max(abs(x), abs(y))


def _check_batched_equals_scalar(out, leaves, columns) -> None:
    for i in range(SAMPLES):
        single = [Value(float(col[i])) for col in columns]
        ref = every_op(*single)
        ref.backward()
        assert near(out.data[i], ref.data), i
        for batched_leaf, scalar_leaf in zip(leaves, single, strict=True):
            assert near(batched_leaf.grad[i], scalar_leaf.grad), i


def test_batched_data_gives_the_scalar_numbers_within_rounding() -> None:
    columns = _batch(0)
    leaves = [Value(col) for col in columns]
    out = every_op(*leaves)
    out.backward()
    assert out.data.shape == (SAMPLES,)
    assert all(leaf.grad.shape == (SAMPLES,) for leaf in leaves)
    _check_batched_equals_scalar(out, leaves, columns)


def test_batched_exponents_give_exactly_the_scalar_numbers() -> None:
    # numpy computes a**2, a**0.5, a**-1 exactly when the exponent is one number (a scalar
    # run) but by a vectorised pow, off by an ulp at times, for an array of exponents. The
    # exponents and exponents-minus-one below hit those shortcuts (found by hypothesis).
    rng = np.random.default_rng(5)
    bases = np.exp(rng.uniform(-700, 700, 280))
    exponents = np.resize([-1.0, 0.0, 0.5, 1.0, 2.0, 1.5, 3.0], 280)
    a, b = Value(bases), Value(exponents)
    for build in (lambda a, b: a**b, lambda a, b: 2.5**b * a**2):
        out = build(a, b)
        out.zero_grad()  # a and b are shared by both builds: their grads would add up
        out.backward()
        for i in range(bases.size):
            x, y = Value(float(bases[i])), Value(float(exponents[i]))
            ref = build(x, y)
            ref.backward()
            assert bits(out.data[i]) == bits(ref.data), (bases[i], exponents[i])
            assert bits(a.grad[i]) == bits(x.grad), (bases[i], exponents[i])
            assert bits(b.grad[i]) == bits(y.grad), (bases[i], exponents[i])


def test_batched_grads_of_constants_are_per_sample() -> None:
    a = Value(np.array([1.0, 2.0, 3.0]))
    k = Value(5.0)
    (a * k).backward()
    assert np.array_equal(k.grad, [1.0, 2.0, 3.0]) and np.array_equal(a.grad, [5.0, 5.0, 5.0])


def _fresh_nodes(columns) -> list[Value]:
    out = every_op(*[Value(c) for c in columns])
    out.backward()
    return topological_order(out)


@pytest.mark.parametrize("batched", [False, True], ids=["scalar", "batched"])
def test_graph_re_evaluated_with_new_leaf_data_equals_a_fresh_graph(batched: bool) -> None:
    old, new = _batch(1), _batch(2)
    if not batched:
        old, new = [float(c[10]) for c in old], [float(c[10]) for c in new]
    leaves = [Value(c, label) for c, label in zip(old, "abc", strict=True)]
    graph = Graph(every_op(*leaves))
    graph.backward()
    nodes_before = list(graph.nodes)
    for leaf, column in zip(leaves, new, strict=True):
        leaf.data = column
    graph.forward()
    graph.backward()
    assert graph.nodes == nodes_before  # nothing rebuilt
    fresh = _fresh_nodes(new)
    assert len(fresh) == len(graph.nodes)
    for kept, built in zip(graph.nodes, fresh, strict=True):
        assert kept.op is built.op
        assert bits(kept.data) == bits(built.data)
        assert bits(kept.grad) == bits(built.grad)
    assert set(leaves) <= set(graph.leaves)


# -- memory: no per-node reference cycles ------------------------------------------------


def _live_values() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, Value))


def test_dropped_graphs_are_freed_without_the_cycle_collector() -> None:
    gc.collect()
    gc.disable()
    try:
        before = _live_values()
        x = Value(np.linspace(-1, 1, 5))
        y = every_op(x, x * 2, Value(0.5))
        for _ in range(10_000):
            y = y * 1.0001 + 0.1
        graph = Graph(y)
        graph.backward()
        assert _live_values() > before + 40_000  # the graph is alive and tracked
        del x, y, graph
        assert _live_values() == before  # freed by reference counting alone
        assert gc.collect() == 0  # and there was no cycle for the collector to find

        class Node:  # control: a cycle the collector does find (the check can fail)
            pass

        cyclic = Node()
        cyclic.me = cyclic
        del cyclic
        assert gc.collect() > 0
    finally:
        gc.enable()


def test_a_shallow_graph_walked_by_backward_leaves_no_cycle() -> None:
    """The deep graph above is ordered on an explicit stack; a shallow one recursively,
    by a closure that refers to itself: that walk must not leave a cycle behind either."""
    gc.collect()
    gc.disable()
    try:
        before = _live_values()
        x, w = Value(0.5), Value(-2.0)
        loss = (x * w + 1.0).sigmoid() * x
        loss.backward()
        order = topological_order(loss)
        assert len(order) == 7 and _live_values() == before + 7  # x is used twice
        del x, w, loss, order
        assert _live_values() == before
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_power_limits_that_the_bare_formulas_miss() -> None:
    """a^0 is constant (slope 0 even at a = 0, where 0·0⁻¹ is nan), and d(a^b)/db → 0 as
    a → 0 for b > 0. References: the functions are constant / identically 0 nearby, so a
    central difference is exact."""
    h = 1e-6
    x = Value(0.0)
    y = x**0
    y.backward()
    assert x.grad == 0.0 == ((0.0 + h) ** 0 - (0.0 - h) ** 0) / (2 * h)

    a, b = Value(0.0), Value(2.0)
    (a**b).backward()
    assert b.grad == 0.0 == (0.0 ** (2.0 + h) - 0.0 ** (2.0 - h)) / (2 * h)
    assert a.grad == 0.0  # 2·0¹

    a, b = Value(5.0), Value(0.0)
    (a**b).backward()
    assert a.grad == 0.0


# -- drawn as typed: subtraction, division and negation are ops of their own -------------


def test_subtraction_division_and_negation_are_one_node_each() -> None:
    a, b = Value(3.0, "a"), Value(-2.0, "b")
    assert [(o.op.name, o.parents) for o in (a - b, a / b, -a)] == [
        ("sub", (a, b)),
        ("div", (a, b)),
        ("neg", (a,)),
    ]
    for out in (2.0 - a, 2.0 / a):  # a plain number becomes a constant input, in place
        assert out.a.is_leaf and out.a.data == 2.0 and out.b is a
    for out in (a - 2.0, a / 2.0):
        assert out.a is a and out.b.data == 2.0
    assert (a - 2.0).data == 1.0 and (2.0 / a).data == 2.0 / 3.0 and (-a).data == -3.0


@pytest.mark.parametrize(("a", "b"), [(3.0, -2.0), (0.5, 4.0), (-1.5, 0.25), (1e-3, 7.0)])
def test_subtraction_and_division_match_the_hand_derivations(a: float, b: float) -> None:
    x, y = Value(a, "x"), Value(b, "y")
    (x - y).backward()
    assert (x.grad, y.grad) == (1.0, -1.0)  # d(a-b)/da = 1, d(a-b)/db = -1
    x, y = Value(a, "x"), Value(b, "y")
    (x / y).backward()
    assert x.grad == pytest.approx(1 / b, rel=1e-15)  # d(a/b)/da = 1/b
    assert y.grad == pytest.approx(-a / b**2, rel=1e-15)  # d(a/b)/db = -a/b²
    x = Value(a, "x")
    (-x).backward()
    assert x.grad == -1.0
    x, y = Value(a, "x"), Value(b, "y")
    rows = gradcheck((x - y) * (x / y) + -(y / x))  # against finite differences
    assert [r.status for r in rows] == ["pass", "pass"]


@pytest.mark.parametrize("a", [1.0, -1.0, 0.0, -0.0, math.inf, math.nan])
@pytest.mark.parametrize("b", [0.0, -0.0])
def test_division_by_zero_gives_what_ieee_says_never_an_exception(a: float, b: float) -> None:
    x, y = Value(a, "x"), Value(b, "y")
    out = x / y
    out.backward()
    with np.errstate(all="ignore"):  # numpy's own division, independent of the engine's
        expected = (np.divide(a, b), np.divide(1.0, b), np.divide(-a, np.multiply(b, b)))
    for got, want in zip((out.data, x.grad, y.grad), expected, strict=True):
        assert repr(got) == repr(float(want))


def test_tanh_written_out_with_minus_and_divide_gives_tanhs_gradients() -> None:
    # samples/tanh_by_hand.expr: o = (e - 1)/(e + 1), e = exp(2n), is tanh(n); dtanh/dn =
    # 1 - o² = 0.5 at the lesson's numbers, so do/dw1 = 0.5·x1 = 1 and do/db = 0.5
    from pathlib import Path

    from gradviz.expr import parse_program

    samples = Path(__file__).resolve().parent.parent / "samples"
    by_hand = parse_program((samples / "tanh_by_hand.expr").read_text(encoding="utf-8"))
    by_hand.output.backward()
    assert {op.op.name for op in topological_order(by_hand.output) if op.op} >= {"sub", "div"}
    assert by_hand.output.data == pytest.approx(math.sqrt(0.5), rel=1e-15)
    grads = {name: leaf.grad for name, leaf in by_hand.leaves.items()}
    assert grads == pytest.approx({"x1": -1.5, "w1": 1.0, "x2": 0.5, "w2": 0.0, "b": 0.5})


def test_every_expression_function_is_a_plain_method_of_value() -> None:
    """v.exp(), v.gelu(), ...: one method per row of UNARY_OPS, each making that op's node with
    the table's value and local derivative; written in engine.py, not generated from text."""
    import inspect

    import gradviz.engine as engine

    x = Value(0.7, "x")
    for name, op in engine.UNARY_OPS.items():
        method = getattr(Value, name)
        assert method.__doc__.startswith(f"{op.name}(x):")
        node = method(x)
        assert node.op is op and node.parents == (x,)
        assert node.data == op.forward(0.7) and node.locals == op.local(node.data, 0.7)
        assert getattr(engine, name)(x).op is op  # the module's function too
    for name in ("__add__", "__rsub__", "__mul__", "__truediv__", "__neg__", "__pow__", "tanh"):
        assert inspect.getsourcefile(getattr(Value, name)) == engine.__file__, name


def _random_graph(rng: random.Random, depth: int) -> tuple[list[Value], Value]:
    """Leaves and a random graph over them in which nodes are used several times."""
    leaves = [Value(rng.uniform(-1.5, 1.5), label=f"x{i}") for i in range(4)]
    pool: list[Value] = list(leaves)
    for _ in range(depth):  # each on the last node: `depth` deep
        a, b = pool[-1], rng.choice(pool)
        kind = rng.randrange(6)
        node = (a + b, a * b, a - b, a.tanh(), (a * 0.5).sigmoid(), a * 2.0 + b)[kind]
        pool.append(node)
    return leaves, sum(pool[-5:], pool[0])


@pytest.mark.parametrize("depth", [5, 40, 3000])  # 3000: past recursion, the stack walk
def test_backward_walks_the_same_order_as_the_naming_order(depth: int) -> None:
    """`Value.backward` must visit in `topological_order`'s order: grads are sums whose
    rounding depends on the order in which credits arrive, so it and `backpropagate` must
    give the same bits, and a second call must add exactly the first's numbers."""
    rng = random.Random(depth)
    leaves, out = _random_graph(rng, depth)
    order = topological_order(out)
    longest: dict[Value, int] = {}
    for node in order:
        longest[node] = 1 + max((longest[p] for p in node.parents), default=0)
    assert (longest[out] > sys.getrecursionlimit()) == (depth > 1000)
    backpropagate(order)
    reference = [bits(node.grad) for node in order]
    for node in order:
        node.grad = 0.0
    out.backward()
    assert [bits(node.grad) for node in order] == reference
    first = [leaf.grad for leaf in leaves]
    out.backward()  # accumulates: every leaf's grad doubles exactly
    assert [bits(leaf.grad) for leaf in leaves] == [bits(2 * g) for g in first]


# -- a number operand (`x * 2.0`): a Constant input, credited like any -------------------


def _graph_with_numbers(rng: random.Random, depth: int) -> tuple[list[Value], Value]:
    """A random graph where every op meets plain numbers on either side (floats and ints),
    as a learner's loop does with its inputs and targets."""
    leaves = [Value(rng.uniform(-1, 1), label) for label in "xyz"]
    pool = list(leaves)
    for _ in range(depth):
        a, b = pool[-1], rng.choice(pool)
        k = rng.choice([0.5, -1.5, 2.0, 3])
        kind = rng.randrange(9)
        node = (
            a * k + b,
            k * a - b,
            (a - k).tanh(),
            (k - a) * b,
            a / 4.0 + b,
            k / (2.0 + a * a),
            (k + a).sigmoid() * b,
            a + k,
            -a * 0.5 + b,
        )[kind]
        pool.append(node)
    return leaves, sum(pool[-5:], pool[0])


@pytest.mark.parametrize("depth", [5, 40, 3000])  # 3000: past recursion, the stack walk
def test_backward_credits_numbers_kept_on_nodes_as_their_constants(depth: int) -> None:
    """`x * 2.0` makes the 2.0 a Constant input. After `backward()` every node, the numbers'
    Constants included, must hold the bits the pass over the same graph gives, and a second
    call must add exactly the first's numbers."""
    built, reference = (_graph_with_numbers(random.Random(depth), depth)[1] for _ in "ab")
    order = topological_order(reference)  # the plain form: a Constant per number
    backpropagate(order)
    expected = [bits(node.grad) for node in order]
    built.backward()  # walks the nodes as built, the numbers still on them
    nodes = topological_order(built)  # now each number becomes its Constant, with its credit
    assert [n.op for n in nodes] == [n.op for n in order]
    assert [bits(n.data) for n in nodes] == [bits(n.data) for n in order]
    assert [bits(n.grad) for n in nodes] == expected
    twice = _graph_with_numbers(random.Random(depth), depth)[1]
    twice.backward()
    twice.backward()
    assert [bits(n.grad) for n in topological_order(twice)] == [bits(2 * n.grad) for n in order]


def test_a_number_on_a_node_is_read_as_a_constant_input() -> None:
    x = Value(3.0, "x")
    products = [x * 2.0, 2.0 * x, x * 2]  # float or int, either side
    for out in products:
        out.backward()
    for out, side in zip(products, (1, 0, 1), strict=True):
        assert out.op is gradviz.ops.MUL and len(out.parents) == 2
        number = out.parents[side]
        assert type(number) is gradviz.Constant and number.data == 2.0
        assert number.grad == 3.0  # ∂(2x)/∂2 = x
        assert out.parents[side] is number and out._prev == {x, number}
        assert (out.a, out.b) == out.parents and out._op == "*"
    assert x.grad == 6.0  # three times ∂(2x)/∂x = 2
    difference = 5.0 - x
    assert difference.op is gradviz.ops.SUB and difference.a.data == 5.0 and difference.b is x
