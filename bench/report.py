"""The report page: whole-process CPU time of `gradviz inspect MODEL -o report.html` against
plain `gradviz inspect MODEL` (the terminal report, the same model), for the 17-parameter
XOR network of samples/xor.toml (2-4-1) trained and saved once, here.

Usage: `python bench/report.py [rounds]` (default 7), or `python bench/run.py report`.

Each command runs as a child process; its CPU time is user + system from `os.wait4` (the
whole process: start, imports, the work, exit), so load from other jobs does not count as
it does in wall time. In every round each command runs once, in an order that rotates; the
ratio is the median of the per-round ratios. Then, in this process, the page's parts: each
plot (gradviz.render.page_plots, inline SVG without matplotlib) by CPU time, best of the
rounds.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
GRADVIZ = str(BIN / "gradviz")
SPEC = str(Path(__file__).resolve().parent.parent / "samples" / "xor.toml")
TARGET = 1.0  # issue 23: the page in at most 1 s (CPU) for a 17-parameter network


def cpu_seconds(argv: list[str]) -> float:
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        actions = [(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)]
        pid = os.posix_spawn(argv[0], argv, dict(os.environ), file_actions=actions)
    finally:
        os.close(devnull)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed")
    return usage.ru_utime + usage.ru_stime


def parts(model_path: Path, rounds: int) -> dict[str, float]:
    """CPU seconds of each plot of the page, best of `rounds`, in this process (the
    decision boundary's grid, computed by gradviz.boundary, is not part of its plot)."""
    from gradviz.boundary import boundary
    from gradviz.measure import model_data
    from gradviz.model import load_model
    from gradviz.render import page_plots
    from gradviz.stats import diagnose
    from gradviz.train import evaluate

    model = load_model(model_path)
    data = model_data(model)
    outputs = evaluate(model.network(), data).outputs
    loss, accuracy, every = model.curves()
    drawn = boundary(model.network(), data, outputs=outputs)
    diagnosis = diagnose(model.layer_samples(data), epoch=model.epochs_run)
    jobs = {
        "curves": lambda: page_plots.curves_svg(loss, accuracy, every, "t", "w"),
        "boundary": lambda: page_plots.boundary_svg(drawn, "t", "w"),
        "grads": lambda: page_plots.grads_svg(diagnosis, model.snapshots() or None, "t", "w"),
    }
    best = dict.fromkeys(jobs, float("inf"))
    for _ in range(rounds):
        for name, job in jobs.items():
            start = time.process_time()
            job()
            best[name] = min(best[name], time.process_time() - start)
    return best


def main(rounds: int = 7) -> None:
    with tempfile.TemporaryDirectory() as folder:
        model = Path(folder) / "xor.json"
        page = Path(folder) / "report.html"
        cpu_seconds([GRADVIZ, "train", SPEC, "-q", "--save", str(model)])
        commands = {
            "inspect": [GRADVIZ, "inspect", str(model)],
            "inspect -o page": [GRADVIZ, "inspect", str(model), "-o", str(page)],
        }
        for argv in commands.values():  # once unmeasured: .pyc files, font cache
            cpu_seconds(argv)
        times: dict[str, list[float]] = {name: [] for name in commands}
        names = list(commands)
        for i in range(rounds):
            for name in names[i % 2 :] + names[: i % 2]:
                times[name].append(cpu_seconds(commands[name]))
        ratios = [p / t for p, t in zip(times["inspect -o page"], times["inspect"], strict=True)]
        load = os.getloadavg()[0]
        print(f"report page of xor (2-4-1, 17 parameters), {rounds} rounds, CPU seconds")
        print(f"machine: {os.cpu_count()} cores, load average {load:.1f} at the end")
        for name, values in times.items():
            print(f"  {name:16} median {statistics.median(values):.3f} s")
        print(
            f"  ratio page/plain median {statistics.median(ratios):.2f} "
            f"(range {min(ratios):.2f}-{max(ratios):.2f}); target: page at most {TARGET:g} s"
        )
        for name, seconds in parts(model, rounds).items():
            print(f"  plot {name:10} {seconds:.3f} s (best of {rounds}, in-process)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
