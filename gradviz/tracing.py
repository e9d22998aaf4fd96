"""The backward pass as data: one `Step` per node the credit reaches, in order.

Walking the nodes in reverse topological order, each node holds its complete credit
dL/dnode (every consumer came before it), multiplies it by its op's local derivative for
each input and adds that to the input's credit. `trace` records that walk, as the engine
runs it, so the terminal view, the SVG frames and the tests read the same steps. A step is
made for the output and every node with a path to it free of `detach`.
"""

from __future__ import annotations

import math
from dataclasses import asdict

from gradviz.engine import Constant, Number, Value, backpropagate, topological_order
from gradviz.names import definition, node_names, op_form, operand, output_name, substitute
from gradviz.numbers import fmt, is_array
from gradviz.ops import ACTIVATIONS
from gradviz.records import (
    Contribution,
    ForwardStep,
    LeafGradient,
    Passed,
    Source,
    Step,
    UnitStep,
)

NUDGE = 0.01  # the step size of the plain-words sentences: "raising a by 0.01 …"


# -- the walks ------------------------------------------------------------------


def forward(value: Value) -> list[ForwardStep]:
    """The forward pass as data: every node in topological order with its value."""
    order = topological_order(value)
    names = node_names(order)
    return [ForwardStep(i, v, names[v], definition(v, names), v.data) for i, v in enumerate(order)]


def trace(value: Value) -> list[Step]:
    """The backward pass from `value`, one `Step` per node the credit reaches, in order,
    made from the edges the engine's own pass reports (`.grad` then holds a pass from zero)."""
    order = topological_order(value)
    names = node_names(order)
    edges: dict[Value, list[tuple[int, Value, Number, Number, Number]]] = {}
    sources: dict[Value, list[Source]] = {}

    def on_edge(node: Value, position: int, parent: Value, local: Number, amount: Number) -> None:
        # parent.grad is updated in place for a batch: keep the running total as it is now.
        total = parent.grad.copy() if is_array(parent.grad) else parent.grad
        edges.setdefault(node, []).append((position, parent, local, amount, total))
        sources.setdefault(parent, []).append(Source(node, names[node], position, amount))

    backpropagate(order, on_edge=on_edge)
    totals: dict[Value, tuple[Number, int]] = {}  # each input's credit so far, and from how many
    steps: list[Step] = []
    for node in reversed(order):
        if node is not value and (node not in sources or type(node) is Constant):
            continue  # no credit reaches it (behind a detach), or a constant: nobody nudges it
        op = node.op
        passes = op is None or op.passes_credit
        walked = edges.get(node, [])
        if not passes:  # a detach: its edges are shown, though nothing passes (no edges walked)
            walked = [
                (i, p, d, 0.0, None)
                for i, (p, d) in enumerate(zip(node.parents, node.locals, strict=True))
            ]
        parent_names = [names[p] for p in node.parents]
        contributions: list[Contribution] = []
        for position, parent, local, amount, total in walked:
            if type(parent) is Constant:
                continue  # the engine adds credit to it too, but it has nothing to move
            before, earlier = totals.get(parent, (0.0, 0))
            if passes:
                totals[parent] = (total, earlier + 1)
            formula = op.formulas[position]
            local_text = substitute(formula, *parent_names)
            named = f"∂({op_form(op, *parent_names)})/∂{operand(names[parent])} = {local_text}"
            contributions.append(
                Contribution(
                    parent=parent,
                    parent_name=names[parent],
                    position=position,
                    formula=f"∂({op_form(op)})/∂{'ab'[position]} = {formula}",
                    named_formula=named,
                    local_text=local_text,
                    local=local,
                    amount=amount,
                    before=before,
                    total=total if passes else before,
                    earlier=earlier,
                    passes=passes,
                )
            )
        steps.append(
            Step(
                index=len(steps),
                node=node,
                name=names[node],
                definition=definition(node, names),
                credit=node.grad,
                sources=tuple(sources.get(node, ())),
                contributions=tuple(contributions),
                is_output=node is value,
            )
        )
    return steps


def unreached(value: Value, steps: list[Step]) -> list[Value]:
    """Nodes no credit reaches (every path runs through detach), constants not counted."""
    seen = {s.node for s in steps}
    return [v for v in topological_order(value) if v not in seen and type(v) is not Constant]


# -- in plain words ---------------------------------------------------------------


def sentence(name: str, grad: Number, output: str, *, reached: bool = True) -> str:
    """What a gradient means for a nudge of NUDGE, in one sentence a newcomer can read."""
    if not reached:
        return (
            f"no credit reaches {name}: every path from {name} to {output} runs through "
            f"detach, so its gradient is 0"
        )
    g = float(grad.mean()) if is_array(grad) else float(grad)
    if math.isnan(g):
        return f"the gradient of {name} is nan: {output} is not differentiable here"
    if math.isinf(g):
        direction = "raises" if g > 0 else "lowers"
        return (
            f"the gradient of {name} is {fmt(g)}: {output} is infinitely steep here "
            f"(a tiny raise {direction} it by an unbounded amount)"
        )
    if g == 0:
        return f"nudging {name} leaves {output} unchanged to first order (gradient 0)"
    change = NUDGE * g
    direction = "raises" if change > 0 else "lowers"
    return f"raising {name} by {fmt(NUDGE)} {direction} {output} by about {fmt(abs(change))}"


def leaf_gradients(value: Value, steps: list[Step]) -> list[LeafGradient]:
    """Every labelled leaf (never a `Constant`), in graph order, with its gradient and a
    sentence."""
    order = topological_order(value)
    out = output_name(value, order)
    by_node = {s.node: s for s in steps}
    names = node_names(order)
    rows = []
    for v in order:
        if v.op is not None or not v.label or type(v) is Constant:
            continue
        step = by_node.get(v)
        reached = step is not None
        grad = step.credit if reached else 0.0
        words = sentence(names[v], grad, out, reached=reached)
        rows.append(LeafGradient(v, names[v], v.data, grad, reached, words))
    return rows


# -- a network, one neuron (or one layer) at a time --------------------------------------


def network_trace(graph, level: str = "neuron") -> list[UnitStep]:
    """One example's backward pass through a network (a `gradviz.model.LossGraph`, run
    backward), by neuron or by layer: the loss, each layer from the output back, the inputs.
    The credits are the engine's grads; a unit passes dL/dz · w back to each input."""
    from gradviz.nn import LOSS_FUNCTIONS  # lazy: start-up (a network is loaded by now)

    if level not in ("neuron", "layer"):
        raise ValueError(f"level must be neuron or layer, not {level!r}")
    built, network = graph.built, graph.network
    layers = network.layers
    unit_names: list[list[str]] = [[f"x{k}" for k in range(len(built.inputs))]]
    unit_names += [[n.name for n in layer.neurons] for layer in layers]
    out_name = unit_names[-1][0]
    # Who sends credit to each unit: the loss, or the next layer's neurons (dL/dz' · w'),
    # filled as the walk goes back (a layer's units hear from the layer after it first).
    received: dict[str, list[tuple[str, Number]]] = {out_name: [("loss", built.output.grad)]}
    steps: list[UnitStep] = [
        UnitStep(
            index=0,
            kind="loss",
            name="loss",
            ids=("loss",),
            activation=None,
            credit=(1.0,),
            sources=(),
            passed=(Passed(out_name, None, built.output.grad, built.output.grad, 0),),
            formula=LOSS_FUNCTIONS[network.loss].derivative,
        )
    ]
    for i in range(len(layers) - 1, -1, -1):
        layer = layers[i]
        inputs = unit_names[i]
        units = list(zip(layer.neurons, built.pre[i], built.act[i], strict=True))
        groups = [[u] for u in units] if level == "neuron" else [units]
        totals: dict[str, tuple[Number, int]] = {}  # each input's credit so far, from how many
        for group in groups:
            passed: list[Passed] = []
            for neuron, z, _a in group:
                for to, w in zip(inputs, neuron.weights, strict=True):
                    amount = z.grad * w.data
                    before, count = totals.get(to, (0.0, 0))
                    totals[to] = (before + amount, count + 1)
                    passed.append(Passed(to, w.data, amount, totals[to][0], count))
                    received.setdefault(to, []).append((neuron.name, amount))
            if level == "layer":  # one line per input unit: what the whole layer sent it
                passed = [Passed(n, None, totals[n][0], totals[n][0], 0) for n in inputs]
            names = [n.name for n, _, _ in group]
            by_neuron = level == "neuron"
            steps.append(
                UnitStep(
                    index=len(steps),
                    kind=level,
                    name=names[0] if by_neuron else layer.name,
                    ids=tuple(n.replace(".", "_") for n in names) if by_neuron else (layer.name,),
                    activation=layer.activation,
                    credit=tuple(a.grad for _, _, a in group),
                    sources=tuple(tuple(received.get(n, [])) for n in names),
                    z=tuple(z.data for _, z, _ in group),
                    local=tuple(1.0 if a is z else a.locals[0] for _, z, a in group),  # act'(z)
                    credit_z=tuple(z.grad for _, z, _ in group),
                    bias_grads=tuple(n.bias.grad for n, _, _ in group),
                    weight_grads=tuple(tuple(w.grad for w in n.weights) for n, _, _ in group),
                    passed=tuple(passed),
                    formula=activation_formula(layer.activation),
                )
            )
    steps.append(
        UnitStep(
            index=len(steps),
            kind="inputs",
            name="inputs",
            ids=tuple(unit_names[0]) if level == "neuron" else ("inputs",),
            activation=None,
            credit=tuple(x.grad for x in built.inputs),
            sources=tuple(tuple(received.get(n, [])) for n in unit_names[0]),
        )
    )
    return steps


def activation_formula(activation: str) -> str:
    """act'(z) as the op table writes it, in terms of the pre-activation z (1 if linear)."""
    op = ACTIVATIONS[activation]
    return "1" if op is None else substitute(op.formulas[0], "z")


# -- as a document ---------------------------------------------------------------


def document(value: Value, steps: list[Step] | None = None) -> dict:
    """What `trace --json` prints: the forward pass, the backward pass step by step, every
    leaf's gradient with its sentence, the nodes no credit reaches (`steps`: `trace(value)`)."""
    steps = trace(value) if steps is None else steps
    names = node_names(topological_order(value))
    return {
        "output": output_name(value),
        "forward": [_fields(f, "name", "definition", "data") for f in forward(value)],
        "steps": [
            {
                **_fields(step, "index", "name", "definition", "credit", "is_output", "is_leaf"),
                "stops_credit": step.stops_credit,
                "sources": [
                    {"from": s.consumer_name, "position": s.position, "amount": s.amount}
                    for s in step.sources
                ],
                "contributions": [
                    {
                        "to": c.parent_name,
                        "position": c.position,
                        "formula": c.named_formula,
                        **_fields(c, "local", "amount", "before", "total", "earlier", "passes"),
                    }
                    for c in step.contributions
                ],
            }
            for step in steps
        ],
        "gradients": [
            _fields(g, "name", "data", "grad", "reached", "sentence")
            for g in leaf_gradients(value, steps)
        ],
        "unreached": [names[v] for v in unreached(value, steps)],
    }


def _fields(record: object, *names: str) -> dict[str, object]:
    return {name: getattr(record, name) for name in names}


def network_document(graph, level: str, steps: list[UnitStep] | None = None) -> dict:
    """What `trace --model … --level neuron|layer --json` prints: the example, then every
    field of each `UnitStep` but the diagram's ids."""
    steps = network_trace(graph, level) if steps is None else steps
    return {
        "level": level,
        "input": list(graph.x),
        "target": graph.y,
        "loss": graph.loss.data,
        "steps": [
            {  # sources as `{"from", "amount"}`, as `document` has them
                name: [[{"from": w, "amount": a} for w, a in unit] for unit in value]
                if name == "sources"
                else value
                for name, value in asdict(step).items()
                if name != "ids"
            }
            for step in steps
        ],
    }
