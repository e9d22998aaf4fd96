"""`make samples` (gradviz.tools.samples): docs/ is exactly what the tool generates, and
generating twice gives the same bytes."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gradviz.layout import DotProgram, dot_programs
from gradviz.tools.samples import build, docs_program, main

ROOT = Path(__file__).resolve().parent.parent
PURE = [p for p in dot_programs() if p.kind == "pure"]
needs_pure = pytest.mark.skipif(not PURE, reason="graphviz-pure is not installed")
# docs/ files that are prose, not generated (checked by tests/test_readme.py instead).
# The docs site's own pages (mkdocs.yml), beside the files make samples writes.
WRITTEN_BY_HAND = {"lesson.md", "index.md", "pictures.md", "fence.md", "development.md"}


def generate(tmp_path: Path, name: str) -> dict[str, bytes]:
    docs = tmp_path / name
    docs.mkdir()
    build(ROOT / "samples", docs, PURE[0])
    return {p.name: p.read_bytes() for p in sorted(docs.iterdir())}


@pytest.mark.slow
@needs_pure
def test_docs_are_what_make_samples_generates_and_it_is_deterministic(tmp_path):
    first, again = generate(tmp_path, "a"), generate(tmp_path, "b")
    assert first == again
    # The pages' screenshots (gradviz.tools.screenshots) come from a browser, not from build.
    committed = {
        p.name: p.read_bytes()
        for p in sorted((ROOT / "docs").iterdir())
        if p.is_file() and p.name not in WRITTEN_BY_HAND and p.suffix != ".png"
    }
    assert first == committed, "docs/ is stale: run `make samples`"
    for name in ("hand", "sigmoid_neuron", "tanh_neuron", "used_twice", "detach"):
        ET.fromstring(first[f"{name}.svg"])  # well-formed
        # drawn as `gradviz draw` draws them: the one-neuron samples are too wide left to
        # right for a docs page, so they go top to bottom
        direction = b"TB" if name.endswith("_neuron") else b"LR"
        assert first[f"{name}.md"].startswith(b"```mermaid\nflowchart " + direction + b"\n")
        assert f"![{name}]({name}.svg)".encode() in first["README.md"]


def test_docs_program_is_graphviz_pure_unless_chosen(monkeypatch):
    monkeypatch.delenv("GRADVIZ_DOT", raising=False)
    if PURE:
        assert docs_program() == PURE[0]
    if shutil.which("dot"):
        monkeypatch.setenv("GRADVIZ_DOT", "system")
        assert docs_program() == DotProgram(shutil.which("dot"), "system")
    monkeypatch.setenv("GRADVIZ_DOT", "none")
    assert docs_program() is None


def test_main_reports_errors_with_a_status(tmp_path, capsys, monkeypatch):
    assert main([str(tmp_path)]) == 2
    assert "no samples/ folder" in capsys.readouterr().err
    (tmp_path / "samples").mkdir()
    (tmp_path / "samples" / "bad.expr").write_text("a.b\n")
    assert main([str(tmp_path)]) == 2
    assert "attribute access" in capsys.readouterr().err
    (tmp_path / "samples" / "bad.expr").write_text("a*b\n")
    monkeypatch.setenv("GRADVIZ_DOT", "none")
    assert main([str(tmp_path)]) == 1
    assert "GRADVIZ_DOT=none switched Graphviz off" in capsys.readouterr().err
