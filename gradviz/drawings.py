"""What `gradviz draw --model` draws: one example's loss through a saved model, at the
level asked for (gradviz.render.network draws it)."""

from __future__ import annotations

from collections.abc import Iterable

from gradviz.drawn import network_diagram
from gradviz.errors import OptionWords, keyword
from gradviz.model import LossGraph, data_set_status
from gradviz.numbers import fmt
from gradviz.render.diagram import Diagram
from gradviz.render.network import AUTO_EDGE_LIMIT, LAYER_VIEW, choose_level, neuron_view_size


def model_diagrams(
    graph: LossGraph,
    level: str = "auto",
    grad: bool = True,
    kinds: Iterable[bool] = (False,),
    words: OptionWords = keyword,
) -> dict[bool, tuple[Diagram, str | None]]:
    """The diagram of a saved model's loss graph for Graphviz (False) and Mermaid (True)
    (`auto` collapses big networks: `choose_level`), and a note when it collapsed or the
    neuron view will be a tangle (options named by `words`)."""
    shown = ", ".join(fmt(v) for v in graph.x)
    title = f"{graph.model.spec.name}: loss of input ({shown}), target {fmt(graph.y)}"
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
