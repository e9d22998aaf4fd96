"""gradviz.torch.watch on modules whose names hold a tab, a newline, a zero-width space, an
escape sequence or 1,000+ characters (`add_module` takes any string): `rec.table()` shows
them as escapes, and the run `rec.save()` writes reads back (`gradviz grads` and
`gradviz inspect` too)."""

from __future__ import annotations

import io
import json

import pytest
from click.testing import CliRunner
from torch_support import require_torch

torch = require_torch()
nn = torch.nn

from gradviz.cli import cli  # noqa: E402
from gradviz.schema import MAX_TEXT, load_run  # noqa: E402
from gradviz.torch import watch  # noqa: E402


def _recorded(first: str, second: str = "out"):
    torch.manual_seed(0)
    net = nn.Sequential()
    net.add_module(first, nn.Linear(3, 4, dtype=torch.float64))
    net.add_module("act", nn.Sigmoid())
    net.add_module(second, nn.Linear(4, 1, dtype=torch.float64))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    rec = watch(net, every=1, optimizer=optimizer)
    X = torch.randn(16, 3, dtype=torch.float64)
    for _ in range(2):
        optimizer.zero_grad()
        loss = net(X).pow(2).mean()
        loss.backward()
        optimizer.step()
        rec.log(loss)
    return rec


NAMES = [
    ("a\tb", "a\\tb"),
    ("a\nb", "a\\nb"),
    ("a\u200bb", "a\\u200bb"),
    ("a\x1b[31mb", "a\\x1b[31mb"),
]


@pytest.mark.parametrize(("name", "shown"), NAMES, ids=["tab", "newline", "zero-width", "escape"])
def test_the_table_shows_control_characters_as_escapes(name, shown) -> None:
    out = io.StringIO()
    _recorded(name).table(file=out, width=200)
    text = out.getvalue()
    assert name not in text and shown in text
    assert all(ch.isprintable() for line in text.splitlines() for ch in line), repr(text)


@pytest.mark.parametrize(("name", "shown"), NAMES, ids=["tab", "newline", "zero-width", "escape"])
def test_the_saved_run_reads_back(tmp_path, name, shown) -> None:
    path = tmp_path / "run.json"
    _recorded(name).save(path)
    run = load_run(path)
    assert [layer.name for layer in run.layers] == [shown, "out"]
    runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"})
    for command in (["grads", str(path)], ["inspect", str(path)]):
        done = runner.invoke(cli, command)
        assert done.exit_code == 0, done.output
        assert shown in done.output and name not in done.output


def test_a_name_of_1500_characters_reads_back_cut(tmp_path) -> None:
    long = "n" * 1500
    path = tmp_path / "run.json"
    _recorded(long + "1", long + "2").save(path)
    names = [layer.name for layer in load_run(path).layers]
    assert len(set(names)) == 2 and all(len(n) <= MAX_TEXT for n in names)
    raw = json.loads(path.read_text("utf-8"))
    assert [layer["name"] for layer in raw["history"][-1]["layers"]] == names


def test_a_long_name_leaves_room_for_the_numbers() -> None:
    """A 1,500-character module name is cut in the table and the heat map (the verdict's
    sentences still name it whole), so the numbers fit beside it at 100 columns."""
    from gradviz.render.layers import NAME_WIDTH

    out = io.StringIO()
    _recorded("n" * 1500).table(file=out, width=100)
    lines = out.getvalue().splitlines()
    header = next(line for line in lines if line.startswith("layer "))
    assert "rms g" in header and "status" in header
    cut = "n" * (NAME_WIDTH - 1) + "…"
    rows = [line for line in lines if line.startswith(cut)]
    assert len(rows) == 2  # the table's row and the heat map's
    assert "sigmoid" in rows[0] and "→" in rows[1]  # its numbers beside it
    assert all(len(line) <= 100 for line in lines)
