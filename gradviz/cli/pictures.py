"""The output options of `train` and `inspect` (--boundary, --curves, --report, --save)
and the terminal's boundary map, each of a `gradviz.report.Report`: checks before any
work, then one call each (matplotlib loaded only when a picture file is written)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from gradviz.boundary import require_two_inputs
from gradviz.cli import EVERY_NUMBER, STATUS_MEANINGS
from gradviz.errors import OutputError, quoted, shortened
from gradviz.files import write_atomic
from gradviz.output import format_for, formats, suffix_words, suffixes
from gradviz.render.boundary_map import boundary_map, grid_shape
from gradviz.render.training import training_view
from gradviz.spec import Spec
from gradviz.text import printable

if TYPE_CHECKING:
    from gradviz.report import Report


def spec_inputs(spec: str | None, resolved: Spec) -> list[str | Path]:
    """The files a training run reads (the spec, a CSV), which no picture may overwrite."""
    inputs: list[str | Path] = [spec] if spec is not None and Path(spec).is_file() else []
    if resolved.data_path is not None:
        inputs.append(resolved.data_path)
    return inputs


def check_outputs(
    boundary: str | None, curves: str | None, report: str | None, n_inputs: int | None = None
) -> None:
    """Refuse, before any training, a picture or report path of another format, and
    --boundary for a network without 2 inputs (`n_inputs`, when it is known)."""
    for option, path in (("--boundary", boundary), ("--curves", curves)):
        if path is not None and format_for(path) not in formats("plot"):
            raise OutputError(f"{option} {path}: a picture is written as {suffix_words('plot')}")
    if n_inputs is not None:
        check_boundary(boundary, n_inputs)
    if report is not None and not report.lower().endswith(suffixes("report")):
        raise OutputError(f"--report {report}: a report is written as {suffix_words('report')}")


def check_boundary(path: str | None, n_inputs: int) -> None:
    """--boundary draws the input plane: only for a network with 2 inputs."""
    if path is not None:
        require_two_inputs(n_inputs, where=f"--boundary {path}: ")


def write_pictures(paths: tuple[str | None, str | None], report: Report) -> list[str]:
    """The --boundary and --curves pictures of the report (each when its path is given);
    the paths written."""
    boundary_path, curves_path = paths
    data = report.data
    where = f"on {printable(data.name)}, {data.size} examples" if data is not None else ""
    name = printable(report.title)  # a file name, drawn as text: no control character raw
    written = []
    if boundary_path is not None and (grid := report.boundary()) is not None:
        from gradviz.render.plots import boundary_plot  # lazy: start-up (matplotlib)

        title = f"{name}: decision boundary after {report.epochs_run} epochs"
        picture = boundary_plot(grid, title, where, format_for(boundary_path))
        write_atomic(Path(boundary_path), picture)
        written.append(boundary_path)
    if curves_path is not None:
        from gradviz.render.plots import curves_plot  # lazy: start-up (matplotlib)

        title = f"{name}: loss and accuracy over {report.epochs_run} epochs"
        picture = curves_plot(
            report.loss, report.accuracy, report.every, title, where, format_for(curves_path)
        )
        write_atomic(Path(curves_path), picture)
        written.append(curves_path)
    return written


def print_report(out: Console, report: Report, **view: Any) -> None:
    """The report as the terminal shows it, with the boundary map of a 2-input network:
    coloured half-blocks on a colour terminal, plain characters piped or under NO_COLOR."""
    colour = out.color_system is not None and not out.no_color
    grid = report.boundary(*grid_shape(colour))
    drawn = None if grid is None else boundary_map(grid, colour)
    for part in training_view(
        report, width=out.width, boundary_map=drawn, more=EVERY_NUMBER, **view
    ):
        out.print(part)


def write_report(path: str | None, report: Report) -> list[str]:
    """The report page when a path is given; the paths written (`train --report` and
    `inspect -o` give the same page for the same weights)."""
    if path is None:
        return []
    from gradviz.pages import report_page  # lazy: start-up (numpy, Graphviz)

    page = report_page(report, more=EVERY_NUMBER, statuses=STATUS_MEANINGS)
    write_atomic(Path(path), page.encode("utf-8"))
    return [path]


def check_save_path(save_path: str) -> None:
    """Before training, so that a bad path costs no training time."""
    if Path(save_path).is_dir():
        raise OutputError(
            f"--save {quoted(save_path)}: is a folder; give a file name ending in .json"
        )
    if not save_path.lower().endswith(".json"):
        raise OutputError(
            f"--save {shortened(save_path)}: a model is saved as JSON; "
            "give a file name ending in .json"
        )
    folder = Path(save_path).parent
    if not folder.is_dir():
        raise OutputError(
            f"--save {shortened(save_path)}: no folder {quoted(str(folder))} to write it in"
        )


def note_data_outside(spec: Spec, save_path: Path) -> None:
    """A saved model reads CSV data only inside its own folder: say so when it is not."""
    data = spec.data_path
    if data is None:
        return
    if not data.resolve().is_relative_to(save_path.parent.resolve()):
        click.echo(
            f"note: the data ({data}) is outside the model's folder; a model only reads data "
            f"beside it: give it to inspect and grads with --data {data}",
            err=True,
        )
