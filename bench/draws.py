"""Where numpy.random's uniform draws overtake gradviz.seeded's plain Python ones: the
measurement behind `gradviz.seeded.PYTHON_DRAWS_UP_TO`.

Both give the same numbers (tests/test_seeded.py). numpy's cost a fixed import (numpy.random's
extension modules, `secrets` and `hashlib`) and almost nothing a draw; the plain Python ones
cost nothing to import and about half a microsecond a draw (a 128-bit multiply in Python
ints). Each measurement is a fresh process (bytecode cache on, one BLAS thread) that imports
numpy and gradviz.seeded, as `gradviz train` does anyway, then draws N numbers one way or
the other and prints the CPU time (`time.process_time`) of that part alone, numpy.random's
first import included: the whole process's time differs by the same amount, but its
start-up's noise (several ms here) would hide a 10 ms difference. Several N, rounds
interleaved, medians; a straight line through each side's medians gives the crossover.

Run: `python bench/draws.py` (or `make bench`).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import whole

ROUNDS = 11
COUNTS = (0, 4000, 8000, 16000, 32000)
PRELUDE = "import time; import numpy as np; from gradviz import seeded; t = time.process_time(); "
CODA = "; print(time.process_time() - t)"
WAYS = {
    "numpy": "rng = np.random.default_rng(np.random.SeedSequence(0, spawn_key=(0,))); "
    "x = rng.uniform(-1.0, 1.0, size={n})",
    "python": "rng = seeded.Generator(0, spawn_key=(0,)); "
    "x = np.array(rng.uniform(-1.0, 1.0, size={n}))",
}


def line(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least squares: (intercept, slope) of y against x."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


def seconds(code: str, env: dict[str, str]) -> float:
    """The CPU time a fresh process reports for `code` (after its imports)."""
    done = subprocess.run(
        [whole.PYTHON, "-c", PRELUDE + code + CODA],
        env=env,
        cwd=whole.ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout)


def main() -> None:
    env = whole.environment("1")
    codes = {f"{way} {n}": code.format(n=n) for way, code in WAYS.items() for n in COUNTS}
    for code in codes.values():  # once unmeasured: caches, .pyc files
        seconds(code, env)
    names = list(codes)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(ROUNDS):  # each once a round, in an order rotating from round to round
        for name in names[r % len(names) :] + names[: r % len(names)]:
            times[name].append(seconds(codes[name], env))
    medians = {name: statistics.median(values) for name, values in times.items()}
    fits = {}
    for way in WAYS:
        print(way, " ".join(f"{n}: {medians[f'{way} {n}'] * 1e3:.1f} ms" for n in COUNTS))
        fits[way] = line([(n, medians[f"{way} {n}"]) for n in COUNTS])
        print(f"  fixed {fits[way][0] * 1e3:.2f} ms, {fits[way][1] * 1e6:.3f} us a draw")
    (np_fixed, np_slope), (py_fixed, py_slope) = fits["numpy"], fits["python"]
    print(f"numpy's draws are cheaper above {(np_fixed - py_fixed) / (py_slope - np_slope):.0f}")


if __name__ == "__main__":
    main()
