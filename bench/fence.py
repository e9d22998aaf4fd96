"""The gradviz fence in a real MkDocs build: what a page of 50 diagrams adds to a build,
drawn from nothing (cold: an empty cache) and again (warm: every fragment cached).

Three sites are built in turn, each round in the same order, with `mkdocs build` in a
subprocess (as a writer runs it): the page with the 50 command lines as plain code blocks
(the baseline: what the build costs without the fence), the page of fences with an empty
cache, and the same page again with the cache that build left. Medians over ROUNDS; the
figures are the builds' wall-clock time less the baseline's median.

Targets (issue 22): warm adds < 1 s, cold adds <= 10 s.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROUNDS = 3
DIAGRAMS = 50
WARM_TARGET = 1.0  # s added by a warm rebuild
COLD_TARGET = 10.0  # s added by a cold build

MKDOCS_YML = """\
site_name: fence bench
theme: {name: material, font: false}
markdown_extensions:
  - pymdownx.superfences:
      custom_fences:
        - name: gradviz
          class: gradviz
          format: !!python/name:gradviz.docs.mkdocs.fence_format
          validator: !!python/name:gradviz.docs.mkdocs.fence_validator
plugins:
  - gradviz
"""


def bodies() -> list[tuple[str, str]]:
    """(fence header, command line) of 50 different diagrams a lesson might hold: draws,
    steps of backward passes, and Mermaid."""
    found = []
    for k in range(35):
        found.append(("gradviz", f'draw "e = a*b; d = e + c; L = tanh(d*f) + {k}" a=2 b=-3 c={k}'))
    for k in range(10):
        found.append(("gradviz", f'trace "e = a*b; L = e*c + {k}" a=2 b=-3 c=4 --step {k % 5 + 1}'))
    for k in range(5):
        found.append(('gradviz format="mermaid"', f'draw "tanh(w*x + b)" x=0.{k + 1} w=-3 b=1'))
    assert len(found) == DIAGRAMS
    return found


def write_site(folder: Path, fenced: bool) -> None:
    (folder / "docs").mkdir(parents=True)
    (folder / "mkdocs.yml").write_text(MKDOCS_YML, encoding="utf-8")
    blocks = [
        f"## Diagram {i + 1}\n\n```{header if fenced else 'text'}\n{body}\n```\n"
        for i, (header, body) in enumerate(bodies())
    ]
    page = "# Fifty diagrams\n\n" + "\n".join(blocks)
    (folder / "docs" / "index.md").write_text(page, encoding="utf-8")


def build_seconds(site: Path, cache: Path) -> float:
    env = {**os.environ, "GRADVIZ_FENCE_CACHE": str(cache), "NO_MKDOCS_2_WARNING": "1"}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site / "out")],
        cwd=site,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"mkdocs build failed:\n{done.stderr}")
    return seconds


def main() -> None:
    missing = [m for m in ("mkdocs", "material", "pymdownx") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"skipped: {', '.join(missing)} not installed (pip install -e '.[docs]')")
        return
    times: dict[str, list[float]] = {"baseline": [], "cold": [], "warm": []}
    with tempfile.TemporaryDirectory(prefix="gradviz-fence-bench-") as folder:
        root = Path(folder)
        write_site(root / "plain", fenced=False)
        write_site(root / "fenced", fenced=True)
        for round_ in range(ROUNDS):
            cache = root / f"cache-{round_}"
            times["baseline"].append(build_seconds(root / "plain", cache))
            times["cold"].append(build_seconds(root / "fenced", cache))
            times["warm"].append(build_seconds(root / "fenced", cache))
            shutil.rmtree(cache)
    base = statistics.median(times["baseline"])
    print(f"mkdocs build of one page with {DIAGRAMS} diagrams, median of {ROUNDS} (s)")
    print(f"{'build':<10}{'median':>8}{'added':>8}  runs                  target")
    for name, target in (("baseline", None), ("cold", COLD_TARGET), ("warm", WARM_TARGET)):
        median = statistics.median(times[name])
        added = median - base
        runs = " ".join(f"{t:.2f}" for t in times[name])
        verdict = ""
        if target is not None:
            sign = "<" if name == "warm" else "<="
            ok = added < target if name == "warm" else added <= target
            verdict = f"adds {sign} {target:g} s {'yes' if ok else 'NO'}"
        shown = f"{added:+.2f}" if target is not None else ""
        print(f"{name:<10}{median:>8.2f}{shown:>8}  {runs:<22}{verdict}")


if __name__ == "__main__":
    main()
