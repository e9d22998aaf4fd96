"""The CLI is thin: every `--json` document it prints is a library call's
(`gradviz.report`), and no library module names a command-line flag in an error."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradviz import report
from gradviz.cli import cli, flag
from gradviz.errors import InputError
from gradviz.measure import measure
from gradviz.model import first_example, from_result, load_model, save
from gradviz.numbers import dumps
from gradviz.spec import resolve_spec
from gradviz.train import Diverged, load_data, train

PACKAGE = Path(__file__).parent.parent / "gradviz"


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def trained(epochs: int = 30):
    spec = resolve_spec("xor", {"epochs": epochs}, {})
    return train(spec, load_data(spec))


def test_train_json_is_the_library_document() -> None:
    printed = run("train", "xor", "--epochs", "30", "--json")
    assert printed == dumps(report.train_document(report.build_report(trained()))) + "\n"


def test_train_json_on_divergence_is_the_library_document() -> None:
    """The run stopped: `stopped` is the error's text, advice in the CLI's words."""
    args = ["xor", "--output-activation", "linear", "--lr", "1e4", "--epochs", "40"]
    result = CliRunner().invoke(cli, ["train", *args, "--json"])
    assert result.exit_code == 1
    spec = resolve_spec(
        "xor", {"output_activation": "linear", "learning_rate": 1e4, "epochs": 40}, {}
    )
    with pytest.raises(Diverged) as error:
        train(spec, load_data(spec))
    assert result.stdout == dumps(report.diverged_document(error.value, flag)) + "\n"
    stopped = json.loads(result.stdout)["stopped"]
    assert stopped.endswith(", or pass --keep-going to train on regardless.")
    python = report.diverged_document(error.value)["stopped"]
    assert python.endswith(", or pass keep_going=True to train on regardless.")


def test_inspect_json_is_the_library_document(tmp_path) -> None:
    path = tmp_path / "xor.json"
    save(from_result(trained()), path)
    printed = run("inspect", str(path), "--json")
    model = load_model(path)
    assert (
        printed
        == dumps(report.inspect_document(report.build_report(model, model.dataset()))) + "\n"
    )
    assert json.loads(printed)["epochs_run"] == 30


def test_grads_json_is_the_library_document() -> None:
    printed = run("grads", "xor", "--epochs", "20", "--every", "5", "--params", "--json")
    subject = measure("xor", 20, 5)
    document = report.grads_document(subject, "xor", params=True)
    assert printed == dumps(document) + "\n"
    assert document["parameters"] and len(document["history"]) == 5


def test_grads_json_lists_the_guarded_statuses_found() -> None:
    result = CliRunner().invoke(cli, ["grads", "deep-sigmoid", "--fail-on", "vanishing", "--json"])
    assert result.exit_code == 1
    document = report.grads_document(measure("deep-sigmoid"), "deep-sigmoid", ["vanishing"])
    assert document["failed"] and document["failed"][0].startswith("vanishing in L1")
    assert result.stdout == dumps(document) + "\n"


def test_compare_json_is_the_library_document() -> None:
    printed = run("compare", "deep-sigmoid", "deep-relu", "--json")
    a, b = measure("deep-sigmoid"), measure("deep-relu")
    assert printed == dumps(report.compare_document(a, b)) + "\n"


def test_the_first_example_is_one_function(tmp_path) -> None:
    path = tmp_path / "xor.json"
    save(from_result(trained(5)), path)
    model = load_model(path)
    first = first_example(model)
    data = model.dataset()
    assert first.x == tuple(float(v) for v in data.X[0]) and first.y == float(data.Y[0])
    assert first_example(model, 0.25).y == 0.25
    result = CliRunner().invoke(cli, ["draw", "--model", str(path), "-f", "text"])
    note = f"note: no --input given: using the first example of {first.data}, x = (0, 0), y = 0"
    assert note in result.stderr


# -- no library error names a command-line flag ----------------------------------------

# (`--gv-…` is no flag: the CSS custom properties of the pictures' dark mode,
# gradviz.render.themes; no option of gradviz starts with gv-.)
FLAG = re.compile(r"(?<![\w-])--(?!gv-)[a-z][a-z0-9-]+")


def _error_calls(tree: ast.AST):
    """Calls of an error class (`InputError(...)`, `ModelError(...)`, `Diverged(...)`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None) or ""
            if name.endswith("Error") or name == "Diverged":
                yield node


def _strings(call: ast.Call):
    for arg in [*call.args, *(k.value for k in call.keywords)]:
        for node in ast.walk(arg):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield node


def test_no_library_error_names_a_flag() -> None:
    """Library errors name options by keyword (`{input}` with options=["input"]); only
    cli/ turns them into flags (`cli.flag`), at one boundary."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "cli":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for call in _error_calls(tree):
            for node in _strings(call):
                if FLAG.search(node.value):
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value!r}")
    assert found == []


def test_the_flag_test_would_catch_one(tmp_path) -> None:
    tree = ast.parse('raise InputError(f"--eps {x}: too small")')
    assert [n.value for c in _error_calls(tree) for n in _strings(c) if FLAG.search(n.value)]


def test_the_cli_names_the_options_of_a_library_error_as_flags() -> None:
    error = InputError(
        "{every} needs {epochs} ({keep_going})", options=["every", "epochs", "keep_going"]
    )
    assert error.message == "every needs epochs (keep_going)"
    assert error.render(flag) == "--every needs --epochs (--keep-going)"
    assert flag("record_every") == "--every" and flag("learning_rate") == "--lr"


def test_a_setting_is_named_as_python_writes_it_and_as_the_cli_takes_it() -> None:
    """`level='layer'` in a library text is `--level layer` on the command line; a switch
    on is its flag, off its `--no-` form."""
    error = InputError(
        "draw {level='layer'} ({keep_going=True}, {grad=False})",
        options=["level='layer'", "keep_going=True", "grad=False"],
    )
    assert error.message == "draw level='layer' (keep_going=True, grad=False)"
    assert error.render(flag) == "draw --level layer (--keep-going, --no-grad)"


def test_only_the_options_placeholders_are_replaced() -> None:
    """A message quoting the user's text keeps its braces (it used to be str.format'ed)."""
    error = InputError("{input} '{a},1': expected 2 numbers", options=["input"])
    assert error.message == "input '{a},1': expected 2 numbers"
    assert error.render(flag) == "--input '{a},1': expected 2 numbers"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["grads", "xor", "--every", "5"], "--every needs --epochs"),
        (["draw", "--model", "MODEL", "--input", "0,x"], "--input '0,x': expected 2 numbers"),
        (["draw", "--model", "MODEL", "--input", "{a},1"], "--input '{a},1': expected 2"),
    ],
)
def test_the_cli_still_says_flags(tmp_path, args, message) -> None:
    path = tmp_path / "xor.json"
    save(from_result(trained(5)), path)
    args = [str(path) if a == "MODEL" else a for a in args]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and message in result.stderr


# -- no library text at all names a flag, but these (each with its reason) ----------------
# The list may shrink, never grow. A view takes the CLI's words instead (as
# `check_view(words=flag)`, `describe_defaults(program, flag)`, `size_warnings(…, flag)`,
# `layer_table(more=…)` and `grads_plot(statuses=…)` do) without changing what users see.
# (The last, train.KEEP_GOING_ADVICE, went: `model.OLD_ADVICE` recognises the old text
# without naming the option.)
FLAG_TEXTS: set[tuple[str, str]] = set()


def _docstrings(tree: ast.AST) -> set[int]:
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def test_library_texts_name_no_flag_but_the_listed_ones() -> None:
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE)
        if where.parts[0] in (
            "cli",
            "tools",
            "docs",
        ):  # programs, not the library (tools: Chromium's flags; docs: the fence's command lines)
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docs
                and FLAG.search(node.value)
            ):
                found.add((where.as_posix(), node.value))
    assert found <= FLAG_TEXTS, sorted(found - FLAG_TEXTS)
    assert found == FLAG_TEXTS, f"untangled, take off FLAG_TEXTS: {sorted(FLAG_TEXTS - found)}"


def _step_too_small_row():
    """A check's row for a step too small to move x, whose note advises `eps`."""
    from gradviz.checking import Row
    from gradviz.engine import Value

    return Row(
        leaf=Value(3.0),
        name="x",
        data=3.0,
        analytic=6.0,
        numeric=0.0,
        abs_error=6.0,
        rel_error=1.0,
        eps=1e-20,
        noise=0.0,
        status="non-finite",
        note="h = 1e-20 is too small to move x = 3 in float64: give a larger step",
        remedy="eps",
    )


def test_a_view_names_the_remedy_option_in_the_callers_words() -> None:
    from rich.console import Console

    from gradviz.render.trace_view import check_view

    row = _step_too_small_row()

    def text(**words) -> str:
        console = Console(width=200, record=True, color_system=None)
        console.print(check_view([row], "L", **words))
        return console.export_text()

    assert "give a larger step (--eps)" in text(words=flag)
    assert "give a larger step (eps)" in text()


def test_a_table_too_wide_points_at_every_number_in_the_callers_words() -> None:
    """The CLI's caption says `--json` has the columns left out; Python's names no flag."""
    from rich.console import Console

    from gradviz.cli import EVERY_NUMBER
    from gradviz.render.layers import layer_table

    diagnosis = measure("deep-sigmoid").diagnosis()

    def caption(**more) -> str:
        console = Console(width=200, record=True, color_system=None)
        console.print(layer_table(diagnosis, width=80, **more))
        return " ".join(console.export_text().split())

    assert re.search(
        r"not shown for lack of width: [^()]+ \(see --json\)", caption(more=EVERY_NUMBER)
    )
    assert "not shown for lack of width" in caption() and "--json" not in caption()


def test_the_gradient_plot_says_where_the_statuses_are_explained(monkeypatch) -> None:
    """The legend names `gradviz grads --help` for the CLI, the library call for Python."""
    from gradviz.cli import STATUS_MEANINGS
    from gradviz.render import plots

    seen = []
    monkeypatch.setattr(plots, "_save", lambda figure, *title_and_format: seen.append(figure))
    diagnosis = measure("deep-sigmoid").diagnosis()
    plots.grads_plot(diagnosis)
    plots.grads_plot(diagnosis, statuses=STATUS_MEANINGS)
    titles = [figure.legends[0].get_title().get_text() for figure in seen]
    assert titles == [
        "bar colour: status (see gradviz.stats.status_help())",
        "bar colour: status (see gradviz grads --help)",
    ]


def test_a_page_drawn_without_gradients_says_so_in_the_callers_words(tmp_path) -> None:
    from gradviz.drawn import diagram_from_value
    from gradviz.expr import parse_program
    from gradviz.pages import html_page

    page = tmp_path / "page.html"
    run("draw", "a*b", "a=2", "b=3", "--no-grad", "-o", str(page))
    assert "drawn without gradients (--no-grad), so not live" in page.read_text("utf-8")
    program = parse_program("a*b", {"a": 2.0, "b": 3.0})
    python = html_page(diagram_from_value(program.output, grad=False), expression="a*b")
    assert "drawn without gradients (grad=False), so not live" in python


def test_check_json_is_the_library_document() -> None:
    """`check --json`: the library's document, with the hand example's gradients as the
    lesson derives them (∂L/∂a = b·f = 6, ∂L/∂b = a·f = -4, ∂L/∂c = f = -2, ∂L/∂f = d = 4)."""
    from gradviz.checking import document, gradcheck
    from gradviz.expr import parse_program

    hand = ["e = a*b; d = e + c; L = d*f", "a=2", "b=-3", "c=10", "f=-2"]
    printed = run("check", *hand, "--json")
    output = parse_program(hand[0], {"a": 2.0, "b": -3.0, "c": 10.0, "f": -2.0}).output
    assert printed == dumps(document(gradcheck(output), "L")) + "\n"
    checked = json.loads(printed)
    assert {leaf["name"]: leaf["analytic"] for leaf in checked["leaves"]} == {
        "a": 6.0,
        "b": -4.0,
        "c": -2.0,
        "f": 4.0,
    }
    for leaf in checked["leaves"]:
        assert leaf["numeric"] == pytest.approx(leaf["analytic"], rel=1e-9)
        assert leaf["status"] == "pass" and leaf["note"] is None
    assert checked["passed"] is True
    assert checked["summary"] == "4 leaves checked: 4 pass — ok"


def test_check_json_names_the_remedy_in_the_callers_words() -> None:
    """A note that advises an option names it as the caller does: `--eps` in the CLI's
    document, `eps` in Python's (the row as the check makes it for a step too small)."""
    from gradviz.checking import document

    row = _step_too_small_row()
    assert document([row], "L", words=flag)["leaves"][0]["remedy"] == "--eps"
    assert document([row], "L")["leaves"][0]["remedy"] == "eps"
    assert document([row], "L")["passed"] is True  # not comparable is no failure


def test_check_json_of_a_failing_leaf_says_so() -> None:
    """A wrong local derivative (tanh' written 1 - out instead of 1 - out²) fails in the
    document; a kink (relu at 0) is a note, not a failure."""
    from gradviz.checking import document, gradcheck
    from gradviz.engine import TANH, Op, Value, apply

    wrong = Op(name="tanh", symbol="tanh", out=TANH.out, d=("1.0 - out",), shown=("1 - t",))
    checked = document(gradcheck(apply(wrong, Value(0.5, "x")) * 2.0), "L")
    assert checked["passed"] is False and checked["leaves"][0]["status"] == "fail"
    assert checked["summary"] == "1 leaf checked: 1 fail — FAILED: x"
    # a kink is reported, not failed: exit status 0, the note in the document
    result = CliRunner().invoke(cli, ["check", "relu(x) * 3", "x=0", "--json"])
    assert result.exit_code == 0, result.output
    (leaf,) = json.loads(result.stdout)["leaves"]
    assert leaf["status"] == "non-differentiable" and "relu at 0" in leaf["note"]


def test_trace_json_is_the_library_document_and_sums_the_credit_of_a_reused_value() -> None:
    """`trace --json` is `gradviz.tracing.document`. In L = x·x + x at x = 3, x is used three
    times: it receives x·1 = 3 twice through x·x and 1 from the sum, so dL/dx = 2x + 1 = 7."""
    from gradviz.expr import parse_program
    from gradviz.tracing import document

    printed = run("trace", "x*x + x", "x=3", "--json")
    assert printed == dumps(document(parse_program("x*x + x", {"x": 3.0}).output)) + "\n"
    traced = json.loads(printed)
    (x,) = [step for step in traced["steps"] if step["name"] == "x"]
    assert sorted(s["amount"] for s in x["sources"]) == [1.0, 3.0, 3.0]
    assert x["credit"] == 7.0 and x["is_leaf"] and not x["contributions"]
    assert traced["gradients"] == [
        {
            "name": "x",
            "data": 3.0,
            "grad": 7.0,
            "reached": True,
            "sentence": "raising x by 0.01 raises L by about 0.07",  # 0.01 · 7
        }
    ]
    assert [f["data"] for f in traced["forward"]] == [3.0, 9.0, 12.0]
    assert traced["unreached"] == []


def test_trace_json_of_a_network_level_lists_every_unit_step(tmp_path) -> None:
    from gradviz.model import network_loss_graph
    from gradviz.tracing import network_document, network_trace

    path = tmp_path / "xor.json"
    save(from_result(trained()), path)
    args = ["trace", "--model", str(path), "--input", "0,1", "--level", "neuron", "--json"]
    traced = json.loads(run(*args))
    model = load_model(path)
    graph = network_loss_graph(model, (0.0, 1.0))  # its target looked up: xor(0, 1) = 1
    assert traced == json.loads(dumps(network_document(graph, "neuron")))
    assert (traced["level"], traced["input"], traced["target"]) == ("neuron", [0.0, 1.0], 1.0)
    assert traced["loss"] == graph.loss.data
    kinds = [step["kind"] for step in traced["steps"]]
    assert kinds[0] == "loss" and kinds[-1] == "inputs" and kinds.count("neuron") == 5
    assert "ids" not in traced["steps"][0]
    # the output neuron's credit comes from the loss, named as the scalar document names it
    (output,) = [step for step in traced["steps"] if step["kind"] == "neuron"][:1]
    assert [source["from"] for source in output["sources"][0]] == ["loss"]
    steps = network_trace(graph, "neuron")
    assert output["credit"] == list(steps[1].credit)


@pytest.mark.parametrize("command", ["draw", "trace", "check"])
def test_expression_or_model_is_resolved_in_one_place(command: str, tmp_path) -> None:
    """`draw`, `trace` and `check` take their graph from `cli.source.graph_source`: the
    same refusal, word for word, when both sources or neither are given."""
    path = tmp_path / "xor.json"
    save(from_result(trained(5)), path)
    both = CliRunner().invoke(cli, [command, "a*b", "--model", str(path)])
    assert both.exit_code == 2
    assert both.stderr == "Error: give an expression or --model, not both\n"
    neither = CliRunner().invoke(cli, [command])
    assert neither.exit_code == 2
    assert neither.stderr == "Error: give an expression (EXPR) or a saved model (--model FILE)\n"
