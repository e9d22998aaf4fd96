"""The one colour scale: readable text on every fill, vanishing gradients the most visible,
and every band still told apart with a colour-vision deficiency; in light and in dark mode
(the dark scale is checked against its own background by the same rules, mirrored: there
the vanishing band is the lightest).

Contrast is WCAG 2.x's formula; colour-vision deficiencies are simulated with the matrices
of Machado, Oliveira and Fernandes (2009, severity 1.0) on linear RGB, and differences are
CIE76 ΔE in CIELAB (D65): all computed here from the published constants, not by gradviz.
"""

from __future__ import annotations

import itertools

import pytest

from gradviz.render import colours
from gradviz.render.colours import (
    ALL_BANDS,
    BAD_BAND,
    DARK,
    LIGHT,
    PALETTES,
    band_for,
)

MACHADO = {
    "deuteranopia": (
        (0.367322, 0.860646, -0.227968),
        (0.280085, 0.672501, 0.047413),
        (-0.011820, 0.042940, 0.968881),
    ),
    "protanopia": (
        (0.152286, 1.052583, -0.204868),
        (0.114503, 0.786281, 0.099216),
        (-0.003882, -0.048116, 1.051998),
    ),
    "tritanopia": (
        (1.255528, -0.076749, -0.178779),
        (-0.078411, 0.930809, 0.147602),
        (0.004733, 0.691367, 0.303900),
    ),
}
NORMAL = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


def linear(hex_colour: str) -> tuple[float, float, float]:
    """sRGB hex to linear RGB in [0, 1]."""
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    return tuple(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)


def luminance(rgb: tuple[float, float, float]) -> float:
    r, g, b = rgb
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two colours (1 … 21)."""
    la, lb = sorted((luminance(linear(a)), luminance(linear(b))), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def simulate(hex_colour: str, matrix) -> tuple[float, float, float]:
    rgb = linear(hex_colour)
    out = [sum(m * c for m, c in zip(row, rgb, strict=True)) for row in matrix]
    return tuple(min(1.0, max(0.0, c)) for c in out)


def lab(rgb: tuple[float, float, float]) -> tuple[float, float, float]:
    r, g, b = rgb
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def delta_e(a: str, b: str, matrix=NORMAL) -> float:
    la, lb = lab(simulate(a, matrix)), lab(simulate(b, matrix))
    return sum((p - q) ** 2 for p, q in zip(la, lb, strict=True)) ** 0.5


def test_the_formulas_match_known_values():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # WCAG's grey
    assert lab(linear("#ffffff"))[0] == pytest.approx(100, abs=0.01)
    assert delta_e("#ff0000", "#ff0000") == 0
    # deuteranopia: pure red and green become nearly the same colour (ΔE falls from ~86)
    assert (
        delta_e("#ff0000", "#00ff00", MACHADO["deuteranopia"]) < 30 < delta_e("#ff0000", "#00ff00")
    )


THEMES = {palette.name: palette for palette in PALETTES}
# The backgrounds a dark picture meets when it sits inline in a themed page (it paints its
# own, but a line at the edge of the drawing shows against the page): GitHub's dark,
# mkdocs-material's slate, furo's and pydata-sphinx-theme's dark.
DARK_PAGES = ("#0d1117", "#1e2129", "#131416", "#121212")


def bands_of(theme: str) -> list[tuple[str, object]]:
    return [(theme, band) for band in THEMES[theme].bands]


EVERY_BAND = [*bands_of("light"), *bands_of("dark")]


def band_id(case) -> str:
    return case.name if hasattr(case, "name") else str(case)


@pytest.mark.parametrize(("theme", "band"), EVERY_BAND, ids=band_id)
def test_text_on_every_fill_is_readable(theme, band):
    assert contrast(band.ink, band.fill) >= 4.5, band


@pytest.mark.parametrize(("theme", "band"), EVERY_BAND, ids=band_id)
def test_edge_colours_show_on_the_page(theme, band):
    # WCAG's 3:1 for graphics, on the picture's own background; the exact 0 is dashed too
    palette = THEMES[theme]
    pages = (palette.background, *(DARK_PAGES if theme == "dark" else ()))
    for page in pages:
        assert contrast(band.line, page) >= 3.0, (band, page)


@pytest.mark.parametrize("theme", THEMES)
def test_plain_text_and_outlines_read_on_the_background(theme):
    palette = THEMES[theme]
    for ground in (palette.background, palette.surface):
        assert contrast(palette.ink, ground) >= 7.0, ground  # titles, edge labels, node text
        assert contrast(palette.border, ground) >= 3.0, ground  # node outlines, edges
        for state in (palette.current, palette.done):
            assert contrast(state, ground) >= 3.0, (state, ground)
    # the trace's current step shows on every band's fill it outlines (an orange border on
    # the orange bands did not), with the common colour-vision deficiencies too
    for vision in ("normal", "deuteranopia", "protanopia"):
        matrix = MACHADO.get(vision, NORMAL)
        closest = min((delta_e(palette.current, b.fill, matrix), b.name) for b in palette.bands)
        assert closest[0] >= 20, (vision, closest)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("vision", ["normal", *MACHADO])
def test_every_band_stays_distinct_with_colour_vision_deficiencies(theme, vision):
    matrix = MACHADO.get(vision, NORMAL)
    bands = THEMES[theme].bands
    fills = [b.fill for b in bands]
    closest = min(
        (delta_e(a.fill, b.fill, matrix), a.name, b.name)
        for a, b in itertools.combinations(bands, 2)
    )
    assert closest[0] >= 8, f"{vision}: {closest}"  # about what a reader tells apart at a glance
    assert len(set(fills)) == len(fills)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("vision", ["normal", "deuteranopia", "protanopia"])
def test_vanishing_gradients_stand_out_most(theme, vision):
    # (with tritanopia, rare, ≥ 100 comes out a little further from white than < 1e-6 in
    # the light scale; every band still differs from every other, as the test above shows)
    # against the picture's background, < 1e-6 is further away than any other finite
    # non-zero band
    palette = THEMES[theme]
    matrix = MACHADO.get(vision, NORMAL)
    finite = palette.bands[1:7]
    vanishing = delta_e(finite[0].fill, palette.background, matrix)
    assert all(vanishing > delta_e(b.fill, palette.background, matrix) for b in finite[1:])
    # and in lightness alone (grey-scale print): the band furthest from the background in
    # lightness, but for nan/inf (darkest: black in both)
    lightness = lab(simulate(finite[0].fill, matrix))[0]
    others = [lab(simulate(b.fill, matrix))[0] for b in finite[1:]]
    if theme == "light":
        assert all(lightness < other for other in others)
    else:
        assert all(lightness > other for other in others)


@pytest.mark.parametrize("theme", THEMES)
def test_zero_and_nan_are_unmistakable(theme):
    palette = THEMES[theme]
    zero, bad = palette.bands[0], palette.bands[-1]
    assert zero.name == "g0" and bad.name == "bad"
    assert zero.dashed and not any(b.dashed for b in palette.bands if b is not zero)
    assert zero.fill == palette.surface  # the look of a node with nothing to show, dashed
    assert bad.border_width > max(b.border_width for b in palette.bands[:-1])
    assert bad.fill == "#000000" and colours.BAD_MARK == "‼"
    assert bad.border == bad.line  # one red for NaN, on nodes and on edges
    assert contrast(bad.border, bad.fill) >= 3.0 and contrast(bad.border, palette.background) >= 3.0
    # the only fill darker than the dark background is NaN's
    darkest = min(palette.bands, key=lambda b: luminance(linear(b.fill)))
    assert darkest is bad


def test_the_dark_scale_is_the_light_one_band_for_band():
    assert [b.name for b in DARK.bands] == [b.name for b in LIGHT.bands]
    assert [b.text for b in DARK.bands] == [b.text for b in LIGHT.bands]
    assert LIGHT.bands == ALL_BANDS and LIGHT.background == "#ffffff"
    # a colour that names one thing in light names one thing in dark (the SVG's style
    # sheet maps light colours to dark ones: it must be a function)
    pairs = {}
    for light, dark in zip(LIGHT.bands, DARK.bands, strict=True):
        for a, b in ((light.fill, dark.fill), (light.line, dark.line)):
            assert pairs.setdefault(a, b) == b, (a, b)


def test_bands_follow_the_log_scale():
    assert band_for(None) is None
    assert band_for(0.0).name == "g0"
    assert band_for(1e-9).name == "g1" and band_for(1e-6).name == "g2"
    assert band_for(0.5).name == "g4" and band_for(100.0).name == "g6"
    assert band_for(float("nan")) is BAD_BAND and band_for(float("inf")) is BAD_BAND
    assert band_for(1.0, finite=False) is BAD_BAND
