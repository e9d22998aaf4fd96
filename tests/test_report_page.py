"""The trained-model report page (`inspect MODEL -o report.html`, `train --report`): its
logic under jsdom (always run: Node is in the test setup): the epoch slider recolours the
network with that epoch's recorded gradients, an example's loss graph has the Python
engine's numbers, hostile names stay text; and the CLI's checks.

tests/html/report.js opens a report in jsdom, performs actions and reports what it shows.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from pathlib import Path

from click.testing import CliRunner
from test_html_page import (  # the autouse fixture: skip without Node locally, fail in CI
    _needs_node_and_jsdom,  # noqa: F401
    run_harness,
)

from gradviz.cli import cli
from gradviz.engine import topological_order
from gradviz.model import load_model
from gradviz.nn import example_graph
from gradviz.numbers import fmt
from gradviz.render.colours import BAD_BAND, BANDS

HARNESS = Path(__file__).parent / "html" / "report.js"


def invoke(*args: str) -> object:
    return CliRunner().invoke(cli, list(args))


def run_report(page: Path, actions: list[dict], tmp_path: Path) -> list[dict]:
    return run_harness(HARNESS, page, actions, tmp_path)


def expected_fill(rms: float) -> str:
    """The shared scale, read from its documented edges: 0, < 1e-6, then two decades a
    band from 1e-6 up to ≥ 100; NaN/inf red."""
    if not math.isfinite(rms):
        return BAD_BAND.fill
    if rms == 0:
        return BANDS[0].fill
    edges = [1e-6, 1e-4, 1e-2, 1.0, 1e2]
    return BANDS[1 + sum(rms >= e for e in edges)].fill


def test_the_epoch_slider_recolours_each_layer_with_that_epochs_band(
    deep_report: tuple[Path, Path], tmp_path: Path
) -> None:
    model_path, page = deep_report
    snapshots = load_model(model_path).snapshots()
    assert [epoch for epoch, _ in snapshots] == [0, 25, 50, 75, 100]
    picks = [0, 2, 1, 4]
    states = run_report(page, [{"epoch": k} for k in picks], tmp_path)
    for k, state in zip(picks, states[1:], strict=True):
        epoch, diagnosis = snapshots[k]
        assert state["epoch"].startswith(f"epoch {epoch} ({k + 1} of 5 recorded)")
        for i, layer in enumerate(diagnosis.layers):
            shown = state["layers"][f"L{i + 1}"]
            assert shown["fill"] == expected_fill(layer.rms)
            texts = [t.replace("\u2007", "").strip() for t in shown["texts"]]
            assert f"grad {fmt(layer.rms)}" in texts
            assert f"status {layer.status}" in texts
    # the slider really changes colours here: the last layer's band falls after epoch 0
    assert states[1]["layers"]["L10"]["fill"] != states[4]["layers"]["L10"]["fill"]
    assert states[0]["layers"] == states[-1]["layers"]  # it opens on the last epoch
    # train --report carries what inspect -o does: the same epochs, weights and data
    assert payload(page.parent / "trained.html") == payload(page)


def payload(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    return json.loads(re.search(r'id="gv-report">(.*?)</script>', text).group(1))


def python_example(model_path: Path, x: list[float], y: float) -> list[tuple[float, float]]:
    built = example_graph(load_model(model_path).network(), x, y)
    return [(v.data, v.grad) for v in topological_order(built.loss)]


def same(a: float, b: float) -> bool:
    """Equal, or as close as the two platforms' exp allows: the network's sigmoid goes
    through each side's maths library (within 2 ulp an op, tests/test_html_parity.py),
    and a last-bit difference travels down the graph."""
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12)


def test_an_examples_loss_graph_has_the_python_engines_numbers(
    xor_report: tuple[Path, Path], tmp_path: Path
) -> None:
    model_path, page = xor_report
    data = load_model(model_path).dataset()
    actions = [{"point": 2}, {"typed": [0.3, -1.7, 1]}, {"show": 0}]
    states = run_report(page, actions, tmp_path)
    cases = [
        (data.X[0].tolist(), float(data.Y[0])),  # opens on example 1
        (data.X[2].tolist(), float(data.Y[2])),
        ([0.3, -1.7], 1.0),
        (data.X[0].tolist(), float(data.Y[0])),
    ]
    for state, (x, y) in zip(states, cases, strict=True):
        expected = python_example(model_path, x, y)
        shown = state["numbers"]
        got = [(float(d), float(g)) for d, g in zip(shown["data"], shown["grad"], strict=True)]
        assert len(got) == len(expected)
        for (data, grad), (py_data, py_grad) in zip(got, expected, strict=True):
            assert same(data, py_data) and same(grad, py_grad)
        # the picture's inputs, y and loss are this example's
        target = example_graph(load_model(model_path).network(), x, y).target
        texts = {n: [t.strip() for t in state["layers"][n]["texts"]] for n in ("inputs", "y")}
        assert texts["inputs"][1] == f"x0 {fmt(x[0])}, x1 {fmt(x[1])}"
        assert texts["y"][1:] == [f"data {fmt(y)}", f"grad {fmt(target.grad)}"]
        assert state["layers"]["y"]["fill"] == expected_fill(abs(target.grad))
        assert f"data {fmt(expected[-1][0])}" in [
            t.strip() for t in state["layers"]["loss"]["texts"]
        ]
        # the table shows them as gradviz prints numbers
        assert [row[5:7] for row in state["rows"]] == [[fmt(d), fmt(g)] for d, g in expected]
        assert state["example"].endswith(
            f"loss {fmt(expected[-1][0])} ({len(expected)} nodes; data and grad ∂loss/∂node "
            "on every one)"
        )
    assert states[2]["example"].startswith("input (0.3, -1.7), target 1")
    # the clicked point is ringed; a typed input rings none
    text = page.read_text(encoding="utf-8")
    point = re.search(r'<circle cx="([\d.]+)" cy="([\d.]+)" [^>]*data-i="2"', text).groups()
    assert states[1]["ring"] == list(point) and states[2]["ring"] == ["-20", "-20"]
    names = [row[1] for row in states[0]["rows"]]
    assert {"x0", "x1", "y", "L1.N1.w0", "L2.N1.b"} <= set(names)


COLUMNS = ["</script><script>window.pwned = 1</script>", "]]><img src=x onerror=window.pwned=2>"]
NAME = "<!--</title></style><svg onload=window.pwned=3>\"'&amp;"


def test_hostile_spec_and_column_names_stay_text(tmp_path: Path) -> None:
    csv = tmp_path / "points.csv"
    header = ",".join(COLUMNS)
    csv.write_text(header + ",label\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n", encoding="utf-8")
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f"name = {json.dumps(NAME)}\nlayers = [2, 3, 1]\nepochs = 20\n"
        f'[data]\ncsv = "points.csv"\nlabel = "label"\n',
        encoding="utf-8",
    )
    page = tmp_path / "report.html"
    done = invoke("train", str(spec), "-q", "--report", str(page))
    assert done.exit_code == 0, done.output
    text = page.read_text(encoding="utf-8")
    assert text.count("<script") == 2 and text.count("</script>") == 2
    states = run_report(page, [{"show": 1}, {"typed": [1, 1, 0]}], tmp_path)
    assert all(state["pwned"] is None for state in states)
    assert states[0]["scripts"] == 2
    assert states[0]["headers"][1:3] == COLUMNS
    assert states[0]["labels"][1:3] == COLUMNS
    summary = re.search(r"<pre>(.*?)</pre>", text, re.S).group(1)
    assert NAME not in summary and html.unescape(summary).startswith(NAME + ": 2-3-1")


def test_a_report_is_html_and_never_overwrites_its_inputs(
    xor_report: tuple[Path, Path], tmp_path: Path
) -> None:
    model_path, _ = xor_report
    done = invoke("inspect", str(model_path), "-o", str(tmp_path / "r.svg"))
    assert done.exit_code == 2 and "a report is written as .html" in done.output
    copy = tmp_path / "m.html"
    copy.write_text(model_path.read_text())
    done = invoke("inspect", str(copy), "-o", str(copy))
    assert done.exit_code == 2
    assert copy.read_text() == model_path.read_text()


def test_inspect_writing_a_page_prints_where_it_went_not_the_report(
    xor_report: tuple[Path, Path], tmp_path: Path
) -> None:
    """The page holds the report: a page writer wants one line, not 60 (issue 23)."""
    model_path, _ = xor_report
    page = tmp_path / "report.html"
    done = CliRunner().invoke(cli, ["inspect", str(model_path), "-o", str(page)])
    assert done.exit_code == 0, done.output
    assert (done.stdout, done.stderr) == ("", f"wrote {page}\n")
    assert "Gradients per layer" in page.read_text()
    plain = CliRunner().invoke(cli, ["inspect", str(model_path)])  # no page: the report
    assert "Gradients per layer" in plain.stdout


def test_a_network_of_more_than_two_inputs_gets_a_note_for_its_boundary(tmp_path: Path) -> None:
    csv = tmp_path / "three.csv"
    rows = [f"{i % 2},{i // 2 % 2},{i // 4},{(i % 2) ^ (i // 4)}" for i in range(8)]
    csv.write_text("a,b,c,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    page = tmp_path / "three.html"
    done = invoke(
        "train",
        "--layers",
        "3,4,1",
        "--data",
        str(csv),
        "--epochs",
        "30",
        "-q",
        "--report",
        str(page),
    )
    assert done.exit_code == 0, done.output
    text = page.read_text(encoding="utf-8")
    assert "The network has 3 inputs: the decision boundary is drawn for 2-input networks" in text
    states = run_report(page, [{"typed": [1, 0, 1, 0]}], tmp_path)
    assert states[1]["example"].startswith("input (1, 0, 1), target 0")


def test_a_diverged_model_shows_nan_epochs_in_the_red_band(tmp_path: Path) -> None:
    model, page = tmp_path / "ex.json", tmp_path / "ex.html"
    spec = str(Path(__file__).parents[1] / "samples" / "exploding.toml")
    args = ["--epochs", "30", "--every", "10", "-q", "--keep-going", "--save", str(model)]
    assert invoke("train", spec, *args).exit_code == 0
    done = invoke("inspect", str(model), "-o", str(page))
    assert done.exit_code == 0, done.output
    snapshots = load_model(model).snapshots()
    states = run_report(page, [{"epoch": 0}], tmp_path)
    last, first = states[0]["layers"], states[1]["layers"]
    assert all(math.isnan(layer.rms) for layer in snapshots[-1][1].layers)
    assert {last[f"L{i}"]["fill"] for i in range(1, 6)} == {BAD_BAND.fill}
    assert [first[f"L{i}"]["fill"] for i in range(1, 6)] == [
        expected_fill(layer.rms) for layer in snapshots[0][1].layers
    ]
    assert BAD_BAND.fill not in {first[f"L{i}"]["fill"] for i in range(1, 6)}
    assert states[0]["example"].startswith("example 1 (")
    assert states[0]["example"].split(": loss ")[1].startswith("nan")


def test_the_policy_allows_exactly_the_pages_own_script_and_style(
    xor_report: tuple[Path, Path],
) -> None:
    text = xor_report[1].read_text(encoding="utf-8")
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', text).group(1)
    code = re.search(r"<script>(.*?)</script>", text, re.S).group(1)
    # the page's style, and the dark-mode style sheet inside the network's SVG (the plots'
    # own are inside their data: URLs, pictures of their own that the policy does not see)
    elements = re.sub(r'src="data:[^"]*"', "", text)
    css, svg_css = re.findall(r"<style>(.*?)</style>", elements, re.S)

    def digest(s: str) -> str:
        return "sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()

    assert csp == (
        f"default-src 'none'; script-src '{digest(code)}'; "
        f"style-src '{digest(css)}' '{digest(svg_css)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    # the only addresses are names, never fetched: XML namespaces and the SVG doctype
    names = (
        "http://www.w3.org/",
        "http://creativecommons.org/ns",
        "http://purl.org/dc/",
    )
    addresses = set(re.findall(r"https?://[^\s\"'<>%]*", text))
    assert addresses and all(a.startswith(names) for a in addresses)


def test_above_200_examples_the_page_lists_the_first_and_says_so(tmp_path: Path) -> None:
    csv = tmp_path / "many.csv"
    rows = [f"{i / 250:.3f},{(i * 7 % 250) / 250:.3f},{i % 2}" for i in range(250)]
    csv.write_text("a,b,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    page = tmp_path / "many.html"
    args = ["--layers", "2,3,1", "--data", str(csv), "--epochs", "5", "-q", "--report", str(page)]
    done = invoke("train", *args)
    assert done.exit_code == 0, done.output
    text = page.read_text(encoding="utf-8")
    assert text.count('class="show"') == 200
    assert "The first 200 of 250 examples (" in text
    states = run_report(page, [{"show": 199}, {"typed": [0.999, 0.5, 1]}], tmp_path)
    assert states[1]["example"].startswith("example 200 (0.796, ")
    assert states[2]["example"].startswith("input (0.999, 0.5), target 1")


def test_a_loss_graph_too_big_to_list_gets_a_note(tmp_path: Path) -> None:
    page = tmp_path / "big.html"
    args = ["--layers", "2,40,40,1", "--data", "xor", "--epochs", "2", "-q", "--report", str(page)]
    done = invoke("train", *args)
    assert done.exit_code == 0, done.output
    states = run_report(page, [{"show": 1}], tmp_path)
    for state in states:
        assert re.fullmatch(
            r"[\d,]+ nodes in one example's loss graph: more than the page lists \(3,000\)",
            state["example"],
        )
        assert state["rows"] == []


def test_explore_of_a_model_is_the_page_inspect_writes(xor_report: tuple[Path, Path]) -> None:
    """One builder for the report: `inspect -o` (through the CLI) and the library's
    `report_page` give the same bytes, and `gradviz.explore(model)` shows that page in a
    notebook's sandboxed frame."""
    import gradviz
    from gradviz.cli import EVERY_NUMBER, STATUS_MEANINGS
    from gradviz.pages import report_page
    from gradviz.report import build_report

    model_path, report = xor_report
    model = load_model(model_path)
    built = build_report(model, title=str(model_path))
    assert report.read_text(encoding="utf-8") == report_page(
        built, more=EVERY_NUMBER, statuses=STATUS_MEANINGS
    )
    shown = gradviz.explore(model)
    frame = shown._repr_html_()
    assert 'sandbox="allow-scripts"' in frame
    srcdoc = frame.split('srcdoc="', 1)[1].split('" sandbox', 1)[0]
    assert html.unescape(srcdoc) == shown.html
    assert shown.html == report_page(built, title="xor")
