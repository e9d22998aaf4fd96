"""`trace --frames` and `trace -o FILE.svg --animate` at their limits (docs/manual/limits.md,
issue 23): a request over a limit is refused before any work, in one line that names the
limit and what to do instead, exit 2, with nothing written or printed; a graph at the
limit is drawn. The rows just under and just over each limit are in test_hostile_caps.py
too, held to the hostile-input contract."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gradviz.cli import cli
from gradviz.drawn import trace_frames
from gradviz.expr import parse_program
from gradviz.output import MAX_ANIMATED_STEPS, MAX_FRAME_NODES
from gradviz.tracing import trace


def chain(tanhs: int, doubles: int) -> str:
    """x through `tanhs` tanh and then `doubles` ·2: each tanh one step and two nodes, each
    ·2 one step and three nodes (its constant 2 is drawn, and takes no step)."""
    lines, previous = [], "x"
    for i in range(tanhs + doubles):
        lines.append(f"t{i} = " + (f"tanh({previous})" if i < tanhs else f"{previous}*2"))
        previous = f"t{i}"
    return "\n".join(lines) + f"\n{previous}"


AT_FRAME_LIMIT = chain(98, 101)  # 200 frames of 500 nodes (499 edges: Mermaid draws it)
OVER_FRAME_LIMIT = chain(99, 101)  # 201 frames of 502 nodes


def total(terms: int) -> tuple[str, list[str]]:
    """x0 + … + x249 + x0 + x1 …: 250 leaves and terms - 1 sums, one step each."""
    names = [f"x{i % 250}" for i in range(terms)]
    return " + ".join(names), [f"x{i}={i % 7 - 3}" for i in range(min(terms, 250))]


AT_ANIMATION_LIMIT = total(251)  # 500 steps
OVER_ANIMATION_LIMIT = total(252)  # 501 steps


def run(*args: str):
    return CliRunner().invoke(cli, list(args), env={"GRADVIZ_DOT": None, "COLUMNS": "200"})


def frames_of(text: str, *values: str):
    out = parse_program(text, {k: float(v) for k, v in (a.split("=") for a in values)}).output
    return trace_frames(out, trace(out))


def test_the_graphs_here_sit_at_the_limits_and_one_step_past() -> None:
    at, over = frames_of(AT_FRAME_LIMIT, "x=0.5"), frames_of(OVER_FRAME_LIMIT, "x=0.5")
    assert at.nodes_drawn == MAX_FRAME_NODES == 200 * 500 and len(at.base.edges) <= 500
    assert over.nodes_drawn == 201 * 502 > MAX_FRAME_NODES
    assert len(frames_of(AT_ANIMATION_LIMIT[0], *AT_ANIMATION_LIMIT[1])) == MAX_ANIMATED_STEPS
    assert len(frames_of(OVER_ANIMATION_LIMIT[0], *OVER_ANIMATION_LIMIT[1])) == 501


def refused(result, tmp_path: Path, message: str) -> None:
    """Exit 2 with exactly this one line, nothing on stdout, nothing written."""
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert result.stderr == f"Error: {message}\n"
    assert result.stdout == ""
    assert list(tmp_path.iterdir()) == []


# The fast suite runs these two commands at the limit in test_hostile_caps.py (exit 0, the
# last step shown); here each file they write is checked too, in CI (make test-all).
@pytest.mark.slow
def test_frames_at_the_limit_are_all_written(tmp_path: Path) -> None:
    folder = tmp_path / "frames"
    result = run("trace", AT_FRAME_LIMIT, "x=0.5", "--frames", str(folder), "--format", "mmd")
    assert result.exit_code == 0, result.stderr
    files = sorted(folder.glob("step-*.mmd"))
    assert len(files) == 200 and files[0].name == "step-001.mmd"
    last = files[-1].read_text()  # (mermaid.js reads it only with a higher maxEdges: its
    # legend's hidden links count as edges there, as for `draw -f mermaid`; see the report)
    assert last.startswith("flowchart") and "Step 200/200#58; x is a leaf" in last
    assert "wrote 200 frames" in result.stderr


@pytest.mark.parametrize(
    "extra",
    [(), ("--json",), ("-o", "page.html"), ("--format", "svg", "--forward")],
    ids=["plain", "json", "page", "forward"],
)
def test_frames_over_the_limit_are_refused_before_any_work(tmp_path: Path, extra) -> None:
    extra = tuple(str(tmp_path / a) if a.endswith(".html") else a for a in extra)
    result = run("trace", OVER_FRAME_LIMIT, "x=0.5", "--frames", str(tmp_path / "f"), *extra)
    refused(
        result,
        tmp_path,
        "--frames: 201 frames of 502 nodes are 100,902 nodes to draw, more than the 100,000 "
        "allowed: write one frame (--step N), or draw a part of the expression",
    )


def test_one_frame_of_a_graph_over_the_limit_is_written(tmp_path: Path) -> None:
    result = run("trace", OVER_FRAME_LIMIT, "x=0.5", "--frames", str(tmp_path), "--step", "201")
    assert result.exit_code == 0, result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["step-201.svg"]


def test_a_step_the_pass_does_not_have_is_refused_before_anything_is_printed(tmp_path) -> None:
    result = run("trace", "x*x + x", "x=3", "--frames", str(tmp_path / "f"), "--step", "4")
    refused(result, tmp_path, "--step 4: the backward pass has steps 1 to 3")


def test_frames_mermaid_cannot_draw_are_refused_before_any_work(tmp_path: Path) -> None:
    result = run(
        "trace", OVER_FRAME_LIMIT, "x=0.5", "--frames", str(tmp_path / "f"), "--format", "mmd"
    )
    assert result.exit_code == 1  # Mermaid's own limit: a runtime failure, as for `draw`
    assert result.stderr.startswith("Error: the graph has 501 edges; Mermaid refuses more than")
    assert result.stdout == "" and list(tmp_path.iterdir()) == []


def test_a_network_over_the_limit_is_refused_at_the_levels_that_draw_too_much(tmp_path) -> None:
    model = tmp_path / "wide.json"
    trained = run(
        "train", "xor", "--layers", "2,400,1", "--epochs", "1", "-q", "--save", str(model)
    )
    assert trained.exit_code == 0, trained.output
    out = tmp_path / "out"
    out.mkdir()
    given = ("--model", str(model), "--input", "0,1", "--frames", str(out / "f"))
    refused(
        run("trace", *given, "--level", "neuron"),
        out,
        "--frames: 403 frames of 405 nodes are 163,215 nodes to draw, more than the 100,000 "
        "allowed: write one frame (--step N), or draw a collapsed view (--level layer)",
    )
    refused(
        run("trace", *given),  # one frame per scalar: 4,407 of them
        out,
        "--frames: 4,407 frames of 7,210 nodes are 31,774,470 nodes to draw, more than the "
        "100,000 allowed: write one frame (--step N), or draw a collapsed view (--level neuron "
        "or --level layer)",
    )
    by_layer = run("trace", *given, "--level", "layer")
    assert by_layer.exit_code == 0, by_layer.stderr
    assert len(list((out / "f").glob("step-*.svg"))) == 4  # the loss, 2 layers, the inputs


@pytest.mark.slow  # (the same command as test_hostile_caps' animated-steps-500)
def test_an_animation_at_the_limit_is_written(tmp_path: Path) -> None:
    text, values = AT_ANIMATION_LIMIT
    target = tmp_path / "backward.svg"
    result = run("trace", text, *values, "-o", str(target), "--animate", "--json")
    assert result.exit_code == 0, result.stderr
    assert f"wrote {target} (svg, 500 steps animated)" in result.stderr
    assert target.read_text().count("@keyframes") >= 500


def test_an_animation_over_the_limit_is_refused_before_any_work(tmp_path: Path) -> None:
    text, values = OVER_ANIMATION_LIMIT
    result = run("trace", text, *values, "-o", str(tmp_path / "backward.svg"), "--animate")
    refused(
        result,
        tmp_path,
        "--animate: 501 steps are more than the 500 an animation may have (a loop of 10 "
        "minutes): animate a part of the expression, or write one frame (--frames DIR --step N)",
    )
