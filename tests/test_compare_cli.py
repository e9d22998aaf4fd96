"""`gradviz compare`: loss and accuracy beside the gradient table, a spec against itself
with changed options, and a table that fits 80 columns without cutting a number."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from gradviz import nn
from gradviz.cli import cli
from gradviz.numbers import fmt
from gradviz.render.layers import wrap_clauses
from gradviz.spec import preset

ROOT = Path(__file__).resolve().parent.parent
grads_cli = importlib.import_module("gradviz.cli.grads")  # the module (`cli.grads` is the command)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def compare_json(*args: str) -> dict:
    code, out, err = run("compare", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_compare_shows_each_networks_loss_and_accuracy() -> None:
    payload = compare_json("xor", "xor-relu")
    # by hand through the engine: the initial network's mean loss over the four points
    for tag, name in (("a", "xor"), ("b", "xor-relu")):
        spec = preset(name)
        net = nn.Network.from_spec(spec)
        points = [((0, 0), 0), ((0, 1), 1), ((1, 0), 1), ((1, 1), 0)]
        outputs = [nn.example_graph(net, x, y).output.data for x, y in points]
        losses = [(o - y) ** 2 for o, (_, y) in zip(outputs, points, strict=True)]
        right = [(o > 0.5) == (y == 1) for o, (_, y) in zip(outputs, points, strict=True)]
        final = payload[tag]["final"]
        assert final["loss"] == pytest.approx(sum(losses) / 4, rel=1e-12)
        assert final["accuracy"] == sum(right) / 4
    code, out, _ = run("compare", "xor", "xor-relu")
    assert code == 0
    row = re.search(r"^A +(\S+) +(\d+)% \((\d)/4\)$", out, re.M)
    assert row, out
    assert float(row[1]) == pytest.approx(payload["a"]["final"]["loss"], rel=5e-3)
    assert int(row[3]) == round(4 * payload["a"]["final"]["accuracy"])


def test_compare_a_spec_with_itself_under_changed_options(tmp_path: Path) -> None:
    payload = compare_json("xor", "xor --activation relu --init he")
    assert payload["b"]["source"] == "xor --activation relu --init he"
    assert [layer["activation"] for layer in payload["b"]["gradients"]["layers"]] == [
        "relu",
        "sigmoid",
    ]
    # the same network written as a spec file, measured by `grads`
    spec = tmp_path / "xor-relu-he.toml"
    spec.write_text(
        'name = "xor"\nlayers = [2, 4, 1]\nactivation = "relu"\ninit = "he"\n'
        'data = "xor"\nepochs = 2000\nlearning_rate = 1.0\n'
    )
    code, out, err = run("grads", str(spec), "--json")
    assert code == 0, err
    assert payload["b"]["gradients"]["layers"] == json.loads(out)["gradients"]["layers"]
    # quotes group a value; `=` works too; --epochs per side wins over the shared one
    payload = compare_json("xor", "xor --layers '2, 3, 1' --lr=0.5 --epochs 3", "--epochs", "2")
    assert payload["a"]["epoch"] == 2 and payload["b"]["epoch"] == 3
    assert payload["b"]["gradients"]["layers"][0]["n_out"] == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("xor --bogus 1", "'--bogus' is not an option of a spec"),
        ("xor --lr", "--lr needs a value"),
        ("xor --epochs many", "--epochs 'many'"),
        ("xor --activation 'relu", "No closing quotation"),
        ("xor --save x.json", "'--save' is not an option of a spec"),
        ("xor --activation swish", "--activation: unknown value 'swish'"),
        ("model.json --lr 1", "spec options apply to a spec, not to a saved model"),
    ],
)
def test_compare_refuses_bad_options_in_one_line(text: str, message: str) -> None:
    code, out, err = run("compare", "xor", text)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) <= 2, err


def test_compare_options_never_reach_a_shell(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run("compare", "xor", "xor --name $(touch pwned) ; touch pwned2")
    assert code == 2 and "'--name' is not an option of a spec" in err
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()


@pytest.mark.slow
def test_compare_fits_80_columns_and_never_cuts_a_number(monkeypatch) -> None:
    monkeypatch.setattr(
        grads_cli, "stdout_console", lambda: Console(width=80, highlight=False, color_system=None)
    )
    code, out, err = run("compare", "deep-sigmoid", "deep-relu")
    assert code == 0, err
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in out
    assert "not shown for lack of width: A/B rel (log)" in out
    payload = compare_json("deep-sigmoid", "deep-relu")
    for tag in "ab":  # every rms and status in full
        for layer in payload[tag]["gradients"]["layers"]:
            assert fmt(layer["rms"], 3) in out and layer["status"] in out
    # the verdict is wrapped between clauses: "Xavier/He init" stays on one line
    assert "Xavier/He init" in out


def test_compare_is_not_cut_when_piped() -> None:
    code, out, _ = run("compare", "deep-sigmoid", "deep-relu")
    assert code == 0 and "not shown for lack of width" not in out
    (line,) = [line for line in out.splitlines() if line.startswith("A: ")]
    assert line.endswith("Try tanh or ReLU, Xavier/He init, or fewer layers.")


@pytest.mark.parametrize("width", range(20, 121, 7))
def test_verdict_wraps_between_clauses_never_inside_a_phrase(width: int) -> None:
    sentence = (
        "L1–L7 are vanishing: L1 receives 2.9e-8 of L10's gradient through 9 sigmoid "
        "layers, about ×0.44 per layer: σ′ averages 0.2 here (at most 0.25) and the "
        "weights multiply it by 2.2; none of their outputs saturated. Try tanh or ReLU, "
        "Xavier/He init, or fewer layers."
    )
    lines = wrap_clauses(sentence, width, "• ")
    assert " ".join(line.strip() for line in lines) == "• " + sentence
    assert lines[0].startswith("• L1") and all(line.startswith("  ") for line in lines[1:])
    assert any("Xavier/He init," in line for line in lines)  # a clause that fits: whole
    assert any("×0.44 per layer:" in line for line in lines)
    assert all(len(line) <= width for line in lines)
