"""The drawing model: ids from graph order, one op node per op, an edge per input use."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradviz import Value
from gradviz.cli import flag
from gradviz.drawn import diagram_from_value
from gradviz.engine import power_op
from gradviz.render.colours import BAD_BAND, BANDS
from gradviz.render.diagram import Diagram, Node, band_of, draw_less, number_text
from gradviz.text import printable
from gradviz.tracing import trace


def hand_example() -> Value:
    a, b, c, f = (Value(x, label=n) for x, n in ((2.0, "a"), (-3.0, "b"), (10.0, "c"), (-2.0, "f")))
    e = a * b
    e.label = "e"
    d = e + c
    d.label = "d"
    L = d * f
    L.label = "L"
    L.backward()
    return L


def test_hand_example_nodes_edges_and_numbers():
    diagram = diagram_from_value(hand_example())
    values = {n.label: n for n in diagram.nodes if n.kind == "value"}
    assert {k: (v.data, v.grad) for k, v in values.items()} == {
        "a": (2.0, 6.0),
        "b": (-3.0, -4.0),
        "e": (-6.0, -2.0),
        "c": (10.0, -2.0),
        "d": (4.0, -2.0),
        "f": (-2.0, 4.0),
        "L": (-8.0, 1.0),
    }
    ops = [n for n in diagram.nodes if n.kind == "op"]
    assert [(n.id, n.label, n.op) for n in ops] == [
        ("n2_op", "*", "mul"),
        ("n4_op", "+", "add"),
        ("n6_op", "*", "mul"),
    ]
    assert [(e.source, e.target) for e in diagram.edges] == [
        ("n0", "n2_op"),
        ("n1", "n2_op"),
        ("n2_op", "n2"),
        ("n2", "n4_op"),
        ("n3", "n4_op"),
        ("n4_op", "n4"),
        ("n4", "n6_op"),
        ("n5", "n6_op"),
        ("n6_op", "n6"),
    ]
    roles = {n.label: n.role for n in diagram.nodes if n.kind == "value"}
    assert roles == {
        "a": "input",
        "b": "input",
        "c": "input",
        "f": "input",
        "e": "intermediate",
        "d": "intermediate",
        "L": "output",
    }


def test_ids_do_not_depend_on_object_identity():
    first = diagram_from_value(hand_example())
    second = diagram_from_value(hand_example())
    assert first == second  # value_ids (Values) are excluded from equality


def test_square_draws_two_edges_with_input_positions():
    x = Value(3.0, label="x")
    y = x * x
    y.backward()
    diagram = diagram_from_value(y)
    into_op = [(e.source, e.target, e.index) for e in diagram.edges if e.target == "n1_op"]
    assert into_op == [("n0", "n1_op", 0), ("n0", "n1_op", 1)]
    assert diagram.node("n0").grad == 6.0


def test_constant_power_has_no_edge_to_a_constant():
    x = Value(3.0, label="x")
    y = x**2
    assert y.op is power_op(2.0)
    diagram = diagram_from_value(y)
    assert len(diagram.nodes) == 3 and len(diagram.edges) == 2


def test_no_grad_leaves_grads_out_and_says_so():
    diagram = diagram_from_value(hand_example(), grad=False)
    assert not diagram.has_grad
    assert all(n.grad is None for n in diagram.nodes)
    assert all("grad" not in n.detail for n in diagram.nodes if n.kind == "value")
    assert diagram.node("n6_op").detail == "mul: L = d·f = -8.0"  # no local derivatives


def test_op_detail_has_formula_and_local_value():
    x = Value(0.5, label="x")
    y = x.tanh()
    y.backward()
    detail = diagram_from_value(y).node("n1_op").detail
    assert f"∂(tanh(x))/∂x = 1 - tanh²(x) = {1 - math.tanh(0.5) ** 2!r}" in detail  # full


def test_op_detail_names_the_operands_as_the_trace_does():
    L = hand_example()
    diagram = diagram_from_value(L)
    assert diagram.node("n6_op").detail == (
        "mul: L = d·f = -8.0\n∂(d·f)/∂d = f = -2.0\n∂(d·f)/∂f = d = 4.0\ngrad in = 1.0"
    )
    # the same formulas as `gradviz trace` prints for that step
    step = trace(L)[0]
    assert [c.named_formula for c in step.contributions] == ["∂(d·f)/∂d = f", "∂(d·f)/∂f = d"]


def test_op_detail_states_a_constant_derivative_once():
    x, y = Value(1.5, label="x"), Value(2.0, label="y")
    s = x + y
    s.backward()
    detail = diagram_from_value(s).node("n2_op").detail
    assert "∂(x + y)/∂x = 1\n" in detail and "∂(x + y)/∂y = 1\n" in detail
    z = x * -1.0  # a constant operand is named by its value, in parentheses when negative
    z.backward()
    detail = diagram_from_value(z).node("n2_op").detail
    assert "∂(x·(-1))/∂x = (-1)\n" in detail
    assert "/∂(-1)" not in detail  # no slope towards a constant: it has nothing to move
    stopped = x.detach() * x
    stopped.backward()
    assert (
        "∂(detach(x))/∂x = 0 (stop-gradient)\n" in diagram_from_value(stopped).node("n1_op").detail
    )


def test_unnamed_output_is_named_by_the_one_rule():
    a, b = Value(2.0, label="a"), Value(3.0, label="b")
    out = a * b
    out.backward()
    node = diagram_from_value(out).node("n2")
    assert (node.label, node.detail.split(":")[0]) == ("L", "L")
    L = Value(1.0, label="L")  # `L` is taken: the output is `out`, as in trace and check
    out = L * 2.0
    out.backward()
    diagram = diagram_from_value(out)
    assert diagram.node("n2").label == "out"
    assert diagram.node("n1").label == "2"  # a constant is named by its number, as in trace
    assert diagram.node("n1").grad is None  # and has no gradient to show


def test_draw_less_offers_only_coarser_levels():
    x = Value(1.0, label="x")
    diagram = diagram_from_value(x * x)
    assert draw_less(diagram).words() == "draw a part of the expression"
    network = diagram_from_value(x * x, clusters={x: "L1"})
    assert draw_less(network).words(flag) == (
        "draw a collapsed view (--level neuron or --level layer)"
    )
    assert draw_less(network).words() == "draw a collapsed view (level='neuron' or level='layer')"
    neuron = Diagram((), (), level="neuron")
    assert draw_less(neuron).words(flag) == "draw a collapsed view (--level layer)"
    assert draw_less(Diagram((), (), level="layer")) == ("draw a smaller network", ())


def test_bad_numbers_carry_a_mark():
    assert number_text(float("nan")) == "nan ‼"
    assert number_text(float("-inf")) == "-inf ‼"
    assert number_text(np.array([1.0, np.inf])).endswith(" ‼")
    assert number_text(2.5) == "2.5"


def test_detach_edge_is_labelled_and_op_says_no_gradient():
    x = Value(3.0, label="x")
    y = x * x.detach()
    y.backward()
    diagram = diagram_from_value(y)
    assert [e.label for e in diagram.edges if e.target == "n1_op"] == ["no grad"]
    assert "passes no gradient" in diagram.node("n1_op").detail


def test_id_lookup_and_states_for_trace_frames():
    L = hand_example()
    diagram = diagram_from_value(L)
    e = L.a.a  # d = e + c; L = d * f
    assert diagram.id_of(e) == "n2" and diagram.op_id_of(e) == "n2_op"
    assert diagram.op_id_of(L.b) is None
    frame = diagram.with_states({"n6": "done", "n4": "current"}, [("n4", "n6_op")], default="dim")
    assert frame.node("n4").state == "current"
    assert frame.node("n6").state == "done"
    assert frame.node("n0").state == "dim"
    assert [e.emphasis for e in frame.edges].count(True) == 1
    assert diagram.node("n4").state is None  # the original is unchanged
    with pytest.raises(ValueError):
        diagram.with_states({"n0": "glowing"})


def test_clusters_keep_order_of_first_appearance():
    L = hand_example()
    diagram = diagram_from_value(L, clusters={L: "output", L.a.a.a: "inputs", L.a.a.b: "inputs"})
    assert diagram.clusters == ["inputs", "output"]
    assert diagram.node("n0").cluster == "inputs"
    assert diagram.node("n6_op").cluster == "output"


@pytest.mark.parametrize(
    ("grad", "band"),
    [
        (0.0, "g0"),
        (1e-9, "g1"),
        (-1e-6, "g2"),
        (5e-4, "g3"),
        (0.5, "g4"),
        (-1.0, "g5"),
        (99.0, "g5"),
        (100.0, "g6"),
        (1e300, "g6"),
        (float("nan"), "bad"),
        (float("-inf"), "bad"),
    ],
)
def test_bands_are_a_log_scale_with_nan_and_inf_apart(grad, band):
    node = Node("n0", "value", "x", data=1.0, grad=grad)
    assert band_of(node).name == band


def test_bad_data_marks_the_node_even_with_a_fine_grad():
    assert band_of(Node("n0", "value", "x", data=float("inf"), grad=1.0)) is BAD_BAND
    assert band_of(Node("n0", "op", "*")) is None
    assert len({b.fill for b in (*BANDS, BAD_BAND)}) == len(BANDS) + 1


def test_batch_magnitude_is_mean_absolute_grad():
    node = Node("n0", "value", "x", data=np.zeros(2), grad=np.array([-1e-3, 3e-3]))
    assert node.magnitude == pytest.approx(2e-3)
    assert band_of(node).name == "g3"
    assert (
        band_of(Node("n0", "value", "x", data=np.zeros(2), grad=np.array([1.0, np.nan]))).name
        == "bad"
    )


def test_printable_makes_controls_visible_and_keeps_text():
    assert printable('héllo ∂ 😀 "{|}"') == 'héllo ∂ 😀 "{|}"'
    assert printable("a\nb\tc\x00\x7f\u2028\udc80") == "a\\nb\\tc\\x00\\x7f\\u2028\\udc80"
    assert printable("a\nb").isprintable()
