"""The terminal view: a tree from the output down, shared nodes once, a leaf table."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from gradviz import Value
from gradviz.drawn import diagram_from_value
from gradviz.expr import parse_program
from gradviz.render.diagram import Diagram, Edge, Node
from gradviz.render.terminal import MAX_DEPTH, MAX_LINES, to_terminal, to_text


def run(text: str, **values: float) -> Value:
    program = parse_program(text, values)
    program.output.backward()
    return program.output


def coloured(value: Value) -> str:
    out = io.StringIO()
    Console(file=out, force_terminal=True, color_system="standard", width=100).print(
        to_terminal(diagram_from_value(value))
    )
    return out.getvalue()


def test_hand_example_tree_and_table():
    text = to_text(diagram_from_value(run("e = a*b; d = e + c; L = d*f", a=2, b=-3, c=10, f=-2)))
    assert text == (
        "L ← *  data -8  grad 1\n"
        "├── d ← +  data 4  grad -2\n"
        "│   ├── e ← *  data -6  grad -2\n"
        "│   │   ├── a  data 2  grad 6\n"
        "│   │   └── b  data -3  grad -4\n"
        "│   └── c  data 10  grad -2\n"
        "└── f  data -2  grad 4\n"
        "\n"
        "leaf  data  grad = ∂L/∂leaf\n"
        "a        2                6\n"
        "b       -3               -4\n"
        "c       10               -2\n"
        "f       -2                4\n"
    )


def test_shared_node_is_shown_once_then_referenced():
    text = to_text(diagram_from_value(run("y = x*x + 3*x", x=2)))
    assert text.count("x  data 2  grad 7") == 1
    assert text.splitlines()[-1] == "x        2                7"
    assert text.count("↑ x (shown above)") == 2
    assert "3  constant" in text and "grad 2" not in text  # no gradient for a constant


def test_unnamed_output_and_no_grad():
    text = to_text(diagram_from_value(run("(a+b)*c", a=1, b=2, c=3), grad=False))
    assert text.splitlines()[0] == "L ← *  data 9"
    assert "grad" not in text


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_and_inf_are_marked_without_colour():
    text = to_text(diagram_from_value(run("y = log(x) * 0", x=0)))
    assert "data nan !" in text.splitlines()[0]
    assert "grad nan !" in text  # x's grad: 0 * inf


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_gradients_are_coloured_by_magnitude():
    out = coloured(run("y = sigmoid(w*x + 1)", x=0.5, w=-40))
    assert "\x1b[1;37;45m2.801e-9" in out  # vanishing: white on magenta, the loudest
    assert "\x1b[33m1\x1b[0m" in out  # 1 to 100: yellow (the scale's orange)
    nan = coloured(run("y = sqrt(x)", x=-1))
    assert "\x1b[1;37;41mnan !" in nan


def test_deep_chains_collapse_their_middle_and_never_recurse():
    x = Value(0.5, label="x")
    out = x
    for _ in range(3000):  # deeper than Python's recursion limit
        out = out.tanh()
    out.backward()
    text = to_text(diagram_from_value(out))
    # 3001 levels: MAX_DEPTH shown, the middle counted, then the leaf x
    assert f"… {3000 - MAX_DEPTH} levels hidden" in text
    assert "└── x  data 0.5" in text  # the leaf, in the tree
    assert len(text.splitlines()) < MAX_DEPTH + 10
    short = x
    for _ in range(200):
        short = short.tanh()
    whole = to_text(diagram_from_value(short), depth=None, width=2_000)
    assert "hidden" not in whole and whole.count("tanh  data") == 200


def test_wide_graphs_stop_at_the_line_limit():
    leaves = [Value(float(i), label=f"x{i}") for i in range(MAX_LINES + 50)]
    level = leaves
    while len(level) > 1:  # a balanced sum: wide, not deep
        pairs = zip(level[::2], level[1::2], strict=False)
        level = [a + b for a, b in pairs] + ([level[-1]] if len(level) % 2 else [])
    out = level[0]
    text = to_text(diagram_from_value(out))
    assert f"limit {MAX_LINES} lines" in text
    assert "x449" in text  # the leaf table still lists every input


def test_an_op_with_no_result_shows_its_inputs_below_it():
    """A PyTorch op view draws an op whose result is unknown as the op alone, with edges
    to its consumers; the tree goes on below it to its inputs, so the leaf table's
    "(above)" is true of every leaf (the inputs of such an op were cut off)."""
    nodes = (
        Node("w", "value", "w", role="input", extra_lines=("shape 2",)),
        Node("h_op", "op", "checkpoint_function", op="checkpoint_function", role="op"),
        Node("b", "value", "b", role="input", extra_lines=("shape 2",)),
        Node("L", "value", "loss", data=1.0, grad=1.0, op="add", role="output"),
    )
    edges = (Edge("w", "h_op"), Edge("h_op", "L"), Edge("b", "L"))
    text = to_text(Diagram(nodes, edges, has_grad=True))
    tree, table = text.split("\n\n")
    assert tree == (
        "loss  data 1  grad 1\n"
        "├── checkpoint_function\n"
        "│   └── w  shape 2\n"
        "└── b  shape 2"
    )  # fmt: skip
    assert table.splitlines()[1].split() == ["w", "shape", "2", "(above)"]
