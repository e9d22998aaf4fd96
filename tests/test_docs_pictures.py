"""The docs' pictures as a reader sees them in a browser window 800 px wide: geometry read
from Chromium's layout (the live pages, the report page, the README's showcase)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from browser import inline_svg_page, open_page

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
WINDOW = 800
MIN_TEXT_PX = 10.0


@pytest.fixture
def narrow(browser) -> Iterator[object]:
    """The session's browser, 800 px wide for the test (then as it was)."""
    size = browser.get_window_size()
    browser.set_window_size(WINDOW, 900)
    try:
        yield browser
    finally:
        browser.set_window_size(size["width"], size["height"])


# The figure holding the graph, the graph's box, and the size its node text is drawn at
# (Graphviz writes font sizes in the viewBox's units: scaled by the drawn width).
GRAPH_JS = """
const figure = document.getElementById('graph'), svg = figure.querySelector('svg');
const box = x => { const r = x.getBoundingClientRect(); return {left: r.left, right: r.right}; };
const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
const sizes = Array.from(svg.querySelectorAll('g.node text'))
  .map(t => parseFloat(t.getAttribute('font-size')) * scale);
return {figure: box(figure), svg: box(svg), scrollLeft: figure.scrollLeft,
        scrollWidth: figure.scrollWidth, clientWidth: figure.clientWidth,
        smallest: Math.min(...sizes)};
"""


@pytest.mark.parametrize("page", ["hand.html", "hand-trace.html"])
def test_the_live_pages_show_the_whole_graph_readably_at_800_px(narrow, page) -> None:
    narrow.get((DOCS / page).as_uri())
    graph = narrow.execute_script(GRAPH_JS)
    # nothing cut: no sideways scrolling, not opened scrolled, the drawing inside its frame
    assert graph["scrollLeft"] == 0
    assert graph["scrollWidth"] <= graph["clientWidth"]
    assert graph["figure"]["left"] <= graph["svg"]["left"]
    assert graph["svg"]["right"] <= graph["figure"]["right"]
    assert graph["smallest"] >= MIN_TEXT_PX, graph


# Every node text's overhang past its node's box (px), and each text block's overflow.
REPORT_JS = """
const over = [];
for (const g of document.querySelectorAll('#graph g.node')) {
  const shape = g.querySelector('polygon, ellipse, path');
  if (!shape) continue;
  const s = shape.getBoundingClientRect();
  for (const t of g.querySelectorAll('text')) {
    const r = t.getBoundingClientRect();
    const out = Math.max(s.left - r.left, r.right - s.right);
    if (out > 0.5) over.push([g.querySelector('title').textContent, t.textContent, out]);
  }
}
const cut = Array.from(document.querySelectorAll('section pre, .scroll'))
  .filter(x => x.scrollWidth > x.clientWidth + 1)
  .map(x => [x.closest('section').id, x.scrollWidth, x.clientWidth]);
return {over: over, cut: cut};
"""

TYPE_INPUT_JS = """
const boxes = document.querySelectorAll('#typed input');
boxes[0].value = '-0.123456'; boxes[1].value = '0.987654';
document.getElementById('show-typed').click();
"""


def test_the_report_page_reads_at_800_px(narrow, xor_report) -> None:
    narrow.get(xor_report[1].as_uri())
    shown = narrow.execute_script(REPORT_JS)
    # the gradient table shows every column it keeps (sat% and status among them)
    assert shown["cut"] == [] and shown["over"] == []
    assert "sat%" in narrow.find_element("id", "gradients").text
    # a typed input has more digits than any listed example: its text stays in its box
    narrow.execute_script(TYPE_INPUT_JS)
    shown = narrow.execute_script(REPORT_JS)
    assert shown["over"] == [], shown["over"]


# The size a docs SVG's node text is drawn at when the page gives the picture 800 px.
SVG_TEXT_JS = """
const svg = document.querySelector('svg');
const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
const sizes = Array.from(svg.querySelectorAll('g.node text'))
  .map(t => parseFloat(t.getAttribute('font-size')) * scale);
return {width: svg.getBoundingClientRect().width, smallest: Math.min(...sizes)};
"""
DOCS_SVGS = sorted(p.stem for p in (ROOT / "samples").glob("*.expr"))


@pytest.mark.parametrize("name", DOCS_SVGS)
def test_the_docs_diagrams_read_in_an_800_px_column(browser, tmp_path, name) -> None:
    from browser import inline_svg_page, open_page

    svg = (DOCS / f"{name}.svg").read_text(encoding="utf-8")
    open_page(browser, inline_svg_page(svg, WINDOW), tmp_path)
    shown = browser.execute_script(SVG_TEXT_JS)
    assert shown["smallest"] >= MIN_TEXT_PX, shown


MERMAID_SHAPES_JS = """
const ops = Array.from(document.querySelectorAll('g.node'))
  .filter(g => /_op-/.test(g.id)).map(g => g.getBoundingClientRect().width);
const dashed = document.querySelectorAll('.edgePaths path.edge-pattern-dotted').length;
return {ops: ops, dashed: dashed};
"""


@pytest.mark.parametrize("name", ["hand", "detach"])
def test_the_docs_mermaid_draws_op_circles_and_the_dashed_detach(browser, tmp_path, name):
    from test_browser_pictures import MERMAID_JS, MERMAID_PAGE, MERMAID_RENDER_JS

    page = tmp_path / "mermaid.html"
    page.write_text(MERMAID_PAGE.format(script=MERMAID_JS.as_uri()), encoding="utf-8")
    text = (DOCS / f"{name}.md").read_text(encoding="utf-8")
    text = text.removeprefix("```mermaid\n").removesuffix("```\n")
    assert "class caption" not in text  # no caption: no class for one
    browser.get(page.as_uri())
    browser.set_script_timeout(30)
    assert browser.execute_async_script(MERMAID_RENDER_JS, text) == "ok"
    shown = browser.execute_script(MERMAID_SHAPES_JS)
    assert shown["ops"] and min(shown["ops"]) >= 30, shown  # `*` was a 13 px dot
    # the edge into detach is dashed (README: "a dashed no grad edge"), no other
    assert shown["dashed"] == (1 if name == "detach" else 0), shown


FRAME_JS = """
const node = Array.from(document.querySelectorAll('g.node'))
  .find(g => g.querySelector('title').textContent === arguments[0]);
const shape = node.querySelector('polygon');
return {stroke: getComputedStyle(shape).stroke, fill: getComputedStyle(shape).fill,
        width: parseFloat(getComputedStyle(shape).strokeWidth)};
"""


def _rgb(text: str) -> str:
    r, g, b = (int(part) for part in text[4:-1].split(","))
    return f"#{r:02x}{g:02x}{b:02x}"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_current_step_stands_out_on_its_node(browser, scheme) -> None:
    # docs/trace/step-05.svg: e (n2) passes its credit; its fill is the orange band, where
    # an orange border vanished
    from test_colours import MACHADO, delta_e

    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
    )
    try:
        browser.get((DOCS / "trace" / "step-05.svg").as_uri())
        look = browser.execute_script(FRAME_JS, "n2")
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    stroke, fill = _rgb(look["stroke"]), _rgb(look["fill"])
    assert look["width"] >= 3
    for vision in (None, "deuteranopia", "protanopia"):
        matrix = MACHADO.get(vision) if vision else ((1, 0, 0), (0, 1, 0), (0, 0, 1))
        # (the orange border on the orange band: 36, and 21 with protanopia)
        assert delta_e(stroke, fill, matrix) >= 60, (scheme, vision, stroke, fill)


# Each credit (`+= 6`) of a trace picture as drawn 800 px wide: its text's box, every
# edge's line (points along it, by the edge's title) and every node's box.
CREDITS_JS = """
const box = r => ({x: r.x, y: r.y, right: r.x + r.width, bottom: r.y + r.height});
const credits = Array.from(document.querySelectorAll('text'))
  .filter(t => t.textContent.startsWith('+= ') && getComputedStyle(t).opacity !== '0')
  .map(t => ({text: t.textContent, ...box(t.getBoundingClientRect())}));
const edges = Array.from(document.querySelectorAll('g.edge')).map(g => {
  const path = g.querySelector('path'), m = path.getScreenCTM(), n = 60;
  const length = path.getTotalLength(), points = [];
  for (let i = 0; i <= n; i++) {
    const p = path.getPointAtLength(length * i / n);
    points.push([m.a * p.x + m.c * p.y + m.e, m.b * p.x + m.d * p.y + m.f]);
  }
  return {title: g.querySelector('title').textContent, points: points};
});
const nodes = Array.from(document.querySelectorAll('g.node'))
  .map(g => g.querySelector('polygon, ellipse'))
  .filter(shape => shape !== null && shape.getAttribute('fill') !== 'none')
  .map(shape => box(shape.getBoundingClientRect()));
return {credits: credits, edges: edges, nodes: nodes};
"""


def _ends(title: str) -> tuple[str, str]:
    """The value and the op an edge joins (an edge drawn through its credit's small node,
    `credit.SOURCE.TARGET.INDEX`, in two halves: either half)."""
    source, target = title.split("->", 1)
    for end in (source, target):
        if end.startswith("credit."):
            _, source, target, _ = end.split(".")
    return source, target


def _gap(box: dict, point: list[float]) -> float:
    """How far a point is from a box (0 inside it)."""
    dx = max(box["x"] - point[0], 0.0, point[0] - box["right"])
    dy = max(box["y"] - point[1], 0.0, point[1] - box["bottom"])
    return (dx * dx + dy * dy) ** 0.5


def _overlaps(a: dict, b: dict) -> bool:
    return (
        a["x"] < b["right"]
        and b["x"] < a["right"]
        and a["y"] < b["bottom"]
        and b["y"] < a["bottom"]
    )


# The hand example's credits in the frames where they are distinct, and the edge each
# travels back along (node ids in graph order: a n0, b n1, the op making e n2_op, d n4,
# f n5, the op making L n6_op): step 5, e = a·b passes 6 to a and -4 to b.
HAND_CREDITS = {
    "step-01.svg": {"+= -2": ("n4", "n6_op"), "+= 4": ("n5", "n6_op")},
    "step-05.svg": {"+= 6": ("n0", "n2_op"), "+= -4": ("n1", "n2_op")},
}


@pytest.mark.parametrize("frame", sorted(HAND_CREDITS))
def test_each_credit_sits_on_its_own_edge(narrow, tmp_path, frame) -> None:
    # docs/trace/: the `+= -4` of step 5 stood in the gap between the two input edges
    svg = (DOCS / "trace" / frame).read_text(encoding="utf-8")
    open_page(narrow, inline_svg_page(svg, WINDOW), tmp_path)
    drawn = narrow.execute_script(CREDITS_JS)
    owners = HAND_CREDITS[frame]
    assert sorted(c["text"] for c in drawn["credits"]) == sorted(owners)
    for credit in drawn["credits"]:
        own = owners[credit["text"]]
        near = {
            edge["title"]: min(_gap(credit, p) for p in edge["points"]) for edge in drawn["edges"]
        }
        mine = min(gap for title, gap in near.items() if _ends(title) == own)
        others = min(gap for title, gap in near.items() if _ends(title) != own)
        # on its own line (within 3 px of it) and clearly apart from every other one
        # on its own line (within 3 px of it) and clearly apart from every other one (the
        # old `+= -4` of step 5: 5 px from a's edge)
        assert mine <= 3 and others >= 12, (frame, credit["text"], mine, others)
        assert not any(_overlaps(credit, node) for node in drawn["nodes"]), credit


def test_the_animation_puts_each_credit_on_one_edge(narrow, tmp_path) -> None:
    # docs/backward.svg as written (reduced motion: the last frame, every credit shown)
    svg = (DOCS / "backward.svg").read_text(encoding="utf-8")
    narrow.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]},
    )
    try:
        open_page(narrow, inline_svg_page(svg, WINDOW), tmp_path)
        drawn = narrow.execute_script(CREDITS_JS)
    finally:
        narrow.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    assert len(drawn["credits"]) == 6  # two inputs for each of the three ops
    for credit in drawn["credits"]:
        near: dict[tuple[str, str], float] = {}
        for edge in drawn["edges"]:
            gap = min(_gap(credit, p) for p in edge["points"])
            ends = _ends(edge["title"])
            near[ends] = min(gap, near.get(ends, gap))
        mine, others = sorted(near.values())[:2]
        assert mine <= 3 and others >= 12, (credit["text"], mine, others)
        assert not any(_overlaps(credit, node) for node in drawn["nodes"]), credit


# -- colours and words a reader must see, in either theme ------------------------------------

WCAG_TEXT = 4.5  # WCAG AA for normal text
SCHEMES = ("light", "dark")


@contextmanager
def scheme(driver, value: str) -> Iterator[None]:
    """The OS's colour scheme as `value` for the browser, then as it was."""
    driver.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": value}]},
    )
    try:
        yield
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


# Every text of the network picture against its node's fill, as drawn (computed colours).
NODE_INK_JS = """
return Array.from(document.querySelectorAll('#graph g.node')).flatMap(g => {
  const shape = g.querySelector('polygon, ellipse, path');
  const fill = getComputedStyle(shape).fill;
  return Array.from(g.querySelectorAll('text')).map(t =>
    [g.querySelector('title').textContent, t.textContent, getComputedStyle(t).fill, fill]);
});
"""
SHOW_EPOCH_JS = """
const e = document.getElementById('epoch'); e.value = String(arguments[0]);
e.dispatchEvent(new Event('input'));
return parseInt(e.max, 10);
"""


def _faint_texts(driver) -> list[tuple[str, str, float]]:
    from test_colours import contrast

    return [
        (node, text, round(contrast(_rgb(ink), _rgb(fill)), 2))
        for node, text, ink, fill in driver.execute_script(NODE_INK_JS)
        if contrast(_rgb(ink), _rgb(fill)) < WCAG_TEXT
    ]


@pytest.mark.parametrize("theme", SCHEMES)
def test_the_report_network_reads_at_every_epoch_in_either_theme(narrow, deep_report, theme):
    # light mode showed the layers' texts white on lavender, and y's "data 0 / grad …"
    # white on light grey (1.8:1): the page set each text's fill, which the SVG's own
    # style sheet read as the nan band's for the texts after it
    with scheme(narrow, theme):
        narrow.get(deep_report[1].as_uri())
        last = narrow.execute_script(SHOW_EPOCH_JS, 0)
        assert last >= 3  # deep-sigmoid's epochs fall through several bands
        for k in range(last + 1):
            narrow.execute_script(SHOW_EPOCH_JS, k)
            assert _faint_texts(narrow) == [], (theme, k)
        # an example shown recolours y by its gradient
        narrow.find_element("css selector", '#examples button[data-i="1"]').click()
        assert _faint_texts(narrow) == [], theme


CONTOUR_JS = """
return Array.from(document.querySelectorAll('#threshold-contour path'))
  .map(p => [getComputedStyle(p).stroke, parseFloat(getComputedStyle(p).strokeWidth)]);
"""


@pytest.mark.parametrize("theme", SCHEMES)
@pytest.mark.parametrize("name", ["xor", "circle"])
def test_the_decision_threshold_shows_on_the_map_in_either_theme(browser, tmp_path, name, theme):
    # dark mode turned the 0.5 contour (black) into the page's light ink, on the map's
    # white middle (the raster stays as it is): 1.1:1, invisible
    import matplotlib
    from test_colours import contrast

    r, g, b, _ = matplotlib.colormaps["PuOr_r"](0.5)  # the boundary map at the threshold
    middle = f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"
    svg = (DOCS / f"{name}-boundary.svg").read_text(encoding="utf-8")
    with scheme(browser, theme):
        open_page(browser, inline_svg_page(svg, WINDOW), tmp_path)
        strokes = browser.execute_script(CONTOUR_JS)
    assert strokes, "no threshold contour drawn"
    # the line itself (its casing is the wider, white one beneath)
    line = min(strokes, key=lambda s: s[1])
    assert contrast(_rgb(line[0]), middle) >= 7, (theme, line)


# The animation at a moment of its loop (every animation paused there): its texts'
# rendered sizes and the captions then visible.
ANIMATION_AT_JS = """
document.getAnimations().forEach(a => { a.pause(); a.currentTime = arguments[0]; });
const svg = document.querySelector('svg');
const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
const texts = Array.from(svg.querySelectorAll('text'));
return {
  smallest: Math.min(...texts.map(t => parseFloat(t.getAttribute('font-size')) * scale)),
  width: svg.getBoundingClientRect().width,
  captions: texts.filter(t => /(^| )gv-c/.test(t.getAttribute('class') || ''))
    .filter(t => getComputedStyle(t).opacity !== '0').map(t => t.textContent),
};
"""


def test_the_readme_animation_reads_in_its_column_and_always_has_a_caption(narrow, tmp_path):
    # docs/backward.svg, 1221 px wide left to right, was shrunk to 800: its credits 7.9 px;
    # and for its first 1.2 s (before step 1) it said nothing
    from gradviz.render.animate import LEAD_CAPTION, LEAD_STEPS, STEP_SECONDS

    svg = (DOCS / "backward.svg").read_text(encoding="utf-8")
    open_page(narrow, inline_svg_page(svg, WINDOW), tmp_path)
    shown = narrow.execute_script(ANIMATION_AT_JS, 0)
    assert shown["width"] <= WINDOW and shown["smallest"] >= MIN_TEXT_PX, shown
    step_ms = 1000 * STEP_SECONDS
    assert shown["captions"] == [LEAD_CAPTION]
    at = narrow.execute_script(ANIMATION_AT_JS, LEAD_STEPS * step_ms - 50)["captions"]
    assert at == [LEAD_CAPTION]
    for step in range(7):  # one caption in each step, its own
        at = narrow.execute_script(ANIMATION_AT_JS, (LEAD_STEPS + step + 0.5) * step_ms)
        assert [c.split(":")[0] for c in at["captions"]] == [f"Step {step + 1}/7"], (step, at)
