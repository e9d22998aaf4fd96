"""What `gradviz draw --model` draws: one example's loss through a saved model, read from
its file, at the level asked for (gradviz.render.network draws it)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from gradviz.drawn import network_diagram
from gradviz.errors import InputError, OptionWords, keyword
from gradviz.model import data_set_status, load_model, network_loss_graph, parse_input
from gradviz.numbers import fmt
from gradviz.render.diagram import Diagram
from gradviz.render.network import AUTO_EDGE_LIMIT, LAYER_VIEW, choose_level, neuron_view_size


def model_diagrams(
    path: Path | str,
    input_text: str | None,
    target: float | None = None,
    level: str = "auto",
    grad: bool = True,
    kinds: Iterable[bool] = (False,),
    words: OptionWords = keyword,
) -> dict[bool, tuple[Diagram, str | None]]:
    """The diagram of one example's loss for Graphviz (False) and Mermaid (True), from one
    loss graph (`auto` collapses big networks: `choose_level`), and a note when it
    collapsed or the neuron view will be a tangle (options named by `words`)."""
    model = load_model(path)
    if input_text is None:
        raise InputError(
            "{model} needs {input}: the example to draw, e.g. {input} 0,1",
            options=["model", "input"],
        )
    x = parse_input(input_text, model.spec.layers[0])
    graph = network_loss_graph(model, x, target)
    shown = ", ".join(fmt(v) for v in graph.x)
    title = f"{model.spec.name}: loss of input ({shown}), target {fmt(graph.y)}"
    edges = neuron_view_size(graph.network)[1]
    drawings: dict[bool, tuple[Diagram, str | None]] = {}
    for mermaid in kinds:
        chosen, note = choose_level(graph, level, mermaid=mermaid, words=words)
        if chosen == "neuron" and edges > AUTO_EDGE_LIMIT and note is None:
            note = (
                f"the neuron view has {edges:,} edges (a weight each): expect a tangle; "
                f"{words(LAYER_VIEW)} shows the gradient layer by layer"
            )
        statuses = data_set_status(graph) if chosen == "layer" and grad else None
        drawings[mermaid] = (network_diagram(graph, chosen, title, grad, statuses), note)
    return drawings
