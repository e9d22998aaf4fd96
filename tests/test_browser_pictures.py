"""Pictures as a browser shows them: geometry read from Chromium's layout, with real fonts.

Every sample picture gradviz writes at default options (the diagrams of samples/*.expr as
`make samples` writes them under docs/; each network of samples/*.toml at the level
`draw --model` chooses and at every level; trace frames), as Graphviz SVG inline in a page
and as Mermaid drawn by mermaid.js from tests/mermaid/node_modules, must: keep every text
inside its node's shape, have no two labels overlapping, show the key as one row, fit in
1,600 px, and (network views) have no edge running through a label.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
from browser import NODE_GEOMETRY_JS, inline_svg_page, open_page

from gradviz.drawn import diagram_from_value, network_diagram, trace_frames
from gradviz.expr import parse_program
from gradviz.model import from_result, network_loss_graph
from gradviz.output import render
from gradviz.render.colours import ALL_BANDS, EDGE_KEY, LEGEND_TITLE
from gradviz.render.diagram import Diagram, preferred_rankdir
from gradviz.render.mermaid import MAX_EDGES, to_mermaid
from gradviz.render.network import AUTO_NODE_LIMIT, choose_level
from gradviz.spec import load_spec
from gradviz.tracing import trace
from gradviz.train import train
from tools.samples import docs_program

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
MERMAID_JS = ROOT / "tests" / "mermaid" / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
# The diagrams of samples/*.expr, as `make samples` writes them under docs/.
# and the trained XOR network the README shows.
SAMPLE_SVGS = [
    *sorted(ROOT / "docs" / f"{p.stem}.svg" for p in SAMPLES.glob("*.expr")),
    ROOT / "docs" / "xor-network.svg",
]
SAMPLE_MDS = sorted(ROOT / "docs" / f"{p.stem}.md" for p in SAMPLES.glob("*.expr"))
NETWORKS = sorted(p.stem for p in SAMPLES.glob("*.toml"))
SLACK = 0.5  # px: sub-pixel rounding of glyph boxes
MAX_WIDTH_PX = 1600  # a picture at default options, fitted to an 800 px docs page, reads
EPOCHS = 30  # the layout does not depend on how long a network trained


@dataclasses.dataclass(frozen=True)
class Picture:
    name: str
    diagram: Diagram
    rankdir: str
    default: bool  # drawn as `gradviz draw` draws it with no options
    network: bool  # a network view: no edge may cross a label


def _network_pictures(stem: str) -> list[Picture]:
    spec = load_spec(SAMPLES / f"{stem}.toml")
    short = dataclasses.replace(spec, epochs=min(spec.epochs, EPOCHS))
    model = from_result(train(short, keep_going=True))  # exploding.toml diverges: drawn so
    data = model.dataset()
    graph = network_loss_graph(model, tuple(float(v) for v in data.X[0]), float(data.Y[0]))
    chosen, _ = choose_level(graph)
    pictures = []
    for level in ("scalar", "neuron", "layer"):
        if level == "scalar" and graph.size > AUTO_NODE_LIMIT:
            continue  # thousands of nodes: never drawn so by default, and minutes to lay out
        diagram = network_diagram(graph, level, title=f"{stem}: {level}")
        pictures.append(
            Picture(f"{stem}-{level}", diagram, preferred_rankdir(diagram), level == chosen, True)
        )
    return pictures


def _trace_pictures() -> list[Picture]:
    output = parse_program((SAMPLES / "hand.expr").read_text(encoding="utf-8")).output
    frames = trace_frames(output, trace(output))
    rankdir = preferred_rankdir(frames[-1])  # as `gradviz trace --frames` draws them all
    return [
        Picture(f"hand-frame{i}", frame, rankdir, True, False)
        for i, frame in enumerate(frames)
        if i in (0, len(frames) // 2, len(frames) - 1)
    ]


def _expr_pictures() -> list[Picture]:
    pictures = []
    for path in sorted(SAMPLES.glob("*.expr")):
        output = parse_program(path.read_text(encoding="utf-8")).output
        output.backward()
        diagram = diagram_from_value(output)
        pictures.append(Picture(path.stem, diagram, preferred_rankdir(diagram), True, False))
    return pictures


class Pictures:
    """The pictures by name, made when first asked for: the networks train (briefly), so
    the fast suite, which leaves their tests out, never builds them."""

    def __init__(self) -> None:
        self.found: dict[str, Picture] = {}

    def __contains__(self, name: str) -> bool:
        return self._load(name) is not None

    def __getitem__(self, name: str) -> Picture:
        picture = self._load(name)
        assert picture is not None, name
        return picture

    def _load(self, name: str) -> Picture | None:
        if not self.found:
            self.found.update((p.name, p) for p in _expr_pictures() + _trace_pictures())
        stem = name.rsplit("-", 1)[0]
        if name not in self.found and stem in NETWORKS:
            self.found.update((p.name, p) for p in _network_pictures(stem))
            self.found.setdefault(name, None)  # type: ignore[arg-type]
        return self.found.get(name)


@pytest.fixture(scope="module")
def pictures() -> Pictures:
    return Pictures()


# The networks' pictures train a network each and lay out up to 2,000 edges: slow.
_SLOW = pytest.mark.slow
PICTURE_NAMES = (
    [p.stem for p in sorted(SAMPLES.glob("*.expr"))]
    + ["hand-frame0", "hand-frame3", "hand-frame6"]
    + [
        pytest.param(f"{stem}-{level}", marks=_SLOW)
        for stem in NETWORKS
        for level in ("scalar", "neuron", "layer")
    ]
)


# Which edge runs through which label: points every 2 px along each edge's path, tested
# against every text box shrunk by 1 px (an arrowhead may touch a border, never a glyph).
# Which edge passes through which text: a point of the edge, every 2 px along it, inside
# the text's box (less 1 px). Only the texts that meet the edge's bounding box can hold
# one, so an edge is sampled only when some text is near it, and only those texts are
# tried: the same answer as trying every pair, in a fraction of the time (a deep network's
# neuron view has hundreds of edges and texts; trying all of them took the browser longer
# than Selenium's script timeout on a busy machine).
CROSSINGS_JS = """
function crossings(edges, texts) {
  const found = new Set();
  for (const e of edges) {
    const r = e.path.getBoundingClientRect();
    let near = texts.filter(t => t.x + 1 < r.right && r.left < t.right - 1
      && t.y + 1 < r.bottom && r.top < t.bottom - 1);
    if (!near.length) continue;
    const n = e.path.getTotalLength(), m = e.path.getScreenCTM();
    for (let s = 0; s <= n && near.length; s += 2) {
      const q = e.path.getPointAtLength(s);
      const x = m.a * q.x + m.c * q.y + m.e, y = m.b * q.x + m.d * q.y + m.f;
      near = near.filter(t => {
        const inside = t.x + 1 < x && x < t.right - 1 && t.y + 1 < y && y < t.bottom - 1;
        if (inside) found.add(e.edge + ' through ' + JSON.stringify(t.text));
        return !inside;
      });
    }
  }
  return Array.from(found).sort();
}
"""

# Every text of the picture (node labels, edge labels, cluster titles, the key), the node
# shapes, the key's cells, the edges as points every 2 px along their paths, and the width.
SVG_GEOMETRY_JS = (
    CROSSINGS_JS
    + """
const box = r => ({x: r.x, y: r.y, right: r.x + r.width, bottom: r.y + r.height});
const svg = document.querySelector('svg');
const owner = t => {
  const g = t.closest('g.node, g.edge, g.cluster');
  return g ? g.getAttribute('class') + ':' + (g.querySelector('title') || {}).textContent : 'graph';
};
const texts = Array.from(svg.querySelectorAll('text')).filter(t => t.textContent.trim()).map(
  t => ({text: t.textContent, owner: owner(t), ...box(t.getBoundingClientRect())}));
const edges = Array.from(svg.querySelectorAll('g.edge path')).map(p => (
  {edge: (p.closest('g.edge').querySelector('title') || {}).textContent, path: p}));
return {width: svg.getBoundingClientRect().width, texts, crossings: crossings(edges, texts)};
"""
)


def _overlap(a: dict, b: dict) -> bool:
    return (
        min(a["right"], b["right"]) - max(a["x"], b["x"]) > 1.0
        and min(a["bottom"], b["bottom"]) - max(a["y"], b["y"]) > 1.0
    )


KEY_TEXTS = {LEGEND_TITLE, EDGE_KEY, *(band.text for band in ALL_BANDS)}


def shown(text: str) -> str:
    """A label as typed: Mermaid's no-break space and hyphen (which keep numbers whole)
    read as a space and a minus."""
    return text.replace("\u202f", " ").replace("\u2011", "-").strip()


def check_geometry(name: str, geometry: dict, picture: Picture, crossings: bool = True) -> None:
    """The shared assertions on what the browser laid out (Graphviz or Mermaid)."""
    texts = [{**t, "text": shown(t["text"])} for t in geometry["texts"]]
    assert texts, f"{name}: the browser found no text"
    overlapping = [
        (a["text"], b["text"])
        for i, a in enumerate(texts)
        for b in texts[i + 1 :]
        if a["owner"] != b["owner"] or a["text"] != b["text"]
        if _overlap(a, b)
    ]
    assert not overlapping, f"{name}: labels overlap: {overlapping[:5]}"
    key = [t for t in texts if t["owner"] in ("graph", "key") and t["text"] in KEY_TEXTS]
    if picture.diagram.has_grad:
        assert len(key) >= 2, f"{name}: no key"
        top, bottom = max(t["y"] for t in key), min(t["bottom"] for t in key)
        assert top < bottom, f"{name}: the key is not one row: {[(t['text'], t['y']) for t in key]}"
    if picture.network and crossings:
        assert not geometry["crossings"], f"{name}: edges cross labels: {geometry['crossings'][:5]}"
    if picture.default:
        assert geometry["width"] <= MAX_WIDTH_PX, f"{name}: {geometry['width']:.0f} px wide"


@pytest.mark.parametrize("svg_path", SAMPLE_SVGS, ids=lambda p: p.name)
def test_every_node_text_lies_inside_its_box(browser, tmp_path: Path, svg_path: Path) -> None:
    open_page(browser, inline_svg_page(svg_path.read_text(encoding="utf-8")), tmp_path)
    nodes = browser.execute_script(NODE_GEOMETRY_JS)
    assert nodes, f"{svg_path.name}: the browser found no Graphviz nodes"
    outside = _texts_outside_nodes(nodes)
    assert not outside, f"{svg_path.name}: text outside its node: {outside}"


def _texts_outside_nodes(nodes: list[dict]) -> list[str]:
    return [
        f"{node['title'] or node['id']}: {text['text']!r}"
        for node in nodes
        if node["shape"]
        for text in node["texts"]
        if text["x"] < node["shape"]["x"] - SLACK
        or text["right"] > node["shape"]["right"] + SLACK
        or text["y"] < node["shape"]["y"] - SLACK
        or text["bottom"] > node["shape"]["bottom"] + SLACK
    ]


@pytest.mark.parametrize("name", PICTURE_NAMES)
def test_graphviz_pictures_read_at_docs_width(browser, tmp_path, pictures, name) -> None:
    if name not in pictures:
        pytest.skip(f"{name}: more than {AUTO_NODE_LIMIT} scalars, never drawn so by default")
    picture = pictures[name]
    svg = render(picture.diagram, "svg", rankdir=picture.rankdir, program=docs_program())
    open_page(browser, inline_svg_page(svg.decode("utf-8")), tmp_path)
    outside = _texts_outside_nodes(browser.execute_script(NODE_GEOMETRY_JS))
    assert not outside, f"{name}: text outside its node: {outside[:5]}"
    # walking every edge of the biggest network (deep-relu by neuron: 1.3 MB of SVG) takes
    # about 25 s on a loaded 2-core machine: more than selenium's default 30 s allows then
    browser.set_script_timeout(180)
    try:
        geometry = browser.execute_script(SVG_GEOMETRY_JS)
    finally:
        browser.set_script_timeout(30)
    check_geometry(name, geometry, picture)


# Mermaid: the page loads mermaid.js from node_modules and draws the text; the geometry is
# read the same way (labels are HTML spans inside foreignObject).
MERMAID_PAGE = """<!doctype html><html><head><meta charset="utf-8">
<script src="{script}"></script></head><body><div id="out"></div>
<script>mermaid.initialize({{startOnLoad: false}});</script></body></html>"""

MERMAID_RENDER_JS = """
const done = arguments[1];
document.getElementById('out').innerHTML = '';  // (the page's previous picture, if any)
mermaid.render('picture', arguments[0])
  .then(r => { document.getElementById('out').innerHTML = r.svg; done('ok'); })
  .catch(e => done('error: ' + e));
"""

MERMAID_GEOMETRY_JS = (
    CROSSINGS_JS
    + """
const box = r => ({x: r.x, y: r.y, right: r.x + r.width, bottom: r.y + r.height});
const svg = document.querySelector('#out svg');
const nodes = Array.from(svg.querySelectorAll('g.node')).map(g => {
  const shape = g.querySelector('rect.label-container, rect, circle, polygon, path');
  return {id: g.id, title: g.id, shape: shape ? box(shape.getBoundingClientRect()) : null,
    texts: Array.from(g.querySelectorAll('.nodeLabel')).filter(t => t.textContent.trim()).map(
      t => ({text: t.textContent, ...box(t.getBoundingClientRect())}))};
});
const owner = t => {
  const g = t.closest('g.node, g.edgeLabel, g.cluster');
  if (!g) return 'graph';
  return g.id && g.id.startsWith('flowchart-key_') ? 'key' : (g.getAttribute('class') + ':' + g.id);
};
const texts = Array.from(svg.querySelectorAll('.nodeLabel, .edgeLabel span, .cluster-label span'))
  .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0)
  .map(t => ({text: t.textContent, owner: owner(t), ...box(t.getBoundingClientRect())}));
const edges = Array.from(svg.querySelectorAll('.edgePaths path')).filter(
  p => !(p.getAttribute('class') || '').includes('invisible')
    && getComputedStyle(p).strokeWidth !== '0px').map(p => ({edge: p.id, path: p}));
return {width: svg.viewBox.baseVal.width, nodes, texts, crossings: crossings(edges, texts)};
"""
)


@pytest.fixture(scope="module")
def mermaid_page(tmp_path_factory) -> Path:
    if not MERMAID_JS.is_file():
        pytest.fail(f"{MERMAID_JS} missing: run `make test` (it installs tests/mermaid)")
    page = tmp_path_factory.mktemp("mermaid") / "page.html"
    page.write_text(MERMAID_PAGE.format(script=MERMAID_JS.as_uri()), encoding="utf-8")
    return page


def mermaid_geometry(browser, page: Path, text: str) -> dict:
    """Draw `text` on the Mermaid page and read its geometry. The page is loaded when the
    browser shows another: successive pictures are drawn on one page, each in place of
    the last (loading mermaid.js again for each took more than the drawing)."""
    if browser.current_url != page.as_uri():
        browser.get(page.as_uri())
    result = browser.execute_async_script(MERMAID_RENDER_JS, text)
    assert result == "ok", result
    return browser.execute_script(MERMAID_GEOMETRY_JS)


@pytest.mark.parametrize("name", PICTURE_NAMES)
def test_mermaid_pictures_read_at_docs_width(browser, mermaid_page, pictures, name) -> None:
    if name not in pictures:
        pytest.skip(f"{name}: more than {AUTO_NODE_LIMIT} scalars, never drawn so by default")
    picture = pictures[name]
    if len(picture.diagram.edges) > MAX_EDGES:
        pytest.skip(f"{name}: more edges than Mermaid draws (gradviz says so, writes none)")
    text = to_mermaid(picture.diagram, rankdir=picture.rankdir)
    geometry = mermaid_geometry(browser, mermaid_page, text)
    outside = _texts_outside_nodes(geometry["nodes"])
    assert not outside, f"{name}: text outside its node: {outside[:5]}"
    # Mermaid routes edges itself (dagre, no ports): in a neuron view a weight's edge can
    # pass over another input's box. Only the layer view (a chain) is held to no crossing;
    # the Graphviz pictures above are held to it at every level.
    crossings = picture.diagram.level == "layer"
    check_geometry(name, geometry, picture, crossings=crossings)


@pytest.mark.parametrize("md_path", SAMPLE_MDS, ids=lambda p: p.name)
def test_the_docs_mermaid_keeps_numbers_on_one_line(browser, mermaid_page, md_path) -> None:
    # a label may wrap between fields (at " │ "), never inside `grad 3.505e-14`
    text = md_path.read_text(encoding="utf-8").removeprefix("```mermaid\n").removesuffix("```\n")
    geometry = mermaid_geometry(browser, mermaid_page, text)
    browser.execute_script(
        "document.querySelectorAll('.nodeLabel').forEach(s => {"
        " s.innerHTML = s.textContent.split(' │ ').map(p => '<span class=part>' + p + '</span>')"
        ".join(' │ '); })"
    )
    heights = browser.execute_script(
        "return Array.from(document.querySelectorAll('.part')).map("
        "p => [p.textContent, p.getClientRects().length])"
    )
    assert heights and geometry["texts"]
    broken = [text for text, lines in heights if lines != 1]
    assert not broken, f"{md_path.name}: split across lines: {broken}"
    assert not math.isnan(geometry["width"])
