"""Recorded run files (gradviz.schema) read as saved models are: the same caps on numbers,
duplicate keys and size, a layer cap, steps that every view can turn into a float, and
the words that tell a run from a model. Made with gradviz alone (no torch): the layers
and statistics of a small gradviz network, saved by `save_run`."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from click.testing import CliRunner

from gradviz.cli import cli
from gradviz.errors import InputError, ModelError
from gradviz.nn import Network, layer_samples
from gradviz.records import Run, RunLayer
from gradviz.render.training import sparkline
from gradviz.schema import MAX_RUN_LAYERS, MAX_STEP, load_run, save_run
from gradviz.stats import diagnose


def _run(names: tuple[str, ...] = ("L1", "L2")) -> Run:
    """A run of a sigmoid network 2-3-…-3-1 with one layer per name."""
    network = Network([2, *[3] * (len(names) - 1), 1], ["sigmoid"] * len(names))
    network.initialise("default", 0)
    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    diagnosis = diagnose(layer_samples(network, X, np.array([1.0, 0.0, 1.0])))
    for layer, name in zip(diagnosis.layers, names, strict=True):
        layer.name = name
    layers = [
        RunLayer(name, "Linear", (s.n_out, s.n_in), "sigmoid")
        for name, s in zip(names, diagnosis.layers, strict=True)
    ]
    return Run(layers, [(0, diagnosis), (10, diagnosis)], 20, 10, [0, 10], [0.5, 0.25], [None, 1])


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "run.json"
    save_run(_run(), path)
    return path, json.loads(path.read_text("utf-8"))


def _invoke(*args: str):
    return CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(cli, list(args))


# Each command that reads a run, with each output that turns its steps into numbers.
def _commands(path, tmp_path) -> list[list[str]]:
    return [
        ["inspect", str(path)],
        ["inspect", str(path), "-o", str(tmp_path / "report.html")],
        ["inspect", str(path), "--curves", str(tmp_path / "curves.svg")],
        ["grads", str(path)],
        ["grads", str(path), "--plot", str(tmp_path / "plot.svg")],
    ]


def _write(tmp_path, text: str):
    path = tmp_path / "edited.json"
    path.write_text(text, "utf-8")
    return path


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        # an integer of 5,000 digits: Python refuses to read it past 4,300 ("Exceeds the limit")
        (lambda t: t.replace('"steps_run": 20', '"steps_run": ' + "9" * 5000), "5,000 characters"),
        # a step of 10**309: float(step) overflows in the page, the plot and the curves
        (lambda t: t.replace('"step": 10', '"step": 1' + "0" * 309), "longer than the 100"),
        (lambda t: t.replace('"step": 10', f'"step": {MAX_STEP + 1}'), "more than the"),
        (lambda t: t.replace('"steps_run": 20', '"steps_run": 20, "steps_run": 30'), "twice"),
    ],
    ids=["4300-digits", "step-10e309", "step-over-cap", "duplicate-key"],
)
def test_a_run_file_has_the_caps_of_a_model_file(saved, tmp_path, edit, words) -> None:
    path, _ = saved
    edited = _write(tmp_path, edit(path.read_text("utf-8")))
    with pytest.raises(ModelError, match=words):
        load_run(edited)
    for command in _commands(edited, tmp_path):
        done = _invoke(*command)
        assert done.exit_code == 2, (command, done.output)
        assert words in done.output and "Traceback" not in done.output
        assert len(done.output.strip().splitlines()) <= 2, done.output  # the error (and a hint)


def test_the_curve_steps_are_capped_too(saved, tmp_path) -> None:
    _, raw = saved
    raw["curves"]["step"][1] = MAX_STEP + 1
    with pytest.raises(ModelError, match=r"curves\.step\[1\]: .* more than the"):
        load_run(_write(tmp_path, json.dumps(raw)))


def test_a_step_at_the_cap_draws_everywhere(saved, tmp_path) -> None:
    _, raw = saved
    raw["history"][1]["step"] = raw["curves"]["step"][1] = raw["steps_run"] = MAX_STEP
    edited = _write(tmp_path, json.dumps(raw))
    for command in _commands(edited, tmp_path):
        done = _invoke(*command)
        assert done.exit_code == 0, (command, done.output)


def test_layers_are_capped(saved, tmp_path) -> None:
    _, raw = saved
    raw["layers"] = [dict(raw["layers"][0], name=f"l{i}") for i in range(MAX_RUN_LAYERS + 1)]
    with pytest.raises(ModelError, match=f"{MAX_RUN_LAYERS + 1:,} layers is more than the"):
        load_run(_write(tmp_path, json.dumps(raw)))
    raw["layers"] = raw["layers"][:MAX_RUN_LAYERS]  # at the cap: read (then its history differs)
    with pytest.raises(ModelError, match=r"history\[0\]\.layers: expected the layers l0, l1"):
        load_run(_write(tmp_path, json.dumps(raw)))


def test_a_name_at_the_cap_reads(saved, tmp_path) -> None:
    from gradviz.schema import MAX_TEXT

    _, raw = saved
    raw["model"] = "m" * MAX_TEXT
    assert load_run(_write(tmp_path, json.dumps(raw))).model == "m" * MAX_TEXT
    raw["model"] = "m" * (MAX_TEXT + 1)
    with pytest.raises(ModelError, match=r"model: .*1,001 characters"):
        load_run(_write(tmp_path, json.dumps(raw)))


def test_a_listing_of_expected_layers_is_short(saved, tmp_path) -> None:
    _, raw = saved
    raw["layers"] = [dict(raw["layers"][0], name=f"layer{i}") for i in range(500)]
    with pytest.raises(ModelError) as caught:
        load_run(_write(tmp_path, json.dumps(raw)))
    assert "(500 in all)" in caught.value.message and len(caught.value.message) < 400


def test_a_run_saved_again_with_sorted_keys_is_still_a_run(saved, tmp_path) -> None:
    """`"format"` then comes after `curves`: past the first 4 KB of a run that logged a
    few hundred points (it was "not a gradviz model")."""
    _, raw = saved
    steps = list(range(0, 4000, 10))
    raw["curves"] = {"step": steps, "loss": [0.5] * 400, "accuracy": [None] * 400}
    text = json.dumps(raw, sort_keys=True, indent=1)
    assert text.index('"format"') > 4096
    edited = _write(tmp_path, text)
    for command in _commands(edited, tmp_path):
        done = _invoke(*command)
        assert done.exit_code == 0, (command, done.output)
        assert "not a gradviz model" not in done.output


def test_a_run_without_curves_reads(saved, tmp_path) -> None:
    _, raw = saved
    del raw["curves"]
    edited = _write(tmp_path, json.dumps(raw))
    run = load_run(edited)
    assert run.curve_steps == [] and run.loss == [] and run.accuracy == []
    done = _invoke("inspect", str(edited))
    assert done.exit_code == 0, done.output
    done = _invoke("inspect", str(edited), "--curves", str(tmp_path / "c.svg"))
    assert done.exit_code == 2 and "has no logged curves" in done.output
    raw["curves"] = {"step": [0, 10]}
    with pytest.raises(ModelError, match=r"curves\.loss: missing"):
        load_run(_write(tmp_path, json.dumps(raw)))
    raw["curves"] = {"step": [0, 10], "loss": [1.0, 0.5]}  # no accuracy logged: allowed
    assert load_run(_write(tmp_path, json.dumps(raw))).accuracy == [None, None]


@pytest.mark.parametrize("command", ["draw", "trace", "check"])
def test_a_command_that_needs_a_network_says_a_run_is_a_run(saved, command) -> None:
    path, _ = saved
    done = _invoke(command, "--model", str(path))
    assert done.exit_code == 2, done.output
    assert "is a recorded run" in done.output and "not a gradviz model" not in done.output


def test_losses_spanning_the_floats_draw(saved, tmp_path) -> None:
    """±1e308: max - min overflows to inf, and the sparkline's (v - min)/inf was NaN."""
    _, raw = saved
    raw["curves"] = {"step": [0, 10, 20], "loss": [1e308, -1e308, 0.0], "accuracy": [0, 0, 0]}
    edited = _write(tmp_path, json.dumps(raw))
    for command in _commands(edited, tmp_path):
        done = _invoke(*command)
        assert done.exit_code == 0, (command, done.output)
    assert sparkline([1e308, -1e308, 0.0], log=False) == "█▁▅"


def test_a_short_curve_shows_every_point() -> None:
    """Fewer points than columns: one column each (it showed the first point n times)."""
    assert sparkline([1.0, 10.0, 100.0, 1000.0]) == "▁▃▆█"
    assert sparkline([3.0, 1.0], log=False) == "█▁"
    line = sparkline([float(i) for i in range(1, 121)], width=60, log=False)
    assert len(line) == 60 and line[0] == "▁" and line[-1] == "█"


# -- names: what save_run writes reads back ------------------------------------------------


ODD_NAMES = [
    ("a\tb", "a\\tb"),
    ("a\nb", "a\\nb"),
    ("a\u200bb", "a\\u200bb"),  # zero width space
    ("a\x1b[31mb", "a\\x1b[31mb"),  # an escape sequence
]


@pytest.mark.parametrize(
    ("name", "saved_as"), ODD_NAMES, ids=["tab", "newline", "zero-width", "escape"]
)
def test_a_layer_name_with_control_characters_reads_back(tmp_path, name, saved_as) -> None:
    path = tmp_path / "run.json"
    save_run(_run((name, "out")), path)
    run = load_run(path)
    assert [layer.name for layer in run.layers] == [saved_as, "out"]
    assert [layer.name for layer in run.diagnosis().layers] == [saved_as, "out"]


def test_no_view_shows_a_layer_name_s_control_characters(tmp_path) -> None:
    """Every view of one run whose layers hold each of the names: none shows one raw."""
    path = tmp_path / "run.json"
    save_run(_run((*(name for name, _ in ODD_NAMES), "out")), path)
    assert [layer.name for layer in load_run(path).layers][:-1] == [s for _, s in ODD_NAMES]
    for command in _commands(path, tmp_path):
        done = _invoke(*command)
        assert done.exit_code == 0, (command, done.output)
        for name, saved_as in ODD_NAMES:
            assert name not in done.output, (command, saved_as)


def test_a_long_layer_name_is_cut_and_names_stay_distinct(tmp_path) -> None:
    from gradviz.schema import MAX_TEXT

    long = "x" * 1500
    path = tmp_path / "run.json"
    save_run(_run((long + "1", long + "2")), path)
    names = [layer.name for layer in load_run(path).layers]
    assert all(len(n) <= MAX_TEXT for n in names) and len(set(names)) == 2
    assert names[0].startswith("x" * 900) and names[1].endswith("#2")


def test_a_hand_edited_name_is_a_clear_error(saved, tmp_path) -> None:
    _, raw = saved
    raw["layers"][0]["name"] = "a\tb"
    with pytest.raises(ModelError, match=r"layers\[0\]\.name: .*control or invisible"):
        load_run(_write(tmp_path, json.dumps(raw)))
    raw["layers"][0]["name"] = "y" * 1001
    with pytest.raises(ModelError, match=r"1,001 characters, more than the 1,000 allowed"):
        load_run(_write(tmp_path, json.dumps(raw)))


def test_a_run_the_reader_would_refuse_is_not_saved(tmp_path) -> None:
    run = _run()
    run.steps_run = MAX_STEP + 1
    path = tmp_path / "run.json"
    with pytest.raises(InputError, match="cannot save this run: steps_run"):
        save_run(run, path)
    assert not path.exists()


def test_the_plot_of_a_named_layer_is_valid_svg(tmp_path) -> None:
    import xml.etree.ElementTree as ET

    path = tmp_path / "run.json"
    save_run(_run(("a\tb", "out")), path)
    plot = tmp_path / "plot.svg"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no matplotlib warning reaches the user
        done = _invoke("grads", str(path), "--plot", str(plot))
    assert done.exit_code == 0, done.output
    ET.parse(plot)


def test_a_model_whose_losses_span_the_floats_inspects(tmp_path) -> None:
    """The sparkline is the saved model's too: its loss curve of ±1e308 was a NaN-to-int
    internal error (`inspect` and `train` print it)."""
    path = tmp_path / "m.json"
    done = _invoke("train", "xor", "--epochs", "100", "--save", str(path), "-q")
    assert done.exit_code == 0, done.output
    raw = json.loads(path.read_text("utf-8"))
    raw["history"]["loss"] = [1e308 if i % 2 else -1e308 for i in range(100)]
    path.write_text(json.dumps(raw), "utf-8")
    done = _invoke("inspect", str(path))
    assert done.exit_code == 0, done.output
    (line,) = [ln for ln in done.stdout.splitlines() if ln.startswith("loss ")]
    assert "▁" in line and "█" in line and "linear scale" in line and "!" not in line
