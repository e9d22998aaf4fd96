"""The docs tools for the tests (the `docs` extra: mkdocs, mkdocs-material, pymdown-extensions,
sphinx, myst-parser), and building a site with them in a subprocess, offline.

Without the extra the tests that build sites skip with the reason; under CI (`CI` set) they
fail instead: there they must run."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

TOOLS = ("mkdocs", "material", "pymdownx", "sphinx", "myst_parser")


def docs_tools_missing() -> str | None:
    missing = [name for name in TOOLS if importlib.util.find_spec(name) is None]
    if missing:
        return f"{', '.join(missing)} not installed (pip install -e '.[docs]')"
    return None


def require_docs_tools() -> None:
    why = docs_tools_missing()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"docs tests must run in CI: {why}")
        pytest.skip(why)


def build(
    args: list[str],
    folder: Path,
    cache: Path,
    *,
    env: dict[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess:
    """`python -m ARGS` run in `folder` with the fence's cache in `cache`, no network
    needed (the sites load no web fonts, no CDN), its output captured; `env` adds to
    the environment, `preexec_fn` runs in the child first (a memory limit)."""
    environment = {
        **os.environ,
        "GRADVIZ_FENCE_CACHE": str(cache),
        "NO_MKDOCS_2_WARNING": "1",
        "NO_COLOR": "1",
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=preexec_fn,
    )


def inline_svgs(page: str) -> int:
    """The fence's inline pictures on a page: root elements of class gradviz (a plot's
    class list goes on: `gradviz gradviz-plot`)."""
    return len(re.findall(r'<svg class="gradviz[ "]', page))
