"""What `gradviz inspect` shows of a recorded run (`gradviz.run`, e.g. a PyTorch loop
watched by `gradviz.torch.watch`): a summary line, its layers, the logged curves, the
last logged loss, and the layer picture's diagram. Pure: a run in, renderables out.

A run holds statistics, not a network or data: what needs those (predictions, the
decision boundary, one example's loss graph) is left out, and `MISSING` says so."""

from __future__ import annotations

import math

from rich.table import Table
from rich.text import Text

from gradviz.numbers import fmt
from gradviz.render.diagram import Diagram, Edge, Node
from gradviz.render.training import curve_text, percent
from gradviz.run import Run

MISSING = (
    "A recorded run holds the statistics, not the network or its data: no predictions, "
    "decision boundary or example graph."
)


def _shape(run: Run, i: int) -> str:
    shape = run.layers[i].shape
    n_out, rest = shape[0], shape[1:]
    inputs = "×".join(str(n) for n in rest)
    return f"{inputs} → {n_out}"


def run_summary(run: Run) -> Text:
    """`recorded in PyTorch 2.13.0 (Sequential) at step 490 of 500, every 10 steps`."""
    return Text(f"{run.description()}, every {run.every} steps; {len(run.layers)} layers")


def run_layers_table(run: Run) -> Table:
    """Each recorded layer: its name, module, weight shape, and what was read after it."""
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for name in ("layer", "module", "shape", "activation", "read after"):
        table.add_column(name)
    for i, layer in enumerate(run.layers):
        read = layer.activation_module or "(its own output)"
        table.add_row(layer.name, layer.kind, _shape(run, i), layer.activation, read)
    return table


def run_curves(run: Run, width: int) -> Text:
    """The logged loss (and accuracy, when logged) as `inspect` shows a model's curves."""
    loss, accuracy, every = run.curves()
    if not loss:
        return Text("")
    text = curve_text(loss, accuracy, every, width)
    if any(math.isfinite(a) for a in accuracy):
        return text
    return text.split("\n")[0] + Text("\n")


def last_logged(run: Run) -> Text:
    """The last logged loss (and accuracy): the numbers the loop itself reported."""
    points = [
        (step, loss, acc)
        for step, loss, acc in zip(run.curve_steps, run.loss, run.accuracy, strict=True)
        if loss is not None or acc is not None
    ]
    if not points:
        return Text("no loss logged (rec.log(loss=..., accuracy=...) adds the curves)")
    step, loss, accuracy = points[-1]
    parts = [f"loss {fmt(loss)}" if loss is not None else None]
    if accuracy is not None and math.isfinite(accuracy):
        parts.append(f"accuracy {percent(accuracy)}")
    words = ", ".join(p for p in parts if p)
    return Text(f"last logged at step {step}: {words}", style="bold")


def run_diagram(run: Run) -> Diagram:
    """The layer picture: one node per layer coloured by its rms gradient at the latest
    recorded step, with its shape, activation and status."""
    diagnosis = run.diagnosis()
    nodes = [Node(id="inputs", kind="group", label="inputs", role="group")]
    edges = []
    source = "inputs"
    for i, (layer, stats) in enumerate(zip(run.layers, diagnosis.layers, strict=True)):
        rel = fmt(stats.rel) if stats.rel is not None else "—"
        node_id = f"layer{i + 1}"
        nodes.append(
            Node(
                id=node_id,
                kind="group",
                label=layer.name,
                grad=stats.rms,
                detail=f"{layer.kind} {_shape(run, i)}",
                extra_lines=(
                    f"{layer.kind} {_shape(run, i)}, {layer.activation}",
                    f"max {fmt(stats.max_abs)}  rel {rel}",
                    f"status {stats.status}",
                ),
                role="group",
            )
        )
        edges.append(Edge(source, node_id))
        source = node_id
    title = f"one node per layer, coloured by its rms gradient ∂L/∂w at step {run.last_step}"
    return Diagram(nodes=tuple(nodes), edges=tuple(edges), title=title, level="layer")
