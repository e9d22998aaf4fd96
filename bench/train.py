"""Training speed: gradviz (compiled engine graph) against micrograd, PyTorch CPU and
hand-written numpy, the same arithmetic in each, side by side in one run.

Workloads (float64 everywhere, the same initial weights, data and example order):
- xor:    2-4-1 sigmoid, mse, 1000 full-batch epochs, lr 1.0 (4 examples);
- circle: 2-8-1 sigmoid, mse, 2000 online epochs on 80 points (160,000 updates), lr 0.5;
- deep:   one step (forward, backward, update) of a 10-layer width-8 sigmoid net, on
          one example (an online step) and on XOR's 4 (a full-batch step).
gradviz's times include building the graph and compiling it (xor, circle); for `deep`
the compile is reported on its own and the step is the steady state. micrograd has no
sigmoid: it gets one written in its own style (`_backward` closure, math.exp).

micrograd and PyTorch need about 50 s and 75 s for the full circle run, so by default
they run 1/10 of its epochs and the time is scaled by 10 (per-epoch cost is constant);
`GRADVIZ_BENCH_FULL=1` runs them in full. PyTorch runs single-threaded (as gradviz and
micrograd do) and is skipped when not installed; it is never a gradviz dependency.

Every figure is the best of several runs (`gc.collect()` before each, the collector on):
on a shared machine the other processes only ever add time, so the minimum is the
steadiest estimate of what each contender costs, and all of them are measured the same way.

Run: `make bench`, or `python bench/train.py` with the `bench` extra installed.
"""

from __future__ import annotations

import gc
import math
import os
import time
from collections.abc import Callable

import numpy as np
from rich.console import Console
from rich.table import Table

from gradviz import nn
from gradviz import train as T
from gradviz.data import load

try:
    from micrograd.engine import Value as MicroValue
except ImportError:  # pragma: no cover - a bench-only dependency
    MicroValue = None
try:
    import torch
except ImportError:  # pragma: no cover - optional, never a dependency
    torch = None

RUNS = 3
FULL = os.environ.get("GRADVIZ_BENCH_FULL") == "1"
SCALE = 1 if FULL else 10  # micrograd and PyTorch run 1/SCALE of the circle epochs
TARGETS = {"xor": 10.0, "circle": 5.0, "deep": 10.0}  # x faster than micrograd

XOR = nn.spec_from_mapping({**nn.PRESETS["xor"], "epochs": 1000})
CIRCLE = nn.spec_from_mapping({**nn.PRESETS["circle"], "epochs": 2000})
DEEP = nn.spec_from_mapping({**nn.PRESETS["deep-sigmoid"], "epochs": 1})


def best_time(run: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def orders(spec: nn.Spec, epochs: int, n: int) -> list[list[int]]:
    """The example order of every epoch, as gradviz's training draws it."""
    if spec.update == "full":
        return [list(range(n))] * epochs
    rng = np.random.default_rng(np.random.SeedSequence(spec.seed, spawn_key=(1,)))
    return [rng.permutation(n).tolist() for _ in range(epochs)]


def initial(spec: nn.Spec) -> list[tuple[np.ndarray, np.ndarray]]:
    return nn.Network.from_spec(spec).weights()


# -- gradviz ------------------------------------------------------------------------------


def gradviz_train(spec: nn.Spec) -> T.Result:
    T._compile.cache_clear()  # every run builds and compiles its graph again
    return T.train(spec, record=False)


def deep_steps() -> dict[str, Callable[[list[int], int], Callable[[], None]]]:
    """For each contender, a maker of `run()`: `steps` updates of the deep net on the
    examples `rows`, all set up beforehand (only the steps are timed)."""
    data = load(DEEP.data)
    X, Y = data.X.tolist(), data.Y.tolist()
    makers: dict[str, Callable[[list[int], int], Callable[[], None]]] = {}

    def gradviz_maker(rows: list[int], steps: int) -> Callable[[], None]:
        net = nn.Network.from_spec(DEEP)
        compiled = T.compile_network(net, online=len(rows) == 1)  # as training would
        P, XT = net.flat(), [tuple(r) for r in X]
        n = len(rows)

        def run() -> None:
            for _ in range(steps):
                compiled.run(P, XT, Y, rows, 0, n, n, 1.0, 0.0, -0.0, 0)

        return run

    makers["gradviz"] = gradviz_maker
    if MicroValue:

        def micro_maker(rows: list[int], steps: int) -> Callable[[], None]:
            micro = MicroNet(initial(DEEP))
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
    return makers


def compile_time() -> float:
    T._compile.cache_clear()
    start = time.perf_counter()
    T.compile_network(nn.Network.from_spec(DEEP))
    return time.perf_counter() - start


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


class MicroNet:
    def __init__(self, weights: list[tuple[np.ndarray, np.ndarray]]) -> None:
        self.layers = [
            (
                [[MicroValue(w) for w in row] for row in W.tolist()],
                [MicroValue(b) for b in bs.tolist()],
            )
            for W, bs in weights
        ]
        self.params = [
            p for W, bs in self.layers for row, b in zip(W, bs, strict=True) for p in (*row, b)
        ]

    def loss(self, x: list[float], y: float):
        values = x
        for W, bs in self.layers:
            values = [
                micro_sigmoid(sum((w * v for w, v in zip(row, values, strict=True)), b))
                for row, b in zip(W, bs, strict=True)
            ]
        d = values[0] - y
        return d * d

    def step(self, X: list[list[float]], Y: list[float], rows: list[int], lr: float) -> float:
        total = sum((self.loss(X[i], Y[i]) for i in rows), MicroValue(0.0)) * (1.0 / len(rows))
        for p in self.params:
            p.grad = 0.0
        total.backward()
        for p in self.params:
            p.data -= lr * p.grad
        return total.data


def micrograd_train(spec: nn.Spec, epochs: int) -> MicroNet:
    data = load(spec.data)
    X, Y = data.X.tolist(), data.Y.tolist()
    net = MicroNet(initial(spec))
    batch = data.size if spec.update == "full" else 1
    for order in orders(spec, epochs, data.size):
        for start in range(0, data.size, batch):
            net.step(X, Y, order[start : start + batch], spec.learning_rate)
    return net


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


def torch_train(spec: nn.Spec, epochs: int):
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


def numpy_train(spec: nn.Spec, epochs: int) -> list[np.ndarray]:
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


def bit_identical(spec: nn.Spec, epochs: int = 3) -> bool:
    """gradviz's compiled training against the plain engine graph, bit for bit."""
    spec = nn.spec_from_mapping({**spec.to_dict(), "epochs": epochs})
    result = T.train(spec, record=False)
    data = load(spec.data)
    net = nn.Network.from_spec(spec)
    batch = data.size if spec.update == "full" else 1
    for order in orders(spec, epochs, data.size):
        for start in range(0, data.size, batch):
            rows = order[start : start + batch]
            T.reference_step(net, data.X[rows].tolist(), data.Y[rows].tolist(), spec.learning_rate)
    return result.network.flat() == net.flat()


def main() -> None:
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=150)
    if torch is not None:
        torch.set_num_threads(1)
    rows_out = []

    # XOR, 1000 full-batch epochs
    g = best_time(lambda: gradviz_train(XOR), 5)
    m = best_time(lambda: micrograd_train(XOR, XOR.epochs)) if MicroValue else math.nan
    t = best_time(lambda: torch_train(XOR, XOR.epochs)) if torch else math.nan
    n = best_time(lambda: numpy_train(XOR, XOR.epochs))
    rows_out.append(("xor 2-4-1, 1000 full-batch epochs", "xor", g, m, t, n))

    # circle, 2000 online epochs (160,000 updates)
    short = CIRCLE.epochs // SCALE
    g = best_time(lambda: gradviz_train(CIRCLE))
    m = best_time(lambda: micrograd_train(CIRCLE, short)) * SCALE if MicroValue else math.nan
    t = best_time(lambda: torch_train(CIRCLE, short)) * SCALE if torch else math.nan
    n = best_time(lambda: numpy_train(CIRCLE, short)) * SCALE
    rows_out.append(("circle 2-8-1, 2000 online epochs (160k updates)", "circle", g, m, t, n))

    # one step of the 10-layer width-8 sigmoid net: online (1 example) and full batch (4)
    makers = deep_steps()
    for rows, label in (
        ([1], "deep 10×8 sigmoid, one online step (1 example)"),
        ([0, 1, 2, 3], "deep 10×8 sigmoid, one full-batch step (4 examples)"),
    ):
        per_step = {}
        for name, make in makers.items():
            steps = 10 if name == "micrograd" else 200
            per_step[name] = best_time(make(rows, steps), 7) / steps
        times = [per_step.get(k, math.nan) for k in ("gradviz", "micrograd", "PyTorch", "numpy")]
        rows_out.append((label, "deep", *times))
    compile_seconds = compile_time()

    table = Table(title="Training speed (best of runs; lower is better)")
    for name in (
        "workload",
        "gradviz",
        "micrograd",
        "PyTorch",
        "numpy",
        "× micrograd",
        "× PyTorch",
        "target",
    ):
        table.add_column(name, justify="left" if name == "workload" else "right")
    ok = True
    for label, key, g, m, t, n in rows_out:
        vs_micro = m / g
        vs_torch = t / g
        met = vs_micro >= TARGETS[key] and (math.isnan(vs_torch) or vs_torch > 1.0)
        ok &= met
        table.add_row(
            label,
            _time(g),
            _time(m),
            _time(t),
            _time(n),
            f"{vs_micro:.1f}x",
            "—" if math.isnan(vs_torch) else f"{vs_torch:.1f}x",
            f"≥{TARGETS[key]:.0f}x, >1x {'ok' if met else 'MISSED'}",
        )
    console.print(table)
    console.print(
        f"deep net: compiling its graph (609 parameters) takes {_time(compile_seconds)}, once"
    )
    if not FULL:
        console.print(f"circle: micrograd, PyTorch and numpy ran {short} epochs, times ×{SCALE}")
    if torch is None:
        console.print("PyTorch not installed: skipped (pip install torch to compare)")
    same = all(bit_identical(s) for s in (XOR, CIRCLE, DEEP))
    console.print(
        f"gradviz's training is bit-identical to the plain engine graph: {'yes' if same else 'NO'}"
    )
    console.print("all targets met" if ok and same else "TARGETS MISSED")


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
