"""`gradviz grads` and `gradviz compare` through click's CliRunner: exit statuses, stderr,
JSON that parses, pictures read back by an XML parser, and the issue's acceptance cases
(the exact sigmoid chains as a saved model, deep sigmoid against deep ReLU, a trained
XOR, a network pushed to NaN)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gradviz import stats
from gradviz.cli import cli, flag
from gradviz.model import Model, save
from gradviz.spec import spec_from_mapping

ROOT = Path(__file__).resolve().parent.parent
DEEP_SIGMOID = str(ROOT / "samples" / "deep-sigmoid.toml")
DEEP_RELU = str(ROOT / "samples" / "deep-relu.toml")
XOR = str(ROOT / "samples" / "xor.toml")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def grads_json(*args: str) -> dict:
    code, out, err = run("grads", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def statuses(payload: dict) -> list[str]:
    return [layer["status"] for layer in payload["gradients"]["layers"]]


def chain_model(tmp_path: Path, weight: float, bias: float) -> str:
    """The issue's chain of 10 single-input sigmoid neurons as a saved model, on one
    example x = 0.5 (target 1): every pre-activation is 0."""
    (tmp_path / "half.csv").write_text("x,y\n0.5,1\n")
    spec = spec_from_mapping(
        {"name": "chain", "layers": [1] * 11, "activation": "sigmoid", "data": "half.csv"},
        locate=lambda key: key,
        base_dir=str(tmp_path),
    )
    layer = (np.array([[weight]]), np.array([bias]))
    history = {"epochs_run": 0, "loss": [], "accuracy": [], "gradients": []}
    path = tmp_path / f"chain-{weight:g}.json"
    save(Model(spec, [layer] * 10, history), path)
    assert json.loads(path.read_text())["spec"]["data"]["csv"] == "half.csv"  # beside it
    return str(path)


# -- the exact chains, end to end --------------------------------------------------------------


@pytest.mark.parametrize(
    ("weight", "bias", "ratio", "expected"),
    [
        (1.0, -0.5, 0.25**9, ["vanishing"] * 6 + ["weak"] * 2 + ["ok"] * 2),
        (4.0, -2.0, 1.0, ["ok"] * 10),
        (8.0, -4.0, 2.0**9, ["exploding"] * 3 + ["ok"] * 7),
    ],
)
def test_chain_model_exact_ratios(
    tmp_path: Path, weight: float, bias: float, ratio: float, expected: list[str]
) -> None:
    payload = grads_json(chain_model(tmp_path, weight, bias))
    layers = payload["gradients"]["layers"]
    assert layers[0]["rms"] / layers[-1]["rms"] == ratio  # exact: powers of two
    assert [layer["hop"] for layer in layers[:-1]] == [weight * 0.25] * 9
    assert [layer["hop_bound"] for layer in layers[:-1]] == [weight * 0.25] * 9
    assert statuses(payload) == expected


def test_chain_table_text(tmp_path: Path) -> None:
    code, out, err = run("grads", chain_model(tmp_path, 1.0, -0.5))
    assert code == 0 and err == ""
    row = next(line for line in out.splitlines() if line.startswith("L1 "))
    assert "3.81e-6" in row and "×0.25" in row and "≤0.25" in row and row.endswith("vanishing")
    assert "L1 receives 3.8e-6 of L10's gradient through 9 sigmoid layers" in out


# -- samples ---------------------------------------------------------------------------------


def test_deep_sigmoid_at_init_first_layers_vanish_not_the_last() -> None:
    found = statuses(grads_json(DEEP_SIGMOID))
    assert found[:5] == ["vanishing"] * 5
    assert found[-1] == "ok" and "vanishing" not in found[-2:]


def test_deep_relu_at_init_does_not_vanish() -> None:
    payload = grads_json(DEEP_RELU)
    assert statuses(payload) == ["ok"] * 10  # not vanishing, exploding, NaN, nor dead
    # a few ReLU units are dead (0 for all 80 points), far from half a layer
    dead = [layer["dead"] for layer in payload["gradients"]["layers"]]
    assert max(dead) < stats.DEAD_FRACTION and max(dead) == 5 / 16
    assert payload["verdict"] == [
        "Healthy: every layer gets at least a tenth of the gradient of the layers after it, "
        "with no NaN, explosion, dead or saturated layer."
    ]


def test_measure_is_library_logic() -> None:
    """What grads and compare show comes from `gradviz.measure`, callable without a CLI."""
    from gradviz.errors import InputError
    from gradviz.measure import Measurement, measure

    fresh = measure(DEEP_SIGMOID)
    assert isinstance(fresh, Measurement) and fresh.epoch == 0 and fresh.snapshots is None
    assert fresh.description == "at initialisation (seed 0), on circle (seed 0), 80 examples"
    assert [lay.status for lay in fresh.diagnosis().layers][:5] == ["vanishing"] * 5
    trained = measure(XOR, epochs=20, every=5)
    assert trained.epoch == 20 and [e for e, _ in trained.snapshots or []] == [0, 5, 10, 15, 20]
    assert trained.verdict() == grads_json(XOR, "--epochs", "20", "--every", "5")["verdict"]
    with pytest.raises(InputError, match=r"^every needs epochs") as info:
        measure(XOR, every=5)
    assert info.value.render(flag).startswith("--every needs --epochs")
    with pytest.raises(InputError, match="apply to a spec, not to a saved model"):
        measure("model.json", epochs=5)


def test_compare_deep_sigmoid_and_deep_relu() -> None:
    code, out, err = run("compare", DEEP_SIGMOID, DEEP_RELU)
    assert code == 0 and err == ""
    assert out.startswith(f"A = {DEEP_SIGMOID}, at initialisation")
    row = next(line for line in out.splitlines() if line.startswith("L1 "))
    cells = row.split()
    assert cells[1] == "sigmoid" and cells[4] == "vanishing" and cells[5] == "relu"
    assert "B: " in out and "A: L1–" in out
    code, out, _ = run("compare", DEEP_SIGMOID, DEEP_RELU, "--json")
    payload = json.loads(out)
    assert statuses(payload["a"])[0] == "vanishing"
    assert "vanishing" not in statuses(payload["b"])


def test_trained_xor_has_no_vanishing_exploding_or_dead(tmp_path: Path) -> None:
    found = statuses(grads_json(XOR, "--epochs", "2000"))
    assert not {"vanishing", "exploding", "dead", "NaN"} & set(found)
    # the same through a saved model, with the history recorded during training
    model = tmp_path / "xor.json"
    code, _, err = run("train", XOR, "--quiet", "--save", str(model))
    assert code == 0, err
    payload = grads_json(str(model))
    assert not {"vanishing", "exploding", "dead", "NaN"} & set(statuses(payload))
    assert payload["epoch"] == 2000 and len(payload["history"]) >= 2
    assert payload["history"][0]["epoch"] == 0


@pytest.mark.slow
def test_deep_sigmoid_trained_is_stalled_at_the_mean() -> None:
    payload = grads_json(DEEP_SIGMOID, "--epochs", "300")
    assert set(statuses(payload)) == {"stalled"}
    assert any("stuck at the mean prediction" in line for line in payload["verdict"])


def test_huge_learning_rate_nan_names_the_first_layer(tmp_path: Path) -> None:
    spec = tmp_path / "blowup.toml"
    spec.write_text(
        'name = "blowup"\nlayers = [2, 8, 1]\nactivation = "tanh"\n'
        'output_activation = "linear"\ndata = "xor"\nepochs = 200\nlearning_rate = 10.0\n'
    )
    code, out, err = run("grads", str(spec), "--epochs", "200", "--every", "1", "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert statuses(payload)[0] == "NaN"
    assert payload["gradients"]["first_nonfinite"]["layer"] == 1
    assert "NaN/inf first appeared in layer L1" in payload["verdict"][0]
    assert payload["verdict"][0].startswith("training diverged at epoch ")
    code, out, err = run("grads", str(spec), "--epochs", "200", "--fail-on", "nan,exploding")
    assert code == 1
    assert "failing (--fail-on): NaN in L1" in err
    assert "NaN" in next(line for line in out.splitlines() if line.startswith("L1 "))


# -- options -----------------------------------------------------------------------------------


def test_fail_on_vanishing() -> None:
    code, _, err = run("grads", DEEP_SIGMOID, "--fail-on", "vanishing")
    assert code == 1 and err.startswith("failing (--fail-on): vanishing in L1, L2, L3")
    code, _, err = run("grads", DEEP_RELU, "--fail-on", "vanishing,exploding,nan")
    assert code == 0 and err == ""
    code, _, err = run("grads", DEEP_RELU, "--fail-on", "vanishing,sideways")
    assert code == 2 and "unknown status 'sideways'" in err


def test_params_lists_every_parameter() -> None:
    code, out, _ = run("grads", XOR, "--params")
    assert code == 0
    names = [line.split()[0] for line in out.splitlines() if line.startswith("L1.N")]
    assert names[:3] == ["L1.N1.w0", "L1.N1.w1", "L1.N1.b"] and len(names) == 12
    assert "least credit: " in out
    payload = grads_json(XOR, "--params")
    assert len(payload["parameters"]) == 17  # (2+1)·4 + (4+1)·1
    assert payload["parameters"][-1]["name"] == "L2.N1.b"


@pytest.mark.parametrize("suffix", [".svg", ".png", ".pdf"])
def test_plot_files(tmp_path: Path, suffix: str) -> None:
    target = tmp_path / f"plot{suffix}"
    code, _, err = run(
        "grads", DEEP_SIGMOID, "--epochs", "20", "--every", "2", "--plot", str(target)
    )
    assert code == 0 and f"wrote {target}" in err
    data = target.read_bytes()
    if suffix == ".svg":
        ET.fromstring(data)  # well-formed
        # matplotlib draws text as paths and keeps each string in a comment before it
        assert b"<!-- L1 sigmoid -->" in data and b"<!-- L10 sigmoid -->" in data
        assert b"<!-- epoch -->" in data and b"over training" in data
    elif suffix == ".png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
    else:
        assert data.startswith(b"%PDF-")


def test_bad_plot_and_option_combinations(tmp_path: Path) -> None:
    code, _, err = run("grads", XOR, "--plot", str(tmp_path / "plot.txt"))
    assert code == 2 and "a plot is written as .svg, .png or .pdf" in err
    code, _, err = run("grads", XOR, "--plot", str(tmp_path / "plot.dot"))
    assert code == 2 and "a plot is written as .svg, .png or .pdf" in err
    code, _, err = run("grads", XOR, "--every", "5")
    assert code == 2 and "--every needs --epochs" in err
    code, _, err = run("grads", str(tmp_path / "missing.json"))
    assert code == 2 and err.startswith("Error: ") and "no such model file" in err
    code, _, err = run("grads", "no-such-net")
    assert code == 2 and "neither a spec file nor a built-in network" in err
    assert "Traceback" not in err


def test_help_documents_the_thresholds() -> None:
    code, out, _ = run("grads", "--help")
    assert code == 0
    assert f"vanishing  rms < {stats.VANISHING_RATIO:g} of a layer nearer the output" in out
    assert f"weak       rms < {stats.WEAK_RATIO:g} of a layer nearer the output" in out
    assert f"rms >= {stats.EXPLODING_GROWTH:g}x the output layer's" in out
    assert "Exit status: 0 ok, 1 a --fail-on status was found" in out
    assert "gradviz grads samples/deep-sigmoid.toml" in out
    code, out, _ = run("compare", "--help")
    assert code == 0 and "gradviz compare samples/deep-sigmoid.toml samples/deep-relu.toml" in out
