"""`gradviz trace` and `gradviz check` through click's CliRunner: output, files, statuses."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from graphviz_support import needs_system_dot
from mermaid.check import parse_mermaid

from gradviz import engine, ops
from gradviz.cli import cli
from gradviz.engine import Constant, Op, Value
from gradviz.nn import LOSS_FUNCTIONS

HAND = ["e = a*b; d = e + c; L = d*f", "a=2", "b=-3", "c=10", "f=-2"]
SVG = "{http://www.w3.org/2000/svg}"


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, list(args), env=env)


def test_trace_of_a_value_used_twice_prints_exactly_this() -> None:
    result = run("trace", "x*x + x", "x=3")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert result.stdout == (
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
        "\n"
        "Gradients  (what a small nudge of each leaf does to L)\n"
        "  dL/dx  7  raising x by 0.01 raises L by about 0.07\n"
    )


def test_trace_of_the_hand_example_with_forward_pass() -> None:
    result = run("trace", *HAND, "--forward")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:8] == [
        "Forward pass  (topological order: every input before its use)",
        "  1  a = 2",
        "  2  b = -3",
        "  3  e = a·b = -6",
        "  4  c = 10",
        "  5  d = e + c = 4",
        "  6  f = -2",
        "  7  L = d·f = -8",
    ]
    steps = [line for line in lines if line.startswith("Step ")]
    assert steps == [
        "Step 1/7  L = d·f  (the output)",
        "Step 2/7  f  (leaf)",
        "Step 3/7  d = e + c",
        "Step 4/7  c  (leaf)",
        "Step 5/7  e = a·b",
        "Step 6/7  b  (leaf)",
        "Step 7/7  a  (leaf)",
    ]
    assert "  → d   ∂(d·f)/∂d = f = -2   dL/dd += dL/dL · f = 1 · (-2) = -2" in lines
    assert "  → a   ∂(a·b)/∂a = b = -3   dL/da += dL/de · b = -2 · (-3) = 6" in lines
    assert lines[-4:] == [
        "  dL/da   6  raising a by 0.01 raises L by about 0.06",
        "  dL/db  -4  raising b by 0.01 lowers L by about 0.04",
        "  dL/dc  -2  raising c by 0.01 lowers L by about 0.02",
        "  dL/df   4  raising f by 0.01 raises L by about 0.04",
    ]


def test_trace_says_which_defaults_it_used() -> None:
    result = run("trace", "a*b", "a=2")
    assert result.exit_code == 0
    assert result.stderr.startswith("note: no value given for b: used b=")


def test_trace_detach_is_shown_and_leaf_listed() -> None:
    result = run("trace", "detach(x) * w", "x=3", "w=2")
    assert result.exit_code == 0, result.output
    assert "detach passes no credit: the gradient stops here" in result.stdout
    assert "no credit reaches x: every path from x to L runs through detach" in result.stdout
    assert "Not reached by any credit (behind detach): x" in result.stdout


def test_trace_bad_expression_is_exit_2_with_a_caret() -> None:
    result = run("trace", "a.b + 1")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "^" in result.stderr and "Traceback" not in result.stderr


# -- frames --------------------------------------------------------------------------


def _svg_text(path: Path) -> str:
    root = ET.parse(path).getroot()  # raises on anything that is not well-formed XML
    assert root.tag == f"{SVG}svg"
    return " ".join(t.text or "" for t in root.iter(f"{SVG}text"))


@pytest.mark.parametrize("dot", [pytest.param("system", marks=needs_system_dot), "pure"])
def test_frames_one_valid_svg_per_step(tmp_path: Path, dot: str) -> None:
    folder = tmp_path / "frames"
    result = run("trace", *HAND, "--frames", str(folder), env={"GRADVIZ_DOT": dot})
    assert result.exit_code == 0, result.output
    # 7 steps: 3 non-leaf nodes (L, d, e) + 4 leaves reached (f, c, b, a).
    names = sorted(p.name for p in folder.iterdir())
    assert names == [f"step-0{k}.svg" for k in range(1, 8)]
    assert f"wrote 7 frames to '{folder}' (step-01.svg … step-07.svg)" in result.stderr
    texts = [_svg_text(folder / name) for name in names]
    assert "Step 1/7: L = d·f with dL/dL = 1 passes -2 to d and 4 to f" in texts[0]
    assert "Step 5/7: e = a·b with dL/de = -2 passes 6 to a and -4 to b" in texts[4]
    assert "Step 7/7: a is a leaf, dL/da = 6 is its gradient" in texts[6]
    # The credit builds up frame by frame: a's grad shows only from step 5 on.
    assert ["grad 6" in t for t in texts] == [False] * 4 + [True] * 3


def test_frames_count_leaves_out_what_detach_cuts_off(tmp_path: Path) -> None:
    result = run("trace", "x*x + detach(w)*0.5", "x=3", "w=2", "--frames", str(tmp_path))
    assert result.exit_code == 0, result.output
    # 7 nodes, but w gets no credit and 0.5 is a constant: 5 steps, 5 frames.
    assert len(list(tmp_path.glob("step-*.svg"))) == 5


def test_frames_in_mermaid_parse(tmp_path: Path) -> None:
    result = run("trace", "x*x + x", "x=3", "--frames", str(tmp_path), "--format", "mmd")
    assert result.exit_code == 0, result.output
    files = sorted(tmp_path.glob("step-*.mmd"))
    assert [p.name for p in files] == ["step-01.mmd", "step-02.mmd", "step-03.mmd"]
    texts = [p.read_text() for p in files]
    assert all("==>" in t for t in texts)  # the edges of the step are emphasised
    assert all(report["ok"] for report in parse_mermaid(texts, titles=False))


def test_frames_never_overwrite_the_input(tmp_path: Path) -> None:
    source = tmp_path / "step-01.svg"
    source.write_text("x*x + x\n")
    result = run("trace", f"@{source}", "x=3", "--frames", str(tmp_path))
    assert result.exit_code == 2
    assert "refusing to write" in result.stderr
    assert source.read_text() == "x*x + x\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step-01.svg"]


def test_frames_into_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "not-a-folder"
    target.write_text("keep")
    result = run("trace", "a*b", "a=1", "b=2", "--frames", str(target))
    assert result.exit_code == 2
    assert target.read_text() == "keep"


def test_frames_mention_stale_files(tmp_path: Path) -> None:
    assert run("trace", *HAND, "--frames", str(tmp_path)).exit_code == 0
    result = run("trace", "a*b", "a=1", "b=2", "--frames", str(tmp_path))
    assert result.exit_code == 0
    assert "also holds step-04.svg, step-05.svg, step-06.svg, step-07.svg" in result.stderr


def test_frames_interrupted_half_way_leave_no_frame_and_no_folder(tmp_path, monkeypatch):
    import gradviz.cli.trace as trace_cli

    real, made = trace_cli.render, []

    def third_interrupted(*args, **kwargs):
        if len(made) == 2:
            raise KeyboardInterrupt
        made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(trace_cli, "render", third_interrupted)
    folder = tmp_path / "new" / "frames"
    result = run("trace", *HAND, "--frames", str(folder), "--format", "mmd")
    assert result.exit_code == 130 and made == [1, 1]
    assert f"note: no frame written ('{folder}' was not created)" in result.stderr
    assert list(tmp_path.iterdir()) == []  # neither folder, nor the hidden one of the frames
    # into a folder that holds one earlier frame: it stays alone
    folder.mkdir(parents=True)
    (folder / "step-01.mmd").write_text("earlier")
    made.clear()
    result = run("trace", *HAND, "--frames", str(folder), "--format", "mmd")
    assert result.exit_code == 130
    assert (
        f"note: no frame written, '{folder}' left as it was: its frame of an earlier run "
        "(step-01.mmd) kept"
    ) in result.stderr
    assert [(p.name, p.read_text()) for p in folder.iterdir()] == [("step-01.mmd", "earlier")]

    # failing half-way (a bug, a layout that fails) leaves it so too, and the error says why
    def second_fails(*args, **kwargs):
        made.append(1)
        return b"x" if len(made) < 2 else 1 / 0

    made.clear()
    monkeypatch.setattr(trace_cli, "render", second_fails)
    result = run("trace", *HAND, "--frames", str(folder), "--format", "mmd")
    assert result.exit_code == 1 and "ZeroDivisionError" in result.stderr
    assert [(p.name, p.read_text()) for p in folder.iterdir()] == [("step-01.mmd", "earlier")]


def test_frames_without_graphviz_fail_cleanly(tmp_path: Path) -> None:
    result = run(
        "trace", "a*b", "a=1", "b=2", "--frames", str(tmp_path), env={"GRADVIZ_DOT": "none"}
    )
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: GRADVIZ_DOT=none switched Graphviz off")
    assert "Traceback" not in result.stderr
    # The mermaid frames need no Graphviz.
    result = run(
        "trace", "a*b", "a=1", "b=2", "--frames", str(tmp_path), "--format", "mmd",
        env={"GRADVIZ_DOT": "none"},
    )  # fmt: skip
    assert result.exit_code == 0


# -- check ---------------------------------------------------------------------------


def test_check_passes_on_the_hand_example() -> None:
    result = run("check", *HAND)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines[2:6]] == ["a", "b", "c", "f"]
    assert all(line.split()[-1] == "pass" for line in lines[2:6])
    assert lines[-1] == "4 leaves checked: 4 pass — ok"


@pytest.mark.parametrize(
    "function", ["exp", "log", "tanh", "sigmoid", "relu", "sin", "cos", "abs", "sqrt"]
)
def test_check_passes_for_every_primitive(function: str) -> None:
    result = run("check", f"{function}(x) * w + x**y / (y - 3)", "x=0.7", "w=-1.3", "y=1.5")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "3 leaves checked: 3 pass — ok"


def test_check_fails_for_a_wrong_local_derivative(monkeypatch) -> None:
    wrong = Op(
        name="tanh", symbol="tanh", out=engine.TANH.out, d=("1.0 - out",), shown=("1 - tanh(a)",)
    )
    monkeypatch.setitem(engine.UNARY_OPS, "tanh", wrong)
    result = run("check", "tanh(w*x + b)", "x=0.5", "w=-3", "b=1")
    assert result.exit_code == 1
    assert [line.split()[-1] for line in result.stdout.splitlines()[2:5]] == ["fail"] * 3
    assert result.stderr == (
        "Error: gradient check failed for w, x, b: the backward pass disagrees with "
        "finite differences\n"
    )


def test_check_reports_relu_at_zero_as_non_differentiable() -> None:
    result = run("check", "relu(x) * 3", "x=0")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[2].split()[-1] == "non-differentiable"
    assert "x: relu at 0: n1 = relu(x) has a corner there" in result.stdout
    assert result.stdout.splitlines()[-1] == "1 leaf checked: 1 non-differentiable — ok"


@pytest.mark.filterwarnings("ignore:invalid value encountered in log:RuntimeWarning")
def test_check_non_finite_is_reported_not_failed() -> None:
    result = run("check", "log(x)", "x=-1")
    assert result.exit_code == 0
    assert "non-finite" in result.stdout


def test_check_wrt_eps_tol() -> None:
    result = run("check", *HAND, "--wrt", "b, f", "--eps", "1e-3", "--tol", "1e-9")
    assert result.exit_code == 0, result.output
    assert [line.split()[0] for line in result.stdout.splitlines()[2:4]] == ["b", "f"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--wrt", "z"], "Error: no leaf named 'z' in this graph\nLeaves with names: a, b, c, f."),
        (["--wrt", "d"], "Error: d is computed from other values, not a leaf"),
        (["--wrt", "a,,b"], "Error: --wrt takes leaf names separated by commas"),
        (["--eps", "0"], "Error: eps must be a positive number, not 0.0"),
        (["--tol", "-1"], "Error: tol must be a positive number, not -1.0"),
    ],
)
def test_check_bad_options_are_exit_2(args: list[str], message: str) -> None:
    result = run("check", *HAND, *args)
    assert result.exit_code == 2
    assert result.stderr.startswith(message)


@pytest.mark.parametrize(
    "args", [["exp(x)", "x=700"], ["exp(x)", "x=500"], ["sin(x)", "x=500"], ["sin(x)", "x=1000"]]
)
def test_check_passes_at_large_inputs(args: list[str]) -> None:
    """h = ∛ε·|x| is large there, and so is the h² error of a central difference (a
    relative error of 3e-6 for exp at 700): the extrapolated estimate has none of it."""
    result = run("check", *args)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "1 leaf checked: 1 pass — ok"


def test_check_fails_a_derivative_one_percent_off_at_a_large_input(monkeypatch) -> None:
    exp = engine.UNARY_OPS["exp"]
    wrong = Op(name="exp", symbol="exp", out=exp.out, d=("1.01 * out",), shown=("1.01·exp(a)",))
    monkeypatch.setitem(engine.UNARY_OPS, "exp", wrong)
    result = run("check", "exp(x)", "x=700")
    assert result.exit_code == 1
    assert "a local derivative on the way is wrong" in result.stdout


def test_check_a_coarse_step_is_extrapolated_and_its_error_counted() -> None:
    # With h = 1 the central difference of x³ is off by h² = 1 (3 + 1 = 4), and by 1/4
    # with h/2; the extrapolation (4·3.25 − 4) / 3 = 3 is exact for a cubic.
    result = run("check", "x**3", "x=1", "--eps", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[2].split() == ["x", "1", "3", "3", "0", "pass"]


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_check_calls_an_overflow_non_finite() -> None:
    result = run("check", "exp(x)", "x=1000")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[2].split()[-1] == "non-finite"
    assert "x: L = exp(x) overflows to inf (exp of 1000)" in result.stdout


@pytest.mark.parametrize(
    ("expr", "name"),
    [("x*2 + y", "L"), ("L = x*2; L + y", "out"), ("loss = x*2 + y", "loss")],
    ids=["unnamed", "L-taken", "named"],
)
def test_draw_trace_and_check_name_the_output_alike(expr: str, name: str) -> None:
    draw = run("draw", expr, "x=1", "y=5")
    assert draw.exit_code == 0, draw.output
    assert draw.stdout.startswith(f"{name} ← +  data 7")
    assert f"grad = ∂{name}/∂leaf" in draw.stdout
    traced = run("trace", expr, "x=1", "y=5")
    assert traced.exit_code == 0, traced.output
    assert f"d{name}/dx = 2" in traced.stdout and f"d{name}/dy = 1" in traced.stdout
    checked = run("check", expr, "x=1", "y=5")
    assert checked.exit_code == 0, checked.output
    assert checked.stdout.split()[:4] == ["leaf", "value", "analytic", f"∂{name}/∂leaf"]


@pytest.mark.parametrize("command", ["draw", "trace", "check"])
def test_an_expression_starting_with_minus_says_to_put_dashes_first(command: str) -> None:
    result = run(command, "-x*2", "x=1")
    assert result.exit_code == 2
    assert result.stderr.endswith(
        "Error: No such option '-x'.\n"
        f"If '-x*2' is the expression, put -- before it (options go before --): "
        f"gradviz {command} -- '-x*2' x=1\n"
    )
    result = run(command, "--", "-x*2", "x=1")
    assert result.exit_code == 0, result.output
    help_text = " ".join(run(command, "--help").stdout.split())
    assert f'gradviz {command} -- "-x*2" x=1' in help_text
    assert "An expression that starts with '-' goes after --" in help_text


def test_the_minus_hint_keeps_options_before_the_dashes() -> None:
    result = run("trace", "--forward", "-(a+b)", "a=1", "b=2")
    assert result.exit_code == 2
    assert "gradviz trace --forward -- '-(a+b)' a=1 b=2" in result.stderr
    result = run("trace", "--forward", "--", "-(a+b)", "a=1", "b=2")
    assert result.exit_code == 0 and "da/d" not in result.stdout
    assert "dL/da = -1" in result.stdout
    # A mistyped long option is still just that: no hint about expressions.
    result = run("draw", "--outptu", "x")
    assert result.exit_code == 2 and "put -- before" not in result.stderr


def test_the_model_options_are_declared_once_for_all_three_commands() -> None:
    ctx = click.Context(cli)
    commands = {name: cli.get_command(ctx, name) for name in ("draw", "trace", "check")}

    def option(command, name):
        (param,) = [p for p in command.params if p.name == name]
        return (tuple(param.opts), type(param.type), getattr(param.type, "path_type", None))

    for name in ("model_path", "input_text", "target", "seed"):
        shapes = {option(command, name) for command in commands.values()}
        assert len(shapes) == 1, (name, shapes)
    levels = {c: [p for p in commands[c].params if p.name == "level"] for c in commands}
    assert [p.type.case_sensitive for c in ("draw", "trace") for p in levels[c]] == [False] * 2
    assert levels["check"] == []


def test_help_texts_have_examples() -> None:
    for command in ("trace", "check"):
        result = run(command, "--help")
        assert result.exit_code == 0
        assert "Examples:" in result.stdout and f"gradviz {command} " in result.stdout


def test_docs_frames_are_the_hand_example() -> None:
    """docs/trace holds the frame sequence of the hand example (see its README)."""
    from gradviz.drawn import trace_frames
    from gradviz.expr import parse_program
    from gradviz.tracing import trace

    docs = Path(__file__).resolve().parent.parent / "docs" / "trace"
    program = parse_program(HAND[0], {"a": 2, "b": -3, "c": 10, "f": -2})
    titles = [f.title for f in trace_frames(program.output, trace(program.output))]
    files = sorted(docs.glob("step-*.svg"))
    assert [p.name for p in files] == [f"step-0{k}.svg" for k in range(1, 8)]
    index = (docs / "README.md").read_text(encoding="utf-8")
    for path, title in zip(files, titles, strict=True):
        assert title in _svg_text(path)
        assert f"| [{title[5]}]({path.name}) | {title.split(': ', 1)[1]} |" in index


# -- saved models ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def xor_model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "xor.json"
    result = run("train", "xor", "--epochs", "50", "--save", str(path), "--quiet")
    assert result.exit_code == 0, result.output
    return path


def test_network_trace_agrees_with_the_engine(xor_model: Path) -> None:
    from gradviz.model import load_model, network_loss_graph
    from gradviz.tracing import network_trace

    graph = network_loss_graph(load_model(xor_model), (0.0, 1.0))
    steps = network_trace(graph, "neuron")
    assert [s.name for s in steps] == [
        "loss",
        "L2.N1",
        "L1.N1",
        "L1.N2",
        "L1.N3",
        "L1.N4",
        "inputs",
    ]
    built = graph.built
    for step, a, z in zip(steps[2:6], built.act[0], built.pre[0], strict=True):
        # dL/da is the sum of what the next layer sent; dL/dz = dL/da · σ'(z).
        assert step.credit == (a.grad,)
        assert sum(amount for _, amount in step.sources[0]) == pytest.approx(a.grad, rel=1e-12)
        assert step.credit_z[0] == pytest.approx(a.grad * a.data * (1 - a.data), rel=1e-12)
        assert step.credit_z == (z.grad,)
    # The inputs' running totals end at the engine's gradients.
    last = {p.to: p.total for s in steps[2:6] for p in s.passed}
    assert last == {
        "x0": pytest.approx(built.inputs[0].grad, rel=1e-12),
        "x1": pytest.approx(built.inputs[1].grad, rel=1e-12),
    }
    layer_steps = network_trace(graph, "layer")
    assert [s.name for s in layer_steps] == ["loss", "L2", "L1", "inputs"]
    assert layer_steps[2].credit_z == tuple(z.grad for z in built.pre[0])


@pytest.mark.parametrize("kind", ["mse", "bce"])
def test_loss_formulas_come_from_the_one_loss_table(kind: str) -> None:
    from gradviz import nn
    from gradviz.drawn import network_diagram
    from gradviz.model import LossGraph
    from gradviz.tracing import network_trace

    network = nn.Network([2, 2, 1], ["tanh", "sigmoid"], kind)
    x = [Value(0.3, "x0"), Value(-1.2, "x1")]
    built = network.build(x, Value(1.0, "y"))
    built.loss.backward()
    graph = LossGraph(network, built, (0.3, -1.2), 1.0, {}, {})
    loss = LOSS_FUNCTIONS[kind]
    step = network_trace(graph, "layer")[0]
    assert step.formula == loss.derivative
    out, y = built.output.data, 1.0
    by_hand = {"mse": 2 * (out - y), "bce": (out - y) / (out * (1 - out))}[kind]
    assert step.passed[0].amount == pytest.approx(by_hand, rel=1e-12)
    lines = network_diagram(graph, "layer").node("loss").extra_lines
    assert lines == (f"{kind}: {loss.formula}",)


def test_trace_model_by_neuron_and_layer(xor_model: Path, tmp_path: Path) -> None:
    result = run("trace", "--model", str(xor_model), "--input", "0,1", "--level", "neuron")
    assert result.exit_code == 0, result.output
    steps = [line for line in result.stdout.splitlines() if line.startswith("Step ")]
    assert steps[0] == "Step 1/7  loss  (the output: dL/dL = 1)"
    assert steps[-1] == "Step 7/7  inputs  (leaves: the credit stops here)"
    result = run(
        "trace", "--model", str(xor_model), "--input", "0,1", "--level", "layer",
        "--frames", str(tmp_path),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    files = sorted(tmp_path.glob("step-*.svg"))
    assert len(files) == 4  # loss, L2, L1, inputs
    assert "Step 3/4: L1: dL/da = [" in _svg_text(files[2])


def test_trace_model_scalar_frames_count_every_node(xor_model: Path, tmp_path: Path) -> None:
    from gradviz.engine import topological_order
    from gradviz.model import load_model, network_loss_graph

    result = run(
        "trace",
        "--model",
        str(xor_model),
        "--input",
        "1,0",
        "--frames",
        str(tmp_path),
        "--format",
        "mmd",
    )  # fmt: skip  (Mermaid: no Graphviz run for each of ~50 frames)
    assert result.exit_code == 0, result.output
    order = topological_order(network_loss_graph(load_model(xor_model), (1.0, 0.0)).loss)
    constants = sum(type(v) is Constant for v in order)  # a constant gets no step
    assert len(list(tmp_path.glob("step-*.mmd"))) == len(order) - constants == 51
    assert "dloss/dL1.N1.w0" in result.stdout


def test_check_model_samples_pass(xor_model: Path) -> None:
    result = run("check", "--model", str(xor_model), "--samples", "5", "--seed", "3")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "5 leaves checked: 5 pass — ok"
    assert "checking 5 of 17 parameters (seed 3) on each of the 4 examples of xor" in result.stderr
    again = run("check", "--model", str(xor_model), "--samples", "5", "--seed", "3")
    assert again.stdout == result.stdout  # seeded: the same sample


def test_check_model_catches_a_wrong_activation_derivative(xor_model: Path, monkeypatch) -> None:
    from gradviz import nn

    sigmoid = ops.SIGMOID
    wrong = Op(name="sigmoid", symbol="sigmoid", out=sigmoid.out, d=("out",), shown=("σ(a)",))
    monkeypatch.setitem(nn.ACTIVATIONS, "sigmoid", wrong)
    result = run("check", "--model", str(xor_model), "--samples", "17", "--input", "1,1")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith("Error: gradient check failed for ")


@pytest.mark.parametrize(
    "args",
    [
        ["check", "a*b", "--model", "MODEL"],
        ["trace", "a*b", "--model", "MODEL"],
        ["trace"],
        ["check"],
        ["trace", "a*b", "--level", "neuron"],
        ["check", "--model", "MODEL", "--wrt", "a"],
        ["trace", "--model", "MODEL", "--input", "1,2,3"],
        ["trace", "--model", "no-such-model.json"],
    ],
)
def test_model_usage_errors_are_exit_2(xor_model: Path, args: list[str]) -> None:
    result = run(*[str(xor_model) if a == "MODEL" else a for a in args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "a*b", "--samples", "3"], "Error: --samples is for --model"),
        (["trace", "a*b", "--format", "mmd"], "Error: --format is the format of the --frames"),
        (["trace", "--model", "MODEL", "--format", "svg"], "Error: --format is the format of"),
    ],
)
def test_options_that_would_be_ignored_are_usage_errors(
    xor_model: Path, args: list[str], message: str
) -> None:
    result = run(*[str(xor_model) if a == "MODEL" else a for a in args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr


@pytest.mark.parametrize("target", ["nan", "1e400", "-inf"])
@pytest.mark.parametrize("command", ["draw", "trace", "check"])
def test_a_target_that_is_not_finite_is_exit_2(xor_model: Path, command: str, target: str) -> None:
    result = run(command, "--model", str(xor_model), "--input", "0,1", "--target", target)
    assert result.exit_code == 2, result.output
    shown = {"nan": "nan", "1e400": "inf", "-inf": "-inf"}[target]
    assert result.stderr.endswith(f"Error: --target {shown}: expected a finite number\n")


def test_check_a_diverged_model_reports_its_nan_weights(xor_model: Path, tmp_path: Path) -> None:
    """A network trained with --keep-going until it diverged: NaN weights feeding relu
    units are non-finite numbers, not relu's corner."""
    import json

    raw = json.loads(xor_model.read_text())
    raw["spec"]["activation"] = "relu"
    for layer in raw["layers"][:1]:
        layer["activation"] = "relu"
        layer["weights"][0][0] = "nan"
    raw["history"]["stopped"] = "training diverged at epoch 3: the loss is nan"
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(raw))
    result = run("check", "--model", str(path), "--samples", "17")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "17 leaves checked: 17 non-finite — ok"
    assert "non-differentiable" not in result.stdout and "crosses" not in result.stdout
    assert "L1.N1.w0: L1.N1.w0 itself is nan, so loss is nan in 4 of 4 examples" in result.stdout
    assert "L1.N1.b: the leaf L1.N1.w0 is nan, so loss is nan in 4 of 4 examples" in result.stdout


def test_trace_layer_frames_run_top_to_bottom(xor_model: Path, tmp_path: Path) -> None:
    result = run(
        "trace", "--model", str(xor_model), "--input", "0,1", "--level", "layer",
        "--frames", str(tmp_path), "--format", "mmd",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = (tmp_path / "step-01.mmd").read_text()
    assert "flowchart TB" in text and "status ok" in text


def test_frames_over_mermaids_limit_advise_svg_frames_in_traces_words(tmp_path) -> None:
    """The advice names trace's own option (`--format svg`), not draw's `-o graph.svg`."""
    chain = "x" + "*x" * 200  # 600 edges
    folder = tmp_path / "frames"
    result = run("trace", chain, "x=1", "--frames", str(folder), "--format", "mmd")
    assert result.exit_code == 1
    assert "Write SVG instead (--format svg), or draw a part of the expression." in result.stderr
    assert "-o graph.svg" not in result.stderr


def test_trace_json_goes_to_stdout_alone_and_only_once_the_files_are_written(tmp_path) -> None:
    import json

    frames = tmp_path / "frames"
    result = run("trace", *HAND, "--json", "--frames", str(frames))
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)  # stdout holds the document and nothing else
    assert len(list(frames.glob("step-*.svg"))) == len(document["steps"]) == 7
    assert result.stderr.startswith("wrote 7 frames")
    # an output that cannot be written: an error, and no document on stdout
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    failed = run("trace", *HAND, "--json", "--frames", str(blocked))
    assert failed.exit_code != 0 and failed.stdout == ""


def test_check_json_of_a_failing_leaf_prints_the_document_then_fails(monkeypatch) -> None:
    """A wrong derivative (tanh' written 1 - out): exit status 1, the error on stderr, and
    stdout still the whole document, `passed` false."""
    import json

    from gradviz import checking
    from gradviz.checking import gradcheck
    from gradviz.engine import TANH, apply

    wrong = Op(name="tanh", symbol="tanh", out=TANH.out, d=("1.0 - out",), shown=("1 - t",))
    x = Value(0.5, "x")
    rows = gradcheck(apply(wrong, x) * 2.0)
    monkeypatch.setattr(checking, "gradcheck", lambda *args, **kwargs: rows)
    result = run("check", "tanh(x) * 2", "x=0.5", "--json")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: gradient check failed for x")
    document = json.loads(result.stdout)
    assert document["passed"] is False and document["leaves"][0]["status"] == "fail"
