"""The matplotlib plots as files: well-formed, the same bytes on every run, 800 px wide at
docs scale, and quiet (no warning on stderr whatever the numbers)."""

from __future__ import annotations

import io
import math
import re
import struct
import warnings
import xml.etree.ElementTree as ET

import pytest
from plot_cases import PICTURE_NAMES, diagonal_network, odd_history, pictures, square_data

from gradviz.boundary import boundary
from gradviz.render import plots

MAX_WIDTH_PX = 1600


def svg_width_px(data: bytes) -> float:
    width = ET.fromstring(data).get("width")
    value, unit = re.fullmatch(r"([\d.]+)(pt|px)?", width).groups()
    return float(value) * (4 / 3 if unit == "pt" else 1)


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_the_cases_are_the_pictures_named(fmt: str) -> None:
    assert sorted(pictures(fmt)) == list(PICTURE_NAMES)


@pytest.mark.parametrize("name", PICTURE_NAMES)
def test_svg_plots_parse_fit_and_keep_their_texts(name: str) -> None:
    data = pictures("svg")[name]
    root = ET.fromstring(data)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert 600 <= svg_width_px(data) <= MAX_WIDTH_PX
    assert b"<dc:date>" not in data  # no date: the bytes do not change with the day


@pytest.mark.parametrize("name", PICTURE_NAMES)
def test_png_plots_are_png_about_800_px_wide(name: str) -> None:
    data = pictures("png")[name]
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", data[16:24])  # IHDR
    assert 700 <= width <= 900 and 250 <= height <= 900, (width, height)


def test_pdf_plot_is_a_pdf() -> None:
    history = odd_history()
    assert plots.grads_plot(history[-1][1], history, fmt="pdf").startswith(b"%PDF-")


@pytest.mark.slow  # every plot drawn twice in each format: 9 s of the fast suite; CI runs it
@pytest.mark.parametrize("fmt", ["svg", "png", "pdf"])
def test_plots_are_byte_stable(fmt: str) -> None:
    history = odd_history()
    b = boundary(diagonal_network(), square_data())
    first = [plots.grads_plot(history[-1][1], history, fmt=fmt), plots.boundary_plot(b, fmt=fmt)]
    again = [plots.grads_plot(history[-1][1], history, fmt=fmt), plots.boundary_plot(b, fmt=fmt)]
    assert first == again


def test_titles_and_names_are_text_not_tex() -> None:
    svg = pictures("svg")["nan-and-zero-grads"]
    # matplotlib writes each string as a comment before its glyph paths
    assert b"<!-- a &lt;chain&gt; &amp; $x$ -->" in svg or b"<!-- a <chain> & $x$ -->" in svg


def test_log_axes_are_labelled_in_unicode_superscripts_not_tex() -> None:
    # the labels matplotlib's log formatter picks (decades; 2, 3, 4, 6 x 10^n within one
    # decade), written as plain text: no mathtext parser is built for a page
    from matplotlib.figure import Figure

    def labels(lo: float, hi: float) -> list[str]:
        figure = Figure()
        ax = figure.subplots()
        ax.set_xscale("log")
        ax.set_xlim(lo, hi)
        plots.unicode_log_labels(ax.xaxis)
        figure.savefig(io.BytesIO(), format="svg")
        shown = [
            (at, label.get_text())
            for minor in (False, True)
            for at, label in zip(
                ax.get_xticks(minor=minor), ax.get_xticklabels(minor=minor), strict=True
            )
            if lo <= at <= hi and label.get_text()
        ]
        return [text for _, text in sorted(shown)]

    assert labels(5e-6, 3e-3) == ["10⁻⁵", "10⁻⁴", "10⁻³"]
    assert labels(2e-3, 8e-3) == ["2×10⁻³", "3×10⁻³", "4×10⁻³", "6×10⁻³"]
    assert labels(5, 2000) == ["10¹", "10²", "10³"]
    for name in ("deep-relu-grads", "circle-curves"):
        svg = pictures("svg")[name]
        assert b"\xe2\x81\xbb" in svg  # ⁻, in the comment matplotlib writes per text
        assert b"mathdefault" not in svg and b"^{" not in svg


def test_heat_map_legend_names_nan_and_zero_cells() -> None:
    svg = pictures("svg")["nan-and-zero-grads"]
    for label in (b"NaN/inf", b"exactly 0", b"epoch", b"darkest = smallest"):
        assert label in svg, label


def test_no_warning_for_nan_loss_nan_outputs_or_a_flat_map() -> None:
    network = diagonal_network(sharpness=0.0)  # output 0.5 everywhere: no contour to draw
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plots.curves_plot([1.0, math.nan, math.inf, 0.5], [0.5, math.nan, 0.0, 1.0])
        plots.boundary_plot(boundary(network, square_data()))
        nan = diagonal_network()
        nan.set_weights([(nan.weights()[0][0], [math.nan])])
        plots.boundary_plot(boundary(nan, square_data()))
        history = odd_history()
        plots.grads_plot(history[-1][1], None)


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="svg, png, pdf"):
        plots.curves_plot([1.0], [1.0], fmt="dot")


def test_a_subtitle_is_the_titles_second_line_and_a_recorded_runs_axis_says_step() -> None:
    """The title and its subtitle on two lines (not joined by the two characters \\n), and
    the heat map's time axis in the history's own unit: a recorded run's steps."""
    from dataclasses import replace

    history = odd_history()
    svg = plots.grads_plot(history[-1][1], history, "a title", "the subtitle", fmt="svg")
    comments = re.findall(rb"<!-- (.*?) -->", svg)
    assert b"a title" in comments and b"the subtitle" in comments
    assert not any(b"\\n" in c for c in comments)
    assert b"epoch" in comments and b"step" not in comments
    steps = [(t, replace(d, unit="step")) for t, d in history]
    comments = re.findall(rb"<!-- (.*?) -->", plots.grads_plot(steps[-1][1], steps, fmt="svg"))
    assert b"step" in comments and b"epoch" not in comments
