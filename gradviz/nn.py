"""Networks built from Values, their losses, and the per-layer numbers diagnostics read.

Every weight and bias is a named leaf `Value`: `L1.N2.w0` is the weight from input 0 into
neuron 2 of layer 1, `L1.N2.b` its bias. One example's loss is an ordinary engine graph,
drawn, traced and checked as any other; gradviz.compile turns it into code for training.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gradviz.engine import Value, apply, backpropagate, topological_order
from gradviz.errors import SpecError, quoted
from gradviz.ops import ACTIVATIONS

if TYPE_CHECKING:
    from gradviz.spec import Spec

INITS = ("default", "xavier", "he", "uniform1", "micrograd")


@dataclass(frozen=True)
class Loss:
    """A loss in one place, as an op is in the op table: how it is built from the output
    and the target, and its formula and slope for display."""

    name: str
    build: Callable[[Value, Value], Value]
    formula: str  # the loss in terms of the output `out` and the target `y`
    derivative: str  # ∂loss/∂out, in the same terms
    # an output is right when it is on the target's side of this (0.5 for a probability;
    # 0 for a score whose sign is the class, as hinge loss reads it)
    threshold: float = 0.5
    default_output: str = "sigmoid"  # the output activation when the spec names none
    # the loss reads a 0/1 target as t = 2y − 1 = ±1 (tables show the target so)
    signed_targets: bool = False


def _mse(output: Value, target: Value) -> Value:
    d = output - target
    return d * d  # the square as a product: exact, and both edges are drawn


def _bce(output: Value, target: Value) -> Value:
    return -(target * output.log() + (1.0 - target) * (1.0 - output).log())


def _hinge(output: Value, target: Value) -> Value:
    # labels ±1: the data's 0/1 target read as t = 2y − 1 (exact for 0 and 1); then
    # micrograd's max-margin loss relu(1 + (−t)·score), written 1 − t·score (the same bits)
    sign = target * 2.0 - 1.0
    return (1.0 - sign * output).relu()


LOSS_FUNCTIONS: dict[str, Loss] = {
    loss.name: loss
    for loss in (
        Loss("mse", _mse, "(out − y)²", "2·(out − y)"),
        Loss("bce", _bce, "−(y·log out + (1−y)·log(1−out))", "(out − y)/(out·(1 − out))"),
        Loss(
            "hinge",
            _hinge,
            "max(0, 1 − t·out), t = 2y − 1 = ±1",
            "−t where t·out < 1, else 0",
            threshold=0.0,
            default_output="linear",
            signed_targets=True,
        ),
    )
}
LOSSES = tuple(LOSS_FUNCTIONS)


def is_correct(output: float, target: float, threshold: float = 0.5) -> bool:
    """The output is on the target's side of the threshold (a NaN is on neither: wrong)."""
    return output > threshold if target > 0.5 else output <= threshold


def parameter_count(layers: Sequence[int]) -> int:
    return sum((n_in + 1) * n_out for n_in, n_out in itertools.pairwise(layers))


@dataclass
class LayerSample:
    """One dense layer at one moment of training: the raw numbers, before any clipping.

    Shapes: weights (n_out, n_in); biases (n_out,); pre_activations and activations
    (batch, n_out). Gradients are of the mean loss over the batch, as the optimiser sees
    them; `previous_weights` are those before the last update (None at initialisation)."""

    index: int  # 1-based: layer 1 is the first hidden layer
    name: str  # "L1"
    activation: str  # "sigmoid", "tanh", "relu", "linear"
    is_output: bool
    weights: np.ndarray
    biases: np.ndarray
    weight_grads: np.ndarray
    bias_grads: np.ndarray
    pre_activations: np.ndarray
    activations: np.ndarray
    previous_weights: np.ndarray | None = None

    @property
    def size(self) -> int:
        arrays = (self.weights, self.biases, self.weight_grads, self.bias_grads)
        total = sum(np.size(a) for a in (*arrays, self.pre_activations, self.activations))
        return total + (0 if self.previous_weights is None else np.size(self.previous_weights))


# -- the network ----------------------------------------------------------------------------


@dataclass
class Neuron:
    name: str  # "L1.N2"
    weights: list[Value]
    bias: Value


@dataclass
class Layer:
    index: int  # 1-based
    activation: str
    is_output: bool
    neurons: list[Neuron]

    @property
    def name(self) -> str:
        return f"L{self.index}"

    @property
    def n_out(self) -> int:
        return len(self.neurons)


@dataclass
class Built:
    """One graph built from the network: inputs → layers → output → loss; `pre[i][j]`,
    `act[i][j]` are layer i+1's neuron j+1 before and after its activation."""

    inputs: list[Value]
    target: Value
    pre: list[list[Value]]
    act: list[list[Value]]
    output: Value
    loss: Value


class Network:
    """A dense network whose parameters are named leaf Values (0 until `initialise`)."""

    def __init__(
        self,
        sizes: Sequence[int],
        activations: Sequence[str],
        loss: str = "mse",
        l2: float = 0.0,
    ):
        if len(activations) != len(sizes) - 1:
            raise SpecError(f"{len(sizes) - 1} layers need as many activations")
        self.sizes = tuple(sizes)
        self.activations = tuple(activations)
        self.loss = loss
        self.l2 = l2  # the loss's l2·Σp² term (gradients include its 2·l2·p)
        self.layers: list[Layer] = []
        for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes), 1):
            neurons = []
            for j in range(1, n_out + 1):
                name = f"L{i}.N{j}"
                weights = [Value(0.0, label=f"{name}.w{k}") for k in range(n_in)]
                neurons.append(Neuron(name, weights, Value(0.0, label=f"{name}.b")))
            self.layers.append(Layer(i, activations[i - 1], i == len(sizes) - 1, neurons))

    @classmethod
    def from_spec(cls, spec: Spec) -> Network:
        network = cls(spec.layers, spec.activations, spec.loss, spec.l2)
        network.initialise(spec.init, spec.seed)
        return network

    def parameters(self) -> list[Value]:
        """Every weight and bias: layer by layer, neuron by neuron, w0 … w(n-1), b."""
        return [p for layer in self.layers for n in layer.neurons for p in (*n.weights, n.bias)]

    def zero_grad(self) -> None:
        """Empty every parameter's grad: `Value.backward()` adds into it."""
        for p in self.parameters():
            p.grad = 0.0

    @property
    def n_parameters(self) -> int:
        return parameter_count(self.sizes)

    def initialise(self, scheme: str, seed: int) -> None:
        """default U(±√(2/n_in)); xavier U(±√(6/(n_in+n_out))); he N(0, √(2/n_in));
        uniform1 U(-1, 1), biases too (the classic lesson); micrograd U(-1, 1). Biases
        start at 0 except for uniform1."""
        if scheme not in INITS:
            raise SpecError(f"unknown init {quoted(scheme)}; expected one of {', '.join(INITS)}")
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0,)))
        weights = []
        for n_in, n_out in itertools.pairwise(self.sizes):
            if scheme == "he":
                w = rng.normal(0.0, math.sqrt(2.0 / n_in), size=(n_out, n_in))
            else:  # U(±√square): uniform1 and micrograd U(-1, 1)
                square = {"default": 2.0 / n_in, "xavier": 6.0 / (n_in + n_out)}.get(scheme, 1.0)
                w = rng.uniform(-math.sqrt(square), math.sqrt(square), size=(n_out, n_in))
            biases = rng.uniform(-1.0, 1.0, size=n_out) if scheme == "uniform1" else np.zeros(n_out)
            weights.append((w, biases))
        self.set_weights(weights)

    def weights(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(W of shape (n_out, n_in), b of shape (n_out,)) per layer, as copies."""
        return [(W.copy(), b.copy()) for W, b in layer_views(self.sizes, np.array(self.flat()))]

    def set_weights(self, weights: Sequence[tuple[np.ndarray, np.ndarray]]) -> None:
        self.set_flat(np.concatenate([np.column_stack([W, b]).ravel() for W, b in weights]))

    def flat(self) -> list[float]:
        return [float(p.data) for p in self.parameters()]

    def set_flat(self, values: Sequence[float]) -> None:
        for p, v in zip(self.parameters(), values, strict=True):
            p.data = float(v)

    def copy(self) -> Network:
        other = Network(self.sizes, self.activations, self.loss, self.l2)
        other.set_flat(self.flat())
        return other

    def build(self, inputs: Sequence[Value], target: Value) -> Built:
        """The graph of one loss, from the network's own parameter leaves: a neuron's
        z = ((b + w0·x0) + w1·x1) + … (micrograd's order), then its activation. Inputs may
        hold floats (one example) or arrays (a batch)."""
        if len(inputs) != self.sizes[0]:
            raise SpecError(f"the network takes {self.sizes[0]} inputs, got {len(inputs)}")
        values = list(inputs)
        pre_all: list[list[Value]] = []
        act_all: list[list[Value]] = []
        for layer in self.layers:
            op = ACTIVATIONS[layer.activation]
            pre, act = [], []
            for neuron in layer.neurons:
                z = neuron.bias
                for w, x in zip(neuron.weights, values, strict=True):
                    z = z + w * x
                z.label = f"{neuron.name}.z"
                a = z if op is None else apply(op, z)
                if op is not None:
                    a.label = f"{neuron.name}.a"
                pre.append(z)
                act.append(a)
            pre_all.append(pre)
            act_all.append(act)
            values = act
        output = values[0]
        loss_function = LOSS_FUNCTIONS.get(self.loss)
        if loss_function is None:
            raise SpecError(
                f"unknown loss {quoted(self.loss)}; expected one of {', '.join(LOSSES)}"
            )
        loss = loss_function.build(output, target)
        loss.label = "loss"
        return Built(list(inputs), target, pre_all, act_all, output, loss)


def example_graph(network: Network, x: Sequence[float], y: float) -> Built:
    """One example's loss graph (inputs `x0`, …, target `y`), run forward and backward."""
    inputs = [Value(float(v), label=f"x{j}") for j, v in enumerate(x)]
    built = network.build(inputs, Value(float(y), label="y"))
    backpropagate(topological_order(built.loss))  # from zero: the parameters are shared
    return built


def sum_of_squares(values: Sequence[float]) -> float:
    """v0² + v1² + … left to right (the order of the l2 term and of ‖g‖²)."""
    total = values[0] * values[0]
    for v in values[1:]:
        total += v * v
    return total


def sequential_sum(values: np.ndarray, start: float = -0.0) -> float:
    """start + v1 + v2 + … left to right, the order of training's batch sums, so that
    every way of computing them gives the same bits."""
    return float(np.cumsum(np.concatenate(([start], values.ravel())))[-1])


# Floats held by one batched graph at a time in `layer_samples` (32 MB).
GRAPH_BUDGET = 4_000_000
# Activations kept per recorded moment (8 MB each for pre-activations and activations).
STATS_FLOATS = 1_000_000


def stats_rows(network: Network, n: int) -> int:
    """The rows the per-layer statistics use: all unless rows × units passes STATS_FLOATS."""
    units = sum(network.sizes[1:])
    return max(1, min(n, STATS_FLOATS // units))


def layer_samples(
    network: Network,
    X: np.ndarray,
    Y: np.ndarray,
    previous: Sequence[float] | np.ndarray | None = None,
) -> list[LayerSample]:
    """Every layer's weights, gradients and activations on a batch, read-only: the mean
    loss's gradient as a full-batch step sees it before clipping, from the engine's graph
    over arrays, a few thousand rows at a time (memory). `previous`: the flat weights
    before the last update, if any."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != network.sizes[0] or Y.shape != (X.shape[0],):
        raise SpecError(
            f"layer_samples needs X of shape (n, {network.sizes[0]}) and Y of shape (n,)"
        )
    n = X.shape[0]
    params = network.parameters()
    totals = [-0.0] * len(params)
    # (each starts with no rows, so that an empty batch gives (0, units) arrays)
    pre_parts = [[np.empty((0, layer.n_out))] for layer in network.layers]
    act_parts = [[np.empty((0, layer.n_out))] for layer in network.layers]
    rows_per_chunk = max(1, GRAPH_BUDGET // (4 * len(params) + 16))
    with np.errstate(all="ignore"):
        for start in range(0, n, rows_per_chunk):
            rows = slice(start, start + rows_per_chunk)
            inputs = [Value(X[rows, j].copy(), label=f"x{j}") for j in range(X.shape[1])]
            built = network.build(inputs, Value(Y[rows].copy(), label="y"))
            backpropagate(topological_order(built.loss))  # this chunk's grads alone
            for k, p in enumerate(params):
                totals[k] = sequential_sum(p.grad, totals[k])  # (arrays: every input is one)
            for i in range(len(network.layers)):
                pre_parts[i].append(np.stack([v.data for v in built.pre[i]], axis=1))
                act_parts[i].append(np.stack([v.data for v in built.act[i]], axis=1))
    grads = np.array([t / n for t in totals]) if n else np.full(len(params), math.nan)
    pre = [np.concatenate(parts) for parts in pre_parts]
    act = [np.concatenate(parts) for parts in act_parts]
    return samples_of(network, np.array(network.flat()), grads, pre, act, previous)


def layer_views(sizes: Sequence[int], P: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(W (n_out, n_in), b (n_out,)) per layer: views into P, in `parameters()` order."""
    out, start = [], 0
    for n_in, n_out in itertools.pairwise(sizes):
        block = P[start : start + n_out * (n_in + 1)].reshape(n_out, n_in + 1)
        out.append((block[:, :-1], block[:, -1]))
        start += n_out * (n_in + 1)
    return out


def samples_of(
    network: Network,
    P: np.ndarray,
    G: np.ndarray,
    pre: list[np.ndarray],
    act: list[np.ndarray],
    previous: Sequence[float] | np.ndarray | None = None,
) -> list[LayerSample]:
    """Every layer's sample from flat weights P, the mean gradient G (+ 2·l2·p) and the
    flat weights before the last update."""
    if network.l2:
        with np.errstate(all="ignore"):
            G = G + (2.0 * network.l2) * P
    old = None if previous is None else layer_views(network.sizes, np.array(previous, float))
    return [
        LayerSample(
            index=layer.index,
            name=layer.name,
            activation=layer.activation,
            is_output=layer.is_output,
            weights=W.copy(),
            biases=b.copy(),
            weight_grads=GW.copy(),
            bias_grads=Gb.copy(),
            pre_activations=pre[i],
            activations=act[i],
            previous_weights=None if old is None else old[i][0],
        )
        for i, (layer, (W, b), (GW, Gb)) in enumerate(
            zip(network.layers, *(layer_views(network.sizes, v) for v in (P, G)), strict=True)
        )
    ]
