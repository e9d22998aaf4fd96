"""Training speed: gradviz (compiled engine graph) against micrograd, PyTorch CPU and
hand-written numpy, the same arithmetic in each, side by side in one run; and against
the other two ways gradviz could run its own graph (why it compiles).

Workloads (float64 everywhere, the same initial weights, data and example order):
- xor:    2-4-1 sigmoid, mse, 1000 full-batch epochs, lr 1.0 (4 examples);
- circle: 2-8-1 sigmoid, mse, 2000 online epochs on 80 points (160,000 updates), lr 0.5;
- deep:   one step (forward, backward, update) of a 10-layer width-8 sigmoid net, on
          one example (an online step) and on XOR's 4 (a full-batch step).
gradviz's times include building the graph and compiling it (xor, circle); for `deep`
the compile is reported on its own and the step is the steady state. micrograd has no
sigmoid: it gets one written in its own style (`_backward` closure, math.exp).

The alternatives, both on gradviz's own engine and op table:
- engine, rebuilt: an interpreter that builds every example's graph of `Value`s again
  and calls `backward()` (`gradviz.compile.Plain`, the definition training
  matches bit for bit);
- engine, fixed graph: the graph built once and re-evaluated in place each step
  (`engine.evaluate`, `engine.backpropagate`); for a full batch its inputs hold numpy
  arrays of the whole batch (one graph evaluated over the batch), online they hold floats.

Timing: every contender runs once per round, in an order that rotates from round to
round, `gc.collect()` before each run, the collector on (the imported modules' objects
frozen out of its reach first, `gc.freeze()`, so PyTorch's presence does not slow the
collection of micrograd's garbage); a figure is the median of the
rounds and a ratio is the median of the per-round ratios (with their range), so load
from other processes that comes and goes hits every contender alike. micrograd, PyTorch
and the slow alternatives run 1/10 of the circle epochs and their time is scaled by 10
(per-epoch cost is constant); `GRADVIZ_BENCH_FULL=1` runs them in full. PyTorch runs
single-threaded (as gradviz and micrograd do) and is skipped, saying so, when not
installed; it is never a gradviz dependency.

Run: `make bench`, or `python bench/train.py` with the `bench` extra installed.
"""

from __future__ import annotations

import gc
import math
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from rich.console import Console
from rich.table import Table

from gradviz import compile as C
from gradviz import nn
from gradviz import train as T
from gradviz.data import load
from gradviz.engine import Value, backpropagate, evaluate, topological_order
from gradviz.spec import PRESETS, Spec, spec_from_mapping

try:
    from micrograd.engine import Value as MicroValue
except ImportError:  # pragma: no cover - a bench-only dependency
    MicroValue = None
try:
    import torch
except ImportError:  # pragma: no cover - optional, never a dependency
    torch = None

ROUNDS = 5
FULL = os.environ.get("GRADVIZ_BENCH_FULL") == "1"
SCALE = 1 if FULL else 10  # the slow contenders run 1/SCALE of the circle epochs
TARGETS = {"xor": 10.0, "circle": 5.0, "deep": 10.0}  # x faster than micrograd
CONTENDERS = ("gradviz", "micrograd", "PyTorch", "numpy", "engine, rebuilt", "engine, fixed")

XOR = spec_from_mapping({**PRESETS["xor"], "epochs": 1000})
CIRCLE = spec_from_mapping({**PRESETS["circle"], "epochs": 2000})
# the deep net, independent of the samples: 10 sigmoid layers of 8 units, XOR
DEEP = spec_from_mapping(
    {
        "name": "deep",
        "layers": [2, *[8] * 9, 1],
        "activation": "sigmoid",
        "data": "xor",
        "epochs": 1,
        "learning_rate": 1.0,
        "update": "full",
    }
)


@dataclass
class Timed:
    """Seconds per round of each contender (already divided or scaled as reported)."""

    times: dict[str, list[float]]

    def median(self, name: str) -> float:
        return statistics.median(self.times[name]) if name in self.times else math.nan

    def ratio(self, name: str, base: str = "gradviz") -> tuple[float, float, float]:
        """(median, lowest, highest) of the per-round ratios name / base."""
        if name not in self.times:
            return math.nan, math.nan, math.nan
        ratios = [t / g for t, g in zip(self.times[name], self.times[base], strict=True)]
        return statistics.median(ratios), min(ratios), max(ratios)


def side_by_side(runs: dict[str, tuple[Callable[[], object], float]], rounds: int) -> Timed:
    """Each contender `name: (run, factor)` once per round, in an order rotating from
    round to round; a run's seconds times `factor` is its figure for that round."""
    names = list(runs)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            run, factor = runs[name]
            gc.collect()
            start = time.perf_counter()
            run()
            times[name].append((time.perf_counter() - start) * factor)
    return Timed(times)


def orders(spec: Spec, epochs: int, n: int) -> list[list[int]]:
    """The example order of every epoch, as gradviz's training draws it."""
    if spec.update == "full":
        return [list(range(n))] * epochs
    rng = np.random.default_rng(np.random.SeedSequence(spec.seed, spawn_key=(1,)))
    return [rng.permutation(n).tolist() for _ in range(epochs)]


def initial(spec: Spec) -> list[tuple[np.ndarray, np.ndarray]]:
    return nn.Network.from_spec(spec).weights()


# -- gradviz ------------------------------------------------------------------------------


def gradviz_train(spec: Spec) -> T.Result:
    C._compile.cache_clear()  # every run builds and compiles its graph again
    return T.train(spec, record=False)


def deep_steps() -> dict[str, Callable[[list[int], int], Callable[[], None]]]:
    """For each contender, a maker of `run()`: `steps` updates of the deep net on the
    examples `rows`, all set up beforehand (only the steps are timed)."""
    data = load(DEEP.data)
    X, Y = data.X.tolist(), data.Y.tolist()
    makers: dict[str, Callable[[list[int], int], Callable[[], None]]] = {}

    def gradviz_maker(rows: list[int], steps: int) -> Callable[[], None]:
        net = nn.Network.from_spec(DEEP)
        compiled = C.compile_network(net, online=len(rows) == 1)  # as training would
        P, XT = net.flat(), [tuple(r) for r in X]
        n = len(rows)

        def run() -> None:
            for _ in range(steps):
                compiled.run(P, XT, Y, rows, 0, n, n, 1.0, 0.0, -0.0, 0)

        return run

    makers["gradviz"] = gradviz_maker
    if MicroValue:

        def micro_maker(rows: list[int], steps: int) -> Callable[[], None]:
            micro = LessonNet(MicroValue, micro_sigmoid, initial(DEEP))
            return lambda: [micro.step(X, Y, rows, 1.0) for _ in range(steps)]

        makers["micrograd"] = micro_maker
    if torch:

        def torch_maker(rows: list[int], steps: int) -> Callable[[], None]:
            params = [
                torch.tensor(a, dtype=torch.float64, requires_grad=True)
                for W, b in initial(DEEP)
                for a in (W, b)
            ]
            Xt = torch.tensor(data.X[rows], dtype=torch.float64)
            Yt = torch.tensor(data.Y[rows], dtype=torch.float64)

            def run() -> None:
                for _ in range(steps):
                    torch_step(params, Xt, Yt, 1.0)

            return run

        makers["PyTorch"] = torch_maker

    def numpy_maker(rows: list[int], steps: int) -> Callable[[], None]:
        params = [a.copy() for W, b in initial(DEEP) for a in (W, b)]
        Xn, Yn = data.X[rows], data.Y[rows]
        return lambda: [numpy_step(params, Xn, Yn, 1.0) for _ in range(steps)]

    makers["numpy"] = numpy_maker

    def rebuilt_maker(rows: list[int], steps: int) -> Callable[[], None]:
        net = nn.Network.from_spec(DEEP)
        P, m = net.flat(), len(rows)
        plain = C.Plain(net)
        return lambda: [plain.run(P, X, Y, rows, 0, m, m, 1.0, 0.0) for _ in range(steps)]

    makers["engine, rebuilt"] = rebuilt_maker

    def fixed_maker(rows: list[int], steps: int) -> Callable[[], None]:
        graph = FixedGraph(DEEP, batched=len(rows) > 1)
        return lambda: [graph.step(data.X, data.Y, rows, 1.0) for _ in range(steps)]

    makers["engine, fixed"] = fixed_maker
    return makers


def big_batch(points: int = 1000) -> Timed:
    """One full-batch step of the deep net on `points` circle points: where a graph
    evaluated over the batch with numpy arrays pays off (compiled code loops in Python)."""
    spec = spec_from_mapping(
        {**DEEP.to_dict(), "data": {"name": "circle", "size": points}, "epochs": 1}
    )
    data = load(spec.data)
    net = nn.Network.from_spec(spec)
    compiled = C.compile_network(net)
    P, XT, Y = net.flat(), [tuple(r) for r in data.X.tolist()], data.Y.tolist()
    rows = list(range(points))
    graph = FixedGraph(spec, batched=True)
    runs = {
        "gradviz": (
            lambda: compiled.run(P, XT, Y, rows, 0, points, points, 1.0, 0.0, -0.0, 0),
            1.0,
        ),
        "engine, fixed": (lambda: graph.step(data.X, data.Y, rows, 1.0), 1.0),
    }
    return side_by_side(runs, ROUNDS)


def compile_time() -> float:
    C._compile.cache_clear()
    start = time.perf_counter()
    C.compile_network(nn.Network.from_spec(DEEP))
    return time.perf_counter() - start


# -- the alternatives on gradviz's engine ----------------------------------------------


class FixedGraph:
    """One loss graph built once and re-evaluated in place: set the inputs, `evaluate`,
    `backpropagate`, update. `batched`: the inputs hold numpy arrays of the whole batch,
    so one walk over the graph handles every example; else floats, one example a walk."""

    def __init__(self, spec: Spec, batched: bool) -> None:
        self.network = nn.Network.from_spec(spec)
        self.params = self.network.parameters()
        width = spec.layers[0]
        self.inputs = [Value(0.0, label=f"x{j}") for j in range(width)]
        self.target = Value(0.0, label="y")
        built = self.network.build(self.inputs, self.target)
        self.order = topological_order(built.loss)
        self.batched = batched

    def step(self, X: np.ndarray, Y: np.ndarray, rows: list[int], lr: float) -> None:
        params, order = self.params, self.order
        if self.batched:
            for j, x in enumerate(self.inputs):
                x.data = X[rows, j]
            self.target.data = Y[rows]
            evaluate(order)
            backpropagate(order)
            n = len(rows)
            grads = [float(np.sum(p.grad)) / n for p in params]
        else:
            sums = [0.0] * len(params)
            for i in rows:
                for j, x in enumerate(self.inputs):
                    x.data = float(X[i, j])
                self.target.data = float(Y[i])
                evaluate(order)
                backpropagate(order)
                sums = [s + p.grad for s, p in zip(sums, params, strict=True)]
            grads = [s / len(rows) for s in sums]
        for p, g in zip(params, grads, strict=True):
            p.data -= lr * g


def fixed_train(spec: Spec, epochs: int) -> FixedGraph:
    data = load(spec.data)
    batch = data.size if spec.update == "full" else 1
    graph = FixedGraph(spec, batched=batch > 1)
    for order in orders(spec, epochs, data.size):
        for start in range(0, data.size, batch):
            graph.step(data.X, data.Y, order[start : start + batch], spec.learning_rate)
    return graph


def rebuilt_train(spec: Spec, epochs: int) -> nn.Network:
    data = load(spec.data)
    X, Y = data.X.tolist(), data.Y.tolist()
    net = nn.Network.from_spec(spec)
    P, n = net.flat(), data.size
    batch = n if spec.update == "full" else 1
    plain = C.Plain(net)
    for order in orders(spec, epochs, n):
        plain.run(P, X, Y, order, 0, n, batch, spec.learning_rate, 0.0)
    net.set_flat(P)
    return net


# -- micrograd ----------------------------------------------------------------------------


def micro_sigmoid(v):
    """σ in micrograd's style: the forward value and a closure adding the local slope."""
    x = v.data
    e = math.exp(-abs(x))
    s = 1.0 / (1.0 + e) if x >= 0 else e / (1.0 + e)
    out = MicroValue(s, (v,), "sigmoid")

    def _backward() -> None:
        v.grad += s * (1.0 - s) * out.grad

    out._backward = _backward
    return out


class LessonNet:
    """micrograd's MLP loop over any Value class: `value(x)` makes a leaf, `sigmoid(v)`
    applies the activation. The micrograd contender here, and both engines in
    bench/lesson.py."""

    def __init__(self, value: Callable, sigmoid: Callable, weights) -> None:
        self.value, self.sigmoid = value, sigmoid
        self.layers = [
            ([[value(w) for w in row] for row in W.tolist()], [value(b) for b in bs.tolist()])
            for W, bs in weights
        ]
        self.params = [
            p for W, bs in self.layers for row, b in zip(W, bs, strict=True) for p in (*row, b)
        ]

    def loss(self, x: list[float], y: float):
        values = x
        for W, bs in self.layers:
            values = [
                self.sigmoid(sum((w * v for w, v in zip(row, values, strict=True)), b))
                for row, b in zip(W, bs, strict=True)
            ]
        d = values[0] - y
        return d * d

    def step(self, X: list[list[float]], Y: list[float], rows: list[int], lr: float) -> float:
        total = sum((self.loss(X[i], Y[i]) for i in rows), self.value(0.0)) * (1.0 / len(rows))
        for p in self.params:
            p.grad = 0.0
        total.backward()
        for p in self.params:
            p.data -= lr * p.grad
        return total.data


def lesson_train(value: Callable, sigmoid: Callable, spec, epochs: int) -> float:
    """Train `spec` for `epochs` the lesson's way; the last step's loss."""
    data = load(spec.data)
    X, Y = data.X.tolist(), data.Y.tolist()
    net = LessonNet(value, sigmoid, initial(spec))
    batch = data.size if spec.update == "full" else 1
    loss = math.nan
    for order in orders(spec, epochs, data.size):
        for start in range(0, data.size, batch):
            loss = net.step(X, Y, order[start : start + batch], spec.learning_rate)
    return loss


# -- PyTorch ------------------------------------------------------------------------------


def torch_step(params: list, X, Y, lr: float) -> None:
    a = X
    for W, b in zip(params[::2], params[1::2], strict=True):
        a = torch.sigmoid(a @ W.T + b)
    loss = ((a[:, 0] - Y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None


def torch_train(spec: Spec, epochs: int):
    data = load(spec.data)
    X = torch.tensor(data.X, dtype=torch.float64)
    Y = torch.tensor(data.Y, dtype=torch.float64)
    params = []
    for W, b in initial(spec):
        params += [
            torch.tensor(W, dtype=torch.float64, requires_grad=True),
            torch.tensor(b, dtype=torch.float64, requires_grad=True),
        ]
    batch = data.size if spec.update == "full" else 1
    lr = spec.learning_rate
    for order in orders(spec, epochs, data.size):
        for start in range(0, data.size, batch):
            rows = order[start : start + batch]
            torch_step(params, X[rows], Y[rows], lr)
    return params


# -- hand-written numpy -------------------------------------------------------------------


def numpy_train(spec: Spec, epochs: int) -> list[np.ndarray]:
    data = load(spec.data)
    params = [a.copy() for W, b in initial(spec) for a in (W, b)]
    batch = data.size if spec.update == "full" else 1
    lr = spec.learning_rate
    for order in orders(spec, epochs, data.size):
        for start in range(0, data.size, batch):
            rows = order[start : start + batch]
            numpy_step(params, data.X[rows], data.Y[rows], lr)
    return params


def numpy_step(params: list[np.ndarray], X: np.ndarray, Y: np.ndarray, lr: float) -> None:
    acts = [X]
    for W, b in zip(params[::2], params[1::2], strict=True):
        acts.append(1.0 / (1.0 + np.exp(-(acts[-1] @ W.T + b))))
    delta = 2.0 * (acts[-1][:, 0] - Y)[:, None] / len(Y)
    for i in range(len(params) // 2 - 1, -1, -1):
        out = acts[i + 1]
        delta = delta * out * (1.0 - out)
        W = params[2 * i]
        grad_w, grad_b = delta.T @ acts[i], delta.sum(axis=0)
        delta = delta @ W
        params[2 * i] -= lr * grad_w
        params[2 * i + 1] -= lr * grad_b


# -- the run ------------------------------------------------------------------------------


def bit_identical(spec: Spec, epochs: int = 3) -> bool:
    """gradviz's compiled training against the plain engine graph, bit for bit (compiled
    whatever `uses_batches` would choose: for 3 epochs it runs batches, which agree to
    rounding, tests/test_batched.py)."""
    spec = spec_from_mapping({**spec.to_dict(), "epochs": epochs})
    chooser = T.uses_batches
    T.uses_batches = lambda *_: False
    try:
        result = T.train(spec, record=False)
    finally:
        T.uses_batches = chooser
    return result.network.flat() == rebuilt_train(spec, epochs).flat()


def training_runs(spec: Spec, epochs: int, scale: int):
    """The contenders training `spec` (gradviz for all its epochs, the others for
    epochs/scale, their times multiplied by scale)."""
    runs = {"gradviz": (lambda: gradviz_train(spec), 1.0)}
    short = epochs // scale
    if MicroValue:
        runs["micrograd"] = (
            lambda: lesson_train(MicroValue, micro_sigmoid, spec, short),
            float(scale),
        )
    if torch:
        runs["PyTorch"] = (lambda: torch_train(spec, short), float(scale))
    runs["numpy"] = (lambda: numpy_train(spec, short), float(scale))
    runs["engine, rebuilt"] = (lambda: rebuilt_train(spec, short), float(scale))
    runs["engine, fixed"] = (lambda: fixed_train(spec, short), float(scale))
    return runs


# calls of each contender per timed run of the deep step (each run about 0.05-0.3 s)
DEEP_STEPS = {"micrograd": 10, "engine, rebuilt": 20, "engine, fixed": 40}


def main() -> None:
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=150)
    if torch is not None:
        torch.set_num_threads(1)
    # The objects of the imported modules (PyTorch's are many) move out of the
    # collector's reach, so they do not slow the collections of micrograd's cyclic
    # garbage: each contender pays for collecting its own objects only.
    gc.collect()
    gc.freeze()
    measured: list[tuple[str, str, Timed]] = []

    xor = side_by_side(training_runs(XOR, XOR.epochs, 1), ROUNDS)
    measured.append(("xor 2-4-1, 1000 full-batch epochs", "xor", xor))
    circle = side_by_side(training_runs(CIRCLE, CIRCLE.epochs, SCALE), ROUNDS)
    measured.append(("circle 2-8-1, 2000 online epochs (160k updates)", "circle", circle))

    makers = deep_steps()
    for rows, label in (
        ([1], "deep 10×8 sigmoid, 1 online step (1 example)"),
        ([0, 1, 2, 3], "deep 10×8 sigmoid, 1 full-batch step (4 ex.)"),
    ):
        runs = {}
        for name, make in makers.items():
            steps = DEEP_STEPS.get(name, 200)
            runs[name] = (make(rows, steps), 1.0 / steps)
        measured.append((label, "deep", side_by_side(runs, 2 * ROUNDS + 1)))
    compile_seconds = compile_time()

    title = f"Training speed: medians of {ROUNDS} rounds (deep: {2 * ROUNDS + 1}), lower is better"
    table = Table(title=title)
    columns = ("workload", "gradviz", "micrograd", "PyTorch", "numpy", "× micrograd", "× PyTorch")
    for name in (*columns, "target"):
        table.add_column(name, justify="left" if name == "workload" else "right")
    ok = True
    for label, key, timed in measured:
        vs_micro, vs_torch = timed.ratio("micrograd")[0], timed.ratio("PyTorch")[0]
        met = vs_micro >= TARGETS[key] and (math.isnan(vs_torch) or vs_torch > 1.0)
        ok &= met
        table.add_row(
            label,
            *(_time(timed.median(name)) for name in ("gradviz", "micrograd", "PyTorch", "numpy")),
            _ratio(timed.ratio("micrograd")),
            _ratio(timed.ratio("PyTorch")),
            f"≥{TARGETS[key]:.0f}x, >1x {'ok' if met else 'MISSED'}",
        )
    console.print(table)
    console.print("× = how many times faster gradviz is: median of the per-round ratios (range)")

    other = Table(title="The same work on gradviz's engine run three ways (medians)")
    for name in ("workload", "compiled (gradviz)", "engine, rebuilt", "engine, fixed graph"):
        other.add_column(name, justify="left" if name == "workload" else "right")
    for label, _, timed in measured:
        other.add_row(
            label,
            _time(timed.median("gradviz")),
            f"{_time(timed.median('engine, rebuilt'))} ({_ratio(timed.ratio('engine, rebuilt'))})",
            f"{_time(timed.median('engine, fixed'))} ({_ratio(timed.ratio('engine, fixed'))})",
        )
    big = big_batch()
    other.add_row(
        "deep 10×8 sigmoid, 1 full-batch step (1000 ex.)",
        _time(big.median("gradviz")),
        "",
        f"{_time(big.median('engine, fixed'))} ({_ratio(big.ratio('engine, fixed'))})",
    )
    console.print(other)
    console.print(
        "rebuilt: a new graph of Values per example, then backward(). fixed graph: built once,\n"
        "re-evaluated in place; full batch: numpy arrays of the batch; online: floats"
    )
    console.print(
        f"deep net: compiling its graph ({DEEP.n_parameters} parameters) takes "
        f"{_time(compile_seconds)}, once"
    )
    if not FULL:
        console.print(
            f"circle: every contender but gradviz ran {CIRCLE.epochs // SCALE} epochs, "
            f"times ×{SCALE}"
        )
    if MicroValue is None:
        console.print("micrograd not installed: skipped (pip install -e '.[bench]')")
    if torch is None:
        console.print("PyTorch not installed: skipped (pip install torch to compare)")
    same = all(bit_identical(s) for s in (XOR, CIRCLE, DEEP))
    console.print(
        f"gradviz's training is bit-identical to the plain engine graph: {'yes' if same else 'NO'}"
    )
    console.print("all targets met" if ok and same else "TARGETS MISSED")


def _ratio(ratio: tuple[float, float, float]) -> str:
    middle, low, high = ratio
    if math.isnan(middle):
        return "—"
    digits = 1 if low >= 1 else 2
    return f"{middle:.{digits}f}x ({low:.{digits}f}-{high:.{digits}f})"


def _time(seconds: float) -> str:
    if math.isnan(seconds):
        return "—"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


if __name__ == "__main__":
    main()
