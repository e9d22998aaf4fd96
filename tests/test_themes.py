"""Dark mode in the SVG: every colour Graphviz writes is switched by the style sheet, the
output is byte-stable, ids are namespaced; and in Chromium the colours follow the system
and the docs themes' switches (mkdocs-material, furo, pydata-sphinx-theme), on inline SVG,
on the SVG opened as a document (as `<img>` shows it), and on the live page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser import open_page

from gradviz.drawn import diagram_from_value, trace_frames
from gradviz.expr import parse_program
from gradviz.output import render, to_svg
from gradviz.render.colours import DARK, LIGHT
from gradviz.render.themes import (
    SVG_CLASS,
    fill_roles,
    ink_on_fill,
    prefix_ids,
    stroke_roles,
    theme_css,
    themed_svg,
)
from gradviz.tracing import trace

HAND = "e = a*b; d = e + c; L = d*f"
HAND_VALUES = {"a": 2.0, "b": -3.0, "c": 10.0, "f": -2.0}
# every band: 0, < 1e-6 … ≥ 100, and nan
EVERY_BAND = (
    "z = 0*q; s = sigmoid(sigmoid(sigmoid(sigmoid(w*x)))); t = tanh(9*u); "
    "L = s + z + t*1e-4 + 300*v + 0.5*m + log(n - 1)"
)
EVERY_BAND_VALUES = {"q": 1.0, "w": 40.0, "x": 1.0, "u": 0.2, "v": 1.0, "m": 1.0, "n": 1.0}


def diagram(text: str, values: dict[str, float]):
    out = parse_program(text, values).output
    out.backward()
    return diagram_from_value(out)


def frames():
    out = parse_program(HAND, HAND_VALUES).output
    out.backward()
    return trace_frames(out, trace(out))


@pytest.fixture(scope="module")
def svgs() -> dict[str, str]:
    found = {
        "hand": render(diagram(HAND, HAND_VALUES), "svg").decode(),
        "bands": render(diagram(EVERY_BAND, EVERY_BAND_VALUES), "svg").decode(),
    }
    for i, frame in enumerate(frames()[:3]):
        found[f"frame{i}"] = render(frame, "svg").decode()
    return found


COLOUR = re.compile(r'\b(fill|stroke)="([^"]*)"')
UNPAINTED = {"none", "transparent"}


@pytest.mark.parametrize("name", ["hand", "bands", "frame0", "frame1", "frame2"])
def test_every_colour_written_is_switched(svgs, name):
    fills, strokes = fill_roles(), stroke_roles()
    svg = svgs[name]
    for tag, attributes in re.findall(r"<(\w+)\b([^>]*)>", svg):
        for kind, colour in COLOUR.findall(attributes):
            if colour in UNPAINTED or tag == "text":
                continue  # text takes the ink of the fill it sits on (below)
            known = fills if kind == "fill" else strokes
            assert colour in known or colour in ("white", "black"), (name, tag, kind, colour)
    # the fills that text sits on all have an ink
    for colour in re.findall(r'<(?:polygon|ellipse|path)[^>]*fill="(#[0-9a-f]{6})"', svg):
        assert colour in fills


def test_the_bands_sample_shows_every_band(svgs):
    for band in LIGHT.bands:
        assert f'fill="{band.fill}"' in svgs["bands"], band.name


def test_every_light_colour_has_one_dark_colour():
    roles_light = dict(_roles(LIGHT))
    roles_dark = _roles(DARK)
    assert roles_light.keys() == roles_dark.keys()
    for table in (fill_roles(), stroke_roles(), ink_on_fill()):
        meaning: dict[str, str] = {}
        for light in roles_light.values():
            if light in table:
                dark = roles_dark[table[light]]
                # any role with this light colour in this table paints the same dark one
                assert meaning.setdefault(light, dark) == dark
    # text sits on a band's fill: its dark ink is that band's dark ink
    for light_band, dark_band in zip(LIGHT.bands, DARK.bands, strict=True):
        assert roles_dark[ink_on_fill()[light_band.fill]] == dark_band.ink


def _roles(palette):
    from gradviz.render.themes import _roles as roles

    return roles(palette)


def test_byte_stable_and_the_attributes_stay_light(svgs):
    again = render(diagram(HAND, HAND_VALUES), "svg").decode()
    assert again == svgs["hand"]
    assert svgs["hand"].count("<style>") == 1 and f'<svg class="{SVG_CLASS}"' in svgs["hand"]
    # a program without CSS sees the light picture: the attributes are Graphviz's
    assert 'fill="#fdb863"' in svgs["hand"]
    assert theme_css() in svgs["hand"]


def test_png_stays_light():
    png = render(diagram(HAND, HAND_VALUES), "png")
    assert png.startswith(b"\x89PNG") and b"prefers-color-scheme" not in png


def test_id_prefix_namespaces_every_id_and_reference(svgs):
    svg = to_svg(parse_program(HAND, HAND_VALUES).output, id_prefix="gv3-")
    ids = re.findall(r'\bid="([^"]*)"', svg)
    assert ids and all(i.startswith("gv3-") for i in ids)
    assert len(ids) == len(set(ids))
    for ref in re.findall(r'(?:href="#|url\(#)([^")]*)', prefix_ids('<a href="#x"/>', "p-")):
        assert ref == "p-x"
    other = to_svg(parse_program(HAND, HAND_VALUES).output, id_prefix="gv4-")
    assert not set(ids) & set(re.findall(r'\bid="([^"]*)"', other))


@pytest.mark.parametrize("bad", ["1gv", "gv 3", 'gv"', "<x"])
def test_a_bad_prefix_is_refused(bad):
    with pytest.raises(ValueError, match="id_prefix"):
        themed_svg("<svg></svg>", bad)


# -- in the browser ---------------------------------------------------------------------

SHAPE_FILL_JS = """
const pick = title => Array.from(document.querySelectorAll('g.node'))
  .find(g => g.querySelector('title').textContent === title);
const look = title => {
  const g = pick(title), shape = g.querySelector('polygon, ellipse');
  return {fill: getComputedStyle(shape).fill, stroke: getComputedStyle(shape).stroke,
          ink: getComputedStyle(g.querySelector('text')).fill};
};
const bg = document.querySelector('svg g.graph > polygon');
return {a: look('n0'), op: look('n2_op'), bg: getComputedStyle(bg).fill};
"""


def rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def scheme(driver, value: str) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": value}]},
    )


def themed_page(svg: str, html_attrs: str = "", body_attrs: str = "") -> str:
    return (
        f"<!doctype html><html {html_attrs}><head><meta charset='utf-8'></head>"
        f"<body {body_attrs}>{svg[svg.find('<svg') :]}</body></html>"
    )


def expected(palette, band: str) -> dict:
    (look,) = [b for b in palette.bands if b.name == band]
    return {"fill": rgb(look.fill), "ink": rgb(look.ink)}


CASES = [  # (system scheme, <html> attributes, <body> attributes, the theme shown)
    ("light", "", "", "light"),
    ("dark", "", "", "dark"),
    ("light", "", 'data-md-color-scheme="slate"', "dark"),  # mkdocs-material
    ("dark", "", 'data-md-color-scheme="default"', "light"),
    ("light", "", 'data-theme="dark"', "dark"),  # furo
    ("dark", "", 'data-theme="light"', "light"),
    ("dark", "", 'data-theme="auto"', "dark"),  # furo's auto follows the system
    ("light", "", 'data-theme="auto"', "light"),
    ("light", 'data-theme="dark"', "", "dark"),  # pydata-sphinx-theme
    ("dark", 'data-theme="light"', "", "light"),
]


@pytest.mark.parametrize(("system", "html_attrs", "body_attrs", "shown"), CASES)
def test_inline_svg_follows_the_system_and_the_theme(
    browser, tmp_path, svgs, system, html_attrs, body_attrs, shown
):
    scheme(browser, system)
    try:
        open_page(browser, themed_page(svgs["hand"], html_attrs, body_attrs), tmp_path)
        looks = browser.execute_script(SHAPE_FILL_JS)
    finally:
        scheme(browser, "")
    palette = DARK if shown == "dark" else LIGHT
    assert {k: looks["a"][k] for k in ("fill", "ink")} == expected(palette, "g5")  # grad 6
    assert looks["op"]["fill"] == rgb(palette.surface)
    assert looks["op"]["ink"] == rgb(palette.ink)
    assert looks["a"]["stroke"] == rgb(palette.border)
    assert looks["bg"] == rgb(palette.background)


def test_the_svg_as_a_document_follows_the_system(browser, tmp_path, svgs):
    # as <img> shows it (GitHub's README images): no page around it, only the media query
    path = tmp_path / "hand.svg"
    path.write_text(svgs["hand"], encoding="utf-8")
    scheme(browser, "dark")
    try:
        browser.get(path.as_uri())
        looks = browser.execute_script(SHAPE_FILL_JS)
    finally:
        scheme(browser, "")
    assert looks["a"]["fill"] == rgb(DARK.bands[5].fill)
    assert looks["bg"] == rgb(DARK.background)


def test_the_live_page_goes_dark_and_its_policy_allows_the_style(browser, tmp_path):
    page = render(diagram(HAND, HAND_VALUES), "html", expression=HAND).decode()
    scheme(browser, "dark")
    try:
        browser.get_log("browser")  # drop earlier messages
        open_page(browser, page, tmp_path)
        looks = browser.execute_script(SHAPE_FILL_JS)
        body = browser.execute_script("return getComputedStyle(document.body).backgroundColor")
        refused = [
            entry["message"]
            for entry in browser.get_log("browser")
            if "Content Security Policy" in entry["message"]
        ]
    finally:
        scheme(browser, "")
    assert refused == []
    assert looks["a"]["fill"] == rgb(DARK.bands[5].fill)
    assert body == rgb(DARK.background)


def test_every_picture_file_carries_the_theme(tmp_path: Path):
    # what `draw -o x.svg` writes (the CLI goes through render)
    from click.testing import CliRunner

    from gradviz.cli import cli

    target = tmp_path / "x.svg"
    args = ["draw", HAND, *(f"{k}={v:g}" for k, v in HAND_VALUES.items()), "-o", str(target)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "prefers-color-scheme:dark" in target.read_text(encoding="utf-8")


PLOT_JS = """
const page = document.querySelector('#patch_1 path');
const text = document.querySelector('g[id^="text_"]');
const spine = document.querySelector('[style*="stroke: #000000"]');
return {page: getComputedStyle(page).fill, text: getComputedStyle(text).fill,
        spine: spine ? getComputedStyle(spine).stroke : null};
"""


@pytest.mark.parametrize("shown", ["light", "dark"])
def test_matplotlib_plots_follow_the_system_too(browser, shown):
    # the plots are matplotlib's SVG (docs/deep-sigmoid-grads.svg, as `grads --plot` writes
    # it): its page, text and axes turn, its data's colours stay
    path = Path(__file__).resolve().parent.parent / "docs" / "deep-sigmoid-grads.svg"
    assert "prefers-color-scheme:dark" in path.read_text(encoding="utf-8")
    scheme(browser, shown)
    try:
        browser.get(path.as_uri())
        looks = browser.execute_script(PLOT_JS)
    finally:
        scheme(browser, "")
    palette = DARK if shown == "dark" else LIGHT
    assert looks["page"] == rgb(palette.background)
    assert looks["text"] == rgb(palette.ink)
    assert looks["spine"] == rgb(palette.ink)
