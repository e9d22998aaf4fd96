"""gradviz.torch: what watching a training loop costs, and how long drawing a loss takes.

- **watch**: an MLP 784-256-256-10 (ReLU), batch 128, float32, CPU, cross-entropy, SGD:
  the plain loop against the same loop watched at the default cadence (`every=50`) and
  watched every step. The three run interleaved in rounds (each round times a block of
  steps of each, the order rotating), each on its own copy of the same model; medians of the
  per-step time over rounds, ratios from the same rounds. The time is the thread's CPU
  time (`time.thread_time`, torch on 1 thread): on a shared machine the wall clock also
  counts the time other jobs held the core, which comes and goes between variants.
  Targets: ≤ 2% at the default cadence, ≤ 15% every step. Reading the numbers
  (`rec.history()`) is outside the loop, timed on its own. Then the same with
  `nn.GELU(approximate="tanh")` for ReLU: an activation whose slope the recorder computes
  from the op row at the module's input (one more pass over the pre-activations).
- **draw**: the loss of a 2-16-16-1 MLP (tanh, sigmoid output) on one example after
  `backward()`: `gradviz.torch.diagram` and its SVG (Graphviz) against torchviz's
  `make_dot(...).render()` of the same graph when torchviz is installed (`pip install
  torchviz`, the `bench-torch` extra); medians of 7. Target: ≤ 1 s, torch already imported.

Usage: `python bench/run.py torch_watch` (needs torch: `make torch`).
"""

from __future__ import annotations

import copy
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROUNDS = 25
STEPS = 50  # per round and variant: the default cadence, so each block records one step
WARMUP = 30


def _model(kind: str):
    """The watched models: the 784-256-256-10 MLP (ReLU or GELU(tanh)), and a small conv
    net (two 3x3 convolutions with BatchNorm and ReLU on 1x28x28, a linear head)."""
    import torch

    nn = torch.nn
    if kind == "cnn":
        model = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(32 * 7 * 7, 10),
        )  # fmt: skip
        return model, torch.randn(32, 1, 28, 28), torch.randint(0, 10, (32,))

    def act() -> nn.Module:
        return nn.ReLU() if kind == "relu" else nn.GELU(approximate="tanh")

    layers = [nn.Linear(784, 256), act(), nn.Linear(256, 256), act(), nn.Linear(256, 10)]
    model = nn.Sequential(*layers)
    return model, torch.randn(128, 784), torch.randint(0, 10, (128,))


def step_timer(net, optimizer, loss_fn, x, y, rec=None):  # type: ignore[no-untyped-def]
    """`steps(n)`: n training steps of `net` on (x, y), each loss logged to `rec` where one
    watches; the thread's CPU seconds a step (also bench/torch_watch_ab.py's loop)."""

    def steps(n: int) -> float:
        start = time.thread_time()
        for _ in range(n):
            optimizer.zero_grad()
            loss = loss_fn(net(x), y)
            loss.backward()
            optimizer.step()
            if rec is not None:
                rec.log(loss=loss)
        return (time.thread_time() - start) / n

    return steps


def _watch_bench(kind: str = "relu") -> None:
    import torch

    from gradviz.torch import watch
    from gradviz.torch.recorder import DEFAULT_EVERY

    torch.set_num_threads(1)  # a shared 2-core machine: two threads fight the other jobs
    torch.manual_seed(0)
    base, X, Y = _model(kind)
    loss_fn = torch.nn.CrossEntropyLoss()

    def variant(every: int | None, nan_check: bool = True):
        net = copy.deepcopy(base)
        optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
        rec = None
        if every is not None:
            rec = watch(net, every=every, optimizer=optimizer, nan_check=nan_check)

        return step_timer(net, optimizer, loss_fn, X, Y, rec), rec

    names = (
        "plain",
        f"every={DEFAULT_EVERY} (default)",
        f"every={DEFAULT_EVERY}, no NaN check",
        "every=1",
    )
    runs = [variant(None), variant(DEFAULT_EVERY), variant(DEFAULT_EVERY, False), variant(1)]
    for steps, _ in runs:
        steps(WARMUP)
    times: dict[str, list[float]] = {name: [] for name in names}
    ratios: dict[str, list[float]] = {name: [] for name in names[1:]}
    for r in range(ROUNDS):
        order = [(r + k) % len(runs) for k in range(len(runs))]
        got = {}
        for k in order:
            got[names[k]] = runs[k][0](STEPS)
        for name in names:
            times[name].append(got[name])
        for name in names[1:]:
            ratios[name].append(got[name] / got["plain"] - 1)
    print(f"{kind}: torch {torch.__version__}, {torch.get_num_threads()} threads")
    for name in names:
        print(f"  {name:<30} {statistics.median(times[name]) * 1e3:7.3f} ms/step (median, CPU)")
    targets = {names[1]: 0.02, names[2]: 0.02, names[3]: 0.15}
    for name, target in targets.items():
        overhead = statistics.median(ratios[name])
        ok = "ok" if overhead <= target else "NO"
        print(f"  {name:<30} overhead {100 * overhead:+6.2f}% (target ≤ {100 * target:g}%): {ok}")
    rec = runs[-1][1]
    start = time.perf_counter()
    recorded = rec.history()
    took = time.perf_counter() - start
    print(f"  reading {len(recorded)} recorded steps (every=1): {took * 1e3:.1f} ms in all")


def _draw_bench() -> None:
    import torch

    from gradviz.output import render
    from gradviz.torch import diagram

    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(2, 16),
        torch.nn.Tanh(),
        torch.nn.Linear(16, 16),
        torch.nn.Tanh(),
        torch.nn.Linear(16, 1),
        torch.nn.Sigmoid(),
    )
    loss = ((net(torch.tensor([[1.0, -0.5]])) - 1.0) ** 2).mean()
    loss.backward()

    def ours() -> None:
        render(diagram(loss, net), "svg")

    timings = {"gradviz (diagram + SVG)": ours}
    try:
        from torchviz import make_dot
    except ImportError:
        print("  torchviz not installed (pip install torchviz): no comparison")
    else:
        folder = Path(tempfile.mkdtemp(prefix="gradviz-bench-"))

        def theirs() -> None:
            make_dot(loss, params=dict(net.named_parameters())).render(
                folder / "torchviz", format="svg", cleanup=True
            )

        timings["torchviz make_dot().render()"] = theirs
    results: dict[str, list[float]] = {name: [] for name in timings}
    for _ in range(7):
        for name, run in timings.items():
            start = time.perf_counter()
            run()
            results[name].append(time.perf_counter() - start)
    for name, values in results.items():
        median = statistics.median(values)
        verdict = "" if "torchviz" in name else f" (target ≤ 1 s: {'ok' if median <= 1 else 'NO'})"
        print(f"  draw, {name:<30} {median * 1e3:7.1f} ms (median of 7){verdict}")


def main(kinds: Sequence[str] = ()) -> None:
    """Every bench (the three watched models, then the drawing), or the watched `kinds`
    alone (`python bench/torch_watch.py cnn`)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torch is not installed (make torch installs torch==2.13.0): skipped")
        return
    for kind in kinds or ("relu", "gelu", "cnn"):
        _watch_bench(kind)
    if not kinds:
        _draw_bench()


if __name__ == "__main__":
    main(sys.argv[1:])
