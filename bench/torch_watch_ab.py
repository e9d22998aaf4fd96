"""Two checkouts' recorders watching the same loop every step, in one process (issue 29).

The recorder (gradviz/torch/recorder.py) and the activations' slopes it reads
(gradviz/torch/activations.py) of BEFORE, loaded beside this checkout's under other
module names (the rest of gradviz is this checkout's), and the plain loop: an MLP
784-256-256-10 of one activation, batch 64, float32, CPU, cross-entropy, SGD, torch on 1
thread, each variant on its own copy of the same model. Rounds of a block of steps of
each variant, the order rotating from round to round; the figure is each variant's median
thread CPU time a step (`time.thread_time`: on a shared machine the wall clock also
counts the time other jobs held the core), its overhead against the plain loop's median;
and the median of the rounds' differences, after less before (the same round's load).
Both recorders' histories are compared at the end (their `Diagnosis.to_dict()`, as JSON).

Usage: `python bench/torch_watch_ab.py BEFORE_CHECKOUT [ROUNDS] [ACTIVATION...]`
(activations: gelu silu relu sigmoid, the default all four; needs torch).
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import statistics
import sys
from pathlib import Path
from types import ModuleType

import torch
from torch_watch import step_timer  # (bench/: this script's folder)

import gradviz.torch.recorder as after

STEPS = 20  # per round and variant
BATCH = 64


def _loaded(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def before_recorder(checkout: Path) -> ModuleType:
    """BEFORE's recorder, reading BEFORE's activations (its slopes, bands, quadratics)."""
    torch_dir = checkout / "gradviz" / "torch"
    activations = _loaded(torch_dir / "activations.py", "gradviz.torch.activations_before")
    ours = sys.modules["gradviz.torch.activations"]
    sys.modules["gradviz.torch.activations"] = activations  # (for its `from ... import`)
    try:
        return _loaded(torch_dir / "recorder.py", "gradviz.torch.recorder_before")
    finally:
        sys.modules["gradviz.torch.activations"] = ours


def _activation(kind: str) -> torch.nn.Module:
    nn = torch.nn
    made = {"gelu": lambda: nn.GELU(approximate="tanh"), "silu": nn.SiLU, "relu": nn.ReLU}
    return made.get(kind, nn.Sigmoid)()


def bench(kind: str, before: ModuleType, rounds: int) -> None:
    nn = torch.nn
    torch.manual_seed(0)
    layers = [nn.Linear(784, 256), _activation(kind), nn.Linear(256, 256)]
    base = nn.Sequential(*layers, _activation(kind), nn.Linear(256, 10))
    x, y = torch.randn(BATCH, 784), torch.randint(0, 10, (BATCH,))
    loss_of = nn.CrossEntropyLoss()

    def variant(recorder: ModuleType | None):  # type: ignore[no-untyped-def]
        net = copy.deepcopy(base)
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
        rec = recorder.watch(net, every=1, optimizer=opt) if recorder else None
        return step_timer(net, opt, loss_of, x, y, rec), rec

    runs = {"plain": variant(None), "before": variant(before), "after": variant(after)}
    for steps, _ in runs.values():
        steps(10)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(rounds):
        names = list(runs)
        for name in names[r % 3 :] + names[: r % 3]:
            times[name].append(runs[name][0](STEPS))
    plain = statistics.median(times["plain"])
    figures = [f"{kind:8s} plain {plain * 1e3:.3f} ms"]
    for name in ("before", "after"):
        median = statistics.median(times[name])
        figures.append(f"{name} {median * 1e3:.3f} ms {(median / plain - 1) * 100:+.1f}%")
    paired = statistics.median(b - a for a, b in zip(times["before"], times["after"], strict=True))
    figures.append(f"after - before {paired * 1e6:+.0f} us")

    def dumped(rec) -> list[str]:  # type: ignore[no-untyped-def]
        return [json.dumps(d.to_dict(), sort_keys=True, default=str) for _, d in rec.history()]

    same = dumped(runs["before"][1]) == dumped(runs["after"][1])
    print("  ".join(figures), "histories", "same" if same else "DIFFERENT", flush=True)


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit("usage: python bench/torch_watch_ab.py BEFORE [ROUNDS] [ACTIVATION...]")
    torch.set_num_threads(1)
    before = before_recorder(Path(argv[0]))
    rounds = int(argv[1]) if len(argv) > 1 else 30
    kinds = argv[2:] or ["gelu", "silu", "relu", "sigmoid"]
    print("load average: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()), flush=True)
    for kind in kinds:
        bench(kind, before, rounds)
    print("load average: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
