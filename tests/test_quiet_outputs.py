"""Commands that write what was asked say only where (`draw -o` prints `wrote …`):
`trace -o FILE.html` and `trace --animate -o FILE.svg` print no text trace, and
`grads --plot` of a run with two records at one step prints no matplotlib warning."""

from __future__ import annotations

import json
import warnings

from click.testing import CliRunner

from gradviz.cli import cli

EXPR = ["e = a*b; d = e + c; L = d*f", "a=2", "b=-3", "c=10", "f=-2"]


def _invoke(*args: str):
    return CliRunner(env={"NO_COLOR": "1", "COLUMNS": "120"}).invoke(cli, list(args))


def test_trace_with_a_page_prints_only_where_it_went(tmp_path) -> None:
    for extra, name, said in (
        (["-o"], "t.html", "(html)"),
        (["--animate", "-o"], "b.svg", "steps animated"),
        (["--forward", "-o"], "f.html", "(html)"),
    ):
        path = tmp_path / name
        done = _invoke("trace", *EXPR, *extra, str(path))
        assert done.exit_code == 0, done.output
        assert done.stdout == ""
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"wrote {path} (") and said in line
        assert path.stat().st_size > 0


def test_trace_with_frames_alone_still_prints_the_trace(tmp_path) -> None:
    done = _invoke("trace", *EXPR, "--frames", str(tmp_path / "frames"))
    assert done.exit_code == 0 and "Step 1/7" in done.stdout and "wrote 7 frames" in done.stderr


def test_the_plot_of_two_records_at_one_step_warns_of_nothing(tmp_path) -> None:
    import numpy as np

    from gradviz.nn import Network, layer_samples
    from gradviz.records import Run, RunLayer
    from gradviz.schema import save_run
    from gradviz.stats import diagnose

    network = Network([2, 3, 1], ["sigmoid", "sigmoid"])
    network.initialise("default", 0)
    d = diagnose(layer_samples(network, np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([1.0, 0.0])))
    layers = [RunLayer(s.name, "Linear", (s.n_out, s.n_in), "sigmoid") for s in d.layers]
    path = tmp_path / "run.json"
    save_run(Run(layers, [(0, d), (10, d)], 20, 10, [0, 10], [0.5, 0.25], [None, 1.0]), path)
    raw = json.loads(path.read_text("utf-8"))
    raw["history"][0]["step"] = raw["history"][1]["step"]  # recorded twice at step 10
    path.write_text(json.dumps(raw), "utf-8")
    for name in ("plot.svg", "plot.png"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            done = _invoke("grads", str(path), "--plot", str(tmp_path / name))
        assert done.exit_code == 0, done.output
        assert [str(w.message) for w in caught] == []
        assert "UserWarning" not in done.output
