"""micrograd's code runs unchanged on gradviz Values.

micrograd (0.1.0, a test dependency) is the lesson's engine: its `nn.py` and the
`draw_dot` of its notebooks use `_prev`, `_op`, `data`, `grad`, `Value(number)` and
`p.grad = 0`. The expected numbers of its two engine tests are PyTorch's float64
results, recorded here as constants (PyTorch is too large to install for a test).
"""

from __future__ import annotations

import math
import random

import graphviz
import micrograd.engine
import micrograd.nn
import pytest

import gradviz
from gradviz import Value

# -- micrograd's engine tests (test/test_engine.py), PyTorch's float64 numbers ----------


def test_sanity_check_matches_pytorch() -> None:
    x = Value(-4.0)
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    # PyTorch: y = -20.0, x.grad = 46.0 (micrograd's test allows 1e-6; these are exact)
    assert y.data == -20.0
    assert x.grad == 46.0


def test_more_ops_matches_pytorch() -> None:
    a = Value(-4.0)
    b = Value(2.0)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    g.backward()
    # PyTorch float64 (torch 2.x), as micrograd's test computes them.
    assert math.isclose(g.data, 24.70408163265306, rel_tol=1e-12)
    assert math.isclose(a.grad, 138.83381924198252, rel_tol=1e-12)
    assert math.isclose(b.grad, 645.5772594752186, rel_tol=1e-12)


# -- micrograd's names -----------------------------------------------------------------


def test_op_strings_are_micrograds_ones() -> None:
    a, b = Value(2.0), Value(3.0)
    assert a._op == ""
    assert (a + b)._op == "+"
    assert (a * b)._op == "*"
    assert (a**2)._op == "**2"
    # micrograd composes - and / ('+' over b*-1, '*' over b**-1); here each is one node
    # over both inputs, so its string names that op: '+' over {a, b} would misstate it
    assert (a - b)._op == "-" and (a - b)._prev == {a, b}
    assert (a / b)._op == "/" and (a / b)._prev == {a, b}
    assert (-a)._op == "-" and (-a)._prev == {a}
    assert a.relu()._op == "ReLU"
    assert a.tanh()._op == "tanh"
    assert a.exp()._op == "exp"
    # the same strings micrograd itself writes
    m = micrograd.engine.Value(2.0)
    assert [(m + m)._op, (m * m)._op, (m**2)._op, m.relu()._op] == ["+", "*", "**2", "ReLU"]


def test_prev_is_a_read_only_set_of_parents() -> None:
    x = Value(2.0)
    y = Value(3.0)
    assert (x * y)._prev == {x, y}
    square = x * x
    assert square._prev == {x}  # a set, as micrograd's: one parent, though two edges
    assert square.parents == (x, x)
    assert x._prev == set()
    square._prev.add(y)  # a copy: the graph does not change
    assert square._prev == {x}
    with pytest.raises(AttributeError):
        square._prev = {y}
    with pytest.raises(AttributeError):
        square._op = "+"


def test_booleans_are_numbers_as_in_python() -> None:
    assert Value(True).data == 1.0 and Value(False).data == 0.0
    assert (Value(2.0) * True).data == 2.0


# -- micrograd's nn.py on gradviz Values --------------------------------------------------


@pytest.fixture
def gradviz_nn(monkeypatch: pytest.MonkeyPatch):
    """micrograd.nn with its `Value` replaced by gradviz's, nothing else changed."""
    monkeypatch.setattr(micrograd.nn, "Value", gradviz.Value)
    return micrograd.nn


def _loss(model, X, Y):
    """micrograd demo's loss: mean SVM max-margin loss plus 1e-4·L2 (from demo.ipynb)."""
    scores = [model(x) for x in X]
    losses = [(1 + -y * s).relu() for y, s in zip(Y, scores, strict=True)]
    data_loss = sum(losses) * (1.0 / len(losses))
    reg_loss = 1e-4 * sum(p * p for p in model.parameters())
    return data_loss + reg_loss


X = [[0.5, -1.0], [1.5, 0.25], [-0.75, 0.8], [0.1, 0.3]]
Y = [1, -1, 1, -1]


def test_micrograds_mlp_runs_on_gradviz_values_with_the_right_gradients(gradviz_nn) -> None:
    random.seed(1337)
    model = gradviz_nn.MLP(2, [8, 8, 1])
    params = model.parameters()
    assert all(type(p) is gradviz.Value for p in params) and len(params) == 24 + 72 + 9
    model.zero_grad()  # micrograd's `p.grad = 0`
    loss = _loss(model, X, Y)
    loss.backward()
    analytic = [p.grad for p in params]
    # central differences, with micrograd's own forward pass re-run for each nudge
    h = 1e-6
    for p, g in zip(params, analytic, strict=True):
        x0 = p.data
        p.data = x0 + h
        up = _loss(model, X, Y).data
        p.data = x0 - h
        down = _loss(model, X, Y).data
        p.data = x0
        assert math.isclose((up - down) / (2 * h), g, rel_tol=1e-5, abs_tol=1e-8)
    assert any(abs(g) > 1e-3 for g in analytic)


def test_micrograds_mlp_gets_micrograds_own_numbers(gradviz_nn) -> None:
    random.seed(7)
    ours = gradviz_nn.MLP(2, [4, 4, 1])
    ours_loss = _loss(ours, X, Y)
    ours_loss.backward()
    gradviz_nn.Value = micrograd.engine.Value  # micrograd's engine, the same weights
    random.seed(7)
    theirs = gradviz_nn.MLP(2, [4, 4, 1])
    theirs_loss = _loss(theirs, X, Y)
    theirs_loss.backward()
    assert math.isclose(ours_loss.data, theirs_loss.data, rel_tol=1e-14)
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert p.data == q.data
        assert math.isclose(p.grad, q.grad, rel_tol=1e-12, abs_tol=1e-15)


def test_micrograds_training_loop_learns_on_gradviz_values(gradviz_nn) -> None:
    # the demo's loop: forward, zero_grad, backward, update; the loss goes down
    random.seed(3)
    model = gradviz_nn.MLP(2, [8, 1])
    losses = []
    for _ in range(30):
        loss = _loss(model, X, Y)
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data -= 0.1 * p.grad
        losses.append(loss.data)
    assert losses[-1] < 0.5 * losses[0]
    assert all(((model(x).data > 0) == (y > 0)) for x, y in zip(X, Y, strict=True))


# -- a draw_dot as micrograd's notebooks write it ------------------------------------------


def _trace(root):
    """micrograd's trace(): every node and edge, walking `_prev` (recursively, as theirs)."""
    nodes, edges = set(), set()

    def build(v):
        if v not in nodes:
            nodes.add(v)
            for child in v._prev:
                edges.add((child, v))
                build(child)

    build(root)
    return nodes, edges


def draw_dot(root, rankdir: str = "LR") -> graphviz.Digraph:
    """micrograd's draw_dot (trace_graph.ipynb): a record per value, a node per op."""
    dot = graphviz.Digraph(format="svg", graph_attr={"rankdir": rankdir})
    nodes, edges = _trace(root)
    for n in nodes:
        uid = str(id(n))
        label = "{ data %.4f | grad %.4f }" % (n.data, n.grad)  # noqa: UP031 (micrograd's code)
        dot.node(name=uid, label=label, shape="record")
        if n._op:
            dot.node(name=uid + n._op, label=n._op)
            dot.edge(uid + n._op, uid)
    for n1, n2 in edges:
        dot.edge(str(id(n1)), str(id(n2)) + n2._op)
    return dot


def test_micrograds_draw_dot_draws_gradviz_values() -> None:
    x1, x2 = Value(2.0), Value(0.0)
    w1, w2 = Value(-3.0), Value(1.0)
    b = Value(6.8813735870195432)
    n = x1 * w1 + x2 * w2 + b
    o = n.relu()
    o.backward()
    nodes, edges = _trace(o)
    assert len(nodes) == 10 and len(edges) == 9
    source = draw_dot(o).source
    assert source.count("shape=record") == 10
    ops = sorted(
        line.split("label=")[1].rstrip("]").strip('"')
        for line in source.splitlines()
        if "label=" in line and "record" not in line
    )
    assert ops == ["*", "*", "+", "+", "ReLU"]
    assert "{ data 0.8814 | grad 1.0000 }" in source  # o
    assert "{ data -3.0000 | grad 2.0000 }" in source  # w1.grad = x1
    assert "{ data 2.0000 | grad -3.0000 }" in source  # x1.grad = w1
