"""The terminal tree shows deep chains' leaves: past --depth levels the middle is
collapsed into a count, and the inputs below it are listed."""

from __future__ import annotations

from click.testing import CliRunner

from gradviz.cli import cli
from gradviz.drawn import diagram_from_value
from gradviz.expr import parse_program
from gradviz.render.terminal import MAX_DEPTH, to_text


def _chain(n: int = 10) -> str:
    expr = "x"
    for i in range(1, n + 1):
        expr = f"sigmoid(w{i}*({expr}) + b{i})"
    return expr


LEAVES = ["x", *(f"w{i}" for i in range(1, 11)), *(f"b{i}" for i in range(1, 11))]


def _tree_lines(text: str) -> list[str]:
    return text.split("\n\n")[0].splitlines()  # the tree, not the leaf table


def _named(lines: list[str], name: str) -> bool:
    return any(line.lstrip("│├└─ ").startswith(f"{name}  data ") for line in lines)


def test_a_ten_sigmoid_chain_shows_every_leaf_in_the_tree() -> None:
    out = parse_program(_chain(), {"x": 0.5}, seed=0).output
    out.backward()
    lines = _tree_lines(to_text(diagram_from_value(out), width=240))
    assert all(_named(lines, leaf) for leaf in LEAVES)
    # 3 levels per sigmoid (sigmoid, +, *): 31 levels, 16 shown, the rest counted
    hidden = [line for line in lines if "hidden" in line]
    assert len(hidden) == 1 and "… 14 levels hidden (a larger depth shows them)" in hidden[0]
    assert max(len(line) - len(line.lstrip("│├└─ ")) for line in lines) <= 4 * (MAX_DEPTH + 1)


def test_depth_none_shows_every_level() -> None:
    out = parse_program(_chain(), {"x": 0.5}, seed=0).output
    out.backward()
    lines = _tree_lines(to_text(diagram_from_value(out), width=400, depth=None))
    assert not any("hidden" in line for line in lines)
    assert all(_named(lines, leaf) for leaf in LEAVES)
    assert sum("sigmoid  data" in line for line in lines) == 10


def test_cli_depth_option() -> None:
    runner = CliRunner()
    short = runner.invoke(cli, ["draw", _chain(), "x=0.5", "--depth", "4"])
    assert short.exit_code == 0, short.output
    assert "levels hidden (--depth all shows them); the inputs:" in short.stdout
    assert all(_named(_tree_lines(short.stdout), leaf) for leaf in LEAVES)
    whole = runner.invoke(cli, ["draw", _chain(), "x=0.5", "--depth", "all"])
    assert whole.exit_code == 0 and "hidden" not in whole.stdout
    bad = runner.invoke(cli, ["draw", "x", "x=1", "--depth", "0"])
    assert bad.exit_code == 2 and "not a positive number of levels or 'all'" in bad.stderr
