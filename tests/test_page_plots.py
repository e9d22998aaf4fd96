"""The report page's plots (gradviz.render.page_plots, drawn without matplotlib): the
numbers they draw, read back out of the SVG through its own axes (tick labels and their
positions) and its rasters (PNG decoded by Pillow), against the model's data computed
here, and colours against matplotlib's own maps; the page never imports matplotlib; and
hostile numbers (NaN, inf, 1.8e308, zeros, one epoch, one layer) give a valid picture.
"""

from __future__ import annotations

import base64
import io
import math
import re
import subprocess
import sys
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from gradviz.boundary import boundary
from gradviz.engine import Value
from gradviz.measure import model_data
from gradviz.model import load_model
from gradviz.numbers import fmt
from gradviz.records import series
from gradviz.render.page_plots import curves_svg, grads_svg
from gradviz.render.svgplot import COLOURMAPS, colour_rgb
from gradviz.stats import diagnose

SVG = "{http://www.w3.org/2000/svg}"
SUPER = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


def plots(page: Path) -> dict[str, ET.Element]:
    """The page's plots by name (curves, boundary, grads), parsed as XML."""
    text = page.read_text(encoding="utf-8")
    found = {}
    for match in re.finditer(
        r'<svg xmlns="http://www.w3.org/2000/svg" class="gvp (\w+)".*?</svg>', text, re.S
    ):
        found[match.group(1)] = ET.fromstring(match.group(0))
    return found


def label_value(label: str) -> float:
    """A tick label as a number: 10⁻³, 2×10⁻¹, 75%, −0.5, 1000."""
    label = label.replace("\u2212", "-")
    if label.endswith("%"):
        return float(label[:-1]) / 100
    if "10" in label and any(c in label for c in "⁰¹²³⁴⁵⁶⁷⁸⁹"):
        mantissa, _, power = label.rpartition("10")
        m = float(mantissa.rstrip("×")) if mantissa else 1.0
        return m * 10.0 ** int(power.translate(SUPER))
    return float(label)


def axis(svg: ET.Element, name: str, log: bool = False):
    """The axis `name` as a function pixel -> value, fitted through every tick (checked to
    lie on one straight line, in log10 for a log axis), and its tick values."""
    group = svg.find(f".//{SVG}g[@data-axis='{name}']")
    assert group is not None, name
    children = list(group)
    lines, texts = children[0::2], children[1::2]
    values = [label_value(t.text or "") for t in texts]
    vertical = lines[0].get("x1") != lines[0].get("x2")  # a left/right axis' ticks are across
    pixels = [float(line.get("y1" if vertical else "x1")) for line in lines]
    ys = [math.log10(v) for v in values] if log else values
    assert len(values) >= 2, (name, values)
    slope, offset = np.polyfit(pixels, ys, 1)
    assert np.allclose(np.polyval([slope, offset], pixels), ys, atol=1e-3 * (max(ys) - min(ys)))

    def value(pixel: float) -> float:
        v = slope * pixel + offset
        return 10.0**v if log else v

    return value, values


def path_points(d: str) -> list[list[tuple[float, float]]]:
    """The runs of a path's points (each M starts one)."""
    runs = []
    for run in d.split("M")[1:]:
        runs.append(
            [tuple(map(float, p.split(","))) for p in re.findall(r"-?[\d.]+,-?[\d.]+", run)]
        )
    return runs


def test_the_curves_draw_each_epochs_loss_and_accuracy(xor_report) -> None:
    model_path, page = xor_report
    loss, accuracy, every = load_model(model_path).curves()
    svg = plots(page)["curves"]
    epoch_of, xticks = axis(svg, "epoch")
    loss_of, lticks = axis(svg, "loss", log=True)
    accuracy_of, aticks = axis(svg, "accuracy")
    assert aticks == [0, 0.25, 0.5, 0.75, 1.0]
    # the log axis spans whole decades around the loss, and is labelled in them
    assert lticks[0] <= min(loss) and lticks[-1] >= max(loss)
    assert lticks[-1] / lticks[0] <= 10 * max(loss) / min(loss) * 10
    assert xticks[-1] == len(loss) * every
    for name, of, values, tol in (
        ("loss", loss_of, loss, 0.01),
        ("accuracy", accuracy_of, accuracy, 0.005),
    ):
        (points,) = path_points(svg.find(f".//{SVG}path[@class='curve {name}']").get("d"))
        assert len(points) == len(values)
        for k, (x, y) in enumerate(points):
            epoch = epoch_of(x)
            i = round(epoch / every) - 1
            assert i == k and abs(epoch - (i + 1) * every) < 0.1
            got = of(y)
            if name == "loss":
                assert math.isclose(got, values[i], rel_tol=tol), (epoch, got, values[i])
            else:
                assert abs(got - values[i]) < tol


def test_the_gradient_bars_and_heat_map_draw_each_layers_rms(deep_report) -> None:
    model_path, page = deep_report
    model = load_model(model_path)
    data = model_data(model)
    now = diagnose(model.layer_samples(data), epoch=model.epochs_run)
    svg = plots(page)["grads"]
    rms_of, _ = axis(svg, "rms", log=True)
    bars = svg.findall(f".//{SVG}rect[@class='bar']")
    assert len(bars) == len(now.layers) == 10
    for bar, layer in zip(bars, now.layers, strict=True):
        end = float(bar.get("x")) + float(bar.get("width"))
        assert math.isclose(rms_of(end), layer.rms, rel_tol=0.01), layer.name
    statuses = [t.text for t in svg.findall(f".//{SVG}text") if "status" in (t.get("class") or "")]
    assert statuses == [f"{fmt(lay.rms, 2)} {lay.status}" for lay in now.layers]
    # the heat map: one cell per layer and recorded epoch, coloured by magma on the log scale
    # its colour bar's labels give
    import matplotlib as mpl

    epochs, names, rows = series(model.snapshots())
    _, cticks = axis(svg, "colour", log=True)
    values = [lay.rms for lay in now.layers] + [v for row in rows for v in row]
    positive = [v for v in values if 0 < v < math.inf]
    lo = 10.0 ** math.floor(math.log10(min(positive)))
    hi = 10.0 ** math.ceil(math.log10(max(positive)))
    assert cticks[0] >= lo and cticks[-1] <= hi
    norm = mpl.colors.LogNorm(lo, hi)
    cells = [
        r
        for r in svg.findall(f".//{SVG}rect")
        if r.get("fill", "").startswith("#") and r.get("height") == "26"
    ]
    assert len(cells) == len(epochs) * len(names)
    columns = sorted({float(c.get("x")) for c in cells})
    layer_rows = sorted({float(c.get("y")) for c in cells})
    assert len(columns) == len(epochs) and len(layer_rows) == len(names)
    for cell in cells:
        v = rows[layer_rows.index(float(cell.get("y")))][columns.index(float(cell.get("x")))]
        want = [round(c * 255) for c in mpl.colormaps["magma"](norm(v))[:3]]
        got = [int(cell.get("fill")[k : k + 2], 16) for k in (1, 3, 5)]
        assert max(abs(a - b) for a, b in zip(got, want, strict=True)) <= 3, (v, got, want)
    # the heat map's epochs are the recorded ones, under their columns
    heat_epoch, _ = axis(svg, "heat-epoch")
    mids = [heat_epoch(c + (columns[1] - columns[0]) / 2) for c in columns[1:-1]]
    assert np.allclose(mids, epochs[1:-1], atol=0.5)


def decode(href: str) -> np.ndarray:
    from PIL import Image

    assert href.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(href.split(",", 1)[1]))) as im:
        assert im.mode == "RGB"
        return np.asarray(im)


def test_the_boundary_map_contour_and_points_are_the_networks(xor_report) -> None:
    import matplotlib as mpl

    model_path, page = xor_report
    model = load_model(model_path)
    network, data = model.network(), model.dataset()
    grid = boundary(network, data)
    svg = plots(page)["boundary"]
    pixels = decode(svg.find(f".//{SVG}image[@class='pixels map']").get("href"))
    assert pixels.shape == (*grid.output.shape, 3)
    norm = mpl.colors.TwoSlopeNorm(vcenter=grid.threshold, vmin=0.0, vmax=1.0)
    want = np.rint(mpl.colormaps["PuOr_r"](norm(grid.output))[..., :3] * 255)
    assert np.abs(pixels[::-1].astype(int) - want).max() <= 3  # the top row is the highest x1
    # the contour's points, read back through the axes, are where the network says 0.5
    x_of, _ = axis(svg, "x0")
    y_of, _ = axis(svg, "x1")
    points = [
        p for run in path_points(svg.find(f".//{SVG}path[@class='contour']").get("d")) for p in run
    ]
    assert len(points) > 50
    xs = np.array([x_of(px) for px, _ in points])
    ys = np.array([y_of(py) for _, py in points])
    built = network.build([Value(xs, label="x0"), Value(ys, label="x1")], Value(np.zeros(len(xs))))
    assert np.abs(built.output.data - grid.threshold).max() < 0.02
    # every example marked by class where it is, ringed where the network gets it wrong
    marks = svg.find(f".//{SVG}g[@class='marks']")
    circles = [
        (x_of(float(c.get("cx"))), y_of(float(c.get("cy")))) for c in marks.findall(f"{SVG}circle")
    ]
    squares = [
        (
            x_of(float(r.get("x")) + float(r.get("width")) / 2),
            y_of(float(r.get("y")) + float(r.get("height")) / 2),
        )
        for r in marks.findall(f"{SVG}rect")
    ]
    positive = [tuple(p) for p, y in zip(data.X.tolist(), data.Y.tolist(), strict=True) if y > 0.5]
    negative = [tuple(p) for p, y in zip(data.X.tolist(), data.Y.tolist(), strict=True) if y <= 0.5]
    assert np.allclose(sorted(circles), sorted(positive), atol=0.01)
    assert np.allclose(sorted(squares), sorted(negative), atol=0.01)
    wrong = svg.find(f".//{SVG}g[@class='wrong']")
    rings = 0 if wrong is None else len(wrong)
    outputs = network.build(
        [Value(data.X[:, 0].copy(), label="x0"), Value(data.X[:, 1].copy(), label="x1")],
        Value(np.zeros(data.size)),
    ).output.data
    assert rings == int(((outputs > 0.5) != (data.Y > 0.5)).sum())
    # one small map per hidden unit: its unit's output on viridis over [0, 1] (sigmoid)
    units = svg.findall(f".//{SVG}image[@class='pixels unit']")
    assert len(units) == len(grid.hidden) == 4
    for image, unit in zip(units, grid.hidden, strict=True):
        want = np.rint(mpl.colormaps["viridis"](unit)[..., :3] * 255)
        assert np.abs(decode(image.get("href"))[::-1].astype(int) - want).max() <= 3


@pytest.mark.parametrize("name", sorted(COLOURMAPS))
def test_the_colour_tables_are_matplotlibs_maps(name: str) -> None:
    import matplotlib as mpl

    cmap = mpl.colormaps[name]  # 256 colours, at t = k / 255
    assert cmap.N == 256
    for t in np.linspace(0, 1, 256).tolist():
        want = [round(c * 255) for c in cmap(t)[:3]]
        assert max(abs(a - b) for a, b in zip(colour_rgb(name, t), want, strict=True)) <= 3, t


def test_the_page_imports_no_matplotlib(xor_report, tmp_path: Path) -> None:
    model_path, _ = xor_report
    code = f"""
import sys
from gradviz.cli import main
sys.argv = ["gradviz", "inspect", {str(model_path)!r}, "-o", {str(tmp_path / "r.html")!r}]
try:
    main()
except SystemExit as exit:
    assert not exit.code, exit.code
print(sorted(m for m in sys.modules if m.split(".")[0] == "matplotlib"))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
    assert (tmp_path / "r.html").read_text(encoding="utf-8").count('class="gvp ') == 3


HOSTILE_LOSS = [math.nan, 1.8e308, math.inf, 0.5, 1e-320, -math.inf, 0.25]


@pytest.mark.parametrize(
    ("loss", "accuracy"),
    [
        (HOSTILE_LOSS, [math.nan] * len(HOSTILE_LOSS)),
        ([1.8e308, 1.7e308], [0.5, 0.5]),
        ([0.7], [1.0]),  # a single epoch
        ([0.0, -3.0, 2.0], [0.0, 1.0, 0.5]),  # not all positive: a linear axis
        ([math.nan, math.nan], [math.nan, math.nan]),
        ([1e-300, 1e-310], [0.5, 0.75]),
    ],
)
def test_hostile_curves_give_a_valid_picture_and_say_so(loss, accuracy) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = curves_svg(loss, accuracy, 3)
    svg = ET.fromstring(text)
    numbers = re.findall(r'(?:x|y|x1|x2|y1|y2|d|width|height)="([^"]*)"', text)
    assert not any(re.search(r"nan|inf", v, re.I) for v in numbers)
    notes = " ".join(t.text or "" for t in svg.iter(f"{SVG}text") if t.get("class") == "note")
    if any(not math.isfinite(v) for v in loss):
        assert "x: NaN/inf loss" in notes
    if 1.8e308 in loss:
        assert "drawn between 1e-200 and 1e+200" in notes or "±1e+200" in notes
    axis(svg, "epoch")  # its ticks lie on one line


def test_hostile_gradients_give_a_valid_picture(tmp_path: Path) -> None:
    """A diverged run (NaN everywhere), and a network of one layer whose gradient is
    exactly zero (a ReLU output layer fed zeros), through the page's plot."""
    from click.testing import CliRunner

    from gradviz.cli import cli

    spec = str(Path(__file__).parents[1] / "samples" / "exploding.toml")
    model = tmp_path / "ex.json"
    args = [
        "train",
        spec,
        "--epochs",
        "20",
        "--every",
        "5",
        "-q",
        "--keep-going",
        "--save",
        str(model),
    ]
    assert CliRunner().invoke(cli, args).exit_code == 0
    m = load_model(model)
    now = diagnose(m.layer_samples(model_data(m)), epoch=m.epochs_run)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = grads_svg(now, m.snapshots(), "t", "s")
    svg = ET.fromstring(text)
    assert all(
        math.isnan(float(b.get("data-rms"))) for b in svg.findall(f".//{SVG}rect[@class='bar']")
    )
    assert "NaN" in " ".join(t.text or "" for t in svg.iter(f"{SVG}text"))
    # one layer, one recorded moment, exactly zero: a dotted stub, and the key says so
    csv = tmp_path / "zeros.csv"
    csv.write_text("a,b,y\n0,0,0\n0,0,0\n", encoding="utf-8")
    zero = tmp_path / "zero.json"
    args = [
        "train",
        "--layers",
        "2,1",
        "--data",
        str(csv),
        "--epochs",
        "1",
        "-q",
        "--save",
        str(zero),
    ]
    args += ["--activation", "relu", "--output-activation", "relu"]
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    m = load_model(zero)
    now = diagnose(m.layer_samples(model_data(m)), epoch=m.epochs_run)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = grads_svg(now, m.snapshots()[-1:], "t", "s")
    svg = ET.fromstring(text)
    (bar,) = svg.findall(f".//{SVG}rect[@class='bar']")
    assert now.layers[0].rms == 0
    assert bar.get("fill").startswith("url(#gvp-dots")
    assert "exactly 0" in [t.text for t in svg.iter(f"{SVG}text")]


def test_inputs_too_wide_for_a_float_get_a_note_not_a_broken_map(tmp_path: Path) -> None:
    """A plane from -1e308 to 1e308 is wider than the largest float: the page says so
    where the map goes, and no coordinate anywhere on it is NaN (matplotlib's version
    failed with 'Axis limits cannot be NaN or Inf')."""
    from click.testing import CliRunner

    from gradviz.cli import cli

    csv = tmp_path / "huge.csv"
    csv.write_text("a,b,y\n1e308,-1e308,0\n-1e308,1e308,1\n0,0,1\n", encoding="utf-8")
    page, model = tmp_path / "huge.html", tmp_path / "huge.json"
    args = ["train", "--layers", "2,3,1", "--data", str(csv), "--epochs", "3", "-q"]
    assert CliRunner().invoke(cli, [*args, "--save", str(model)]).exit_code == 0
    with warnings.catch_warnings():  # (training's overflow warnings are its own)
        warnings.simplefilter("error")
        done = CliRunner().invoke(cli, ["inspect", str(model), "-o", str(page)])
    assert done.exit_code == 0, done.output
    text = page.read_text(encoding="utf-8")
    assert "No decision boundary: the inputs span more than a float can hold" in text
    assert set(plots(page)) == {"curves", "grads"}
    coordinates = re.findall(r'\s(?:c?[xy][12]?|width|height|d)="([^"]*)"', text)
    assert coordinates and not [c for c in coordinates if re.search(r"nan|inf", c, re.I)]


def test_the_plots_need_no_inline_style_and_every_id_on_the_page_is_unique(
    xor_report, deep_report
) -> None:
    """The page's policy allows its own style sheet and none other: the plots carry no
    style attribute or element (their theme colours are classes of report.css), and their
    ids (the hatchings) clash with nothing on the page."""
    hatched = set()
    for _, page in (xor_report, deep_report):
        text = page.read_text(encoding="utf-8")
        for name, svg in plots(page).items():
            assert not [e for e in svg.iter() if "style" in e.attrib], name
            assert svg.find(f".//{SVG}style") is None, name
        ids = re.findall(r'\sid="([^"]*)"', text)
        assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
        used = set(re.findall(r"url\(#([^)]*)\)", text))
        assert used <= set(ids)  # every hatching a bar or cell uses is defined
        hatched |= used
    assert hatched  # (deep-sigmoid's stalled layers are hatched)


def test_a_long_curve_keeps_its_envelope_in_few_points() -> None:
    """50,000 epochs: each pixel column keeps its first, lowest, highest and last point,
    so a one-epoch spike and the lowest loss stay on the picture."""
    n = 50_000
    loss = [1.0 / (1 + i) for i in range(n)]
    loss[31_337] = 5.0  # a spike
    svg = ET.fromstring(curves_svg(loss, [0.5] * n))
    loss_of, _ = axis(svg, "loss", log=True)
    epoch_of, _ = axis(svg, "epoch")
    (points,) = path_points(svg.find(f".//{SVG}path[@class='curve loss']").get("d"))
    assert len(points) <= 4 * 800
    values = [loss_of(y) for _, y in points]
    assert math.isclose(max(values), 5.0, rel_tol=0.01)
    assert math.isclose(min(values), 1.0 / n, rel_tol=0.01)
    top = max(points, key=lambda p: loss_of(p[1]))
    assert abs(epoch_of(top[0]) - 31_338) < 50  # (epoch i + 1 holds loss[i])


def test_a_long_subtitle_is_cut_to_the_plots_width() -> None:
    subtitle = "on " + "a-very-long-data-file-name/" * 20
    svg = ET.fromstring(curves_svg([1.0, 0.5], [0.0, 1.0], 1, "loss and accuracy", subtitle))
    title = next(t for t in svg.iter(f"{SVG}text") if t.get("y") == "18")
    shown = "".join(title.itertext())
    assert shown.startswith("loss and accuracy · on a-very-long") and shown.endswith("…")
    assert len(shown) * 13 * 0.62 <= 800
