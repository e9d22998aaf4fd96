"""The Value engine driven micrograd-style: the lesson's own loop, gradviz against micrograd.

The same Python drives both engines (`LessonNet` in bench/train.py, written as micrograd's
README and lesson write it): every step builds the graph of `Value`s again from the weights,
sums the examples' losses, sets every parameter's grad to 0, calls `backward()` and updates
the weights. Nothing is compiled: this measures the engine itself (node creation, the
topological order, the backward pass), as a learner who writes the loop by hand uses it.

Workloads (float64, the same initial weights, data and example order as bench/train.py):
- xor:    2-4-1 sigmoid, mse, 1000 full-batch epochs (4 examples a step);
- circle: 2-8-1 sigmoid, mse, online (one example a step), 200 epochs of 80 points
          (16,000 steps; bench/train.py's 2000 epochs take 10x as long for the same ratio).
micrograd has no sigmoid: it gets one in its own style (bench/train.py's `micro_sigmoid`);
gradviz calls `Value.sigmoid()`.

Timing: the two engines alternate run by run (who goes first alternates), `gc.collect()`
before each run with the collector on; a ratio is the median of the per-round ratios.
Target: gradviz >= 3x micrograd on both (issue 32's aim for the plain engine; issue 10's
4x was the generated engine's). Missed: about 2x (bench/README.md).

Run: `python bench/run.py lesson`, or `python bench/lesson.py` with the `bench` extra.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))

import train as bench  # bench/train.py: the specs, initial weights, example orders, timing

from gradviz.engine import Value

ROUNDS = 7
TARGET = 3.0
CIRCLE_EPOCHS = 200


def runs(spec, epochs: int) -> dict[str, tuple[Callable[[], object], float]]:
    contenders = {"gradviz": (lambda: bench.lesson_train(Value, Value.sigmoid, spec, epochs), 1.0)}
    if bench.MicroValue is not None:
        contenders["micrograd"] = (
            lambda: bench.lesson_train(bench.MicroValue, bench.micro_sigmoid, spec, epochs),
            1.0,
        )
    return contenders


def main() -> None:
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=120)
    if bench.MicroValue is None:
        console.print("micrograd not installed: skipped (pip install -e '.[bench]')")
        return
    workloads = [
        ("xor 2-4-1, 1000 full-batch epochs", bench.XOR, 1000),
        (f"circle 2-8-1, {CIRCLE_EPOCHS} online epochs", bench.CIRCLE, CIRCLE_EPOCHS),
    ]
    table = Table(title=f"The lesson's loop on each engine: medians of {ROUNDS} rounds")
    for name in ("workload", "gradviz", "micrograd", "× micrograd", "target"):
        table.add_column(name, justify="left" if name == "workload" else "right")
    ok = True
    for label, spec, epochs in workloads:
        contenders = runs(spec, epochs)
        same = [run() for run, _ in contenders.values()]
        # the same arithmetic: the losses agree to rounding (exp is math's in both)
        assert math.isclose(same[0], same[1], rel_tol=1e-9), same
        timed = bench.side_by_side(contenders, ROUNDS)
        ratio = timed.ratio("micrograd")
        met = ratio[0] >= TARGET
        ok &= met
        table.add_row(
            label,
            bench._time(timed.median("gradviz")),
            bench._time(timed.median("micrograd")),
            bench._ratio(ratio),
            f"≥{TARGET:.0f}x {'ok' if met else 'MISSED'}",
        )
    console.print(table)
    console.print("× = how many times faster gradviz is: median of the per-round ratios (range)")
    console.print("all targets met" if ok else "TARGETS MISSED")


if __name__ == "__main__":
    main()
