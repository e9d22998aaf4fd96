"""`gradviz train` and `gradviz inspect` through click's CliRunner: output, exit statuses,
and one-line errors on stderr."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradviz.cli import cli

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_train_a_sample_prints_curve_predictions_and_gradient_table() -> None:
    result = run("train", str(SAMPLES / "xor.toml"))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "xor: 2-4-1 (sigmoid → sigmoid), 17 parameters" in out
    assert "loss " in out and "log scale" in out
    assert "final loss" in out and "accuracy 100% (4/4) after training" in out
    # the curve's last point is a mean during the last epoch; the final loss is not
    curve_end = re.search(r"(\S+) +\(mean per epoch, 1–2000, log scale\)", out)
    final = re.search(r"final loss (\S+),", out)
    assert curve_end and final and curve_end[1] != final[1]
    assert out.count("✓") == 4
    assert "Gradients per layer after epoch 2000" in out
    assert "rms g" in out and "status" in out


def test_inline_spec_and_json_output() -> None:
    result = run(
        "train",
        "--layers",
        "2,4,1",
        "--activation",
        "sigmoid",
        "--data",
        "xor",
        "--lr",
        "1",
        "--epochs",
        "50",
        "--json",
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["spec"]["layers"] == [2, 4, 1]
    assert payload["epochs_run"] == 50 and len(payload["loss"]) == 50
    assert [p["input"] for p in payload["predictions"]] == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert [layer["name"] for layer in payload["gradients"]["layers"]] == ["L1", "L2"]
    assert payload["verdict"]


def test_quiet_prints_nothing_and_save_then_inspect(tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    result = run("train", "xor", "--epochs", "300", "--quiet", "--save", str(path))
    assert result.exit_code == 0 and result.stdout == ""
    assert json.loads(path.read_text())["format"] == "gradviz-model"
    inspected = run("inspect", str(path))
    assert inspected.exit_code == 0, inspected.output
    assert "L1    │ 2 → 4 │ sigmoid" in inspected.stdout
    assert "x0" in inspected.stdout and "target" in inspected.stdout
    assert "Gradients per layer of the saved weights" in inspected.stdout
    as_json = json.loads(run("inspect", str(path), "--json").stdout)
    assert as_json["epochs_run"] == 300 and len(as_json["predictions"]) == 4


def test_inspect_on_other_data(tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    run("train", "xor", "--epochs", "10", "--quiet", "--save", str(path))
    result = run("inspect", str(path), "--data", "and", "--json")
    assert result.exit_code == 0
    assert [p["target"] for p in json.loads(result.stdout)["predictions"]] == [0, 0, 0, 1]
    bad = run("inspect", str(path), "--data", "nope")
    assert bad.exit_code == 2 and "--data: unknown data set 'nope'" in bad.stderr


def test_csv_data(tmp_path: Path) -> None:
    csv = tmp_path / "gate.csv"
    csv.write_text("a,b,label\n0,0,0\n0,1,1\n1,0,1\n1,1,1\n")
    result = run(
        "train", "--layers", "2,1", "--data", str(csv), "--epochs", "500", "--lr", "2", "--json"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["final"]["accuracy"] == 1.0


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("train", "nope.toml"), "nope.toml: no such spec file"),
        (("train", "xorr"), "'xorr' is neither a spec file nor a built-in network"),
        (("train", "xor", "--activation", "sigmod"), "--activation: unknown value 'sigmod'"),
        (("train", "xor", "--layers", "3,4,1"), "--layers: the first size is 3 but the data set"),
        (("train", "--layers", "3,4,1", "--data", "xor"), "--layers: the first size is 3 but"),
        (("train", "xor", "--save", "xor.toml"), "--save xor.toml: a model is saved as JSON"),
        (
            ("train", "circle", "--epochs", "1000000"),
            "--epochs: 1,000,000 epochs × 80 examples × 33 parameters is 2.64e9 steps of work, "
            "more than the 1e9 allowed: use at most 378,787 epochs",
        ),
        (("train", "xor", "--layers", "2,0,1"), "--layers: 0 is not a positive integer"),
        (("train", "xor", "--update", "batch"), "--update: unknown mode 'batch'"),
        (("train", "--layers", "2,1"), "or at least --data"),
        (("train", "xor", "--data", "missing.csv"), "no such CSV file"),
        (("train", "xor", "--layers", "2,100,100,1"), "10,501 parameters is more than the 5,000"),
        (("inspect", "missing.json"), "missing.json: no such model file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: tuple[str, ...], expected: str) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("Error: ")
    assert expected in result.stderr
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


def test_unknown_key_in_a_spec_file_names_its_line(tmp_path: Path) -> None:
    spec = tmp_path / "typo.toml"
    spec.write_text('layers = [2, 4, 1]\ndata = "xor"\n[data2]\nx = 1\n')
    result = run("train", str(spec))
    assert result.exit_code == 2
    assert f"{spec} line 3: data2: unknown key 'data2'" in result.stderr


def test_malformed_model_is_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    run("train", "xor", "--epochs", "5", "--quiet", "--save", str(path))
    path.write_text(path.read_text()[:200])
    result = run("inspect", str(path))
    assert result.exit_code == 2 and "truncated" in result.stderr


def test_divergence_is_exit_1_unless_keep_going() -> None:
    args = (
        "train",
        "circle",
        "--activation",
        "relu",
        "--output-activation",
        "linear",
        "--lr",
        "1000000",
        "--epochs",
        "3",
    )
    result = run(*args)
    assert result.exit_code == 1
    assert "training diverged at epoch 1" in result.stderr and "layer L2" in result.stderr
    going = run(*args, "--keep-going")
    assert going.exit_code == 0
    assert "warning: training diverged" in going.stdout
    assert "!!!" in going.stdout  # the loss curve shows NaN as '!', never as small


def test_help_has_an_example() -> None:
    for command in ("train", "inspect"):
        result = run(command, "--help")
        assert result.exit_code == 0
        assert "Examples:" in result.stdout and f"gradviz {command}" in result.stdout


def test_save_inspect_draw_round_trip(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    model = tmp_path / "xor.json"
    assert run("train", "xor", "--epochs", "200", "--quiet", "--save", str(model)).exit_code == 0
    assert run("inspect", str(model)).exit_code == 0
    svg = tmp_path / "xor.svg"
    drawn = run("draw", "--model", str(model), "--input", "0,1", "-o", str(svg))
    assert drawn.exit_code == 0, drawn.output
    text = " ".join(ET.parse(svg).getroot().itertext())
    assert "L1.N1" in text and "loss" in text  # drawn one node per neuron by default
    mermaid = run(
        "draw", "--model", str(model), "--input", "1,1", "--level", "neuron", "-f", "mermaid"
    )
    assert mermaid.exit_code == 0
    assert 'subgraph c0 ["L1"]' in mermaid.stdout and "L2.N1" in mermaid.stdout
    layer = run("draw", "--model", str(model), "--input", "1,1", "--level", "layer")
    assert layer.exit_code == 0 and "status" in layer.stdout


def test_mermaid_gets_the_layer_view_where_auto_would_draw_neurons(tmp_path: Path) -> None:
    """Mermaid's layout runs a neuron view's weight edges over other neurons' boxes (the
    browser tests measure it), so `auto` draws Mermaid one node per layer and says so;
    Graphviz outputs of the same run still get the neuron view, and `--level neuron`
    still gives Mermaid neurons when asked for."""
    model = tmp_path / "xor.json"
    assert run("train", "xor", "--epochs", "50", "--quiet", "--save", str(model)).exit_code == 0
    mmd, svg = tmp_path / "x.mmd", tmp_path / "x.svg"
    both = run("draw", "--model", str(model), "--input", "0,1", "-o", str(mmd), "-o", str(svg))
    assert both.exit_code == 0, both.output
    assert "drawn one node per layer for Mermaid" in both.stderr
    assert "drawn one node per neuron" in both.stderr  # the SVG's note
    assert "L1.N1" not in mmd.read_text(encoding="utf-8")
    assert "L1.N1" in svg.read_text(encoding="utf-8")
    asked = run(
        "draw", "--model", str(model), "--input", "0,1", "--level", "neuron", "-f", "markdown"
    )
    assert asked.exit_code == 0 and "L1.N1" in asked.stdout
    assert "for Mermaid" not in asked.stderr


def test_draw_collapses_a_deep_model_to_layers_and_says_so(tmp_path: Path) -> None:
    """10 layers of 16: the neuron view would have 2,098 edges, a tangle; auto draws a
    node per layer, top to bottom (a long chain reads as a table)."""
    model = tmp_path / "deep.json"
    run("train", "deep-sigmoid", "--epochs", "2", "--quiet", "--save", str(model))
    result = run("draw", "--model", str(model), "--input", "0,0", "--target", "1", "-f", "dot")
    assert result.exit_code == 0
    assert result.stderr == (
        "note: 6,583 scalar nodes is more than 40, and one node per neuron would take 2,098 "
        "edges (more than 100): drawn one node per layer (--level)\n"
    )
    assert '"L10" [' in result.stdout and "L10.N1" not in result.stdout
    assert 'rankdir="TB"' in result.stdout
    wide = run(
        "draw",
        "--model",
        str(model),
        "--input",
        "0,0",
        "--target",
        "1",
        "-f",
        "dot",
        "--level",
        "layer",
        "--rankdir",
        "LR",
    )
    assert 'rankdir="LR"' in wide.stdout  # asked for: the user's direction wins
    neurons = run(
        "draw",
        "--model",
        str(model),
        "--input",
        "0,0",
        "--target",
        "1",
        "-f",
        "dot",
        "--level",
        "neuron",
    )
    assert 'rankdir="LR"' in neurons.stdout and "L10.N1" in neurons.stdout
    assert neurons.stderr == (
        "note: the neuron view has 2,098 edges (a weight each): expect a tangle; --level "
        "layer shows the gradient layer by layer\n"
    )


def test_divergence_advises_keep_going_only_to_a_run_that_stopped() -> None:
    stopped = run(*BLOW)
    assert stopped.exit_code == 1
    assert stopped.stderr.rstrip().endswith(", or pass --keep-going to train on regardless.")
    went_on = run(*BLOW, "--keep-going", "--json")
    assert went_on.exit_code == 0
    message = json.loads(went_on.stdout)["stopped"]
    assert message.startswith("training diverged at epoch") and message.endswith("= 1).")
    assert "--keep-going" not in message


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--input", "0,1"), None),
        ((), None),  # the first example of the data set (tests/test_draw_cli.py)
        (("--input", "0.5,0.5"), "is not in the data set xor: give its target (--target)"),
        (("--input", "0,1,2"), "expected 2 finite numbers"),
    ],
)
def test_draw_model_errors(tmp_path: Path, args: tuple[str, ...], expected: str | None) -> None:
    model = tmp_path / "xor.json"
    run("train", "xor", "--epochs", "5", "--quiet", "--save", str(model))
    result = run("draw", "--model", str(model), *args, "-f", "json")
    if expected is None:
        assert result.exit_code == 0
        return
    assert result.exit_code == 2 and expected in result.stderr
    both = run("draw", "a*b", "--model", str(model), "--input", "0,1")
    assert both.exit_code == 2 and "not both" in both.stderr


def test_save_path_is_checked_before_training(tmp_path: Path) -> None:
    spec = tmp_path / "xor.toml"
    spec.write_text((SAMPLES / "xor.toml").read_text())
    result = run("train", str(spec), "--save", str(spec))
    assert result.exit_code == 2 and result.stdout == ""
    assert spec.read_text() == (SAMPLES / "xor.toml").read_text()
    missing = run("train", "xor", "--save", str(tmp_path / "no" / "model.json"))
    assert missing.exit_code == 2 and "no folder" in missing.stderr and missing.stdout == ""


def test_csv_model_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trained on a CSV given by a relative path: the saved model finds its data again
    from another folder, for inspect, grads and draw --model."""
    import xml.etree.ElementTree as ET

    work = tmp_path / "work"
    work.mkdir()
    (work / "gate.csv").write_text("a,b,label\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n")
    monkeypatch.chdir(work)
    trained = run(
        "train", "--layers", "2,4,1", "--data", "gate.csv", "--lr", "1", "--epochs", "2000",
        "--save", "model.json", "--json",
    )  # fmt: skip
    assert trained.exit_code == 0, trained.output
    saved = json.loads((work / "model.json").read_text())
    assert saved["spec"]["data"] == {"name": "csv", "csv": "gate.csv"}  # beside the model
    assert trained.stderr == ""  # (no note: the data is in the model's folder)
    monkeypatch.chdir(tmp_path)
    model = str(work / "model.json")

    inspected = run("inspect", model, "--json")
    assert inspected.exit_code == 0, inspected.output
    payload = json.loads(inspected.stdout)
    assert [p["target"] for p in payload["predictions"]] == [0, 1, 1, 0]
    assert payload["final"]["accuracy"] == json.loads(trained.stdout)["final"]["accuracy"] == 1.0
    shown = run("inspect", model)
    assert shown.exit_code == 0
    assert re.search(r"^a\W+b\W+target\W+output", shown.stdout, re.MULTILINE)

    grads = run("grads", model, "--json")
    assert grads.exit_code == 0, grads.output
    layers = json.loads(grads.stdout)["gradients"]["layers"]
    assert [layer["name"] for layer in layers] == ["L1", "L2"]

    svg = tmp_path / "gate.svg"
    drawn = run("draw", "--model", model, "--input", "1,0", "-o", str(svg))
    assert drawn.exit_code == 0, drawn.output
    assert "target 1" in " ".join(ET.parse(svg).getroot().itertext())


def test_report_pieces_fit_a_100_column_terminal() -> None:
    import io

    from rich.console import Console

    from gradviz.data import DataSpec, load
    from gradviz.render.training import curve_text, predictions_table, shape_text

    loss = [0.25 * 0.999**i for i in range(2000)]
    accuracy = [min(1.0, 0.5 + i / 1000) for i in range(2000)]
    for width in (80, 100, 160):
        out = io.StringIO()
        Console(file=out, width=width).print(curve_text(loss, accuracy, width=width))
        lines = [line for line in out.getvalue().splitlines() if line]
        assert len(lines) == 2 and lines[0].endswith("(mean per epoch, 1–2000, log scale)")
        assert max(len(line) for line in lines) <= width
    assert shape_text([2, 16, 16, 16, 16, 16, 16, 16, 16, 16, 1]) == "2-16×9-1"
    assert shape_text([2, 4, 4, 1]) == "2-4-4-1"

    data = load(DataSpec("circle"))
    out = io.StringIO()
    outputs = data.Y.tolist()
    right = [True] * data.size  # every output is its target
    Console(file=out, width=100).print(predictions_table(data, outputs, right))
    assert "(16 of 80 rows shown, the first ones; none is wrong)" in out.getvalue()


def test_a_file_spec_names_its_line_when_the_data_does_not_fit(tmp_path: Path) -> None:
    spec = tmp_path / "xor.toml"
    spec.write_text((SAMPLES / "xor.toml").read_text())
    line = next(
        n for n, text in enumerate(spec.read_text().splitlines(), 1) if text.startswith("layers")
    )
    (tmp_path / "three.csv").write_text("a,b,c,y\n0,0,0,0\n1,1,1,1\n")
    result = run("train", str(spec), "--data", str(tmp_path / "three.csv"))
    assert result.exit_code == 2 and result.stdout == ""
    assert f"{spec} line {line}: layers: the first size is 2 but the data set" in result.stderr


def test_the_work_limit_names_the_spec_file_line(tmp_path: Path) -> None:
    spec = tmp_path / "long.toml"
    spec.write_text(
        (SAMPLES / "circle.toml").read_text().replace("epochs = 2000", "epochs = 999999")
    )
    result = run("train", str(spec))
    assert result.exit_code == 2 and result.stdout == ""
    assert re.search(
        rf"{re.escape(str(spec))} line \d+: epochs: 999,999 epochs × 80", result.stderr
    )


BLOW = ("train", "xor", "--output-activation", "linear", "--lr", "1e4", "--epochs", "40")


def test_json_on_divergence_prints_the_numbers_then_exits_1() -> None:
    result = run(*BLOW, "--json")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: training diverged at epoch")
    payload = json.loads(result.stdout)
    assert payload["stopped"] == result.stderr[len("Error: ") :].strip().replace("\n", " ")
    assert payload["epochs_run"] == len(payload["loss"]) and payload["loss"][-1] in ("nan", "inf")
    assert payload["saved"] is None and payload["gradients"]["first_nonfinite"] is not None


def test_a_diverged_model_saved_with_keep_going_is_inspected_with_its_nan(tmp_path: Path) -> None:
    """`--keep-going --save` keeps the NaN weights; inspect and grads show them, NaN status
    and all, instead of refusing the file training itself wrote."""
    path = tmp_path / "blow.json"
    trained = run(*BLOW, "--keep-going", "--quiet", "--save", str(path))
    assert trained.exit_code == 0, trained.output
    inspected = run("inspect", str(path))
    assert inspected.exit_code == 0, inspected.output
    assert "warning: training diverged at epoch" in inspected.stdout
    words = " ".join(inspected.stdout.split())
    assert "= 1). It trained on (--keep-going)." in words
    assert "pass --keep-going" not in words  # it did
    assert re.search(r"L1 +│ 2 → 4 │ sigmoid +│ +12 │ +nan │ +nan │ +nan", inspected.stdout)
    assert inspected.stdout.count("✗ wrong") == 4  # a NaN output is never a correct 0
    assert "final loss nan, accuracy 0% (0/4)" in inspected.stdout
    assert "NaN/inf first appeared in layer" in inspected.stdout
    payload = json.loads(run("inspect", str(path), "--json").stdout)
    assert payload["stopped"].startswith("training diverged")
    assert [p["output"] for p in payload["predictions"]] == ["nan"] * 4
    grads = run("grads", str(path), "--json")
    assert grads.exit_code == 0, grads.output
    layers = json.loads(grads.stdout)["gradients"]["layers"]
    assert [layer["status"] for layer in layers] == ["NaN", "NaN"]
    assert "pass --keep-going" not in " ".join(run("grads", str(path)).stdout.split())
    guarded = run("grads", str(path), "--fail-on", "nan")
    assert guarded.exit_code == 1 and "failing (--fail-on): NaN in L1, L2" in guarded.stderr


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda r: r["history"]["gradients"][0]["layers"][0].update(rms="abc"), ".layers[0].rms"),
        (lambda r: r["history"]["gradients"][0].update(epoch="zz"), "history.gradients[0].epoch"),
    ],
)
@pytest.mark.parametrize("command", ["inspect", "grads"])
def test_malformed_history_is_exit_2_naming_the_field(
    tmp_path: Path, change, field: str, command: str
) -> None:
    path = tmp_path / "bad.json"
    run("train", "xor", "--epochs", "20", "--quiet", "--save", str(path))
    raw = json.loads(path.read_text())
    change(raw)
    path.write_text(json.dumps(raw))
    result = run(command, str(path))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"Error: {path}: history.gradients[0]")
    assert field in result.stderr and "internal error" not in result.stderr


def test_data_outside_the_model_folder_needs_data(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "models").mkdir()
    (tmp_path / "data" / "gate.csv").write_text("a,b,label\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n")
    monkeypatch.chdir(tmp_path)
    saved = run("train", "--layers", "2,2,1", "--data", "data/gate.csv", "--epochs", "5",
                "--save", "models/m.json", "--json")  # fmt: skip
    assert saved.exit_code == 0
    assert "note: the data" in saved.stderr and "--data" in saved.stderr
    for command in ("inspect", "grads"):
        refused = run(command, "models/m.json")
        assert refused.exit_code == 2 and "outside the model's folder" in refused.stderr
        given = run(command, "models/m.json", "--data", "data/gate.csv", "--json")
        assert given.exit_code == 0, given.output


@pytest.mark.parametrize("command", [("train", "xor", "--epochs", "50"), ("inspect",)])
def test_piped_output_keeps_every_column(tmp_path: Path, command: tuple[str, ...]) -> None:
    """Not a terminal: as wide as `grads` (one console helper), no column dropped."""
    if command == ("inspect",):
        path = tmp_path / "m.json"
        run("train", "xor", "--epochs", "50", "--quiet", "--save", str(path))
        command = ("inspect", str(path))
    result = run(*command)
    assert result.exit_code == 0
    assert "not shown for lack of width" not in result.stdout
    header = next(line for line in result.stdout.splitlines() if line.startswith("layer   act"))
    assert "mean|g|" in header and "act std" in header and "dead%" in header


def test_every_command_uses_the_one_console_helper() -> None:
    import gradviz.cli as package

    folder = Path(package.__file__).parent
    for module in folder.glob("*.py"):
        if module.name == "console.py":
            continue
        text = module.read_text()
        assert "Console(" not in text and "def _console" not in text, module.name
