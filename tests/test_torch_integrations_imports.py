"""The framework integrations are imported only when used: `import gradviz` and
`import gradviz.torch` (and its watch, draw and Recorder) never import Lightning,
transformers, accelerate or TensorBoard; `gradviz.torch.lightning` and friends do.
Each check runs in a fresh interpreter (other tests have imported everything already)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from torch_support import require_framework, require_torch

require_torch()

FRAMEWORKS = (
    "lightning",
    "pytorch_lightning",
    "transformers",
    "accelerate",
    "tensorboard",
    "torch.utils.tensorboard",
)


def _modules_after(code: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def _loaded(modules: list[str]) -> list[str]:
    prefixes = tuple(f"{name}." for name in FRAMEWORKS)
    return sorted(m for m in modules if m in FRAMEWORKS or m.startswith(prefixes))


def test_gradviz_torch_imports_no_training_framework() -> None:
    modules = _modules_after(
        "import gradviz, gradviz.torch\n"
        "gradviz.torch.watch, gradviz.torch.Recorder, gradviz.torch.draw\n"
        "import gradviz.torch.session"
    )
    assert "torch" in modules and "gradviz.torch.recorder" in modules  # (it loaded the bridge)
    assert _loaded(modules) == []


@pytest.mark.slow  # a fresh interpreter importing torch and all three frameworks: seconds
def test_each_integration_imports_its_framework() -> None:
    """The other side of the check above: it would see a framework that is imported."""
    for framework in ("lightning", "transformers", "tensorboard"):
        require_framework(framework)
    modules = _modules_after(
        "import gradviz.torch.lightning, gradviz.torch.huggingface, gradviz.torch.tensorboard"
    )
    assert {"lightning", "transformers", "accelerate", "tensorboard"} <= set(_loaded(modules))
