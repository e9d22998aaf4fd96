"""DOT output, checked by what Graphviz makes of it: the real `dot` and graphviz-pure.

Every test that renders runs against both programs, and reads the SVG back with an XML
parser: the text a user sees must be exactly the text we meant, whatever was in it.
"""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import graphviz
import pytest
from graphviz_support import needs_system_dot, system_dot

import gradviz
from gradviz import Value
from gradviz.drawn import diagram_from_value
from gradviz.expr import parse_program
from gradviz.layout import _pure_program
from gradviz.render.diagram import Diagram, Edge, Node
from gradviz.render.dot import label_text, to_dot
from gradviz.text import printable

ROOT = Path(__file__).resolve().parent.parent
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"


@pytest.fixture(
    params=[
        pytest.param("system", id="system-dot", marks=needs_system_dot),
        pytest.param("pure", id="graphviz-pure"),
    ]
)
def program(request) -> str:
    if request.param == "system":
        return system_dot()
    pure = _pure_program()
    assert pure, "graphviz-pure is a dependency of gradviz and must be installed"
    return pure


def svg_of(dot_text: str, program: str) -> ET.Element:
    done = subprocess.run(
        [program, "-Tsvg"], input=dot_text.encode(), capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    return ET.fromstring(done.stdout)  # well-formed XML or this raises


def texts(svg: ET.Element) -> list[str]:
    # Graphviz turns runs of spaces into no-break spaces; the reader sees spaces.
    return [(t.text or "").replace("\xa0", " ").strip() for t in svg.iter(f"{SVG}text")]


def tooltips(svg: ET.Element) -> list[str]:
    found = (a.get(f"{XLINK}title") for a in svg.iter(f"{SVG}a"))
    return [t.replace("\xa0", " ") for t in found if t]


def node_count(svg: ET.Element) -> int:
    return sum(1 for g in svg.iter(f"{SVG}g") if g.get("class") == "node")


def hand() -> Value:
    program = parse_program((ROOT / "samples" / "hand.expr").read_text())
    program.output.backward()
    return program.output


def test_hand_example_records():
    text = to_dot(diagram_from_value(hand()))
    for label in (
        "{ a | data 2 | grad 6 }",
        "{ b | data -3 | grad -4 }",
        "{ c | data 10 | grad -2 }",
        "{ f | data -2 | grad 4 }",
        "{ L | data -8 | grad 1 }",
    ):
        assert f'label="{label}"' in text


def test_hand_example_svg_shows_every_number(program):
    diagram = diagram_from_value(hand())
    svg = svg_of(to_dot(diagram), program)
    shown = texts(svg)
    for node in diagram.nodes:
        if node.kind == "value":
            assert f"data {gradviz.numbers.fmt(node.data)}" in shown
            assert f"grad {gradviz.numbers.fmt(node.grad)}" in shown
    assert shown.count("*") == 2 and shown.count("+") == 1
    tips = tooltips(svg)
    assert "a: data = 2.0\ngrad = 6.0" in tips
    assert "mul: L = d·f = -8.0\n∂(d·f)/∂d = f = -2.0\n∂(d·f)/∂f = d = 4.0\ngrad in = 1.0" in tips
    assert node_count(svg) == len(diagram.nodes)  # the legend is the graph's label
    assert "|grad|" in shown and "nan / inf" in shown


def test_unnamed_output_is_called_L_in_the_picture():
    a, b = Value(2.0, label="a"), Value(3.0, label="b")
    out = a * b
    out.backward()
    assert 'label="{ L | data 6 | grad 1 }"' in to_dot(diagram_from_value(out))


def svg_size(svg: ET.Element) -> tuple[float, float]:
    return float(svg.get("width").removesuffix("pt")), float(svg.get("height").removesuffix("pt"))


def text_ys(svg: ET.Element, inside_nodes: bool) -> list[float]:
    """y of every text inside (or outside) the node groups."""
    in_nodes = {
        id(t) for g in svg.iter(f"{SVG}g") if g.get("class") == "node" for t in g.iter(f"{SVG}text")
    }
    return [
        float(t.get("y")) for t in svg.iter(f"{SVG}text") if (id(t) in in_nodes) == inside_nodes
    ]


@pytest.mark.parametrize("rankdir", ["TB", "LR"])
def test_legend_sits_above_the_drawing_and_does_not_widen_it(program, rankdir):
    # It used to be a node, laid out beside the inputs: top to bottom, that made the
    # picture of the hand example 1.7 times as wide as the graph.
    diagram = diagram_from_value(hand())
    with_legend = svg_of(to_dot(diagram, rankdir=rankdir), program)
    without = svg_of(to_dot(diagram, rankdir=rankdir, legend=False), program)
    # the key is one row of about 400 pt: it may set the width of a narrow graph only
    assert svg_size(with_legend)[0] <= max(1.1 * svg_size(without)[0], 450)
    assert max(text_ys(with_legend, inside_nodes=False)) < min(text_ys(with_legend, True))
    assert node_count(with_legend) == len(diagram.nodes)


def test_title_and_legend_share_the_graph_label(program):
    title = 'Step 1/7: L = d·f <b>&amp;</b> "q" \\G \\N \\\\ ]]> 😀 new\nline x\\'
    diagram = diagram_from_value(hand(), title=title)
    text = to_dot(diagram)
    assert text.count("\tlabel=") == 1 and "gradviz_legend" not in text
    svg = svg_of(text, program)
    assert printable(title) in texts(svg)  # exactly, though it is in an HTML-like label
    assert node_count(svg) == len(diagram.nodes)
    assert 'label="Step' in to_dot(diagram, legend=False)  # no legend: the plain title


def test_output_is_byte_stable():
    assert to_dot(diagram_from_value(hand())) == to_dot(diagram_from_value(hand()))


def test_tiny_gradient_is_not_rounded_away_and_precision_applies():
    x = Value(1.0, label="x")
    y = x * 1e-7
    y.backward()
    text = to_dot(diagram_from_value(y))
    assert "grad 1e-7" in text and "0.0000" not in text
    z = Value(1.0, label="z") * (1 / 3)
    z.backward()
    assert "data 0.33 " in to_dot(diagram_from_value(z), precision=2)
    assert "data 0.333333 " in to_dot(diagram_from_value(z), precision=6)


def node_shapes(svg: ET.Element) -> dict[str, tuple[str | None, str | None]]:
    """(fill, stroke) of each node's outline, by node id (the SVG <title>)."""
    shapes = {}
    for g in svg.iter(f"{SVG}g"):
        if g.get("class") == "node":
            outline = next(g.iter(f"{SVG}polygon"), None)
            if outline is None:
                outline = next(g.iter(f"{SVG}ellipse"))
            shapes[g.find(f"{SVG}title").text] = (outline.get("fill"), outline.get("stroke"))
    return shapes


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_and_inf_are_unmistakable_and_say_which(program):
    x = Value(0.0, label="x")
    y = x.log()  # -inf, and d/dx log(x) at 0 is inf
    y.label = "y"
    y.backward()
    text = to_dot(diagram_from_value(y))
    # the bad number is marked, the good one beside it is not
    assert 'label="{ x | data 0 | grad inf ‼ }"' in text
    assert 'label="{ y | data -inf ‼ | grad 1 }"' in text
    bad = re.findall(r'"n\d+" \[[^\n]*fillcolor="#000000", color="#d62728", penwidth="3"', text)
    assert len(bad) == 2
    svg = svg_of(text, program)
    shown = texts(svg)
    assert {"data 0", "grad inf ‼", "data -inf ‼", "grad 1"} <= set(shown)
    assert "nan / inf" in shown  # the legend names the colour
    for node_id in ("n0", "n1"):  # a border that shows: not the colour of the fill
        fill, stroke = node_shapes(svg)[node_id]
        assert fill.lower() == "#000000" and stroke.lower() == "#d62728"


@pytest.mark.parametrize("rankdir", ["LR", "RL"])
def test_horizontal_records_in_lr(rankdir):
    assert 'label="{ a | data 2' in to_dot(diagram_from_value(hand()), rankdir=rankdir)


@pytest.mark.parametrize("rankdir", ["TB", "BT"])
def test_records_stack_their_fields_in_tb(rankdir):
    # Top to bottom is chosen for wide graphs: nodes as narrow as their longest field
    # halve the width (XOR's every scalar: 3,806 pt side by side, 1,862 pt stacked).
    wide = parse_program(
        "L = a*b + c*d + e*f + g*h + i*j + k*m", dict.fromkeys("abcdefghijkm", 1.0)
    ).output
    wide.backward()
    text = to_dot(diagram_from_value(wide), rankdir=rankdir)
    assert f'rankdir="{rankdir}"' in text and 'label="{ a | data 1 | grad 1 }"' in text


@pytest.mark.parametrize("rankdir", ["TB", "BT"])
def test_narrow_ranks_keep_their_fields_side_by_side_in_tb(rankdir):
    # a chain (or the hand example) fits a page side by side: half as tall as stacked
    text = to_dot(diagram_from_value(hand()), rankdir=rankdir)
    assert f'rankdir="{rankdir}"' in text and 'label="a | data 2 | grad 6"' in text


def test_bad_rankdir_is_refused():
    with pytest.raises(ValueError, match="rankdir"):
        to_dot(diagram_from_value(hand()), rankdir="XY")


def test_no_grad_has_no_grad_fields_colours_or_legend():
    text = to_dot(diagram_from_value(hand(), grad=False))
    assert "grad" not in text.replace("gradviz", "")
    assert "legend" not in text
    assert 'label="{ a | data 2 }"' in text


HOSTILE = [
    'a"b',
    "{x}",
    "p|q",
    "<port>",
    "<f0> x",
    "back\\slash",
    "\\N",
    "\\G\\E\\T\\H\\L",
    "\\l\\r\\n",
    "x\\",
    "\\",
    '\\"',
    "a&amp;b",
    "&",
    "&#92;",
    "#;",
    "new\nline",
    "ctl\x07\x00\x1b[31m",
    "héllo ∂ σ 😀",
    "é b",  # Graphviz 2.x drops a space after a multi-byte character
    "😀 x  y",
    "]]>",
    "<!-- x -->",
    "<script>alert(1)</script>",
    "node [shape=box]",
    "a; b -> c",
    "   spaced   ",
    "\udc80 lone surrogate",
]


def hostile_graph() -> tuple[Value, list[Value]]:
    leaves = [Value(float(i), label=text) for i, text in enumerate(HOSTILE)]
    out = leaves[0]
    for leaf in leaves[1:]:
        out = out * leaf
    out.label = 'out"\\'
    out.backward()
    return out, leaves


def test_hostile_labels_render_exactly(program):
    out, _ = hostile_graph()
    diagram = diagram_from_value(out, title='title "{|}" \\N')
    svg = svg_of(to_dot(diagram), program)
    shown = texts(svg)
    for text in [*HOSTILE, 'out"\\']:
        assert printable(text).strip() in shown, text
    assert 'title "{|}" \\N' in shown
    assert node_count(svg) == len(diagram.nodes)  # nothing injected, nothing split
    tips = tooltips(svg)
    for text in HOSTILE:
        assert any(t.startswith(f"{printable(text)}: data = ") for t in tips), text


def test_hostile_text_in_clusters_edges_and_extra_lines(program):
    nasty = 'x"}|<y>\\N&amp;\n é b'
    diagram = Diagram(
        nodes=(
            Node("g1", "group", nasty, data=1.0, grad=2.0, cluster=nasty, extra_lines=(nasty,)),
            Node("g2", "group", "plain", cluster=None),
        ),
        edges=(Edge("g1", "g2", label=nasty),),
    )
    svg = svg_of(to_dot(diagram), program)
    shown = texts(svg)
    assert shown.count(printable(nasty)) == 4  # node label, extra line, cluster, edge label
    assert node_count(svg) == 2


def test_ids_from_other_builders_are_quoted_safely(program):
    diagram = Diagram(
        nodes=(Node('a" -> b', "group", "A"), Node("x\\", "group", "B"), Node("end", "group", "C")),
        edges=(Edge('a" -> b', "x\\"), Edge("x\\", "end")),
        has_grad=False,
    )
    svg = svg_of(to_dot(diagram), program)
    assert node_count(svg) == 3 and sorted(texts(svg)) == ["A", "B", "C"]


def test_label_escaping_leaves_no_raw_specials():
    escaped = label_text('{}|<>"\\&')
    assert not set(escaped) & set('{}|<>"\\')


def test_states_and_emphasis_for_trace_frames(program):
    diagram = diagram_from_value(hand())
    frame = diagram.with_states({"n4": "current", "n6": "done"}, [("n4", "n6_op")], default="dim")
    text = to_dot(frame)
    # the current step in blue (it shows on the orange bands), done green, the rest dimmed
    assert re.search(r'"n4" \[[^\n]*color="#0969da", penwidth="3"', text)
    assert re.search(r'"n6" \[[^\n]*color="#2ca02c", penwidth="2"', text)
    assert re.search(r'"n0" \[[^\n]*fillcolor="#ffffff"[^\n]*fontcolor="#aaaaaa"', text)
    assert '"n4" -> "n6_op" [color="#0969da", penwidth="2.5"]' in text
    svg_of(text, program)


def test_clusters_become_subgraphs(program):
    L = hand()
    text = to_dot(diagram_from_value(L, clusters={L: "the output"}))
    assert 'subgraph cluster_0 {\n\t\tlabel="the output"' in text
    assert "the output" in texts(svg_of(text, program))


def test_a_path_that_leaves_a_cluster_and_comes_back_is_drawn(program):
    """The smallest graph cut from a ViT's op view that dot 2.43 and graphviz-pure both
    refused ("lost w z edge"): z follows y inside the box, and x inside it too, but through
    w outside. Ranked a cluster at a time, x→w→z gets one rank and a flat edge lost between
    records; ranked at once (`newrank`) it is drawn, with every edge."""
    nodes = [Node(i, "value", i, cluster=None if i == "w" else "box") for i in "yxzw"]
    edges = [Edge("x", "w"), Edge("w", "z"), Edge("y", "z")]
    text = to_dot(Diagram(tuple(nodes), tuple(edges), has_grad=False))
    assert 'newrank="true"' in text
    svg = svg_of(text, program)
    assert sum(1 for g in svg.iter(f"{SVG}g") if g.get("class") == "edge") == 3
    # a box no path leaves and re-enters keeps dot's default ranking (the same text)
    inside = [replace(n, cluster="box") for n in nodes]
    assert "newrank" not in to_dot(Diagram(tuple(inside), tuple(edges), has_grad=False))


def test_draw_returns_a_digraph_with_the_same_source():
    L = hand()
    digraph = gradviz.draw(L, rankdir="TB", precision=3)
    assert isinstance(digraph, graphviz.Digraph)
    assert digraph.source == to_dot(diagram_from_value(L), rankdir="TB", precision=3)


def test_draw_renders_through_the_graphviz_package(monkeypatch):
    # With no system dot, the package is pointed at graphviz-pure (a plain pip install).
    monkeypatch.setenv("GRADVIZ_DOT", "pure")
    monkeypatch.setattr(
        graphviz.backend.dot_command, "DOT_BINARY", graphviz.backend.dot_command.DOT_BINARY
    )
    digraph = gradviz.draw(hand())
    assert Path(graphviz.backend.dot_command.DOT_BINARY).name == "graphviz-pure"
    svg = digraph.pipe(format="svg")
    assert "grad 6" in texts(ET.fromstring(svg))


def test_a_subtraction_says_which_input_is_which():
    # `e - 1` is not `1 - e`: the op reads `a − b` and its edges say a and b (and `+`, `*`,
    # whose order does not matter, stay as they were)
    out = parse_program("e = 2*x; o = (e - 1)/(e + 1)", {"x": 0.5}).output
    out.backward()
    text = to_dot(diagram_from_value(out))
    assert 'label="a − b"' in text and 'label="a ÷ b"' in text and 'label="+"' in text
    e, one = "n2", "n3"  # e, then the constant 1 (graph order)
    assert re.search(rf'"{e}" -> "n4_op" \[headlabel="a"', text)
    assert re.search(rf'"{one}" -> "n4_op" \[headlabel="b"', text)
    assert text.count("headlabel=") == 4  # two into −, two into ÷


def test_a_credit_runs_through_its_own_text_node() -> None:
    # `+= 6` as an edge label stood in the gap beside the other input's edge; on a node
    # of its own the layout keeps room for it on its edge's line (tests/test_docs_pictures)
    from gradviz.drawn import trace_frames
    from gradviz.render.dot import credit_edge_key, credit_node_id
    from gradviz.tracing import trace

    a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    e = a * b
    e.label = "e"
    frame = trace_frames(e, trace(e))[0]  # e = a·b passes -3 to a and 2 to b
    text = to_dot(frame)
    into = [edge for edge in frame.edges if edge.label and edge.label.startswith("+= ")]
    assert sorted(edge.label for edge in into) == ["+= -3", "+= 2"]
    for edge in into:
        name = credit_node_id(edge)
        assert credit_edge_key(name) == (edge.source, edge.target, edge.index)
        assert f'"{edge.source}" -> "{name}"' in text and f'"{name}" -> "{edge.target}"' in text
        assert re.search(
            rf'"{re.escape(name)}" \[shape="plaintext"[^\n]*label="{re.escape(edge.label)}"', text
        )
    assert "decorate" not in text and credit_edge_key("n0") is None
