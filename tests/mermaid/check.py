"""Run Mermaid text through the real Mermaid parser (mermaid.js under Node + jsdom).

`parse_mermaid(texts)` returns, per text, what mermaid.js read: `ok`, and the node labels
as a browser shows them. The packages are installed by `make test` (`npm ci` here);
without them the checks skip locally, and FAIL under CI, where they must run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
INSTALLED = (HERE / "node_modules" / "mermaid" / "package.json").is_file() and (
    HERE / "node_modules" / "jsdom" / "package.json"
).is_file()
NODE = shutil.which("node")


def require_mermaid() -> None:
    """Skip (or fail, under CI) when mermaid.js cannot run here."""
    if INSTALLED and NODE:
        return
    why = "node is not on PATH" if not NODE else "run `make tests/mermaid/node_modules/.installed`"
    if os.environ.get("CI"):
        pytest.fail(f"the Mermaid parser check must run in CI: {why}")
    pytest.skip(f"Mermaid parser not installed: {why}")


def parse_mermaid(texts: list[str], *, titles: bool = True) -> list[dict]:
    """Parse several texts in one Node process (startup costs most of the time). With
    `titles` a text with a caption is also rendered, to read its title as drawn (`title`);
    a layout each, so a check that reads only `ok`, nodes and edges passes False."""
    require_mermaid()
    done = subprocess.run(
        [NODE, str(HERE / "check.mjs")],
        input=json.dumps({"texts": texts, "titles": titles}).encode("utf-8"),
        capture_output=True,
        timeout=120,
        cwd=HERE,
    )
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    return json.loads(done.stdout)
