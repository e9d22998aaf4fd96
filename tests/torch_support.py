"""PyTorch for the tests of gradviz.torch: imported if installed; without it those tests
skip with the reason, except under CI (`CI` set, as `.ci/run` runs), where a missing torch
is a failure: `.ci/run` installs torch==2.13.0 and the torch tests must run there."""

from __future__ import annotations

import os

import pytest

PINNED = "torch==2.13.0"  # what .ci/run and `make test-torch` install (a CPU build)


def require_torch():
    """The torch module, or skip the test module (fail it under CI)."""
    try:
        import torch
    except ImportError:
        why = f"torch is not installed (make test-torch installs {PINNED})"
        if os.environ.get("CI"):
            pytest.fail(f"the torch tests must run in CI: {why}", pytrace=False)
        pytest.skip(why, allow_module_level=True)
    return torch


# The training frameworks gradviz.torch's callbacks plug into, pinned as .ci/run and
# `make frameworks` install them (versions that install beside torch==2.13.0 and pull no
# other torch): the import name, and the pinned packages that bring it.
FRAMEWORKS = {
    "lightning": "lightning==2.6.6",
    "transformers": "transformers==5.24.0 accelerate==1.16.0",
    "accelerate": "accelerate==1.16.0",
    "tensorboard": "tensorboard==2.21.0",
}


def require_framework(name: str):
    """torch and the framework `name` (a module), or skip the test module (fail it under
    CI: `.ci/run` installs them with `make frameworks`)."""
    require_torch()
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        why = f"{name} is not installed (make frameworks installs {FRAMEWORKS[name]})"
        if os.environ.get("CI"):
            pytest.fail(f"the {name} tests must run in CI: {why}", pytrace=False)
        pytest.skip(why, allow_module_level=True)


def require_installed(name: str) -> None:
    """torch, and the framework `name` installed (found, not imported), or skip the test
    module (fail it under CI): for a module whose tests import the framework themselves,
    so that collecting it (every worker collects every file) costs no framework import."""
    require_torch()
    import importlib.util

    if importlib.util.find_spec(name) is None:
        why = f"{name} is not installed (make frameworks installs {FRAMEWORKS[name]})"
        if os.environ.get("CI"):
            pytest.fail(f"the {name} tests must run in CI: {why}", pytrace=False)
        pytest.skip(why, allow_module_level=True)
