"""Saved models: the spec, the trained weights and the training history, as plain JSON.

Never pickle: a model file is data a person can read and a program can check. Loading
checks everything (format, shapes, that every weight is a finite number) and says what
is wrong in one line, so a truncated or hand-edited file is a clear error, not a crash.
Also here: one example's loss graph of a saved model, and the collapsed (neuron or
layer) diagrams of it that keep a 10-layer network readable.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gradviz.data import Dataset, load
from gradviz.engine import Value, topological_order
from gradviz.errors import GradvizError, InputError, ModelError
from gradviz.nn import (
    Built,
    LayerSample,
    Network,
    Spec,
    example_graph,
    layer_samples,
    spec_from_mapping,
    stats_rows,
)
from gradviz.numbers import fmt
from gradviz.render.diagram import Diagram, Edge, Node, diagram_from_value
from gradviz.stats import Diagnosis, diagnose
from gradviz.train import Result

FORMAT = "gradviz-model"
VERSION = 1
MAX_MODEL_BYTES = 100_000_000
MAX_HISTORY_POINTS = 10_000  # loss/accuracy points kept in the file (evenly spaced)


@dataclass
class Model:
    """A trained network as saved: what to rebuild it, its weights, and its history.

    `history` holds plain JSON: `loss` and `accuracy` every `every` epochs,
    `epochs_run`, `stopped` (why training stopped early, or None), and `gradients`:
    the per-layer statistics (`gradviz.stats.Diagnosis.to_dict`) at recorded epochs."""

    spec: Spec
    weights: list[tuple[np.ndarray, np.ndarray]]
    history: dict = field(default_factory=dict)
    final: dict = field(default_factory=dict)

    def network(self) -> Network:
        network = Network(self.spec.layers, self.spec.activations, self.spec.loss)
        network.set_weights(self.weights)
        return network

    def dataset(self) -> Dataset:
        return load(self.spec.data, Path(self.spec.base_dir) if self.spec.base_dir else None)

    def layer_samples(self, dataset: Dataset | None = None) -> list[LayerSample]:
        """Per-layer state of the saved weights on its data (the first rows of a data set
        too big for `nn.STATS_FLOATS`)."""
        data = dataset if dataset is not None else self.dataset()
        network = self.network()
        rows = stats_rows(network, data.size)
        return layer_samples(network, data.X[:rows], data.Y[:rows])


def from_result(result: Result) -> Model:
    """A Model from `gradviz.train.train`'s result, with its gradient history."""
    history = result.history
    network = result.network
    every = max(1, math.ceil(history.epochs_run / MAX_HISTORY_POINTS))
    kept = slice(every - 1, None, every)
    return Model(
        spec=result.spec,
        weights=network.weights(),
        history={
            "epochs_run": history.epochs_run,
            "every": every,
            "loss": history.loss[kept],
            "accuracy": history.accuracy[kept],
            "stopped": history.stopped,
            "gradients": [
                (s if isinstance(s, Diagnosis) else diagnose(s, epoch=e)).to_dict()
                for e, s in history.snapshots
            ],
        },
        final={
            "loss": result.final.loss,
            "accuracy": result.final.accuracy,
        },
    )


# -- writing ------------------------------------------------------------------------------


def _plain(value: object) -> object:
    """JSON-safe: NaN and infinities as the strings "nan", "inf", "-inf"."""
    if isinstance(value, float | np.floating):
        x = float(value)
        if math.isfinite(x):
            return x
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.integer):
        return int(value)
    return value


def to_dict(model: Model) -> dict:
    return {
        "format": FORMAT,
        "version": VERSION,
        "spec": model.spec.to_dict(),
        "layers": [
            {
                "name": f"L{i}",
                "activation": activation,
                "weights": W.tolist(),
                "biases": b.tolist(),
            }
            for i, ((W, b), activation) in enumerate(
                zip(model.weights, model.spec.activations, strict=True), 1
            )
        ],
        "history": model.history,
        "final": model.final,
    }


def to_json(model: Model) -> str:
    return json.dumps(_plain(to_dict(model)), indent=1, allow_nan=False) + "\n"


def save(model: Model, path: Path | str) -> None:
    """Write atomically: a failure half-way leaves any previous file as it was."""
    from gradviz.output import write_atomic

    write_atomic(Path(path), to_json(model))


# -- reading ------------------------------------------------------------------------------


def load_model(path: Path | str) -> Model:
    """A saved model, checked; any problem is a ModelError naming the field."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise ModelError(f"{path}: no such model file") from None
    except OSError as error:
        raise ModelError(f"{path}: cannot read: {error.strerror or error}") from None
    if size > MAX_MODEL_BYTES:
        raise ModelError(f"{path}: {size:,} bytes is larger than a model can be")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ModelError(f"{path}: not a gradviz model (not UTF-8 text)") from None
    except OSError as error:
        raise ModelError(f"{path}: cannot read: {error.strerror or error}") from None
    return parse_model(text, str(path), base_dir=str(path.parent))


def parse_model(text: str, name: str = "model", base_dir: str | None = None) -> Model:
    try:
        raw = json.loads(text, parse_constant=lambda c: c)  # NaN/Infinity stay strings
    except json.JSONDecodeError as error:
        what = "truncated" if error.pos >= len(text.rstrip()) else "not valid JSON"
        raise ModelError(
            f"{name}: {what}: {error.msg} at line {error.lineno} column {error.colno}"
        ) from None
    except RecursionError:
        raise ModelError(f"{name}: nested too deeply to be a model") from None

    def fail(where: str, problem: str) -> ModelError:
        return ModelError(f"{name}: {where}: {problem}")

    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise ModelError(f'{name}: not a gradviz model (no "format": "{FORMAT}")')
    if raw.get("version") != VERSION:
        raise fail(
            "version", f"{raw.get('version')!r} is not a version this gradviz reads ({VERSION})"
        )
    for key in ("spec", "layers", "history"):
        if key not in raw:
            raise fail(key, "missing")
    if not isinstance(raw["spec"], dict):
        raise fail("spec", "expected an object")
    try:
        spec = spec_from_mapping(raw["spec"], locate=lambda key: f"spec.{key}", base_dir=base_dir)
    except GradvizError as error:
        raise ModelError(f"{name}: {error.message}") from None
    layers = raw["layers"]
    if not isinstance(layers, list) or len(layers) != len(spec.layers) - 1:
        raise fail("layers", f"expected {len(spec.layers) - 1} layers as the spec says")
    weights = []
    for i, (layer, n_in, n_out) in enumerate(
        zip(layers, spec.layers, spec.layers[1:], strict=False), 1
    ):
        where = f"layers[{i - 1}] (L{i})"
        if not isinstance(layer, dict):
            raise fail(where, "expected an object with weights and biases")
        if layer.get("activation", spec.activations[i - 1]) != spec.activations[i - 1]:
            raise fail(f"{where}.activation", "does not match the spec")
        W = _matrix(layer.get("weights"), n_out, n_in, f"{where}.weights", fail, f"L{i}")
        b = _vector(layer.get("biases"), n_out, f"{where}.biases", fail, f"L{i}")
        weights.append((W, b))
    history = raw["history"]
    if not isinstance(history, dict):
        raise fail("history", "expected an object")
    for key in ("loss", "accuracy"):
        series = history.get(key)
        if not isinstance(series, list) or not all(
            _is_number(v, allow_nonfinite=True) for v in series
        ):
            raise fail(f"history.{key}", "expected a list of numbers")
    gradients = history.get("gradients", [])
    if not isinstance(gradients, list) or not all(isinstance(g, dict) for g in gradients):
        raise fail("history.gradients", "expected a list of objects")
    final = raw.get("final", {})
    if not isinstance(final, dict):
        raise fail("final", "expected an object")
    return Model(spec, weights, history, final)


def _is_number(value: object, allow_nonfinite: bool = False) -> bool:
    if isinstance(value, str):
        return allow_nonfinite and value in ("nan", "inf", "-inf")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return allow_nonfinite or math.isfinite(value)


def _vector(
    value: object, n: int, where: str, fail, layer: str, row: int | None = None
) -> np.ndarray:
    if not isinstance(value, list) or len(value) != n:
        raise fail(where, f"expected {n} numbers")
    for k, v in enumerate(value):
        if _is_number(v):
            continue
        param = f"{layer}.N{row + 1}.w{k}" if row is not None else f"{layer}.N{k + 1}.b"
        nonfinite = _is_number(v, allow_nonfinite=True) or v in ("NaN", "Infinity", "-Infinity")
        problem = "is not finite (the model diverged)" if nonfinite else "is not a number"
        raise fail(f"{where}[{k}]", f"{param} = {json.dumps(v)} {problem}")
    return np.array(value, dtype=np.float64)


def _matrix(value: object, rows: int, columns: int, where: str, fail, layer: str) -> np.ndarray:
    if not isinstance(value, list) or len(value) != rows:
        raise fail(where, f"expected {rows} rows of {columns} weights (n_out × n_in)")
    return np.array(
        [_vector(row, columns, f"{where}[{j}]", fail, layer, row=j) for j, row in enumerate(value)],
        dtype=np.float64,
    ).reshape(rows, columns)


# -- one example's graph, and collapsed drawings of it -----------------------------------


@dataclass
class LossGraph:
    """One example through a saved network, forward and backward.

    `clusters` maps every node to its layer (`L1`, …) or to `loss`; inputs are in no
    cluster. `neurons` maps a layer's nodes to their neuron (`L1.N2`)."""

    network: Network
    built: Built
    x: tuple[float, ...]
    y: float
    clusters: dict[Value, str]
    neurons: dict[Value, str]

    @property
    def loss(self) -> Value:
        return self.built.loss

    @property
    def size(self) -> int:
        return len(topological_order(self.built.loss))


def parse_input(text: str, width: int) -> tuple[float, ...]:
    """`0,1` → (0.0, 1.0); the count must match the network's inputs."""
    parts = [p.strip() for p in text.split(",")]
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise InputError(
            f"--input {text!r}: expected {width} numbers separated by commas"
        ) from None
    if len(values) != width or not all(math.isfinite(v) for v in values):
        raise InputError(f"--input {text!r}: expected {width} finite numbers separated by commas")
    return values


def target_for(model: Model, x: Sequence[float], dataset: Dataset | None = None) -> float:
    """The label of `x` in the model's data set (for an input the user typed)."""
    data = dataset if dataset is not None else model.dataset()
    row = np.asarray(x, dtype=np.float64)
    matches = np.nonzero(np.all(np.equal(data.X, row), axis=1))[0]
    if matches.size == 0:
        shown = ", ".join(fmt(v) for v in x)
        raise InputError(
            f"input ({shown}) is not in the data set {data.name}: give its target (--target)"
        )
    return float(data.Y[matches[0]])


def network_loss_graph(
    model: Model | Network, x: Sequence[float], y: float | None = None
) -> LossGraph:
    """The graph of one example's loss with data and grads: named parameters (`L1.N2.w0`),
    inputs `x0`…, target `y`, and each node's layer for drawing clusters. Without `y`, the
    target is looked up in the model's data set."""
    network = model.network() if isinstance(model, Model) else model.copy()
    if len(x) != network.sizes[0]:
        raise InputError(f"the network takes {network.sizes[0]} inputs, got {len(x)}")
    if y is None:
        if not isinstance(model, Model):
            raise InputError("give the target y for this input")
        y = target_for(model, x)
    with np.errstate(all="ignore"):
        built = example_graph(network, x, y)
    clusters: dict[Value, str] = {}
    neurons: dict[Value, str] = {}
    inputs = set(built.inputs)
    for layer, acts in zip(network.layers, built.act, strict=True):
        for neuron, a in zip(layer.neurons, acts, strict=True):
            for node in topological_order(a):
                if node not in clusters and node not in inputs:
                    clusters[node] = layer.name
                    neurons[node] = neuron.name
    for node in topological_order(built.loss):
        if node not in clusters and node not in inputs:
            clusters[node] = "loss"
    return LossGraph(network, built, tuple(float(v) for v in x), float(y), clusters, neurons)


LEVELS = ("scalar", "neuron", "layer")
AUTO_NODE_LIMIT = 400  # above this many scalar nodes, `auto` draws neurons instead


def choose_level(
    graph: LossGraph, level: str = "auto", limit: int = AUTO_NODE_LIMIT
) -> tuple[str, str | None]:
    """The level to draw and, when chosen automatically, a note saying so."""
    if level != "auto":
        return level, None
    size = graph.size
    if size <= limit:
        return "scalar", None
    neurons = sum(graph.network.sizes[1:]) + graph.network.sizes[0] + 2
    if neurons <= limit:
        return "neuron", f"{size} nodes is more than {limit}: drawn one node per neuron (--level)"
    return "layer", f"{size} nodes is more than {limit}: drawn one node per layer (--level)"


def network_diagram(
    graph: LossGraph, level: str = "scalar", title: str | None = None, grad: bool = True
) -> Diagram:
    """The drawing of one example's loss: every scalar (`scalar`), a node per neuron with
    its pre-activation, activation and grads (`neuron`), or a node per layer with its
    gradient statistics (`layer`). `grad=False` leaves every gradient out, in the nodes'
    text too: data alone."""
    if level == "scalar":
        return diagram_from_value(graph.loss, grad=grad, clusters=graph.clusters, title=title)
    if level == "neuron":
        return _neuron_diagram(graph, title, grad)
    if level == "layer":
        return _layer_diagram(graph, title, grad)
    raise InputError(f"unknown level {level!r}; expected one of {', '.join(LEVELS)}")


def _input_nodes(graph: LossGraph, grad: bool) -> list[Node]:
    return [
        Node(
            id=f"x{j}",
            kind="value",
            label=f"x{j}",
            data=x.data,
            grad=x.grad if grad else None,
            role="input",
        )
        for j, x in enumerate(graph.built.inputs)
    ]


def _loss_nodes(graph: LossGraph, source: str, grad: bool) -> tuple[list[Node], list[Edge]]:
    built = graph.built
    kind = graph.network.loss
    formula = "(out − y)²" if kind == "mse" else "−(y·log out + (1−y)·log(1−out))"
    nodes = [
        Node(
            id="y",
            kind="value",
            label="y",
            data=built.target.data,
            grad=built.target.grad if grad else None,
            role="input",
            cluster="loss",
        ),
        Node(
            id="loss",
            kind="value",
            label="loss",
            data=built.loss.data,
            grad=built.loss.grad if grad else None,
            extra_lines=(f"{kind}: {formula}",),
            role="output",
            cluster="loss",
        ),
    ]
    return nodes, [Edge(source, "loss"), Edge("y", "loss", index=1)]


def _neuron_diagram(graph: LossGraph, title: str | None, grad: bool = True) -> Diagram:
    built, network = graph.built, graph.network
    nodes = _input_nodes(graph, grad)
    edges: list[Edge] = []
    sources = [n.id for n in nodes]
    for layer, pre, act in zip(network.layers, built.pre, built.act, strict=True):
        ids = []
        label_edges = layer.n_in * layer.n_out <= 32
        for neuron, z, a in zip(layer.neurons, pre, act, strict=True):
            nid = neuron.name.replace(".", "_")
            ids.append(nid)
            weights = ", ".join(fmt(w.data, 3) for w in neuron.weights)
            wgrads = ", ".join(fmt(w.grad, 3) for w in neuron.weights)
            bias = neuron.bias
            lines = [f"z {fmt(z.data)}  ∂L/∂z {fmt(z.grad)}" if grad else f"z {fmt(z.data)}"]
            if a is not z:
                lines.append(f"{layer.activation}(z) {fmt(a.data)}")
            lines.append(
                f"b {fmt(bias.data)}  ∂L/∂b {fmt(bias.grad)}" if grad else f"b {fmt(bias.data)}"
            )
            detail = f"{neuron.name}\nweights: {weights}\n"
            if grad:
                detail += f"weight grads: {wgrads}\nbias: {fmt(bias.data)} (grad {fmt(bias.grad)})"
            else:
                detail += f"bias: {fmt(bias.data)}"
            nodes.append(
                Node(
                    id=nid,
                    kind="group",
                    label=neuron.name,
                    data=a.data,
                    grad=a.grad if grad else None,
                    detail=detail,
                    cluster=layer.name,
                    extra_lines=tuple(lines),
                    role="group",
                )
            )
            for k, (source, w) in enumerate(zip(sources, neuron.weights, strict=True)):
                label = f"w{k} {fmt(w.data, 3)}" if label_edges else None
                edges.append(Edge(source, nid, label=label, index=k))
        sources = ids
    loss_nodes, loss_edges = _loss_nodes(graph, sources[0], grad)
    return Diagram(tuple(nodes + loss_nodes), tuple(edges + loss_edges), has_grad=grad, title=title)


def _layer_diagram(graph: LossGraph, title: str | None, grad: bool = True) -> Diagram:
    built, network = graph.built, graph.network
    samples = layer_samples(network, np.array([graph.x]), np.array([graph.y]))
    diagnosis = diagnose(samples)
    inputs = ", ".join(f"x{j} {fmt(x.data)}" for j, x in enumerate(built.inputs))
    nodes = [Node(id="inputs", kind="group", label="inputs", extra_lines=(inputs,), role="group")]
    edges: list[Edge] = []
    source = "inputs"
    for layer, stats, acts in zip(network.layers, diagnosis.layers, built.act, strict=True):
        units = f"{layer.n_out} {layer.activation} unit{'s' if layer.n_out != 1 else ''}"
        lines = [f"{units}, {stats.n_params} params"]
        if grad:
            rel = fmt(stats.rel) if stats.rel is not None else "—"
            lines += [
                f"grad shown: rms ∂L/∂w; max |∂L/∂w| {fmt(stats.max_abs)}",
                f"rel {rel}  status {stats.status}",
            ]
        else:
            lines.append("outputs " + ", ".join(fmt(a.data, 3) for a in acts[:8]))
            if len(acts) > 8:
                lines[-1] += ", …"
        nodes.append(
            Node(
                id=layer.name,
                kind="group",
                label=layer.name,
                grad=stats.rms if grad else None,  # the colour follows the rms gradient
                detail=f"{layer.name}: {stats.reason or stats.status}" if grad else layer.name,
                extra_lines=tuple(lines),
                role="group",
            )
        )
        edges.append(Edge(source, layer.name))
        source = layer.name
    loss_nodes, loss_edges = _loss_nodes(graph, source, grad)
    return Diagram(tuple(nodes + loss_nodes), tuple(edges + loss_edges), has_grad=grad, title=title)


def model_diagram(
    path: Path | str,
    input_text: str | None,
    target: float | None = None,
    level: str = "auto",
    grad: bool = True,
) -> tuple[Diagram, str | None]:
    """What `gradviz draw --model` draws: one example's loss through a saved model, at
    the level asked for (`auto` collapses big networks), and a note when it collapsed."""
    model = load_model(path)
    if input_text is None:
        raise InputError("--model needs --input: the example to draw, e.g. --input 0,1")
    x = parse_input(input_text, model.spec.layers[0])
    graph = network_loss_graph(model, x, target)
    chosen, note = choose_level(graph, level)
    shown = ", ".join(fmt(v) for v in graph.x)
    title = f"{model.spec.name}: loss of input ({shown}), target {fmt(graph.y)}"
    return network_diagram(graph, chosen, title, grad), note
