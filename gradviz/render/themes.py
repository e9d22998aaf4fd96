"""Dark mode for gradviz's SVG: the light colours it wrote, switched by CSS variables.

A style sheet inside the SVG paints each colour attribute (`[fill="#542788"]`) with a
variable that takes the light value, or the dark one (`colours.DARK`) when the system
prefers dark (which holds inside `<img>` too, as GitHub shows README images) or the page's
theme says dark (mkdocs-material's slate, furo's and pydata-sphinx-theme's `data-theme`).
The attributes stay, so a program without CSS sees the light picture. Pure and
byte-stable; `id_prefix` namespaces the ids so that many diagrams can share a page.
"""

from __future__ import annotations

import re
from dataclasses import fields
from functools import cache

from gradviz.render.colours import DARK, LIGHT, Palette

SVG_CLASS = "gradviz"


def _roles(palette: Palette) -> dict[str, str]:
    """Every colour a picture uses, by role (the variable's name) in one theme: the
    palette's own (`background` is `bg`, `dim_ink` is `dim-ink`), then the bands'."""
    roles = {
        "bg" if f.name == "background" else f.name.replace("_", "-"): getattr(palette, f.name)
        for f in fields(Palette)
        if f.name not in ("name", "bands")
    }
    for band in palette.bands:
        roles[f"{band.name}-fill"] = band.fill
        roles[f"{band.name}-ink"] = band.ink
        roles[f"{band.name}-line"] = band.line  # NaN's border too: the same red
    return roles


def _by_light(kinds: tuple[str, ...]) -> dict[str, str]:
    """Light colour -> role, for the roles of `kinds` (suffixes or names); a light colour
    named by two roles must mean the same dark colour (tests/test_themes.py checks)."""
    found: dict[str, str] = {}
    for role, colour in _roles(LIGHT).items():
        if role in kinds or role.rsplit("-", 1)[-1] in kinds:
            found.setdefault(colour, role)
    return found


@cache
def fill_roles() -> dict[str, str]:
    """The roles of shapes' fills (node boxes, legend cells, arrowheads)."""
    return _by_light(("surface", "fill", "line", "current", "done", "border"))


@cache
def stroke_roles() -> dict[str, str]:
    """The roles of strokes (outlines, edges)."""
    return _by_light(("border", "line", "cluster", "current", "done", "dim-border"))


@cache
def ink_on_fill() -> dict[str, str]:
    """A fill's light colour -> the role of the text drawn on it (the band's ink)."""
    inks = {LIGHT.surface: "ink"}
    for band in LIGHT.bands:
        inks.setdefault(band.fill, f"{band.name}-ink")
    return inks


def _colour_rules(scope: str) -> list[str]:
    rules = [f"{scope} text{{fill:var(--gv-ink)}}"]
    rules.append(f'{scope} polygon[fill="white"]{{fill:var(--gv-bg)}}')
    for light, role in fill_roles().items():
        rules.append(f'{scope} [fill="{light}"]:not(text){{fill:var(--gv-{role})}}')
    for light, role in stroke_roles().items():
        rules.append(f'{scope} [stroke="{light}"]{{stroke:var(--gv-{role})}}')
    rules.append(f'{scope} [stroke="black"]{{stroke:var(--gv-border)}}')
    # A node's texts follow its box; a legend cell's text follows its fill and its border.
    for light, role in ink_on_fill().items():
        rules.append(
            f'{scope} .node [fill="{light}"]~text,'
            f'{scope} [fill="{light}"]+polygon+text{{fill:var(--gv-{role})}}'
        )
    rules.append(f'{scope} .node text[fill="{LIGHT.dim_ink}"]{{fill:var(--gv-dim-ink)}}')
    return rules


# The themes' own switches (mkdocs-material, furo, pydata-sphinx-theme): (dark, light).
SWITCHES = (
    ('[data-md-color-scheme="slate"]', '[data-md-color-scheme="default"]'),
    ('body[data-theme="dark"]', 'body[data-theme="light"]'),
    ('html[data-theme="dark"]', 'html[data-theme="light"]'),
)


def _switched(scope: str, light: str, dark: str, rules: list[str]) -> str:
    """A style sheet whose variables (`light`, `dark` declarations) follow the system's
    preference and the page theme's switches, then its `rules`."""
    switched_dark = ",".join(f"{dark_switch} {scope}" for dark_switch, _ in SWITCHES)
    switched_light = ",".join(f"{light_switch} {scope}" for _, light_switch in SWITCHES)
    media = f"@media (prefers-color-scheme:dark){{{scope}{{{dark}}}{switched_light}{{{light}}}}}"
    return "".join([f"{scope}{{{light}}}", media, f"{switched_dark}{{{dark}}}", *rules])


@cache
def theme_css() -> str:
    """The style sheet every themed SVG carries (the same for all: many on a page agree)."""
    scope = f"svg.{SVG_CLASS}"
    light, dark = (
        "".join(f"--gv-{role}:{colour};" for role, colour in _roles(palette).items())
        for palette in (LIGHT, DARK)
    )
    return _switched(scope, light, dark, _colour_rules(scope))


_SVG_OPEN = re.compile(r"<svg\b([^>]*)>")


def _opening(svg: str) -> re.Match[str]:
    opening = _SVG_OPEN.search(svg)
    if opening is None:
        raise ValueError("not an SVG document: no <svg> element")
    return opening


_ID = re.compile(r'\bid="([^"]*)"')
_REFERENCE = re.compile(r'(href="#|url\(#)')


def prefix_ids(svg: str, id_prefix: str) -> str:
    """Every id (and every reference to one) with `id_prefix` in front."""
    if not id_prefix:
        return svg
    svg = _ID.sub(lambda m: f'id="{id_prefix}{m.group(1)}"', svg)
    return _REFERENCE.sub(lambda m: m.group(1) + id_prefix, svg)


def themed_svg(svg: str, id_prefix: str = "", extra_css: str = "") -> str:
    """Graphviz's SVG with the theme's style sheet (and `extra_css`, e.g. an animation's)
    and class, its ids namespaced by `id_prefix`."""
    if not re.fullmatch(r"[A-Za-z][\w-]*|", id_prefix):
        raise ValueError(f"id_prefix must be a letter then letters, digits, - or _: {id_prefix!r}")
    opening = _opening(svg)
    attributes = opening.group(1)
    if f'class="{SVG_CLASS}"' not in attributes:
        attributes = f' class="{SVG_CLASS}"' + attributes
    style = f"\n<style>{theme_css()}{extra_css}</style>"
    themed = svg[: opening.start()] + f"<svg{attributes}>" + style + svg[opening.end() :]
    return prefix_ids(themed, id_prefix)


def style_blocks(svg: str) -> list[str]:
    """The text of each `<style>` element, for a page's security policy (their hashes)."""
    return re.findall(r"<style>(.*?)</style>", svg, re.S)


# -- matplotlib's SVG plots ------------------------------------------------------------
# Matplotlib writes colours as inline styles (`style="fill: #ffffff"`), which only an
# `!important` rule overrides; its text is glyph paths in `text_N` groups, black by default.
# In dark mode the page (white patches), the text and the axes (black strokes) and the
# grid turn; the data's own colours (curves, bars, colour maps) stay as drawn.
PLOT_CLASS = "gradviz-plot"
_PLOT_DARK = {
    "page": (LIGHT.background, DARK.background),
    "ink": ("#000000", DARK.ink),
    "grid": ("#dddddd", "#3d444d"),
}


@cache
def plot_css() -> str:
    scope = f"svg.{PLOT_CLASS}"
    light = "".join(f"--gv-plot-{k}:{a};" for k, (a, _) in _PLOT_DARK.items())
    dark = "".join(f"--gv-plot-{k}:{b};" for k, (_, b) in _PLOT_DARK.items())
    rules = [
        f'{scope} [style*="fill: #ffffff"]{{fill:var(--gv-plot-page)!important}}',
        f'{scope} [style*="stroke: #000000"]{{stroke:var(--gv-plot-ink)!important}}',
        f'{scope} [style*="fill: #000000"]{{fill:var(--gv-plot-ink)!important}}',
        f'{scope} [style*="stroke: #dddddd"]{{stroke:var(--gv-plot-grid)!important}}',
        f'{scope} g[id^="text_"]{{fill:var(--gv-plot-ink)}}',
    ]
    return _switched(scope, light, dark, rules)


def themed_plot(svg: str) -> str:
    """Matplotlib's SVG with the dark-mode style sheet for plots and its class."""
    opening = _opening(svg)
    tag = f'<svg class="{PLOT_CLASS}"{opening.group(1)}>\n <style>{plot_css()}</style>'
    return svg[: opening.start()] + tag + svg[opening.end() :]
