"""Mermaid output, checked by the real Mermaid parser (mermaid.js under Node + jsdom).

All texts are parsed in one Node process (a module fixture): the parser reports each
node's label as a browser would show it, so tests compare it with what we meant.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from mermaid.check import parse_mermaid

import gradviz
from gradviz import Value
from gradviz.cli import flag
from gradviz.drawn import diagram_from_value, to_markdown, to_mermaid, trace_frames
from gradviz.errors import RenderError
from gradviz.expr import parse_program
from gradviz.render.diagram import Diagram, Edge, Node
from gradviz.render.mermaid import MAX_EDGES, escape
from gradviz.text import printable
from gradviz.tracing import trace

ROOT = Path(__file__).resolve().parent.parent


def program_output(name: str) -> Value:
    program = parse_program((ROOT / "samples" / f"{name}.expr").read_text())
    program.output.backward()
    return program.output


HOSTILE = [
    'a"b',
    "#quot;",
    "#35;",
    "&amp;",
    "&",
    "<b>bold</b>",
    "<img src=x onerror=alert(1)>",
    "back\\slash \\n",
    "`code`",
    "**not markdown**",
    "{x} [y] (z)",
    "p|q",
    "A;B",
    "50%",
    "%%",
    ":::g0",
    "-->",
    "end",
    "style",
    "subgraph",
    "graph TD",
    "click",
    "new\nclick n0 call alert(1)",
    "x\n%%{init: {'theme':'dark'}}%%",
    "ctl\x07\x00\x1b[31m",
    "héllo ∂ σ 😀",
    '"\nstyle:"',  # Mermaid strips `;` of an entity on lines like `style…:…#…;`
    "classDef x:#fff;",
    "   spaced   ",
]


def hostile_graph() -> Value:
    leaves = [Value(float(i), label=text) for i, text in enumerate(HOSTILE)]
    out = leaves[0]
    for leaf in leaves[1:]:
        out = out + leaf
    out.label = "end"
    out.backward()
    return out


def square() -> Value:
    x = Value(3.0, label="x")
    y = x * x
    y.label = "y"
    y.backward()
    return y


def framed() -> Diagram:
    diagram = diagram_from_value(program_output("hand"))
    return diagram.with_states({"n4": "current", "n6": "done"}, [("n4", "n6_op")], default="dim")


NASTY = 'c"l}|#end\n%%'

# Titles as Mermaid must draw them: exactly as typed (a newline shown as \\n).
TITLES = {
    "Step 1/7: L = d·f": "Step 1/7: L = d·f",
    "xor: loss of input (0, 1), target 1": "xor: loss of input (0, 1), target 1",
    't"#\\`itle: x\n---\nflowchart TD': 't"#\\`itle: x\\n---\\nflowchart TD',
    "<b>a</b> & b > %%{init}%% #35; é 😀": "<b>a</b> & b > %%{init}%% #35; é 😀",
    "<b>bold</b>": "<b>bold</b>",
    "R&D <x>": "R&D <x>",
    "&lt; &amp; #quot;": "&lt; &amp; #quot;",
    "---": "---",
    "key: [1] - 'q' null \\": "key: [1] - 'q' null \\",
}


def hand_frames() -> list[str]:
    output = program_output("hand")
    return [to_mermaid(frame) for frame in trace_frames(output, trace(output))]


CASES = {
    "hand": lambda: to_mermaid(program_output("hand")),
    "square": lambda: to_mermaid(square()),
    "hostile": lambda: to_mermaid(hostile_graph()),
    "titled": lambda: to_mermaid(
        diagram_from_value(square(), title='t"#\\`itle: x\n---\nflowchart TD'),
    ),
    "clusters": lambda: to_mermaid(
        Diagram(
            nodes=(
                Node("a", "group", "A", data=1.0, grad=0.5, cluster=NASTY, extra_lines=(NASTY,)),
                Node("b", "group", "B", data=2.0, grad=float("nan"), cluster="end"),
            ),
            edges=(Edge("a", "b", label=NASTY),),
        )
    ),
    "frame": lambda: to_mermaid(framed()),
    **{
        f"title{i}": (lambda t=title: to_mermaid(diagram_from_value(square(), title=t)))
        for i, title in enumerate(TITLES)
    },
    "trace_frame": lambda: hand_frames()[0],
    "nan": lambda: to_mermaid(
        Diagram((Node("x", "value", "x", data=0.0, grad=float("nan")),), (), title="xor: nan")
    ),
    "no_grad": lambda: to_mermaid(program_output("hand"), grad=False),
    "tb": lambda: to_mermaid(program_output("tanh_neuron"), rankdir="TB"),
    "detach": lambda: to_mermaid(program_output("detach")),
    # exactly Mermaid's 500 edges: mermaid.js counts the key's invisible links as edges
    # too, so such a graph comes without its key (both directions' key links differ)
    "at_limit_lr": lambda: to_mermaid(at_the_edge_limit(), rankdir="LR"),
    "at_limit_tb": lambda: to_mermaid(at_the_edge_limit(), rankdir="TB"),
}


def at_the_edge_limit() -> Value:
    out = gradviz.parse("exp(" + " + ".join(f"x{i}" for i in range(167)) + ")")
    out.backward()
    assert len(diagram_from_value(out).edges) == MAX_EDGES
    return out


@pytest.fixture(scope="module")
def parsed() -> dict[str, dict]:
    texts = {name: make() for name, make in CASES.items()}
    results = parse_mermaid(list(texts.values()))
    out = {}
    for (name, text), result in zip(texts.items(), results, strict=True):
        assert result["ok"], f"{name}: {result.get('error')}\n{text}"
        out[name] = {**shown_as_typed(result), "text": text}
    return out


def shown_as_typed(result: dict) -> dict:
    """Labels with the no-break space and hyphen that keep numbers whole read as typed."""

    def plain(text: str | None) -> str | None:
        return None if text is None else text.replace("\u202f", " ").replace("\u2011", "-")

    nodes = {key: plain(value) for key, value in result["nodes"].items()}
    return {**result, "nodes": nodes, "title": plain(result["title"]), "raw": result["nodes"]}


def test_a_graph_at_the_edge_limit_is_drawn_without_its_key(parsed):
    for name in ("at_limit_lr", "at_limit_tb"):
        assert "key_title" not in parsed[name]["text"]
        assert "~~~" not in parsed[name]["text"]
    assert "key_title" in parsed["tb"]["text"]  # a smaller graph keeps it


def test_numbers_cannot_break_across_lines(parsed):
    # Mermaid wraps at spaces and hyphens: inside `grad -3.505e-14` there are none left
    raw = parsed["hand"]["raw"]
    assert raw["n1"] == "b │ data\u202f-3 │ grad\u202f-4"
    tiny = to_mermaid(Diagram((Node("n0", "value", "x", data=1.0, grad=-3.505e-14),), ()))
    assert "grad\u202f-3.505e\u201114" in tiny


def graph_edges(result: dict) -> list[list[str]]:
    """The graph's edges, without the invisible links that line the key up in a row."""
    return [e for e in result["edges"] if not e[0].startswith("key_")]


def labels(result: dict) -> list[str]:
    return [v for k, v in result["nodes"].items() if not k.startswith("key_") and k != "legend"]


def test_every_case_parses_as_a_flowchart(parsed):
    assert {r["type"] for r in parsed.values()} == {"flowchart-v2"}


def test_hand_example_labels(parsed):
    shown = labels(parsed["hand"])
    for label in (
        "a │ data 2 │ grad 6",
        "b │ data -3 │ grad -4",
        "c │ data 10 │ grad -2",
        "f │ data -2 │ grad 4",
        "L │ data -8 │ grad 1",
    ):
        assert label in shown
    # an op's symbol is padded with em spaces, so that its circle is not a dot
    assert shown.count("\u2003*\u2003") == 2 and shown.count("\u2003+\u2003") == 1


def test_square_has_two_edges_from_x(parsed):
    edges = [(a, b) for a, b, _ in graph_edges(parsed["square"])]
    assert edges == [("n0", "n1_op"), ("n0", "n1_op"), ("n1_op", "n1")]  # the ids of DOT, JSON
    assert parsed["square"]["nodes"]["n0"] == "x │ data 3 │ grad 6"


def test_hostile_labels_come_through_exactly(parsed):
    result = parsed["hostile"]
    shown = {label.split(" │ ")[0].strip() for label in labels(result)}
    for text in HOSTILE:
        assert printable(text).strip() in shown, text
    # one node per value and per op: nothing injected, nothing split off
    diagram = diagram_from_value(hostile_graph())
    assert len(labels(result)) == len(diagram.nodes)
    assert len(graph_edges(result)) == len(diagram.edges)
    assert result["subgraphs"] == []
    assert [k for k in result["nodes"] if k.startswith("key_")] == ["key_title", "key_g5"]


def test_the_key_is_one_row_that_no_edge_runs_through(parsed):
    # left to right: the keys chained (one rank each); top to bottom: the keys share the
    # first rank and every source of the graph is linked to stand below them
    hand = parsed["hand"]
    assert [e for e in hand["edges"] if e[0].startswith("key_")] == [
        ["key_title", "key_g5", "invisible"]
    ]
    tb = parsed["tb"]
    links = {(a, b) for a, b, style in tb["edges"] if a.startswith("key_")}
    sources = {a for a, _, _ in graph_edges(tb)} - {b for _, b, _ in graph_edges(tb)}
    assert links == {(f"key_{band}", source) for band in ["g5"] for source in sources}
    assert all(not a.startswith("key_") and not b.startswith("key_") for a, b, _ in graph_edges(tb))


def test_no_line_can_start_a_directive_or_click(parsed):
    for name, result in parsed.items():
        for line in result["text"].splitlines():
            stripped = line.strip()
            assert not stripped.startswith(("%%", "click")), (name, line)


def test_titles_are_a_node_of_their_own(parsed):
    text = parsed["titled"]["text"]
    assert text.startswith('flowchart LR\n    caption["t#quot;#35;#92;#96;itle#58; x#92;n---')
    assert "\n---\n" not in text  # no front matter: nothing there for a title to end
    assert labels(parsed["titled"])[0] == 't"#\\`itle: x\\n---\\nflowchart TD'
    assert parsed["titled"]["nodes"]["n0"] == "x │ data 3 │ grad 6"
    assert parsed["titled"]["title"] == 't"#\\`itle: x\\n---\\nflowchart TD'
    assert parsed["titled"]["edges"] == parsed["square"]["edges"]  # the title joins nothing


def test_mermaid_draws_each_title_exactly(parsed):
    # read from the SVG mermaid.js draws: what a reader sees, with & < > as typed
    for i, shown in enumerate(TITLES.values()):
        result = parsed[f"title{i}"]
        assert result["title"] == shown, result["text"]
        assert result["nodes"]["n0"] == "x │ data 3 │ grad 6"
    assert parsed["hand"]["title"] is None


def test_trace_frame_titles_read_back_exactly(parsed):
    assert parsed["trace_frame"]["title"] == (
        "Step 1/7: L = d·f with dL/dL = 1 passes -2 to d and 4 to f"
    )


def test_nan_node_has_a_dark_border_and_a_marked_number(parsed):
    result = parsed["nan"]
    assert result["nodes"]["x"] == "x │ data 0 │ grad nan ‼"
    assert (
        "classDef bad fill:#000000,stroke:#d62728,stroke-width:3px,color:#ffffff"
        in (result["text"])
    )
    assert result["title"] == "xor: nan"


def test_clusters_edges_and_extra_lines_with_hostile_text(parsed):
    result = parsed["clusters"]
    nasty = printable(NASTY)
    titles = {title for _, title, _ in result["subgraphs"]}
    assert {nasty, "end"} <= titles
    assert result["nodes"]["a"] == f"A │ data 1 │ grad 0.5\n{nasty}"
    assert result["nodes"]["b"] == "B │ data 2 │ grad nan ‼"
    assert "class b bad" in result["text"]
    assert f'-->|"{escape(NASTY)}"|' in result["text"]


def test_trace_frame_classes_and_thick_edges(parsed):
    result = parsed["frame"]
    assert [s for a, b, s in result["edges"] if (a, b) == ("n4", "n6_op")] == ["thick"]
    text = result["text"]
    assert "class n4 current" in text and "class n6 done" in text
    assert "classDef dim " in text


def test_no_grad_shows_data_only(parsed):
    shown = labels(parsed["no_grad"])
    assert "a │ data 2" in shown and not any("grad" in s for s in shown)
    assert "legend" not in parsed["no_grad"]["text"]


def test_direction_and_detach_label(parsed):
    assert parsed["tb"]["text"].startswith("flowchart TB\n")
    # the end of the credit is dashed, as in the Graphviz picture and the README
    assert '-.->|"no grad"|' in parsed["detach"]["text"]


def test_the_caption_class_only_with_a_caption():
    x = Value(2.0, label="x")
    y = x * x
    y.backward()
    plain = to_mermaid(y)
    assert "caption" not in plain  # (it said `class caption caption` with no caption)
    titled = to_mermaid(replace(diagram_from_value(y), title="a title"))
    assert 'caption["a title"]' in titled and "    class caption caption\n" in titled


def test_more_edges_than_mermaid_draws_is_refused():
    x = Value(1.0, label="x")
    out = x
    for _ in range(MAX_EDGES // 3 + 1):
        out = out * x
    with pytest.raises(RenderError, match="Mermaid refuses more than 500") as error:
        to_mermaid(out)
    # an expression has no collapsed view to offer; a network (layers as clusters) does
    assert error.value.render(flag).endswith(
        "Write SVG instead (-o graph.svg), or draw a part of the expression."
    )
    # in Python's words: the same call with a Graphviz format
    assert error.value.render().endswith(
        "Write SVG instead (fmt='svg'), or draw a part of the expression."
    )
    network = diagram_from_value(out, clusters={x: "L1"})
    with pytest.raises(RenderError) as error:
        to_mermaid(network)
    rendered = error.value.render(flag)  # the CLI's words; Python's name the keyword
    assert "or draw a collapsed view (--level neuron or --level layer)." in rendered
    assert "(level='neuron' or level='layer')." in error.value.render()
    # drawn one node per neuron already: only the coarser view is offered
    with pytest.raises(RenderError) as error:
        to_mermaid(replace(network, level="neuron"))
    assert error.value.render(flag).endswith("or draw a collapsed view (--level layer).")


def test_markdown_is_a_fenced_block_and_library_api_matches():
    y = square()
    md = to_markdown(y)
    assert md.startswith("```mermaid\nflowchart LR\n") and md.endswith("```\n")
    assert md.count("```") == 2
    assert gradviz.to_mermaid(y) == to_mermaid(y)


def test_output_is_byte_stable():
    assert to_mermaid(program_output("hand")) == to_mermaid(program_output("hand"))


def test_a_subtraction_says_which_input_is_which_in_mermaid():
    out = parse_program("e = 2*x; o = (e - 1)/(e + 1)", {"x": 0.5}).output
    out.backward()
    text = to_mermaid(out)
    assert 'n4_op(("a\u202f−\u202fb"))' in text and 'n7_op(("a\u202f÷\u202fb"))' in text
    assert 'n2 -->|"a"| n4_op' in text and 'n3 -->|"b"| n4_op' in text
    assert text.count('|"a"|') == 2 and text.count('|"b"|') == 2
