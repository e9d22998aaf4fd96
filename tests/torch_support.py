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
