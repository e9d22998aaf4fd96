"""Training as a user runs it: whole-process CPU time of `gradviz train` (and `compare`)
beside the same training hand-written in numpy (bench/numpy_train.py) and in micrograd
(bench/micrograd_train.py), ratios in one run.

Workloads (the same initial weights, data, example order and learning rate everywhere: the
two scripts read them from a file written here from the gradviz spec):
- deep-sigmoid and deep-relu (samples/*.toml): ten layers (2, 9×16, 1), circle 80 points,
  full batch, 300 epochs; and `gradviz compare deep-sigmoid deep-relu --epochs 300`;
- xor: 2-4-1 sigmoid, 1000 full-batch epochs; circle: 2-8-1 sigmoid, 2000 online epochs of
  80 points (bench/train.py's workloads);
- moons: micrograd's demo (samples/moons.toml), 2-16-16-1 relu, hinge, l2, linear schedule;
- largest: 2-48-48-48-1 (4,897 parameters of the 5,000 `spec.MAX_PARAMETERS` allows), relu,
  circle 600 points, full batch, 300 epochs (8.8e8 of the 1e9 steps `train.MAX_WORK` allows).

Timing: CPU time (user + system, `os.wait4`) of each whole process, interpreter start,
imports and exit included, output to /dev/null, run from this checkout's .venv with the
bytecode cache on (as a user's install has it). Every round runs each command once, in an
order rotating from round to round; a ratio is the median of the per-round ratios (range),
so load that comes and goes hits both sides. The numpy script runs with one BLAS thread,
as gradviz's CLI sets for itself (gradviz.cli.BLAS_THREADS), so the ratio is gradviz's own
cost; "numpy, default threads" is the script as it runs untouched, for information.
micrograd trains only the first few epochs (whole processes of 0 and k epochs: start-up,
then the per-epoch cost, which is constant, times the workload's epochs).

Run: `python bench/whole.py` (or `make bench`, which installs micrograd).
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from gradviz import nn
from gradviz.spec import PRESETS, Spec, spec_from_mapping
from gradviz.train import load_data

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PYTHON = sys.executable
GRADVIZ = str(Path(PYTHON).parent / "gradviz")
ROUNDS = 5
MICRO_ROUNDS = 3  # (the largest network's: 1)
# micrograd's one epoch of the largest network takes minutes and about 5 GB: only with
# GRADVIZ_BENCH_FULL=1 (2026-12-02: 230 s an epoch, so about 19 hours for 300)
FULL = os.environ.get("GRADVIZ_BENCH_FULL") == "1"

LARGEST = {
    "name": "largest",
    "layers": [2, 48, 48, 48, 1],
    "activation": "relu",
    "init": "he",
    "data": {"name": "circle", "size": 600},
    "epochs": 300,
    "learning_rate": 0.05,
    "update": "full",
}
# name: (spec, gradviz's arguments, micrograd's epochs)
WORKLOADS: dict[str, tuple[dict, list[str], int]] = {
    "deep-sigmoid": (PRESETS["deep-sigmoid"], ["train", "samples/deep-sigmoid.toml"], 1),
    "deep-relu": (PRESETS["deep-relu"], ["train", "samples/deep-relu.toml"], 1),
    "xor": ({**PRESETS["xor"], "epochs": 1000}, ["train", "xor", "--epochs", "1000"], 1000),
    "circle": (PRESETS["circle"], ["train", "circle"], 50),
    "moons": (PRESETS["moons"], ["train", "samples/moons.toml"], 5),
    "largest": (LARGEST, ["train", "LARGEST"], 1),
}
COMPARE = ["compare", "deep-sigmoid", "deep-relu", "--epochs", "300"]


def environment(blas_threads: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(name, None)
        if blas_threads:
            env[name] = blas_threads
    return env


def cpu(command: list[str], env: dict[str, str]) -> float:
    """User + system CPU seconds of one whole process."""
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    error = process.stderr.read().decode() if process.stderr else ""
    if process.returncode not in (0, 1):  # 1: a divergence, reported like any training
        raise RuntimeError(f"{' '.join(command)} failed ({process.returncode}): {error}")
    return usage.ru_utime + usage.ru_stime


def workload_file(spec: Spec, folder: Path) -> Path:
    """What the two scripts train: the spec's network, data, weights and example order."""
    data = load_data(spec)
    network = nn.Network.from_spec(spec)
    online = spec.update == "online"
    orders = []
    if online:  # the order gradviz's training draws
        rng = np.random.default_rng(np.random.SeedSequence(spec.seed, spawn_key=(1,)))
        orders = [rng.permutation(data.size).tolist() for _ in range(spec.epochs)]
    assert spec.update in ("full", "online") and spec.loss in ("mse", "hinge")
    hidden = set(spec.activations[:-1])
    assert len(hidden) == 1
    content = {
        "hidden": hidden.pop(),
        "output": spec.activations[-1],
        "loss": spec.loss,
        "lr": spec.learning_rate,
        "lr_end": spec.lr_end if spec.lr_schedule == "linear" else None,
        "l2": spec.l2,
        "epochs": spec.epochs,
        "online": online,
        "orders": orders,
        "X": data.X.tolist(),
        "Y": data.Y.tolist(),
        "weights": [[W.tolist(), b.tolist()] for W, b in network.weights()],
    }
    path = folder / f"{spec.name}.json"
    path.write_text(json.dumps(content))
    return path


def ratio(a: list[float], b: list[float]) -> tuple[float, float, float]:
    ratios = [x / y for x, y in zip(a, b, strict=True)]
    return statistics.median(ratios), min(ratios), max(ratios)


def rounds(commands: dict[str, tuple[list[str], dict[str, str]]], count: int) -> dict:
    """Each command once per round, in an order rotating from round to round."""
    names = list(commands)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(count):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            command, env = commands[name]
            times[name].append(cpu(command, env))
    return times


def main() -> None:
    console = Console()
    gradviz_env, one_thread, default = environment(None), environment("1"), environment(None)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        largest_toml = folder / "largest.toml"
        largest_toml.write_text(
            "\n".join(
                f"{key} = {json.dumps(value)}" for key, value in LARGEST.items() if key != "data"
            )
            + '\ndata = { name = "circle", size = 600 }\n'
        )
        commands: dict[str, tuple[list[str], dict[str, str]]] = {}
        files = {}
        for name, (raw, args, _) in WORKLOADS.items():
            spec = spec_from_mapping(raw)
            files[name] = workload_file(spec, folder)
            args = [str(largest_toml) if a == "LARGEST" else a for a in args]
            commands[f"{name}: gradviz"] = ([GRADVIZ, *args, "--quiet"], gradviz_env)
            script = [PYTHON, str(HERE / "numpy_train.py"), str(files[name])]
            commands[f"{name}: numpy"] = (script, one_thread)
            commands[f"{name}: numpy, default threads"] = (script, default)
        commands["compare: gradviz"] = ([GRADVIZ, *COMPARE], gradviz_env)
        for command, env in commands.values():  # once unmeasured: caches, .pyc files
            cpu(command, env)
        times = rounds(commands, ROUNDS)
        (Path(tempfile.gettempdir()) / "gradviz-whole-times.json").write_text(json.dumps(times))
        micro = {}
        for name, (_, _, epochs) in WORKLOADS.items():
            if name == "largest" and not FULL:
                continue
            script = [PYTHON, str(HERE / "micrograd_train.py"), str(files[name])]
            micro[name] = rounds(
                {"start": ([*script, "0"], default), "run": ([*script, str(epochs)], default)},
                1 if name == "largest" else MICRO_ROUNDS,  # its one epoch: minutes
            )
    med = {name: statistics.median(values) for name, values in times.items()}
    table = Table(
        title=f"Whole-process CPU time: medians of {ROUNDS} rounds (micrograd: "
        f"{MICRO_ROUNDS}, extrapolated); load average {load[0]:.1f}, {os.cpu_count()} CPUs"
    )
    for column in (
        "workload",
        "gradviz",
        "numpy",
        "× numpy (range)",
        "numpy, default threads",
        "× that",
        "micrograd",
        "× micrograd",
    ):
        table.add_column(column, justify="right")
    for name, (raw, _, epochs) in WORKLOADS.items():
        g, n = times[f"{name}: gradviz"], times[f"{name}: numpy"]
        d = times[f"{name}: numpy, default threads"]
        micrograd = math.nan
        if name in micro:
            start = statistics.median(micro[name]["start"])
            per_epoch = (statistics.median(micro[name]["run"]) - start) / epochs
            micrograd = start + per_epoch * raw["epochs"]
        r, low, high = ratio(g, n)
        table.add_row(
            name,
            f"{med[f'{name}: gradviz']:.2f} s",
            f"{med[f'{name}: numpy']:.2f} s",
            f"{r:.2f}x ({low:.2f}-{high:.2f})",
            f"{statistics.median(d):.2f} s",
            f"{ratio(g, d)[0]:.2f}x",
            f"{micrograd:.1f} s" if name in micro else "(GRADVIZ_BENCH_FULL=1)",
            f"{micrograd / med[f'{name}: gradviz']:.0f}x faster" if name in micro else "",
        )
    c = times["compare: gradviz"]
    both = [
        x + y for x, y in zip(times["deep-sigmoid: numpy"], times["deep-relu: numpy"], strict=True)
    ]
    r, low, high = ratio(c, times["deep-sigmoid: numpy"])
    table.add_row(
        "compare (both deep nets)",
        f"{statistics.median(c):.2f} s",
        f"{statistics.median(times['deep-sigmoid: numpy']):.2f} s (sigmoid's)",
        f"{r:.2f}x ({low:.2f}-{high:.2f})",
        f"both scripts: {statistics.median(both):.2f} s",
        f"{ratio(c, both)[0]:.2f}x",
        "",
        "",
    )
    console.print(table)
    targets = [
        (
            "deep-sigmoid ≤ 1.5x numpy",
            ratio(times["deep-sigmoid: gradviz"], times["deep-sigmoid: numpy"])[0] <= 1.5,
        ),
        ("compare ≤ 3x numpy's deep-sigmoid", r <= 3.0),
        ("xor < numpy", ratio(times["xor: gradviz"], times["xor: numpy"])[0] < 1.0),
        ("circle < numpy", ratio(times["circle: gradviz"], times["circle: numpy"])[0] < 1.0),
        ("largest 300 epochs in seconds (< 10 s)", med["largest: gradviz"] < 10.0),
    ]
    for text, met in targets:
        console.print(f"{text}: {'yes' if met else 'NO'}")


if __name__ == "__main__":
    main()
