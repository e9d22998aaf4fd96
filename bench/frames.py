"""The backward pass's pictures as a user asks for them (issue 23): peak memory and CPU time
of whole `gradviz trace` processes writing frames (`--frames`, `--step`) and animations
(`-o FILE.svg --animate`), for graphs of growing size, and the refusals over the limits
(which must cost no more than the trace itself).

Timing: CPU time (user + system, `os.wait4`, the `dot` processes included) and peak RSS
(`ru_maxrss`) of each whole process, output to /dev/null, the bytecode cache on; medians
over ROUNDS rounds, the commands in an order rotating from round to round. Every process
runs under an address-space cap (CAP_GB), so a run that would eat the machine fails
instead (reported as `over the cap`).

`GRADVIZ_BENCH_BASE=DIR` runs the same commands with DIR first on PYTHONPATH as well (an
older gradviz, e.g. `git archive <commit> gradviz | tar -x -C DIR`), beside this one; the
workloads this one refuses, and deep-relu's, are left out on that side (before issue 23
they ran for minutes to hours, or to the cap: see bench/README.md).

Run: `python bench/frames.py` (`GRADVIZ_BENCH_ONLY=moons`: the workloads named so).
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

PYTHON = sys.executable
GRADVIZ = str(Path(PYTHON).parent / "gradviz")
ROUNDS = int(os.environ.get("GRADVIZ_BENCH_ROUNDS", "3"))
CAP_GB = 6.5
BASE = os.environ.get("GRADVIZ_BENCH_BASE")
ONLY = os.environ.get("GRADVIZ_BENCH_ONLY", "")  # the workloads whose name holds this


def tanh_sum(terms: int) -> str:
    return " + ".join(f"tanh(w{i}*x{i})" for i in range(terms))


# name: arguments after `gradviz trace` ({dir} is a fresh folder, {models} the trained ones)
WORKLOADS: dict[str, list[str]] = {
    "xor --frames (51 SVG)": ["--model", "{models}/xor.json", "--frames", "{dir}"],
    "sum of 50 tanh --frames mmd (249 of 398 nodes)": [
        tanh_sum(50), "--frames", "{dir}", "--format", "mmd", "--json",
    ],
    "sum of 50 tanh --frames (249 SVG)": [tanh_sum(50), "--frames", "{dir}", "--json"],
    "sum of 100 tanh --animate (499 steps)": [tanh_sum(100), "-o", "{dir}/a.svg", "--animate",
                                              "--json"],
    "moons --animate (985 steps, refused)": ["--model", "{models}/moons.json", "-o", "{dir}/a.svg",
                                    "--animate", "--json"],
    "moons --frames --step 3": ["--model", "{models}/moons.json", "--frames", "{dir}",
                                "--step", "3", "--json"],
    "moons --frames (refused)": ["--model", "{models}/moons.json", "--frames", "{dir}", "--json"],
    "deep-relu --frames --step 1": ["--model", "{models}/deep-relu.json", "--frames", "{dir}",
                                    "--step", "1", "--json"],
    "deep-relu --frames (refused)": ["--model", "{models}/deep-relu.json", "--frames", "{dir}",
                                     "-o", "{dir}/t.html", "--json"],
    "deep-relu --animate (refused)": ["--model", "{models}/deep-relu.json", "-o",
                                      "{dir}/a.svg", "--animate", "--json"],
}  # fmt: skip


def environment(base: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if base is not None:
        env["PYTHONPATH"] = base
    return env


def _cap() -> None:
    limit = int(CAP_GB * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def measure(args: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(CPU seconds, peak RSS in MB, exit status) of one whole process."""
    with open(os.devnull, "wb") as null:
        process = subprocess.Popen(
            [GRADVIZ, "trace", *args], stdout=null, stderr=null, env=env, preexec_fn=_cap
        )
        _, status, usage = os.wait4(process.pid, 0)
    return (
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss / 1024,
        os.waitstatus_to_exitcode(status),
    )


def train_models(folder: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    for name in ("xor", "moons", "deep-relu"):
        spec = root / "samples" / f"{name}.toml"
        saved = folder / f"{name}.json"
        subprocess.run(
            [GRADVIZ, "train", str(spec), "--epochs", "1", "-q", "--save", str(saved)], check=True
        )


def main() -> int:
    sides = {"this": None} | ({"base": BASE} if BASE else {})
    results: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        models = Path(tmp) / "models"
        models.mkdir()
        train_models(models)
        names = [name for name in WORKLOADS if ONLY in name]
        started = time.time()
        for round_ in range(ROUNDS):
            shift = round_ % len(names)
            for name in names[shift:] + names[:shift]:
                for side, base in sides.items():
                    if base is not None and ("refused" in name or "deep-relu" in name):
                        continue
                    out = Path(tmp) / "out"
                    shutil.rmtree(out, ignore_errors=True)
                    out.mkdir()
                    args = [a.format(dir=out, models=models) for a in WORKLOADS[name]]
                    results.setdefault((name, side), []).append(measure(args, environment(base)))
    table = Table(
        title=f"gradviz trace: medians of {ROUNDS} rounds ({time.time() - started:.0f} s)"
    )
    for column in (
        "workload",
        *(f"{side} {what}" for side in sides for what in ("CPU s", "peak MB", "exit")),
    ):
        table.add_column(column, justify="left" if column == "workload" else "right")
    for name in names:
        cells = [name]
        for side in sides:
            runs = results.get((name, side))
            if runs is None:
                cells += ["–", "–", "–"]
                continue
            statuses = {status for _, _, status in runs}
            cells += [
                f"{statistics.median(c for c, _, _ in runs):.2f}",
                f"{statistics.median(m for _, m, _ in runs):.0f}",
                ",".join(str(s) for s in sorted(statuses)),
            ]
        table.add_row(*cells)
    Console(width=160).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
