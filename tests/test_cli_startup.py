"""Start-up: what `gradviz draw` and `gradviz --help` import, and the package's lazy API.

Each check runs in a fresh interpreter (other tests have imported everything already).
bench/startup.py measures the time; these tests keep the heavy imports from coming back.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import click
import pytest

import gradviz
from gradviz.cli import COMMANDS, cli

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

# Loaded only by the commands (or options) that need them, never by drawing an expression.
HEAVY = (
    "numpy",
    "graphviz",
    "importlib.metadata",
    "subprocess",
    "gradviz.train",
    "gradviz.compile",
    "gradviz.nn",
    "gradviz.spec",
    "gradviz.report",
    "gradviz.model",
    "gradviz.stats",
    "gradviz.data",
    "gradviz.measure",
    "gradviz.checking",
    "gradviz.tracing",  # its step classes: drawing needs only the names (gradviz.names)
    "gradviz.render.network",
    "gradviz.render.layers",
    "gradviz.render.trace_view",
    "gradviz.render.json",
    "gradviz.render.mermaid",
    "gradviz.render.html",
    "gradviz.cli.train",
    "gradviz.cli.grads",
    "gradviz.cli.trace",
    "rich.progress",
    "matplotlib",
    "gradviz.render.plots",
    "torch",  # the PyTorch bridge's (gradviz.torch): only for a tensor
    "gradviz.torch",
    "gradviz.schema",
)


def modules_after(args: list[str]) -> dict[str, object]:
    """Runs `gradviz ARGS` in a fresh interpreter; the modules it imported, and its output."""
    code = f"""
import contextlib, io, json, sys
from gradviz.cli import main
sys.argv = ["gradviz", *{args!r}]
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        main()
    except SystemExit as exit:
        status = exit.code
    else:
        status = 0
print(json.dumps({{"modules": sorted(sys.modules), "status": status, "out": out.getvalue()}}))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(done.stdout.splitlines()[-1])


def loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if m in names or m.startswith(tuple(f"{n}." for n in names)))


def test_drawing_an_expression_imports_no_numpy_graphviz_or_training() -> None:
    run = modules_after(["draw", "(a+b)*c", "a=2", "b=-3", "c=0.5"])
    assert run["status"] == 0 and "grad = ∂L/∂leaf" in run["out"]
    assert loaded(run["modules"], HEAVY) == []
    # leaves without a value get defaults drawn by numpy's generator: numpy, nothing else
    run = modules_after(["draw", "(a+b)*c"])
    heavy = loaded(run["modules"], HEAVY)
    assert run["status"] == 0 and "numpy.random" in heavy
    assert [m for m in heavy if not m.startswith("numpy")] == []


def test_drawing_a_transcendental_op_imports_nothing_heavy() -> None:
    # floats go through math (gradviz.ops): numpy is for batches of samples (and tanh)
    run = modules_after(["draw", "sin(a*b) + exp(a) / log(b + 2) - sigmoid(a)", "a=0.5", "b=-1"])
    assert run["status"] == 0
    assert loaded(run["modules"], HEAVY) == []
    run = modules_after(["draw", "tanh(a*b)", "a=0.5", "b=-1"])
    heavy = loaded(run["modules"], HEAVY)
    assert "numpy" in heavy and [m for m in heavy if not m.startswith("numpy")] == []


def test_help_imports_no_command_and_no_library_module() -> None:
    run = modules_after(["--help"])
    assert run["status"] == 0 and "Commands:" in run["out"]
    ours = [m for m in run["modules"] if m == "gradviz" or m.startswith("gradviz.")]
    assert ours == [
        "gradviz",
        "gradviz.cli",
        "gradviz.cli.options",
        "gradviz.errors",
        "gradviz.text",
    ]
    assert loaded(run["modules"], ("rich", "numpy")) == []


def test_help_lists_the_same_summaries_as_the_loaded_commands() -> None:
    """cli.COMMANDS keeps the start of each command's help for `gradviz --help`: the
    listing must be what click shows with every command imported, at every width click
    uses (its help is at most 80 columns wide unless a program sets max_content_width)."""
    code = """
import json, click
from click.testing import CliRunner
from gradviz.cli import COMMANDS, cli
widths = range(40, 81)
lazy = [CliRunner().invoke(cli, ["--help"], terminal_width=w).output for w in widths]
ctx = click.Context(cli)
for name in COMMANDS:
    cli.get_command(ctx, name)
eager = [CliRunner().invoke(cli, ["--help"], terminal_width=w).output for w in widths]
print(json.dumps([lazy, eager]))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lazy, eager = json.loads(done.stdout)
    assert "Commands:" in lazy[0]
    assert lazy == eager, "cli.COMMANDS is out of step with a command's help (first paragraph)"


def test_every_listed_command_loads_under_its_name_with_the_summary_it_advertises() -> None:
    ctx = click.Context(cli)
    assert cli.list_commands(ctx) == sorted(COMMANDS)
    for name, row in COMMANDS.items():
        command = cli.get_command(ctx, name)
        assert command is not None and command.name == name
        assert command.short_help == row.summary, "declare it with gradviz.cli.command(NAME)"


# -- the package's API ----------------------------------------------------------------


def test_trace_and_gradcheck_are_functions_beside_their_modules() -> None:
    import gradviz.checking
    import gradviz.tracing

    assert gradviz.trace is gradviz.tracing.trace
    assert gradviz.gradcheck is gradviz.checking.gradcheck
    assert isinstance(gradviz.trace, types.FunctionType)


def test_trace_and_gradcheck_are_still_callable_as_the_readme_shows() -> None:
    from gradviz import Value, gradcheck, trace

    x = Value(3.0, label="x")
    steps = trace(x * x + x)
    assert [(s.name, s.credit) for s in steps] == [("L", 1.0), ("n1", 1.0), ("x", 7.0)]
    assert [(r.name, r.status) for r in gradcheck(x * x + x)] == [("x", "pass")]


def test_every_public_name_resolves_and_dir_lists_it() -> None:
    for name in gradviz.__all__:
        assert getattr(gradviz, name) is not None, name
    assert set(gradviz.__all__) <= set(dir(gradviz))
    assert gradviz.Value is __import__("gradviz.engine").engine.Value
    assert isinstance(gradviz.__version__, str) and gradviz.__version__
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = gradviz.no_such_name


def test_importing_gradviz_imports_nothing_heavy() -> None:
    code = "import sys, json, gradviz; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = json.loads(done.stdout)
    assert [m for m in modules if m.startswith("gradviz")] == ["gradviz"]
    assert loaded(modules, ("numpy", "click", "rich", "importlib.metadata", "torch")) == []


def test_reading_a_recorded_run_imports_no_torch(tmp_path) -> None:
    """`inspect` and `grads` of a run file (gradviz.schema) need gradviz alone."""
    import numpy as np

    from gradviz.nn import Network, layer_samples
    from gradviz.records import Run, RunLayer
    from gradviz.schema import save_run
    from gradviz.stats import diagnose

    network = Network([2, 3, 1], ["sigmoid", "sigmoid"])
    network.initialise("default", 0)
    X = np.array([[0.0, 1.0], [1.0, 0.0]])
    diagnosis = diagnose(layer_samples(network, X, np.array([1.0, 0.0])))
    layers = [RunLayer(s.name, "Linear", (s.n_out, s.n_in), "sigmoid") for s in diagnosis.layers]
    path = tmp_path / "run.json"
    save_run(Run(layers, [(0, diagnosis)], 1, 1, [1], [0.25], [None]), path)
    for command in ("inspect", "grads"):
        run = modules_after([command, str(path)])
        assert run["status"] == 0 and "recorded in pytorch" in run["out"]
        assert loaded(run["modules"], ("torch",)) == []


def test_training_without_a_picture_option_imports_no_matplotlib() -> None:
    run = modules_after(["train", "xor", "--epochs", "5"])
    assert run["status"] == 0 and "Decision boundary" in run["out"]
    assert loaded(run["modules"], ("matplotlib", "gradviz.render.plots")) == []


# What `train --quiet` needs is the training itself: the views (rich), the renderers, the
# report and the model file come in only with an option that shows or writes them.
VIEWS = ("rich", "gradviz.render", "gradviz.report", "gradviz.model", "gradviz.cli.pictures")


def test_quiet_training_imports_no_view_and_builds_no_report() -> None:
    for spec in ("xor", "deep-sigmoid"):  # the compiled and the batched execution
        run = modules_after(["train", spec, "--epochs", "5", "--quiet"])
        assert run["status"] == 0 and run["out"] == ""
        assert loaded(run["modules"], VIEWS) == []
    shown = modules_after(["train", "xor", "--epochs", "5"])
    assert "accuracy" in shown["out"] and "rich.console" in shown["modules"]


def test_training_imports_the_standard_modules_only_its_input_needs() -> None:
    """A preset reads no TOML; only a CSV data set needs csv, only a mistake difflib's
    close matches, only a printed command line shlex: each costs the start-up of every
    run that does not use it."""
    preset = modules_after(["train", "xor", "--epochs", "5", "--quiet"])
    assert preset["status"] == 0
    assert loaded(preset["modules"], ("tomllib", "csv", "difflib", "shlex")) == []
    toml = modules_after(["train", str(SAMPLES / "deep-sigmoid.toml"), "--epochs", "5", "--quiet"])
    assert toml["status"] == 0 and "tomllib" in toml["modules"]
    assert loaded(toml["modules"], ("csv", "difflib", "shlex")) == []
    wrong = modules_after(["train", "xor", "--activation", "sigmod", "--epochs", "5"])
    assert wrong["status"] == 2 and "difflib" in wrong["modules"]
