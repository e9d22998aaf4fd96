"""`make samples` (tools.samples): docs/ is exactly what the tool generates, and
generating twice gives the same bytes."""

from __future__ import annotations

import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gradviz.layout import DotProgram, dot_programs
from tools.samples import TORCH_FOLDER, build, docs_program, main, torch_available

ROOT = Path(__file__).resolve().parent.parent
PURE = [p for p in dot_programs() if p.kind == "pure"]
needs_pure = pytest.mark.skipif(not PURE, reason="graphviz-pure is not installed")
# docs/ files that are prose, not generated (checked by tests/test_readme.py instead).
# The docs site's own pages (mkdocs.yml) and files, beside the files make samples writes:
# its pages, its style sheet and Mermaid (copied by make docs), and samples/ (a link).
WRITTEN_BY_HAND = {"lesson.md", "trace/README.md", "index.md", "pictures.md", "fence.md"}
WRITTEN_BY_HAND |= {"development.md"}
SITE_FOLDERS = ("manual/", "assets/", "samples/")
# tools.screenshots: the pictures, and its record of what each was taken of
SCREENSHOTS = {"html-draw.png", "html-trace.png", "report-xor.png", "screenshots.json"}


def files_under(docs: Path) -> dict[str, bytes]:
    """Every file under `docs` (sub-folders too) by its path there."""
    return {
        p.relative_to(docs).as_posix(): p.read_bytes()
        for p in sorted(docs.rglob("*"))
        if p.is_file()
    }


def generate(tmp_path: Path, name: str) -> dict[str, bytes]:
    docs = tmp_path / name
    docs.mkdir()
    build(ROOT / "samples", docs, PURE[0])
    return files_under(docs)


@pytest.mark.slow
@needs_pure
def test_docs_are_what_make_samples_generates_and_it_is_deterministic(tmp_path):
    first, again = generate(tmp_path, "a"), generate(tmp_path, "b")
    assert first == again
    # Every file under docs/ but the prose (the trace frames in docs/trace/ too); the
    # pages' screenshots come from a browser (the test below).
    committed = {
        name: data
        for name, data in files_under(ROOT / "docs").items()
        if name not in WRITTEN_BY_HAND
        and name not in SCREENSHOTS
        and not name.startswith(SITE_FOLDERS)
        # without torch, make samples leaves the PyTorch pictures as they are
        and (torch_available() or not name.startswith(f"{TORCH_FOLDER}/"))
    }
    stale = sorted(
        name for name in first.keys() | committed.keys() if first.get(name) != committed.get(name)
    )
    assert not stale, f"docs/ is stale, run `make samples`: {stale}"
    assert {"trace/step-01.svg", "trace/step-07.svg", "backward.svg"} <= first.keys()
    for name in ("hand", "sigmoid_neuron", "tanh_neuron", "used_twice", "detach"):
        ET.fromstring(first[f"{name}.svg"])  # well-formed
        # drawn as `gradviz draw` draws them: the one-neuron samples are too wide left to
        # right for a docs page, so they go top to bottom
        direction = b"TB" if name.endswith("_neuron") else b"LR"
        assert first[f"{name}.md"].startswith(b"```mermaid\nflowchart " + direction + b"\n")
        assert f"![{name}]({name}.svg)".encode() in first["README.md"]


@needs_pure
def test_docs_program_is_graphviz_pure_unless_chosen(monkeypatch, tmp_path):
    # a `dot` of our own first on PATH: the choice is tested with or without Graphviz
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("GRADVIZ_DOT", raising=False)
    assert docs_program() == PURE[0]  # even with a system `dot` on PATH
    monkeypatch.setenv("GRADVIZ_DOT", "system")
    assert docs_program() == DotProgram(str(fake), "system")
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


@needs_pure
def test_the_screenshots_are_of_the_pages_make_samples_writes(tmp_path):
    # Chromium's PNG bytes differ between machines (docs/html-draw.png was "stale" on a
    # fresh clone elsewhere): what is compared is what each picture was taken of, exactly,
    # as docs/screenshots.json records it beside the picture's own hash
    import hashlib

    from PIL import Image

    from tools import screenshots
    from tools.samples import live_pages

    docs = tmp_path / "docs"
    docs.mkdir()
    live_pages(ROOT / "samples" / "hand.expr", docs, PURE[0])
    report = screenshots.report_page(ROOT, tmp_path)
    record = screenshots.read_record(ROOT / "docs")
    assert sorted(record) == sorted(screenshots.SHOTS) == sorted(SCREENSHOTS - {"screenshots.json"})
    for name, (page, _) in screenshots.SHOTS.items():
        fresh = (report if page.startswith("report-") else docs / page).read_bytes()
        assert record[name]["inputs"] == screenshots.shot_inputs(name, fresh), (
            f"docs/{name} is stale (its page changed): run `make samples`"
        )
        picture = (ROOT / "docs" / name).read_bytes()
        assert record[name]["png"] == hashlib.sha256(picture).hexdigest(), (
            f"docs/{name} is not the picture recorded: run `make samples`"
        )
        assert Image.open(ROOT / "docs" / name).size[0] == screenshots.WIDTH


def test_the_inputs_of_a_screenshot_are_its_page_scripts_and_window():
    from tools import screenshots

    page = b"<!doctype html><p>hi</p>"
    one = screenshots.shot_inputs("html-draw.png", page)
    assert one == screenshots.shot_inputs("html-draw.png", page)
    assert one != screenshots.shot_inputs("html-draw.png", page + b" ")
    assert one != screenshots.shot_inputs("html-trace.png", page)  # other scripts


@pytest.mark.slow
@needs_pure
def test_make_samples_retakes_only_the_screenshots_whose_page_changed(tmp_path, browser):
    # `make samples` on a fresh clone: nothing changed, no picture rewritten (it churned
    # docs/html-draw.png); a page changed: its picture, and only it, taken again
    import hashlib

    from tools import screenshots

    root = tmp_path / "root"
    docs = root / "docs"
    docs.mkdir(parents=True)
    (root / "samples").symlink_to(ROOT / "samples")
    build(ROOT / "samples", docs, PURE[0])
    for name in SCREENSHOTS:
        shutil.copy2(ROOT / "docs" / name, docs / name)
    before = {name: (docs / name).stat().st_mtime_ns for name in SCREENSHOTS}
    assert screenshots.main([str(root)]) == 0
    assert {name: (docs / name).stat().st_mtime_ns for name in SCREENSHOTS} == before
    with (docs / "hand.html").open("ab") as page:
        page.write(b"<!-- changed -->\n")
    assert screenshots.main([str(root)]) == 0
    changed = {n for n in SCREENSHOTS if (docs / n).stat().st_mtime_ns != before[n]}
    assert changed == {"html-draw.png", "screenshots.json"}
    record = screenshots.read_record(docs)
    taken = (docs / "html-draw.png").read_bytes()
    assert taken.startswith(b"\x89PNG") and record["html-draw.png"]["png"] == (
        hashlib.sha256(taken).hexdigest()
    )
    page = (docs / "hand.html").read_bytes()
    assert record["html-draw.png"]["inputs"] == screenshots.shot_inputs("html-draw.png", page)
    assert record["html-trace.png"] == screenshots.read_record(ROOT / "docs")["html-trace.png"]
