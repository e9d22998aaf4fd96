"""`--traceback` before or after the command name; output names through an alias; piped
tables without trailing spaces."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from gradviz.cli import cli
from gradviz.errors import ExpressionError
from gradviz.expr import parse_program

ENV = {"GRADVIZ_TRACEBACK": None, "NO_COLOR": "1"}


@pytest.mark.parametrize(
    "args",
    [
        ["--traceback", "draw", "a.b"],
        ["draw", "a.b", "--traceback"],
        ["draw", "--traceback", "a.b"],
        ["check", "a.b", "--traceback"],
        ["trace", "a.b", "--traceback"],
    ],
)
def test_traceback_before_or_after_the_command(args: list[str]) -> None:
    loud = CliRunner().invoke(cli, args, env=ENV)
    assert isinstance(loud.exception, ExpressionError)  # raised, so Python prints it


@pytest.mark.parametrize("command", ["draw", "check", "trace"])
def test_no_traceback_without_the_flag(command: str) -> None:
    quiet = CliRunner().invoke(cli, [command, "a.b"], env=ENV)
    assert quiet.exit_code == 2 and isinstance(quiet.exception, SystemExit)
    assert "Traceback" not in quiet.stderr and "attribute access" in quiet.stderr
    assert quiet.stdout == ""


def test_traceback_is_hidden_from_command_help_and_works_for_every_command() -> None:
    assert "--traceback" not in CliRunner().invoke(cli, ["draw", "--help"]).stdout
    assert "--traceback" in CliRunner().invoke(cli, ["--help"]).stdout
    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):  # commands load lazily: ask for each one
        command = cli.get_command(ctx, name)
        assert any(p.name == "traceback" for p in command.params), name


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("t = a*b; y = t", "y"),
        ("t = a*b; y = t; y", "y"),
        ("y = a*b", "y"),
        ("a*b", None),
        ("t = a*b; u = t + 1; y = t", "y"),
    ],
)
def test_the_output_is_called_by_the_last_name_given(text: str, name: str | None) -> None:
    program = parse_program(text, {"a": 1, "b": 2})
    assert program.output_name == name
    assert program.output.label == (name or None)
    program.output.backward()
    assert program.output.data == 2 and program.leaves["a"].grad == 2


def test_a_leaf_output_keeps_its_leaf_name() -> None:
    program = parse_program("L = x; L", {"x": 3})
    assert program.output_name == "L" and program.output.label == "x"
    assert program.leaves == {"x": program.output}


@pytest.mark.parametrize("command", ["draw", "trace", "check"])
def test_draw_trace_check_agree_on_the_aliased_output(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "t = a*b; y = t", "a=1", "b=2"], env=ENV)
    assert result.exit_code == 0, result.output
    assert "∂y/∂" in result.stdout or "dy/da" in result.stdout
    assert "∂t/∂" not in result.stdout and "dt/d" not in result.stdout


def test_draw_names_the_aliased_output_in_tree_and_table() -> None:
    result = CliRunner().invoke(cli, ["draw", "t = a*b; y = t", "a=1", "b=2"], env=ENV)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("y ← *") and "grad = ∂y/∂leaf" in result.stdout


def test_piped_tables_have_no_trailing_spaces(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    runs = [
        ["train", "xor", "--epochs", "3", "--save", "m.json"],
        ["inspect", "m.json"],
        ["grads", "xor"],
        ["compare", "xor", "deep-relu"],
        ["draw", "a*b", "a=1", "b=2"],
    ]
    for args in runs:
        result = CliRunner().invoke(cli, args, env=ENV)
        assert result.exit_code == 0, (args, result.output)
        lines = result.stdout.splitlines()
        assert len(lines) > 3, args
        assert [line for line in lines if line != line.rstrip()] == [], args
        assert result.stdout.endswith("\n"), args
