"""Run every benchmark in bench/: each bench/*.py module that defines `main()`, by name.

Usage: `make bench` (installs the `bench` extra first), or `python bench/run.py [name ...]`
to run only some (`python bench/run.py engine`).
"""

from __future__ import annotations

import importlib.util
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def benchmarks(names: list[str]) -> list[Path]:
    paths = sorted(p for p in HERE.glob("*.py") if p.stem != "run" and not p.stem.startswith("_"))
    if names:
        unknown = set(names) - {p.stem for p in paths}
        if unknown:
            raise SystemExit(f"no benchmark named {', '.join(sorted(unknown))} in {HERE}")
        paths = [p for p in paths if p.stem in names]
    return paths


def main(argv: list[str]) -> int:
    failed = []
    for path in benchmarks(argv):
        module = load(path)
        if not callable(getattr(module, "main", None)):
            continue
        print(f"== bench/{path.name}", flush=True)
        start = time.perf_counter()
        try:
            module.main()
        except (Exception, SystemExit):
            traceback.print_exc()
            failed.append(path.name)
        print(f"== bench/{path.name}: {time.perf_counter() - start:.0f} s\n", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
