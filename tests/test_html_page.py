"""The live page's logic under jsdom (always run: Node is in the test setup): what it shows
at first and after an input moves, against the Python engine at the same values; its
steps against `gradviz trace`; its state in the URL; its command; hostile names.

tests/html/page.js opens a page in jsdom, performs actions and reports what the page shows
(one Node process runs every page of a worker: tests/html/serve.js).
"""

from __future__ import annotations

import atexit
import base64
import functools
import hashlib
import json
import math
import os
import re
import select
import shlex
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from gradviz.cli import cli
from gradviz.drawn import diagram_from_value, page_graph
from gradviz.engine import Value, topological_order
from gradviz.expr import parse_program
from gradviz.names import node_names
from gradviz.numbers import fmt
from gradviz.pages import html_page, one_line
from gradviz.render import html
from gradviz.text import printable

HARNESS = Path(__file__).parent / "html" / "page.js"
SERVER = Path(__file__).parent / "html" / "serve.js"  # runs HARNESS and report.js
MODULES = Path(__file__).parent / "mermaid" / "node_modules"
NODE = shutil.which("node")


@pytest.fixture(autouse=True)
def _needs_node_and_jsdom() -> None:
    """Skip locally without Node or jsdom; under CI (`make test` installs them) fail."""
    if NODE is None or not (MODULES / "jsdom").is_dir():
        why = "node or jsdom missing (cd tests/mermaid && npm ci)"
        if os.environ.get("CI"):
            pytest.fail(f"the page's logic tests must run in CI: {why}")
        pytest.skip(why)


HAND = "e = a*b; d = e + c; L = d*f"
HAND_VALUES = {"a": 2.0, "b": -3.0, "c": 10.0, "f": -2.0}
TWICE = "y = x*x; z = y + detach(x); L = z*x"


def page_for(text: str, values: dict[str, float], command: str = "draw") -> str:
    program = parse_program(text, values)
    program.output.backward()
    return html_page(diagram_from_value(program.output), expression=text, command=command)


def run_page(page: str, actions: list[dict], tmp_path: Path, hash_: str = "") -> list[dict]:
    page_file = tmp_path / "page.html"
    page_file.write_text(page, encoding="utf-8")
    return run_harness(HARNESS, page_file, actions, tmp_path, hash_)


class Harnesses:
    """One Node process a worker for every harness run (tests/html/serve.js): Node's start
    and jsdom's load, which cost most of a run, once rather than once a page."""

    def __init__(self) -> None:
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (open while the process runs)
        self.node = subprocess.Popen(
            [NODE, str(SERVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            encoding="utf-8",
            env={"NODE_PATH": str(MODULES)},
        )
        atexit.register(self.close)

    def run(self, harness: Path, args: list[str]) -> dict:
        try:
            self.node.stdin.write(json.dumps({"harness": harness.name, "args": args}) + "\n")
            self.node.stdin.flush()
            ready, _, _ = select.select([self.node.stdout], [], [], 120)
            line = self.node.stdout.readline() if ready else ""
        except OSError:
            line = ""
        if not line:  # it ended or hangs: the next run starts a fresh one
            self.close()
            harnesses.cache_clear()
            self.stderr.seek(0)
            raise AssertionError(f"the page harness stopped: {self.stderr.read()[-3000:]!r}")
        result = json.loads(line)
        assert "crashed" not in result, result["crashed"]
        return result

    def close(self) -> None:
        if self.node.poll() is None:
            self.node.stdin.close()
            try:
                self.node.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.node.kill()


@functools.cache
def harnesses() -> Harnesses:
    return Harnesses()


def run_harness(
    harness: Path, page_file: Path, actions: list[dict], tmp_path: Path, *more: str
) -> list[dict]:
    """Run a jsdom harness (tests/html/*.js) on a page with a list of actions: the page's
    state after each; the page must have raised no error."""
    actions_file = tmp_path / "actions.json"
    actions_file.write_text(json.dumps(actions), encoding="utf-8")
    result = harnesses().run(harness, [str(page_file), str(actions_file), *more])
    assert result["errors"] == []
    return result["states"]


def shown_numbers(state: dict) -> dict[str, tuple[str, str]]:
    """Each value node's data and grad as the page shows them (figure spaces dropped)."""
    shown = {}
    for node in state["nodes"]:
        texts = [t.replace("\u2007", "").strip() for t in node["texts"]]
        data = [t[5:] for t in texts if t.startswith("data ")]
        grad = [t[5:] for t in texts if t.startswith("grad ")]
        if data:
            shown[node["id"]] = (data[0], grad[0])
    return shown


def python_numbers(text: str, values: dict[str, float]) -> dict[str, tuple[str, str]]:
    program = parse_program(text, values)
    program.output.backward()
    order = topological_order(program.output)
    return {f"n{i}": (fmt(v.data), fmt(v.grad)) for i, v in enumerate(order)}


def leaf_index(page: str, name: str) -> int:
    data = json.loads(re.search(r'id="gv-data">(.*?)</script>', page).group(1))
    return next(i for i in data["leaves"] if data["nodes"][i]["name"] == name)


def trace_blocks(text: str, values: dict[str, float]) -> list[str]:
    """`gradviz trace`'s backward pass as it prints it, one block per step."""
    args = ["trace", text, *(f"{k}={v!r}" for k, v in values.items())]
    out = CliRunner().invoke(cli, args).output
    backward = out.split("\n\nGradients")[0]
    return [b.rstrip("\n") for b in re.split(r"\n\n(?=Step \d)", backward)[1:]]


def test_the_page_shows_the_python_engines_numbers_and_follows_an_input(tmp_path: Path) -> None:
    page = page_for(HAND, HAND_VALUES)
    a = leaf_index(page, "a")
    states = run_page(page, [{"type": [a, "2.5"]}, {"type": [a, "-7.25"]}], tmp_path)
    assert shown_numbers(states[0]) == python_numbers(HAND, HAND_VALUES)
    assert shown_numbers(states[1]) == python_numbers(HAND, {**HAND_VALUES, "a": 2.5})
    assert shown_numbers(states[2]) == python_numbers(HAND, {**HAND_VALUES, "a": -7.25})


def test_the_nudge_readout_compares_the_measured_change_with_the_estimate(tmp_path: Path) -> None:
    page = page_for(HAND, HAND_VALUES)
    states = run_page(page, [{"type": [leaf_index(page, "a"), "2.5"]}], tmp_path)
    # L = (a·b + c)·f: at a = 2, L = -8 and dL/da = b·f = 6; at 2.5, L = -5.
    assert states[1]["nudge"].splitlines() == [
        "a: 2 → 2.5   (Δa = 0.5)",
        "L: -8 → -5   measured ΔL = 3",
        "estimate dL/da · Δa = 6 · 0.5 = 3",
        "the linear estimate is off by 0 (0% of the change)",
    ]


@pytest.mark.parametrize(
    ("text", "values", "moved"),
    [(HAND, HAND_VALUES, {"b": 0.5}), (TWICE, {"x": 3.0}, {"x": -1.5})],
)
def test_every_step_says_what_gradviz_trace_says(
    text: str, values: dict[str, float], moved: dict[str, float], tmp_path: Path
) -> None:
    page = page_for(text, values)
    expected = trace_blocks(text, values)
    states = run_page(page, [{"click": "next"}] * len(expected), tmp_path)
    assert [s["step"] for s in states[1:]] == expected
    # After an input moves, the page computes its steps itself: still gradviz trace's.
    name, x = next(iter(moved.items()))
    actions = [{"type": [leaf_index(page, name), repr(x)]}] + [{"click": "next"}] * len(expected)
    states = run_page(page, actions, tmp_path)
    assert [s["step"] for s in states[2:]] == trace_blocks(text, {**values, **moved})


def test_details_on_hover_are_the_svg_tooltips(tmp_path: Path) -> None:
    page = page_for(HAND, HAND_VALUES)
    moved = {**HAND_VALUES, "f": 0.125}
    hovers = ["n6_op", "n2_op", "n0", "n6", "n5->n6_op"]
    states = run_page(
        page,
        [{"type": [leaf_index(page, "f"), "0.125"]}] + [{"hover": h} for h in hovers],
        tmp_path,
    )
    program = parse_program(HAND, moved)
    program.output.backward()
    diagram = diagram_from_value(program.output)
    details = [s["detail"] for s in states[2:]]
    assert details[:4] == [diagram.node(h).detail for h in hovers[:4]]
    # An edge into an op: the op, and the local derivative along that edge.
    assert details[4].splitlines() == diagram.node("n6_op").detail.splitlines()[:3:2]
    assert "∂(d·f)/∂d = f = 0.125" in states[2]["detail"]


def test_details_of_constants_and_their_ops_are_the_svg_tooltips(tmp_path: Path) -> None:
    text = "y = 2*x + x*x - 1"
    page = page_for(text, {"x": 3.0})
    program = parse_program(text, {"x": 1.5})
    program.output.backward()
    diagram = diagram_from_value(program.output)
    hovers = [n.id for n in diagram.nodes]
    states = run_page(
        page, [{"type": [leaf_index(page, "x"), "1.5"]}] + [{"hover": h} for h in hovers], tmp_path
    )
    assert [s["detail"] for s in states[2:]] == [diagram.node(h).detail for h in hovers]
    assert any(": a constant, data = 2.0" in s["detail"] for s in states[2:])
    blocks = trace_blocks(text, {"x": 3.0})
    steps = run_page(page, [{"click": "next"}] * len(blocks), tmp_path)
    assert [s["step"] for s in steps[1:]] == blocks


def test_state_lives_in_the_url_and_the_command_reproduces_it(tmp_path: Path) -> None:
    page = page_for(HAND, HAND_VALUES)
    states = run_page(
        page, [{"type": [leaf_index(page, "c"), "1e-7"]}, {"click": "next"}], tmp_path
    )
    assert states[-1]["hash"] == "#a=2&b=-3&c=1e-7&f=-2&step=1"
    assert (
        states[-1]["command"] == "gradviz draw 'e = a*b; d = e + c; L = d*f' a=2 b=-3 c=1e-7 f=-2"
    )
    reopened = run_page(page, [], tmp_path, "#a=2&b=-3&c=1e-7&f=-2&step=0")[0]
    assert shown_numbers(reopened) == python_numbers(HAND, {**HAND_VALUES, "c": 1e-7})
    reopened = run_page(page, [], tmp_path, "#a=2&b=-3&c=1e-7&f=-2&step=3")[0]
    assert reopened["step"] == trace_blocks(HAND, {**HAND_VALUES, "c": 1e-7})[2]
    # The command runs: same numbers.
    words = ["draw", HAND, "a=2", "b=-3", "c=1e-7", "f=-2"]
    assert CliRunner().invoke(cli, words).exit_code == 0


def test_the_sliders_come_in_the_order_the_expression_names_them(tmp_path: Path) -> None:
    text = "L = (v*h + w*x)*y"
    page = page_for(text, {"y": 1.0, "x": 2.0, "w": 3.0, "v": 4.0, "h": 5.0})
    order = re.findall(r'<div class="leaf" id="leaf-\d+"><label for="range-\d+">(\w+)<', page)
    assert order == ["v", "h", "w", "x", "y"]


def test_the_trace_page_opens_on_step_one(tmp_path: Path) -> None:
    out = tmp_path / "trace.html"
    args = ["trace", HAND, *(f"{k}={v!r}" for k, v in HAND_VALUES.items()), "-o", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    state = run_page(out.read_text("utf-8"), [], tmp_path)[0]
    assert state["step"] == trace_blocks(HAND, HAND_VALUES)[0]
    assert state["command"].startswith("gradviz trace 'e = a*b;")


def power_chain(values: int) -> Value:
    """x·x·…·x: `values` values (x and each product), backpropagated."""
    x = Value(0.5, "x")
    out = x
    for _ in range(values - 1):
        out = out * x
    out.backward()
    return out


def test_a_graph_too_large_to_be_live_is_the_picture_with_a_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the limit itself, on the diagrams (no layout): LIVE_LIMIT values are live, one more not
    limit = html.LIVE_LIMIT
    assert html.live_reason(diagram_from_value(power_chain(limit))) is None
    over = html.live_reason(diagram_from_value(power_chain(limit + 1)))
    assert over == f"{limit + 1} values: live pages stop at {limit}"
    # the pages on either side of a limit of 4 (a picture of 300 values takes seconds to lay out)
    monkeypatch.setattr(html, "LIVE_LIMIT", 4)
    assert "<script" in html_page(diagram_from_value(power_chain(4)), expression="x*x*x*x")
    page = html_page(diagram_from_value(power_chain(5)), expression="x*x*x*x*x")
    assert "<script" not in page
    assert "5 values: live pages stop at 4" in page
    assert "<svg" in page


HOSTILE = [
    "</script><script>window.pwned = 1</script>",
    "<!--",
    "a\u2028b\u2029c",
    "\"'&amp;<b>x</b>",
    "]]><img src=x onerror=window.pwned=2>",
    "</title></style><svg onload=window.pwned=3>",
]


def test_hostile_names_stay_text(tmp_path: Path) -> None:
    leaves = [Value(float(i + 1), label=label) for i, label in enumerate(HOSTILE)]
    out = leaves[0]
    for leaf in leaves[1:]:
        out = out * leaf
    out.label = "out</script>"
    out.backward()
    expression = " * ".join(HOSTILE)
    page = html_page(diagram_from_value(out), expression=expression)
    assert page.count("<script") == 2 and page.count("</script>") == 2
    data = json.loads(re.search(r'id="gv-data">(.*?)</script>', page).group(1))
    assert [n["name"] for n in data["nodes"] if n["k"] is None] == [
        node_names(topological_order(out))[leaf] for leaf in leaves
    ]
    states = run_page(page, [{"hover": "n0"}, {"click": "next"}], tmp_path)
    assert states[0]["scripts"] == 2
    assert states[0]["h1"] == expression[:77] + "…"  # long titles are cut
    assert states[1]["detail"].startswith(f"{HOSTILE[0]}: data = 1.0")
    assert all(state["pwned"] is None for state in states)
    names = [f"{printable(label)}={i + 1}" for i, label in enumerate(HOSTILE)]
    names.append(names.pop(2))  # shown as `a\u2028b…`, not found in the text: last
    assert states[-1]["command"] == " ".join(
        ["gradviz", "draw", shlex.quote(expression), *map(shlex.quote, names)]
    )
    assert states[2]["step"].startswith("Step 1/11  out</script> = n8·</title></style><svg")


def test_the_policy_allows_exactly_the_pages_own_script_and_style() -> None:
    page = page_for(HAND, HAND_VALUES)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
    code = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
    # the page's style, and the dark-mode style sheet inside its SVG
    css, svg_css = re.findall(r"<style>(.*?)</style>", page, re.S)

    def digest(text: str) -> str:
        return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    assert csp.startswith("default-src 'none'; ")
    assert f"script-src 'sha256-{digest(code)}';" in csp
    assert f"style-src 'sha256-{digest(css)}' 'sha256-{digest(svg_css)}';" in csp
    # Nothing the page could fetch: no src or href anywhere, no URL but SVG's namespaces.
    assert not re.search(r"\b(src|href|action)\s*=", page)
    assert set(re.findall(r"https?://[^\s\"']*", page)) <= {
        "http://www.w3.org/2000/svg",
        "http://www.w3.org/1999/xlink",
    }


def test_explore_shows_the_page_in_an_isolated_frame(tmp_path: Path) -> None:
    import html as html_module

    import gradviz

    page = gradviz.explore(HAND, **HAND_VALUES)
    frame = page._repr_html_()
    assert frame.startswith("<iframe srcdoc=") and 'sandbox="allow-scripts"' in frame
    srcdoc = re.search(r'srcdoc="([^"]*)"', frame).group(1)
    assert html_module.unescape(srcdoc) == page.html
    assert shown_numbers(run_page(page.html, [], tmp_path)[0]) == python_numbers(HAND, HAND_VALUES)
    # A Value built in Python: live, with no command line to copy.
    a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    state = run_page(gradviz.explore(a * b + a).html, [{"type": [0, "4"]}], tmp_path)[-1]
    assert shown_numbers(state)["n3"] == ("-8", "1") and state["command"] == ""
    page.save(tmp_path / "saved.html")
    assert (tmp_path / "saved.html").read_text("utf-8") == page.html


@pytest.mark.parametrize("sample", sorted(Path("samples").glob("*.expr")), ids=lambda p: p.name)
def test_an_expression_file_becomes_one_line_for_the_heading_and_command(sample: Path) -> None:
    text = sample.read_text("utf-8")
    line = one_line(text)
    assert "\n" not in line and "#" not in line
    assert parse_program(line).output.data == parse_program(text).output.data


class _Page(HTMLParser):
    """What an HTML parser makes of a page: script elements and their text, and text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data
        else:
            self.text.append(data)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=2, max_size=3), st.text(max_size=40))
def test_any_name_and_expression_text_stays_inside_its_element(
    labels: list[str], text: str
) -> None:
    """Pure page building (no Graphviz): the names reach the page only as escaped text or as
    JSON without `<`, so the parser sees exactly two scripts and the JSON reads back."""
    leaves = [Value(float(i), label=label) for i, label in enumerate(labels)]
    out = leaves[0] * leaves[1] + leaves[-1]
    out.backward()
    diagram = diagram_from_value(out)
    page = html.to_html(diagram, "<svg></svg>", expression=text or "x", graph=page_graph(diagram))
    parser = _Page()
    parser.feed(page)
    parser.close()
    assert len(parser.scripts) == 2
    data, code = parser.scripts
    assert "<" not in data and "\u2028" not in data
    names = node_names(topological_order(out))
    assert [n["name"] for n in json.loads(data)["nodes"]] == [
        names[v] for v in topological_order(out)
    ]
    assert code == html.engine_script() + html.asset_text("page.js")
    shown = "".join(parser.text)
    for leaf in leaves:
        if leaf.label.strip():
            assert names[leaf] in shown  # each input's label, as text


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("a", {"a": 2.0}),
        ("2*3 + 1", {}),
        ("log(a) * b", {"a": -1.0, "b": 0.0}),
        ("a*b", {"a": math.inf, "b": math.nan}),
        ("exp(a)", {"a": 800.0}),
    ],
    ids=["a leaf alone", "no inputs", "nan", "inf and nan inputs", "overflow"],
)
def test_odd_graphs_show_what_python_shows(text: str, values: dict, tmp_path: Path) -> None:
    page = page_for(text, values)
    states = run_page(page, [{"click": "next"}] * 3, tmp_path)
    shown = {k: tuple(x.removesuffix(" ‼") for x in v) for k, v in shown_numbers(states[0]).items()}
    expected = python_numbers(text, values)
    assert shown == {k: expected[k] for k in shown}  # constants show their number alone
    assert f"n{len(expected) - 1}" in shown
    blocks = trace_blocks(text, values)
    assert [s["step"] for s in states[1 : len(blocks) + 1]] == blocks[:3]


def test_the_page_keeps_the_trace_format_whatever_the_precision(tmp_path: Path) -> None:
    program = parse_program(HAND, HAND_VALUES)
    program.output.backward()
    page = html_page(diagram_from_value(program.output), expression=HAND, precision=7)
    moved = {**HAND_VALUES, "a": 1 / 3}
    states = run_page(
        page, [{"type": [leaf_index(page, "a"), repr(1 / 3)]}, {"click": "next"}], tmp_path
    )
    assert states[-1]["step"] == trace_blocks(HAND, moved)[0]
    assert shown_numbers(states[1])["n0"] == ("0.3333333", "6")
