"""The backward pass as steps: checked against a hand derivation, step by step."""

from __future__ import annotations

import ast
import importlib
import math
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from gradviz import engine, nn, ops, stats
from gradviz.drawn import trace_frames
from gradviz.engine import Op, Value, apply, backpropagate, topological_order
from gradviz.names import definition, node_names, op_form, output_name
from gradviz.render.trace_view import backward_view, check_view, forward_view, gradients_view
from gradviz.tracing import activation_formula, forward, leaf_gradients, sentence, trace, unreached


def hand_example() -> dict[str, Value]:
    """e = a*b; d = e + c; L = d*f with a=2, b=-3, c=10, f=-2 (the classic lesson)."""
    a, b, c, f = Value(2.0, "a"), Value(-3.0, "b"), Value(10.0, "c"), Value(-2.0, "f")
    e = a * b
    e.label = "e"
    d = e + c
    d.label = "d"
    L = d * f
    L.label = "L"
    return {"a": a, "b": b, "c": c, "d": d, "e": e, "f": f, "L": L}


def render(renderable, width: int = 120) -> str:
    console = Console(width=width, no_color=True, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


def test_hand_example_steps_match_the_hand_derivation() -> None:
    v = hand_example()
    steps = trace(v["L"])
    # Reverse topological order; a node's credit is complete when its step comes.
    # (name, credit, [(input, named formula, local, amount passed, running total)])
    expected = [
        ("L", 1, [("d", "∂(d·f)/∂d = f", -2, -2, -2), ("f", "∂(d·f)/∂f = d", 4, 4, 4)]),
        ("f", 4, []),
        ("d", -2, [("e", "∂(e + c)/∂e = 1", 1, -2, -2), ("c", "∂(e + c)/∂c = 1", 1, -2, -2)]),
        ("c", -2, []),
        ("e", -2, [("a", "∂(a·b)/∂a = b", -3, 6, 6), ("b", "∂(a·b)/∂b = a", 2, -4, -4)]),
        ("b", -4, []),
        ("a", 6, []),
    ]
    got = [
        (
            s.name,
            s.credit,
            [(c.parent_name, c.named_formula, c.local, c.amount, c.total) for c in s.contributions],
        )
        for s in steps
    ]
    assert got == expected
    assert [s.index for s in steps] == list(range(7))
    assert steps[0].is_output and not any(s.is_output for s in steps[1:])
    assert [s.is_leaf for s in steps] == [False, True, False, True, False, True, True]
    assert [s.definition for s in steps] == ["d·f", None, "e + c", None, "a·b", None, None]
    # The generic formula comes from the op table: ∂(a·b)/∂a = b.
    assert steps[0].contributions[0].formula == "∂(a·b)/∂a = b"
    assert steps[2].contributions[1].formula == "∂(a + b)/∂b = 1"
    # The engine's own backward pass agrees (trace runs it too).
    assert {k: v[k].grad for k in "abcf"} == {"a": 6.0, "b": -4.0, "c": -2.0, "f": 4.0}


def test_each_step_sources_name_the_consumer() -> None:
    v = hand_example()
    steps = {s.name: s for s in trace(v["L"])}
    assert [(s.consumer_name, s.amount) for s in steps["a"].sources] == [("e", 6.0)]
    assert [(s.consumer_name, s.amount) for s in steps["d"].sources] == [("L", -2.0)]
    assert steps["L"].sources == ()


@pytest.mark.parametrize("x0", [3.0, -0.5, 0.0, 1e-7])
def test_value_used_twice_shows_each_credit_and_their_sum(x0: float) -> None:
    x = Value(x0, "x")
    out = x * x + x
    steps = trace(out)
    assert [s.name for s in steps] == ["L", "n1", "x"]
    mul = steps[1]
    # x*x passes credit to x twice, once per input, and the running total builds up.
    assert [(c.position, c.amount, c.before, c.total, c.earlier) for c in mul.contributions] == [
        (0, x0, 1.0, 1.0 + x0, 1),
        (1, x0, 1.0 + x0, (1.0 + x0) + x0, 2),
    ]
    leaf = steps[2]
    assert [(s.consumer_name, s.amount) for s in leaf.sources] == [
        ("L", 1.0),
        ("n1", x0),
        ("n1", x0),
    ]
    assert leaf.credit == x.grad == pytest.approx(2 * x0 + 1, rel=1e-15)


def test_detach_stops_the_credit() -> None:
    x, w = Value(3.0, "x"), Value(2.0, "w")
    out = x.detach() * w
    steps = trace(out)
    assert [s.name for s in steps] == ["L", "w", "n1"]
    stop = steps[2]
    assert stop.stops_credit
    (c,) = stop.contributions
    assert (c.parent_name, c.passes, c.amount, c.total) == ("x", False, 0.0, 0.0)
    assert unreached(out, steps) == [x]
    rows = {r.name: r for r in leaf_gradients(out, steps)}
    assert (rows["x"].reached, rows["x"].grad) == (False, 0.0)
    assert "detach" in rows["x"].sentence
    assert rows["w"].reached and rows["w"].grad == 3.0


def test_detach_on_one_path_only() -> None:
    x = Value(3.0, "x")
    out = x.detach() * x
    steps = trace(out)
    assert steps[-1].name == "x" and steps[-1].credit == 3.0 == x.grad


def test_forward_steps_in_topological_order() -> None:
    v = hand_example()
    got = [(s.name, s.definition, s.data) for s in forward(v["L"])]
    assert got == [
        ("a", None, 2.0),
        ("b", None, -3.0),
        ("e", "a·b", -6.0),
        ("c", None, 10.0),
        ("d", "e + c", 4.0),
        ("f", None, -2.0),
        ("L", "d·f", -8.0),
    ]


def test_formulas_are_rewritten_with_the_graph_names() -> None:
    x, y = Value(0.5, "x"), Value(1.5, "y")
    steps = trace((x**y).tanh() + (x - 1) ** 2)
    formulas = [c.named_formula for s in steps for c in s.contributions]
    assert "∂(tanh(n2))/∂n2 = 1 - tanh²(n2)" in formulas
    assert "∂(x^y)/∂x = y·x^(y-1)" in formulas
    assert "∂(x^y)/∂y = x^y·ln(x)" in formulas
    assert "∂(x - 1)/∂x = 1" in formulas
    assert not any("/∂1 " in f for f in formulas)  # a constant gets no credit
    assert "∂(n5^2)/∂n5 = 2·n5^1" in formulas


def test_names() -> None:
    w1, w2 = Value(1.0, "w"), Value(2.0, "w")
    out = w1 * w2 + 3.0
    names = node_names([w1, w2, *[n for n in (out.a, out.b, out)]])
    assert [names[n] for n in (w1, w2, out.a, out.b, out)] == ["w", "w#2", "n2", "3", "L"]
    L = Value(1.0, "L")
    assert output_name(L * 2.0) == "out"
    named = L * 2.0
    named.label = "loss"
    assert output_name(named) == "loss"


@pytest.mark.parametrize(
    ("grad", "text"),
    [
        (6.0, "raising a by 0.01 raises L by about 0.06"),
        (-4.0, "raising a by 0.01 lowers L by about 0.04"),
        (2e-7, "raising a by 0.01 raises L by about 2e-9"),
        (0.0, "nudging a leaves L unchanged to first order (gradient 0)"),
        (math.nan, "the gradient of a is nan: L is not differentiable here"),
    ],
)
def test_sentences(grad: float, text: str) -> None:
    assert sentence("a", grad, "L") == text


def test_batched_values_trace_per_sample() -> None:
    x = Value(np.array([1.0, -2.0, 0.5]), "x")
    w = Value(3.0, "w")
    out = (x * w).tanh()
    steps = trace(out)
    by_name = {s.name: s for s in steps}
    np.testing.assert_allclose(by_name["x"].credit, 3.0 * (1 - np.tanh(3.0 * x.data) ** 2))
    np.testing.assert_array_equal(by_name["w"].credit, w.grad)


def test_long_chain_does_not_recurse() -> None:
    x = Value(0.5, "x")
    y = x
    for _ in range(3000):
        y = y * 1.0
    steps = trace(y)  # 3000 products and x: the constants 1.0 get no step
    assert len(steps) == 3001 and steps[-1].credit == 1.0


# -- the terminal view ---------------------------------------------------------------


def test_terminal_view_of_a_value_used_twice() -> None:
    x = Value(3.0, "x")
    out = x * x + x
    steps = trace(out)
    text = render(backward_view(steps, "L"))
    assert text == (
        "Backward pass  (reverse topological order: a node's credit is complete when its turn"
        " comes)\n"
        "\n"
        "Step 1/3  L = n1 + x  (the output)\n"
        "  dL/dL = 1  (the output: a nudge of L moves L by the same amount)\n"
        "  → n1   ∂(n1 + x)/∂n1 = 1   dL/dn1 += dL/dL · 1 = 1 · 1 = 1\n"
        "  → x    ∂(n1 + x)/∂x = 1    dL/dx += dL/dL · 1 = 1 · 1 = 1\n"
        "\n"
        "Step 2/3  n1 = x·x\n"
        "  dL/dn1 = 1  (from L)\n"
        "  → x (input a)   ∂(x·x)/∂x = x = 3   dL/dx += dL/dn1 · x = 1 · 3 = 3"
        "   (so far 1 + 3 = 4)\n"
        "  → x (input b)   ∂(x·x)/∂x = x = 3   dL/dx += dL/dn1 · x = 1 · 3 = 3"
        "   (so far 4 + 3 = 7)\n"
        "\n"
        "Step 3/3  x  (leaf)\n"
        "  dL/dx = 1 + 3 + 3 = 7  (from 3 uses: L, n1, n1)  — the credit stops at a leaf:"
        " its gradient\n"
    )


def test_terminal_view_of_the_hand_example() -> None:
    v = hand_example()
    steps = trace(v["L"])
    text = render(backward_view(steps, "L"))
    assert "  → a   ∂(a·b)/∂a = b = -3   dL/da += dL/de · b = -2 · (-3) = 6\n" in text
    assert "Step 7/7  a  (leaf)\n  dL/da = 6  (from e)" in text
    grads = render(gradients_view(leaf_gradients(v["L"], steps), "L"))
    assert grads.splitlines()[1:] == [
        "  dL/da   6  raising a by 0.01 raises L by about 0.06",
        "  dL/db  -4  raising b by 0.01 lowers L by about 0.04",
        "  dL/dc  -2  raising c by 0.01 lowers L by about 0.02",
        "  dL/df   4  raising f by 0.01 raises L by about 0.04",
    ]
    fwd = render(forward_view(forward(v["L"])))
    assert "  3  e = a·b = -6\n" in fwd and "  7  L = d·f = -8\n" in fwd


def test_terminal_view_prints_brackets_literally_and_tiny_numbers() -> None:
    w = Value(1e-7, "w[0]")
    out = w * Value(2e-8, "[bold]x")
    text = render(backward_view(trace(out), "L"))
    assert "dL/dw[0] += dL/dL · [bold]x = 1 · 2e-8 = 2e-8" in text
    assert "0.0000" not in text


def test_terminal_view_of_detach() -> None:
    x, w = Value(3.0, "x"), Value(2.0, "w")
    out = x.detach() * w
    steps = trace(out)
    text = render(backward_view(steps, "L"))
    assert "detach passes no credit: the gradient stops here" in text
    grads = render(gradients_view(leaf_gradients(out, steps), "L", ["x"]))
    assert "Not reached by any credit (behind detach): x" in grads


# -- frames ----------------------------------------------------------------------------


def test_frames_one_per_step_with_states_and_emphasis() -> None:
    v = hand_example()
    steps = trace(v["L"])
    frames = trace_frames(v["L"], steps)
    assert len(frames) == len(steps) == 7
    first, fifth, last = frames[0], frames[4], frames[6]
    ids = first.value_ids
    L, e, a, b = (ids[v[k]] for k in "Leab")
    # Step 1: the output and its op are current, nothing is done yet, its edges emphasised.
    assert first.node(L).state == "current" and first.node(L + "_op").state == "current"
    assert not any(n.state == "done" for n in first.nodes)
    assert {(x.source, x.target) for x in first.edges if x.emphasis} == {
        (ids[v["d"]], L + "_op"),
        (ids[v["f"]], L + "_op"),
        (L + "_op", L),
    }
    # Step 5 (e = a·b): earlier steps done, e current, a and b already hold their credit.
    assert fifth.node(e).state == "current"
    assert fifth.node(L).state == "done" and fifth.node(ids[v["c"]]).state == "done"
    assert (fifth.node(a).grad, fifth.node(b).grad) == (6.0, -4.0)
    assert frames[3].node(a).grad is None  # no credit has reached a before step 5
    assert fifth.title == "Step 5/7: e = a·b with dL/de = -2 passes 6 to a and -4 to b"
    # The credit each input receives is written on its edge.
    assert {(x.source, x.label) for x in fifth.edges if x.label} == {(a, "+= 6"), (b, "+= -4")}
    # The last step is the leaf a: the edge it received credit along is emphasised.
    assert last.node(a).state == "current"
    assert {(x.source, x.target) for x in last.edges if x.emphasis} == {(a, e + "_op")}
    assert last.title == "Step 7/7: a is a leaf, dL/da = 6 is its gradient"


def test_frames_show_the_running_sum_and_dim_what_is_not_reached() -> None:
    x, w = Value(3.0, "x"), Value(2.0, "w")
    out = x * x + (w.detach() * 0.5)
    steps = trace(out)
    frames = trace_frames(out, steps)
    # w is behind detach, 0.5 is a constant: no step, no frame
    assert [s.name for s in steps] == ["L", "n5", "n3", "n1", "x"]
    assert len(frames) == len(steps) == 5
    ids = frames[0].value_ids
    # x gets nothing until x*x is processed, then both uses at once: 3 + 3.
    assert [f.node(ids[x]).grad for f in frames] == [None, None, None, 6.0, 6.0]
    assert all(f.node(ids[w]).state == "dim" for f in frames)
    assert frames[2].node(ids[out.b.a]).state == "current"  # the detach node
    assert (
        frames[2].title == "Step 3/5: n3 = detach(w) with dL/dn3 = 0.5 passes nothing on (detach)"
    )
    assert [x.label for x in frames[2].edges if x.label] == ["no grad"]
    # x*x: two edges from x, one label each (the position tells them apart).
    assert [x.label for x in frames[3].edges if x.emphasis and x.label] == ["+= 3", "+= 3"]
    # The unnamed product carries the name the titles use.
    assert frames[0].node(ids[out.a]).label == "n1"


def test_frame_dot_text_is_byte_stable() -> None:
    from gradviz.render.dot import to_dot

    def frames_text() -> list[str]:
        a, b = Value(2.0, "a"), Value(-3.0, "b")
        out = a * b
        return [to_dot(f) for f in trace_frames(out, trace(out))]

    assert frames_text() == frames_text()


# -- the trace is the engine's own backward pass, observed ------------------------------


def _bits(x: object) -> bytes:
    return np.asarray(x, dtype=np.float64).tobytes()


def _messy_graph(x0: object) -> Value:
    x, w = Value(x0, "x"), Value(-1.3, "w")
    h = (x * w).tanh() + x * x
    return (h.sigmoid() * x.exp() + abs(h - 0.2)) / (w * w + 1)


@pytest.mark.parametrize("x0", [0.7, np.array([0.7, -0.3, 2.0])], ids=["float", "batch"])
def test_the_observed_backward_pass_is_the_plain_one_bit_for_bit(x0: object) -> None:
    out = _messy_graph(x0)
    order = topological_order(out)
    backpropagate(order)
    plain = [_bits(v.grad) for v in order]
    edges = []
    backpropagate(order, on_edge=lambda *edge: edges.append(edge))
    assert [_bits(v.grad) for v in order] == plain
    # One call per edge that carries credit, each with the engine's own numbers.
    assert len(edges) == sum(len(v.parents) for v in order if v.op is not None)
    for node, position, parent, local, amount in edges:
        assert parent is node.parents[position]
        assert _bits(amount) == _bits(node.grad * local)


def test_trace_is_built_from_the_engine_pass_not_a_copy_of_it(monkeypatch) -> None:
    calls = []
    real = engine.backpropagate

    def spy(order, on_edge=None):
        calls.append(on_edge)
        real(order, on_edge)

    # (the package exports the function `trace`, which hides the module's name)
    monkeypatch.setattr(importlib.import_module("gradviz.tracing"), "backpropagate", spy)
    monkeypatch.setattr(Value, "backward", lambda self: pytest.fail("a second backward pass"))
    v = hand_example()
    steps = trace(v["L"])
    assert len(calls) == 1 and calls[0] is not None
    # Every credit and every amount passed is the engine's: the grads it left behind.
    for step in steps:
        assert step.credit == step.node.grad
        assert sum(s.amount for s in step.sources) == (step.credit if step.sources else 0.0)


def test_a_wrong_op_shows_the_same_wrong_numbers_in_trace_and_engine() -> None:
    wrong = Op(
        name="tanh", symbol="tanh", out=engine.TANH.out, d=("1.0 - out",), shown=("1 - tanh(a)",)
    )
    x = Value(0.5, "x")
    out = apply(wrong, x) * 2.0
    steps = trace(out)
    assert steps[-1].credit == x.grad == 2 * (1 - math.tanh(0.5))


def test_no_credit_leaks_from_behind_a_detach() -> None:
    # sqrt(x) is behind a detach: its slope at 0 (inf) times no credit must not make nan.
    x = Value(0.0, "x")
    out = x.sqrt().detach() + x
    steps = trace(out)
    assert steps[-1].name == "x" and steps[-1].credit == 1.0 == x.grad
    out.zero_grad()  # trace() ran a backward pass already, and backward() adds
    out.backward()
    assert x.grad == 1.0


# -- one op, one place ----------------------------------------------------------------


def test_how_an_op_is_written_comes_from_the_op_table() -> None:
    xor = Op(name="xor", symbol="^", out="a + b", d=("1.0", "1.0"), form="{a}⊕{b}")
    a, b = Value(1.0, "a"), Value(-2.0, "b")
    out = apply(xor, a, b)
    assert definition(out, node_names(topological_order(out))) == "a⊕b"
    assert trace(out)[0].contributions[0].formula == "∂(a⊕b)/∂a = 1"
    assert op_form(engine.MUL, "x", "-1") == "x·(-1)"
    assert op_form(engine.power_op(3.0), "x") == "x^3"
    assert op_form(engine.TANH, "z") == "tanh(z)"


@pytest.mark.parametrize("activation", sorted(nn.ACTIVATIONS))
def test_activation_slopes_and_bounds_come_from_the_op_table(activation: str) -> None:
    op = nn.ACTIVATIONS[activation]
    pre = np.array([[-2.0, -0.5, 0.0], [0.3, 1.0, 4.0]])
    act = pre if op is None else op.forward(pre)
    expected = np.ones_like(pre) if op is None else op.local(act, pre)[0]
    np.testing.assert_array_equal(stats.slope(activation, pre, act), expected)
    if op is None:
        assert (activation_formula(activation), stats.max_slope(activation)) == ("1", 1.0)
    else:
        assert (
            activation_formula(activation)
            == {
                "sigmoid": "σ(z)·(1 - σ(z))",  # the op table's formula, in z
                "tanh": "1 - tanh²(z)",
                "relu": "1 if z > 0 else 0",
                "softplus": "σ(z)",
                "leaky_relu": "1 if z > 0 else 0.01",
                "elu": "1 if z > 0 else exp(z)",
                "silu": "σ(z)·(1 + z·(1 - σ(z)))",
                "gelu": "σ(u)·(1 + z·(1 - σ(u))·u′), u = 2√(2/π)·(z + 0.044715·z³)",
            }[activation]
        )
        assert stats.max_slope(activation) == op.max_slope
        # the bound holds: no slope anywhere above it
        grid = np.linspace(-8, 8, 1601)
        assert np.max(np.abs(op.local(op.forward(grid), grid)[0])) <= op.max_slope
    assert ops.SIGMOID.max_slope == 0.25


# Modules that come before the renderers in the data flow (text → graph → numbers).
LIBRARY = ("engine", "errors", "numbers", "text", "expr", "data", "nn", "train", "stats")


@pytest.mark.parametrize("module", [*LIBRARY, "tracing", "checking"])
def test_library_modules_import_no_renderer(module: str) -> None:
    path = Path(engine.__file__).parent / f"{module}.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert [m for m in imported if m.startswith("gradviz.render")] == []


def test_check_view_header_uses_the_real_names() -> None:
    from gradviz.checking import gradcheck

    x = Value(1.0, "x")
    out = x * 3.0
    out.label = "loss"
    lines = render(check_view(gradcheck(out), output_name(out))).splitlines()
    assert lines[0].split()[:4] == ["leaf", "value", "analytic", "∂loss/∂leaf"]
