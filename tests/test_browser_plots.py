"""The matplotlib plots as Chromium lays them out: every text inside the picture, no two
texts overlapping, and no wider than 1,600 px. Text is drawn as glyph paths in a group per
string (`<g id="text_N">`, the string in a comment), so the boxes are the glyphs' own."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import inline_svg_page, open_page
from plot_cases import DOCS, DOCS_PLOTS, PICTURE_NAMES, pictures

SLACK = 0.5  # px: sub-pixel rounding of glyph boxes
MAX_WIDTH_PX = 1600

TEXT_GEOMETRY_JS = """
const box = r => ({x: r.x, y: r.y, right: r.x + r.width, bottom: r.y + r.height,
                   width: r.width, height: r.height});
const svg = document.querySelector('svg');
const label = g => Array.from(g.childNodes).filter(n => n.nodeType === 8)
  .map(n => n.textContent.trim()).join(' ');
return {
  svg: box(svg.getBoundingClientRect()),
  texts: Array.from(document.querySelectorAll('g[id^="text_"]'))
    .map(g => ({id: g.id, text: label(g), ...box(g.getBoundingClientRect())}))
    .filter(t => t.width > 0 && t.height > 0),
};
"""


def svg_cases() -> list[tuple[str, bytes]]:
    cases = [(name, (DOCS / name).read_bytes()) for name in DOCS_PLOTS]
    return cases + sorted(pictures("svg").items())


def overlap(a: dict, b: dict) -> bool:
    return (
        min(a["right"], b["right"]) - max(a["x"], b["x"]) > SLACK
        and min(a["bottom"], b["bottom"]) - max(a["y"], b["y"]) > SLACK
    )


@pytest.fixture(scope="module")
def geometry(browser, tmp_path_factory) -> dict[str, dict]:
    folder: Path = tmp_path_factory.mktemp("plots")
    found = {}
    for name, data in svg_cases():
        open_page(browser, inline_svg_page(data.decode("utf-8")), folder)
        found[name] = browser.execute_script(TEXT_GEOMETRY_JS)
    return found


@pytest.mark.parametrize("name", [*DOCS_PLOTS, *PICTURE_NAMES])
def test_every_text_inside_the_picture_and_none_overlapping(geometry, name: str) -> None:
    svg, texts = geometry[name]["svg"], geometry[name]["texts"]
    assert len(texts) >= 8, f"{name}: the browser found too few texts: {texts}"
    assert 600 <= svg["width"] <= MAX_WIDTH_PX, svg
    outside = [
        t["text"]
        for t in texts
        if t["x"] < svg["x"] - SLACK
        or t["right"] > svg["right"] + SLACK
        or t["y"] < svg["y"] - SLACK
        or t["bottom"] > svg["bottom"] + SLACK
    ]
    assert not outside, f"{name}: text outside the picture: {outside}"
    clashes = [
        (a["text"], b["text"]) for i, a in enumerate(texts) for b in texts[i + 1 :] if overlap(a, b)
    ]
    assert not clashes, f"{name}: overlapping texts: {clashes}"


def test_the_bars_name_every_layer_and_its_status(geometry) -> None:
    texts = [t["text"] for t in geometry["deep-sigmoid-bars"]["texts"]]
    for i in range(1, 11):
        assert f"L{i} sigmoid" in texts
    assert "1.7e-9 vanishing" in texts and "0.057 ok" in texts
