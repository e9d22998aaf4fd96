"""`gradviz check --show`: the finite differences as the lesson computes them by hand,
and a table that fits 80 columns."""

from __future__ import annotations

import io
import math

import pytest
from click.testing import CliRunner
from rich.cells import cell_len
from rich.console import Console

from gradviz.checking import gradcheck
from gradviz.cli import cli
from gradviz.expr import parse_program
from gradviz.render.trace_view import check_view

HAND = ("e = a*b; d = e + c; L = d*f", "a=2", "b=-3", "c=10", "f=-2")


def run(*args: str):
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "80"})


def _block(stdout: str, leaf: str) -> dict[str, str]:
    """The --show lines of one leaf, as {label: number}."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{leaf} = "))
    block = {}
    for line in lines[start + 1 : start + 6]:
        label, _, value = line.strip().rpartition("  ")
        block[label.strip()] = value.strip()
    return block


def test_rows_carry_the_lessons_numbers() -> None:
    # L = (a·b + c)·f at a=2: L(a±h) = (±h·b − 6 + 10)·f − ... computed independently
    out = parse_program(*HAND[:1], {"a": 2, "b": -3, "c": 10, "f": -2}).output
    row = next(r for r in gradcheck(out) if r.name == "a")
    h = row.step / 2
    assert math.isclose(row.plus, ((2 + h) * -3 + 10) * -2, rel_tol=1e-15)
    assert math.isclose(row.minus, ((2 - h) * -3 + 10) * -2, rel_tol=1e-15)
    assert row.central == (row.plus - row.minus) / row.step
    assert math.isclose(row.central, 6.0, rel_tol=1e-9)


def test_show_prints_both_nudges_with_the_digits_to_tell_them_apart() -> None:
    result = run("check", *HAND, "--show")
    assert result.exit_code == 0, result.output
    a = _block(result.stdout, "a")
    # at 4 digits both would read -8: here they differ, and D is ≈ 6 but not exactly
    assert a["L(a+h)"] != a["L(a−h)"]
    assert float(a["L(a+h)"]) > -8 > float(a["L(a−h)"])
    h = 1.2110601416389966e-05  # ∛ε · |a| = 6.06e-6 · 2
    assert math.isclose(float(a["L(a+h)"]), -8 + 6 * h, rel_tol=1e-7)
    assert math.isclose(float(a["D"]), 6.0, rel_tol=1e-9) and a["D"] != "6"
    assert a["analytic ∂L/∂a"] == "6"
    assert "table's abs error" in a
    assert result.stdout.rstrip().endswith("4 leaves checked: 4 pass — ok")


def test_without_show_no_by_hand_block() -> None:
    result = run("check", *HAND)
    assert "by hand" not in result.stdout and "L(a+h)" not in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        (*HAND, "--show"),
        ("relu(x)*3 + sqrt(z) + exp(y)", "x=0", "z=0", "y=700", "--show"),
        ("tanh(weight_of_layer*x + bias_of_layer)", "x=0.5", "weight_of_layer=-3e-5",
         "bias_of_layer=123456.789", "--show"),
    ],
)  # fmt: skip
def test_the_table_fits_80_columns(args: tuple[str, ...]) -> None:
    result = run("check", *args)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    table = lines[: lines.index("") if "" in lines else len(lines)]
    table = [line for line in table if ": " not in line[:30] or line.startswith("leaf")]
    assert max(cell_len(line) for line in table) <= 80, "\n".join(table)
    by_hand = lines[lines.index("") + 1 : -1]
    assert max(cell_len(line) for line in by_hand) <= 80


def test_check_view_in_an_80_column_console_does_not_wrap_the_table() -> None:
    out = parse_program("L = tanh(w*x + b)", {"w": -3.0, "x": 0.5, "b": 1.0}).output
    file = io.StringIO()
    Console(width=80, color_system=None, file=file).print(check_view(gradcheck(out), "L"))
    text = file.getvalue()
    rows = [line for line in text.splitlines() if line.split() and line.split()[0] in "wxb"]
    assert len(rows) == 3 and all(line.rstrip().endswith("pass") for line in rows)
