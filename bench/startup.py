"""Start-up cost: whole-process CPU time of `gradviz draw` and `gradviz --help` against the
floor of any click + rich tool, `python -c "import click, rich.console, rich.table"`.

Usage: `python bench/startup.py [rounds] [--tree DIR] [--no-pyc]` (default 11 rounds), or
`python bench/run.py startup`. `--tree DIR` runs the gradviz package found in DIR (put first
on PYTHONPATH) instead of the installed one: how the "before" figures were measured, on an
exported older commit. `--no-pyc` measures with PYTHONDONTWRITEBYTECODE=1 (see below).

Each command runs as a child process (stdout and stderr to /dev/null) and its CPU time is
user + system from `os.wait4`, which counts the whole process: interpreter start, `site`,
imports, the work and the exit. In every round each command runs once, in an order that
rotates from round to round, so load from other jobs hits all of them alike. A ratio is the
median of the per-round ratios (each command against the floor of the same round), with
their range; the medians of the raw times are shown beside it.

Bytecode caching is on in the children (PYTHONDONTWRITEBYTECODE is removed from their
environment, and one unmeasured run of each command writes the .pyc files first), as for a
user: otherwise gradviz's modules would be compiled from source on every run while click's
and rich's come precompiled from pip, which is not the comparison we mean. `--no-pyc` shows
that case: it deletes the __pycache__ folders of the gradviz package measured and runs with
PYTHONDONTWRITEBYTECODE=1 (an editable install in such an environment), so gradviz's
modules are compiled on every run and click's and rich's are not.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
from pathlib import Path

BIN = Path(sys.executable).parent
PYTHON = str(BIN / "python")
GRADVIZ = str(BIN / "gradviz")

FLOOR = "floor"
COMMANDS: dict[str, list[str]] = {
    FLOOR: [PYTHON, "-c", "import click, rich.console, rich.table"],
    "draw": [GRADVIZ, "draw", "(a+b)*c"],
    "help": [GRADVIZ, "--help"],
}
TARGETS = {"draw": 1.5, "help": 1.2}  # issue 10 item 5: at most this many times the floor


def child_environment(tree: str | None, pyc: bool = True) -> dict[str, str]:
    """The environment of the measured commands: bytecode caching on (unless not `pyc`),
    `tree` first on the path."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if not pyc:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [tree, env.get("PYTHONPATH")]))
    return env


def cpu_seconds(argv: list[str], env: dict[str, str]) -> float:
    """User + system CPU seconds of one run of `argv`, whole process."""
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        actions = [
            (os.POSIX_SPAWN_DUP2, devnull, 0),
            (os.POSIX_SPAWN_DUP2, devnull, 1),
            (os.POSIX_SPAWN_DUP2, devnull, 2),
        ]
        pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    finally:
        os.close(devnull)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed (status {os.waitstatus_to_exitcode(status)})")
    return usage.ru_utime + usage.ru_stime


def measure(rounds: int, tree: str | None = None, pyc: bool = True) -> dict[str, list[float]]:
    """CPU seconds per command, one run per command per round, rotating the order."""
    env = child_environment(tree, pyc)
    if not pyc:
        package = Path(tree or Path(__file__).resolve().parent.parent) / "gradviz"
        for cache in package.rglob("__pycache__"):
            shutil.rmtree(cache)
    names = list(COMMANDS)
    for name in names:  # warm the file cache (and .pyc files) once, unmeasured
        cpu_seconds(COMMANDS[name], env)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            times[name].append(cpu_seconds(COMMANDS[name], env))
    return times


def report(times: dict[str, list[float]]) -> bool:
    """Prints the table; True when every target is met."""
    floor = times[FLOOR]
    rounds = len(floor)
    print(f"Whole-process CPU time (user + sys), {rounds} interleaved rounds, medians")
    print(f"  {'command':<52} {'median':>8}  {'ratio to floor (range)':<24} target")
    shown = "python -c '" + COMMANDS[FLOOR][2] + "'"
    print(f"  {shown:<52} {statistics.median(floor) * 1000:6.0f} ms")
    ok = True
    for name, target in TARGETS.items():
        ratios = [t / f for t, f in zip(times[name], floor, strict=True)]
        ratio = statistics.median(ratios)
        met = ratio <= target
        ok = ok and met
        shown = " ".join(COMMANDS[name][1:])
        span = f"{ratio:.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
        print(
            f"  {'gradviz ' + shown:<52} {statistics.median(times[name]) * 1000:6.0f} ms  "
            f"{span:<24} <= {target}x {'yes' if met else 'NO'}"
        )
    return ok


def main(argv: list[str] | None = None) -> None:
    """`bench/run.py` calls main() (defaults); the command line passes its arguments."""
    args = list(argv or [])
    tree = None
    if "--tree" in args:
        at = args.index("--tree")
        tree = str(Path(args[at + 1]).resolve())
        del args[at : at + 2]
        print(f"gradviz from {tree}")
    pyc = "--no-pyc" not in args
    if not pyc:
        args.remove("--no-pyc")
        print("bytecode cache off (PYTHONDONTWRITEBYTECODE=1)")
    rounds = int(args[0]) if args else 11
    if not report(measure(rounds, tree, pyc)):
        raise SystemExit("start-up target missed")


if __name__ == "__main__":
    main(sys.argv[1:])
