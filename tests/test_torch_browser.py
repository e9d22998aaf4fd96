"""The five models' default drawings (`rec.draw()`: the module view) as Chromium shows them
in an 800 px window, light and dark: the picture at most 800 px wide at its natural size,
no page scrolling sideways, and no text under 9 px."""

from __future__ import annotations

import pytest
from browser import inline_svg_page, open_page
from torch_support import require_torch

torch = require_torch()

import gradviz.torch as gt  # noqa: E402
from gradviz.output import render  # noqa: E402
from gradviz.render.diagram import preferred_rankdir  # noqa: E402
from gradviz.torch.examples import MODELS  # noqa: E402
from tools.samples import docs_program  # noqa: E402

PAGE_PX = 800
SMALLEST_TEXT_PX = 9

GEOMETRY_JS = """
const svg = document.querySelector('svg');
const box = svg.getBoundingClientRect();
const scale = box.width / svg.viewBox.baseVal.width;
let smallest = Infinity;
for (const t of svg.querySelectorAll('text')) {
  if (t.getBBox().width === 0) continue;
  smallest = Math.min(smallest, parseFloat(getComputedStyle(t).fontSize) * scale);
}
return [box.width, smallest, document.documentElement.scrollWidth, window.innerWidth];
"""


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", list(MODELS))
def test_the_default_drawing_reads_at_800_px(browser, tmp_path, name: str, scheme: str) -> None:
    net, loss_of = MODELS[name]()
    with gt.record(net) as rec:
        loss_of().backward()
    d = rec.diagram()
    svg = render(d, "svg", rankdir=preferred_rankdir(d), program=docs_program()).decode()
    browser.set_window_size(PAGE_PX, 900)
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
    )
    try:
        open_page(browser, inline_svg_page(svg), tmp_path)
        width, smallest, scrolled, window = browser.execute_script(GEOMETRY_JS)
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        browser.set_window_size(1600, 1200)
    assert width <= PAGE_PX, f"{name}: {width:.0f} px wide"
    assert scrolled <= window, f"{name}: the page scrolls sideways ({scrolled} px)"
    assert smallest >= SMALLEST_TEXT_PX, f"{name}: text at {smallest:.1f} px"


@pytest.mark.slow
@pytest.mark.parametrize("level", ["module", "op"])
@pytest.mark.parametrize("name", list(MODELS))
def test_mermaid_draws_the_five_models(browser, tmp_path, name: str, level: str) -> None:
    """mermaid.js (tests/mermaid) draws each model's Mermaid text: every node, no error."""
    from test_browser_pictures import MERMAID_JS, MERMAID_PAGE, MERMAID_RENDER_JS

    from gradviz.render.mermaid import to_mermaid

    if not MERMAID_JS.is_file():
        pytest.fail(f"{MERMAID_JS} missing: run `make test` (it installs tests/mermaid)")
    net, loss_of = MODELS[name]()
    with gt.record(net) as rec:
        loss_of().backward()
    d = rec.diagram(level=level)
    page = tmp_path / "mermaid.html"
    page.write_text(MERMAID_PAGE.format(script=MERMAID_JS.as_uri()), encoding="utf-8")
    browser.get(page.as_uri())
    assert browser.execute_async_script(MERMAID_RENDER_JS, to_mermaid(d)) == "ok"
    drawn = browser.execute_script("return document.querySelectorAll('#out g.node').length")
    assert drawn >= len(d.nodes)
