"""A small plotting kit for the report page, written as text: scales and their ticks,
colour maps, PNG rasters and SVG elements. Not matplotlib: importing its figure and SVG
writer alone takes about a second, and a page should take well under one (issue 23).

Inline in the page: colours that carry meaning are attributes, what follows the theme
(text, axes, grid) a class that report.css paints, and no `style` attribute, so the page's
Content-Security-Policy needs no 'unsafe-inline'. Colour maps are matplotlib's, sampled at
41 points and interpolated (within 3/255 of its own tables; tests/test_page_plots.py).
"""

from __future__ import annotations

import base64
import html
import math
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gradviz.render.plot_looks import power_label
from gradviz.text import printable

# matplotlib's maps at 41 evenly spaced points (every 0.025: PuOr's own anchors among
# them), as rrggbb.
_TABLES = {
    "magma": (
        "00000402020d06051a0d0a29140e361d11472512552f11633b0f7045107751127c5a167e641a806e1e81"
        "7822818326818c2981962c80a1307eab337cb73779c03a76ca3e72d5446dde4968e75263ed5a5ff2645c"
        "f7705cf97b5dfc8961fd9467fe9f6dfeac76feb77efec488fecf92fdda9cfde7a9fcf2b4fcfdbf"
    ),
    "viridis": (
        "440154460a5d471365481c6e482475472d7b463480443b844144873e4a893b528b38598c355f8d31668e"
        "2f6c8e2c728e2a788e277e8e25848e238a8d21918c1f968b1e9c891fa28722a88428ae802fb47c38b977"
        "44bf7050c46a5ec9626ccd5a7ad1518bd6469bd93caddc30bddf26cde11ddfe318efe51cfde725"
    ),
    "PuOr_r": (
        "2d004b370a5a40146a4a1d795427885f3a916a4d9a7560a38073ac8c81b6998fbfa69dc9b2abd2bcb7d8"
        "c5c3dfcfcee5d8daebe0e1eee8e9f1eff0f4f7f7f7f9f1e7fbecd6fce6c6fee0b6fed6a1fecc8cfdc278"
        "fdb863f6aa4fee9d3ce79028e08214d57710ca6d0dbe620ab35806a651069949078c42087f3b08"
    ),
}


def hex_rgb(colour: str) -> tuple[int, int, int]:
    """`rrggbb` (or `#rrggbb`) as 0-255 channels."""
    digits = colour.lstrip("#")
    return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)


COLOURMAPS = {
    name: tuple(hex_rgb(text[i : i + 6]) for i in range(0, len(text), 6))
    for name, text in _TABLES.items()
}


def colour_rgb(name: str, t: float) -> tuple[int, int, int]:
    """The map's colour at `t` in [0, 1] (clipped), as 0-255 channels."""
    table = COLOURMAPS[name]
    t = min(max(t, 0.0), 1.0) * (len(table) - 1)
    i = min(int(t), len(table) - 2)
    f = t - i
    a, b = table[i], table[i + 1]
    return tuple(round(a[k] + (b[k] - a[k]) * f) for k in range(3))  # type: ignore[return-value]


def colour_array(name: str, t: np.ndarray) -> np.ndarray:
    """The map's colours at every `t` (clipped to [0, 1]; NaN gives the map's start, for
    the caller to paint over), as a uint8 array of shape t.shape + (3,)."""
    table = np.asarray(COLOURMAPS[name], dtype=np.float64)
    anchors = np.linspace(0.0, 1.0, len(table))
    t = np.clip(np.nan_to_num(t, nan=0.0), 0.0, 1.0)
    channels = [np.interp(t, anchors, table[:, k]) for k in range(3)]
    return np.rint(np.stack(channels, axis=-1)).astype(np.uint8)


def png_url(rgb: np.ndarray) -> str:
    """An 8-bit RGB PNG of `rgb` (height x width x 3, uint8, top row first) as a data: URL;
    every row filtered as the difference to the row above (PNG's "Up"), which smooth maps
    compress well."""
    height, width, _ = rgb.shape
    pixels = np.ascontiguousarray(rgb, dtype=np.uint8)
    up = pixels.copy()
    up[1:] -= pixels[:-1]  # uint8: wraps modulo 256, as the filter is defined
    rows = np.concatenate([np.full((height, 1), 2, np.uint8), up.reshape(height, width * 3)], 1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
        + chunk(b"IEND", b"")
    )
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


# -- scales and ticks ----------------------------------------------------------------------


@dataclass(frozen=True)
class Scale:
    """Data values lo…hi onto pixels start…end, linearly or by their logarithm."""

    lo: float
    hi: float
    start: float
    end: float
    log: bool = False

    def __call__(self, value: float) -> float:
        if self.log:
            a, b, v = math.log10(self.lo), math.log10(self.hi), math.log10(value)
        else:
            a, b, v = self.lo, self.hi, value
        t = (v - a) / (b - a) if b != a else 0.5
        return self.start + t * (self.end - self.start)


def nice_step(span: float, count: int) -> float:
    """1, 2 or 5 times a power of ten, about span / count."""
    raw = span / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 5.0, 10.0):
        if m * power >= raw * 0.999:
            return m * power
    return 10.0 * power


def linear_ticks(lo: float, hi: float, count: int = 6, integer: bool = False) -> list[float]:
    """Round values from lo to hi, at most about `count` + 1 of them."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    step = nice_step(hi - lo, count)
    if integer:
        step = max(1.0, round(step))
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    return [k * step for k in range(first, last + 1)]


def decades(lo: float, hi: float) -> tuple[float, float]:
    """The whole decades around positive lo…hi: (10^floor, 10^ceil), at least one apart."""
    a = math.floor(math.log10(lo))
    b = max(math.ceil(math.log10(hi)), a + 1)
    return 10.0**a, 10.0**b


def log_ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """Powers of ten from lo to hi; past `most` of them, those whose exponent is a multiple
    of a round stride (1, 2, 5, 10, 20…)."""
    a, b = math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9)
    for power in range(400):
        for m in (1, 2, 5):
            stride = m * 10**power
            ticks = [10.0**k for k in range(a, b + 1) if k % stride == 0]
            if len(ticks) <= most:
                return ticks
    return []


def value_axis(
    finite: Sequence[float], log: bool, start: float, end: float
) -> tuple[Scale, list[float]]:
    """An axis around the values onto pixels start…end, and its ticks: on a log scale whole
    decades, ticked at powers of ten (or 1, 2 and 5 times them within two decades); else
    round steps, one either side when all values are equal."""
    if log:
        lo, hi = decades(min(finite), max(finite))
        if math.log10(hi / lo) > 2:
            return Scale(lo, hi, start, end, log=True), log_ticks(lo, hi)
        a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        ticks = [m * 10.0**k for k in range(a, b + 1) for m in (1, 2, 5)]
        within = [t for t in ticks if lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9)]
        return Scale(lo, hi, start, end, log=True), within
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    if hi <= lo:
        lo, hi = lo - 1.0, hi + 1.0
    step = nice_step(hi - lo, 5)
    lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
    return Scale(lo, hi, start, end), linear_ticks(lo, hi, 5)


def tick_labels(scale: Scale, ticks: Sequence[float]) -> list[str]:
    """The ticks' texts: 10⁻³ on a log scale, else as many decimals as the step needs and a
    true minus sign."""
    if scale.log:
        return [power_label(t) for t in ticks]
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    labels = []
    for value in ticks:
        value = 0.0 if abs(value) < step * 1e-6 else value
        large_or_tiny = abs(value) >= 1e6 or (value and abs(value) < 1e-4)
        label = f"{value:.3g}" if large_or_tiny else f"{value:.{decimals}f}"
        labels.append(label.replace("-", "\u2212"))
    return labels


# -- SVG text -----------------------------------------------------------------------------


def esc(text: str) -> str:
    """User or number text as SVG character data or an attribute value."""
    return html.escape(printable(text), quote=True)


def num(x: float) -> str:
    """A coordinate: one decimal, no trailing .0."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


CHAR_WIDTH = 0.62  # of the font size: a generous mean advance of DejaVu/Liberation Sans


def text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR_WIDTH


def text(
    x: float,
    y: float,
    content: str,
    size: float = 12,
    anchor: str = "start",
    cls: str = "",
    rotate: bool = False,
    extra: str = "",
) -> str:
    """A text element; `rotate`: reading upwards, centred on (x, y)."""
    attrs = f'x="{num(x)}" y="{num(y)}" font-size="{size:g}"'
    if anchor != "start":
        attrs += f' text-anchor="{anchor}"'
    if rotate:
        attrs += f' transform="rotate(-90 {num(x)} {num(y)})"'
    if cls:
        attrs += f' class="{cls}"'
    return f"<text {attrs}{extra}>{esc(content)}</text>"


def line(x1: float, y1: float, x2: float, y2: float, cls: str = "axis", extra: str = "") -> str:
    return (
        f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" class="{cls}"{extra}/>'
    )


def rect(x: float, y: float, w: float, h: float, fill: str, extra: str = "") -> str:
    return (
        f'<rect x="{num(x)}" y="{num(y)}" width="{num(max(w, 0.0))}" height="{num(max(h, 0.0))}" '
        f'fill="{fill}"{extra}/>'
    )


def circle(x: float, y: float, r: float, extra: str = "") -> str:
    return f'<circle cx="{num(x)}" cy="{num(y)}" r="{r:g}"{extra}/>'


def frame(x: float, y: float, w: float, h: float) -> str:
    """An outline in the theme's axis colour."""
    return f'<rect x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}" class="frame"/>'


def image(x: float, y: float, w: float, h: float, rgb: np.ndarray, cls: str = "pixels") -> str:
    """A raster of `rgb` (rows x columns x 3, top row first) stretched onto the box."""
    return (
        f'<image x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}" '
        f'preserveAspectRatio="none" class="{cls}" href="{png_url(rgb)}"/>'
    )


def bottom_axis(
    name: str,
    scale: Scale,
    y: float,
    ticks: Sequence[float],
    labels: Sequence[str] | None = None,
    size: float = 12,
    spine: bool = True,
) -> list[str]:
    """The axis line along y, a tick and its label under it at each tick (by default
    `tick_labels`'), in a group named by `data-axis`."""
    marks = []
    for t, label in zip(ticks, labels or tick_labels(scale, ticks), strict=True):
        x = scale(t)
        marks.append(line(x, y, x, y + 4))
        marks.append(text(x, y + 5 + size, label, size, "middle", "tick"))
    group = f'<g data-axis="{esc(name)}">{"".join(marks)}</g>'
    return [line(scale.start, y, scale.end, y), group] if spine else [group]


def side_axis(
    name: str,
    scale: Scale,
    x: float,
    ticks: Sequence[float],
    labels: Sequence[str] | None = None,
    size: float = 12,
    side: int = -1,
) -> list[str]:
    """As `bottom_axis`, left of x with the axis line (side -1) or right of it (+1: a
    colour bar's scale)."""
    marks = []
    for t, label in zip(ticks, labels or tick_labels(scale, ticks), strict=True):
        y = scale(t)
        marks.append(line(min(x, x + 4 * side), y, max(x, x + 4 * side), y))
        anchor = "end" if side < 0 else "start"
        marks.append(text(x + 6 * side, y + size * 0.35, label, size, anchor, "tick"))
    group = f'<g data-axis="{esc(name)}">{"".join(marks)}</g>'
    return [line(x, scale.start, x, scale.end), group] if side < 0 else [group]


def grid_lines(positions: Sequence[float], start: float, end: float, vertical: bool) -> list[str]:
    if vertical:
        return [line(p, start, p, end, "grid") for p in positions]
    return [line(start, p, end, p, "grid") for p in positions]


def colour_bar(name: str, x: float, y: float, w: float, h: float, vertical: bool = True) -> str:
    """A strip of the map from its start to its end: upwards when `vertical`, else to the
    right; a raster of 128 cells, framed."""
    t = np.linspace(0.0, 1.0, 128)
    rgb = colour_array(name, t[::-1][:, None] if vertical else t[None, :])
    return image(x, y, w, h, rgb, "pixels bar") + frame(x, y, w, h)


def svg(width: float, height: float, label: str, body: Sequence[str], cls: str) -> str:
    """The plot's root element: scales with the page up to its natural width."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="gvp {cls}" viewBox="0 0 {num(width)} '
        f'{num(height)}" width="{num(width)}" height="{num(height)}" role="img" '
        f'aria-label="{esc(label)}"><title>{esc(label)}</title>{"".join(body)}</svg>'
    )
