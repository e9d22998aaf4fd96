"""Clipping made visible: per epoch, how many updates were clipped and the gradient norm
before and after, in the history, the saved model, `--json` and the terminal."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradviz import compile as C
from gradviz import nn
from gradviz import train as T
from gradviz.cli import cli
from gradviz.model import load_model
from gradviz.spec import PRESETS, Spec, spec_from_mapping

ROOT = Path(__file__).resolve().parent.parent


def spec_of(name: str, **changes: object) -> Spec:
    return spec_from_mapping({**PRESETS[name], **changes})


def _replay(spec: Spec) -> list[tuple[int, int, float, float]]:
    """Full-batch training replayed step by step: the unclipped mean gradient of each
    epoch's starting weights, its norm by math.fsum, clipped or not, then the plain
    engine's step (`compile.Plain`)."""
    data = T.load_data(spec)
    net = nn.Network.from_spec(spec)
    X, Y, P, every = data.X.tolist(), data.Y.tolist(), net.flat(), list(range(data.size))
    clip = "value" if spec.clip_value is not None else "norm"
    plain = C.Plain(net, clip)
    rows = []
    for epoch in range(1, spec.epochs + 1):
        _, grads = plain.gradient(P, X, Y, every)  # unclipped
        before = math.sqrt(math.fsum(g * g for g in grads))
        if spec.clip_norm is not None:
            clipped = before > spec.clip_norm
            after = spec.clip_norm if clipped else before
        else:
            c = spec.clip_value
            kept = [max(-c, min(c, g)) for g in grads]
            clipped = kept != grads
            after = math.sqrt(math.fsum(g * g for g in kept))
        rows.append((1, int(clipped), before, after))
        c = spec.clip_value if spec.clip_value is not None else spec.clip_norm
        plain.run(P, X, Y, every, 0, data.size, data.size, spec.rate_at(epoch), c, -0.0, 0)
    return rows


@pytest.mark.parametrize(
    "changes",
    [
        {"clip_norm": 0.012, "epochs": 40},  # clipped early, free once the gradient shrinks
        {"clip_value": 0.01, "epochs": 40},
        {"clip_norm": 5.0, "epochs": 5},  # never engages
    ],
)
def test_clipping_record_matches_a_replay(changes: dict) -> None:
    spec = spec_of("xor", **changes)
    result = T.train(spec, record=False)
    replay = _replay(spec)
    assert len(result.history.clipping) == spec.epochs
    for ours, theirs in zip(result.history.clipping, replay, strict=True):
        assert ours[:2] == theirs[:2]
        assert ours[2] == pytest.approx(theirs[2], rel=1e-12)
        assert ours[3] == pytest.approx(theirs[3], rel=1e-12)
    counts = [row[1] for row in replay]
    if "clip_norm" in changes and changes["clip_norm"] < 1:
        assert 0 < sum(counts) < spec.epochs  # the test covers both branches


def test_online_counts_every_update_and_no_clipping_records_nothing() -> None:
    spec = spec_of("circle", epochs=2, clip_norm=0.05)
    result = T.train(spec, record=False)
    assert [row[0] for row in result.history.clipping] == [80, 80]
    assert all(0 <= row[1] <= 80 for row in result.history.clipping)
    assert T.train(spec_of("xor", epochs=3), record=False).history.clipping == []


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_clipping_in_json_terminal_and_saved_model(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    result = run("train", "xor", "--clip-norm", "0.012", "--epochs", "40", "--json")
    payload = json.loads(result.stdout)
    replay = _replay(spec_of("xor", clip_norm=0.012, epochs=40))
    assert payload["clipping"]["clipped"] == [row[1] for row in replay]
    assert payload["clipping"]["updates"] == [1] * 40
    assert len(payload["clipping"]["norm_before"]) == len(payload["clipping"]["norm_after"]) == 40
    assert json.loads(run("train", "xor", "--epochs", "3", "--json").stdout)["clipping"] is None

    result = run("train", "xor", "--clip-norm", "0.012", "--epochs", "40", "--save", str(path))
    clipped = sum(row[1] for row in replay)
    assert f"clipping  clip norm 0.012: {clipped} of 40 updates clipped" in result.stdout
    assert "‖g‖ before" in result.stdout and "‖g‖ after" in result.stdout
    model = load_model(path)
    assert [row[1] for row in model.clipping()] == [row[1] for row in replay]
    shown = run("inspect", str(path)).stdout
    assert f"{clipped} of 40 updates clipped" in shown

    # a model saved before the record existed still loads, and shows none
    raw = json.loads(path.read_text())
    del raw["history"]["clipping"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(raw))
    assert load_model(old).clipping() == []
    assert "updates clipped" not in run("inspect", str(old)).stdout
    raw["history"]["clipping"] = {"updates": [1], "clipped": ["x"]}
    old.write_text(json.dumps(raw))
    result = CliRunner().invoke(cli, ["inspect", str(old)])
    assert result.exit_code == 2 and "history.clipping" in result.stderr


@pytest.mark.slow
def test_clipping_that_never_engages_says_so() -> None:
    result = run("train", "deep-sigmoid", "--clip-norm", "1", "--epochs", "5")
    assert "clipping  clip norm 1: 0 of 5 updates clipped" in result.stdout
    assert "it never engaged: the gradient norm stayed within 1" in result.stdout


@pytest.mark.slow
def test_exploding_sample_diverges_without_clipping_and_trains_with_it() -> None:
    sample = str(ROOT / "samples" / "exploding.toml")
    result = CliRunner().invoke(cli, ["train", sample, "--quiet"])
    assert result.exit_code == 1
    assert "training diverged at epoch" in result.stderr and "(its gradients)" in result.stderr
    result = run("train", sample, "--clip-norm", "0.5", "--json")
    payload = json.loads(result.stdout)
    assert payload["final"]["accuracy"] == 1.0
    assert sum(payload["clipping"]["clipped"]) > 100  # it worked hard
    assert payload["clipping"]["norm_before"][0] > 1 > payload["clipping"]["norm_after"][0]


@pytest.mark.parametrize("width", [80, 100, 160])
def test_clipping_lines_fit_the_terminal(width: int) -> None:
    import io

    from rich.console import Console

    from gradviz.render.training import clipping_text

    spec = spec_of("xor", clip_norm=0.012, epochs=300)
    rows = T.train(spec, record=False).history.clipping
    out = io.StringIO()
    Console(file=out, width=width).print(clipping_text(rows, ("norm", 0.012), width=width))
    lines = out.getvalue().rstrip("\n").splitlines()
    assert len(lines) == 3 and max(len(line) for line in lines) <= width
    assert lines[1].startswith("‖g‖ before") and lines[2].startswith("‖g‖ after")
