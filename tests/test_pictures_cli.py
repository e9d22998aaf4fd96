"""`train` and `inspect` with --boundary and --curves, and the boundary map they print:
files written, errors before any training, the map only for two inputs."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner

from gradviz.cli import cli

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
XOR = str(SAMPLES / "xor.toml")
MAP_LINE = re.compile(r"[#.oxOX!]{48}")


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_train_writes_boundary_and_curves_and_prints_the_map(tmp_path: Path) -> None:
    picture, curves = tmp_path / "b.svg", tmp_path / "c.png"
    result = run("train", XOR, "--boundary", str(picture), "--curves", str(curves))
    assert result.exit_code == 0, result.output
    assert f"wrote {picture}" in result.stderr and f"wrote {curves}" in result.stderr
    svg = picture.read_bytes()
    ET.fromstring(svg)
    assert b"decision boundary after 2000 epochs" in svg and b"<!-- N4 -->" in svg
    assert curves.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    out = result.stdout
    assert "Decision boundary (output over the input plane)" in out
    lines = [line for line in out.splitlines() if MAP_LINE.fullmatch(line)]
    assert len(lines) == 24  # piped: plain characters, one grid cell each
    marks = "".join(lines)
    assert sorted(c for c in marks if c in "oxOX") == ["o", "o", "x", "x"]  # all 4 right
    assert "#: output > 0.5, .: ≤ 0.5" in out
    assert out.index("✓") < out.index("Decision boundary") < out.index("Gradients per layer")


def test_inspect_writes_the_same_pictures_from_a_saved_model(tmp_path: Path) -> None:
    model = tmp_path / "xor.json"
    assert run("train", XOR, "--save", str(model), "--quiet").exit_code == 0
    picture, curves = tmp_path / "b.pdf", tmp_path / "c.svg"
    result = run("inspect", str(model), "--boundary", str(picture), "--curves", str(curves))
    assert result.exit_code == 0, result.output
    assert picture.read_bytes().startswith(b"%PDF-")
    assert b"loss and accuracy over 2000 epochs" in curves.read_bytes()
    assert "Decision boundary" in result.stdout
    json_run = run("inspect", str(model), "--json", "--boundary", str(tmp_path / "j.png"))
    assert json_run.exit_code == 0 and (tmp_path / "j.png").is_file()


def test_other_than_two_inputs_is_one_line_exit_2_before_training(tmp_path: Path) -> None:
    csv = tmp_path / "three.csv"
    csv.write_text("a,b,c,label\n0,0,0,0\n1,1,1,1\n")
    target = tmp_path / "b.svg"
    result = run(
        "train", "--layers", "3,2,1", "--data", str(csv), "--epochs", "10",
        "--boundary", str(target),
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: --boundary {target}: a decision boundary needs a network with 2 inputs; "
        "this one has 3\n"
    )
    assert result.stdout == "" and not target.exists()
    # without --boundary, a 3-input network trains and prints no map
    plain = run("train", "--layers", "3,2,1", "--data", str(csv), "--epochs", "10")
    assert plain.exit_code == 0 and "Decision boundary" not in plain.stdout


def test_bad_picture_paths_are_refused_before_training(tmp_path: Path) -> None:
    for option in ("--boundary", "--curves"):
        result = run("train", XOR, option, str(tmp_path / "pic.txt"))
        assert result.exit_code == 2
        assert "a picture is written as .svg, .png or .pdf" in result.stderr
        assert result.stdout == ""
    spec = tmp_path / "xor.svg.toml"
    spec.write_text(Path(XOR).read_text())
    result = run("train", str(spec), "--boundary", str(spec))
    assert result.exit_code == 2 and "Traceback" not in result.stderr
