"""The one colour scale: readable text on every fill, vanishing gradients the most visible,
and every band still told apart with a colour-vision deficiency.

Contrast is WCAG 2.x's formula; colour-vision deficiencies are simulated with the matrices
of Machado, Oliveira and Fernandes (2009, severity 1.0) on linear RGB, and differences are
CIE76 ΔE in CIELAB (D65): all computed here from the published constants, not by gradviz.
"""

from __future__ import annotations

import itertools
import json

import pytest

from gradviz.render import colours
from gradviz.render.colours import ALL_BANDS, BAD_BAND, BANDS, band_for, scale_as_data

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


@pytest.mark.parametrize("band", ALL_BANDS, ids=lambda b: b.name)
def test_text_on_every_fill_is_readable(band):
    assert contrast(band.ink, band.fill) >= 4.5, band


@pytest.mark.parametrize("band", ALL_BANDS, ids=lambda b: b.name)
def test_edge_colours_show_on_a_white_page(band):
    # WCAG's 3:1 for graphics; the exact 0 is dashed as well
    assert contrast(band.line, "#ffffff") >= 3.0, band


@pytest.mark.parametrize("vision", ["normal", *MACHADO])
def test_every_band_stays_distinct_with_colour_vision_deficiencies(vision):
    matrix = MACHADO.get(vision, NORMAL)
    fills = [b.fill for b in ALL_BANDS]
    closest = min(
        (delta_e(a.fill, b.fill, matrix), a.name, b.name)
        for a, b in itertools.combinations(ALL_BANDS, 2)
    )
    assert closest[0] >= 8, f"{vision}: {closest}"  # about what a reader tells apart at a glance
    assert len(set(fills)) == len(fills)


@pytest.mark.parametrize("vision", ["normal", "deuteranopia", "protanopia"])
def test_vanishing_gradients_stand_out_most(vision):
    # (with tritanopia, rare, ≥ 100 comes out a little further from white than < 1e-6;
    # every band still differs from every other, as the test above shows)
    # against the white page, < 1e-6 is further away than any other finite non-zero band
    matrix = MACHADO.get(vision, NORMAL)
    vanishing = delta_e(BANDS[1].fill, "#ffffff", matrix)
    assert all(vanishing > delta_e(b.fill, "#ffffff", matrix) for b in BANDS[2:])
    # and in lightness alone (grey-scale print): darker than every band but nan/inf
    lightness = lab(simulate(BANDS[1].fill, matrix))[0]
    assert all(lightness < lab(simulate(b.fill, matrix))[0] for b in BANDS[2:])


def test_zero_and_nan_are_unmistakable():
    zero = BANDS[0]
    assert zero.dashed and not any(b.dashed for b in ALL_BANDS if b is not zero)
    assert zero.fill == "#ffffff"
    assert BAD_BAND.border_width > max(b.border_width for b in BANDS)
    assert BAD_BAND.fill == "#000000" and colours.BAD_MARK == "‼"


def test_bands_follow_the_log_scale():
    assert band_for(None) is None
    assert band_for(0.0).name == "g0"
    assert band_for(1e-9).name == "g1" and band_for(1e-6).name == "g2"
    assert band_for(0.5).name == "g4" and band_for(100.0).name == "g6"
    assert band_for(float("nan")) is BAD_BAND and band_for(float("inf")) is BAD_BAND
    assert band_for(1.0, finite=False) is BAD_BAND


def test_the_scale_is_plain_data_for_html_pages():
    data = json.loads(json.dumps(scale_as_data()))
    assert [b["name"] for b in data["bands"]] == [b.name for b in ALL_BANDS]
    assert data["bands"][1]["fill"] == BANDS[1].fill and data["edges"][0] == 1e-6
