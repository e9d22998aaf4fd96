"""Pictures as a browser shows them: geometry read from Chromium's layout, with real fonts."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import NODE_GEOMETRY_JS, inline_svg_page, open_page

ROOT = Path(__file__).resolve().parent.parent
# The diagrams of samples/*.expr, as `make samples` writes them under docs/.
SAMPLE_SVGS = sorted(ROOT / "docs" / f"{p.stem}.svg" for p in (ROOT / "samples").glob("*.expr"))
SLACK = 0.5  # px: sub-pixel rounding of glyph boxes


@pytest.mark.parametrize("svg_path", SAMPLE_SVGS, ids=lambda p: p.name)
def test_every_node_text_lies_inside_its_box(browser, tmp_path: Path, svg_path: Path) -> None:
    open_page(browser, inline_svg_page(svg_path.read_text(encoding="utf-8")), tmp_path)
    nodes = browser.execute_script(NODE_GEOMETRY_JS)
    assert nodes, f"{svg_path.name}: the browser found no Graphviz nodes"
    outside = [
        f"{node['title']}: {text['text']!r}"
        for node in nodes
        if node["shape"]
        for text in node["texts"]
        if text["x"] < node["shape"]["x"] - SLACK
        or text["right"] > node["shape"]["right"] + SLACK
        or text["y"] < node["shape"]["y"] - SLACK
        or text["bottom"] > node["shape"]["bottom"] + SLACK
    ]
    assert not outside, f"{svg_path.name}: text outside its node: {outside}"
