"""Constants are not inputs: a number in an expression (the -1 of `a + b*-1`) is drawn
by its number everywhere, with no gradient and no trace step of its own.
And `no_grad`: values made inside it are such constants."""

from __future__ import annotations

import json

import pytest

import gradviz
from gradviz import Constant, Value, no_grad
from gradviz.drawn import diagram_from_value
from gradviz.expr import parse_program
from gradviz.render.dot import to_dot
from gradviz.render.json import to_json
from gradviz.render.mermaid import to_mermaid
from gradviz.render.terminal import to_text
from gradviz.tracing import trace


def _minus() -> Value:
    out = parse_program("L = a + b*-1", {"a": 2.0, "b": 3.0}).output
    out.backward()
    return out


def test_a_plain_number_is_a_constant_of_the_engine() -> None:
    a = Value(2.0, "a")
    assert type((a - 1).b) is Constant and type((1 / a).a) is Constant
    assert type((a * 2).b) is Constant and type((2 - a).a) is Constant
    assert type(Value(2.0)) is Value  # a Value the user makes is an input, named or not


def test_a_constant_has_no_trace_step_and_no_credit_line() -> None:
    steps = trace(_minus())
    assert [s.name for s in steps] == ["L", "n3", "b", "a"]
    targets = [c.parent_name for s in steps for c in s.contributions]
    assert targets == ["a", "n3", "b"]  # nothing is passed to -1


def test_a_constant_has_one_name_and_no_gradient_in_every_output() -> None:
    diagram = diagram_from_value(_minus())
    node = next(n for n in diagram.nodes if n.role == "constant")
    assert (node.label, node.data, node.grad) == ("-1", -1.0, None)
    # terminal tree
    tree = to_text(diagram)
    assert "└── -1  constant" in tree and "const " not in tree
    # DOT: the number alone, no grad, no colour band
    dot = to_dot(diagram)
    line = next(x for x in dot.splitlines() if x.lstrip().startswith(f'"{node.id}" ['))
    assert 'label="{ -1 }"' in line and "grad" not in line and 'fillcolor="#ffffff"' in line
    # Mermaid
    assert f'{node.id}["-1"]' in to_mermaid(diagram)
    # JSON
    data = json.loads(to_json(diagram))
    entry = next(n for n in data["nodes"] if n["id"] == node.id)
    assert (entry["role"], entry["label"], entry["data"], entry["grad"]) == (
        "constant",
        "-1",
        -1.0,
        None,
    )
    # no local derivative towards the constant in the op's tooltip
    assert "/∂(-1)" not in dot


def test_a_constant_shows_its_number_at_the_precision_asked() -> None:
    out = Value(1.0, "x") * 0.123456789
    out.backward()
    diagram = diagram_from_value(out)
    assert 'label="{ 0.1235 }"' in to_dot(diagram)
    assert 'label="{ 0.123456789 }"' in to_dot(diagram, precision=12)


def test_the_check_does_not_nudge_constants() -> None:
    rows = gradviz.gradcheck(Value(2.0) * 3.0 + Value(1.0))
    assert [r.name for r in rows] == ["n0", "n3"]


# -- no_grad -------------------------------------------------------------------------------


def test_values_made_under_no_grad_are_constants_with_no_graph() -> None:
    x = Value(3.0, "x")
    with no_grad():
        m = x * x + 1.0
        t = x.tanh()
    assert type(m) is Constant and m.op is None and m.parents == () and m.data == 10.0
    assert type(t) is Constant and t.data == pytest.approx(0.9950547536867305, rel=1e-15)
    after = x * 2.0  # recording is back on
    assert after.op is not None and after.parents[0] is x


def test_no_grad_blocks_the_gradient_like_detach_but_keeps_no_history() -> None:
    # y = x·m with m = x² computed without a graph: dy/dx = m = 9, not 3x² = 27
    x = Value(3.0, "x")
    with no_grad():
        m = x * x
    y = x * m
    y.backward()
    assert x.grad == 9.0
    # detach gives the same gradient but keeps the node (drawn, recomputed)
    x2 = Value(3.0, "x")
    y2 = x2 * (x2 * x2).detach()
    y2.backward()
    assert x2.grad == 9.0
    assert len(gradviz.topological_order(y)) == 3  # x, the constant 9, y
    assert len(gradviz.topological_order(y2)) == 4  # x, x·x, detach(x·x), y
    graph = gradviz.Graph(y2)
    x2.data = 2.0
    assert graph.forward() == 8.0  # detach recomputes from x; the no_grad value would not


def test_no_grad_is_restored_after_an_error_and_when_nested() -> None:
    x = Value(1.0, "x")
    with pytest.raises(ZeroDivisionError), no_grad():
        raise ZeroDivisionError
    assert (x + 1.0).op is not None
    with no_grad():
        with no_grad():
            pass
        assert (x + 1.0).op is None
    assert (x + 1.0).op is not None


def test_trace_frames_neither_dim_nor_emphasise_a_constant() -> None:
    from gradviz.drawn import trace_frames

    out = _minus()
    steps = trace(out)
    frames = trace_frames(out, steps)
    constant = next(v for v in gradviz.topological_order(out) if type(v) is Constant)
    cid = frames[0].id_of(constant)
    assert all(f.node(cid).state is None for f in frames)
    assert not any(e.emphasis and e.source == cid for f in frames for e in f.edges)


def test_the_check_names_a_nan_leaf_or_constant_for_what_it_is() -> None:
    x = Value(1.0, "x")
    unnamed = Value(float("nan"))
    assert gradviz.gradcheck(x * unnamed, wrt=["x"])[0].note == "the leaf n1 is nan, so L is nan"
    assert (
        gradviz.gradcheck(x * float("nan"), wrt=["x"])[0].note == "a constant is nan, so L is nan"
    )
