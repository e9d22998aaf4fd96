"""The picture options of `train` and `inspect` (--boundary, --curves) and the terminal's
boundary map: checks before any work, then one call each. The drawing is in
gradviz.render.plots (matplotlib, loaded only when a picture is written) and
gradviz.render.boundary_map."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console, RenderableType
from rich.text import Text

from gradviz.boundary import boundary, require_two_inputs
from gradviz.cli.console import text_console
from gradviz.data import Dataset
from gradviz.errors import OutputError
from gradviz.files import write_atomic
from gradviz.nn import Network
from gradviz.output import format_for, refuse_inputs
from gradviz.render.boundary_map import boundary_map, grid_shape
from gradviz.render.training import final_text, gradient_report, summary_text
from gradviz.spec import Spec

if TYPE_CHECKING:
    from gradviz.model import Model
    from gradviz.train import Evaluation

# The page's texts are laid out this wide (the table drops columns as on a terminal so wide).
PAGE_TEXT_WIDTH = 130
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


def _plain(renderables: Sequence[RenderableType], width: int = PAGE_TEXT_WIDTH) -> str:
    """Renderables as the terminal prints them, without colour (the page's texts)."""
    import io  # lazy: start-up

    text = io.StringIO()
    console = text_console(text, width)
    for renderable in renderables:
        console.print(renderable)
    return text.getvalue().rstrip("\n")


def write_report(
    path: str | None, model: Model, data: Dataset, evaluation: Evaluation, title: str
) -> list[str]:
    """The report page (`gradviz.render.report_page`) when a path is given: the summary
    and gradient texts as `inspect` prints them, the pictures drawn here (matplotlib,
    Graphviz), written atomically; the paths written. `train --report` and `inspect -o`
    give the same page for the same weights."""
    if path is None:
        return []
    from dataclasses import replace  # lazy: start-up

    from gradviz.model import network_loss_graph  # lazy: start-up
    from gradviz.output import run_dot  # lazy: start-up (graphviz)
    from gradviz.render.dot import to_dot  # lazy: start-up
    from gradviz.render.html import NUMBER_WIDTH  # lazy: start-up
    from gradviz.render.network import network_diagram  # lazy: start-up
    from gradviz.render.plots import boundary_plot, curves_plot, grads_plot  # lazy: start-up
    from gradviz.render.report_page import (  # lazy: start-up
        ReportParts,
        epoch_diagram,
        epoch_frames,
        report_html,
    )
    from gradviz.stats import diagnose  # lazy: start-up

    outputs = evaluation.outputs

    network = model.network()
    snapshots = model.snapshots()
    where = f"on {data.name}, {data.size} examples"
    epochs = model.epochs_run
    loss, accuracy, every = model.curves()
    notes: dict[str, str] = {}
    curves = curves_plot(loss, accuracy, every, "loss and accuracy", where) if loss else None
    if curves is None:
        notes["curves"] = "No training curves recorded in this model."
    if network.sizes[0] == 2:
        drawn = boundary(network, data, outputs=outputs)
        title_b = f"decision boundary after {epochs} epochs"
        boundary_svg: bytes | None = boundary_plot(drawn, title_b, where)
    else:
        boundary_svg = None
        notes["boundary"] = (
            f"The network has {network.sizes[0]} inputs: the decision boundary is drawn for "
            "2-input networks only."
        )
    samples = model.layer_samples(data)
    diagnosis = diagnose(samples, epoch=epochs)
    grads = grads_plot(diagnosis, snapshots or None, "rms gradient per layer", where)
    graph = network_loss_graph(network, data.X[0].tolist(), float(data.Y[0]))
    diagram = network_diagram(graph, "layer", None)
    key = "one node per layer, coloured by its rms gradient ∂L/∂w at the epoch chosen above"
    diagram = replace(diagram, title=f"{key}; inputs, y and loss: the example shown below")
    layer_names = [layer.name for layer in network.layers]
    diagram = epoch_diagram(diagram, epoch_frames(snapshots, layer_names), data)
    dot_text = to_dot(diagram, rankdir="TB", number_width=NUMBER_WIDTH)
    network_svg = run_dot(dot_text, "svg").decode("utf-8")
    summary = [
        summary_text(model.spec, data),
        final_text(evaluation.loss, evaluation.accuracy, data.size),
    ]
    gradients = [gradient_report(samples, snapshots, epochs, "Gradients per layer")]
    parts = ReportParts(
        title=title,
        summary=_plain(summary),
        gradients=_plain(gradients),
        curves_svg=curves,
        boundary_svg=boundary_svg,
        grads_svg=grads,
        network_svg=network_svg,
        notes=notes,
    )
    page = report_html(parts, network, data, outputs, snapshots, layer_names)
    write_atomic(Path(path), page.encode("utf-8"))
    return [path]
