"""Where batched training overtakes compiled code: the measurement behind
`gradviz.train.uses_batches` (its constants, and whether its choices are right).

For a grid of networks (widths, depths) and batch sizes it measures, in one process,
rounds interleaved, medians:
- compiled: compiling the network's graph (the cache cleared), and one epoch of updates;
- batched (gradviz.batched): one epoch of updates.
From them the cost model's constants (seconds per example per parameter, per parameter
compiled, per layer per batched update), then, for every case, which execution was faster
over `EPOCHS` epochs and which one the rule picks.

Run: `python bench/crossover.py` (or `make bench`).
"""

from __future__ import annotations

import gc
import os
import statistics
import time

# one BLAS thread, as gradviz's CLI runs (gradviz.cli.BLAS_THREADS), set before numpy loads
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from gradviz import compile as C  # noqa: E402
from gradviz import nn  # noqa: E402
from gradviz import train as T  # noqa: E402
from gradviz.batched import Batched  # noqa: E402
from gradviz.nn import parameter_count  # noqa: E402

ROUNDS = 5
EPOCHS = 300  # the lesson's deep networks train 300
# (layer sizes, examples, batch): tiny to the largest the spec limits allow
CASES = [
    ((2, 4, 1), 4, 4),
    ((2, 8, 1), 80, 1),
    ((2, 8, 1), 80, 80),
    ((2, 16, 16, 1), 100, 100),
    ((2, 16, 16, 1), 100, 10),
    ((2, 16, 16, 1), 100, 1),
    ((2, *[8] * 9, 1), 4, 4),
    ((2, *[16] * 9, 1), 80, 80),
    ((2, *[16] * 9, 1), 80, 8),
    ((2, *[16] * 9, 1), 80, 1),
    ((2, 64, 70, 1), 200, 200),
    ((2, 64, 70, 1), 200, 1),
]


def _data(sizes: tuple[int, ...], n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.5, 1.5, size=(n, sizes[0]))
    return X, (np.sum(X * X, axis=1) < 1.0).astype(np.float64)


def _network(sizes: tuple[int, ...]) -> nn.Network:
    net = nn.Network(sizes, ("sigmoid",) * (len(sizes) - 1))
    net.initialise("default", 0)
    return net


def measure(sizes: tuple[int, ...], n: int, batch: int) -> dict[str, float]:
    """Medians of ROUNDS interleaved rounds: compile seconds, compiled and batched epoch
    seconds."""
    X, Y = _data(sizes, n)
    net = _network(sizes)
    order = list(range(n))
    XT, YT = [tuple(r) for r in X.tolist()], Y.tolist()
    times: dict[str, list[float]] = {"compile": [], "compiled": [], "batched": []}
    epochs = max(1, min(50, int(2e5 // (n * parameter_count(sizes)))))
    for _ in range(ROUNDS):
        gc.collect()
        C._compile.cache_clear()
        start = time.process_time()
        compiled = C.compile_network(net, online=batch == 1)
        times["compile"].append(time.process_time() - start)
        P = net.flat()
        start = time.process_time()
        for _ in range(epochs):
            compiled.run(P, XT, YT, order, 0, n, batch, 0.1, 0.0, -0.0, 0)
        times["compiled"].append((time.process_time() - start) / epochs)
        batched = Batched(net)
        Q = np.array(net.flat())
        start = time.process_time()
        for _ in range(epochs):
            batched.run(Q, X, Y, order, 0, n, batch, 0.1, 0.0)
        times["batched"].append((time.process_time() - start) / epochs)
    return {key: statistics.median(values) for key, values in times.items()}


def main() -> None:
    console = Console()
    rows = []
    for sizes, n, batch in CASES:
        rows.append((sizes, n, batch, measure(sizes, n, batch)))
    # the constants: per example per parameter (compiled), per parameter (compiling),
    # per layer per update (batched, its fixed cost), from the cases that show each best
    step = statistics.median(m["compiled"] / (n * parameter_count(s)) for s, n, _, m in rows)
    compile_cost = statistics.median(m["compile"] / parameter_count(s) for s, _, _, m in rows)
    layer = statistics.median(
        m["batched"] / ((len(s) - 1) * -(-n // b)) for s, n, b, m in rows if b == 1
    )
    flops = statistics.median(
        (m["batched"] - layer * (len(s) - 1) * -(-n // b)) / (n * parameter_count(s))
        for s, n, b, m in rows
        if b == n and n * parameter_count(s) > 1e5
    )
    table = Table(title=f"Compiled against batched, {EPOCHS} epochs (medians of {ROUNDS} rounds)")
    for column in ("network", "examples", "batch", "compile", "compiled epoch", "batched epoch"):
        table.add_column(column, justify="right")
    table.add_column(f"faster over {EPOCHS}", justify="right")
    table.add_column("rule picks", justify="right")
    wrong = 0
    for sizes, n, batch, m in rows:
        compiled_total = m["compile"] + EPOCHS * m["compiled"]
        batched_total = EPOCHS * m["batched"]
        faster = "batched" if batched_total < compiled_total else "compiled"
        picked = "batched" if T.uses_batches(sizes, n, batch, EPOCHS) else "compiled"
        ratio = max(compiled_total, batched_total) / min(compiled_total, batched_total)
        wrong += picked != faster and ratio > 1.5
        table.add_row(
            "-".join(map(str, sizes)) if len(sizes) < 6 else f"2-{sizes[1]}x{len(sizes) - 2}-1",
            str(n),
            str(batch),
            f"{m['compile'] * 1e3:.1f} ms",
            f"{m['compiled'] * 1e3:.3f} ms",
            f"{m['batched'] * 1e3:.3f} ms",
            f"{faster} ({ratio:.1f}x)",
            picked + ("" if picked == faster else " (!)"),
        )
    console.print(table)
    console.print(
        f"measured: compiled {step:.2e} s per example per parameter, compiling "
        f"{compile_cost:.2e} s per parameter, batched {layer:.2e} s per layer per update "
        f"and {flops:.1e} s per example per parameter; "
        f"rule: COMPILED_STEP {T.COMPILED_STEP:.1e}, COMPILE_COST {T.COMPILE_COST:.1e}, "
        f"BATCHED_LAYER {T.BATCHED_LAYER:.1e}, BATCHED_STEP {T.BATCHED_STEP:.1e}"
    )
    console.print(
        "the rule picks the slower execution by more than 1.5x in "
        f"{wrong} of {len(rows)} cases" + (" yes" if not wrong else " NO")
    )


if __name__ == "__main__":
    main()
