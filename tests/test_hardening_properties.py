"""Property-based hardening: whatever text, names and numbers come in, gradviz answers
with its own errors or with output that the real tools accept.

- The readers (expressions, NAME=VALUE, specs, models, CSV) raise nothing but
  GradvizError, whatever the text.
- Every generated graph's DOT is rendered by the real `dot` AND by graphviz-pure; every
  SVG parses as XML and shows each node's data and grad; every Mermaid text is parsed by
  the real mermaid.js (tests/mermaid, one Node process for all of them) and reads back
  exactly the labels we meant.
- Gradients agree with central finite differences on functions that are smooth
  everywhere.

Hypothesis runs collect many examples and check them in one batch, since starting
`dot` or Node costs more than any single check. Example counts are modest: the file
runs in seconds.
"""

from __future__ import annotations

import json
import math
import subprocess
import unicodedata
import xml.etree.ElementTree as ET

import pytest
from graphviz_support import system_dot
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from mermaid.check import parse_mermaid

from gradviz import Value
from gradviz.data import parse_csv
from gradviz.drawn import diagram_from_value
from gradviz.engine import evaluate, topological_order
from gradviz.errors import ExpressionError, GradvizError, InputError
from gradviz.expr import FUNCTIONS, parse_assignments, parse_program
from gradviz.layout import _pure_program
from gradviz.model import parse_model
from gradviz.numbers import fmt
from gradviz.render.diagram import Diagram, constant_text, number_text, title_lines
from gradviz.render.dot import to_dot
from gradviz.render.json import to_json
from gradviz.render.mermaid import CAPTION, SEPARATOR, to_mermaid
from gradviz.spec import MAX_EPOCHS, MAX_PARAMETERS, spec_from_mapping
from gradviz.text import printable

SVG = "{http://www.w3.org/2000/svg}"
CONTROL = ("Cc", "Cs", "Cf")
FAST = settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# -- strategies ---------------------------------------------------------------------------

# Names that are keywords or statements in DOT or Mermaid, non-ASCII identifiers, and
# identifiers that Python reads differently after NFKC normalisation (ｘ is x, ℌ is H).
NAMES = st.one_of(
    st.sampled_from(
        [
            "a",
            "x1",
            "w_2",
            "end",
            "style",
            "click",
            "graph",
            "node",
            "edge",
            "subgraph",
            "digraph",
            "strict",
            "flowchart",
            "classDef",
            "linkStyle",
            "direction",
            "default",
            "é",
            "ñandú",
            "Δx",
            "σ",
            "ｘ",
            "ℌ",
            "x١",
            "_",
        ]
    ),
    st.from_regex(r"[a-z][a-z0-9_]{0,4}", fullmatch=True).filter(
        lambda n: (
            n not in FUNCTIONS
            and n not in {"pi", "e", "if", "in", "is", "or", "and"}
            and n not in {"as", "def", "del", "for", "not", "try"}
        )
    ),
)
NUMBERS = st.one_of(
    st.floats(min_value=0, max_value=1e300, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, 1e-300, 5e-324, 1e-7, 0.5, 2.0, 1e300]),
).map(repr)


def _binary(pair: tuple[str, str], op: str) -> str:
    return f"({pair[0]}) {op} ({pair[1]})"


EXPRESSIONS = st.recursive(
    st.one_of(NAMES, NUMBERS),
    lambda inner: st.one_of(
        st.builds(_binary, st.tuples(inner, inner), st.sampled_from(["+", "-", "*", "/", "**"])),
        st.builds(lambda f, x: f"{f}({x})", st.sampled_from(FUNCTIONS), inner),
        inner.map(lambda x: f"-({x})"),
    ),
    max_leaves=10,
)
VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e-12, -3.5, float("nan"), float("inf"), float("-inf")]),
)

# Characters that mean something to Python, DOT, Mermaid, HTML, terminals or JSON.
HOSTILE_ALPHABET = st.one_of(
    st.sampled_from(list("{}|<>\"'\\#&;:%`[]()=*/+-_., \n\r\t\x00\x1b\x07\u2028\u202e\ufeff")),
    st.sampled_from(["\\N", "\\l", "\\G", "%%{init}%%", "click", "end", "&amp;", "#quot;"]),
    st.characters(),
)
HOSTILE_TEXT = st.lists(HOSTILE_ALPHABET, min_size=1, max_size=8).map("".join)

CODE_ALPHABET = st.sampled_from(
    [
        *"abcxyz_019.+-*/%@()[]{}:;=,'\"\\#!~^&|<> \n\tｅｘｐ²×−",
        *("lambda ", "import ", "__import__", ".", "**", "//", ":=", "f'", "for ", "if ", "exp"),
    ]
)
CODE_TEXT = st.lists(CODE_ALPHABET, max_size=30).map("".join)


# -- the readers raise only our errors ------------------------------------------------------


@FAST
@given(st.one_of(EXPRESSIONS, CODE_TEXT, st.text(max_size=60)))
def test_the_expression_parser_raises_only_our_errors(text):
    try:
        program = parse_program(text)
    except ExpressionError as error:
        shown = error.render()  # one message, the line, a caret: no control characters
        assert "^" in shown
        # no control, surrogate or bidi/format character reaches the terminal
        assert all(c == "\n" or unicodedata.category(c) not in CONTROL for c in shown), shown
        return
    except GradvizError:
        return
    program.output.backward()  # a program that parsed also runs backward


@FAST
@given(EXPRESSIONS, st.lists(VALUES, min_size=0, max_size=4))
def test_values_of_any_float_never_crash_and_stay_visible(text, numbers):
    try:
        names = list(parse_program(text).leaves)
    except GradvizError:
        return
    values = dict(zip(names, numbers, strict=False))
    program = parse_program(text, values)
    program.output.backward()
    diagram = diagram_from_value(program.output)
    document = json.loads(to_json(diagram))  # valid JSON, non-finite numbers as strings
    for node, entry in zip(diagram.nodes, document["nodes"], strict=True):
        if node.data is not None:
            expected = fmt(node.data, 17) if not math.isfinite(node.data) else node.data
            assert entry["data"] == expected


@FAST
@given(st.lists(st.one_of(st.text(max_size=12), HOSTILE_TEXT), max_size=4))
def test_name_value_arguments_raise_only_our_errors(args):
    try:
        values = parse_assignments(args)
    except GradvizError:
        return
    assert all(isinstance(v, float) for v in values.values())


JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**400), max_value=10**400),
        st.floats(),
        st.text(max_size=8),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
SPEC_KEYS = st.sampled_from(
    ["layers", "activation", "data", "epochs", "learning_rate", "update", "seed", "name"]
)
SPEC_VALUES = st.one_of(
    JSON_VALUES,
    st.lists(st.integers(min_value=-3, max_value=3000), max_size=5),
    st.sampled_from(["xor", "circle", "minibatch 0", "minibatch 4", "sigmoid", "x.csv"]),
)


@FAST
@given(st.dictionaries(st.one_of(SPEC_KEYS, st.text(max_size=5)), SPEC_VALUES, max_size=6))
def test_spec_checking_raises_only_our_errors(raw):
    try:
        spec = spec_from_mapping(raw)
    except GradvizError:
        return
    assert spec.n_parameters <= MAX_PARAMETERS and spec.epochs <= MAX_EPOCHS


@pytest.fixture(scope="module")
def model_text(tmp_path_factory) -> str:
    from click.testing import CliRunner

    from gradviz.cli import cli

    path = tmp_path_factory.mktemp("model") / "xor.json"
    result = CliRunner().invoke(cli, ["train", "xor", "--epochs", "3", "-q", "--save", str(path)])
    assert result.exit_code == 0, result.output
    return path.read_text()


@FAST
@given(
    st.data(),
    st.sampled_from(["cut", "replace", "insert", "value"]),
)
def test_damaged_models_raise_only_our_errors(model_text, data, how):
    text = model_text
    at = data.draw(st.integers(0, len(text)))
    if how == "cut":
        text = text[:at]
    elif how == "replace":
        text = text[:at] + data.draw(HOSTILE_TEXT) + text[at + 3 :]
    elif how == "insert":
        text = (
            text[:at]
            + data.draw(st.sampled_from(["NaN", "1e999", "9" * 400, '"x":1,']))
            + text[at:]
        )
    else:
        raw = json.loads(text)
        raw["layers"][0]["weights"][0][0] = data.draw(JSON_VALUES)
        raw["spec"][data.draw(SPEC_KEYS)] = data.draw(SPEC_VALUES)
        text = json.dumps(raw)
    try:
        model = parse_model(text, "model.json")
    except GradvizError:
        return
    for weights, biases in model.weights:
        assert math.isfinite(float(abs(weights).sum() + abs(biases).sum()))


@FAST
@given(
    st.lists(st.lists(st.one_of(HOSTILE_TEXT, NUMBERS, st.sampled_from(["0", "1"]))), max_size=5)
)
def test_csv_reading_raises_only_our_errors(rows):
    text = "\n".join(",".join(row) for row in rows)
    try:
        data = parse_csv(text, "data.csv")
    except GradvizError:
        return
    assert data.X.shape[0] == data.Y.shape[0] and set(data.Y.tolist()) <= {0.0, 1.0}


# Text far longer than any error may quote: a long name, value, key, cell or column.
LONG_TEXT = st.one_of(
    st.text(min_size=61, max_size=3000),
    st.builds(
        lambda c, n: c * n,
        st.sampled_from(["v", "9", "é", "漢", "\x1b", "'"]),
        st.integers(61, 20_000),
    ),
)
MAX_ERROR_LINE = 250


def _short_lines(error: GradvizError) -> None:
    for line in error.render().splitlines():
        # a line that lists the 14 spec keys is longer by that list, not by the input
        limit = MAX_ERROR_LINE + (200 if "known keys: name, layers" in line else 0)
        assert len(line) < limit, (len(line), line[:300])


@FAST
@given(
    LONG_TEXT,
    st.sampled_from(
        [
            "name",
            "value",
            "bare",
            "expression",
            "spec-key",
            "spec-value",
            "cell",
            "column",
            "weight",
            "model-spec",
        ]
    ),
)
def test_errors_quote_long_text_cut_short(text, where):
    """Whatever the entry point, an error quotes at most a short piece of the text."""
    try:
        if where == "name":
            parse_assignments([f"{text}=1"])
        elif where == "value":
            parse_assignments([f"a={text}"])
        elif where == "bare":
            parse_assignments([text.replace("=", "")])
        elif where == "expression":
            parse_program(text)
        elif where == "spec-key":
            spec_from_mapping({"layers": [2, 2, 1], "data": "xor", text: 1})
        elif where == "spec-value":
            for key in ("layers", "activation", "data", "update", "loss", "init", "name"):
                try:
                    spec_from_mapping({"layers": [2, 2, 1], "data": "xor", key: text})
                except GradvizError as error:
                    _short_lines(error)
            return
        elif where == "cell":
            parse_csv(f"a,b,y\n1,{text.replace(',', '')},0\n", "d.csv")
        elif where == "column":
            parse_csv(f"a,{text.replace(',', '')},y\n1,x,0\n", "d.csv")
        elif where == "weight":
            parse_model(
                json.dumps(
                    {"format": "gradviz-model", "version": 1, "layers": [{"weights": [[text]]}]}
                ),
                "m.json",
            )
        else:
            parse_model(
                json.dumps(
                    {
                        "format": "gradviz-model",
                        "version": 1,
                        "spec": {"name": text, "layers": text},
                    }
                ),
                "m.json",
            )
    except GradvizError as error:
        _short_lines(error)


# -- graphs through the real tools -------------------------------------------------------


def _collect(strategy, count: int) -> list:
    """`count` examples of a strategy, drawn by hypothesis, to check in one batch."""
    found: list = []

    @settings(max_examples=count, deadline=None, database=None)
    @given(strategy)
    def keep(example):
        found.append(example)

    keep()
    return found


@st.composite
def expression_graphs(draw) -> Diagram:
    """A parsed expression with arbitrary leaf values (NaN and infinities included),
    run backward, as a diagram."""
    text = draw(EXPRESSIONS)
    try:
        names = list(parse_program(text).leaves)
    except GradvizError:
        assume(False)
    values = {name: draw(VALUES) for name in names}
    program = parse_program(text, values)
    program.output.backward()
    return diagram_from_value(program.output, grad=draw(st.booleans()))


@st.composite
def labelled_graphs(draw) -> Diagram:
    """Leaves and results labelled with hostile text (any label a Python user can set),
    in clusters with hostile names, under a hostile title."""
    leaves = [Value(draw(VALUES), label=draw(HOSTILE_TEXT)) for _ in range(draw(st.integers(1, 4)))]
    out = leaves[0]
    for leaf in leaves[1:]:
        out = out * leaf if draw(st.booleans()) else out + leaf
    out = out.tanh() if draw(st.booleans()) else out
    out.label = draw(HOSTILE_TEXT)
    out.backward()
    clusters = {v: draw(HOSTILE_TEXT) for v in leaves if draw(st.booleans())}
    return diagram_from_value(out, clusters=clusters, title=draw(st.none() | HOSTILE_TEXT))


def _graphviz_programs() -> list[str]:
    system = system_dot()
    pure = _pure_program()
    assert pure, "graphviz-pure is a dependency of gradviz and must be installed"
    return [system, pure]


def _render_all(program: str, dot_texts: list[str]) -> list[ET.Element]:
    """Every DOT text through one run of `program`; each SVG parsed as XML. When the batch
    fails, find the culprit one by one so the failure shows its text."""
    done = subprocess.run(
        [program, "-Tsvg"], input="".join(dot_texts).encode(), capture_output=True, timeout=120
    )
    documents = [d for d in done.stdout.decode().split("<?xml") if d.strip()]
    if done.returncode != 0 or len(documents) != len(dot_texts):
        for text in dot_texts:
            one = subprocess.run([program, "-Tsvg"], input=text.encode(), capture_output=True)
            assert one.returncode == 0, f"{program} refused:\n{text}\n{one.stderr.decode()}"
        pytest.fail(f"{program} rendered {len(documents)} of {len(dot_texts)} graphs")
    return [ET.fromstring("<?xml" + d) for d in documents]  # raises if not well-formed


def _svg_text(svg: ET.Element) -> str:
    parts = ((t.text or "").replace("\xa0", " ").strip() for t in svg.iter(f"{SVG}text"))
    return "\n".join(parts)


@pytest.fixture(scope="module")
def diagrams() -> list[Diagram]:
    return _collect(expression_graphs(), 40) + _collect(labelled_graphs(), 40)


def test_every_dot_renders_with_both_programs_as_well_formed_svg(diagrams):
    programs = _graphviz_programs()
    texts = [to_dot(d, rankdir=("LR", "TB")[i % 2]) for i, d in enumerate(diagrams)]
    for program in programs:
        for diagram, svg in zip(diagrams, _render_all(program, texts), strict=True):
            shown = _svg_text(svg)
            for node in diagram.nodes:
                if constant_text(node) is not None:  # a constant shows its number alone
                    assert constant_text(node) in shown.splitlines(), (program, node)
                elif node.data is not None:
                    assert f"data {number_text(node.data)}" in shown, (program, node)
                if node.grad is not None:
                    assert f"grad {number_text(node.grad)}" in shown, (program, node)
                # the label reads back exactly: nothing was taken as DOT, record or
                # escape syntax (Graphviz trims the ends of a field)
                label = printable(node.label).strip()
                if node.kind == "value" and label:
                    assert label in shown, (program, node.label, shown)
            if diagram.title:  # its lines as given (a name never broken), under the key
                for line in title_lines(diagram):
                    assert printable(line).strip() in shown, (program, diagram.title)


@pytest.mark.slow
def test_every_mermaid_text_is_accepted_and_reads_back_exactly(diagrams):
    rankdirs = [("LR", "TB", "RL", "BT")[i % 4] for i in range(len(diagrams))]
    texts = [to_mermaid(d, rankdir=r) for d, r in zip(diagrams, rankdirs, strict=True)]
    results = parse_mermaid(texts)  # skips locally without node_modules; fails under CI
    for diagram, rankdir, text, result in zip(diagrams, rankdirs, texts, results, strict=True):
        assert result["ok"], f"{result.get('error')}\n{text}"
        ids = {node.id for node in diagram.nodes}  # the diagram's ids, as DOT and JSON
        # no label started a statement of its own: exactly our nodes (plus the legend
        # keys) and our edges, nothing else
        assert ids <= set(result["nodes"]), text
        assert all(i in ids or i.startswith("key_") for i in result["nodes"] if i != CAPTION)
        if diagram.title:  # the title is a node of its own, drawn exactly as given
            assert result["nodes"][CAPTION].strip() == printable(diagram.title).strip(), text
            assert result["title"].strip() == printable(diagram.title).strip(), text
        else:
            assert CAPTION not in result["nodes"], text
        # the graph's edges, and the invisible ones that line the key up in a row
        assert len([e for e in result["edges"] if not e[0].startswith("key_")]) == len(
            diagram.edges
        ), text
        for node in diagram.nodes:
            parts = [printable(node.label)] if node.label else []
            if not node.label and node.kind == "value":  # unnamed: its id, as the trace
                parts = [node.id]
            if node.ordered:  # a − b: which input is which, as its edges say
                parts = [f"a {printable(node.label)} b"]
            if constant_text(node) is not None:  # a constant shows its number alone
                parts = [constant_text(node)]
            elif node.data is not None:
                parts.append(f"data {number_text(node.data)}")
            if node.grad is not None:
                parts.append(f"grad {number_text(node.grad)}")
            # top to bottom, the fields stand one a line (as Graphviz stacks them)
            expected = ("\n" if rankdir in ("TB", "BT") else SEPARATOR).join(parts) or " "
            # numbers are held whole by a narrow no-break space and a non-breaking hyphen
            shown = result["nodes"][node.id].replace("\u202f", " ").replace("\u2011", "-")
            assert shown.strip() == expected.strip(), (node.label, text)
        titles = [title.strip() for _, title, _ in result["subgraphs"]]  # Mermaid trims
        for name in diagram.clusters:
            assert printable(name).strip() in titles, (name, text)


# -- gradients where the function is smooth -------------------------------------------------

# Functions smooth everywhere, with no pole and no kink: a finite difference is then a
# good estimate of the derivative at any point.
SMOOTH_UNARY = [
    "tanh({})",
    "sigmoid({})",
    "sin({})",
    "cos({})",
    "({})**2",
    "exp(tanh({}))",
    "log(1 + ({})**2)",
    "sqrt(1 + ({})**2)",
    "1 / (1 + ({})**2)",
]
SMOOTH = st.recursive(
    st.sampled_from(["a", "b", "c", "0.5", "2"]),
    lambda inner: st.one_of(
        st.builds(_binary, st.tuples(inner, inner), st.sampled_from(["+", "-", "*"])),
        st.builds(str.format, st.sampled_from(SMOOTH_UNARY), inner),
    ),
    max_leaves=6,
)


@settings(max_examples=80, deadline=None, database=None)
@given(SMOOTH, st.lists(st.floats(-2, 2), min_size=3, max_size=3))
def test_gradients_agree_with_finite_differences_where_smooth(text, point):
    names = list(parse_program(text).leaves)
    program = parse_program(text, {name: point["abc".index(name)] for name in names})
    program.output.backward()
    order = topological_order(program.output)
    f0 = float(program.output.data)
    for name, leaf in program.leaves.items():
        x = leaf.data
        h = 1e-5 * max(1.0, abs(x))
        leaf.data = x + h
        up = evaluate(order)
        leaf.data = x - h
        down = evaluate(order)
        leaf.data = x
        numeric = (up - down) / (2 * h)
        assert math.isclose(leaf.grad, numeric, rel_tol=1e-4, abs_tol=1e-6 * (1 + abs(f0))), (
            text,
            name,
            leaf.grad,
            numeric,
        )


@FAST
@given(
    st.sampled_from(["x*x", "exp(x)", "tanh(x)", "x**3", "sin(x) * x"]),
    st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0.0, 3.0, 1e300])),
    st.one_of(
        st.floats(min_value=5e-324, max_value=1e-6),
        st.sampled_from([1e-20, 1e-14, 5e-324, 1e-300]),
    ),
)
def test_any_step_is_measured_or_refused_with_a_reason(text, x, eps):
    """`check --eps`: a step float64 cannot take at x is refused (InputError, exit 2),
    never a ZeroDivisionError; any other step gives a row per leaf."""
    from gradviz.checking import gradcheck

    output = parse_program(text, {"x": x}).output
    try:
        rows = gradcheck(output, eps=eps)
    except InputError as error:
        assert "too small to measure a slope at x" in error.message
        return
    assert len(rows) == 1 and rows[0].status in ("pass", "fail", "non-finite", "non-differentiable")


# -- every output of every command, on diverged and extreme inputs, with -W error ---------------


def _strict_run(args: list[str]):
    """A command run in-process as `python -W error` runs it: any Python warning is an
    error (so a matplotlib or numpy warning becomes an internal error, exit 1), except the
    NaN/inf RuntimeWarnings gradviz's engine silences on purpose for its own modules."""
    import warnings

    from click.testing import CliRunner

    from gradviz.cli import cli

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"gradviz(\.|$)")
        return CliRunner().invoke(cli, args, env={"GRADVIZ_DOT": None, "NO_COLOR": "1"})


DIVERGING = ["xor", "--activation", "relu", "--output-activation", "linear", "--lr", "2"]


@pytest.fixture(scope="module")
def extreme_models(tmp_path_factory) -> dict[str, str]:
    """Saved models at the edges of float64: a run that diverged (its loss grows through
    1e308 to inf and NaN), a loss history and gradients near the float maximum, at the
    smallest subnormal, and weights of 1e308."""
    folder = tmp_path_factory.mktemp("extreme")
    diverged = str(folder / "diverged.json")
    trained = _strict_run(
        ["train", *DIVERGING, "--epochs", "300", "--keep-going", "-q", "--save", diverged]
    )
    assert trained.exit_code == 0, trained.output
    result = _strict_run(
        ["train", "xor", "--epochs", "40", "--every", "5", "-q", "--save", str(folder / "m.json")]
    )
    assert result.exit_code == 0, result.output
    base = json.loads((folder / "m.json").read_text())

    def variant(name: str, loss: float | None = None, rms: float | None = None, w=None) -> None:
        raw = json.loads(json.dumps(base))
        if loss is not None:
            raw["history"]["loss"] = [loss] * len(raw["history"]["loss"])
        for snapshot in raw["history"]["gradients"] if rms is not None else []:
            for layer in snapshot["layers"]:
                layer.update(rms=rms, mean_abs=rms, max_abs=rms, norm=rms)
        for layer in raw["layers"] if w is not None else []:
            layer["weights"] = [[w] * len(row) for row in layer["weights"]]
        (folder / name).write_text(json.dumps(raw))

    variant("huge.json", loss=1.79e308, rms=1.7e308)
    variant("tiny.json", loss=5e-324, rms=5e-324)
    variant("mixed.json", loss=1.79e308, rms=5e-324)
    variant("weights.json", w=1e308)
    return {p.stem: str(p) for p in folder.glob("*.json") if p.stem != "m"}


MODEL_OUTPUTS = [
    ["inspect", "{m}", "--curves", "c.svg", "--boundary", "b.png", "-o", "r.html"],
    ["grads", "{m}", "--plot", "g.svg"],
    ["draw", "--model", "{m}", "-o", "d.svg", "-o", "d.html", "-o", "d.mmd", "-o", "d.json"],
    ["trace", "--model", "{m}", "-o", "t.html", "--frames", "f", "--format", "mmd"],
    ["trace", "--model", "{m}", "--level", "layer", "--frames", "l"],
]


@pytest.mark.parametrize(
    "kind",
    [
        "diverged",
        "huge",
        *(pytest.param(k, marks=pytest.mark.slow) for k in ("tiny", "mixed", "weights")),
    ],
)
def test_every_output_of_an_extreme_model_is_written_without_a_warning(
    kind, extreme_models, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    for args in MODEL_OUTPUTS:
        line = [a.replace("{m}", extreme_models[kind]) for a in args]
        result = _strict_run(line)
        assert result.exit_code == 0, (line, result.stderr)
        assert "internal error" not in result.stderr and "Warning" not in result.stderr
    assert {"c.svg", "b.png", "r.html", "g.svg", "d.svg", "d.html", "t.html"} <= {
        p.name for p in tmp_path.iterdir()
    }


@pytest.mark.parametrize(
    "args",
    [
        [
            *("train", *DIVERGING, "--epochs", "300", "--keep-going", "--save", "m.json"),
            *("--curves", "c.svg", "--boundary", "b.svg", "--report", "r.html"),
        ],
        ["draw", "a*2", "a=1e308", "-o", "p.html", "-o", "p.svg", "-o", "p.mmd", "-o", "p.json"],
        ["draw", "a*2", "a=-1.7976931348623157e308", "-o", "p.html"],
        ["draw", "a*b", "a=5e-324", "b=1e308", "-o", "p.html", "-o", "p.md", "-o", "p.txt"],
        ["trace", "a*2 + exp(a)", "a=1e308", "-o", "p.html", "--frames", "f"],
        ["check", "x*x", "x=1e300", "--show"],
        ["grads", "xor", "--epochs", "3", "--plot", "g.svg"],
    ],
    ids=[
        "train-diverged",
        "draw-1e308",
        "draw-minus-max",
        "draw-subnormal",
        "trace",
        "check",
        "grads",
    ],
)
def test_every_output_of_an_extreme_run_is_written_without_a_warning(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = _strict_run(args)
    assert result.exit_code == 0, result.stderr
    assert "internal error" not in result.stderr and "Warning" not in result.stderr


@FAST
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_slider_holds_any_finite_value_within_finite_ends(x):
    """The live page's slider around x (`draw -o p.html a=1e308` overflowed here)."""
    from gradviz.render.html import slider_range

    low, high, step = slider_range(x)
    assert math.isfinite(low) and math.isfinite(high) and 0 < step < math.inf
    assert low <= x <= high and low < high


NAMES_AS_TYPED = ["a; b; c", "x — y; z", "x direction TB y", "Direction LR", "p;q &amp; <b>"]


def test_a_models_name_is_shown_exactly_as_typed_in_svg_and_mermaid(model_text, tmp_path):
    """A name holding `; ` was broken into lines at each (its `;` dropped), and one holding
    `direction TB` was read by mermaid.js as a statement (the caption vanished)."""
    from click.testing import CliRunner

    from gradviz.cli import cli

    texts, expected = [], []
    levels = ("scalar", "neuron", "layer")
    for i, name in enumerate(NAMES_AS_TYPED):
        raw = json.loads(model_text)
        raw["spec"]["name"] = name
        model = tmp_path / f"m{i}.json"
        model.write_text(json.dumps(raw))
        # the first name at every level (each draws its caption its own way), the others at
        # one level each, in turn: every name through SVG and mermaid.js at a third the cost
        for level in levels if i == 0 else (levels[i % 3],):
            svg, mmd = tmp_path / f"{i}{level}.svg", tmp_path / f"{i}{level}.mmd"
            args = ["draw", "--model", str(model), "--input", "0,1", "--level", level]
            result = CliRunner().invoke(cli, [*args, "-o", str(svg), "-o", str(mmd)])
            assert result.exit_code == 0, result.output
            shown = [t.text for t in ET.fromstring(svg.read_text()).iter() if t.text]
            caption = f"{name}: loss of input (0, 1), target 1"
            assert caption in [s.strip() for s in shown], (name, level, shown[:3])
            texts.append(mmd.read_text())
            expected.append(caption)
    for read, caption in zip(parse_mermaid(texts, titles=False), expected, strict=True):
        assert read["ok"], read
        assert read["nodes"][CAPTION].startswith(caption), (caption, read["nodes"][CAPTION])
