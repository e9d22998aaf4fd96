"""The picture options of `train` and `inspect` (--boundary, --curves) and the terminal's
boundary map: checks before any work, then one call each. The drawing is in
gradviz.render.plots (matplotlib, loaded only when a picture is written) and
gradviz.render.boundary_map."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from gradviz.boundary import boundary, require_two_inputs
from gradviz.cli import EVERY_NUMBER, STATUS_MEANINGS
from gradviz.data import Dataset
from gradviz.errors import OutputError
from gradviz.files import write_atomic
from gradviz.nn import Network
from gradviz.output import format_for, refuse_inputs
from gradviz.render.boundary_map import boundary_map, grid_shape
from gradviz.spec import Spec

if TYPE_CHECKING:
    from gradviz.model import Model
    from gradviz.train import Evaluation

PICTURE_FORMATS = ("svg", "png", "pdf")


def spec_inputs(spec: str | None, resolved: Spec) -> list[str | Path]:
    """The files a training run reads (the spec, a CSV), which no picture may overwrite."""
    inputs: list[str | Path] = [spec] if spec is not None and Path(spec).is_file() else []
    if resolved.data.path is not None:
        inputs.append(Path(resolved.base_dir or "") / resolved.data.path)
    return inputs


def check_picture(path: str | None, option: str, inputs: Sequence[str | Path]) -> None:
    """Refuse, before any training, a picture path of another format or one that names
    an input file (it would be overwritten)."""
    if path is None:
        return
    if format_for(path) not in PICTURE_FORMATS:
        raise OutputError(f"{option} {path}: a picture is written as .svg, .png or .pdf")
    refuse_inputs([path], inputs)


def check_boundary(path: str | None, n_inputs: int) -> None:
    """--boundary draws the input plane: only for a network with 2 inputs."""
    if path is not None:
        require_two_inputs(n_inputs, where=f"--boundary {path}: ")


def write_pictures(
    paths: tuple[str | None, str | None],
    network: Network,
    data: Dataset,
    outputs: Sequence[float],
    loss: Sequence[float],
    accuracy: Sequence[float],
    every: int,
    name: str,
    epochs: int,
) -> list[str]:
    """The --boundary and --curves pictures (each when its path is given); the paths
    written. matplotlib is loaded here, only when one is asked for."""
    boundary_path, curves_path = paths
    where = f"on {data.name}, {data.size} examples"
    written = []
    if boundary_path is not None:
        from gradviz.render.plots import boundary_plot  # lazy: start-up (matplotlib)

        title = f"{name}: decision boundary after {epochs} epochs"
        picture = boundary_plot(
            boundary(network, data, outputs=outputs), title, where, format_for(boundary_path)
        )
        write_atomic(Path(boundary_path), picture)
        written.append(boundary_path)
    if curves_path is not None:
        from gradviz.render.plots import curves_plot  # lazy: start-up (matplotlib)

        title = f"{name}: loss and accuracy over {epochs} epochs"
        picture = curves_plot(loss, accuracy, every, title, where, format_for(curves_path))
        write_atomic(Path(curves_path), picture)
        written.append(curves_path)
    return written


def print_boundary_map(
    console: Console, network: Network, data: Dataset, outputs: Sequence[float]
) -> None:
    """The terminal's boundary map, for a network with 2 inputs only: coloured half-blocks
    on a colour terminal, plain characters when piped or under NO_COLOR."""
    if network.sizes[0] != 2:
        return
    colour = console.color_system is not None and not console.no_color
    console.print()
    console.print(Text("Decision boundary (output over the input plane)", style="bold"))
    grid = boundary(network, data, *grid_shape(colour), outputs=outputs)
    console.print(boundary_map(grid, colour))


def check_report(path: str | None, option: str, inputs: Sequence[str | Path]) -> None:
    """Refuse, before any work, a report path that is not .html or names an input."""
    if path is None:
        return
    if not path.lower().endswith((".html", ".htm")):
        raise OutputError(f"{option} {path}: a report is written as .html")
    refuse_inputs([path], inputs)


def write_report(
    path: str | None, model: Model, data: Dataset, evaluation: Evaluation, title: str
) -> list[str]:
    """The report page (`gradviz.output.report_page`) when a path is given, written
    atomically; the paths written. `train --report` and `inspect -o` give the same page for
    the same weights."""
    if path is None:
        return []
    from gradviz.output import report_page  # lazy: start-up (matplotlib, Graphviz)

    page = report_page(model, data, evaluation, title, more=EVERY_NUMBER, statuses=STATUS_MEANINGS)
    write_atomic(Path(path), page.encode("utf-8"))
    return [path]


def write_curves(
    path: str, loss: Sequence[float], accuracy: Sequence[float], every: int, name: str, where: str
) -> list[str]:
    """The --curves picture of a recorded run (no network, no data: only its curves)."""
    from gradviz.render.plots import curves_plot  # lazy: start-up (matplotlib)

    picture = curves_plot(
        loss, accuracy, every, f"{name}: loss and accuracy", where, format_for(path)
    )
    write_atomic(Path(path), picture)
    return [path]
