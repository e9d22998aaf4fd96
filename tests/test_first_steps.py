"""A newcomer's first minutes: `make demo`, `make test`, `gradviz --help`, and CI.

The Makefile is run for real where that is cheap (in a scratch copy, or against the
environment these tests run in) and with `make -n` where it would install things.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from gradviz.cli import COMMANDS, cli

ROOT = Path(__file__).resolve().parent.parent
MAKE = shutil.which("make")
# CI (.ci/run) runs through make, so there it is never missing.
needs_make = pytest.mark.skipif(MAKE is None and not os.environ.get("CI"), reason="no make")


def make(*args: str, cwd: Path = ROOT, path: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": path} if path is not None else None
    return subprocess.run(
        [MAKE or "make", "--no-print-directory", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def scratch_copy(tmp_path: Path) -> Path:
    """The files the Makefile's rules read, without any .venv or node_modules."""
    (tmp_path / "tests" / "mermaid").mkdir(parents=True)
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(ROOT / "tests" / "mermaid" / name, tmp_path / "tests" / "mermaid" / name)
    return tmp_path


# -- gradviz --help ------------------------------------------------------------------------


def help_summaries(width: int) -> dict[str, str]:
    """Each command's summary in `gradviz --help`, its wrapped lines joined."""
    result = CliRunner().invoke(cli, ["--help"], terminal_width=width)
    assert result.exit_code == 0, result.output
    section = result.output.split("\nCommands:\n", 1)[1]
    summaries: dict[str, list[str]] = {}
    for line in section.splitlines():
        assert len(line) <= width, line
        name, rest = line[:11].strip(), line[11:].strip()
        if name:
            summaries[name] = [rest]
        elif rest:
            summaries[list(summaries)[-1]].append(rest)
    return {name: " ".join(parts) for name, parts in summaries.items()}


def every_command() -> dict[str, click.Command]:
    """Every command, loaded (commands load on first use: run alone, this file would
    otherwise see only those that earlier tests happened to load)."""
    ctx = click.Context(cli)
    return {name: cli.get_command(ctx, name) for name in COMMANDS}  # type: ignore[misc]


@pytest.mark.parametrize("width", [50, 80, 120])
def test_help_shows_every_command_summary_whole(width: int) -> None:
    summaries = help_summaries(width)
    commands = every_command()
    assert set(summaries) == set(commands)
    for name, summary in summaries.items():
        assert summary == commands[name].short_help, name
        assert not summary.endswith(("...", "…")), name


def test_every_summary_fits_on_its_line_at_80_columns() -> None:
    result = CliRunner().invoke(cli, ["--help"], terminal_width=80)
    commands = result.output.split("\nCommands:\n", 1)[1].splitlines()
    assert len(commands) == len(every_command())  # one line each: nothing wrapped


# -- make demo -------------------------------------------------------------------------------


@needs_make
def test_demo_ends_by_saying_how_to_run_gradviz() -> None:
    # the environment these tests run in stands for the one `make demo` set up
    venv = sys.prefix
    if not Path(venv, "bin", "gradviz").exists():
        pytest.skip("gradviz is not installed as a command in this environment")
    result = make("demo", f"VENV={venv}", "-o", f"{venv}/.installed")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "f       -2                4" in lines  # the example was drawn
    assert lines[-1] == (
        f"next: gradviz is in {venv}, not on PATH: run {venv}/bin/gradviz --help, "
        f"or `source {venv}/bin/activate` and then gradviz --help"
    )
    shown = subprocess.run(
        [f"{venv}/bin/gradviz", "--help"], capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0 and shown.stdout.startswith("Usage: gradviz")


@needs_make
def test_demo_installs_gradviz_alone_and_test_adds_the_test_tools(tmp_path: Path) -> None:
    folder = scratch_copy(tmp_path)
    demo = make("-n", "demo", cwd=folder).stdout
    installs = [line for line in demo.splitlines() if "pip install" in line]
    assert any(re.search(r"pip install -e \. ", line) for line in installs), demo
    assert not any("dev" in line for line in installs), demo
    test = make("-n", "-o", "tests/mermaid/node_modules/.installed", "test", cwd=folder).stdout
    assert "pip install -e '.[dev]'" in test
    assert "-m venv .venv" in test  # one environment for both


@needs_make
@pytest.mark.parametrize(
    ("python", "said"),
    [("./py38", "./py38 is Python 3.8.10"), ("no-such-python", "there is no no-such-python")],
)
def test_without_python_3_11_make_demo_says_so_in_one_line(
    tmp_path: Path, python: str, said: str
) -> None:
    folder = scratch_copy(tmp_path)
    old = folder / "py38"
    old.write_text('#!/bin/sh\ncase "$1" in --version) echo "Python 3.8.10";; *) exit 1;; esac\n')
    old.chmod(0o755)
    result = make("demo", f"PYTHON={python}", cwd=folder)
    assert result.returncode != 0 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert f"gradviz needs Python >= 3.11 and {said}: install it" in line
    assert not (folder / ".venv").exists()


# -- make test and make test-all -----------------------------------------------------------


@needs_make
def test_without_npm_make_test_says_what_to_install_in_one_line(tmp_path: Path) -> None:
    folder = scratch_copy(tmp_path)
    empty = tmp_path / "bin"
    empty.mkdir()
    result = make("-o", ".venv/.dev-installed", "test", cwd=folder, path=str(empty))
    assert result.returncode != 0
    assert result.stdout == ""  # nothing was run
    [line] = result.stderr.splitlines()
    assert "Node.js and npm" in line and "apt-get install nodejs npm" in line
    assert "127" not in line and "not found" not in line


@needs_make
def test_make_test_is_the_fast_suite_and_test_all_runs_everything() -> None:
    stamps = ["-o", ".venv/.dev-installed", "-o", "tests/mermaid/node_modules/.installed"]
    stamps += ["-o", ".venv/.docs-installed"]  # test-all adds the docs tools (the docs sites)
    fast = make("-n", *stamps, "test").stdout.strip().splitlines()
    full = make("-n", *stamps, "test-all").stdout.strip().splitlines()
    # one worker per core (pytest-xdist): the suite is many short tests; a file's tests on
    # one worker, so its module fixtures are made once
    command = ".venv/bin/python -m pytest -q -n auto --dist loadfile"
    assert fast == [f'{command} -m "not slow"']
    assert full == [command]


def test_ci_runs_the_full_test_command_the_readme_gives() -> None:
    commands = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert commands[-2:] == ["make test-all", "make docs"]  # the tests, then the site (--strict)
    assert 'export CI="${CI:-1}"' in commands  # by hand too: nothing skips
    tests = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Tests\n", 1)[1]
    assert re.search(r"^\$ make test-all +# .*CI", tests, re.MULTILINE), tests[:600]


def test_under_ci_the_slow_tests_cannot_be_left_out() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-m", "not slow", "--co", "tests/test_numbers.py"],
        cwd=ROOT,
        env={**os.environ, "CI": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    assert "CI runs every test, the slow ones too" in result.stderr


def test_quick_start_says_what_is_needed_and_how_to_run_gradviz() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    for needed in ("Python ≥ 3.11", "make", "Node.js", "npm", ".venv/bin/gradviz", "activate"):
        assert needed in quick, needed


@pytest.mark.slow
def test_ctrl_c_tests_pass_when_the_suite_starts_with_sigint_ignored() -> None:
    # as under `make test &` or a CI runner that ignores SIGINT: conftest must undo it
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "ctrl_c"]
    result = subprocess.run(
        [*command, "tests/test_files_safety.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert result.returncode == 0, result.stdout[-2000:]


@pytest.mark.slow
def test_the_fast_suite_says_bringing_up_nodes_once():
    """`make test` runs pytest -q -n auto: xdist's status line came out twice (issue 23)."""
    pytest_args = ["-q", "-n", "2", "-p", "no:cacheprovider", "tests/test_numbers.py", "-k", "fmt"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *pytest_args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("bringing up nodes...") == 1, done.stdout
