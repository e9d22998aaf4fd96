"""The training report (`gradviz.report`): one object that every view of a run reads.

A run recorded elsewhere (the PyTorch bridge: per-layer statistics per step, a loss
history, layer names like `net.0`, no gradviz network, no data) makes a report with
`Report.from_recorded`, and the terminal, JSON and HTML views render it, each saying in a
line what it cannot show. And the views compute nothing of their own: what the report
says (its verdict, its statistics) is what each of them shows."""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace

from rich.console import Console

from gradviz.numbers import dumps
from gradviz.pages import report_page
from gradviz.render.training import training_view
from gradviz.report import Report, build_report, inspect_document, train_document
from gradviz.spec import resolve_spec
from gradviz.stats import Diagnosis, LayerStats
from gradviz.train import load_data, train


def layer(index: int, name: str, rms: float, status: str, is_output: bool) -> LayerStats:
    """One layer's statistics as a framework's recorder aggregates them (made by hand
    here: no gradviz network is involved)."""
    return LayerStats(
        index=index,
        name=name,
        activation="relu" if not is_output else "linear",
        is_output=is_output,
        n_in=4,
        n_out=1 if is_output else 4,
        n_params=20,
        batch=32,
        mean_abs=rms / 2,
        max_abs=rms * 3,
        rms=rms,
        norm=rms * 4,
        signal=rms,
        rel=None,
        below=None,
        growth=1.0,
        hop=None,
        hop_bound=None,
        grad_data=None,
        update_data=None,
        act_mean=0.5,
        act_std=0.25,
        mean_slope=0.5,
        saturated=None,
        dead=0.0,
        dead_units=0,
        nonfinite=0,
        nonfinite_in=None,
        status=status,
        reason="",
    )


def recorded_step(step: int, first_rms: float) -> tuple[int, Diagnosis]:
    layers = [
        layer(1, "net.0", first_rms, "vanishing" if first_rms < 1e-6 else "ok", False),
        layer(2, "net.2", 0.125, "ok", True),
    ]
    diagnosis = Diagnosis(layers, at_rest=False, output_spread=0.5, stalled=False, epoch=step)
    return step, diagnosis


def recorded_report() -> Report:
    steps = [recorded_step(0, 0.01), recorded_step(50, 1e-4), recorded_step(100, 1e-8)]
    return Report.from_recorded(
        steps,
        title="torch run",
        summary="a PyTorch run: 2 layers, 100 steps",
        loss=[0.7, 0.5, 0.4],
        accuracy=[0.5, 0.75, 0.875],
        every=50,
    )


def terminal(report: Report, width: int = 120) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None)
    for part in training_view(report, width=width):
        console.print(part)
    return out.getvalue()


def page_texts(page: str) -> str:
    """The texts of a report page (its <pre> blocks: the summary and the gradients)."""
    return "\n".join(re.findall(r"<pre>(.*?)</pre>", page, re.S))


def test_a_recorded_run_makes_a_report_from_its_statistics_alone() -> None:
    report = recorded_report()
    assert report.network is None and report.data is None and report.spec is None
    assert report.layer_names == ("net.0", "net.2")
    assert report.epochs_run == 100
    assert [epoch for epoch, _ in report.snapshots] == [0, 50, 100]
    assert report.diagnosis.layers[0].rms == 1e-8  # the last step is the state now
    assert report.boundary() is None
    assert report.boundary_note == "no decision boundary: the run holds no data"


def test_a_recorded_run_renders_in_the_terminal_with_notes_for_what_it_lacks() -> None:
    text = terminal(recorded_report())
    assert text.startswith("torch run\na PyTorch run: 2 layers, 100 steps\n")
    assert "(mean per epoch, 50–150, log scale)" in text  # 3 points, one every 50
    # what a run lacks, in one line
    assert "no predictions, no decision boundary: a recorded run holds no network" in text
    assert "Gradients per layer at step 100 (as recorded)" in text
    assert "net.0" in text and "net.2" in text and "vanishing" in text


def test_a_recorded_run_renders_as_json() -> None:
    report = recorded_report()
    document = json.loads(dumps(inspect_document(report)))
    assert document["spec"] is None and document["predictions"] == []
    assert document["epochs_run"] == 100
    assert [layer["name"] for layer in document["gradients"]["layers"]] == ["net.0", "net.2"]
    assert document["gradients"]["layers"][0]["rms"] == 1e-8
    assert document["final"] == {"loss": 0.4, "accuracy": 0.875}  # the last recorded point
    assert document["verdict"] == list(report.verdict) != []
    assert json.loads(dumps(train_document(report)))["loss"] == [0.7, 0.5, 0.4]


def test_a_recorded_run_renders_as_a_page() -> None:
    page = report_page(recorded_report())
    assert "<title>gradviz report: torch run</title>" in page
    # what a run lacks, in one line, and no empty sections
    assert "no predictions, no decision boundary, no example&#x27;s loss graph" in page or (
        "no predictions, no decision boundary, no example's loss graph" in page
    )
    for section in ("boundary", "predictions", "example"):
        assert f'<section id="{section}"' not in page
    # the layer picture, from the recorded statistics alone: a node per layer by its name
    assert "<title>net.0</title>" in page and "<title>net.2</title>" in page
    payload = json.loads(re.search(r'id="gv-report">(.*?)</script>', page).group(1))
    assert [frame["epoch"] for frame in payload["frames"]] == [0, 50, 100]
    assert [layer["name"] for layer in payload["frames"][-1]["layers"]] == ["net.0", "net.2"]
    assert payload["X"] == [] and payload["program"]["skip"].startswith("no example graph")


def test_every_view_shows_what_the_report_says_and_computes_nothing_of_its_own() -> None:
    """A report whose verdict and statistics are changed by hand: each view shows the
    changed ones, so none of them diagnoses again behind the report's back."""
    spec = resolve_spec("xor", {"epochs": 20}, {})
    built = build_report(train(spec, load_data(spec)))
    changed = replace(built.diagnosis.layers[0], rms=777.0, status="exploding")
    diagnosis = replace(built.diagnosis, layers=[changed, *built.diagnosis.layers[1:]])
    report = replace(built, verdict=("A verdict only the report holds.",), diagnosis=diagnosis)
    assert "777" not in terminal(built, width=200) + page_texts(report_page(built))
    text = terminal(report, width=200)
    assert "A verdict only the report holds." in text and "777" in text
    document = train_document(report)
    assert document["verdict"] == ["A verdict only the report holds."]
    assert document["gradients"]["layers"][0]["rms"] == 777.0
    texts = page_texts(report_page(report))
    assert "A verdict only the report holds." in texts and "777" in texts


def test_explore_shows_a_report_as_its_page() -> None:
    import gradviz

    report = recorded_report()
    assert gradviz.explore(report).html == report_page(report)
